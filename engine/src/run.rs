//! RUN, EXPLAIN RUN and PROFILE RUN: open the graph's store, plan, execute, and send the rows
//! to the terminal or a file.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use exec::kept_pull::KeptPull;
use grammar::{Pos, Run, RunMode};
use planner::settings::format_size;
use planner::{ReaderInfo, RunPlan, Settings};
use storage::blockfile::open::GraphFile;
use storage::blockfile::open_store::{open_store, BlockStore, ReaderOptions};
use storage::catalog::{Catalog, GraphMeta, StorageKind};
use storage::dm::{
    DmConnector, DmLayout, DmOptions, DmStore, PoolConfig, StatsSnapshot, TcpOptions,
};
use storage::io::DeviceCosts;
use storage::{Direction, GraphStore};

use crate::error::{ErrorKind, StatementError};
use crate::output::Output;
use crate::session::Session;
use crate::table::{CellKind, TextTable};

/// Calls `$body` with `$s` bound to the concrete store, so algorithms are monomorphised per
/// store and no list access goes through dynamic dispatch.
macro_rules! with_store {
    ($store:expr, $s:ident => $body:expr) => {
        match $store {
            OpenStore::Block(BlockStore::Memory($s)) => $body,
            OpenStore::Block(BlockStore::OutOfCore($s)) => $body,
            OpenStore::Dm($s) => $body,
        }
    };
}

/// An opened graph: a block file (in memory or out of core) or a graph in memory nodes.
// One per open graph, always behind an `Arc`: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum OpenStore {
    Block(BlockStore),
    Dm(DmStore<DmConnector>),
}

impl OpenStore {
    /// The store's I/O counters since it was opened.
    fn io_stats(&self) -> storage::IoStats {
        with_store!(self, st => st.io_stats())
    }

    /// How long the device under the store has been busy, where the store can tell.
    fn device_busy_ms(&self) -> Option<u64> {
        with_store!(self, st => st.device_busy_ms())
    }

    /// PROFILE's description of the reader.
    fn describe_reader(&self) -> String {
        with_store!(self, st => st.describe_reader())
    }
}

/// The settings an opened store depends on; a change reopens it.
#[derive(Debug, Clone, PartialEq)]
struct OpenKey {
    cache: u64,
    io_depth: u32,
    cn_cache: u64,
    threads: usize,
    token_file: Option<std::path::PathBuf>,
    transport: storage::dm::TransportKind,
}

/// Opened stores, kept between statements so repeated RUNs on a graph do not reload it, each
/// with the blocked pull its PageRank runs keep.
#[derive(Default)]
pub struct StoreCache {
    open: HashMap<String, (GraphMeta, OpenKey, Arc<OpenStore>, Arc<KeptPull>)>,
}

/// The memory-node pool of `nodes` with the session's token: errors name the setting to fix.
pub(crate) fn dm_pool(settings: &Settings, nodes: &[String]) -> Result<PoolConfig, String> {
    if nodes.is_empty() {
        return Err(
            "no memory nodes: SET memory_nodes = 'host:port,host:port' first (the `frontier memnode` processes to use)"
                .into(),
        );
    }
    let Some(path) = &settings.memory_token_file else {
        return Err(
            "memory_token_file is not set: SET memory_token_file = 'path' (the file the memory nodes were given with --token-file)"
                .into(),
        );
    };
    let token = std::fs::read_to_string(path)
        .map_err(|e| format!("memory_token_file '{}': {e}", path.display()))?;
    let token = token.trim();
    if token.is_empty() {
        return Err(format!("memory_token_file '{}' is empty", path.display()));
    }
    Ok(PoolConfig {
        nodes: nodes.to_vec(),
        token: token.to_string(),
        tcp: TcpOptions::default(),
    })
}

/// The layout a DM graph's catalog entry carries.
pub(crate) fn dm_layout(meta: &GraphMeta) -> Result<DmLayout, storage::StoreError> {
    match &meta.extra {
        Some(v) => DmLayout::from_json(v),
        None => Err(storage::StoreError::Other(format!(
            "graph `{}` is marked STORAGE dm but has no layout; CREATE OR REPLACE it",
            meta.name
        ))),
    }
}

