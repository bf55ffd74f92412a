//! The DM store is generic over its transport: the same loaded graph, opened once over TCP and
//! once over in-process connections to the very same memory nodes, gives the same lists, the
//! same remote attribute operations, and names its transport.

mod common;

use base::Xoshiro256;
use std::path::Path;

use storage::blockfile::memory::MemoryStore;
use storage::dm::load::{load, PoolConfig};
use storage::dm::{spawn_memnode_for_tests, DmOptions, DmStore, InProcConnector, TcpOptions};
use storage::import::InputFormat;
use storage::{Direction, ElementKind, GraphStore, RemoteVector};

const TOKEN: &str = "dm-transports-test";

fn import_graph(dir: &Path, n: u64, m: u64) -> MemoryStore {
    let mut r = Xoshiro256::new(19);
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

/// Every out-list of `store`, in vertex order.
fn lists<S: GraphStore>(store: &S) -> Vec<(u32, Vec<u32>)> {
    let mut out = Vec::new();
    let n = store.shape().vertices;
    store
        .scan_lists(Direction::Out, 0..n, false, |v, t, _| {
            out.push((v, t.to_vec()))
        })
        .unwrap();
    out
}

#[test]
fn an_in_process_dm_store_reads_what_the_tcp_one_reads() {
    let a = spawn_memnode_for_tests(1, 64 << 20, TOKEN).unwrap();
    let b = spawn_memnode_for_tests(2, 64 << 20, TOKEN).unwrap();
    let pool = PoolConfig {
        nodes: vec![a.addr().to_string(), b.addr().to_string()],
        token: TOKEN.into(),
        tcp: TcpOptions::default(),
    };
    let tmp = tempfile::tempdir().unwrap();
    let mem = import_graph(tmp.path(), 2000, 30000);
    let layout = load(&mem, &pool, 2).unwrap();
    let file = tmp.path().join("g.fgraph");
    let opts = DmOptions {
        graph: "g".into(),
        pool: pool.clone(),
        cn_cache: 1 << 16,
        threads: 1,
    };
    let tcp = DmStore::open(&file, layout.clone(), &opts).unwrap();
    let mut connector = InProcConnector::new();
    connector
        .add(&pool.nodes[0], a.node().clone())
        .add(&pool.nodes[1], b.node().clone());
    let inproc = DmStore::open_with(&file, layout, &opts, connector).unwrap();
    assert_eq!(tcp.transport_name(), "tcp");
    assert_eq!(inproc.transport_name(), "in-process");
    assert!(inproc.describe_reader().contains("over in-process"));

    let expected = lists(&mem);
    assert_eq!(lists(&tcp), expected);
    assert_eq!(lists(&inproc), expected);
    assert!(
        inproc.remote_stats().round_trips > 0,
        "in-process reads are counted"
    );

    // A remote array written over one transport is read back over the other.
    let n = mem.shape().vertices as u64;
    let arr = inproc.alloc_attr(n, ElementKind::U64, 5).unwrap();
    let claimed = arr.claim_batch(&[0, n - 1], 5, 9).unwrap();
    assert_eq!(claimed.len(), 2);
    let mut got = vec![0u64; n as usize];
    arr.read_range(0, &mut got).unwrap();
    assert_eq!((got[0], got[1], got[n as usize - 1]), (9, 5, 9));
    arr.free().unwrap();
}

#[test]
fn an_unknown_in_process_node_is_an_error_naming_it() {
    let a = spawn_memnode_for_tests(1, 1 << 20, TOKEN).unwrap();
    let pool = PoolConfig {
        nodes: vec![a.addr().to_string()],
        token: TOKEN.into(),
        tcp: TcpOptions::default(),
    };
    let tmp = tempfile::tempdir().unwrap();
    let mem = import_graph(tmp.path(), 50, 200);
    let layout = load(&mem, &pool, 1).unwrap();
    let opts = DmOptions {
        graph: "g".into(),
        pool,
        cn_cache: 1 << 16,
        threads: 1,
    };
    let e = DmStore::open_with(
        &tmp.path().join("g.fgraph"),
        layout,
        &opts,
        InProcConnector::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains(&a.addr().to_string()), "{e}");
}
