//! Remote vertex attribute arrays against two real memory nodes on loopback: values round-trip
//! across the partition boundary, concurrent CAS-min and claims from two threads lose no update
//! and double-win nothing, sums are exact, a bad index is an error, a killed node is named; and
//! through `DmStore`, the array follows the index's partitioning and its traffic is counted in
//! the store's remote memory.

mod common;

use base::Xoshiro256;
use std::path::Path;
use std::sync::Arc;

use storage::blockfile::memory::MemoryStore;
use storage::dm::load::{load, PoolConfig};
use storage::dm::{
    spawn_memnode_for_tests, MemnodeHandle, NodeSet, RemoteArray, TcpOptions, TcpTransport,
};
use storage::dm::{DmOptions, DmStore};
use storage::import::InputFormat;
use storage::{ElementKind, GraphStore, RemoteVector};

const TOKEN: &str = "dm-attrs-test";

fn tcp(h: &MemnodeHandle) -> TcpTransport {
    TcpTransport::connect(h.addr(), TOKEN, TcpOptions::default()).expect("connect")
}

/// Two nodes and a connection set to them.
fn two_nodes() -> (MemnodeHandle, MemnodeHandle, Arc<dyn NodeSet>) {
    let a = spawn_memnode_for_tests(1, 64 << 20, TOKEN).unwrap();
    let b = spawn_memnode_for_tests(2, 64 << 20, TOKEN).unwrap();
    let set: Arc<dyn NodeSet> = Arc::new(vec![tcp(&a), tcp(&b)]);
    (a, b, set)
}

#[test]
fn values_round_trip_across_the_partition_boundary() {
    let (a, b, set) = two_nodes();
    let arr = RemoteArray::alloc(set, vec![0, 700, 1500], ElementKind::U64, 7).unwrap();
    assert_eq!(arr.len(), 1500);
    assert_eq!(arr.partition_of(699), 0);
    assert_eq!(arr.partition_of(700), 1);
    // Each partition is a region on its own node.
    assert!(a.node().used() >= 700 * 8 && b.node().used() >= 800 * 8);
    let mut all = vec![0u64; 1500];
    arr.read_range(0, &mut all).unwrap();
    assert!(all.iter().all(|&x| x == 7));
    let data: Vec<u64> = (0..300).map(|i| i * 3 + 1).collect();
    arr.write_slice(600, &data).unwrap();
    let mut back = vec![0u64; 300];
    arr.read_range(600, &mut back).unwrap();
    assert_eq!(back, data);
    arr.read_range(0, &mut all).unwrap();
    assert_eq!(all[599], 7);
    assert_eq!(all[900], 7);
    assert_eq!(&all[600..900], &data[..]);
    // Freed explicitly: the nodes get their memory back.
    arr.free().unwrap();
    assert_eq!(a.node().used(), 0);
    assert_eq!(b.node().used(), 0);
}

