//! Random graphs imported and read back through `MemoryStore` give exactly the input
//! adjacency, out and in, with a roomy memory budget and with a tiny one that forces many
//! spilled runs.

mod common;

use common::*;
use proptest::prelude::*;
use storage::blockfile::memory::MemoryStore;
use storage::blockfile::verify::verify_file;
use storage::import::InputFormat;
use storage::GraphStore;

#[derive(Debug, Clone)]
struct Case {
    ids: Vec<u64>,
    edges: Vec<(u64, u64, f64)>,
    directed: bool,
    weighted: bool,
    vertex_file: bool,
    tiny_budget: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::collection::btree_set(any::<u64>().prop_map(|x| x % 1_000_000_007), 1..60),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(|(ids, directed, weighted, vertex_file, tiny, huge_ids)| {
            let mut ids: Vec<u64> = ids.into_iter().collect();
            if huge_ids {
                // Ids near u64::MAX exercise the sparse id map.
                ids.push(u64::MAX);
                ids.push(u64::MAX - 3);
            }
            let n = ids.len();
            let edges = proptest::collection::vec((0..n, 0..n, 0u32..1000), 0..400);
            (
                Just(ids),
                edges,
                Just(directed),
                Just(weighted),
                Just(vertex_file),
                Just(tiny),
            )
        })
        .prop_map(|(ids, e, directed, weighted, vertex_file, tiny_budget)| {
            let edges = e
                .into_iter()
                .map(|(a, b, w)| (ids[a], ids[b], w as f64 / 8.0))
                .collect();
            Case {
                ids,
                edges,
                directed,
                weighted,
                vertex_file,
                tiny_budget,
            }
        })
}

fn check(c: &Case) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("g.txt");
    let vfile = dir.path().join("g.v");
    let dest = dir.path().join("g.frontier");
    write_edgelist(&src, &c.edges, c.weighted);
    let mut req = request(&src, InputFormat::Edgelist, &dest, dir.path());
    req.directed = Some(c.directed);
    req.weighted = c.weighted;
    if c.tiny_budget {
        req.memory_budget = 300;
    }
    let mut want_ids: Vec<u64> = if c.vertex_file {
        let mut s = String::new();
        for id in c.ids.iter().rev() {
            s.push_str(&format!("{id}\n"));
        }
        std::fs::write(&vfile, s).unwrap();
        req.vertices = Some(vfile.clone());
        c.ids.clone()
    } else {
        c.edges.iter().flat_map(|e| [e.0, e.1]).collect()
    };
    want_ids.sort_unstable();
    want_ids.dedup();

    let summary = run(&req).unwrap();
    let (want_out, want_in, want_edges) = expected(&c.edges, c.directed, c.weighted);
    assert_eq!(summary.vertices, want_ids.len() as u64);
    assert_eq!(summary.edges, want_edges);
    assert_eq!(
        summary.duplicates_dropped,
        c.edges.len() as u64 - want_edges
    );
    let store = MemoryStore::load(&dest).unwrap();
    let (ids, out, inn) = read_back(&store);
    assert_eq!(ids, want_ids);
    assert_eq!(out, want_out, "out-adjacency");
    assert_eq!(inn, want_in, "in-adjacency");
    let shape = store.shape();
    assert_eq!(shape.arcs, summary.arcs);
    assert_eq!(shape.edges, want_edges);
    assert_eq!(shape.directed, c.directed);
    assert_eq!(shape.weighted, c.weighted);
    // Every id finds the vertex that has it, and no two ids the same one.
    let mut internal: Vec<u32> = ids
        .iter()
        .map(|&id| {
            let v = store.internal_id(id).expect("every id is found");
            assert_eq!(store.input_id(v), id);
            v
        })
        .collect();
    internal.sort_unstable();
    assert!(internal.iter().copied().eq(0..ids.len() as u32));
    verify_file(&dest).unwrap();
    // Temporary files are gone; only the sources and the graph file remain.
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert!(
        left.iter()
            .all(|n| n == "g.txt" || n == "g.v" || n == "g.frontier"),
        "{left:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn random_graphs_round_trip(c in case()) {
        check(&c);
    }
}

/// Hubs with more than 1024 and more than 4096 neighbours (lists spanning blocks), in and out,
/// mixed with small lists, under a roomy and a tiny budget (the tiny one cascades merges).
#[test]
fn hubs_round_trip() {
    let mut x: u64 = 99;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let ids: Vec<u64> = (0..6000u64).map(|i| i * 3 + 10).collect();
    let mut edges = Vec::new();
    for (i, &t) in ids.iter().enumerate() {
        if i % 7 != 0 {
            edges.push((ids[1], t, (i % 13) as f64)); // out-hub, > 4096
        }
        if i % 4 == 0 {
            edges.push((t, ids[2], 0.5)); // in-hub, > 1024
        }
    }
    for _ in 0..3000 {
        let a = ids[(rnd() % 6000) as usize];
        let b = ids[(rnd() % 6000) as usize];
        edges.push((a, b, (rnd() % 100) as f64 / 3.0));
    }
    for directed in [true, false] {
        for tiny in [false, true] {
            check(&Case {
                ids: ids.clone(),
                edges: edges.clone(),
                directed,
                weighted: true,
                vertex_file: true,
                tiny_budget: tiny,
            });
        }
    }
}

#[test]
fn empty_and_isolated_only_graphs() {
    for vertex_file in [false, true] {
        check(&Case {
            ids: vec![5, 7, 1 << 40],
            edges: vec![],
            directed: true,
            weighted: false,
            vertex_file,
            tiny_budget: false,
        });
    }
}

#[test]
fn cancel_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("g.txt");
    storage::gen::gen_uniform(1000, 3_000_000, 1, false, &src).unwrap();
    let dest = dir.path().join("g.frontier");
    let tmp = dir.path().join("tmp");
    let mut req = request(&src, InputFormat::Edgelist, &dest, &tmp);
    req.memory_budget = 1 << 20;
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let mut reports = 0;
    let err = storage::import::import(
        &req,
        &mut |_| {
            reports += 1;
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        },
        &cancel,
    )
    .unwrap_err();
    assert!(matches!(err, storage::StoreError::Cancelled), "{err}");
    assert_eq!(reports, 1);
    assert!(!dest.exists());
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "temp files removed"
    );
}
