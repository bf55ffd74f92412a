//! Catalog statements: CREATE GRAPH, DROP GRAPH, SHOW GRAPHS, DESCRIBE GRAPH, VERIFY GRAPH,
//! REPAIR CATALOG.

use std::path::PathBuf;

use arrow_array::RecordBatchReader;

use grammar::{CreateGraph, Ident, InputFormat, Pos, StorageKind as AstStorage, Value};
use planner::settings::format_size;
use storage::blockfile::format::{FileIdentity, IdOrder, SectionKind, BLOCK_SIZE};
use storage::blockfile::open::GraphFile;
use storage::catalog::{GraphMeta, StorageKind};
use storage::import::{self, ImportRequest};
use storage::Direction;

use crate::error::StatementError;
use crate::output::Output;
use crate::session::Session;
use crate::table::{CellKind, TextTable};

/// Where CREATE GRAPH's edges come from.
pub enum EdgeSource<'a> {
    /// The file (or dataset) the statement names.
    File,
    /// Arrow record batches in memory (a front end's data frame), read one at a time; the
    /// statement's source only names them in messages and in the graph's identity.
    Batches(&'a mut dyn RecordBatchReader),
}

/// `CREATE [OR REPLACE] GRAPH ...`: import into a new file, then register it.
pub fn create(
    s: &mut Session,
    pos: Pos,
    c: &CreateGraph,
    edges: EdgeSource<'_>,
) -> Result<Vec<Output>, StatementError> {
    let name = &c.name.name;
    refuse_existing(s, pos, c)?;
    // An import sorts within `memory_limit`: blocked pulls kept from earlier runs give way.
    s.stores.release_kept(None);
    let storage = storage_kind(c.storage);
    // Check the pool settings before a possibly long import, so a missing one fails at once.
    let pool = if storage == StorageKind::Dm {
        Some(
            crate::run::dm_pool(&s.settings, &s.settings.memory_nodes)
                .map_err(|m| StatementError::at(pos, format!("STORAGE dm: {m}")))?,
        )
    } else {
        None
    };
    let previous = s.catalog.get(name).ok().flatten();
    let format = input_format(c, &edges);
    let new_file = s
        .catalog
        .new_graph_file(name)
        .map_err(|e| StatementError::store(pos, e))?;
    let dest = s.catalog.dir().join(&new_file.file);
    let identity = FileIdentity::new(name, new_file.generation, &c.source, storage);
    let req = import_request(s, c, format, dest.clone(), identity.clone());
    let summary = run_import(s, c, &req, edges)?;
    let (pending_dm, extra, dm_note) = match &pool {
        Some(pool) => {
            let dm = load_dm(s, pos, name, &dest, pool)?;
            (Some(dm.pending), Some(dm.layout), dm.note)
        }
        None => (None, None, String::new()),
    };
    let meta = GraphMeta {
        name: name.clone(),
        file: new_file.file,
        format_version: summary.format_version,
        vertices: summary.vertices,
        edges: summary.edges,
        arcs: summary.arcs,
        directed: summary.directed,
        weighted: summary.weighted,
        source: identity.source,
        created_at: identity.created_at,
        storage,
        file_bytes: summary.file_bytes,
        memory_nodes: if pool.is_some() {
            s.settings.memory_nodes.clone()
        } else {
            Vec::new()
        },
        extra,
        file_id: Some(identity.file_id),
        import: summary.report.clone(),
        key_bytes: summary.key_bytes,
    };
    let freed = register(s, pos, &meta, c.or_replace, &dest, pending_dm, previous)?;
    let mut outputs = created_status(name, &summary, &dm_note);
    outputs.extend(freed.into_iter().map(Output::Status));
    Ok(outputs)
}

/// Without OR REPLACE, an existing graph of the name is an error.
fn refuse_existing(s: &Session, pos: Pos, c: &CreateGraph) -> Result<(), StatementError> {
    let name = &c.name.name;
    if !c.or_replace
        && s.catalog
            .get(name)
            .map_err(|e| StatementError::store(pos, e))?
            .is_some()
    {
        return Err(StatementError::at(
            c.name.pos,
            format!("graph `{name}` already exists (use CREATE OR REPLACE GRAPH to replace it)"),
        ));
    }
    Ok(())
}

/// Where the catalog keeps the graph's data (`STORAGE`, by default a block file).
fn storage_kind(storage: Option<AstStorage>) -> StorageKind {
    match storage {
        None | Some(AstStorage::Blockfile) => StorageKind::Blockfile,
        Some(AstStorage::Memory) => StorageKind::Memory,
        Some(AstStorage::Dm) => StorageKind::Dm,
    }
}

