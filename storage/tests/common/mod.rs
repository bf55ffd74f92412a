//! Helpers shared by the storage integration tests: import a file, read a graph back as
//! input-id adjacency, and compute the adjacency an import should produce.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use storage::blockfile::memory::MemoryStore;
use storage::import::{import, ImportRequest, ImportSummary, InputFormat};
use storage::{Direction, GraphStore};

/// Input-id adjacency: vertex → sorted (neighbour, weight bits) list.
pub type Adj = BTreeMap<u64, Vec<(u64, u64)>>;

pub fn request(source: &Path, format: InputFormat, dest: &Path, tmp: &Path) -> ImportRequest {
    ImportRequest {
        source: source.to_path_buf(),
        format,
        directed: None,
        weighted: false,
        vertices: None,
        options: vec![],
        dest: dest.to_path_buf(),
        memory_budget: 64 << 20,
        threads: 2,
        temp_dir: tmp.to_path_buf(),
        identity: storage::blockfile::format::FileIdentity::new(
            "g",
            1,
            "test input",
            storage::catalog::StorageKind::Blockfile,
        ),
    }
}

pub fn run(req: &ImportRequest) -> storage::Result<ImportSummary> {
    let cancel = AtomicBool::new(false);
    import(req, &mut |_| {}, &cancel)
}

/// Reads both directions of a stored graph back as input-id adjacency, ids and lists in key
/// order whatever the layout.
pub fn read_back(store: &MemoryStore) -> (Vec<u64>, Adj, Adj) {
    let n = store.shape().vertices;
    let ids: Vec<u64> = (0..n).map(|v| store.input_id(v)).collect();
    let mut dirs = Vec::new();
    for dir in [Direction::Out, Direction::In] {
        let mut adj = Adj::new();
        let all: Vec<u32> = (0..n).collect();
        store
            .for_each_list(dir, &all, storage::FetchOrder::AsGiven, true, |v, nb, w| {
                let list = nb
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| (ids[t as usize], w.map_or(0, |w| w[i].to_bits())))
                    .collect::<Vec<_>>();
                // Lists are in internal order, which is key order only under `LAYOUT key`.
                let mut list = list;
                list.sort_unstable();
                assert_eq!(store.degree(dir, v), nb.len() as u64);
                if !list.is_empty() {
                    adj.insert(ids[v as usize], list);
                }
            })
            .unwrap();
        // scan_lists and csr agree with for_each_list.
        let csr = store.csr(dir).unwrap();
        store
            .scan_lists(dir, 0..n, true, |v, nb, w| {
                assert_eq!(nb, csr.neighbours(v));
                let mut scratch = Vec::new();
                assert_eq!(w, csr.weights_f64(v, &mut scratch));
            })
            .unwrap();
        dirs.push(adj);
    }
    let inn = dirs.pop().unwrap();
    let out = dirs.pop().unwrap();
    let mut ids = ids;
    ids.sort_unstable();
    (ids, out, inn)
}

/// The adjacency an import of `edges` (input order) must produce: exact duplicates dropped
/// (first weight kept), undirected edges in both directions.
pub fn expected(edges: &[(u64, u64, f64)], directed: bool, weighted: bool) -> (Adj, Adj, u64) {
    let mut seen: BTreeMap<(u64, u64), f64> = BTreeMap::new();
    for &(a, b, w) in edges {
        let k = if directed || a <= b { (a, b) } else { (b, a) };
        seen.entry(k).or_insert(w);
    }
    let mut out = Adj::new();
    let mut inn = Adj::new();
    let bits = |w: f64| if weighted { w.to_bits() } else { 0 };
    for (&(a, b), &w) in &seen {
        out.entry(a).or_default().push((b, bits(w)));
        inn.entry(b).or_default().push((a, bits(w)));
        if !directed && a != b {
            out.entry(b).or_default().push((a, bits(w)));
            inn.entry(a).or_default().push((b, bits(w)));
        }
    }
    for l in out.values_mut().chain(inn.values_mut()) {
        l.sort();
    }
    (out, inn, seen.len() as u64)
}

pub fn write_edgelist(path: &Path, edges: &[(u64, u64, f64)], weighted: bool) {
    let mut s = String::from("# test graph\n\n");
    for &(a, b, w) in edges {
        if weighted {
            s.push_str(&format!("{a}\t{b} {w:?}\r\n"));
        } else {
            s.push_str(&format!("{a} {b}\n"));
        }
    }
    std::fs::write(path, s).unwrap();
}

pub fn graphalytics_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/graphalytics")
}
