//! Properties of the two kernels without a unique answer: pseudo-DFS and random walks, on
//! generated graphs with hubs (> 4096 neighbours), sinks and cycles.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use common::{hub_graph, u32_col, u64_col};
use exec::algorithms::call;
use exec::testing::VecGraph;
use exec::{run, ExecError, RunConfig, BATCH_ROWS};
use planner::Mode;
use storage::{Direction, GraphStore};

fn cfg(mode: Mode, threads: usize) -> RunConfig {
    RunConfig {
        mode,
        ..RunConfig::with_threads(threads)
    }
}

/// Reachable set by a plain sequential search.
fn reachable(g: &VecGraph, s: u32) -> HashSet<u32> {
    let mut seen = HashSet::from([s]);
    let mut stack = vec![s];
    while let Some(v) = stack.pop() {
        g.for_each_list(
            Direction::Out,
            &[v],
            storage::FetchOrder::AsGiven,
            false,
            |_, ns, _| {
                for &w in ns {
                    if seen.insert(w) {
                        stack.push(w);
                    }
                }
            },
        )
        .unwrap();
    }
    seen
}

fn check_dfs(g: &VecGraph, source: u32, table: &exec::ResultTable) {
    let n = g.shape().vertices as usize;
    let vertex = u64_col(table, "vertex");
    let disc = u64_col(table, "discovered");
    let parent = u64_col(table, "parent");
    assert_eq!(vertex.len(), n);
    let reach = reachable(g, source);
    let mut numbers = Vec::new();
    for v in 0..n as u32 {
        assert_eq!(
            vertex[v as usize],
            Some(g.input_id(v)),
            "rows in internal-id order"
        );
        if !reach.contains(&v) {
            assert_eq!(
                (disc[v as usize], parent[v as usize]),
                (None, None),
                "unreachable {v}"
            );
            continue;
        }
        let d = disc[v as usize].expect("reachable vertex discovered");
        numbers.push(d);
        if v == source {
            assert_eq!(d, 0);
            assert_eq!(parent[v as usize], None);
            continue;
        }
        let p = g.internal_id(parent[v as usize].expect("parent")).unwrap();
        let mut is_in_neighbour = false;
        g.for_each_list(
            Direction::In,
            &[v],
            storage::FetchOrder::AsGiven,
            false,
            |_, ns, _| {
                is_in_neighbour = ns.contains(&p);
            },
        )
        .unwrap();
        assert!(is_in_neighbour, "parent of {v} is an in-neighbour");
        assert!(disc[p as usize].unwrap() < d, "parent discovered earlier");
    }
    // Every reachable vertex discovered exactly once: the numbers are 0..reachable.
    numbers.sort_unstable();
    assert_eq!(numbers, (0..reach.len() as u64).collect::<Vec<_>>());
}

#[test]
fn dfs_discovers_every_reachable_vertex_once() {
    let (ids, edges) = hub_graph(6000, 7);
    for csr in [true, false] {
        let g = VecGraph::new(ids.clone(), edges.clone(), true, None).with_csr(csr);
        for source in [0u32, 5, 5500, 5999] {
            for threads in [1, 2, 3] {
                for mode in [Mode::Auto, Mode::Block] {
                    let t = run(&g, &call("dfs").from(source), &cfg(mode, threads)).unwrap();
                    check_dfs(&g, source, &t);
                }
            }
        }
    }
}

#[test]
fn dfs_on_undirected_and_disconnected() {
    let ids: Vec<u64> = (1..=9).collect();
    let edges = vec![(1, 2), (2, 3), (3, 1), (4, 5), (7, 8)];
    for directed in [true, false] {
        let g = VecGraph::new(ids.clone(), edges.clone(), directed, None);
        for threads in [1, 2] {
            let t = run(&g, &call("dfs").from(1), &cfg(Mode::Auto, threads)).unwrap();
            check_dfs(&g, 1, &t);
        }
    }
}

type Walk = Vec<u64>;

fn walks_of(t: &exec::ResultTable) -> Vec<Walk> {
    let walk = u64_col(t, "walk");
    let step = u32_col(t, "step");
    let vertex = u64_col(t, "vertex");
    let mut out: Vec<Walk> = Vec::new();
    for i in 0..walk.len() {
        let w = walk[i].unwrap() as usize;
        if w == out.len() {
            out.push(Vec::new());
        }
        assert_eq!(w + 1, out.len(), "rows ordered by walk");
        assert_eq!(
            step[i] as usize,
            out[w].len(),
            "rows ordered by step from 0"
        );
        out[w].push(vertex[i].unwrap());
    }
    out
}