/// The importer's format: record batches are Arrow whatever the statement says; otherwise
/// `FORMAT`, or what the file looks like.
fn input_format(c: &CreateGraph, edges: &EdgeSource<'_>) -> import::InputFormat {
    match c.format {
        _ if matches!(edges, EdgeSource::Batches(_)) => import::InputFormat::Arrow,
        Some(InputFormat::Edgelist) => import::InputFormat::Edgelist,
        Some(InputFormat::Graphalytics) => import::InputFormat::Graphalytics,
        Some(InputFormat::Csv) => import::InputFormat::Csv,
        Some(InputFormat::Parquet) => import::InputFormat::Parquet,
        Some(InputFormat::Mtx) => import::InputFormat::MatrixMarket,
        None => import::detect_format(std::path::Path::new(&c.source)),
    }
}

/// The import the statement asks for, into `dest`, under the session's memory and threads.
fn import_request(
    s: &Session,
    c: &CreateGraph,
    format: import::InputFormat,
    dest: PathBuf,
    identity: FileIdentity,
) -> ImportRequest {
    ImportRequest {
        source: PathBuf::from(&c.source),
        format,
        directed: c.directed,
        weighted: c.weighted,
        vertices: c.vertices.as_ref().map(PathBuf::from),
        options: import_options(c),
        dest,
        memory_budget: s.settings.import_memory,
        threads: s.settings.threads,
        temp_dir: s.catalog.tmp_dir(),
        identity,
    }
}

/// Runs the import, showing its progress to the session's watcher; a failed import leaves no
/// file at `req.dest`.
fn run_import(
    s: &Session,
    c: &CreateGraph,
    req: &ImportRequest,
    edges: EdgeSource<'_>,
) -> Result<import::ImportSummary, StatementError> {
    let watcher = s.watcher.clone();
    let mut progress = |p: import::ImportProgress| {
        if let Some(w) = &watcher {
            w.import_progress(&c.source, &p);
        }
    };
    let summary = match edges {
        EdgeSource::File => import::import(req, &mut progress, &s.cancel),
        EdgeSource::Batches(batches) => {
            import::import_batches(req, batches, &mut progress, &s.cancel)
        }
    };
    if let Some(w) = &watcher {
        w.import_done();
    }
    summary.map_err(|e| {
        let _ = std::fs::remove_file(&req.dest);
        StatementError::store(c.source_pos, e)
    })
}

/// A STORAGE dm graph's lists loaded into the memory nodes, not yet committed.
struct DmLoad {
    /// Regions stay leased to the loader until the catalog records them (see dm::load).
    pending: storage::dm::load::PendingLoad,
    /// Where the lists went, for the catalog entry.
    layout: serde_json::Value,
    /// The end of CREATE's status line.
    note: String,
}

/// STORAGE dm: the block file stays as the durable copy; its lists go into the pool. A failed
/// load removes the file.
fn load_dm(
    s: &mut Session,
    pos: Pos,
    name: &str,
    dest: &std::path::Path,
    pool: &storage::dm::PoolConfig,
) -> Result<DmLoad, StatementError> {
    s.stores.forget(name);
    let pending = load_into_pool(s, dest, pool).map_err(|e| {
        let _ = std::fs::remove_file(dest);
        StatementError::store(pos, e)
    })?;
    let layout = pending.layout();
    let note = format!(
        ", loaded into {} memory nodes ({:.1} % of lists in place)",
        layout.nodes.len(),
        100.0 * layout.in_place_fraction(Direction::Out)
    );
    let layout = layout.to_json();
    Ok(DmLoad {
        pending,
        layout,
        note,
    })
}

/// Records the graph in the catalog, then commits its DM load (committed only once the catalog
/// refers to the regions, see dm::load) and frees the regions of the graph it replaces;
/// returns a status line for each memory node where some were not freed. If the catalog
/// refuses, the new file is removed and dropping the uncommitted load frees its regions.
fn register(
    s: &mut Session,
    pos: Pos,
    meta: &GraphMeta,
    or_replace: bool,
    dest: &std::path::Path,
    pending_dm: Option<storage::dm::load::PendingLoad>,
    previous: Option<GraphMeta>,
) -> Result<Vec<String>, StatementError> {
    let name = &meta.name;
    if let Err(e) = s.catalog.register(meta, or_replace) {
        let _ = std::fs::remove_file(dest);
        std::mem::drop(pending_dm);
        return Err(StatementError::store(pos, e));
    }
    let committed = pending_dm.map(|p| p.commit()).transpose();
    s.stores.forget(name);
    let freed = previous.map(|old| free_dm(s, &old)).unwrap_or_default();
    committed.map_err(|e| {
        StatementError::store(
            pos,
            storage::StoreError::Other(format!(
                "graph {name} is recorded, but its memory-node regions could not be kept ({e}); re-create it with CREATE OR REPLACE GRAPH {name} ... STORAGE dm"
            )),
        )
    })?;
    Ok(freed)
}

