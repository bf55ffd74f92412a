//! RUN on a DM graph split over this process and the compute-node workers of
//! `SET compute_nodes` (DMG §4.1). This process is member 0; worker `i` is member `i + 1`.
//!
//! Per RUN: connect to every worker (an unreachable one fails the statement naming it and the
//! setting), and per algorithm call allocate a job region on the graph's first memory node
//! (leased to a connection this run holds, so it goes with the run or the session's process),
//! split the vertices into owned ranges over the layout's tiny chunks by `8(p−1)|V_i| + |E_i|`,
//! send each worker its JOB, run member 0 here, and watch the workers' connections from one
//! thread each: a worker that closes (killed), answers ERROR, or sends nothing (not even its
//! ALIVE) for [`SILENCE_LIMIT`] (frozen, or its host gone without closing) aborts the
//! collectives, so every member stops at its next collective and the statement fails naming
//! the worker. Connections are per RUN, so `SET compute_nodes` between queries changes the
//! members of the next one.

use std::net::{TcpStream, ToSocketAddrs};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use planner::{AlgoCall, Settings};
use storage::cluster::{split_ranges, Collectives, Member};
use storage::dm::compute_protocol::{
    await_frame, Awaited, ComputeMessage, Done, Job, PROTOCOL_VERSION, SILENCE_LIMIT,
};
use storage::dm::transport::{Connector, Transport};
use storage::dm::{
    DmConnector, DmLayout, DmStore, JobRegion, MnCollectives, PoolConfig, StatsSnapshot,
};

use crate::compute_node::call_params;

/// How long connecting to and greeting a worker may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest slot of the collectives (words per member per round); longer values take rounds.
const MAX_SLOT_WORDS: u64 = 1 << 16;

/// The workers of one RUN, connected and greeted.
pub struct Workers {
    links: Vec<(String, TcpStream)>,
}

/// What a worker reported for one call.
#[derive(Debug, Clone)]
pub struct MemberReport {
    /// `this process`, or the worker's address.
    pub name: String,
    pub owned: Range<u32>,
    /// Iterations, time and peak RSS (`None` for this process: its own figures are the table's).
    pub done: Option<Done>,
}

/// The compute nodes' token: `compute_token_file`, else `memory_token_file`'s.
fn compute_token(settings: &Settings) -> Result<String, String> {
    let (path, setting) = match (&settings.compute_token_file, &settings.memory_token_file) {
        (Some(p), _) => (p, "compute_token_file"),
        (None, Some(p)) => (p, "memory_token_file"),
        (None, None) => {
            return Err("no token for the compute nodes: SET compute_token_file = 'path' (the file the workers were given with --token-file), or memory_token_file".into())
        }
    };
    let t = std::fs::read_to_string(path)
        .map_err(|e| format!("{setting} '{}': {e}", path.display()))?;
    let t = t.trim();
    if t.is_empty() {
        return Err(format!("{setting} '{}' is empty", path.display()));
    }
    Ok(t.to_string())
}

/// Connects to every worker of `settings.compute_nodes` and presents the token.
pub fn connect_workers(settings: &Settings) -> Result<Workers, String> {
    let token = compute_token(settings)?;
    let mut links = Vec::with_capacity(settings.compute_nodes.len());
    for addr in &settings.compute_nodes {
        let named = |e: String| {
            format!("compute node {addr} (SET compute_nodes): {e}; start it with `frontier compute --listen {addr}`, or SET compute_nodes without it")
        };
        let stream = connect(addr).map_err(named)?;
        let mut w = &stream;
        ComputeMessage::Hello {
            token: token.clone(),
            version: PROTOCOL_VERSION,
        }
        .write_to(&mut w)
        .map_err(|e| named(e.to_string()))?;
        let started = Instant::now();
        match await_frame(&stream, &|| started.elapsed() > CONNECT_TIMEOUT) {
            Ok(Awaited::Frame(ComputeMessage::HelloOk)) => {}
            Ok(Awaited::Frame(ComputeMessage::Error(m))) => return Err(named(m)),
            Ok(Awaited::Stopped) => return Err(named("no answer to HELLO within 5 s".into())),
            Ok(Awaited::Closed) => {
                return Err(named(format!("it closed the connection at HELLO: it may run an older frontier (compute protocol 1; this one speaks {PROTOCOL_VERSION}): restart it with this build's `frontier compute`")))
            }
            Ok(other) => return Err(named(format!("unexpected answer to HELLO: {other:?}"))),
            Err(e) => return Err(named(e.to_string())),
        }
        links.push((addr.clone(), stream));
    }
    Ok(Workers { links })
}