impl StoreCache {
    /// Drops the store of `name` (after DROP or CREATE OR REPLACE).
    pub fn forget(&mut self, name: &str) {
        self.open.remove(name);
    }

    /// Drops every store (after a SET that changes how stores are opened).
    pub fn clear(&mut self) {
        self.open.clear();
    }

    /// Where the open graph `name` keeps its blocked pull (a new slot when it is not open).
    fn kept_pull(&self, name: &str) -> Arc<KeptPull> {
        self.open
            .get(name)
            .map_or_else(Default::default, |e| e.3.clone())
    }

    /// The bytes of the blocked pulls kept by open graphs other than `except`.
    fn kept_bytes(&self, except: Option<&str>) -> u64 {
        self.open
            .iter()
            .filter(|(name, _)| Some(name.as_str()) != except)
            .map(|(_, e)| e.3.bytes())
            .sum()
    }

    /// Lets the blocked pulls kept by open graphs other than `except` go.
    pub(crate) fn release_kept(&self, except: Option<&str>) {
        for (name, e) in &self.open {
            if Some(name.as_str()) != except {
                e.3.release();
            }
        }
    }

    fn get(
        &mut self,
        catalog: &Catalog,
        meta: &GraphMeta,
        settings: &Settings,
    ) -> Result<Arc<OpenStore>, storage::StoreError> {
        let cache = effective_cache(meta, settings);
        let key = OpenKey {
            cache,
            io_depth: settings.io_depth,
            cn_cache: settings.cn_cache,
            threads: settings.threads,
            token_file: settings.memory_token_file.clone(),
            transport: settings.memory_transport,
        };
        if let Some((m, k, st, _)) = self.open.get(&meta.name) {
            if m == meta && *k == key {
                return Ok(st.clone());
            }
        }
        // A stale store (other settings) is dropped first: its connections close.
        self.open.remove(&meta.name);
        let path = catalog.checked_path(meta)?;
        let store = if meta.storage == StorageKind::Dm {
            let layout = dm_layout(meta)?;
            let pool = dm_pool(settings, &meta.memory_nodes).map_err(|m| {
                storage::StoreError::Other(format!("graph `{}` is in memory nodes: {m}", meta.name))
            })?;
            let connector =
                DmConnector::new(settings.memory_transport, pool.token.clone(), pool.tcp);
            OpenStore::Dm(DmStore::open_with(
                &path,
                layout,
                &DmOptions {
                    graph: meta.name.clone(),
                    pool,
                    cn_cache: settings.cn_cache,
                    threads: settings.threads,
                },
                connector,
            )?)
        } else {
            let mut block = open_store(
                &path,
                &ReaderOptions {
                    cache_bytes: cache,
                    io_depth: settings.io_depth,
                },
            )?;
            // Out of core, reads are planned with the device's probed costs.
            if let BlockStore::OutOfCore(s) = &mut block {
                s.set_device_costs(DeviceCosts::of_data_dir(catalog.dir()));
            }
            OpenStore::Block(block)
        };
        let store = Arc::new(store);
        self.open.insert(
            meta.name.clone(),
            (meta.clone(), key, store.clone(), Default::default()),
        );
        Ok(store)
    }
}

/// `STORAGE memory` graphs are always loaded whole; others follow the `cache` setting.
fn effective_cache(meta: &GraphMeta, settings: &Settings) -> u64 {
    match meta.storage {
        StorageKind::Memory => u64::MAX,
        _ => settings.cache,
    }
}

/// Lets a run too short to build the blocked pull's copy (`planner::blocking::builds_copy`) use
/// the one its open graph keeps, when the run may block at all.
fn adopt_kept_pull(s: &Session, plan: &mut planner::RunPlan) {
    if !plan.segmented_pull
        && s.stores.kept_pull(&plan.graph.name).bytes() > 0
        && planner::blocking_fits(plan, &s.settings)
    {
        plan.segmented_pull = true;
    }
}