/// The statement's `OPTIONS (...)` as the importer takes them: lower-case keys, values as text.
fn import_options(c: &CreateGraph) -> Vec<(String, String)> {
    c.options
        .iter()
        .map(|p| {
            let v = match &p.value.value {
                Value::Str(s) | Value::Word(s) => s.clone(),
                Value::Int(n) => n.to_string(),
                Value::BigInt(n) => n.to_string(),
                Value::Float(f) => f.to_string(),
                Value::Size(n) => n.to_string(),
            };
            (p.key.name.to_ascii_lowercase(), v)
        })
        .collect()
}

/// Loads the lists of the block file at `dest` into the memory nodes of `pool`, leased to the
/// load until it is committed (see `storage::dm::load`).
fn load_into_pool(
    s: &Session,
    dest: &std::path::Path,
    pool: &storage::dm::PoolConfig,
) -> Result<storage::dm::load::PendingLoad, storage::StoreError> {
    let src = storage::blockfile::open_store::open_store(
        dest,
        &storage::blockfile::open_store::ReaderOptions {
            cache_bytes: s.settings.cache,
            io_depth: s.settings.io_depth,
        },
    )?;
    storage::with_block_store!(&src, st => storage::dm::load::load_pending(st, pool, s.settings.threads))
}

/// CREATE's status lines: what was created and how fast (edges and input MB a second), the
/// import's facts, and any lines it skipped.
fn created_status(name: &str, summary: &import::ImportSummary, dm_note: &str) -> Vec<Output> {
    let secs = summary.elapsed.as_secs_f64();
    let mut outputs = vec![Output::Status(format!(
        "created graph {name}: {} vertices, {} edges, {}{}, {} in {:.2} s ({:.0} edges/s, {:.1} MB/s){dm_note}",
        summary.vertices,
        summary.edges,
        if summary.directed {
            "directed"
        } else {
            "undirected"
        },
        match (summary.weighted, summary.string_keys) {
            (true, true) => ", weighted, string keys",
            (true, false) => ", weighted",
            (false, true) => ", string keys",
            (false, false) => "",
        },
        format_size(summary.file_bytes),
        secs,
        summary.edges as f64 / secs.max(1e-9),
        summary.bytes_read as f64 / 1e6 / secs.max(1e-9)
    ))];
    let (examples, facts): (Vec<_>, Vec<_>) = summary
        .report
        .lines()
        .into_iter()
        .filter(|(k, _)| k != storage::import::report::LAYOUT_REASON)
        .partition(|(k, _)| k.starts_with(' '));
    let facts: Vec<String> = facts.iter().map(|(k, v)| format!("{k} {v}")).collect();
    outputs.push(Output::Status(format!("  {}", facts.join(", "))));
    outputs.extend(
        examples
            .iter()
            .map(|(_, e)| Output::Status(format!("  skipped: {e}"))),
    );
    outputs
}

/// Frees the memory-node regions of a replaced or dropped DM graph that are still its own (the
/// memory nodes check), and returns a status line for each node where some were not freed:
/// left allocated (the node unreachable, no token) with their count and bytes, refused, or gone
/// with a restart. The catalog no longer refers to them, so this is the only word on them.
fn free_dm(s: &Session, meta: &GraphMeta) -> Vec<String> {
    if meta.storage != StorageKind::Dm {
        return Vec::new();
    }
    let layout = match crate::run::dm_layout(meta) {
        Ok(l) => l,
        Err(e) => {
            return vec![format!(
                "  graph {}: its memory-node regions were not freed: {e}",
                meta.name
            )]
        }
    };
    let report = match crate::run::dm_pool(&s.settings, &meta.memory_nodes) {
        Ok(pool) => storage::dm::free::free_layout(&layout, &pool),
        Err(why) => storage::dm::free::left_everywhere(&layout, &why),
    };
    report
        .lines(&meta.name)
        .into_iter()
        .map(|l| format!("  {l}"))
        .collect()
}