fn connect(addr: &str) -> Result<TcpStream, String> {
    let mut last = "the address resolves to nothing".to_string();
    for a in addr.to_socket_addrs().map_err(|e| e.to_string())? {
        match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => last = format!("cannot connect: {e}"),
        }
    }
    Err(last)
}

/// Every member's owned vertices: contiguous ranges over the layout's tiny chunks, balanced by
/// DMG's cost `8(p−1)|V_i| + |E_i|` (with one member the whole graph).
pub fn member_ranges(layout: &DmLayout, members: usize) -> Vec<Range<u32>> {
    let p = members.max(1) as u64;
    let mut bounds: Vec<u32> = layout.tiny_chunks.iter().map(|c| c.first).collect();
    bounds.push(
        layout
            .tiny_chunks
            .last()
            .map_or(0, |c| c.first + c.vertices),
    );
    if layout.tiny_chunks.is_empty() {
        bounds = vec![0, layout.vertices];
    }
    let costs: Vec<u64> = if layout.tiny_chunks.is_empty() {
        vec![layout.vertices as u64]
    } else {
        layout
            .tiny_chunks
            .iter()
            .map(|c| 8 * (p - 1) * c.vertices as u64 + c.edges)
            .collect()
    };
    let mut ranges = split_ranges(&bounds, &costs, members.max(1));
    // The chunks cover every vertex; a layout that says otherwise still leaves none out.
    if let Some(first) = ranges.first_mut() {
        first.start = 0;
    }
    if let Some(last) = ranges.last_mut() {
        last.end = layout.vertices;
    }
    ranges
}

/// EXPLAIN's line: the members and each one's share of the vertices.
pub fn explain_line(layout: &DmLayout, nodes: &[String]) -> String {
    let ranges = member_ranges(layout, nodes.len() + 1);
    let n = layout.vertices.max(1) as f64;
    let parts: Vec<String> = std::iter::once("this process".to_string())
        .chain(nodes.iter().cloned())
        .zip(&ranges)
        .map(|(name, r)| {
            format!(
                "{name} {}..{} ({:.1} %)",
                r.start,
                r.end,
                100.0 * (r.end - r.start) as f64 / n
            )
        })
        .collect();
    let descriptor = if layout.descriptor.is_some() {
        ""
    } else {
        "; this graph has no descriptor in the memory nodes: CREATE OR REPLACE it ... STORAGE dm to run it on compute nodes"
    };
    format!("{} members: {}{descriptor}", ranges.len(), parts.join(", "))
}