/// Runs a RUN / EXPLAIN / PROFILE statement.
pub fn run(
    s: &mut Session,
    pos: Pos,
    mode: RunMode,
    run: &Run,
) -> Result<Vec<Output>, StatementError> {
    let meta = crate::graphs::lookup(s, &run.graph)?;
    if mode == RunMode::Explain {
        return explain_run(s, pos, run, &meta);
    }
    let store = s
        .stores
        .get(&s.catalog, &meta, &s.settings)
        .map_err(|e| StatementError::store(pos, e))?;
    let mut plan = with_store!(&*store, st => planner::plan_run_on(
        &exec::algorithms::REGISTRY,
        run,
        &meta,
        &planner::vertex::Vertices { by_id: &|id| st.internal_id(id), keys: st.vertex_keys() },
        &s.settings,
    ))?;
    adopt_kept_pull(s, &mut plan);
    // The output path is checked before the run, so a refused path costs no work.
    let into = match &plan.into {
        Some(path) => Some(
            exec::sink::Destination::resolve(path, Some(&s.data_dir()))
                .map_err(|e| StatementError::at(run.into_pos.unwrap_or(pos), e.to_string()))?,
        ),
        None => None,
    };
    make_room(s, &plan, &meta);
    let started = Instant::now();
    let before = Counters::read(&store, mode == RunMode::Profile);
    let (pending, members) = execute(s, pos, &store, &plan, &meta);
    // Read right after the algorithm, so that the busy share is of about its time.
    let busy = before.busy_share(&store);
    if let Some(w) = &s.watcher {
        w.run_done();
    }
    // The rows are built batch by batch as the clauses and the output take them: LIMIT stops
    // building once it has its rows, a limited ORDER BY keeps the best so far, a file is written
    // a batch at a time.
    let pending = pending?;
    let rows = pending.rows().map_err(|e| exec_error(pos, e))?;
    let rows = exec::pipeline::finish_rows(rows, &plan).map_err(|e| exec_error(pos, e))?;
    let is_key = |name: &str| plan.holds_vertices(name);
    let rows = with_store!(&*store, st => exec::vertex_keys::with_keys_rows(rows, &is_key, st));
    let mut outputs = Vec::new();
    match &into {
        Some(dest) => {
            let at = run.into_pos.unwrap_or(pos);
            // The run's time up to its first row written; building the rows counts as writing.
            let elapsed = started.elapsed();
            outputs.push(write_rows(
                rows,
                &pending.info,
                dest,
                &plan,
                elapsed,
                pos,
                at,
            )?);
        }
        None => {
            let schema = rows.schema.clone();
            let batches = rows.collect().map_err(|e| exec_error(pos, e))?;
            let table = pending.info.with_rows(schema, batches);
            let elapsed = started.elapsed();
            outputs.push(Output::Rows { table, elapsed });
        }
    }
    let info = &pending.info;
    let profile = match mode {
        RunMode::Profile => profile_section(s, info, &store, &before, busy, &members, &meta),
        _ => Vec::new(),
    };
    let summaries = exec::result::summary_lines(&info.summaries);
    outputs.extend(summaries.into_iter().map(Output::Status));
    outputs.extend(profile);
    Ok(outputs)
}

/// EXPLAIN RUN: plans from the superblock and the vertex index alone, never reading edge data.
fn explain_run(
    s: &mut Session,
    pos: Pos,
    run: &Run,
    meta: &GraphMeta,
) -> Result<Vec<Output>, StatementError> {
    let path = s
        .catalog
        .checked_path(meta)
        .map_err(|e| StatementError::store(pos, e))?;
    let file = GraphFile::open(&path).map_err(|e| StatementError::store(pos, e))?;
    let keys = storage::blockfile::keys::VertexKeys::by_block(
        &file,
        storage::blockfile::keys::MIN_KEY_CACHE,
    )
    .map_err(|e| StatementError::store(pos, e))?;
    let vertices = planner::vertex::Vertices {
        by_id: &|id| file.internal_id(id),
        keys: keys.as_ref(),
    };
    let mut plan = planner::plan_run_on(
        &exec::algorithms::REGISTRY,
        run,
        meta,
        &vertices,
        &s.settings,
    )?;
    adopt_kept_pull(s, &mut plan);
    let reader = reader_info(s, pos, meta, &plan, keys.is_some())?;
    Ok(vec![Output::Text(planner::explain(
        &plan,
        &reader,
        &s.settings,
    ))])
}