fn check_walks(g: &VecGraph, walks: &[Walk], expected: usize, length: u32, from: Option<u64>) {
    assert_eq!(walks.len(), expected);
    let out_edges: HashSet<(u64, u64)> = (0..g.shape().vertices)
        .flat_map(|v| {
            let mut e = Vec::new();
            g.for_each_list(
                Direction::Out,
                &[v],
                storage::FetchOrder::AsGiven,
                false,
                |_, ns, _| {
                    e = ns.iter().map(|&w| (g.input_id(v), g.input_id(w))).collect();
                },
            )
            .unwrap();
            e
        })
        .collect();
    for w in walks {
        if let Some(f) = from {
            assert_eq!(w[0], f);
        }
        assert!(w.len() <= length as usize + 1);
        for pair in w.windows(2) {
            assert!(
                out_edges.contains(&(pair[0], pair[1])),
                "step {pair:?} is an edge"
            );
        }
        if w.len() < length as usize + 1 {
            let last = g.internal_id(*w.last().unwrap()).unwrap();
            assert_eq!(
                g.degree(Direction::Out, last),
                0,
                "ends early only at a sink"
            );
        }
    }
}

#[test]
fn random_walks_follow_edges_and_are_reproducible() {
    let (ids, edges) = hub_graph(6000, 11);
    let base = VecGraph::new(ids.clone(), edges.clone(), true, None);
    let call = |seed, start| {
        call("randomwalk")
            .with_source(start)
            .with("walks", 3000u64)
            .with("length", 30u64)
            .with("seed", seed as u64)
    };
    let reference = walks_of(&run(&base, &call(42, None), &cfg(Mode::Auto, 1)).unwrap());
    check_walks(&base, &reference, 3000, 30, None);
    assert!(
        reference.iter().any(|w| w.len() < 31),
        "some walk hits a sink"
    );
    assert!(
        reference.iter().any(|w| w.len() == 31),
        "some walk runs to the end"
    );
    for csr in [true, false] {
        let g = VecGraph::new(ids.clone(), edges.clone(), true, None).with_csr(csr);
        for threads in [1, 2] {
            for mode in [Mode::Auto, Mode::Push, Mode::Block, Mode::Pull] {
                let again = walks_of(&run(&g, &call(42, None), &cfg(mode, threads)).unwrap());
                assert_eq!(
                    again, reference,
                    "same seed, csr {csr} threads {threads} {mode:?}"
                );
            }
        }
    }
    let other = walks_of(&run(&base, &call(43, None), &cfg(Mode::Auto, 2)).unwrap());
    assert_ne!(other, reference, "a different seed gives different walks");
    // From the hub: every walk starts there.
    let from_hub = walks_of(&run(&base, &call(1, Some(0)), &cfg(Mode::Auto, 2)).unwrap());
    check_walks(&base, &from_hub, 3000, 30, Some(ids[0]));
    let starts: HashSet<u64> = from_hub.iter().map(|w| w[1]).collect();
    assert!(
        starts.len() > 100,
        "the hub's neighbours are chosen broadly"
    );
}

#[test]
fn random_walk_edge_cases() {
    let g = VecGraph::new(vec![1, 2, 3], vec![(1, 2)], true, None);
    let t = run(
        &g,
        &call("randomwalk")
            .from(1)
            .with("walks", 4u64)
            .with("length", 5u64)
            .with("seed", 0u64),
        &cfg(Mode::Auto, 2),
    )
    .unwrap();
    assert_eq!(
        walks_of(&t),
        vec![vec![2]; 4],
        "a walk from a sink is its start only"
    );
    let t = run(
        &g,
        &call("randomwalk")
            .with("walks", 10u64)
            .with("length", 0u64)
            .with("seed", 0u64),
        &cfg(Mode::Auto, 1),
    )
    .unwrap();
    assert_eq!(t.num_rows(), 10);
    let empty = VecGraph::new(vec![], vec![], true, None);
    let t = run(
        &empty,
        &call("randomwalk")
            .with("walks", 10u64)
            .with("length", 3u64)
            .with("seed", 0u64),
        &cfg(Mode::Auto, 1),
    )
    .unwrap();
    assert_eq!(t.num_rows(), 0);
    let too_many = run(
        &g,
        &call("randomwalk")
            .with("walks", u64::MAX)
            .with("length", (u32::MAX) as u64)
            .with("seed", 0u64),
        &cfg(Mode::Auto, 1),
    );
    assert!(matches!(too_many, Err(ExecError::Other(_))));
}

