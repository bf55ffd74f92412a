//! PROFILE's remote columns (round trips, remote operations, bytes sent) come from the store's
//! remote memory, whatever the store: a test store with remote memory on in-process nodes counts
//! its state traffic per iteration, and a store without remote memory counts none.

mod common;

use common::{f64_col, hub_graph, u64_col};
use exec::algorithms::call;
use exec::testing::VecGraph;
use exec::{run, RunConfig};
use planner::{AlgoCall, DmUpdate};
use storage::{GraphStore, RemoteTraffic};

fn calls() -> Vec<AlgoCall> {
    vec![
        call("bfs").from(0),
        call("sssp").from(0),
        call("wcc"),
        call("pagerank").with("iter", 3u64),
    ]
}

fn graph() -> VecGraph {
    let (ids, edges) = hub_graph(6000, 3);
    VecGraph::new(ids, edges, true, None)
}

/// The iterations' remote columns, summed.
fn summed(t: &exec::ResultTable) -> RemoteTraffic {
    t.iterations
        .iter()
        .fold(RemoteTraffic::default(), |s, i| RemoteTraffic {
            round_trips: s.round_trips + i.round_trips,
            remote_ops: s.remote_ops + i.remote_ops,
            bytes_sent: s.bytes_sent + i.bytes_sent,
        })
}

#[test]
fn remote_state_traffic_is_counted_per_iteration() {
    let g = graph().with_remote_memory(0);
    let memory = g
        .remote_memory()
        .expect("the test store offers remote memory");
    for c in calls() {
        let before = memory.traffic();
        let t = run(&g, &c, &RunConfig::with_threads(2)).unwrap();
        let whole_run = memory.traffic().since(&before);
        let iterations = summed(&t);
        assert!(
            iterations.round_trips > 0 && iterations.bytes_sent > 0,
            "{}: {iterations:?}",
            c.spec.name
        );
        assert!(iterations.remote_ops >= iterations.round_trips);
        // Allocation and the final read-back fall outside every iteration.
        assert!(
            iterations.round_trips <= whole_run.round_trips
                && iterations.remote_ops <= whole_run.remote_ops
                && iterations.bytes_sent <= whole_run.bytes_sent,
            "{}: iterations {iterations:?}, whole run {whole_run:?}",
            c.spec.name
        );
    }
}

#[test]
fn local_state_has_no_remote_traffic() {
    let g = graph();
    assert!(g.remote_memory().is_none());
    for c in calls() {
        let t = run(&g, &c, &RunConfig::with_threads(2)).unwrap();
        assert!(!t.iterations.is_empty(), "{}", c.spec.name);
        assert_eq!(summed(&t), RemoteTraffic::default(), "{}", c.spec.name);
    }
}

/// A graph of 20,000 vertices with ~100,000 random edges and a few hubs.
fn larger_graph() -> VecGraph {
    let (ids, edges) = hub_graph(20_000, 7);
    let mut edges = edges;
    let mut x = 12345u64;
    for _ in 0..60_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let (u, v) = ((x >> 33) % 20_000, (x >> 13) % 20_000);
        edges.push((ids[u as usize], ids[v as usize]));
    }
    edges.sort_unstable();
    edges.dedup();
    edges.retain(|e| e.0 != e.1);
    VecGraph::new(ids, edges, true, None)
}

