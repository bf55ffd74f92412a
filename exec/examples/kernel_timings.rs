//! In-memory kernel timings on a generated R-MAT graph (Graph500 parameters a=.57 b=.19
//! c=.19), through the test store's CSR view.
//!
//! `cargo run --release -p exec --example kernel_timings -- [scale] [edge_factor] [threads]`
//! (`KERNELS=Bfs,PageRank` to run only some).

use std::time::Instant;

use exec::algorithms::call;
use exec::testing::VecGraph;
use exec::{run, RunConfig};
use storage::{Direction, GraphStore};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let scale = args.first().copied().unwrap_or(20) as u32;
    let factor = args.get(1).copied().unwrap_or(8);
    let threads = args
        .get(2)
        .copied()
        .unwrap_or(exec::default_threads() as u64) as usize;
    let n = 1u64 << scale;
    let mut state = 0x1234_5678_u64;
    let mut rnd = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let t = Instant::now();
    let mut edges = Vec::with_capacity((n * factor) as usize);
    for _ in 0..n * factor {
        let (mut u, mut v) = (0u64, 0u64);
        for _ in 0..scale {
            let r = rnd();
            let (du, dv) = if r < 0.57 {
                (0, 0)
            } else if r < 0.76 {
                (0, 1)
            } else if r < 0.95 {
                (1, 0)
            } else {
                (1, 1)
            };
            u = u * 2 + du;
            v = v * 2 + dv;
        }
        if u != v {
            edges.push((u, v));
        }
    }
    edges.sort_unstable();
    edges.dedup();
    let g = VecGraph::new((0..n).collect(), edges, true, None);
    let shape = g.shape();
    println!(
        "R-MAT scale {scale}, |V| = {}, |E| = {} directed, threads {threads}; built in {:.1?}",
        shape.vertices,
        shape.edges,
        t.elapsed()
    );
    let source = (0..shape.vertices)
        .max_by_key(|&v| g.degree(Direction::Out, v))
        .unwrap_or(0);
    let cfg = RunConfig::with_threads(threads);
    let calls = [
        call("degree"),
        call("bfs").from(source),
        call("pagerank").with("iter", 20u64).with("damping", 0.85),
        call("wcc"),
        call("sssp").from(source),
        call("cdlp").with("iter", 10u64),
        call("lcc"),
        call("randomwalk")
            .with("walks", 100_000_u64)
            .with("length", 80u64)
            .with("seed", 0u64),
        call("dfs").from(source),
    ];
    // KERNELS=Lcc,Dfs runs only the calls whose name starts with one of those.
    let only: Option<Vec<String>> = std::env::var("KERNELS")
        .ok()
        .map(|k| k.split(',').map(str::to_string).collect());
    for call in &calls {
        let name = format!("{call:?}");
        if let Some(only) = &only {
            if !only.iter().any(|k| name.starts_with(k.as_str())) {
                continue;
            }
        }
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            let r = run(&g, call, &cfg).expect("run");
            let total = t.elapsed().as_secs_f64();
            best = best.min(r.algorithm_time.as_secs_f64());
            if best == r.algorithm_time.as_secs_f64() {
                let strategies: Vec<&str> = r.iterations.iter().map(|i| i.strategy).collect();
                println!(
                    "{:<60} algorithm {:>8.1} ms  (total {:>8.1} ms, {} iterations {})",
                    format!("{call:?}"),
                    best * 1e3,
                    total * 1e3,
                    r.iterations.len(),
                    if strategies.len() <= 12 {
                        strategies.join(",")
                    } else {
                        String::new()
                    }
                );
            }
        }
    }
}
