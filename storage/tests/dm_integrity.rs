//! What the memory nodes hold is checked: a flipped neighbour id, weight or index entry in a
//! memory node (as anyone with the token, or a RAM fault, could cause) fails the read with an
//! error naming the graph, the node and the region, and `verify_remote` (VERIFY GRAPH) finds it;
//! a load that never commits leaves the nodes' used capacity where it was.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use storage::blockfile::memory::MemoryStore;
use storage::dm::free::free_layout;
use storage::dm::layout::{self, Entry, LIST_HEADER};
use storage::dm::load::{load, load_pending, PoolConfig};
use storage::dm::verify::verify_remote;
use storage::dm::{
    spawn_memnode_for_tests, DmLayout, DmOptions, DmStore, MemnodeHandle, TcpOptions, TcpTransport,
    Transport,
};
use storage::import::InputFormat;
use storage::{Direction, GraphStore};

const TOKEN: &str = "dm-integrity-test";

/// Edges over `n` vertices: a hub (out-of-place lists) and a ring (in-place lists).
fn edges(n: u64, weighted: bool) -> Vec<(u64, u64, f64)> {
    let w = |i: u64| if weighted { 0.5 + i as f64 } else { 1.0 };
    let mut e: Vec<(u64, u64, f64)> = (0..n).map(|i| (i, (i + 1) % n, w(i))).collect();
    for t in 1..40 {
        e.push((0, t * 3 % n, w(t)));
        e.push((t * 5 % n, n - 1, w(t + 7)));
    }
    e
}

fn import(dir: &Path, weighted: bool) -> MemoryStore {
    let src = dir.join("g.txt");
    common::write_edgelist(&src, &edges(300, weighted), weighted);
    let dest = dir.join("g.fgraph");
    let mut req = common::request(&src, InputFormat::Edgelist, &dest, dir);
    req.directed = Some(true);
    req.weighted = weighted;
    common::run(&req).unwrap();
    MemoryStore::load(&dest).unwrap()
}

fn pool(nodes: &[&MemnodeHandle]) -> PoolConfig {
    PoolConfig {
        nodes: nodes.iter().map(|n| n.addr().to_string()).collect(),
        token: TOKEN.into(),
        tcp: TcpOptions::default(),
    }
}

fn open(dir: &Path, layout: &DmLayout, cfg: &PoolConfig) -> DmStore {
    DmStore::open(
        &dir.join("g.fgraph"),
        layout.clone(),
        &DmOptions {
            graph: "web".into(),
            pool: cfg.clone(),
            cn_cache: 1 << 20,
            threads: 1,
        },
    )
    .unwrap()
}

fn scan(dm: &DmStore, dir: Direction, weights: bool) -> Result<u64, String> {
    let mut sum = 0u64;
    dm.scan_lists(dir, 0..dm.shape().vertices, weights, |_, ns, _| {
        sum += ns.iter().map(|&t| t as u64).sum::<u64>();
    })
    .map(|()| sum)
    .map_err(|e| e.to_string())
}

/// A connection as an outsider with the token has it: it can write anywhere in the graph.
struct Tamperer {
    conns: Vec<TcpTransport>,
    layout: DmLayout,
}

impl Tamperer {
    fn new(cfg: &PoolConfig, layout: &DmLayout) -> Tamperer {
        let conns = cfg
            .nodes
            .iter()
            .map(|a| TcpTransport::connect(a.as_str(), TOKEN, cfg.tcp).unwrap())
            .collect();
        Tamperer {
            conns,
            layout: layout.clone(),
        }
    }

    fn conn(&self, a: storage::dm::GlobalAddr) -> &TcpTransport {
        self.conns.iter().find(|c| c.node_id() == a.node()).unwrap()
    }

    fn xor(&self, a: storage::dm::GlobalAddr, mask: u8) {
        let c = self.conn(a);
        let mut b = c.read(a, 1).unwrap();
        b[0] ^= mask;
        c.write(a, &b).unwrap();
    }

    fn entry(&self, dir: Direction, v: u32) -> (storage::dm::GlobalAddr, Entry) {
        let at = self.layout.entry_addr(dir, v).unwrap();
        let raw = self.conn(at).read(at, 32).unwrap();
        (at, layout::decode(&raw, self.layout.weighted).unwrap())
    }