/// Runs `call` over this process and `workers`. Errors name the member at fault.
pub fn run_call(
    store: &DmStore<DmConnector>,
    call: &AlgoCall,
    cfg: &exec::RunConfig,
    workers: &Workers,
    settings: &Settings,
    pool: &PoolConfig,
    graph: &str,
) -> Result<(exec::ResultTable, Vec<MemberReport>), String> {
    if !call.spec.splits {
        return Err(format!(
            "compute_nodes: {} runs on one compute node; SET compute_nodes = '' to run it here",
            call.spec.name
        ));
    }
    let layout = store.layout();
    let descriptor = layout.descriptor.ok_or_else(|| {
        format!("graph `{graph}` was loaded into the memory nodes without a descriptor; CREATE OR REPLACE GRAPH {graph} ... STORAGE dm to run it on compute nodes (or SET compute_nodes = '')")
    })?;
    let members = workers.links.len() + 1;
    let ranges = member_ranges(layout, members);
    let connector = DmConnector::new(settings.memory_transport, pool.token.clone(), pool.tcp);
    let first = layout
        .nodes
        .first()
        .ok_or_else(|| "the graph's layout names no memory node".to_string())?;
    let link: Arc<dyn Transport> = Arc::new(
        connector
            .connect(&first.addr)
            .map_err(|e| format!("memory node {}: {e}", first.addr))?,
    );
    let slot_words = (layout.vertices as u64)
        .div_ceil(64)
        .clamp(64, MAX_SLOT_WORDS) as usize;
    let region =
        JobRegion::allocate(link.as_ref(), members, slot_words).map_err(|e| e.to_string())?;
    // Member 0's own cancel flag: raised by Ctrl-C (the session's flag) and by a worker's
    // failure, so member 0 stops even between collectives.
    let run_cancel = Arc::new(AtomicBool::new(false));
    let collectives = Arc::new(
        MnCollectives::new(link, region, 0, run_cancel.clone()).map_err(|e| e.to_string())?,
    );
    let sent = JobSpec {
        layout,
        descriptor,
        ranges: &ranges,
        region,
        call,
        cfg,
        settings,
        pool,
        graph,
    }
    .send_to(workers);
    if let Err(msg) = sent {
        collectives.abort(&msg);
        return Err(msg);
    }
    let mine = exec::RunConfig {
        cancel: run_cancel.clone(),
        cluster: Some(Member {
            collectives: collectives.clone(),
            owned: ranges[0].clone(),
        }),
        ..cfg.clone()
    };
    let watch = Watch::new(workers);
    let (table, replies) = run_watching(store, call, &mine, cfg, workers, &collectives, &watch);
    let Watch {
        first_failure,
        silent_at_stop,
        ..
    } = watch;
    let first_failure = first_failure
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    if cfg.cancel.load(Ordering::SeqCst) {
        // Ctrl-C: the cause is the user, whatever the workers said on the way down (a
        // healthy one reports the abort that followed).
        collectives.abort("this session's statement was cancelled");
        return Err(cancelled_message(workers, &silent_at_stop));
    }
    let table = match table {
        Ok(t) => t,
        Err(e) => {
            collectives.abort(&format!("this session's member failed: {e}"));
            // A worker's failure explains member 0's better than "aborted".
            return Err(first_failure.unwrap_or_else(|| e.to_string()));
        }
    };
    if let Some(m) = first_failure {
        return Err(m);
    }
    let reports = member_reports(workers, replies, &ranges)?;
    Ok((table, reports))
}

/// What the threads watching the workers share with member 0 during one call.
struct Watch {
    /// Raised once member 0 has failed or finished: the watchers and the cancel forwarder stop.
    abandon: AtomicBool,
    begun: Instant,
    /// When each worker was last heard from (milliseconds since `begun`).
    heard: Vec<AtomicU64>,
    /// How long each worker had been silent when its watcher was told to stop (Ctrl-C's
    /// message names the silent ones).
    silent_at_stop: Vec<AtomicU64>,
    /// The first worker failure seen: the cause, where later ones (a survivor told to abort,
    /// or reading state member 0 freed while unwinding) are its consequences.
    first_failure: std::sync::Mutex<Option<String>>,
}

impl Watch {
    fn new(workers: &Workers) -> Watch {
        Watch {
            abandon: AtomicBool::new(false),
            begun: Instant::now(),
            heard: workers.links.iter().map(|_| AtomicU64::new(0)).collect(),
            silent_at_stop: workers.links.iter().map(|_| AtomicU64::new(0)).collect(),
            first_failure: std::sync::Mutex::new(None),
        }
    }
}

