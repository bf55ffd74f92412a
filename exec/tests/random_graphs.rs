//! On random graphs: every kernel equals a plain sequential reference implementation of the
//! Graphalytics definition, and results agree across modes, thread counts and CSR on/off.

mod common;

use std::collections::{BTreeSet, BinaryHeap, VecDeque};

use common::{f64_col, i64_col, u64_col};
use exec::algorithms::call;
use exec::testing::VecGraph;
use exec::{run, ResultTable, RunConfig};
use planner::{AlgoCall, DmUpdate, Mode};
use proptest::prelude::*;

/// A test graph: n vertices with gapped ids, distinct non-loop edges, weights k/4.
#[derive(Debug, Clone)]
struct G {
    n: usize,
    directed: bool,
    edges: Vec<(usize, usize, f64)>,
}

fn graph() -> impl Strategy<Value = G> {
    (1usize..40, any::<bool>()).prop_flat_map(|(n, directed)| {
        prop::collection::vec((0..n, 0..n, 0u32..12), 0..(n * 4)).prop_map(move |raw| {
            let mut seen = BTreeSet::new();
            let mut edges = Vec::new();
            for (u, v, w) in raw {
                let key = if directed {
                    (u, v)
                } else {
                    (u.min(v), u.max(v))
                };
                if u != v && seen.insert(key) {
                    edges.push((key.0, key.1, w as f64 / 4.0));
                }
            }
            G { n, directed, edges }
        })
    })
}

/// A road-like graph: a `w` x `h` grid, each lattice edge kept or dropped at random, grid
/// positions mapped to vertices by a random permutation (so neighbours are not neighbouring
/// ids), integer weights 1..255 as `frontier gen grid` writes them; undirected.
fn grid_graph() -> impl Strategy<Value = G> {
    (1usize..14, 1usize..14).prop_flat_map(|(w, h)| {
        let n = w * h;
        let lattice: Vec<(usize, usize)> = (0..n)
            .flat_map(|v| {
                let right = (v % w + 1 < w).then_some((v, v + 1));
                let down = (v + w < n).then_some((v, v + w));
                right.into_iter().chain(down)
            })
            .collect();
        let m = lattice.len();
        (
            Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
            prop::collection::vec((0u32..5, 1u32..256), m),
        )
            .prop_map(move |(perm, keep)| {
                let edges = lattice
                    .iter()
                    .zip(keep)
                    .filter(|(_, (k, _))| *k != 0) // a fifth of the edges removed
                    .map(|(&(a, b), (_, wt))| {
                        let (u, v) = (perm[a], perm[b]);
                        (u.min(v), u.max(v), wt as f64)
                    })
                    .collect();
                G {
                    n,
                    directed: false,
                    edges,
                }
            })
    })
}

impl G {
    fn ids(&self) -> Vec<u64> {
        common::gapped_ids(self.n)
    }
    fn store(&self, csr: bool) -> VecGraph {
        let ids = self.ids();
        VecGraph::new(
            ids.clone(),
            self.edges
                .iter()
                .map(|&(u, v, _)| (ids[u], ids[v]))
                .collect(),
            self.directed,
            Some(self.edges.iter().map(|e| e.2).collect()),
        )
        .with_csr(csr)
    }
    fn out(&self) -> Vec<Vec<(usize, f64)>> {
        let mut a = vec![Vec::new(); self.n];
        for &(u, v, w) in &self.edges {
            a[u].push((v, w));
            if !self.directed {
                a[v].push((u, w));
            }
        }
        a
    }
    fn inn(&self) -> Vec<Vec<usize>> {
        let mut a = vec![Vec::new(); self.n];
        for &(u, v, _) in &self.edges {
            a[v].push(u);
            if !self.directed {
                a[u].push(v);
            }
        }
        a
    }
}

fn ref_bfs(g: &G, s: usize) -> Vec<Option<i64>> {
    let out = g.out();
    let mut d = vec![None; g.n];
    d[s] = Some(0);
    let mut q = VecDeque::from([s]);
    while let Some(u) = q.pop_front() {
        for &(v, _) in &out[u] {
            if d[v].is_none() {
                d[v] = Some(d[u].unwrap() + 1);
                q.push_back(v);
            }
        }
    }
    d
}

