//! SCC trims chains instead of running one forward-backward round per vertex: on a directed path
//! every vertex is its own component, found by peeling, with work in proportion to the edges.

use exec::algorithms::call;
use exec::testing::VecGraph;
use exec::{run, RunConfig};

mod common;
use common::u64_col;

/// A directed path 0 → 1 → … → n-1, and a cycle of three hanging off its end (n-1 → n → n+1
/// → n-1), with local or remote state.
fn path_with_cycle(n: u64, remote: bool) -> VecGraph {
    let mut edges: Vec<(u64, u64)> = (0..n - 1).map(|v| (v, v + 1)).collect();
    edges.extend([(n - 1, n), (n, n + 1), (n + 1, n - 1)]);
    let g = VecGraph::new((0..n + 2).collect(), edges, true, None);
    if remote {
        g.with_remote_memory(0)
    } else {
        g
    }
}

#[test]
fn a_long_directed_path_is_trimmed_not_coloured_round_by_round() {
    let n = 10_000u64;
    for remote in [false, true] {
        let g = path_with_cycle(n, remote);
        let t = run(&g, &call("scc"), &RunConfig::with_threads(2)).unwrap();
        let component = u64_col(&t, "component");
        let want: Vec<Option<u64>> = (0..n + 2).map(|v| Some(v.min(n - 1))).collect();
        assert_eq!(component, want, "remote {remote}");
        // Without trimming each of the n path vertices took a round of its own, each with
        // up to n EdgeMap iterations; trimming peels the path once, from its start, two
        // additions per vertex, and one round colours the cycle.
        let edges: u64 = t.iterations.iter().map(|i| i.edges).sum();
        let arcs = n + 2;
        assert!(
            t.iterations.len() as u64 <= 2 * n + 40,
            "{} iterations (remote {remote})",
            t.iterations.len()
        );
        assert!(
            edges <= 12 * arcs,
            "{edges} edges examined (remote {remote})"
        );
    }
}
