//! PROFILE's remote columns (round trips, remote operations, bytes sent) come from the store's
//! remote memory, whatever the store: a test store with remote memory on in-process nodes counts
//! its state traffic per iteration, and a store without remote memory counts none.

mod common;

use common::hub_graph;
use exec::algorithms::call;
use exec::testing::VecGraph;
use exec::{run, RunConfig};
use planner::AlgoCall;
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