/// Runs member 0's share of `call` here while one thread per worker waits for its answer and
/// one forwards the session's Ctrl-C to the run's own cancel flag (`mine.cancel`).
fn run_watching(
    store: &DmStore<DmConnector>,
    call: &AlgoCall,
    mine: &exec::RunConfig,
    cfg: &exec::RunConfig,
    workers: &Workers,
    collectives: &Arc<MnCollectives>,
    watch: &Watch,
) -> (
    Result<exec::ResultTable, exec::ExecError>,
    Vec<Result<Done, String>>,
) {
    let run_cancel = &mine.cancel;
    let abandon = &watch.abandon;
    std::thread::scope(|s| {
        s.spawn(|| {
            while !abandon.load(Ordering::SeqCst) {
                if cfg.cancel.load(Ordering::SeqCst) {
                    run_cancel.store(true, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let watchers: Vec<_> = workers
            .links
            .iter()
            .zip(watch.heard.iter().zip(&watch.silent_at_stop))
            .map(|((addr, stream), (heard, silent_at_stop))| {
                let collectives = collectives.clone();
                let first_failure = &watch.first_failure;
                let cancel = cfg.cancel.clone();
                let begun = watch.begun;
                s.spawn(move || {
                    let stop = || abandon.load(Ordering::SeqCst) || cancel.load(Ordering::SeqCst);
                    let failed = |msg: String| {
                        first_failure
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .get_or_insert_with(|| msg.clone());
                        collectives.abort(&msg);
                        run_cancel.store(true, Ordering::SeqCst);
                        Err(msg)
                    };
                    watch_worker(addr, stream, heard, silent_at_stop, begun, &stop, &failed)
                })
            })
            .collect();
        let table = exec::run::run(store, call, mine);
        if table.is_err() {
            abandon.store(true, Ordering::SeqCst);
        }
        let replies: Vec<Result<Done, String>> = watchers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err("a watcher panicked".into()))
            })
            .collect();
        // Ends the cancel forwarder.
        abandon.store(true, Ordering::SeqCst);
        (table, replies)
    })
}

/// What every worker is sent for one call: the graph, its own range of vertices, the job
/// region and the call with its settings.
struct JobSpec<'a> {
    layout: &'a DmLayout,
    descriptor: u64,
    ranges: &'a [Range<u32>],
    region: JobRegion,
    call: &'a AlgoCall,
    cfg: &'a exec::RunConfig,
    settings: &'a Settings,
    pool: &'a PoolConfig,
    graph: &'a str,
}

impl JobSpec<'_> {
    /// Sends each worker its job; the error names the first worker it could not be sent to.
    fn send_to(&self, workers: &Workers) -> Result<(), String> {
        let (layout, cfg, settings, pool, call) =
            (self.layout, self.cfg, self.settings, self.pool, self.call);
        let mode = cfg.mode.name().to_string();
        for (i, (addr, stream)) in workers.links.iter().enumerate() {
            let job = Job {
                memory_nodes: layout.nodes.iter().map(|n| n.addr.clone()).collect(),
                memory_token: pool.token.clone(),
                transport: settings.memory_transport.name().to_string(),
                graph: self.graph.to_string(),
                descriptor: storage::dm::GlobalAddr::from_raw(self.descriptor),
                region: self.region,
                rank: i as u32 + 1,
                owned: self.ranges[i + 1].clone(),
                algorithm: call.spec.name.to_string(),
                source: call.source,
                params: call_params(call),
                threads: cfg.threads as u32,
                mode: mode.clone(),
                dm_update: cfg.dm_update.name().to_string(),
                cn_cache: settings.cn_cache,
                segmented_pull: cfg.segmented_pull,
            };
            let mut w = stream;
            if let Err(e) = ComputeMessage::Job(Box::new(job)).write_to(&mut w) {
                return Err(format!(
                    "compute node {addr} died before its job was sent: {e}"
                ));
            }
        }
        Ok(())
    }
}