/// `DROP GRAPH [IF EXISTS] name`.
pub fn drop(s: &mut Session, name: &Ident, if_exists: bool) -> Result<Vec<Output>, StatementError> {
    let removed = s
        .catalog
        .drop_graph(&name.name)
        .map_err(|e| StatementError::store(name.pos, e))?;
    s.stores.forget(&name.name);
    let freed = removed
        .as_ref()
        .map(|old| free_dm(s, old))
        .unwrap_or_default();
    match removed {
        Some(_) => Ok(std::iter::once(format!("dropped graph {}", name.name))
            .chain(freed)
            .map(Output::Status)
            .collect()),
        None if if_exists => Ok(Vec::new()),
        None => Err(unknown(s, name)),
    }
}

/// `SHOW GRAPHS`.
pub fn show(s: &mut Session) -> Result<Vec<Output>, StatementError> {
    let graphs = s
        .catalog
        .list()
        .map_err(|e| StatementError::store(Pos::default(), e))?;
    let mut t = TextTable::new(&[
        "name", "vertices", "edges", "directed", "weighted", "storage", "size",
    ])
    .kinds(&["vertices", "edges"], CellKind::Number)
    .kinds(&["directed", "weighted"], CellKind::Bool);
    for g in &graphs {
        t.row(vec![
            g.name.clone(),
            g.vertices.to_string(),
            g.edges.to_string(),
            g.directed.to_string(),
            g.weighted.to_string(),
            g.storage.name().to_string(),
            format_size(g.file_bytes),
        ]);
    }
    let mut outputs = vec![Output::Table(t)];
    if graphs.is_empty() {
        outputs.push(Output::Hint(
            "(no graphs yet: CREATE GRAPH name FROM 'path' ...)".into(),
        ));
    }
    Ok(outputs)
}

/// The catalog entry of `name`, or an error suggesting the nearest name.
pub fn lookup(s: &Session, name: &Ident) -> Result<GraphMeta, StatementError> {
    match s.catalog.get(&name.name) {
        Ok(Some(m)) => Ok(m),
        Ok(None) => Err(unknown(s, name)),
        Err(e) => Err(StatementError::store(name.pos, e)),
    }
}

fn unknown(s: &Session, name: &Ident) -> StatementError {
    let names: Vec<String> = s
        .catalog
        .list()
        .map(|l| l.into_iter().map(|g| g.name).collect())
        .unwrap_or_default();
    planner::unknown_graph(name, names.iter().map(String::as_str)).into()
}

/// `DESCRIBE GRAPH name`: sizes, degrees, sections and bin-packing fill.
pub fn describe(s: &mut Session, name: &Ident) -> Result<Vec<Output>, StatementError> {
    let meta = lookup(s, name)?;
    let path = s
        .catalog
        .checked_path(&meta)
        .map_err(|e| StatementError::store(name.pos, e))?;
    let file = GraphFile::open(&path).map_err(|e| StatementError::store(name.pos, e))?;
    let mut t = TextTable::new(&["property", "value"]);
    let mut add = |k: &str, v: String| t.row(vec![k.to_string(), v]);
    add("name", meta.name.clone());
    add("vertices", meta.vertices.to_string());
    add("edges", meta.edges.to_string());
    add("directed", meta.directed.to_string());
    add("weighted", meta.weighted.to_string());
    add(
        "keys",
        if file.string_keys() {
            format!(
                "string ({} id map)",
                format_size(storage::blockfile::keys::VertexKeys::file_bytes(&file))
            )
        } else {
            "integer".into()
        },
    );
    add(
        "layout",
        match file.superblock.order {
            IdOrder::Key => "key (internal ids in key order)".into(),
            IdOrder::Degree => "degree (internal ids by degree bucket, hubs first)".into(),
            IdOrder::Locality => {
                "locality (internal ids in clusters of neighbours, a block of lists each)".into()
            }
        },
    );
    add("storage", meta.storage.name().to_string());
    add("source", meta.source.clone());
    add("file", path.display().to_string());
    add("file size", format_size(meta.file_bytes));
    add(
        "file id",
        meta.file_id
            .clone()
            .unwrap_or_else(|| "none (a format 1 file)".into()),
    );
    if meta.import != Default::default() {
        for (k, v) in meta.import.lines() {
            add(&k, v);
        }
    }
    if meta.storage == StorageKind::Dm {
        add("memory nodes", meta.memory_nodes.join(", "));
        if let Ok(l) = crate::run::dm_layout(&meta) {
            add(
                "in-place lists",
                format!("{:.1} %", 100.0 * l.in_place_fraction(Direction::Out)),
            );
            add("tiny chunks", l.tiny_chunks.len().to_string());
            add("partitions", format!("{:?}", l.bounds));
        }
    }
    let dirs: &[(Direction, &str)] = if meta.directed {
        &[(Direction::Out, "out"), (Direction::In, "in")]
    } else {
        &[(Direction::Out, "")]
    };
    for (dir, label) in dirs {
        let idx = file.index(*dir);
        let n = idx.degrees.len().max(1) as f64;
        let min = idx.degrees.iter().copied().min().unwrap_or(0);
        let max = idx.degrees.iter().copied().max().unwrap_or(0);
        let sum: u64 = idx.degrees.iter().map(|&d| d as u64).sum();
        let prefix = if label.is_empty() {
            "degree".to_string()
        } else {
            format!("{label}-degree")
        };
        add(
            &format!("{prefix} min/mean/max"),
            format!("{min} / {:.2} / {max}", sum as f64 / n),
        );
    }
    let mut edge_bytes = 0u64;
    let mut used = 0u64;
    for sec in &file.superblock.sections {
        add(
            &format!("section {:?}", sec.kind),
            format!("{} blocks ({})", sec.blocks(), format_size(sec.length)),
        );
        if matches!(sec.kind, SectionKind::OutEdges | SectionKind::InEdges) {
            edge_bytes += sec.blocks() * BLOCK_SIZE as u64;
            used += if sec.kind == SectionKind::OutEdges || meta.directed {
                meta.arcs * 4
            } else {
                0
            };
        }
    }
    if edge_bytes > 0 {
        add(
            "bin-packing fill",
            format!(
                "{:.1} % of edge-block slots hold edges",
                100.0 * used as f64 / edge_bytes as f64
            ),
        );
    }
    Ok(vec![Output::Table(t)])
}

