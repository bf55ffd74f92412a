//! Several compute nodes share remote arrays: one allocates, the others attach from its
//! descriptor through their own stores and connections. A handle attached this way sees the
//! allocator's writes and frees nothing; a descriptor that names other nodes, other bounds or
//! a region past the address space is refused with an error, never a panic.

mod common;

use base::Xoshiro256;
use std::path::Path;

use storage::blockfile::memory::MemoryStore;
use storage::dm::load::{load, PoolConfig};
use storage::dm::{spawn_memnode_for_tests, DmOptions, DmStore, InProcConnector, TcpOptions};
use storage::import::InputFormat;
use storage::{ElementKind, RemoteMemory};

const TOKEN: &str = "dm-attach-test";

fn import_graph(dir: &Path, n: u64, m: u64) -> MemoryStore {
    let mut r = Xoshiro256::new(23);
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
fn a_second_compute_node_attaches_and_shares_the_array() {
    let a = spawn_memnode_for_tests(1, 64 << 20, TOKEN).unwrap();
    let b = spawn_memnode_for_tests(2, 64 << 20, TOKEN).unwrap();
    let pool = PoolConfig {
        nodes: vec![a.addr().to_string(), b.addr().to_string()],
        token: TOKEN.into(),
        tcp: TcpOptions::default(),
    };
    let tmp = tempfile::tempdir().unwrap();
    let mem = import_graph(tmp.path(), 1000, 5000);
    let layout = load(&mem, &pool, 2).unwrap();
    let file = tmp.path().join("g.fgraph");
    let opts = DmOptions {
        graph: "g".into(),
        pool: pool.clone(),
        cn_cache: 1 << 16,
        threads: 1,
    };
    let open = || {
        let mut connector = InProcConnector::new();
        connector
            .add(&pool.nodes[0], a.node().clone())
            .add(&pool.nodes[1], b.node().clone());
        DmStore::open_with(&file, layout.clone(), &opts, connector).unwrap()
    };
    let (first, second) = (open(), DmStore::open(&file, layout.clone(), &opts).unwrap());
    let used = a.node().used() + b.node().used();

    let n = layout.vertices as u64;
    let owner = RemoteMemory::alloc(&first, n, ElementKind::U64, 3).unwrap();
    let descriptor = owner.descriptor();
    let other = RemoteMemory::attach(&second, &descriptor).unwrap();
    assert_eq!((other.len(), other.kind()), (n, ElementKind::U64));
    other.write_slice(n - 2, &[7, 8]).unwrap();
    other.add_batch(&[(0, 5)]).unwrap();
    let mut got = vec![0u64; n as usize];
    owner.read_range(0, &mut got).unwrap();
    assert_eq!(
        (got[0], got[1], got[n as usize - 2], got[n as usize - 1]),
        (8, 3, 7, 8)
    );

    // The attached handle frees nothing; the allocator frees it all.
    other.free().unwrap();
    owner.read_range(0, &mut got[..4]).unwrap();
    owner.free().unwrap();
    assert_eq!(a.node().used() + b.node().used(), used);

    // What comes over the network is checked before anything is touched.
    let owner = RemoteMemory::alloc(&first, n, ElementKind::F64, 0).unwrap();
    let good = owner.descriptor();
    let parts = 2;
    let mut bad_cases: Vec<(Vec<u64>, &str)> = vec![
        (Vec::new(), "words"),
        (good[..good.len() - 1].to_vec(), "words"),
    ];
    let mut wrong_tag = good.clone();
    wrong_tag[0] ^= 1;
    bad_cases.push((wrong_tag, "words"));
    let mut wrong_kind = good.clone();
    wrong_kind[1] = 9;
    bad_cases.push((wrong_kind, "element kind"));
    let mut wrong_bounds = good.clone();
    wrong_bounds[4] += 1;
    bad_cases.push((wrong_bounds, "bounds"));
    let mut wrong_node = good.clone();
    let base = wrong_node[3 + parts + 1];
    wrong_node[3 + parts + 1] = (base & ((1 << 48) - 1)) | (7 << 48);
    bad_cases.push((wrong_node, "names node 7"));
    let mut past_end = good.clone();
    past_end[3 + parts + 2] |= (1 << 48) - 1;
    bad_cases.push((past_end, "past the address space"));
    for (d, why) in bad_cases {
        let e = RemoteMemory::attach(&second, &d).unwrap_err().to_string();
        assert!(e.contains("descriptor") && e.contains(why), "{why}: {e}");
    }
    // Random words never panic.
    let mut r = Xoshiro256::new(5);
    for _ in 0..200 {
        let mut d = good.clone();
        let k = (r.next_u64() % d.len() as u64) as usize;
        d[k] = r.next_u64();
        let _ = RemoteMemory::attach(&second, &d);
    }
    owner.free().unwrap();
}
