//! The DM graph store against the in-memory block-file store: two memory nodes on loopback,
//! random graphs with hubs (> 1024 neighbours), directed and undirected, weighted and not; every
//! list, in and out, with weights, through `for_each_list` (random subsets, duplicates) and
//! `scan_lists`, with a large and a tiny `cn_cache`. Plus the failure paths: a killed node fails
//! the next call naming it, and a restarted node is detected at open.

mod common;

use base::Xoshiro256;
use std::collections::BTreeMap;
use std::path::Path;

use storage::blockfile::memory::MemoryStore;
use storage::dm::load::{load, PoolConfig};
use storage::dm::{
    spawn_memnode_for_tests, DmOptions, DmStore, GlobalAddr, TcpConnector, TcpOptions,
};
use storage::import::InputFormat;
use storage::{Direction, FetchOrder, GraphStore};

const TOKEN: &str = "dm-store-test";

/// Random edges over `n` vertices with two hubs (out and in) of degree > 1024 and many
/// vertices of degree 0..7, so both in-place and out-of-place entries occur.
fn random_edges(n: u64, m: usize, seed: u64, weighted: bool) -> Vec<(u64, u64, f64)> {
    let mut r = Xoshiro256::new(seed);
    let mut e = Vec::new();
    let w = |r: &mut Xoshiro256| {
        if weighted {
            (r.below(1000) as f64) / 8.0 + 0.5
        } else {
            1.0
        }
    };
    for _ in 0..m {
        let a = r.below(n);
        let b = r.below(n);
        let x = w(&mut r);
        e.push((a, b, x));
    }
    for t in 0..1500 {
        let x = w(&mut r);
        e.push((3, (t * 7 + 1) % n, x));
        let y = w(&mut r);
        e.push(((t * 11 + 2) % n, n - 5, y));
    }
    e
}

type Lists = BTreeMap<u32, Vec<(u32, u64)>>;

fn collect_each<S: GraphStore>(s: &S, dir: Direction, verts: &[u32], weights: bool) -> Lists {
    let mut m = Lists::new();
    s.for_each_list(dir, verts, FetchOrder::AsGiven, weights, |v, ns, ws| {
        let l: Vec<(u32, u64)> = ns
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, ws.map_or(0, |w| w[i].to_bits())))
            .collect();
        let prev = m.insert(v, l.clone());
        if let Some(p) = prev {
            assert_eq!(p, l, "duplicate visit of {v} with another list");
        }
    })
    .unwrap();
    m
}

fn collect_scan<S: GraphStore>(s: &S, dir: Direction, weights: bool) -> Lists {
    let mut m = Lists::new();
    let mut last = None;
    s.scan_lists(dir, 0..s.shape().vertices, weights, |v, ns, ws| {
        assert!(last < Some(v), "scan_lists out of order at {v}");
        last = Some(v);
        m.insert(
            v,
            ns.iter()
                .enumerate()
                .map(|(i, &t)| (t, ws.map_or(0, |w| w[i].to_bits())))
                .collect(),
        );
    })
    .unwrap();
    m
}

fn import_graph(
    dir: &Path,
    edges: &[(u64, u64, f64)],
    directed: bool,
    weighted: bool,
) -> MemoryStore {
    let src = dir.join("g.txt");
    common::write_edgelist(&src, edges, weighted);
    let dest = dir.join("g.fgraph");
    let mut req = common::request(&src, InputFormat::Edgelist, &dest, dir);
    req.directed = Some(directed);
    req.weighted = weighted;
    common::run(&req).unwrap();
    MemoryStore::load(&dest).unwrap()
}

fn pool(nodes: &[String]) -> PoolConfig {
    PoolConfig {
        nodes: nodes.to_vec(),
        token: TOKEN.into(),
        tcp: TcpOptions::default(),
    }
}