fn ref_sssp(g: &G, s: usize) -> Vec<Option<f64>> {
    #[derive(PartialEq)]
    struct E(f64, usize);
    impl Eq for E {}
    impl PartialOrd for E {
        fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for E {
        fn cmp(&self, o: &Self) -> std::cmp::Ordering {
            o.0.partial_cmp(&self.0).unwrap().then(o.1.cmp(&self.1))
        }
    }
    let out = g.out();
    let mut d = vec![f64::INFINITY; g.n];
    d[s] = 0.0;
    let mut h = BinaryHeap::from([E(0.0, s)]);
    while let Some(E(du, u)) = h.pop() {
        if du > d[u] {
            continue;
        }
        for &(v, w) in &out[u] {
            if du + w < d[v] {
                d[v] = du + w;
                h.push(E(d[v], v));
            }
        }
    }
    d.into_iter().map(|x| x.is_finite().then_some(x)).collect()
}

fn ref_pr(g: &G, iters: u32, damp: f64) -> Vec<f64> {
    let out = g.out();
    let inn = g.inn();
    let n = g.n as f64;
    let mut r = vec![1.0 / n; g.n];
    for _ in 0..iters {
        let sink: f64 = (0..g.n).filter(|&v| out[v].is_empty()).map(|v| r[v]).sum();
        r = (0..g.n)
            .map(|v| {
                (1.0 - damp) / n
                    + damp
                        * inn[v]
                            .iter()
                            .map(|&u| r[u] / out[u].len() as f64)
                            .sum::<f64>()
                    + damp * sink / n
            })
            .collect();
    }
    r
}

fn ref_wcc(g: &G) -> Vec<u64> {
    let ids = g.ids();
    let mut label: Vec<u64> = ids.clone();
    loop {
        let mut changed = false;
        for &(u, v, _) in &g.edges {
            let m = label[u].min(label[v]);
            if label[u] != m || label[v] != m {
                label[u] = m;
                label[v] = m;
                changed = true;
            }
        }
        if !changed {
            return label;
        }
    }
}

fn ref_cdlp(g: &G, iters: u32) -> Vec<u64> {
    let ids = g.ids();
    let out = g.out();
    let inn = g.inn();
    let mut l = ids.clone();
    for _ in 0..iters {
        l = (0..g.n)
            .map(|v| {
                let mut hist = std::collections::BTreeMap::new();
                let ns: Vec<usize> = if g.directed {
                    inn[v]
                        .iter()
                        .copied()
                        .chain(out[v].iter().map(|e| e.0))
                        .collect()
                } else {
                    out[v].iter().map(|e| e.0).collect()
                };
                for u in ns {
                    *hist.entry(l[u]).or_insert(0) += 1;
                }
                let mut best = (0, l[v]);
                for (lab, c) in hist {
                    if c > best.0 {
                        best = (c, lab);
                    }
                }
                best.1
            })
            .collect();
    }
    l
}

fn ref_lcc(g: &G) -> Vec<f64> {
    let out = g.out();
    let inn = g.inn();
    let arcs: BTreeSet<(usize, usize)> = (0..g.n)
        .flat_map(|u| out[u].iter().map(move |e| (u, e.0)))
        .collect();
    (0..g.n)
        .map(|v| {
            let nb: BTreeSet<usize> = out[v]
                .iter()
                .map(|e| e.0)
                .chain(inn[v].iter().copied())
                .collect();
            let d = nb.len();
            if d <= 1 {
                return 0.0;
            }
            let t = nb
                .iter()
                .flat_map(|&a| nb.iter().map(move |&b| (a, b)))
                .filter(|p| arcs.contains(p))
                .count();
            t as f64 / (d * (d - 1)) as f64
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

fn configs() -> Vec<(Mode, usize, bool)> {
    let mut v = Vec::new();
    for mode in [Mode::Auto, Mode::Push, Mode::Block, Mode::Pull] {
        for threads in [1, 2] {
            for csr in [true, false] {
                v.push((mode, threads, csr));
            }
        }
    }
    v
}

fn go(g: &G, csr: bool, mode: Mode, threads: usize, call: &AlgoCall) -> ResultTable {
    let cfg = RunConfig {
        mode,
        ..RunConfig::with_threads(threads)
    };
    run(&g.store(csr), call, &cfg).unwrap()
}

/// Whether every iteration of `t` sent its updates to remote state (by any update strategy).
/// A call of `spec` short enough for every store and placement: 5 iterations, 40 walks of 6
/// steps, weights on for odd `s`, and `src` as the source where the algorithm takes one.
fn short_call(spec: &'static planner::registry::AlgorithmSpec, src: u32, s: usize) -> AlgoCall {
    let c = AlgoCall::new(spec)
        .with("iter", 5u64)
        .with("walks", 40u64)
        .with("length", 6u64)
        .with("weights", (s % 2) as u64);
    if spec.source != planner::registry::SourceRule::NotAccepted {
        c.from(src)
    } else {
        c
    }
}

fn all_remote(t: &ResultTable) -> bool {
    t.iterations
        .iter()
        .all(|i| i.strategy.starts_with("remote "))
}

/// Whether every iteration of `t` used the update strategy `forced` names (`auto`: any).
fn strategy_kept(t: &ResultTable, forced: DmUpdate) -> bool {
    forced == DmUpdate::Auto
        || t.iterations
            .iter()
            .all(|i| i.strategy == format!("remote {}", forced.name()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn kernels_equal_the_definitions(g in graph(), s in 0usize..40) {
        let s = s % g.n;
        let bfs = ref_bfs(&g, s);
        let sssp = ref_sssp(&g, s);
        let pr = ref_pr(&g, 7, 0.85);
        let wcc = ref_wcc(&g);
        let cdlp = ref_cdlp(&g, 4);
        let lcc = ref_lcc(&g);
        let ids = g.ids();
        // Louvain's moves depend on the seeded order only: one partition for every store,
        // mode and thread count.
        let louvain = call("louvain").with("seed", 11u64);
        let communities = u64_col(&go(&g, true, Mode::Auto, 1, &louvain), "community");
        // Leiden's refinement is sequential in the seeded order likewise.
        let leiden = call("leiden").with("seed", 11u64);
        let refined = u64_col(&go(&g, true, Mode::Auto, 1, &leiden), "community");
        for (mode, threads, csr) in configs() {
            let t = go(&g, csr, mode, threads, &call("bfs").from(s as u32));
            prop_assert_eq!(u64_col(&t, "vertex"), ids.iter().map(|&i| Some(i)).collect::<Vec<_>>());
            prop_assert_eq!(i64_col(&t, "depth"), bfs.clone());
            let t = go(&g, csr, mode, threads, &call("sssp").from(s as u32));
            let got = f64_col(&t, "distance");
            for (a, b) in got.iter().zip(&sssp) {
                prop_assert!(match (a, b) { (Some(a), Some(b)) => close(*a, *b), (None, None) => true, _ => false }, "{:?} vs {:?}", got, sssp);
            }
            let t = go(&g, csr, mode, threads, &call("pagerank").with("iter", 7u64).with("damping", 0.85));
            for (a, b) in f64_col(&t, "rank").iter().zip(&pr) {
                prop_assert!(close(a.unwrap(), *b));
            }
            let t = go(&g, csr, mode, threads, &call("wcc"));
            prop_assert_eq!(u64_col(&t, "component"), wcc.iter().map(|&i| Some(i)).collect::<Vec<_>>());
            let t = go(&g, csr, mode, threads, &call("cdlp").with("iter", 4u64));
            prop_assert_eq!(u64_col(&t, "label"), cdlp.iter().map(|&i| Some(i)).collect::<Vec<_>>());
            let t = go(&g, csr, mode, threads, &call("lcc"));
            for (a, b) in f64_col(&t, "coefficient").iter().zip(&lcc) {
                prop_assert!(close(a.unwrap(), *b) || (a.unwrap() == 0.0 && *b == 0.0));
            }
            let options = [
                call("scc"),
                call("kcore"),
                call("triangles"),
                call("closeness"),
                call("closeness").with("samples", 5u64).with("seed", 3u64),
                call("harmonic"),
                call("harmonic").with("samples", 4u64).with("seed", 9u64),
                call("betweenness"),
                call("betweenness").with("samples", 3u64).with("seed", 1u64),
                call("pagerank").with("iter", 30u64).with("weights", 1u64),
                call("pagerank").with("iter", 200u64).with("tolerance", 1e-9),
                call("pagerank").with("iter", 9u64).from(s as u32),
                call("pagerank").with("weights", 1u64).with("tolerance", 1e-4).from(s as u32),
                call("louvain"),
                call("louvain").with("seed", s as u64).with("resolution", 0.5).with("levels", 1u64),
                call("leiden"),
                call("leiden").with("seed", s as u64).with("resolution", 0.5).with("levels", 1u64),
            ];
            for c in options {
                let name = c.spec.name;
                let store = g.store(csr);
                let cfg = RunConfig { mode, ..RunConfig::with_threads(threads) };
                let t = run(&store, &c, &cfg).unwrap();
                let verdict = exec::algorithms::verify(&store, &c, &t);
                prop_assert!(verdict.is_ok(), "{} {:?} {:?} {} {}: {:?}", name, c.params().collect::<Vec<_>>(), mode, threads, csr, verdict);
            }
            let t = go(&g, csr, mode, threads, &louvain);
            prop_assert_eq!(u64_col(&t, "community"), communities.clone());
            let t = go(&g, csr, mode, threads, &leiden);
            prop_assert_eq!(u64_col(&t, "community"), refined.clone());
            let t = go(&g, csr, mode, threads, &call("degree"));
            let out = g.out();
            let inn = g.inn();
            prop_assert_eq!(u64_col(&t, "out_degree"), out.iter().map(|l| Some(l.len() as u64)).collect::<Vec<_>>());
            prop_assert_eq!(u64_col(&t, "in_degree"), inn.iter().map(|l| Some(l.len() as u64)).collect::<Vec<_>>());
        }
    }

    /// With the state in memory nodes (and locally), every registered kernel passes its
    /// verifier; the frontier and reduce kernels' rounds really went to the remote arrays; and
    /// every kernel calls only the operators its declared program names, each of them on some
    /// store or placement.
    #[test]
    fn kernels_pass_their_verifiers_with_local_and_remote_state(g in graph(), s in 0usize..40) {
        use exec::algorithms::{verify, REGISTRY};
        let src = (s % g.n) as u32;
        let mut called = std::collections::HashMap::new();
        for (mode, threads, csr) in [(Mode::Auto, 2, true), (Mode::Push, 1, false), (Mode::Pull, 2, false)] {
            let placements = [(false, DmUpdate::Auto), (true, DmUpdate::Auto), (true, DmUpdate::Direct), (true, DmUpdate::ValRd), (true, DmUpdate::RefRd)];
            for (remote, dm_update) in placements {
                let store = if remote { g.store(csr).with_remote_memory(0) } else { g.store(csr) };
                let cfg = RunConfig { mode, dm_update, ..RunConfig::with_threads(threads) };
                for spec in REGISTRY.iter() {
                    let c = short_call(spec, src, s);
                    let t = run(&store, &c, &cfg).unwrap();
                    let verdict = verify(&store, &c, &t);
                    prop_assert!(verdict.is_ok(), "{} remote {} {:?} {:?}: {:?}", spec.name, remote, dm_update, mode, verdict);
                    // Kernels whose rounds are EdgeMap or reduce rounds send every round remote.
                    let rounds_remote = spec.state_bytes > 0
                        && !spec.uses(planner::registry::Operator::NeighbourIntersect)
                        && !spec.uses(planner::registry::Operator::ListFetch);
                    if remote && rounds_remote {
                        prop_assert!(all_remote(&t), "{} {:?}", spec.name, t.iterations);
                        // Sums, min-updates and additions take the strategy forced on them
                        // (claims and CDLP's mode are always direct).
                        if matches!(spec.name, "pagerank" | "sssp" | "wcc" | "kcore" | "scc") {
                            prop_assert!(strategy_kept(&t, dm_update), "{} {:?}: {:?}", spec.name, dm_update, t.iterations);
                        }
                    }
                    for op in &t.operators {
                        prop_assert!(spec.uses(*op), "{} called {:?}, not in its program", spec.name, op);
                    }
                    *called.entry(spec.name).or_insert(0u32) |= t.operators.iter().fold(0, |b, op| b | op.bit());
                }
            }
        }
        for spec in REGISTRY.iter() {
            prop_assert_eq!(called[spec.name], spec.operator_bits(), "{}: declared operators never called", spec.name);
        }
    }

    /// On a store whose ids are clustered (out of core under `LAYOUT locality`), only the
    /// traversals that ask for it spread; every kernel still passes its verifier (an addition
    /// or a per-level value carried on within a round would not).
    #[test]
    fn every_kernel_passes_its_verifier_on_clustered_ids(g in graph(), s in 0usize..40) {
        use exec::algorithms::{verify, REGISTRY};
        let src = (s % g.n) as u32;
        let store = g.store(false).with_clustered(true);
        for (mode, threads) in [(Mode::Auto, 2), (Mode::Block, 1)] {
            let cfg = RunConfig { mode, ..RunConfig::with_threads(threads) };
            for spec in REGISTRY.iter() {
                let c = short_call(spec, src, s);
                let t = run(&store, &c, &cfg).unwrap();
                let verdict = verify(&store, &c, &t);
                prop_assert!(verdict.is_ok(), "{} {:?}: {:?}", spec.name, mode, verdict);
                let spread = t.iterations.iter().any(|i| i.strategy == "spread");
                prop_assert!(!spread || matches!(spec.name, "bfs" | "sssp"), "{} spread", spec.name);
            }
        }
    }

    /// On road-like graphs (degree at most 4, long paths, a few cut-off pieces) the traversals,
    /// PageRank and WCC equal their definitions in every mode, thread count and store.
    #[test]
    fn grid_kernels_equal_the_definitions(g in grid_graph(), s in 0usize..200) {
        let s = s % g.n;
        let bfs = ref_bfs(&g, s);
        let sssp = ref_sssp(&g, s);
        let pr = ref_pr(&g, 20, 0.85);
        let wcc = ref_wcc(&g);
        for (mode, threads, csr) in configs() {
            let t = go(&g, csr, mode, threads, &call("bfs").from(s as u32));
            prop_assert_eq!(i64_col(&t, "depth"), bfs.clone());
            let t = go(&g, csr, mode, threads, &call("sssp").from(s as u32));
            prop_assert_eq!(f64_col(&t, "distance"), sssp.clone());
            let t = go(&g, csr, mode, threads, &call("pagerank").with("iter", 20u64));
            for (a, b) in f64_col(&t, "rank").iter().zip(&pr) {
                prop_assert!(close(a.unwrap(), *b), "{:?} vs {}", a, b);
            }
            let t = go(&g, csr, mode, threads, &call("wcc"));
            prop_assert_eq!(u64_col(&t, "component"), wcc.iter().map(|&i| Some(i)).collect::<Vec<_>>());
        }
        // Clustered ids without the CSR view: the traversals spread through blocks.
        for (mode, threads) in [(Mode::Auto, 1), (Mode::Auto, 2), (Mode::Block, 1), (Mode::Block, 2)] {
            let store = g.store(false).with_clustered(true);
            let cfg = RunConfig { mode, ..RunConfig::with_threads(threads) };
            let t = run(&store, &call("bfs").from(s as u32), &cfg).unwrap();
            prop_assert_eq!(i64_col(&t, "depth"), bfs.clone());
            if mode == Mode::Block {
                prop_assert!(t.iterations.iter().all(|i| i.strategy == "spread"), "{:?}", t.iterations);
            }
            let t = run(&store, &call("sssp").from(s as u32), &cfg).unwrap();
            prop_assert_eq!(f64_col(&t, "distance"), sssp.clone());
        }
    }

    /// Delta-stepping (in memory, `auto`) with weights spread over nine orders of magnitude
    /// and zeros, on graphs with up to 300 vertices, equals Dijkstra; so does every other path.
    #[test]
    fn sssp_with_wide_weights_equals_dijkstra(g in wide_graph(), s in 0usize..300) {
        let s = s % g.n;
        let want = ref_sssp(&g, s);
        for (mode, threads, csr) in [(Mode::Auto, 2, true), (Mode::Auto, 1, true), (Mode::Auto, 2, false), (Mode::Push, 2, true)] {
            let t = go(&g, csr, mode, threads, &call("sssp").from(s as u32));
            let got = f64_col(&t, "distance");
            for (a, b) in got.iter().zip(&want) {
                prop_assert!(match (a, b) { (Some(a), Some(b)) => close(*a, *b), (None, None) => true, _ => false }, "{:?} vs {:?}", got, want);
            }
        }
    }
}

/// Like `graph()`, larger, with weights 0 or 10^-4 .. 10^4.
fn wide_graph() -> impl Strategy<Value = G> {
    (2usize..300, any::<bool>()).prop_flat_map(|(n, directed)| {
        prop::collection::vec((0..n, 0..n, 0i32..10), 0..(n * 6)).prop_map(move |raw| {
            let mut seen = BTreeSet::new();
            let mut edges = Vec::new();
            for (u, v, k) in raw {
                let key = if directed {
                    (u, v)
                } else {
                    (u.min(v), u.max(v))
                };
                if u != v && seen.insert(key) {
                    let w = if k == 0 { 0.0 } else { 10f64.powi(k - 5) };
                    edges.push((key.0, key.1, w));
                }
            }
            G { n, directed, edges }
        })
    })
}
