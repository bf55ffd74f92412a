//! k-core's bucketed peeling over cores that span several ranges of open buckets: a clique of
//! 300 vertices (core 299), a clique of 140 sharing ten of them, a wheel and paths, directed
//! and undirected, with local and remote state, checked against sequential peeling.

use exec::algorithms::{call, verify};
use exec::testing::VecGraph;
use exec::{run, RunConfig};
use planner::Mode;

mod common;
use common::u64_col;

fn clique(members: impl Iterator<Item = u64> + Clone, edges: &mut Vec<(u64, u64)>) {
    for a in members.clone() {
        for b in members.clone() {
            if a < b {
                edges.push((a, b));
            }
        }
    }
}

fn graph(directed: bool) -> (Vec<u64>, Vec<(u64, u64)>) {
    let mut edges = Vec::new();
    clique(0..300, &mut edges);
    clique(290..430, &mut edges);
    // A wheel: hub 500, rim 501..=540.
    for v in 501..=540u64 {
        edges.push((500, v));
        edges.push((v, if v == 540 { 501 } else { v + 1 }));
    }
    // A path hanging off the big clique, and a self-loop that must not count.
    for v in 600..650u64 {
        edges.push((v, v + 1));
    }
    edges.push((650, 0));
    edges.push((600, 600));
    if directed {
        // Opposite arcs count twice on a directed graph: 0 and 1 have degree 300.
        edges.push((1, 0));
    }
    ((0..700).collect(), edges)
}

#[test]
fn cores_beyond_one_range_of_buckets_match_sequential_peeling() {
    for directed in [false, true] {
        let (ids, edges) = graph(directed);
        for remote in [false, true] {
            for (mode, threads) in [(Mode::Auto, 2), (Mode::Push, 1), (Mode::Pull, 2)] {
                let g = VecGraph::new(ids.clone(), edges.clone(), directed, None);
                let g = if remote { g.with_remote_memory(0) } else { g };
                let cfg = RunConfig {
                    mode,
                    ..RunConfig::with_threads(threads)
                };
                let c = call("kcore");
                let t = run(&g, &c, &cfg).unwrap();
                let what = format!("directed {directed} remote {remote} {mode:?} {threads}");
                verify(&g, &c, &t).unwrap_or_else(|e| panic!("{what}: {e}"));
                let core = u64_col(&t, "core");
                assert_eq!(core[5], Some(299), "{what}");
                assert_eq!(core[350], Some(139), "{what}");
                assert_eq!(core[500], Some(3), "{what}");
                assert_eq!(core[699], Some(0), "{what}");
            }
        }
    }
}