#[test]
fn concurrent_cas_min_from_two_threads_loses_no_update() {
    let (_a, _b, set) = two_nodes();
    const N: u64 = 3000;
    let arr = Arc::new(
        RemoteArray::alloc(
            set,
            vec![0, 1200, N],
            ElementKind::F64,
            f64::INFINITY.to_bits(),
        )
        .unwrap(),
    );
    // Each thread offers 4 values per index in batches of 1000 items, duplicates included.
    let offers = |seed: u64| -> Vec<(u64, u64)> {
        let mut r = Xoshiro256::new(seed);
        (0..4 * N)
            .map(|_| {
                let i = r.next_u64() % N;
                (i, ((r.next_u64() % 100_000) as f64 / 8.0).to_bits())
            })
            .collect()
    };
    let threads: Vec<_> = [11u64, 29]
        .into_iter()
        .map(|seed| {
            let arr = arr.clone();
            std::thread::spawn(move || {
                let mine = offers(seed);
                let mut wrote = Vec::new();
                for chunk in mine.chunks(1000) {
                    wrote.extend(arr.cas_min_batch(chunk).unwrap());
                }
                (mine, wrote)
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut want = vec![f64::INFINITY; N as usize];
    for (mine, _) in &results {
        for &(i, v) in mine {
            want[i as usize] = want[i as usize].min(f64::from_bits(v));
        }
    }
    let mut got = vec![0u64; N as usize];
    arr.read_range(0, &mut got).unwrap();
    for i in 0..N as usize {
        assert_eq!(f64::from_bits(got[i]), want[i], "index {i}");
        // The final value was written by exactly one call of one thread.
        let writers = results
            .iter()
            .flat_map(|(_, w)| w.iter())
            .filter(|&&(j, v)| j == i as u64 && f64::from_bits(v) == want[i])
            .count();
        assert_eq!(writers, usize::from(want[i] != f64::INFINITY), "index {i}");
    }
}

#[test]
fn concurrent_claims_win_each_index_once() {
    let (_a, _b, set) = two_nodes();
    let arr = Arc::new(
        RemoteArray::alloc(set, vec![0, 500, 1000], ElementKind::U32, u32::MAX as u64).unwrap(),
    );
    let threads: Vec<_> = [3u64, 5]
        .into_iter()
        .map(|seed| {
            let arr = arr.clone();
            std::thread::spawn(move || {
                let mut r = Xoshiro256::new(seed);
                let idx: Vec<u64> = (0..2000).map(|_| r.next_u64() % 1000).collect();
                let mut won = Vec::new();
                for c in idx.chunks(300) {
                    won.extend(arr.claim_batch(c, u32::MAX as u64, seed).unwrap());
                }
                (idx, won)
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut got = vec![0u64; 1000];
    arr.read_range(0, &mut got).unwrap();
    for i in 0..1000u64 {
        let offered = results.iter().any(|(idx, _)| idx.contains(&i));
        let wins: Vec<u64> = [3u64, 5]
            .iter()
            .zip(&results)
            .filter(|(_, (_, won))| won.contains(&i))
            .map(|(&s, _)| s)
            .collect();
        if offered {
            assert_eq!(wins.len(), 1, "index {i} claimed by {wins:?}");
            assert_eq!(got[i as usize], wins[0], "index {i}");
        } else {
            assert_eq!(got[i as usize], u32::MAX as u64);
        }
    }
}

#[test]
fn add_batch_sums_exactly() {
    let (_a, _b, set) = two_nodes();
    let ints =
        Arc::new(RemoteArray::alloc(set.clone(), vec![0, 40, 100], ElementKind::U64, 0).unwrap());
    let floats = Arc::new(RemoteArray::alloc(set, vec![0, 40, 100], ElementKind::F64, 0).unwrap());
    let threads: Vec<_> = [1u64, 2]
        .into_iter()
        .map(|k| {
            let (ints, floats) = (ints.clone(), floats.clone());
            std::thread::spawn(move || {
                for round in 0..20u64 {
                    let items: Vec<(u64, u64)> = (0..300).map(|j| (j % 100, k)).collect();
                    ints.add_batch(&items).unwrap();
                    // Multiples of 1/4: every partial sum is exact in binary.
                    let f: Vec<(u64, u64)> = (0..300)
                        .map(|j| (j % 100, (0.25 * (k + round % 2) as f64).to_bits()))
                        .collect();
                    floats.add_batch(&f).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut got = vec![0u64; 100];
    ints.read_range(0, &mut got).unwrap();
    // Per index: 3 items per call × 20 rounds × (1 + 2).
    assert!(got.iter().all(|&x| x == 3 * 20 * 3), "{got:?}");
    floats.read_range(0, &mut got).unwrap();
    // 3 items × 10 rounds each of 0.25·k and 0.25·(k+1), for k = 1 and 2.
    let want = 3.0 * 10.0 * 0.25 * ((1 + 2) + (2 + 3)) as f64;
    assert!(got.iter().all(|&x| f64::from_bits(x) == want), "{want}");
}

#[test]
fn an_out_of_range_index_is_an_error_and_changes_nothing() {
    let (_a, _b, set) = two_nodes();
    let arr = RemoteArray::alloc(set.clone(), vec![0, 10, 20], ElementKind::U64, 5).unwrap();
    for e in [
        arr.cas_min_batch(&[(3, 1), (20, 1)]).unwrap_err(),
        arr.claim_batch(&[u64::MAX], 5, 0).unwrap_err(),
        arr.add_batch(&[(25, 1)]).unwrap_err(),
        arr.read_range(15, &mut [0u64; 6]).unwrap_err(),
        arr.write_slice(u64::MAX, &[1]).unwrap_err(),
    ] {
        assert!(e.to_string().contains("out of range"), "{e}");
    }
    let mut all = [0u64; 20];
    arr.read_range(0, &mut all).unwrap();
    assert!(
        all.iter().all(|&x| x == 5),
        "a refused batch applied nothing"
    );
    // Bounds that do not fit the node set are refused too.
    let e = RemoteArray::alloc(set, vec![0, 10], ElementKind::U64, 0).unwrap_err();
    assert!(e.to_string().contains("partition bounds"), "{e}");
}

#[test]
fn a_killed_node_fails_with_an_error_naming_it() {
    let (a, b, set) = two_nodes();
    let arr = RemoteArray::alloc(set, vec![0, 100, 200], ElementKind::U64, u64::MAX).unwrap();
    let b_addr = b.addr().to_string();
    b.kill();
    // Partition 0 still answers; anything touching partition 1 names the dead node.
    assert_eq!(arr.cas_min_batch(&[(5, 1)]).unwrap(), vec![(5, 1)]);
    for e in [
        arr.cas_min_batch(&[(5, 0), (150, 1)]).unwrap_err(),
        arr.add_batch(&[(199, 1)]).unwrap_err(),
        arr.read_range(0, &mut [0u64; 200]).unwrap_err(),
    ] {
        assert!(e.to_string().contains(&b_addr), "{e}");
    }
    drop(arr); // best-effort free: the dead node is skipped, no panic
    drop(a);
}

fn import_graph(dir: &Path, n: u64, m: u64) -> MemoryStore {
    let mut r = Xoshiro256::new(77);
    let edges: Vec<(u64, u64, f64)> = (0..m)
        .map(|_| (r.next_u64() % n, r.next_u64() % n, 1.0))
        .collect();
    let src = dir.join("g.txt");
    common::write_edgelist(&src, &edges, false);
    let dest = dir.join("g.fgraph");
    let mut req = common::request(&src, InputFormat::Edgelist, &dest, dir);
    req.directed = Some(true);
    common::run(&req).unwrap();
    MemoryStore::load(&dest).unwrap()
}

#[test]
fn dm_store_attributes_follow_the_index_partitioning_and_are_counted() {
    let a = spawn_memnode_for_tests(1, 64 << 20, TOKEN).unwrap();
    let b = spawn_memnode_for_tests(2, 64 << 20, TOKEN).unwrap();
    let pool = PoolConfig {
        nodes: vec![a.addr().to_string(), b.addr().to_string()],
        token: TOKEN.into(),
        tcp: TcpOptions::default(),
    };
    let tmp = tempfile::tempdir().unwrap();
    let mem = import_graph(tmp.path(), 3000, 12000);
    let layout = load(&mem, &pool, 2).unwrap();
    let dm = DmStore::open(
        &tmp.path().join("g.fgraph"),
        layout.clone(),
        &DmOptions {
            graph: "g".into(),
            pool,
            cn_cache: 4096,
            threads: 1,
        },
    )
    .unwrap();
    let memory = dm.remote_memory().expect("a DM store offers remote memory");
    assert_eq!(memory.local_budget(), 4096);
    let n = dm.shape().vertices;
    let placed = dm.alloc_attr(n as u64, ElementKind::U32, 0).unwrap();
    for v in 0..n {
        assert_eq!(
            placed.partition_of(v as u64),
            layout.partition_of(v),
            "vertex {v}"
        );
    }
    let before = memory.traffic();
    let arr = memory
        .alloc(n as u64, ElementKind::U32, u32::MAX as u64)
        .unwrap();
    assert_eq!((arr.len(), arr.kind()), (n as u64, ElementKind::U32));
    let claimed = arr
        .claim_batch(&[0, 1, (n - 1) as u64], u32::MAX as u64, 1)
        .unwrap();
    assert_eq!(claimed.len(), 3);
    let d = memory.traffic().since(&before);
    assert!(
        d.round_trips >= 3,
        "alloc, fill and claims are counted: {d:?}"
    );
    assert!(d.remote_ops >= 3 + 2, "{d:?}");
    assert!(
        d.bytes_sent >= 8 * n as u64,
        "the fill's bytes are counted: {d:?}"
    );
    arr.free().unwrap();
    // The in-memory store keeps everything local.
    assert!(mem.remote_memory().is_none());
}
