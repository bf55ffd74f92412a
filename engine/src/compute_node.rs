//! `frontier compute`: a compute-node worker (DMG §4.1). It holds no graph: a session connects,
//! presents the token, and sends one JOB per algorithm call; the worker opens the graph from its
//! descriptor in the memory nodes, runs `exec::run` as the job's member (its owned vertices, the
//! collectives in the job region) and answers DONE or ERROR.
//!
//! While a job runs, the connection is watched: when the session goes away (closed, or its
//! process killed) the job's cancel flag is raised at once, and the collectives abort so the
//! other members stop too; and the worker says ALIVE every second, so the session can tell a
//! frozen worker from a busy one. A connection must present its whole HELLO within 5 s, and at
//! most [`MAX_SESSIONS`] are served at once (each costs a thread). SIGTERM / SIGINT shut the
//! worker down like a memory node.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use planner::settings::DmUpdate;
use planner::{AlgoCall, Mode};
use storage::cluster::{Collectives, Member};
use storage::dm::compute_protocol::{
    await_frame, await_frame_within, peer_closed, Awaited, ComputeMessage, Done, Job, JobValue,
    ALIVE_EVERY, MAX_HELLO_FRAME,
};
use storage::dm::token::SecretToken;
use storage::dm::transport::{Connector, Transport};
use storage::dm::{
    DmConnector, DmOptions, DmStore, MnCollectives, PoolConfig, StatsSnapshot, TcpOptions,
    TransportKind,
};

use crate::job_memory::{configure_allocator, peak_rss, start_job_measurement};

/// How long a new connection has to say its whole HELLO.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// Sessions served at once; more are closed on accept (each costs a thread). A worker serves
/// a few sessions; the cap keeps strangers from taking threads and descriptors without end.
pub const MAX_SESSIONS: usize = 256;
/// How often the accept loop and a running job look at their flags.
const POLL: Duration = Duration::from_millis(50);

/// How to run a compute node.
pub struct ComputeNodeOptions {
    pub listen: SocketAddr,
    /// The shared token sessions must present.
    pub token: String,
    /// Where the worker's messages go (the engine prints nothing itself).
    pub log: Arc<dyn Fn(&str) + Send + Sync>,
}

/// Runs a compute node until `stop` is raised (SIGTERM / SIGINT). `ready` gets the bound
/// address once it accepts connections (the binary prints it; port 0 in tests).
pub fn run_compute_node(
    opts: ComputeNodeOptions,
    stop: &'static AtomicBool,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    let token = SecretToken::new(&opts.token)
        .ok_or_else(|| "the compute node's token must be 1 to 1024 bytes".to_string())?;
    configure_allocator();
    let listener = TcpListener::bind(opts.listen)
        .map_err(|e| format!("compute node: cannot listen on {}: {e}", opts.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("compute node: {e}"))?;
    let log = opts.log.clone();
    if !addr.ip().is_loopback() {
        log("compute node: listening on a non-loopback address; only the token protects it");
    }
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("compute node: {e}"))?;
    ready(addr);
    let token = Arc::new(token);
    let name: Arc<str> = addr.to_string().into();
    let mut threads = Vec::new();
    let live = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, peer)) => {
                if live.load(Ordering::SeqCst) >= MAX_SESSIONS {
                    log(&format!(
                        "compute node: {MAX_SESSIONS} sessions open already, closing {peer}"
                    ));
                    continue;
                }
                live.fetch_add(1, Ordering::SeqCst);
                let token = token.clone();
                let name = name.clone();
                let session_log = log.clone();
                let session_live = live.clone();
                let t = std::thread::Builder::new()
                    .name(format!("compute-{peer}"))
                    .spawn(move || {
                        if let Err(e) = serve(stream, &token, &name, stop) {
                            session_log(&format!("compute node: session {peer}: {e}"));
                        }
                        session_live.fetch_sub(1, Ordering::SeqCst);
                    });
                match t {
                    Ok(t) => threads.push(t),
                    Err(e) => {
                        live.fetch_sub(1, Ordering::SeqCst);
                        log(&format!("compute node: cannot start a session thread: {e}"))
                    }
                }
                threads.retain(|t: &std::thread::JoinHandle<()>| !t.is_finished());
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                log(&format!("compute node: accept failed: {e}"));
                std::thread::sleep(POLL);
            }
        }
    }
    for t in threads {
        let _ = t.join();
    }
    Ok(())
}