#[test]
fn dm_lists_equal_block_file_lists() {
    let a = spawn_memnode_for_tests(1, 256 << 20, TOKEN).unwrap();
    let b = spawn_memnode_for_tests(2, 256 << 20, TOKEN).unwrap();
    let nodes = vec![a.addr().to_string(), b.addr().to_string()];
    for (i, (directed, weighted)) in [(true, false), (false, true), (true, true), (false, false)]
        .into_iter()
        .enumerate()
    {
        let tmp = tempfile::tempdir().unwrap();
        let edges = random_edges(3000, 12000, 77 + i as u64, weighted);
        let mem = import_graph(tmp.path(), &edges, directed, weighted);
        let layout = load(&mem, &pool(&nodes), 2).unwrap();
        let frac = layout.in_place_fraction(Direction::Out);
        assert!(frac > 0.0 && frac < 1.0, "both entry kinds occur ({frac})");
        assert!(layout.tiny_chunks.len() <= 1024 && !layout.tiny_chunks.is_empty());
        for cn_cache in [64u64 << 20, 4096] {
            let dm = DmStore::open(
                &tmp.path().join("g.fgraph"),
                layout.clone(),
                &DmOptions {
                    graph: "g".into(),
                    pool: pool(&nodes),
                    cn_cache,
                    threads: 2,
                },
            )
            .unwrap();
            assert_eq!(dm.shape(), mem.shape());
            let n = mem.shape().vertices;
            let all: Vec<u32> = (0..n).collect();
            let mut r = Xoshiro256::new(5 + cn_cache);
            let mut some: Vec<u32> = (0..700).map(|_| r.below(n as u64) as u32).collect();
            some.push(some[0]);
            for dir in [Direction::Out, Direction::In] {
                for w in [false, true] {
                    let want = collect_each(&mem, dir, &all, w);
                    assert!(want.values().any(|l| l.len() > 1024), "a hub exists");
                    assert_eq!(collect_each(&dm, dir, &all, w), want, "{dir:?} w={w}");
                    assert_eq!(collect_scan(&dm, dir, w), want, "scan {dir:?} w={w}");
                    let want_some = collect_each(&mem, dir, &some, w);
                    assert_eq!(collect_each(&dm, dir, &some, w), want_some);
                    for v in [0, n / 2, n - 1] {
                        assert_eq!(dm.degree(dir, v), mem.degree(dir, v));
                        assert_eq!(dm.input_id(v), mem.input_id(v));
                    }
                }
            }
            // A compute node without the block file: the descriptor in the memory nodes alone.
            let remote = DmStore::open_remote(
                GlobalAddr::from_raw(layout.descriptor.expect("a descriptor was stored")),
                &DmOptions {
                    graph: "g".into(),
                    pool: pool(&nodes),
                    cn_cache,
                    threads: 2,
                },
                TcpConnector {
                    token: TOKEN.into(),
                    opts: TcpOptions::default(),
                },
            )
            .unwrap();
            assert_eq!(remote.shape(), mem.shape());
            assert!(remote.vertex_keys().is_none());
            for dir in [Direction::Out, Direction::In] {
                for v in 0..n {
                    assert_eq!(remote.degree(dir, v), mem.degree(dir, v));
                    assert_eq!(remote.input_id(v), mem.input_id(v));
                }
                assert_eq!(
                    collect_scan(&remote, dir, true),
                    collect_scan(&mem, dir, true)
                );
            }
            let s = dm.remote_stats();
            assert!(s.round_trips > 0 && s.nic_ops() >= s.round_trips);
            // Merged and batched: far fewer round trips than vertices fetched.
            let before = dm.remote_stats();
            collect_each(&dm, Direction::Out, &all, false);
            let rt = dm.remote_stats().since(&before).round_trips;
            if cn_cache > 1 << 20 {
                assert!(rt * 20 < n as u64, "{rt} round trips for {n} vertices");
            }
            assert!(dm
                .for_each_list(
                    Direction::Out,
                    &[n],
                    FetchOrder::AsGiven,
                    false,
                    |_, _, _| {}
                )
                .is_err());
        }
        assert!(storage::dm::free::free_layout(&layout, &pool(&nodes)).clean());
    }
    assert_eq!(a.node().used(), 0, "DROP frees every region");
    assert_eq!(b.node().used(), 0);
}

#[test]
fn dead_and_restarted_nodes_are_named() {
    let a = spawn_memnode_for_tests(1, 64 << 20, TOKEN).unwrap();
    let b = spawn_memnode_for_tests(2, 64 << 20, TOKEN).unwrap();
    let nodes = vec![a.addr().to_string(), b.addr().to_string()];
    let tmp = tempfile::tempdir().unwrap();
    let mem = import_graph(tmp.path(), &random_edges(2000, 8000, 9, false), true, false);
    let layout = load(&mem, &pool(&nodes), 2).unwrap();
    let opts = DmOptions {
        graph: "g".into(),
        pool: pool(&nodes),
        cn_cache: 1 << 20,
        threads: 1,
    };
    let dm = DmStore::open(&tmp.path().join("g.fgraph"), layout.clone(), &opts).unwrap();
    let all: Vec<u32> = (0..mem.shape().vertices).collect();
    dm.for_each_list(
        Direction::Out,
        &all,
        FetchOrder::AsGiven,
        false,
        |_, _, _| {},
    )
    .unwrap();
    let b_addr = b.addr().to_string();
    b.kill();
    for _ in 0..2 {
        let e = dm
            .for_each_list(
                Direction::Out,
                &all,
                FetchOrder::AsGiven,
                false,
                |_, _, _| {},
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains(&b_addr), "{e}");
    }
    // A node restarted on another port with fresh memory: the graph is gone, and open says so.
    let c = spawn_memnode_for_tests(2, 64 << 20, TOKEN).unwrap();
    let mut moved = layout.clone();
    moved.nodes[1].addr = c.addr().to_string();
    let e = DmStore::open(&tmp.path().join("g.fgraph"), moved, &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&c.addr().to_string()) && e.contains("CREATE OR REPLACE"),
        "{e}"
    );
    // Duplicate node ids are refused at load, naming the setting to fix.
    let d = spawn_memnode_for_tests(1, 64 << 20, TOKEN).unwrap();
    let e = load(
        &mem,
        &pool(&[a.addr().to_string(), d.addr().to_string()]),
        1,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("--node-id"), "{e}");
}