/// What EXPLAIN says beside the plan: the reader, and for a DM graph where each call's state
/// lives and which compute nodes share the run; how keys are held when the graph has them.
fn reader_info(
    s: &Session,
    pos: Pos,
    meta: &GraphMeta,
    plan: &RunPlan,
    has_keys: bool,
) -> Result<ReaderInfo, StatementError> {
    let cache = effective_cache(meta, &s.settings);
    let in_memory = meta.loaded_bytes() <= cache;
    let mut info = if meta.storage == StorageKind::Dm {
        let layout = dm_layout(meta).map_err(|e| StatementError::store(pos, e))?;
        ReaderInfo {
            description: dm_reader_line(&layout, meta, &s.settings),
            in_memory: false,
            state: plan
                .calls
                .iter()
                .map(|c| {
                    let state = exec::algorithms::explain_state(
                        c.call.spec,
                        plan.graph.vertices,
                        s.settings.cn_cache,
                        s.settings.compute_nodes.len() + 1,
                    );
                    match plan.calls.len() {
                        1 => state,
                        _ => format!("{}: {state}", c.prefix),
                    }
                })
                .collect(),
            compute: (!s.settings.compute_nodes.is_empty())
                .then(|| crate::compute_run::explain_line(&layout, &s.settings.compute_nodes)),
            keys: None,
        }
    } else {
        ReaderInfo {
            description: if in_memory {
                format!(
                    "memory (the {} file, {} loaded, fits the {} cache)",
                    format_size(meta.file_bytes),
                    format_size(meta.loaded_bytes()),
                    format_size(cache)
                )
            } else {
                format!(
                    "out of core (io_depth {}, cache {} for a {} file)",
                    s.settings.io_depth,
                    format_size(cache),
                    format_size(meta.file_bytes)
                )
            },
            in_memory,
            ..ReaderInfo::default()
        }
    };
    if has_keys {
        info.keys = Some(keys_line(meta, in_memory, &s.settings));
    }
    Ok(info)
}

/// The reader line of a DM graph: its memory nodes and how many of its lists are in place.
fn dm_reader_line(layout: &DmLayout, meta: &GraphMeta, settings: &Settings) -> String {
    let dirs: &[(Direction, &str)] = if layout.directed {
        &[(Direction::Out, "out"), (Direction::In, "in")]
    } else {
        &[(Direction::Out, "lists")]
    };
    let parts: Vec<String> = dirs
        .iter()
        .map(|&(d, label)| {
            format!(
                "{label}: {:.1} % in place, {:.2} expected reads per vertex",
                100.0 * layout.in_place_fraction(d),
                layout.expected_reads_per_vertex(d)
            )
        })
        .collect();
    format!(
        "disaggregated memory ({} memory nodes: {}; 32-byte index entries; {}; cn_cache {})",
        layout.nodes.len(),
        meta.memory_nodes.join(", "),
        parts.join("; "),
        format_size(settings.cn_cache)
    )
}

/// Blocked pulls kept by open graphs that this run does not use give way when the run needs
/// their memory (the run's own, if it blocks, is counted in its estimate).
fn make_room(s: &Session, plan: &RunPlan, meta: &GraphMeta) {
    let mine = plan.segmented_pull.then_some(meta.name.as_str());
    let others = s.stores.kept_bytes(mine);
    if others > 0
        && planner::estimate_memory(plan, &s.settings)
            .total()
            .saturating_add(others)
            > s.settings.memory_limit
    {
        s.stores.release_kept(mine);
    }
}