/// Waits for one worker's answer to its job, noting when it was last heard from (`heard`,
/// milliseconds since `begun`) and how long it had been silent if told to `stop`. A worker
/// silent for [`SILENCE_LIMIT`] is presumed frozen; `failed` records a failure and stops the
/// others.
fn watch_worker(
    addr: &str,
    stream: &TcpStream,
    heard: &AtomicU64,
    silent_at_stop: &AtomicU64,
    begun: Instant,
    stop: &dyn Fn() -> bool,
    failed: &dyn Fn(String) -> Result<Done, String>,
) -> Result<Done, String> {
    let since_heard = || {
        begun
            .elapsed()
            .saturating_sub(Duration::from_millis(heard.load(Ordering::SeqCst)))
    };
    let mut reply = await_frame(stream, &|| stop() || since_heard() > SILENCE_LIMIT);
    while let Ok(Awaited::Frame(ComputeMessage::Alive)) = reply {
        heard.store(begun.elapsed().as_millis() as u64, Ordering::SeqCst);
        reply = await_frame(stream, &|| stop() || since_heard() > SILENCE_LIMIT);
    }
    if let Ok(Awaited::Stopped) = reply {
        let quiet = since_heard().as_millis() as u64;
        silent_at_stop.store(quiet, Ordering::SeqCst);
    }
    match reply {
        Ok(Awaited::Stopped) if !stop() => failed(format!(
            "compute node {addr}: no reply within {SILENCE_LIMIT:?}; presumed frozen or dead (its connection is open, but it has sent nothing, not even ALIVE)"
        )),
        Ok(Awaited::Frame(ComputeMessage::Done(d))) => Ok(d),
        Ok(Awaited::Frame(ComputeMessage::Error(m))) => {
            failed(format!("compute node {addr} failed: {m}"))
        }
        Ok(Awaited::Frame(other)) => failed(format!(
            "compute node {addr} answered the job with {other:?}"
        )),
        Ok(Awaited::Closed) => {
            failed(format!("compute node {addr} died: its connection closed"))
        }
        Ok(Awaited::Stopped) => Err("stopped".into()),
        Err(e) => failed(format!("compute node {addr} died: {e}")),
    }
}

/// Ctrl-C's error: "cancelled", naming any worker that had gone silent before it.
fn cancelled_message(workers: &Workers, silent_at_stop: &[AtomicU64]) -> String {
    let silent: Vec<String> = workers
        .links
        .iter()
        .zip(silent_at_stop)
        .filter_map(|((addr, _), quiet)| {
            let quiet = Duration::from_millis(quiet.load(Ordering::SeqCst));
            (quiet > 2 * storage::dm::compute_protocol::ALIVE_EVERY).then(|| {
                format!(
                    "compute node {addr} had sent nothing for {:.1} s",
                    quiet.as_secs_f64()
                )
            })
        })
        .collect();
    if silent.is_empty() {
        "cancelled".to_string()
    } else {
        format!("cancelled ({})", silent.join("; "))
    }
}

/// Member 0's report, then each worker's from its reply (a stopped watcher reads "cancelled").
fn member_reports(
    workers: &Workers,
    replies: Vec<Result<Done, String>>,
    ranges: &[Range<u32>],
) -> Result<Vec<MemberReport>, String> {
    let mut reports = vec![MemberReport {
        name: "this process".into(),
        owned: ranges[0].clone(),
        done: None,
    }];
    for (((addr, _), reply), owned) in workers.links.iter().zip(replies).zip(&ranges[1..]) {
        let done = reply.map_err(|m| {
            if m == "stopped" {
                "cancelled".to_string()
            } else {
                m
            }
        })?;
        reports.push(MemberReport {
            name: addr.clone(),
            owned: owned.clone(),
            done: Some(done),
        });
    }
    Ok(reports)
}

