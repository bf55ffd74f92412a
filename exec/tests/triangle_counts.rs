//! Triangle counts and clustering coefficients on random multigraphs, against a plain count
//! over every neighbour pair: self-loops, parallel arcs and opposite arcs included, with and
//! without hubs (so both the id order and the degree order of the counting are taken), on the
//! CSR path and the list path, with one and two threads.

mod common;

use std::collections::BTreeSet;

use common::{f64_col, u64_col};
use exec::algorithms::call;
use exec::testing::VecGraph;
use exec::{run, RunConfig};
use proptest::prelude::*;

/// n vertices and arcs (u, v), any of them repeated, reversed or a loop.
#[derive(Debug, Clone)]
struct G {
    n: usize,
    directed: bool,
    arcs: Vec<(usize, usize)>,
}

/// Random arcs among n vertices plus up to three hubs, each joined to about half the others
/// (in either direction), which makes the degrees skewed.
fn multigraph() -> impl Strategy<Value = G> {
    (1usize..48, any::<bool>(), 0usize..4).prop_flat_map(|(n, directed, hubs)| {
        // A hub is one of the first vertices, so there are at most n of them.
        let hubs = hubs.min(n);
        (
            prop::collection::vec((0..n, 0..n), 0..(n * 3)),
            prop::collection::vec((0..n, any::<bool>(), any::<bool>()), n * hubs),
        )
            .prop_map(move |(mut arcs, spokes)| {
                for (i, (v, keep, out)) in spokes.into_iter().enumerate() {
                    let hub = i / n;
                    if keep {
                        arcs.push(if out { (hub, v) } else { (v, hub) });
                    }
                }
                G { n, directed, arcs }
            })
    })
}

impl G {
    fn store(&self, csr: bool) -> VecGraph {
        let ids = common::gapped_ids(self.n);
        let edges = self.arcs.iter().map(|&(u, v)| (ids[u], ids[v])).collect();
        VecGraph::new(ids, edges, self.directed, None).with_csr(csr)
    }

    /// The distinct arcs, both ways for an undirected graph, loops left out.
    fn arc_set(&self) -> BTreeSet<(usize, usize)> {
        let mut s = BTreeSet::new();
        for &(u, v) in &self.arcs {
            if u != v {
                s.insert((u, v));
                if !self.directed {
                    s.insert((v, u));
                }
            }
        }
        s
    }

    /// N(v): in- and out-neighbours as a set, v left out.
    fn neighbourhoods(&self) -> Vec<BTreeSet<usize>> {
        let mut nb = vec![BTreeSet::new(); self.n];
        for &(u, v) in &self.arc_set() {
            nb[u].insert(v);
            nb[v].insert(u);
        }
        nb
    }
}

/// Per vertex: the unordered pairs of N(v) joined either way, and the ordered pairs (a, b) of
/// N(v) with an arc a → b.
fn reference(g: &G) -> (Vec<u64>, Vec<f64>) {
    let arcs = g.arc_set();
    let nb = g.neighbourhoods();
    let mut tri = Vec::new();
    let mut lcc = Vec::new();
    for set in &nb {
        let (mut pairs, mut ordered) = (0u64, 0u64);
        for &a in set {
            for &b in set {
                if a < b && nb[a].contains(&b) {
                    pairs += 1;
                }
                if arcs.contains(&(a, b)) {
                    ordered += 1;
                }
            }
        }
        tri.push(pairs);
        let d = set.len() as f64;
        lcc.push(if set.len() <= 1 {
            0.0
        } else {
            ordered as f64 / (d * (d - 1.0))
        });
    }
    (tri, lcc)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn triangles_and_lcc_equal_a_count_over_every_pair(g in multigraph()) {
        let (tri, lcc) = reference(&g);
        for csr in [true, false] {
            for threads in [1, 2] {
                let store = g.store(csr);
                let cfg = RunConfig::with_threads(threads);
                let t = run(&store, &call("triangles"), &cfg).unwrap();
                let got: Vec<u64> = u64_col(&t, "triangles").into_iter().map(|x| x.unwrap()).collect();
                prop_assert_eq!(&got, &tri, "csr {} threads {}", csr, threads);
                let t = run(&store, &call("lcc"), &cfg).unwrap();
                for (v, (a, b)) in f64_col(&t, "coefficient").iter().zip(&lcc).enumerate() {
                    let a = a.unwrap();
                    prop_assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "vertex {}: {} vs {} (csr {} threads {})", v, a, b, csr, threads);
                }
            }
        }
    }
}
