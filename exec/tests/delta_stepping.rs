//! Delta-stepping SSSP (in memory, `auto`): exact distances whatever the weights, negative
//! weights found on the way rather than by a pass over all weights first, and a worker's own
//! entries for the current bin relaxed in the same round (bucket fusion).

mod common;

use common::f64_col;
use exec::algorithms::call;
use exec::testing::VecGraph;
use exec::{run, ResultTable, RunConfig};
use planner::registry::Operator;
use planner::Mode;

fn sssp(g: &VecGraph, source: u32, threads: usize) -> ResultTable {
    let cfg = RunConfig {
        mode: Mode::Auto,
        ..RunConfig::with_threads(threads)
    };
    run(g, &call("sssp").from(source), &cfg).unwrap()
}

/// Directed graph on ids `0..n` with the given weighted edges.
fn weighted(n: u64, edges: &[(u64, u64, f64)]) -> VecGraph {
    VecGraph::new(
        (0..n).collect(),
        edges.iter().map(|&(u, v, _)| (u, v)).collect(),
        true,
        Some(edges.iter().map(|e| e.2).collect()),
    )
}

/// A reachable negative weight is caught during the run; Bellman-Ford then gives the exact
/// distances.
#[test]
fn a_reachable_negative_weight_hands_over_to_bellman_ford() {
    // 0 -> 1 -> 2 costs 4 - 3 = 1, less than the direct edge 0 -> 2 of weight 2.
    let g = weighted(4, &[(0, 1, 4.0), (1, 2, -3.0), (0, 2, 2.0), (2, 3, 1.0)]);
    for threads in [1, 2] {
        let t = sssp(&g, 0, threads);
        assert_eq!(
            f64_col(&t, "distance"),
            vec![Some(0.0), Some(4.0), Some(1.0), Some(2.0)]
        );
        assert!(
            t.operators.contains(&Operator::EdgeMap),
            "{:?}",
            t.operators
        );
    }
}

/// A negative weight the search never reaches does not matter to the distances, so it does
/// not cost the run its delta-stepping.
#[test]
fn an_unreachable_negative_weight_keeps_delta_stepping() {
    let g = weighted(5, &[(0, 1, 2.0), (1, 2, 3.0), (3, 4, -1.0), (4, 0, 1.0)]);
    for threads in [1, 2] {
        let t = sssp(&g, 0, threads);
        assert_eq!(
            f64_col(&t, "distance"),
            vec![Some(0.0), Some(2.0), Some(5.0), None, None]
        );
        assert_eq!(t.operators, vec![Operator::DeltaStepping]);
    }
}

/// A chain of zero-weight edges stays in bin 0 all along: one worker relaxes it in one round
/// rather than one round (and one barrier across the workers) per vertex.
#[test]
fn a_workers_own_entries_for_the_current_bin_are_relaxed_in_the_same_round() {
    let n = 50u64;
    let chain: Vec<(u64, u64, f64)> = (0..n - 1).map(|v| (v, v + 1, 0.0)).collect();
    let g = weighted(n, &chain);
    let t = sssp(&g, 0, 1);
    assert_eq!(f64_col(&t, "distance"), vec![Some(0.0); n as usize]);
    assert_eq!(t.operators, vec![Operator::DeltaStepping]);
    assert_eq!(t.iterations.len(), 1, "{:?}", t.iterations);
    assert_eq!(t.iterations[0].active, n);
    assert_eq!(t.iterations[0].edges, n - 1);
}

/// Distances by Dijkstra, for comparison (unreachable: `None`).
fn dijkstra(n: usize, edges: &[(u64, u64, f64)], source: usize) -> Vec<Option<f64>> {
    let mut out: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for &(u, v, w) in edges {
        out[u as usize].push((v as usize, w));
    }
    let mut dist = vec![f64::INFINITY; n];
    let mut done = vec![false; n];
    dist[source] = 0.0;
    for _ in 0..n {
        let Some(u) = (0..n)
            .filter(|&v| !done[v] && dist[v].is_finite())
            .min_by(|&a, &b| dist[a].total_cmp(&dist[b]))
        else {
            break;
        };
        done[u] = true;
        for &(v, w) in &out[u] {
            dist[v] = dist[v].min(dist[u] + w);
        }
    }
    dist.into_iter()
        .map(|d| d.is_finite().then_some(d))
        .collect()
}