    /// Addresses of the low byte of the first neighbour id of up to `k` lists of each kind.
    fn neighbour_bytes(
        &self,
        dir: Direction,
        k: usize,
    ) -> (Vec<storage::dm::GlobalAddr>, Vec<storage::dm::GlobalAddr>) {
        let (mut in_place, mut out_of_place) = (Vec::new(), Vec::new());
        for v in 0..self.layout.vertices {
            match self.entry(dir, v) {
                (at, Entry::InPlace { targets, .. })
                    if !targets.is_empty() && in_place.len() < k =>
                {
                    in_place.push(at.checked_add(4).unwrap())
                }
                (_, Entry::OutOfPlace { addr, .. }) if out_of_place.len() < k => {
                    out_of_place.push(addr.checked_add(LIST_HEADER).unwrap())
                }
                _ => {}
            }
        }
        (in_place, out_of_place)
    }
}

fn assert_names_damage(e: &str, what: &str) {
    for want in [
        "graph `web`",
        "region ",
        "(id ",
        what,
        "fails its checksum",
        "CREATE OR REPLACE GRAPH web",
        "STORAGE dm",
    ] {
        assert!(e.contains(want), "`{want}` missing from: {e}");
    }
}

#[test]
fn flipped_neighbour_ids_fail_reads_and_verify() {
    let a = spawn_memnode_for_tests(1, 64 << 20, TOKEN).unwrap();
    let b = spawn_memnode_for_tests(2, 64 << 20, TOKEN).unwrap();
    let cfg = pool(&[&a, &b]);
    let tmp = tempfile::tempdir().unwrap();
    let mem = import(tmp.path(), false);
    let layout = load(&mem, &cfg, 2).unwrap();
    let dm = open(tmp.path(), &layout, &cfg);
    let good = scan(&dm, Direction::Out, false).unwrap();
    let report = verify_remote(&dm).unwrap();
    assert_eq!(report.nodes, 2);
    assert_eq!(report.entries_checked, 2 * mem.shape().vertices as u64);
    assert!(
        report.lists_checked >= 2 && report.bytes_read > 0,
        "{report:?}"
    );

    let t = Tamperer::new(&cfg, &layout);
    let (in_place, out_of_place) = t.neighbour_bytes(Direction::Out, 10);
    assert!(in_place.len() == 10 && !out_of_place.is_empty());
    // Out-of-place lists: the read fails instead of answering other neighbours.
    for &x in &out_of_place {
        t.xor(x, 1);
    }
    let e = scan(&dm, Direction::Out, false).unwrap_err();
    assert_names_damage(&e, "Out list of vertex");
    assert_names_damage(
        &verify_remote(&dm).unwrap_err().to_string(),
        "list of vertex",
    );
    for &x in &out_of_place {
        t.xor(x, 1);
    }
    assert_eq!(scan(&dm, Direction::Out, false), Ok(good), "restored");
    // In-place neighbours live in the index entries.
    for &x in &in_place {
        t.xor(x, 1);
    }
    let e = scan(&dm, Direction::Out, false).unwrap_err();
    assert_names_damage(&e, "Out index entry of vertex");
    let first = layout.out.index[0];
    assert!(
        e.contains(&storage::dm::GlobalAddr::from_raw(first).to_string())
            || e.contains(&storage::dm::GlobalAddr::from_raw(layout.out.index[1]).to_string()),
        "names the index region: {e}"
    );
    assert_names_damage(&verify_remote(&dm).unwrap_err().to_string(), "index entry");
    // The in-edges were not touched.
    assert!(scan(&dm, Direction::In, false).is_ok());
    assert!(free_layout(&layout, &cfg).clean());
}

#[test]
fn flipped_weights_fail_weighted_reads_only() {
    let a = spawn_memnode_for_tests(1, 64 << 20, TOKEN).unwrap();
    let cfg = pool(&[&a]);
    let tmp = tempfile::tempdir().unwrap();
    let mem = import(tmp.path(), true);
    let layout = load(&mem, &cfg, 1).unwrap();
    let dm = open(tmp.path(), &layout, &cfg);
    let t = Tamperer::new(&cfg, &layout);
    let (_, Entry::OutOfPlace { addr, degree, .. }) = t.entry(Direction::Out, 0) else {
        panic!("vertex 0 is the hub");
    };
    let last_weight_byte = LIST_HEADER + layout::targets_bytes(degree) + 8 * degree as u64 - 1;
    t.xor(addr.checked_add(last_weight_byte).unwrap(), 0x40);
    assert!(scan(&dm, Direction::Out, false).is_ok(), "weights not read");
    let e = scan(&dm, Direction::Out, true).unwrap_err();
    assert_names_damage(&e, "Out list of vertex 0");
    assert!(verify_remote(&dm).is_err());
}