/// Runs the plan: split over compute nodes for a DM graph when `compute_nodes` is set, in
/// this process otherwise, its rows left to be built as they are taken. Also returns the
/// compute nodes' reports (empty when not split).
fn execute<'s>(
    s: &Session,
    pos: Pos,
    store: &'s OpenStore,
    plan: &RunPlan,
    meta: &GraphMeta,
) -> (
    Result<exec::result::PendingResult<'s>, StatementError>,
    Vec<crate::compute_run::MemberReport>,
) {
    let cfg = exec::RunConfig {
        threads: plan.threads,
        mode: plan.mode,
        cancel: s.cancel.clone(),
        progress: s.watcher.as_ref().and_then(|w| w.run_started(plan)),
        segmented_pull: plan.segmented_pull,
        kept_pull: plan.segmented_pull.then(|| s.stores.kept_pull(&meta.name)),
        dm_update: s.settings.dm_update,
        cluster: None,
    };
    match store {
        OpenStore::Dm(d) if !s.settings.compute_nodes.is_empty() => {
            match run_split(s, pos, d, plan, &cfg, meta) {
                Ok((table, members)) => (Ok(exec::result::PendingResult::built(table)), members),
                Err(e) => (Err(e), Vec::new()),
            }
        }
        _ => (
            with_store!(store, st => exec::pipeline::run_all_pending(st, plan, &cfg))
                .map_err(|e| exec_error(pos, e)),
            Vec::new(),
        ),
    }
}

/// The store's counters before a run, for PROFILE's figures of the run alone.
struct Counters {
    io: storage::IoStats,
    /// The device's busy milliseconds and when they were read (PROFILE, out of core only).
    busy: Option<(u64, Instant)>,
    remote: Option<StatsSnapshot>,
}

impl Counters {
    fn read(store: &OpenStore, profile: bool) -> Counters {
        Counters {
            io: store.io_stats(),
            busy: profile
                .then(|| store.device_busy_ms())
                .flatten()
                .map(|ms| (ms, Instant::now())),
            remote: match store {
                OpenStore::Dm(d) => Some(d.remote_stats()),
                OpenStore::Block(_) => None,
            },
        }
    }

    /// How busy the device was since [`Counters::read`], against the time since then.
    fn busy_share(&self, store: &OpenStore) -> Option<DeviceBusyShare> {
        let (before, at) = self.busy?;
        let now = store.device_busy_ms()?;
        Some(DeviceBusyShare {
            busy_ms: now.saturating_sub(before),
            of: at.elapsed(),
        })
    }
}

/// PROFILE's tables and status lines: per iteration, per memory-node verb, per compute node.
fn profile_section(
    s: &Session,
    table: &exec::ResultTable,
    store: &OpenStore,
    before: &Counters,
    busy: Option<DeviceBusyShare>,
    members: &[crate::compute_run::MemberReport],
    meta: &GraphMeta,
) -> Vec<Output> {
    let mut profile = Vec::new();
    let io = store.io_stats().since(&before.io);
    profile.extend(profile_outputs(table, store, &io, busy));
    let dm = match store {
        OpenStore::Dm(d) => Some(d),
        _ => None,
    };
    if let (Some(d), Some(b)) = (dm, &before.remote) {
        profile.extend(remote_outputs(table, d, b));
    }
    let member0_remote = dm
        .zip(before.remote.as_ref())
        .map(|(d, b)| d.remote_stats().since(b));
    let estimate = |st: &StatsSnapshot| dm.map_or(Duration::ZERO, |d| d.rdma_estimate(st));
    profile.extend(
        crate::compute_run::profile_lines(
            members,
            meta.vertices,
            s.settings.cn_cache,
            member0_remote,
            &estimate,
        )
        .into_iter()
        .map(Output::Status),
    );
    profile
}

/// Writes the rows to `dest` a batch at a time, as they are built, and says what was written
/// (`info`: the run's summaries for the file's metadata; `pos`: the statement, for errors
/// building the rows; `at`: the INTO clause, for errors writing them). A failure leaves no
/// file behind.
fn write_rows(
    rows: exec::result::RowStream<'_>,
    info: &exec::ResultTable,
    dest: &exec::sink::Destination,
    plan: &RunPlan,
    elapsed: Duration,
    pos: Pos,
    at: Pos,
) -> Result<Output, StatementError> {
    let meta_out = exec::sink::with_summaries(&result_meta(plan, elapsed), &info.summaries);
    let sink_error = |e: exec::sink::SinkError| StatementError::at(at, e.to_string());
    let mut sink =
        exec::sink::ResultSink::for_result(dest, plan.into_format, &rows.schema, &meta_out)
            .map_err(sink_error)?;
    for batch in rows.batches {
        let batch = batch.map_err(|e| exec_error(pos, e))?;
        sink.write(&batch).map_err(sink_error)?;
    }
    let summary = sink.finish(&meta_out).map_err(sink_error)?;
    Ok(Output::Status(format!(
        "wrote {} rows ({}, {}) to {}: run {:.3} s, write {:.3} s",
        summary.rows,
        exec::sink::format_name(summary.format),
        format_size(summary.bytes),
        dest.given().display(),
        elapsed.as_secs_f64(),
        summary.elapsed.as_secs_f64()
    )))
}