/// `VERIFY GRAPH name`: every block against its checksum.
pub fn verify(s: &mut Session, name: &Ident) -> Result<Vec<Output>, StatementError> {
    let meta = lookup(s, name)?;
    let path = s
        .catalog
        .checked_path(&meta)
        .map_err(|e| StatementError::store(name.pos, e))?;
    let report = storage::blockfile::verify::verify_file(&path)
        .map_err(|e| StatementError::store(name.pos, e))?;
    // A DM graph's memory-node copy is what queries read: check every entry and list there too.
    let remote = if meta.storage == StorageKind::Dm {
        let r = verify_dm(s, &meta).map_err(|e| StatementError::store(name.pos, e))?;
        format!(
            "; its copy in {} memory nodes too: {} index entries and {} out-of-place lists ({} read)",
            r.nodes,
            r.entries_checked,
            r.lists_checked,
            format_size(r.bytes_read)
        )
    } else {
        String::new()
    };
    Ok(vec![Output::Status(format!(
        "graph {} is intact: {} blocks and {} sections match their checksums ({} read){remote}",
        name.name,
        report.blocks_checked,
        report.sections_checked,
        format_size(report.bytes_read)
    ))])
}

/// `REPAIR CATALOG`: rebuilds the catalog from the graph files and reports what it found.
pub fn repair(s: &mut Session, pos: Pos) -> Result<Vec<Output>, StatementError> {
    s.stores.clear();
    let findings = s
        .catalog
        .repair()
        .map_err(|e| StatementError::store(pos, e))?;
    let mut t = TextTable::new(&["graph", "file", "found"]);
    for f in &findings {
        t.row(vec![
            f.graph.clone().unwrap_or_default(),
            f.file.display().to_string(),
            f.action.clone(),
        ]);
    }
    let mut outputs = vec![Output::Table(t)];
    if findings.is_empty() {
        outputs.push(Output::Hint(format!(
            "(no graph files in {})",
            s.catalog.dir().join("graphs").display()
        )));
    }
    Ok(outputs)
}

/// Reads every region of a DM graph from its memory nodes and checks every checksum.
fn verify_dm(
    s: &Session,
    meta: &GraphMeta,
) -> Result<storage::dm::verify::RemoteReport, storage::StoreError> {
    let layout = crate::run::dm_layout(meta)?;
    let pool = crate::run::dm_pool(&s.settings, &meta.memory_nodes).map_err(|m| {
        storage::StoreError::Other(format!("graph `{}` is in memory nodes: {m}", meta.name))
    })?;
    let store = storage::dm::DmStore::open(
        &s.catalog.graph_path(meta),
        layout,
        &storage::dm::DmOptions {
            graph: meta.name.clone(),
            pool,
            cn_cache: s.settings.cn_cache,
            threads: 1,
        },
    )?;
    storage::dm::verify::verify_remote(&store)
}