#[test]
fn results_are_batched() {
    let n = BATCH_ROWS + 10;
    let ids: Vec<u64> = (0..n as u64).collect();
    let edges: Vec<(u64, u64)> = (0..n as u64 - 1).map(|i| (i, i + 1)).collect();
    let g = VecGraph::new(ids, edges, true, None);
    let t = run(&g, &call("degree"), &cfg(Mode::Auto, 2)).unwrap();
    assert_eq!(t.batches.len(), 2);
    assert!(t.batches.iter().all(|b| b.num_rows() <= BATCH_ROWS));
    assert_eq!(t.num_rows(), n);
    let out = u64_col(&t, "out_degree");
    let inn = u64_col(&t, "in_degree");
    assert_eq!((out[0], inn[0]), (Some(1), Some(0)));
    assert_eq!((out[n - 1], inn[n - 1]), (Some(0), Some(1)));
}

#[test]
fn cancel_is_reported() {
    let (ids, edges) = hub_graph(6000, 3);
    let g = VecGraph::new(ids, edges, true, None).with_csr(false);
    let calls = [
        call("bfs").from(0),
        call("pagerank").with("iter", 5u64).with("damping", 0.85),
        call("wcc"),
        call("sssp").from(0),
        call("cdlp").with("iter", 3u64),
        call("lcc"),
        call("randomwalk")
            .with("walks", 100u64)
            .with("length", 5u64)
            .with("seed", 1u64),
        call("dfs").from(0),
        call("degree"),
    ];
    for call in &calls {
        let c = cfg(Mode::Auto, 2);
        c.cancel.store(true, Ordering::Relaxed);
        assert!(
            matches!(run(&g, call, &c), Err(ExecError::Cancelled)),
            "{call:?}"
        );
    }
    // Raised from the progress callback, i.e. in the middle of a run.
    let mut c = cfg(Mode::Auto, 2);
    let flag = c.cancel.clone();
    c.progress = Some(Arc::new(move |_| flag.store(true, Ordering::Relaxed)));
    let r = run(
        &g,
        &call("pagerank").with("iter", 50u64).with("damping", 0.85),
        &c,
    );
    assert!(matches!(r, Err(ExecError::Cancelled)));
}

#[test]
fn progress_and_statistics_are_reported() {
    let (ids, edges) = hub_graph(6000, 5);
    let g = VecGraph::new(ids, edges, true, None).with_csr(false);
    let seen = Arc::new(AtomicU32::new(0));
    let s2 = seen.clone();
    let mut c = cfg(Mode::Auto, 2);
    c.progress = Some(Arc::new(move |p| {
        assert_eq!(p.of, Some(4));
        s2.fetch_max(p.iteration, Ordering::Relaxed);
    }));
    let t = run(
        &g,
        &call("pagerank").with("iter", 4u64).with("damping", 0.85),
        &c,
    )
    .unwrap();
    assert_eq!(seen.load(Ordering::Relaxed), 4);
    assert_eq!(t.iterations.len(), 4);
    assert!(t
        .iterations
        .iter()
        .all(|i| i.strategy == "pull" && i.bytes_read > 0));
    // BFS under Auto goes dense on the hub and back.
    let t = run(&g, &call("bfs").from(4500), &cfg(Mode::Auto, 2)).unwrap();
    let strategies: Vec<&str> = t.iterations.iter().map(|i| i.strategy).collect();
    assert_eq!(strategies[0], "push");
    assert!(strategies.contains(&"pull"), "{strategies:?}");
    assert_eq!(t.iterations[0].active, 1);
    assert_eq!(t.iterations[0].edges, g.degree(Direction::Out, 4500));
    // Without a CSR view push is ordered by block as block push is: both read each block once.
    let b = run(&g, &call("bfs").from(0), &cfg(Mode::Block, 2)).unwrap();
    let p = run(&g, &call("bfs").from(0), &cfg(Mode::Push, 2)).unwrap();
    let blocks = |t: &exec::ResultTable| t.iterations.iter().map(|i| i.blocks_read).sum::<u64>();
    assert_eq!(blocks(&b), blocks(&p));
    assert!(b.iterations.iter().all(|i| i.strategy == "block"));
}