/// RUN of a DM graph split over this process and the workers of `SET compute_nodes`, one
/// algorithm call at a time (a RUN of several calls joins their results as `run_all` does).
fn run_split(
    s: &Session,
    pos: Pos,
    store: &DmStore<DmConnector>,
    plan: &RunPlan,
    cfg: &exec::RunConfig,
    meta: &GraphMeta,
) -> Result<(exec::ResultTable, Vec<crate::compute_run::MemberReport>), StatementError> {
    let fail = |m: String| {
        let cancelled = cfg.cancel.load(std::sync::atomic::Ordering::SeqCst);
        StatementError {
            kind: if cancelled {
                ErrorKind::Cancelled
            } else {
                ErrorKind::Storage
            },
            cancelled,
            ..StatementError::at(pos, m)
        }
    };
    let pool = dm_pool(&s.settings, &meta.memory_nodes)
        .map_err(|m| fail(format!("graph `{}` is in memory nodes: {m}", meta.name)))?;
    let workers = crate::compute_run::connect_workers(&s.settings).map_err(fail)?;
    let mut tables = Vec::with_capacity(plan.calls.len());
    let mut reports = Vec::new();
    for c in &plan.calls {
        let (mut table, r) = crate::compute_run::run_call(
            store,
            &c.call,
            cfg,
            &workers,
            &s.settings,
            &pool,
            &meta.name,
        )
        .map_err(fail)?;
        if plan.calls.len() > 1 {
            for sm in &mut table.summaries {
                sm.scope = c.prefix.clone();
            }
        }
        tables.push(table);
        reports = r;
    }
    let table = if tables.len() == 1 {
        tables.remove(0)
    } else {
        exec::join::by_vertex(tables, exec::pipeline::joined_schema(plan))
            .map_err(|e| fail(e.to_string()))?
    };
    Ok((table, reports))
}

/// EXPLAIN's line on a string-keyed graph: how large its id map is and where it is read.
fn keys_line(meta: &GraphMeta, in_memory: bool, settings: &Settings) -> String {
    let size = format_size(meta.key_bytes);
    let share = |budget: u64| {
        format_size((budget / 16).clamp(
            storage::blockfile::keys::MIN_KEY_CACHE,
            storage::blockfile::ooc::KEY_CACHE_MAX,
        ))
    };
    if meta.storage == StorageKind::Dm {
        format!(
            "string ({size} id map, kept on the compute node: read from the graph file through {} of cn_cache)",
            share(settings.cn_cache)
        )
    } else if in_memory {
        format!("string ({size} id map, loaded with the graph)")
    } else {
        format!(
            "string ({size} id map, read by block through {} of the cache)",
            share(effective_cache(meta, settings))
        )
    }
}

fn exec_error(pos: Pos, e: exec::ExecError) -> StatementError {
    let cancelled = matches!(e, exec::ExecError::Cancelled);
    let mut err = match e {
        exec::ExecError::Store(se) => StatementError::store(pos, se),
        other => StatementError {
            kind: ErrorKind::Other,
            ..StatementError::at(pos, other.to_string())
        },
    };
    if cancelled {
        err.cancelled = true;
        err.kind = ErrorKind::Cancelled;
    }
    err
}

fn result_meta(plan: &RunPlan, elapsed: std::time::Duration) -> exec::sink::ResultMeta {
    // Several algorithms' parameters are told apart by their prefix: `pagerank.iter`.
    let several = plan.calls.len() > 1;
    let parameters = plan
        .calls
        .iter()
        .flat_map(|c| {
            c.params.iter().map(move |(k, v)| {
                let key = if several {
                    format!("{}.{k}", c.prefix)
                } else {
                    k.clone()
                };
                (key, v.clone())
            })
        })
        .collect();
    exec::sink::ResultMeta {
        algorithm: plan.algorithms(),
        parameters,
        graph: plan.graph.name.clone(),
        vertices: plan.graph.vertices,
        edges: plan.graph.edges,
        elapsed,
        summaries: Vec::new(),
    }
}

