//! Leiden on graphs with planted communities: one partition for a SEED whatever the thread
//! count, the CSR view or remote state; every community connected (the verifier checks it,
//! with the modularity reported); and a modularity no worse than Louvain's.

mod common;

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use common::{u64_col, Lcg};
use exec::algorithms::{call, verify};
use exec::result::SummaryValue;
use exec::testing::VecGraph;
use exec::{run, ResultTable, RunConfig};
use planner::AlgoCall;

/// `n` vertices in groups of `group`, `4n` weighted edges of which one in `noise` joins two
/// random vertices, the others two vertices of one group; `directed` or not.
fn planted(n: u64, group: u64, noise: u64, directed: bool, seed: u64) -> VecGraph {
    let mut rng = Lcg(seed);
    let mut edges = Vec::new();
    let mut weights = Vec::new();
    for _ in 0..4 * n {
        let a = rng.below(n);
        let b = if rng.below(noise) == 0 {
            rng.below(n)
        } else {
            let first = a / group * group;
            first + rng.below(group.min(n - first))
        };
        if a != b {
            edges.push((3 * a + 1, 3 * b + 1));
            weights.push(1.0 + rng.below(3) as f64);
        }
    }
    let ids = (0..n).map(|v| 3 * v + 1).collect();
    VecGraph::new(ids, edges, directed, Some(weights))
}

fn go(g: &VecGraph, c: &AlgoCall, threads: usize) -> ResultTable {
    run(g, c, &RunConfig::with_threads(threads)).unwrap()
}

fn modularity(t: &ResultTable) -> f64 {
    match t.summaries.iter().find(|s| s.name == "modularity") {
        Some(s) => match s.value {
            SummaryValue::Float64(q) => q,
            _ => panic!("modularity is no float"),
        },
        None => panic!("no modularity"),
    }
}

#[test]
fn one_partition_for_a_seed_on_any_threads_and_store_every_community_connected() {
    for (directed, seed) in [(true, 1), (false, 2)] {
        let g = planted(6000, 20, 3, directed, seed);
        let leiden = call("leiden").with("seed", 5u64);
        let first = go(&g, &leiden, 1);
        verify(&g, &leiden, &first).unwrap();
        let want = u64_col(&first, "community");
        for threads in [2, 3] {
            let t = go(&g, &leiden, threads);
            assert_eq!(u64_col(&t, "community"), want, "{threads} threads");
            assert_eq!(modularity(&t).to_bits(), modularity(&first).to_bits());
        }
        for g in [
            planted(6000, 20, 3, directed, seed).with_csr(false),
            planted(6000, 20, 3, directed, seed).with_remote_memory(0),
        ] {
            let t = go(&g, &leiden, 2);
            assert_eq!(u64_col(&t, "community"), want, "another store");
        }
        // Another seed: another visiting order, still a connected partition.
        let other = call("leiden").with("seed", 9u64).with("resolution", 0.5);
        verify(&g, &other, &go(&g, &other, 3)).unwrap();
    }
}

#[test]
fn modularity_is_no_worse_than_louvains_on_planted_communities() {
    for (directed, seed, group) in [(false, 3, 12), (true, 4, 30), (false, 5, 50)] {
        let g = planted(4000, group, 4, directed, seed);
        for s in 0..3u64 {
            let louvain = modularity(&go(&g, &call("louvain").with("seed", s), 2));
            let leiden = modularity(&go(&g, &call("leiden").with("seed", s), 2));
            assert!(
                leiden >= louvain - 0.005,
                "groups of {group}, seed {s}: leiden {leiden}, louvain {louvain}"
            );
        }
    }
}

#[test]
fn the_verifier_refuses_a_community_in_two_pieces() {
    // Two triangles apart: Leiden finds each; rows putting both in one community (modularity 0,
    // reported as such) are a Louvain partition, not a Leiden one.
    let edges = vec![(1, 2), (2, 3), (1, 3), (4, 5), (5, 6), (4, 6)];
    let g = VecGraph::new((1..=6).collect(), edges, false, None);
    let leiden = call("leiden");
    let mut t = go(&g, &leiden, 1);
    verify(&g, &leiden, &t).unwrap();
    assert_eq!(u64_col(&t, "community"), [0, 0, 0, 1, 1, 1].map(Some));
    let batch = &t.batches[0];
    let one = UInt64Array::from(vec![0u64; 6]);
    t.batches = vec![RecordBatch::try_new(
        batch.schema(),
        vec![batch.column(0).clone(), Arc::new(one) as ArrayRef],
    )
    .unwrap()];
    for s in &mut t.summaries {
        s.value = match s.name {
            "modularity" => SummaryValue::Float64(0.0),
            _ => SummaryValue::UInt64(1),
        };
    }
    verify(&g, &call("louvain"), &t).unwrap();
    let e = verify(&g, &leiden, &t).unwrap_err();
    assert!(e.contains("not connected"), "{e}");
}