/// One session's connection: HELLO, then jobs until it closes.
fn serve(
    stream: TcpStream,
    token: &SecretToken,
    name: &str,
    stop: &'static AtomicBool,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    let _ = stream.set_nodelay(true);
    // The whole HELLO, not only its first byte, within the deadline, and no larger than a
    // token needs.
    let hello = await_frame_within(
        &stream,
        &|| stop.load(Ordering::SeqCst),
        Some(Instant::now() + HELLO_TIMEOUT),
        MAX_HELLO_FRAME,
    )?;
    let mut out = &stream;
    // A session of protocol 2 or more is told ALIVE while its jobs run.
    let alive = match hello {
        Awaited::Frame(ComputeMessage::Hello { token: t, version })
            if token.matches(t.as_bytes()) =>
        {
            ComputeMessage::HelloOk.write_to(&mut out)?;
            version >= 2
        }
        Awaited::Frame(_) | Awaited::Stopped => {
            let _ = ComputeMessage::Error("unauthorized: wrong or missing token".into())
                .write_to(&mut out);
            return Ok(());
        }
        Awaited::Closed => return Ok(()),
    };
    // A session that cannot take a few bytes for this long is treated as gone.
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    loop {
        match await_frame(&stream, &|| stop.load(Ordering::SeqCst))? {
            Awaited::Frame(ComputeMessage::Job(job)) => {
                let reply = run_job(&job, &stream, name, stop, alive);
                reply.write_to(&mut out)?;
            }
            Awaited::Frame(other) => {
                let _ = ComputeMessage::Error(format!(
                    "expected a JOB, got {}",
                    short(&format!("{other:?}"))
                ))
                .write_to(&mut out);
                return Ok(());
            }
            Awaited::Closed | Awaited::Stopped => return Ok(()),
        }
    }
}

fn short(s: &str) -> String {
    s.chars().take(80).collect()
}

/// Runs one job on a thread while this one watches the session's connection and the stop
/// flag, and (`alive`) tells the session every [`ALIVE_EVERY`] that this worker still runs.
fn run_job(
    job: &Job,
    session: &TcpStream,
    name: &str,
    stop: &AtomicBool,
    alive: bool,
) -> ComputeMessage {
    let cancel = Arc::new(AtomicBool::new(false));
    start_job_measurement();
    let started = Instant::now();
    let mut said_alive = Instant::now();
    let result = std::thread::scope(|s| {
        let worker = s.spawn(|| execute(job, cancel.clone(), name));
        while !worker.is_finished() {
            if peer_closed(session) || stop.load(Ordering::SeqCst) {
                cancel.store(true, Ordering::SeqCst);
            }
            if alive && said_alive.elapsed() >= ALIVE_EVERY {
                said_alive = Instant::now();
                let mut out = session;
                if ComputeMessage::Alive.write_to(&mut out).is_err() {
                    cancel.store(true, Ordering::SeqCst);
                }
            }
            std::thread::sleep(POLL.min(Duration::from_millis(10)));
        }
        worker
            .join()
            .unwrap_or_else(|_| Err("the job panicked".to_string()))
    });
    match result {
        Ok((iterations, remote)) => ComputeMessage::Done(Done {
            iterations,
            micros: started.elapsed().as_micros() as u64,
            peak_rss: peak_rss().unwrap_or(0),
            remote,
        }),
        Err(e) => ComputeMessage::Error(e),
    }
}

/// Opens the graph, joins the collectives and runs the member's part; returns its iterations
/// and the remote operations of its run.
fn execute(job: &Job, cancel: Arc<AtomicBool>, name: &str) -> Result<(u64, StatsSnapshot), String> {
    let call = rebuild_call(job)?;
    let transport = TransportKind::parse(&job.transport)
        .ok_or_else(|| format!("unknown memory transport `{}`", job.transport))?;
    let connector = DmConnector::new(transport, job.memory_token.clone(), TcpOptions::default());
    // The collectives' own connection to the job region's memory node.
    let mut region_link = None;
    for addr in &job.memory_nodes {
        let t = connector.connect(addr).map_err(|e| e.to_string())?;
        if t.node_id() == job.region.addr.node() {
            region_link = Some(t);
            break;
        }
    }
    let region_link = region_link.ok_or_else(|| {
        format!(
            "no memory node given has id {} (the job region's)",
            job.region.addr.node()
        )
    })?;
    let collectives = Arc::new(
        MnCollectives::new(
            Arc::new(region_link),
            job.region,
            job.rank as usize,
            cancel.clone(),
        )
        .map_err(|e| e.to_string())?,
    );
    let fail = |e: String| {
        collectives.abort(&format!("compute node {name} failed: {e}"));
        e
    };
    let store = DmStore::open_remote(
        job.descriptor,
        &DmOptions {
            graph: job.graph.clone(),
            pool: PoolConfig {
                nodes: job.memory_nodes.clone(),
                token: job.memory_token.clone(),
                tcp: TcpOptions::default(),
            },
            cn_cache: job.cn_cache,
            threads: job.threads.max(1) as usize,
        },
        connector,
    )
    .map_err(|e| fail(e.to_string()))?;
    let cfg = exec::RunConfig {
        threads: job.threads.max(1) as usize,
        mode: parse_mode(&job.mode)?,
        cancel: cancel.clone(),
        progress: None,
        segmented_pull: job.segmented_pull,
        kept_pull: None,
        dm_update: parse_dm_update(&job.dm_update)?,
        cluster: Some(Member {
            collectives: collectives.clone(),
            owned: job.owned.clone(),
        }),
    };
    let before = store.remote_stats();
    match exec::run::run(&store, &call, &cfg) {
        Ok(table) => Ok((
            table.iterations.len() as u64,
            store.remote_stats().since(&before),
        )),
        Err(e) if cancel.load(Ordering::SeqCst) => Err(format!("cancelled: {e}")),
        Err(e) => Err(fail(e.to_string())),
    }
}