/// PROFILE's totals of remote work for a DM graph, and what they would cost on RDMA.
fn remote_outputs(
    table: &exec::ResultTable,
    d: &DmStore<DmConnector>,
    before: &storage::dm::StatsSnapshot,
) -> Vec<Output> {
    let r = d.remote_stats().since(before);
    let active: u64 = table.iterations.iter().map(|i| i.active).sum();
    let mut t = TextTable::new(&["remote", "value"]);
    let mut add = |k: &str, v: String| t.row(vec![k.to_string(), v]);
    add("remote operations", r.nic_ops().to_string());
    add("remote reads", r.reads.to_string());
    add("remote writes", r.writes.to_string());
    add("remote CAS", r.cas.to_string());
    add("remote FAA", r.faa.to_string());
    add("pass-by-value items", r.apply_items.to_string());
    add("mailbox pushes", r.mailbox_pushes.to_string());
    add("mailbox pulls", r.mailbox_pulls.to_string());
    add("round trips", r.round_trips.to_string());
    add("bytes received", format_size(r.bytes_received));
    add("bytes sent", format_size(r.bytes_sent));
    add("active vertices", active.to_string());
    add(
        "round trips per active vertex",
        if active == 0 {
            "-".into()
        } else {
            format!("{:.3}", r.round_trips as f64 / active as f64)
        },
    );
    add(
        "RDMA estimate (100 Gb/s cost model)",
        format!("{:.3} ms", d.rdma_estimate(&r).as_secs_f64() * 1000.0),
    );
    vec![
        Output::Caption("remote operations (all iterations)".into()),
        Output::Table(t),
    ]
}

/// How long the device under an out-of-core graph was busy while the algorithm ran (every
/// process's requests), and the time it is measured against (the algorithm's, with its setup).
struct DeviceBusyShare {
    busy_ms: u64,
    of: Duration,
}

/// PROFILE's per-iteration table, captioned with the reader, the algorithm's time and, out of
/// core, how much of that time the device was busy and how long threads waited for reads
/// (`io`: the run's counters).
fn profile_outputs(
    table: &exec::ResultTable,
    store: &OpenStore,
    io: &storage::IoStats,
    busy: Option<DeviceBusyShare>,
) -> Vec<Output> {
    let reader = store.describe_reader();
    let operators: Vec<&str> = table.operators.iter().map(|op| op.name()).collect();
    let summaries: String = exec::result::summary_lines(&table.summaries)
        .iter()
        .map(|line| format!("; {line}"))
        .collect();
    let waited = match io.wait_nanos {
        0 => String::new(),
        ns => format!("; threads waited for reads {:.3} s in all", ns as f64 / 1e9),
    };
    let busy = match busy {
        Some(b) if !b.of.is_zero() => format!(
            ", device busy {:.0} % of it (requests of every process)",
            (b.busy_ms as f64 / (b.of.as_secs_f64() * 1e3) * 100.0).min(100.0)
        ),
        _ => String::new(),
    };
    let caption = format!(
        "profile ({reader}; algorithm {:.3} s{busy}{waited}; operators called: {}{summaries})",
        table.algorithm_time.as_secs_f64(),
        operators.join(", ")
    );
    let t = match store {
        OpenStore::Dm(_) => dm_iterations(table),
        OpenStore::Block(_) => block_iterations(table),
    };
    vec![Output::Caption(caption), Output::Table(t)]
}

/// The block-file PROFILE table. Its column order is an interface: bench/run.sh reads edges,
/// blocks read and hit rate by position (fields 3, 5 and 6 of 8).
fn block_iterations(table: &exec::ResultTable) -> TextTable {
    let mut t = TextTable::new(&[
        "iteration",
        "active",
        "edges",
        "strategy",
        "blocks read",
        "hit rate",
        "bytes read",
        "time ms",
    ])
    .kinds(
        &["iteration", "active", "edges", "blocks read", "time ms"],
        CellKind::Number,
    );
    for it in &table.iterations {
        t.row(vec![
            it.iteration.to_string(),
            it.active.to_string(),
            it.edges.to_string(),
            it.strategy.to_string(),
            it.blocks_read.to_string(),
            it.hit_rate
                .map_or("—".to_string(), |r| format!("{:.1} %", r * 100.0)),
            format_size(it.bytes_read),
            format!("{:.3}", it.elapsed.as_secs_f64() * 1000.0),
        ]);
    }
    t
}

