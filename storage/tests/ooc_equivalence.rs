//! The out-of-core reader returns exactly the lists (and weights) of the in-memory reader, for
//! every fetch order, cache size, engine and direction.

mod ooc_support;

use ooc_support::*;
use storage::blockfile::memory::MemoryStore;
use storage::blockfile::ooc::OutOfCoreStore;
use storage::io::{EngineOptions, EnginePreference};
use storage::{Direction, FetchOrder, GraphStore};

fn engine(prefer: EnginePreference, depth: u32) -> EngineOptions {
    EngineOptions {
        depth,
        prefer,
        ..EngineOptions::default()
    }
}

fn check_graph(directed: bool, weighted: bool, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let n = 6000;
    let mut adj = random_adjacency(n, 3, seed);
    if !directed {
        adj = symmetrise(&adj);
    }
    let path = write_graph(dir.path(), "g", &adj, directed, weighted);
    let mem = MemoryStore::load(&path).unwrap();
    let mut rng = Xoshiro256::new(seed * 7 + 3);
    for (cache, prefer, depth) in [
        (64 << 10, EnginePreference::Auto, 32),
        (64 << 10, EnginePreference::Pread, 8),
        (4096, EnginePreference::Auto, 4),
        (3 << 20, EnginePreference::Auto, 32),
        (64 << 20, EnginePreference::Auto, 32),
    ] {
        let ooc = OutOfCoreStore::open(&path, cache, &engine(prefer, depth)).unwrap();
        assert_eq!(ooc.shape(), mem.shape());
        assert!(
            ooc.describe_reader().starts_with("out of core ("),
            "{}",
            ooc.describe_reader()
        );
        for v in [0, 1, n / 2, n - 1] {
            assert_eq!(ooc.input_id(v), mem.input_id(v));
            assert_eq!(ooc.internal_id(mem.input_id(v)), Some(v));
        }
        assert_eq!(ooc.internal_id(11), None);
        for d in [Direction::Out, Direction::In] {
            for v in 0..n {
                assert_eq!(ooc.degree(d, v), mem.degree(d, v));
                assert_eq!(ooc.edge_block(d, v), mem.edge_block(d, v));
            }
            // The pricing walk: first blocks and degrees of the wanted non-empty lists.
            let want = |v: u32| v % 3 != 1;
            for r in [0..n, 100..4000, n - 1..n, 5..5] {
                let (mut got, mut exp) = (Vec::new(), Vec::new());
                ooc.each_list_start(d, r.clone(), want, |b, g| got.push((b, g)));
                mem.each_list_start(d, r.clone(), want, |b, g| exp.push((b, g)));
                assert_eq!(got, exp, "{d:?} {r:?}");
                let listed = r.filter(|&v| want(v) && mem.degree(d, v) > 0).count();
                assert_eq!(got.len(), listed, "{d:?}");
            }
            for order in [FetchOrder::AsGiven, FetchOrder::ByBlock] {
                for want_w in [false, true] {
                    for k in [1usize, 60, 2500] {
                        let vs = random_subset(n, k, &mut rng);
                        let got = fetch(&ooc, d, &vs, order, want_w);
                        let want = fetch(&mem, d, &vs, order, want_w);
                        assert!(
                            got == want,
                            "{d:?} {order:?} weights {want_w} k {k} cache {cache}"
                        );
                    }
                }
            }
            // Spreading from a few seeds: the same lists as the reference's spread.
            for want_w in [false, true] {
                let seeds = random_subset(n, 3, &mut rng);
                let got = spread(&ooc, d, &seeds, want_w);
                let want = spread(&mem, d, &seeds, want_w);
                assert!(got == want, "spread {d:?} weights {want_w} cache {cache}");
            }
            for want_w in [false, true] {
                for r in [0..n, 0..1, 17..2500, n - 5..n, 3..3] {
                    let got = scan(&ooc, d, r.clone(), want_w);
                    let want = scan(&mem, d, r.clone(), want_w);
                    assert!(
                        got == want,
                        "scan {d:?} {r:?} weights {want_w} cache {cache}"
                    );
                }
            }
            // One pass shared by the workers: the same lists, whatever the number of workers
            // (a cache too small for scan buffers has no such pass).
            for want_w in [false, true] {
                let whole = scan(&mem, d, 0..n, want_w);
                for workers in [1, 3] {
                    match shared_pass(&ooc, d, want_w, workers) {
                        Some(got) => assert!(
                            got == whole,
                            "shared pass {d:?} weights {want_w} workers {workers} cache {cache}"
                        ),
                        None => assert!(cache < 1 << 20, "cache {cache} has scan buffers"),
                    }
                }
            }
        }
    }
    // The reference itself matches what was written.
    let all: Vec<u32> = (0..n).collect();
    let seen = fetch(&mem, Direction::Out, &all, FetchOrder::AsGiven, true);
    for (v, l) in adj.iter().enumerate() {
        let (ns, ws) = &seen[&(v as u32)];
        assert_eq!(ns, &l.iter().map(|x| x.0).collect::<Vec<_>>());
        if weighted {
            assert_eq!(
                ws.as_ref().unwrap(),
                &l.iter().map(|x| x.1).collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn directed_weighted() {
    check_graph(true, true, 11);
}

#[test]
fn directed_unweighted() {
    check_graph(true, false, 12);
}

#[test]
fn undirected_weighted() {
    check_graph(false, true, 13);
}

#[test]
fn undirected_unweighted() {
    check_graph(false, false, 14);
}

#[test]
fn concurrent_callers_on_disjoint_sets_with_a_tiny_cache() {
    let dir = tempfile::tempdir().unwrap();
    let n = 6000;
    let adj = random_adjacency(n, 2, 99);
    let path = write_graph(dir.path(), "g", &adj, true, true);
    let mem = MemoryStore::load(&path).unwrap();
    for cache in [4096u64, 8192, 64 << 10] {
        let ooc = OutOfCoreStore::open(&path, cache, &engine(EnginePreference::Auto, 16)).unwrap();
        let all: Vec<u32> = (0..n).collect();
        std::thread::scope(|s| {
            for (t, part) in all.chunks(n as usize / 2).enumerate() {
                let (ooc, mem) = (&ooc, &mem);
                s.spawn(move || {
                    let order = if t == 0 {
                        FetchOrder::AsGiven
                    } else {
                        FetchOrder::ByBlock
                    };
                    for _ in 0..2 {
                        let got = fetch(ooc, Direction::In, part, order, true);
                        let want = fetch(mem, Direction::In, part, order, true);
                        assert!(got == want);
                    }
                });
            }
        });
        let st = ooc.io_stats();
        // One shared budget of 16, plus at most one overdraft per idle caller.
        assert!(st.inflight_high_water <= 16 + 1, "{st:?}");
    }
}

/// Weights all exact in f32 are held at 4 bytes in memory, and one that is not keeps the
/// direction at 8; either way every list hands out the file's f64 weights bit for bit, through
/// the callbacks and through the CSR view alike.
#[test]
fn memory_weights_narrow_only_when_exact_and_always_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let n = 3000;
    let exact = symmetrise(&random_adjacency(n, 1, 21));
    let mut inexact = exact.clone();
    let v = inexact.iter().position(|l| l.len() > 5).unwrap();
    inexact[v][3].1 = 0.1;
    for (name, adj, width) in [("exact", &exact, 4), ("inexact", &inexact, 8)] {
        let path = write_graph(dir.path(), name, adj, true, true);
        let mem = MemoryStore::load(&path).unwrap();
        assert_eq!(mem.weight_width(Direction::Out), width, "{name}");
        let seen = scan(&mem, Direction::Out, 0..n, true);
        let csr = mem.csr(Direction::Out).unwrap();
        let mut scratch = Vec::new();
        for (u, list) in adj.iter().enumerate() {
            let want: Vec<u64> = list.iter().map(|&(_, w)| w.to_bits()).collect();
            let (_, got) = &seen[&(u as u32)];
            let got: Vec<u64> = got.as_ref().unwrap().iter().map(|w| w.to_bits()).collect();
            assert_eq!(got, want, "{name}: vertex {u}");
            let from_csr = csr.weights_of(u as u32).unwrap().widen(&mut scratch);
            let from_csr: Vec<u64> = from_csr.iter().map(|w| w.to_bits()).collect();
            assert_eq!(from_csr, want, "{name}: vertex {u} through the CSR view");
        }
    }
}