/// The algorithm call a job names, checked against this binary's registry.
pub(crate) fn rebuild_call(job: &Job) -> Result<AlgoCall, String> {
    let spec = exec::algorithms::REGISTRY
        .get(&job.algorithm)
        .ok_or_else(|| {
            format!(
                "this compute node does not know algorithm `{}`",
                job.algorithm
            )
        })?;
    let mut call = AlgoCall::new(spec).with_source(job.source);
    for (name, value) in &job.params {
        if !spec.params.iter().any(|p| p.name == name) {
            return Err(format!("`{}` has no parameter `{name}`", job.algorithm));
        }
        call = match value {
            JobValue::Int(n) => call.with(name, *n),
            JobValue::Float(x) => call.with(name, *x),
        };
    }
    Ok(call)
}

/// A job's view of an algorithm call.
pub(crate) fn call_params(call: &AlgoCall) -> Vec<(String, JobValue)> {
    call.params()
        .map(|(n, v)| {
            let v = match v {
                planner::registry::ParamValue::Int(i) => JobValue::Int(i),
                planner::registry::ParamValue::Float(x) => JobValue::Float(x),
            };
            (n.to_string(), v)
        })
        .collect()
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    [Mode::Auto, Mode::Push, Mode::Block, Mode::Pull]
        .into_iter()
        .find(|m| m.name() == s)
        .ok_or_else(|| format!("unknown mode `{s}`"))
}

fn parse_dm_update(s: &str) -> Result<DmUpdate, String> {
    [
        DmUpdate::Auto,
        DmUpdate::Direct,
        DmUpdate::ValRd,
        DmUpdate::RefRd,
    ]
    .into_iter()
    .find(|u| u.name() == s)
    .ok_or_else(|| format!("unknown dm_update `{s}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_survives_the_trip_through_a_job() {
        let spec = exec::algorithms::REGISTRY.get("pagerank").unwrap();
        let call = AlgoCall::new(spec).with("iter", 7u64).with("damping", 0.5);
        let job = Job {
            memory_nodes: vec![],
            memory_token: "t".into(),
            transport: "tcp".into(),
            graph: "g".into(),
            descriptor: storage::dm::GlobalAddr::from_raw(0),
            region: storage::dm::JobRegion {
                addr: storage::dm::GlobalAddr::from_raw(0),
                size: 1,
                slot_words: 1,
            },
            rank: 0,
            owned: 0..0,
            algorithm: "pagerank".into(),
            source: call.source,
            params: call_params(&call),
            threads: 1,
            mode: "auto".into(),
            dm_update: "auto".into(),
            cn_cache: 1,
            segmented_pull: false,
        };
        let back = rebuild_call(&job).unwrap();
        assert_eq!(back.int("iter"), 7);
        assert_eq!(back.float("damping"), 0.5);
        assert_eq!(back.params().count(), call.params().count());
        assert!(rebuild_call(&Job {
            algorithm: "nosuch".into(),
            ..job.clone()
        })
        .is_err());
        assert!(rebuild_call(&Job {
            params: vec![("bogus".into(), JobValue::Int(1))],
            ..job
        })
        .is_err());
        assert!(parse_mode("pull").is_ok() && parse_mode("x").is_err());
        assert!(parse_dm_update("valrd").is_ok() && parse_dm_update("x").is_err());
    }
}