/// PROFILE's lines: each member's share, what the workers reported, and each member's remote
/// work with its modelled RDMA time (`estimate`); the members run at once, so the split run's
/// modelled time is the slowest member's.
pub fn profile_lines(
    reports: &[MemberReport],
    vertices: u64,
    cn_cache: u64,
    member0_remote: Option<StatsSnapshot>,
    estimate: &dyn Fn(&StatsSnapshot) -> Duration,
) -> Vec<String> {
    let n = vertices.max(1) as f64;
    let remote = |s: &StatsSnapshot| {
        format!(
            "{} round trips, {} remote operations, {} sent, RDMA estimate {:.3} ms",
            s.round_trips,
            s.nic_ops(),
            planner::settings::format_size(s.bytes_sent),
            estimate(s).as_secs_f64() * 1e3
        )
    };
    let mut slowest = Duration::ZERO;
    let mut lines: Vec<String> = reports
        .iter()
        .map(|r| {
            let share = format!(
                "vertices {}..{} ({:.1} %)",
                r.owned.start,
                r.owned.end,
                100.0 * (r.owned.end - r.owned.start) as f64 / n
            );
            match &r.done {
                None => match &member0_remote {
                    Some(s) => {
                        slowest = slowest.max(estimate(s));
                        format!("member 0 ({}): {share}, {}", r.name, remote(s))
                    }
                    None => format!("member 0 ({}): {share}", r.name),
                },
                Some(d) => {
                    slowest = slowest.max(estimate(&d.remote));
                    format!(
                        "compute node {}: {share}, {} iterations, {:.3} s, peak RSS {} (cn_cache {}), {}",
                        r.name,
                        d.iterations,
                        d.micros as f64 / 1e6,
                        planner::settings::format_size(d.peak_rss),
                        planner::settings::format_size(cn_cache),
                        remote(&d.remote)
                    )
                }
            }
        })
        .collect();
    if reports.len() > 1 {
        lines.push(format!(
            "RDMA estimate of the split run: {:.3} ms (the slowest member's; barrier polling not counted)",
            slowest.as_secs_f64() * 1e3
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::dm::load::{DirLayout, NodeMeta, TinyChunk, LAYOUT_VERSION};

    fn layout(chunks: &[(u32, u64)], descriptor: Option<u64>) -> DmLayout {
        let mut first = 0;
        let tiny_chunks: Vec<TinyChunk> = chunks
            .iter()
            .map(|&(vertices, edges)| {
                let c = TinyChunk {
                    first,
                    vertices,
                    edges,
                };
                first += vertices;
                c
            })
            .collect();
        DmLayout {
            version: LAYOUT_VERSION,
            nonce: 1,
            vertices: first,
            directed: false,
            weighted: false,
            nodes: vec![NodeMeta {
                addr: "127.0.0.1:1".into(),
                id: 1,
                epoch: None,
            }],
            bounds: vec![0, first],
            out: DirLayout {
                index: vec![0],
                in_place: 0,
                out_of_place_bytes: 0,
            },
            inn: None,
            tiny_chunks,
            regions: vec![],
            region_bytes: vec![],
            descriptor,
        }
    }

    #[test]
    fn members_own_contiguous_ranges_balanced_by_vertices_and_edges() {
        // A hub chunk (10 vertices, 1000 edges) against light ones.
        let l = layout(&[(10, 1000), (100, 10), (100, 10), (100, 10)], Some(1));
        assert_eq!(member_ranges(&l, 1), vec![0..310]);
        let two = member_ranges(&l, 2);
        // Costs 8(p−1)|V_i| + |E_i| = 1080, 810, 810, 810: the hub's chunk and one light one
        // (1890) against two light ones (1620).
        assert_eq!(two, vec![0..110, 110..310]);
        let three = member_ranges(&l, 3);
        assert_eq!((three[0].start, three[2].end), (0, 310));
        assert!(three.windows(2).all(|w| w[0].end == w[1].start));
        let line = explain_line(&l, &["a:1".into()]);
        assert!(
            line.starts_with("2 members: this process 0..110 (35.5 %), a:1 110..310"),
            "{line}"
        );
        let old = explain_line(&layout(&[(5, 5)], None), &["a:1".into()]);
        assert!(old.contains("CREATE OR REPLACE"), "{old}");
    }
}