/// Waits until the node has noticed every client closing (the lease ends with the connection).
fn wait_for_no_connections(n: &MemnodeHandle) {
    let start = Instant::now();
    while n.connections() > 0 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(n.connections(), 0, "a client connection never closed");
}

#[test]
fn an_uncommitted_load_frees_its_regions_and_a_committed_one_keeps_them() {
    let a = spawn_memnode_for_tests(1, 64 << 20, TOKEN).unwrap();
    let b = spawn_memnode_for_tests(2, 64 << 20, TOKEN).unwrap();
    let cfg = pool(&[&a, &b]);
    let tmp = tempfile::tempdir().unwrap();
    let mem = import(tmp.path(), true);
    let before = (a.node().used(), b.node().used());

    // A loader that stops before committing (killed, or its connection cut): its connections
    // close, and the nodes free everything it allocated.
    let pending = load_pending(&mem, &cfg, 2).unwrap();
    assert!(a.node().used() > before.0 && b.node().used() > before.1);
    assert!(!pending.layout().regions.is_empty());
    drop(pending);
    wait_for_no_connections(&a);
    wait_for_no_connections(&b);
    assert_eq!((a.node().used(), b.node().used()), before);

    // Committed: the regions outlive the loader's connections, until DROP frees them.
    let layout = load_pending(&mem, &cfg, 2).unwrap().commit().unwrap();
    wait_for_no_connections(&a);
    wait_for_no_connections(&b);
    assert!(a.node().used() > before.0 && b.node().used() > before.1);
    let dm = open(tmp.path(), &layout, &cfg);
    assert!(scan(&dm, Direction::Out, true).is_ok());
    drop(dm);
    assert!(free_layout(&layout, &cfg).clean());
    assert_eq!((a.node().used(), b.node().used()), before);
}

/// A free that names another owner, or a life of the node that is over, frees nothing and says
/// so; the graph's own free frees everything, and exactly its recorded bytes.
#[test]
fn a_free_that_is_not_the_owners_is_refused_and_reported() {
    use storage::dm::free::NodeOutcome;
    let a = spawn_memnode_for_tests(1, 64 << 20, TOKEN).unwrap();
    let cfg = pool(&[&a]);
    let tmp = tempfile::tempdir().unwrap();
    let mem = import(tmp.path(), false);
    let layout = load(&mem, &cfg, 1).unwrap();
    wait_for_no_connections(&a);
    let held = a.node().used();
    assert_eq!(
        held,
        layout.region_bytes.iter().sum::<u64>(),
        "sizes recorded"
    );

    let mut other_owner = layout.clone();
    other_owner.nonce ^= 1;
    let r = free_layout(&other_owner, &cfg);
    assert_eq!(
        r.nodes[0].outcome,
        NodeOutcome::Refused {
            regions: layout.regions.len()
        }
    );
    assert!(r.lines("g")[0].contains("refused"), "{:?}", r.lines("g"));
    assert_eq!(a.node().used(), held);

    let mut earlier_life = layout.clone();
    earlier_life.nodes[0].epoch = earlier_life.nodes[0].epoch.map(|e| e ^ 1);
    let r = free_layout(&earlier_life, &cfg);
    assert_eq!(r.nodes[0].outcome, NodeOutcome::Restarted);
    assert_eq!(a.node().used(), held);

    // A plain FREE of a graph's region is refused as well.
    let t = TcpTransport::connect(a.addr(), TOKEN, TcpOptions::default()).unwrap();
    let e = t
        .free(storage::dm::GlobalAddr::from_raw(layout.regions[0]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("NotOwner"), "{e}");
    drop(t);

    let r = free_layout(&layout, &cfg);
    assert!(r.clean() && r.lines("g").is_empty(), "{r:?}");
    assert_eq!(a.node().used(), 0);
}
