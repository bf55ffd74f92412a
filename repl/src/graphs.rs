//! Catalog statements: CREATE GRAPH, DROP GRAPH, SHOW GRAPHS, DESCRIBE GRAPH, VERIFY GRAPH.

use std::io::Write;
use std::path::PathBuf;

use grammar::{CreateGraph, Ident, InputFormat, Pos, StorageKind as AstStorage, Value};
use planner::settings::format_size;
use storage::blockfile::format::{SectionKind, BLOCK_SIZE};
use storage::blockfile::open::GraphFile;
use storage::catalog::{now_secs, GraphMeta, StorageKind};
use storage::import::{self, ImportRequest};
use storage::Direction;

use crate::error::StatementError;
use crate::progress::ImportProgressBar;
use crate::session::Session;
use crate::table::TextTable;

/// `CREATE [OR REPLACE] GRAPH ...`: import into a new file, then register it.
pub fn create(
    s: &mut Session,
    pos: Pos,
    c: &CreateGraph,
    out: &mut dyn Write,
) -> Result<(), StatementError> {
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
    let storage = match c.storage {
        None | Some(AstStorage::Blockfile) => StorageKind::Blockfile,
        Some(AstStorage::Memory) => StorageKind::Memory,
        Some(AstStorage::Dm) => StorageKind::Dm,
    };
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
    let format = match c.format {
        Some(InputFormat::Edgelist) => import::InputFormat::Edgelist,
        Some(InputFormat::Graphalytics) => import::InputFormat::Graphalytics,
        Some(InputFormat::Csv) => import::InputFormat::Csv,
        Some(InputFormat::Parquet) => import::InputFormat::Parquet,
        None => guess_format(&c.source),
    };
    let mut options = Vec::new();
    for p in &c.options {
        let v = match &p.value.value {
            Value::Str(s) | Value::Word(s) => s.clone(),
            Value::Int(n) => n.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Size(n) => n.to_string(),
        };
        options.push((p.key.name.to_ascii_lowercase(), v));
    }
    let rel_file = s
        .catalog
        .new_graph_file(name)
        .map_err(|e| StatementError::store(pos, e))?;
    let dest = s.catalog.dir().join(&rel_file);
    let req = ImportRequest {
        source: PathBuf::from(&c.source),
        format,
        directed: c.directed,
        weighted: c.weighted,
        vertices: c.vertices.as_ref().map(PathBuf::from),
        options,
        dest: dest.clone(),
        memory_budget: s.settings.import_memory,
        temp_dir: s.catalog.tmp_dir(),
    };
    let mut bar = ImportProgressBar::new(s.show_progress, &c.source);
    let summary = import::import(&req, &mut |p| bar.update(&p), &s.cancel);
    bar.finish();
    let summary = summary.map_err(|e| {
        let _ = std::fs::remove_file(&dest);
        StatementError::store(c.source_pos, e)
    })?;
    // STORAGE dm: the block file stays as the durable copy; its lists go into the pool.
    let mut dm_note = String::new();
    let mut extra = None;
    // Regions stay leased to the loader until the catalog records them (see dm::load).
    let mut pending_dm = None;
    if let Some(pool) = &pool {
        s.stores.forget(name);
        let loaded = (|| {
            let src = storage::blockfile::open_store::open_store(
                &dest,
                &storage::blockfile::open_store::ReaderOptions {
                    cache_bytes: s.settings.cache,
                    io_depth: s.settings.io_depth,
                },
            )?;
            storage::with_block_store!(&src, st => storage::dm::load::load_pending(st, pool, s.settings.threads))
        })();
        let loaded = loaded.map_err(|e| {
            let _ = std::fs::remove_file(&dest);
            StatementError::store(pos, e)
        })?;
        let layout = loaded.layout();
        dm_note = format!(
            ", loaded into {} memory nodes ({:.1} % of lists in place)",
            layout.nodes.len(),
            100.0 * layout.in_place_fraction(Direction::Out)
        );
        extra = Some(layout.to_json());
        pending_dm = Some(loaded);
    }
    let meta = GraphMeta {
        name: name.clone(),
        file: rel_file,
        format_version: storage::blockfile::format::FORMAT_VERSION,
        vertices: summary.vertices,
        edges: summary.edges,
        arcs: summary.arcs,
        directed: summary.directed,
        weighted: summary.weighted,
        source: c.source.clone(),
        created_at: now_secs(),
        storage,
        file_bytes: summary.file_bytes,
        memory_nodes: if pool.is_some() {
            s.settings.memory_nodes.clone()
        } else {
            Vec::new()
        },
        extra,
    };
    if let Err(e) = s.catalog.register(&meta, c.or_replace) {
        let _ = std::fs::remove_file(&dest);
        // Dropping the uncommitted load frees its regions.
        std::mem::drop(pending_dm);
        return Err(StatementError::store(pos, e));
    }
    // Committed only now that the catalog refers to the regions (see dm::load).
    let committed = pending_dm.map(|p| p.commit()).transpose();
    s.stores.forget(name);
    if let Some(old) = previous {
        free_dm(s, &old);
    }
    committed.map_err(|e| {
        StatementError::store(
            pos,
            storage::StoreError::Other(format!(
                "graph {name} is recorded, but its memory-node regions could not be kept ({e}); re-create it with CREATE OR REPLACE GRAPH {name} ... STORAGE dm"
            )),
        )
    })?;
    let secs = summary.elapsed.as_secs_f64();
    writeln!(
        out,
        "created graph {name}: {} vertices, {} edges, {}{}, {} in {:.2} s ({:.0} edges/s){dm_note}",
        summary.vertices,
        summary.edges,
        if summary.directed {
            "directed"
        } else {
            "undirected"
        },
        if summary.weighted { ", weighted" } else { "" },
        format_size(summary.file_bytes),
        secs,
        summary.edges as f64 / secs.max(1e-9)
    )
    .map_err(|e| StatementError::at(pos, e.to_string()))
}