/// Whole-number weights (distances kept as 4-byte integers), fractional ones (f64) and
/// unweighted edges (integers again) all give Dijkstra's distances.
#[test]
fn whole_fractional_and_unit_weights_give_exact_distances() {
    let mut rng = exec::rng::Xoshiro256::for_stream(31, 0);
    let n = 400u64;
    let pairs: Vec<(u64, u64)> = (0..3000)
        .map(|_| (rng.below(n), rng.below(n)))
        .filter(|(u, v)| u != v)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let whole: Vec<(u64, u64, f64)> = pairs
        .iter()
        .map(|&(u, v)| (u, v, rng.below(256) as f64))
        .collect();
    let fractional: Vec<(u64, u64, f64)> = whole.iter().map(|&(u, v, w)| (u, v, w + 0.1)).collect();
    let unit: Vec<(u64, u64, f64)> = pairs.iter().map(|&(u, v)| (u, v, 1.0)).collect();
    for edges in [&whole, &fractional] {
        let g = weighted(n, edges);
        for threads in [1, 2, 3] {
            let t = sssp(&g, 0, threads);
            assert_eq!(f64_col(&t, "distance"), dijkstra(n as usize, edges, 0));
            assert_eq!(t.operators, vec![Operator::DeltaStepping]);
        }
    }
    let g = VecGraph::new((0..n).collect(), pairs.clone(), true, None);
    let t = sssp(&g, 0, 2);
    assert_eq!(f64_col(&t, "distance"), dijkstra(n as usize, &unit, 0));
}

/// Whole weights whose paths could pass `u32::MAX` keep f64 distances: a chain of 300 edges of
/// weight 2^24 ends at 299 · 2^24, past what four bytes hold.
#[test]
fn whole_weights_too_large_for_four_bytes_keep_f64_distances() {
    let n = 300u64;
    let heavy = 16_777_216.0;
    let chain: Vec<(u64, u64, f64)> = (0..n - 1).map(|v| (v, v + 1, heavy)).collect();
    let g = weighted(n, &chain);
    let t = sssp(&g, 0, 2);
    let want: Vec<Option<f64>> = (0..n).map(|v| Some(v as f64 * heavy)).collect();
    assert_eq!(f64_col(&t, "distance"), want);
    assert_eq!(t.operators, vec![Operator::DeltaStepping]);
}

/// Out of core on a clustered graph SSSP spreads through blocks; a negative weight met on the
/// way is not followed there, and plain Bellman-Ford finishes from the spread's distances.
#[test]
fn a_negative_weight_met_while_spreading_gives_exact_distances() {
    // 40 vertices: a chain 0 -> ... -> 38 of weight 1 through blocks of 16; 39 hangs off 0
    // with weight 100 and off 20 with weight -5, so its distance is 15.
    let mut edges: Vec<(u64, u64, f64)> = (0..38).map(|v| (v, v + 1, 1.0)).collect();
    edges.push((0, 39, 100.0));
    edges.push((20, 39, -5.0));
    let g = weighted(40, &edges).with_csr(false).with_clustered(true);
    for threads in [1, 2] {
        let t = sssp(&g, 0, threads);
        let mut want: Vec<Option<f64>> = (0..39).map(|v| Some(v as f64)).collect();
        want.push(Some(15.0));
        assert_eq!(f64_col(&t, "distance"), want);
    }
    // A negative cycle is reported, not looped on.
    let mut cycle = edges.clone();
    cycle.push((35, 2, -40.0)); // 2 -> ... -> 35 -> 2 weighs 33 - 40
    let g = weighted(40, &cycle).with_csr(false).with_clustered(true);
    let cfg = RunConfig::with_threads(2);
    let err = run(&g, &call("sssp").from(0), &cfg).unwrap_err();
    assert!(err.to_string().contains("negative-weight cycle"), "{err}");
}