/// The DM PROFILE table: per iteration, the remote work of graph reads and remote vertex
/// attributes together (round trips, operations, bytes each way). There is no block cache on
/// the compute node, so no hit rate.
fn dm_iterations(table: &exec::ResultTable) -> TextTable {
    // Over several compute nodes: each member's time and the slowest over the mean, each
    // member's edges and the busiest over the mean (what hub re-scheduling balances), and
    // the hubs dealt out across the members in the iteration.
    let members = table.iterations.iter().any(|it| it.member_times.len() > 1);
    let mut columns = vec![
        "iteration",
        "active",
        "edges",
        "strategy",
        "round trips",
        "remote ops",
        "bytes received",
        "bytes sent",
        "time ms",
    ];
    if members {
        columns.extend([
            "member ms",
            "imbalance",
            "member edges",
            "edge imbalance",
            "rescheduled",
        ]);
    }
    let mut t = TextTable::new(&columns).kinds(
        &[
            "iteration",
            "active",
            "edges",
            "round trips",
            "remote ops",
            "time ms",
        ],
        CellKind::Number,
    );
    for it in &table.iterations {
        let mut row = vec![
            it.iteration.to_string(),
            it.active.to_string(),
            it.edges.to_string(),
            it.strategy.to_string(),
            it.round_trips.to_string(),
            it.remote_ops.to_string(),
            format_size(it.bytes_read),
            format_size(it.bytes_sent),
            format!("{:.3}", it.elapsed.as_secs_f64() * 1000.0),
        ];
        if members {
            let times: Vec<String> = it
                .member_times
                .iter()
                .map(|d| format!("{:.1}", d.as_secs_f64() * 1000.0))
                .collect();
            row.push(times.join(" / "));
            row.push(it.imbalance().map_or("-".into(), |x| format!("{x:.2}")));
            let edges: Vec<String> = it.member_edges.iter().map(u64::to_string).collect();
            row.push(edges.join(" / "));
            row.push(
                it.edge_imbalance()
                    .map_or("-".into(), |x| format!("{x:.2}")),
            );
            row.push(match it.hubs_dealt {
                0 => "-".into(),
                1 => "1 hub".into(),
                n => format!("{n} hubs"),
            });
        }
        t.row(row);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn table(member_times: Vec<Duration>) -> exec::ResultTable {
        let member_edges = match member_times.len() {
            0 => Vec::new(),
            _ => vec![3000, 1000],
        };
        exec::ResultTable {
            schema: std::sync::Arc::new(arrow_schema::Schema::empty()),
            batches: Vec::new(),
            iterations: vec![exec::IterationStats {
                strategy: "remote direct",
                elapsed: Duration::from_millis(4),
                member_times,
                member_edges,
                hubs_dealt: 3,
                ..Default::default()
            }],
            algorithm_time: Duration::from_millis(4),
            operators: Vec::new(),
            summaries: Vec::new(),
        }
    }

    #[test]
    fn profile_shows_member_times_and_imbalance_only_over_several_members() {
        let alone = dm_iterations(&table(Vec::new()));
        assert!(!alone.header().iter().any(|h| h == "imbalance"));
        let split = dm_iterations(&table(vec![
            Duration::from_millis(2),
            Duration::from_millis(4),
        ]));
        let header = split.header();
        assert_eq!(
            &header[header.len() - 5..],
            [
                "member ms",
                "imbalance",
                "member edges",
                "edge imbalance",
                "rescheduled"
            ]
        );
        let row = &split.rows()[0];
        assert_eq!(
            &row[row.len() - 5..],
            ["2.0 / 4.0", "1.33", "3000 / 1000", "1.50", "3 hubs"]
        );
    }
}