#[test]
fn out_of_range_sources_reach_nothing() {
    let g = VecGraph::new(vec![1, 2], vec![(1, 2)], true, None);
    let t = run(&g, &call("bfs").from(9), &cfg(Mode::Auto, 1)).unwrap();
    assert_eq!(common::i64_col(&t, "depth"), vec![None, None]);
    let t = run(&g, &call("dfs").from(9), &cfg(Mode::Auto, 1)).unwrap();
    assert_eq!(u64_col(&t, "discovered"), vec![None, None]);
    let t = run(&g, &call("sssp").from(9), &cfg(Mode::Auto, 1)).unwrap();
    assert_eq!(common::f64_col(&t, "distance"), vec![None, None]);
    let empty = VecGraph::new(vec![], vec![], false, None);
    for call in [
        call("wcc"),
        call("lcc"),
        call("pagerank").with("iter", 3u64).with("damping", 0.85),
        call("cdlp").with("iter", 2u64),
    ] {
        assert_eq!(
            run(&empty, &call, &cfg(Mode::Auto, 2)).unwrap().num_rows(),
            0
        );
    }
    let _ = HashMap::<u8, u8>::new();
    let _ = AtomicBool::new(false);
}

/// WCC's union-find passes are reported as what they are, never as an EdgeMap pull; with remote
/// state its label propagation rounds are remote pushes.
#[test]
fn wcc_profile_names_its_passes() {
    for csr in [true, false] {
        for mode in [Mode::Auto, Mode::Push, Mode::Block, Mode::Pull] {
            let g = small_components().with_csr(csr);
            let t = run(&g, &call("wcc"), &cfg(mode, 2)).unwrap();
            assert!(!t.iterations.is_empty());
            for i in &t.iterations {
                assert!(
                    i.strategy == "link" || i.strategy == "link sample",
                    "csr {csr} {mode:?}: {}",
                    i.strategy
                );
            }
        }
    }
    let g = small_components().with_remote_memory(0);
    let t = run(&g, &call("wcc"), &cfg(Mode::Auto, 2)).unwrap();
    assert!(t
        .iterations
        .iter()
        .all(|i| i.strategy.starts_with("remote ")));
}

/// Two components joined by directed edges, one isolated vertex.
fn small_components() -> VecGraph {
    let edges = vec![(10, 20), (20, 30), (30, 10), (30, 40), (50, 60)];
    VecGraph::new(vec![10, 20, 30, 40, 50, 60, 70], edges, true, None)
}

/// The verifiers catch a wrong result: each is handed another run's table.
#[test]
fn verifiers_reject_wrong_results() {
    use exec::algorithms::verify;
    let g = small_components();
    let c = cfg(Mode::Auto, 1);
    let from0 = run(&g, &call("bfs").from(0), &c).unwrap();
    assert!(verify(&g, &call("bfs").from(0), &from0).is_ok());
    let err = verify(&g, &call("bfs").from(4), &from0).unwrap_err();
    assert!(err.starts_with("vertex "), "{err}");
    let d = run(&g, &call("sssp").from(0), &c).unwrap();
    assert!(verify(&g, &call("sssp").from(2), &d).is_err());
    let p = run(
        &g,
        &call("pagerank").with("iter", 3u64).with("damping", 0.85),
        &c,
    )
    .unwrap();
    assert!(verify(
        &g,
        &call("pagerank").with("iter", 4u64).with("damping", 0.85),
        &p
    )
    .is_err());
    let l = run(&g, &call("cdlp").with("iter", 1u64), &c).unwrap();
    assert!(verify(&g, &call("wcc"), &l).is_err());
    assert!(verify(&g, &call("cdlp").with("iter", 2u64), &l).is_err());
    let f = run(&g, &call("dfs").from(0), &c).unwrap();
    assert!(verify(&g, &call("dfs").from(0), &f).is_ok());
    assert!(verify(&g, &call("dfs").from(4), &f).is_err());
}