/// Collaborative update combines each iteration's updates per destination on the compute
/// node: remote PageRank and WCC cost at most 0.05 round trips per active vertex (counted, not
/// timed), where one direct remote update per buffer of edges costs far more.
#[test]
fn collaborative_rounds_cost_o_of_v_round_trips() {
    let g = larger_graph().with_remote_memory(16);
    for c in [call("pagerank").with("iter", 4u64), call("wcc")] {
        let name = c.spec.name;
        let auto = run(&g, &c, &RunConfig::with_threads(2)).unwrap();
        let collaborative: Vec<_> = auto
            .iterations
            .iter()
            .filter(|i| i.strategy == "remote valrd")
            .collect();
        assert!(!collaborative.is_empty(), "{name}: {:?}", auto.iterations);
        let (trips, active) = auto
            .iterations
            .iter()
            .fold((0, 0), |(t, a), i| (t + i.round_trips, a + i.active));
        assert!(
            trips as f64 <= 0.05 * active as f64,
            "{name}: {trips} round trips for {active} active vertices: {:?}",
            auto.iterations
        );
        for i in &collaborative {
            assert!(
                i.round_trips as f64 <= 0.05 * i.active as f64,
                "{name}: {i:?}"
            );
        }
        let direct = RunConfig {
            dm_update: DmUpdate::Direct,
            ..RunConfig::with_threads(2)
        };
        let forced = run(&g, &c, &direct).unwrap();
        assert!(forced
            .iterations
            .iter()
            .all(|i| i.strategy == "remote direct"));
        let direct_trips: u64 = forced.iterations.iter().map(|i| i.round_trips).sum();
        assert!(
            direct_trips > 4 * trips,
            "{name}: direct {direct_trips} vs collaborative {trips} round trips"
        );
    }
}

/// Every forced strategy gives the local-state answer on a graph with hubs and lists long
/// enough for references (RefRD); one window (20,000 vertices).
#[test]
fn every_update_strategy_matches_local_state() {
    let local = larger_graph();
    let remote = larger_graph().with_remote_memory(16);
    let cases = [
        (call("pagerank").with("iter", 3u64), "rank"),
        (call("wcc"), "component"),
        (call("sssp").from(0), "distance"),
        (call("kcore"), "core"),
    ];
    for (c, column) in cases {
        let name = c.spec.name;
        let want = run(&local, &c, &RunConfig::with_threads(2)).unwrap();
        for dm_update in [
            DmUpdate::Auto,
            DmUpdate::Direct,
            DmUpdate::ValRd,
            DmUpdate::RefRd,
        ] {
            let cfg = RunConfig {
                dm_update,
                ..RunConfig::with_threads(2)
            };
            let got = run(&remote, &c, &cfg).unwrap();
            if matches!(name, "pagerank" | "sssp") {
                // Sums are added in another order: equal to rounding.
                for (p, q) in f64_col(&got, column).iter().zip(f64_col(&want, column)) {
                    let (p, q) = (p.unwrap_or(-1.0), q.unwrap_or(-1.0));
                    let close = (p - q).abs() <= 1e-12 * p.abs().max(q.abs()).max(1e-300);
                    assert!(close, "{name} {dm_update:?}: {p} vs {q}");
                }
            } else {
                assert_eq!(
                    u64_col(&got, column),
                    u64_col(&want, column),
                    "{name} {dm_update:?}"
                );
            }
        }
    }
}

/// A graph of 140,000 vertices spans three windows (at least 65,536 vertices each): updates
/// are bucketed per window, each window's mail is applied by its owner, and the answers equal
/// local state's under both collaborative strategies.
#[test]
fn several_windows_match_local_state() {
    let (ids, edges) = hub_graph(140_000, 11);
    let local = VecGraph::new(ids.clone(), edges.clone(), true, None);
    let remote = VecGraph::new(ids, edges, true, None).with_remote_memory(16);
    for dm_update in [DmUpdate::ValRd, DmUpdate::RefRd] {
        let cfg = RunConfig {
            dm_update,
            ..RunConfig::with_threads(2)
        };
        let c = call("wcc");
        let got = run(&remote, &c, &cfg).unwrap();
        let want = run(&local, &c, &RunConfig::with_threads(2)).unwrap();
        assert_eq!(u64_col(&got, "component"), u64_col(&want, "component"));
        let c = call("pagerank").with("iter", 2u64);
        let got = run(&remote, &c, &cfg).unwrap();
        let want = run(&local, &c, &RunConfig::with_threads(2)).unwrap();
        for (p, q) in f64_col(&got, "rank").iter().zip(f64_col(&want, "rank")) {
            let (p, q) = (p.unwrap_or(-1.0), q.unwrap_or(-1.0));
            assert!(
                (p - q).abs() <= 1e-12 * p.abs().max(q.abs()),
                "{dm_update:?}: {p} vs {q}"
            );
        }
    }
}
