//! Louvain and Leiden on graphs large enough that the first level's chunks have their moves
//! proposed in parallel and later sweeps visit only the vertices near a move: one partition for
//! a SEED whatever the thread count or store, and a modularity at least that of the planted
//! groups (the partition a good run should find).

mod common;

use common::{u64_col, Lcg};
use exec::algorithms::{call, verify};
use exec::result::SummaryValue;
use exec::testing::VecGraph;
use exec::{run, ResultTable, RunConfig};
use planner::AlgoCall;

/// `n` vertices in groups of `group`: `degree · n / 2` edges, of which one in `noise` joins
/// two random vertices and the others two vertices of one group; weights 1 to 3. Returns the
/// graph and the modularity of the groups on its undirected view.
fn planted(n: u64, group: u64, degree: u64, noise: u64, seed: u64) -> (VecGraph, f64) {
    let mut rng = Lcg(seed);
    let mut edges = Vec::new();
    let mut weights = Vec::new();
    let (mut inside, mut tot) = (0.0, vec![0.0; n.div_ceil(group) as usize]);
    for _ in 0..degree * n / 2 {
        let a = rng.below(n);
        let b = if rng.below(noise) == 0 {
            rng.below(n)
        } else {
            let first = a / group * group;
            first + rng.below(group.min(n - first))
        };
        if a == b {
            continue;
        }
        let w = 1.0 + rng.below(3) as f64;
        edges.push((3 * a + 1, 3 * b + 1));
        weights.push(w);
        if a / group == b / group {
            inside += 2.0 * w;
        }
        tot[(a / group) as usize] += w;
        tot[(b / group) as usize] += w;
    }
    let m2: f64 = tot.iter().sum();
    let q = inside / m2 - tot.iter().map(|t| (t / m2) * (t / m2)).sum::<f64>();
    let ids = (0..n).map(|v| 3 * v + 1).collect();
    (VecGraph::new(ids, edges, false, Some(weights)), q)
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
fn one_partition_for_a_seed_on_one_two_and_three_threads_and_any_store() {
    let (g, _) = planted(20_000, 50, 12, 4, 1);
    for algorithm in ["louvain", "leiden"] {
        for seed in [0u64, 7] {
            let c = call(algorithm).with("seed", seed);
            let first = go(&g, &c, 1);
            verify(&g, &c, &first).unwrap();
            let want = u64_col(&first, "community");
            for threads in [2, 3] {
                let t = go(&g, &c, threads);
                assert_eq!(
                    u64_col(&t, "community"),
                    want,
                    "{algorithm} SEED {seed}, {threads} threads"
                );
                assert_eq!(modularity(&t).to_bits(), modularity(&first).to_bits());
            }
            for other in [
                planted(20_000, 50, 12, 4, 1).0.with_csr(false),
                planted(20_000, 50, 12, 4, 1).0.with_remote_memory(0),
            ] {
                let t = go(&other, &c, 3);
                assert_eq!(u64_col(&t, "community"), want, "{algorithm}: another store");
            }
        }
    }
}

#[test]
fn modularity_reaches_the_planted_groups() {
    for (n, group, degree, noise, seed) in [
        (20_000, 50, 12, 4, 2),
        (30_000, 200, 16, 5, 3),
        (12_000, 12, 8, 3, 4),
    ] {
        let (g, planted) = planted(n, group, degree, noise, seed);
        for algorithm in ["louvain", "leiden"] {
            for seed in 0..2u64 {
                let q = modularity(&go(&g, &call(algorithm).with("seed", seed), 2));
                assert!(
                    q >= planted - 0.002,
                    "groups of {group}, {algorithm} SEED {seed}: {q}, the groups' {planted}"
                );
            }
        }
    }
}
