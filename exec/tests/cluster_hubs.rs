//! Hub re-scheduling across compute nodes: members as threads over in-process memory nodes,
//! on a graph whose hubs (degree > 1024) all lie in member 0's owned range. The first round
//! that reaches a hub makes member 0 the straggler; from the next round on its hubs are dealt
//! out, so the members' edges balance within the limit, and every member still computes the
//! in-memory result.

mod common;

use std::ops::Range;

use common::members::{same_result, GraphData, Split};
use common::Lcg;
use exec::algorithms::call;
use exec::testing::VecGraph;
use exec::{run, ResultTable, RunConfig};
use planner::{AlgoCall, DmUpdate};

/// The limit of `exec::cluster::hubs`: busiest member's edges over the mean.
const LIMIT: f64 = 1.2;

/// `hubs` stars (centres `0..hubs`, `leaves` distinct leaves each, drawn from all of `0..n`)
/// over a ring through every vertex; weighted.
fn stars_and_ring(n: u64, hubs: u64, leaves: u64, directed: bool) -> GraphData {
    let ids: Vec<u64> = (0..n).map(|i| 3 * i + 1).collect();
    let mut rng = Lcg(17);
    let mut edges = std::collections::BTreeSet::new();
    for h in 0..hubs {
        let mut picked = std::collections::BTreeSet::new();
        while (picked.len() as u64) < leaves {
            let v = hubs + rng.below(n - hubs);
            picked.insert(v);
        }
        edges.extend(picked.into_iter().map(|v| (h, v)));
    }
    for v in 0..n {
        edges.insert((v, (v + 1) % n));
    }
    if !directed {
        let sym: Vec<_> = edges.iter().map(|&(u, v)| (u.min(v), u.max(v))).collect();
        edges = sym.into_iter().collect();
    }
    let edges: Vec<(u64, u64)> = edges
        .into_iter()
        .map(|(u, v)| (ids[u as usize], ids[v as usize]))
        .collect();
    let weights = (0..edges.len())
        .map(|_| 1.0 + rng.below(7) as f64 / 2.0)
        .collect();
    (ids, edges, weights)
}

/// Equal vertex ranges: the hubs, the lowest ids, all fall in member 0's.
fn equal_ranges(n: u32, members: usize) -> Vec<Range<u32>> {
    let p = members as u32;
    (0..p).map(|k| n * k / p..n * (k + 1) / p).collect()
}

fn run_members(
    data: &GraphData,
    directed: bool,
    members: usize,
    c: &AlgoCall,
    dm_update: DmUpdate,
) -> Vec<ResultTable> {
    let split = Split {
        data,
        directed,
        budget: 16,
        owned: equal_ranges(data.0.len() as u32, members),
        dm_update,
    };
    split
        .run(c, &|_, c| c)
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("{}: {e}", c.spec.name))
}

/// The members' iterations: the first that reached a hub was over the limit; from the next
/// one on the hubs are dealt out and every iteration that deals them is within the limit.
fn rebalanced(got: &ResultTable, what: &str) {
    let its = &got.iterations;
    let first = its
        .iter()
        .position(|it| it.edge_imbalance().is_some_and(|x| x > LIMIT))
        .unwrap_or_else(|| panic!("{what}: no iteration over the limit: {its:#?}"));
    assert_eq!(its[first].hubs_dealt, 0, "{what}: nothing dealt before");
    let after: Vec<_> = its[first + 1..]
        .iter()
        .filter(|it| it.hubs_dealt > 0)
        .collect();
    assert!(!after.is_empty(), "{what}: no hub was dealt out: {its:#?}");
    for it in after {
        let x = it.edge_imbalance().unwrap();
        assert!(
            x <= LIMIT,
            "{what}: iteration {} dealt {} hubs and is still {x:.2} (edges {:?})",
            it.iteration,
            it.hubs_dealt,
            it.member_edges
        );
    }
    assert!(
        its[..=first].iter().all(|it| it.hubs_dealt == 0),
        "{what}: hubs are dealt only after an iteration over the limit"
    );
}

fn calls() -> Vec<AlgoCall> {
    vec![
        call("bfs").from(0),
        call("sssp").from(0),
        call("wcc"),
        call("pagerank").with("iter", 4u64),
        call("pagerank").with("iter", 3u64).with("weights", 1u64),
    ]
}

fn hubs_are_dealt_out(directed: bool, dm_update: DmUpdate) {
    let data = stars_and_ring(4000, 3, 2000, directed);
    let local = VecGraph::new(
        data.0.clone(),
        data.1.clone(),
        directed,
        Some(data.2.clone()),
    );
    for c in calls() {
        let name = c.spec.name;
        let want = run(&local, &c, &RunConfig::with_threads(2)).unwrap();
        for members in [2, 3] {
            let what = format!(
                "{name}, directed {directed}, {members} members, dm_update {}",
                dm_update.name()
            );
            let outcomes = run_members(&data, directed, members, &c, dm_update);
            same_result(name, &outcomes[0], &want, &what);
            let figures = |t: &ResultTable| -> Vec<_> {
                t.iterations
                    .iter()
                    .map(|it| (it.edges, it.member_edges.clone(), it.hubs_dealt))
                    .collect()
            };
            for (rank, got) in outcomes.iter().enumerate() {
                // Every member decides the same from the same figures.
                assert_eq!(
                    figures(got),
                    figures(&outcomes[0]),
                    "{what}: member {rank} saw other figures"
                );
            }
            rebalanced(&outcomes[0], &what);
        }
    }
}

#[test]
fn hubs_are_dealt_out_with_direct_updates() {
    hubs_are_dealt_out(false, DmUpdate::Direct);
    hubs_are_dealt_out(true, DmUpdate::Direct);
}

#[test]
fn hubs_are_dealt_out_in_collaborative_rounds() {
    hubs_are_dealt_out(false, DmUpdate::ValRd);
    hubs_are_dealt_out(true, DmUpdate::RefRd);
}

/// Without hubs nothing is dealt out, however uneven the members' edges.
#[test]
fn no_hub_no_deal() {
    let data = stars_and_ring(3000, 2, 900, false);
    for c in [call("bfs").from(0), call("pagerank").with("iter", 3u64)] {
        for got in run_members(&data, false, 2, &c, DmUpdate::Direct) {
            assert!(
                got.iterations.iter().all(|it| it.hubs_dealt == 0),
                "{}: {:#?}",
                c.spec.name,
                got.iterations
            );
        }
    }
}