/// Frees the memory-node regions of a replaced or dropped DM graph. Best effort: a node that is
/// gone has lost them anyway, and the catalog no longer refers to them.
fn free_dm(s: &Session, meta: &GraphMeta) {
    if meta.storage != StorageKind::Dm {
        return;
    }
    let (Ok(pool), Some(Ok(layout))) = (
        crate::run::dm_pool(&s.settings, &meta.memory_nodes),
        meta.extra.as_ref().map(storage::dm::DmLayout::from_json),
    ) else {
        return;
    };
    let _ = storage::dm::load::free_layout(&layout, &pool);
}

fn guess_format(path: &str) -> import::InputFormat {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".properties") {
        import::InputFormat::Graphalytics
    } else if lower.ends_with(".csv") {
        import::InputFormat::Csv
    } else if lower.ends_with(".parquet") {
        import::InputFormat::Parquet
    } else {
        import::InputFormat::Edgelist
    }
}

/// `DROP GRAPH [IF EXISTS] name`.
pub fn drop(
    s: &mut Session,
    name: &Ident,
    if_exists: bool,
    out: &mut dyn Write,
) -> Result<(), StatementError> {
    let removed = s
        .catalog
        .drop_graph(&name.name)
        .map_err(|e| StatementError::store(name.pos, e))?;
    s.stores.forget(&name.name);
    if let Some(old) = &removed {
        free_dm(s, old);
    }
    match removed {
        Some(_) => writeln!(out, "dropped graph {}", name.name)
            .map_err(|e| StatementError::at(name.pos, e.to_string())),
        None if if_exists => Ok(()),
        None => Err(unknown(s, name)),
    }
}

/// `SHOW GRAPHS`.
pub fn show(s: &mut Session, out: &mut dyn Write) -> Result<(), StatementError> {
    let graphs = s
        .catalog
        .list()
        .map_err(|e| StatementError::store(Pos::default(), e))?;
    let mut t = TextTable::new(&[
        "name", "vertices", "edges", "directed", "weighted", "storage", "size",
    ]);
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
    t.print(s.style, out)
        .map_err(|e| StatementError::at(Pos::default(), e.to_string()))?;
    if graphs.is_empty() && s.style == crate::session::OutputStyle::Table {
        writeln!(out, "(no graphs yet: CREATE GRAPH name FROM 'path' ...)")
            .map_err(|e| StatementError::at(Pos::default(), e.to_string()))?;
    }
    Ok(())
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
pub fn describe(s: &mut Session, name: &Ident, out: &mut dyn Write) -> Result<(), StatementError> {
    let meta = lookup(s, name)?;
    let path = s.catalog.graph_path(&meta);
    let file = GraphFile::open(&path).map_err(|e| StatementError::store(name.pos, e))?;
    let mut t = TextTable::new(&["property", "value"]);
    let mut add = |k: &str, v: String| t.row(vec![k.to_string(), v]);
    add("name", meta.name.clone());
    add("vertices", meta.vertices.to_string());
    add("edges", meta.edges.to_string());
    add("directed", meta.directed.to_string());
    add("weighted", meta.weighted.to_string());
    add("storage", meta.storage.name().to_string());
    add("source", meta.source.clone());
    add("file", path.display().to_string());
    add("file size", format_size(meta.file_bytes));
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
    t.print(s.style, out)
        .map_err(|e| StatementError::at(name.pos, e.to_string()))
}

/// `VERIFY GRAPH name`: every block against its checksum.
pub fn verify(s: &mut Session, name: &Ident, out: &mut dyn Write) -> Result<(), StatementError> {
    let meta = lookup(s, name)?;
    let path = s.catalog.graph_path(&meta);
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
    writeln!(
        out,
        "graph {} is intact: {} blocks and {} sections match their checksums ({} read){remote}",
        name.name,
        report.blocks_checked,
        report.sections_checked,
        format_size(report.bytes_read)
    )
    .map_err(|e| StatementError::at(name.pos, e.to_string()))
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
