//! Micro-benchmark of the disaggregated-memory transports: operations/s and payload bytes/s per
//! verb and batch size, in-process and over TCP loopback (one thread with batches pipelined), then
//! several threads sharing one multiplexed connection against one connection per thread.
//! Also prints what the cost model says the same counted work would take on a 100 Gb/s RDMA network.
//!
//! Run: `cargo run --release -p storage --example dm_bench [-- --secs 0.3]`

use base::Xoshiro256;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use storage::dm::{
    spawn_memnode_for_tests, Batch, CostModel, GlobalAddr, InProcTransport, MemoryNode, TcpOptions,
    TcpTransport, Transport,
};

const TOKEN: &str = "bench";
const REGION: u64 = 64 << 20;

#[derive(Clone, Copy)]
enum Kind {
    Read(u32),
    Write(u32),
    Cas,
    Faa,
}

impl Kind {
    fn name(self) -> String {
        match self {
            Kind::Read(n) => format!("READ {n} B"),
            Kind::Write(n) => format!("WRITE {n} B"),
            Kind::Cas => "CAS".into(),
            Kind::Faa => "FAA".into(),
        }
    }
    fn payload(self) -> u64 {
        match self {
            Kind::Read(n) | Kind::Write(n) => n as u64,
            Kind::Cas | Kind::Faa => 8,
        }
    }
}

fn make_batch(kind: Kind, n: usize, base: GlobalAddr, rng: &mut Xoshiro256) -> Batch {
    let mut b = Batch::new();
    for _ in 0..n {
        let span = REGION - 8192;
        let off = (rng.next_u64() % span) & !63;
        let a = base.checked_add(off).unwrap();
        match kind {
            Kind::Read(len) => b.read(a, len),
            Kind::Write(len) => b.write(a, vec![0xAB; len as usize]),
            Kind::Cas => b.cas(a, 0, 0),
            Kind::Faa => b.faa(a, 1),
        };
    }
    b
}

/// Runs batches for `secs` with `depth` batches in flight; returns verbs done and elapsed.
fn drive(
    t: &dyn Transport,
    kind: Kind,
    batch: usize,
    depth: usize,
    base: GlobalAddr,
    secs: f64,
    seed: u64,
) -> (u64, Duration) {
    let mut rng = Xoshiro256::new(seed);
    let start = Instant::now();
    let stop = start + Duration::from_secs_f64(secs);
    let mut q = VecDeque::new();
    let mut done = 0u64;
    loop {
        while q.len() < depth && Instant::now() < stop {
            q.push_back(
                t.submit_batch(make_batch(kind, batch, base, &mut rng))
                    .unwrap(),
            );
        }
        match q.pop_front() {
            Some(tk) => {
                tk.wait_batch().unwrap();
                done += batch as u64;
            }
            None => break,
        }
    }
    (done, start.elapsed())
}

fn fmt_rate(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn main() {
    let secs: f64 = std::env::args()
        .skip_while(|a| a != "--secs")
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.3);
    let node = spawn_memnode_for_tests(1, 2 * REGION, TOKEN).expect("memnode");
    let tcp = TcpTransport::connect(node.addr(), TOKEN, TcpOptions::default()).expect("connect");
    let tbase = tcp.alloc(REGION).unwrap();
    let inproc = InProcTransport::new(Arc::new(MemoryNode::new(1, REGION)));
    let ibase = inproc.alloc(REGION).unwrap();
    let model = CostModel::default();

    println!("### Per verb and batch size (1 thread; TCP keeps 8 batches in flight)\n");
    println!("| verb | batch | in-process ops/s | in-process B/s | TCP ops/s | TCP B/s | TCP / in-process | RDMA model ops/s |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let kinds = [
        Kind::Read(32),
        Kind::Read(256),
        Kind::Read(4096),
        Kind::Write(32),
        Kind::Write(256),
        Kind::Cas,
        Kind::Faa,
    ];
    for kind in kinds {
        for batch in [1usize, 8, 32, 128] {
            let (ni, ei) = drive(&inproc, kind, batch, 1, ibase, secs, 7);
            let before = tcp.stats();
            let (nt, et) = drive(&tcp, kind, batch, 8, tbase, secs, 7);
            let counted = tcp.stats().since(&before);
            let ri = ni as f64 / ei.as_secs_f64();
            let rt = nt as f64 / et.as_secs_f64();
            let modeled = nt as f64 / model.estimate(&counted, 8).as_secs_f64();
            println!(
                "| {} | {batch} | {} | {} | {} | {} | {:.3} | {} |",
                kind.name(),
                fmt_rate(ri),
                fmt_rate(ri * kind.payload() as f64),
                fmt_rate(rt),
                fmt_rate(rt * kind.payload() as f64),
                rt / ri,
                fmt_rate(modeled),
            );
        }
    }

    println!("\n### Pipelining (TCP, READ 32 B, batch 8, 1 thread)\n");
    println!("| batches in flight | ops/s | vs 1 in flight |");
    println!("|---:|---:|---:|");
    let mut base_rate = 0.0;
    for depth in [1usize, 2, 8, 32] {
        let (n, e) = drive(&tcp, Kind::Read(32), 8, depth, tbase, secs, 11);
        let r = n as f64 / e.as_secs_f64();
        if depth == 1 {
            base_rate = r;
        }
        println!("| {depth} | {} | {:.2} |", fmt_rate(r), r / base_rate);
    }

    println!("\n### Threads: one multiplexed connection vs one connection per thread (READ 32 B, batch 8, 4 in flight per thread)\n");
    println!(
        "| threads | shared connection ops/s | connection per thread ops/s | per-thread / shared |"
    );
    println!("|---:|---:|---:|---:|");
    let shared =
        Arc::new(TcpTransport::connect(node.addr(), TOKEN, TcpOptions::default()).unwrap());
    for threads in [1usize, 2, 4] {
        let run = |per_thread: bool| -> f64 {
            let hs: Vec<_> = (0..threads)
                .map(|k| {
                    let t: Arc<dyn Transport> = if per_thread {
                        Arc::new(
                            TcpTransport::connect(node.addr(), TOKEN, TcpOptions::default())
                                .unwrap(),
                        )
                    } else {
                        shared.clone()
                    };
                    std::thread::spawn(move || {
                        drive(&*t, Kind::Read(32), 8, 4, tbase, secs, 100 + k as u64)
                    })
                })
                .collect();
            let mut total = 0.0;
            for h in hs {
                let (n, e) = h.join().unwrap();
                total += n as f64 / e.as_secs_f64();
            }
            total
        };
        let s = run(false);
        let p = run(true);
        println!(
            "| {threads} | {} | {} | {:.2} |",
            fmt_rate(s),
            fmt_rate(p),
            p / s
        );
    }
    drop(shared);
    drop(tcp);
    node.shutdown();
}
