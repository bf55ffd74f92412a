//! String vertex keys in the block file: imported sorted (internal id = rank of the key), read
//! the same loaded or by block through a tiny cache, checked against the block checksums; and
//! format 2 files (before the key sections existed) still open.

mod common;

use std::os::unix::fs::FileExt;
use std::path::Path;

use common::*;
use storage::blockfile::format::{SectionKind, Superblock, BLOCK_SIZE};
use storage::blockfile::keys::VertexKeys;
use storage::blockfile::memory::MemoryStore;
use storage::blockfile::ooc::OutOfCoreStore;
use storage::blockfile::open::GraphFile;
use storage::import::InputFormat;
use storage::io::EngineOptions;
use storage::{GraphStore, StoreError};

/// `n` keys of 20-40 bytes whose order differs from their first appearance; edges in a ring.
fn keyed_edges(n: usize) -> (Vec<String>, String) {
    let keys: Vec<String> = (0..n)
        .map(|i| {
            let pad = "x".repeat(i % 21);
            format!("user-{:08}-{pad}-é", (i * 7919) % 100_003)
        })
        .collect();
    let text = (0..n)
        .map(|i| format!("{} {}\n", keys[i], keys[(i + 1) % n]))
        .collect();
    (keys, text)
}

fn import_text(dir: &Path, text: &str, options: Vec<(String, String)>) -> std::path::PathBuf {
    let src = dir.join("in.el");
    std::fs::write(&src, text).unwrap();
    let dest = dir.join("g.fgraph");
    let mut req = request(&src, InputFormat::Edgelist, &dest, &dir.join("tmp"));
    req.options = options;
    let s = run(&req).unwrap();
    assert!(s.string_keys || text.starts_with('1'));
    dest
}

#[test]
fn keys_are_sorted_and_read_alike_loaded_and_by_block() {
    let dir = tempfile::tempdir().unwrap();
    let (keys, text) = keyed_edges(3000);
    // Key order: internal ids are the keys' ranks.
    let path = import_text(dir.path(), &text, vec![("layout".into(), "key".into())]);
    let mut sorted = keys.clone();
    sorted.sort();
    let mem = MemoryStore::load(&path).unwrap();
    let ooc =
        OutOfCoreStore::open(&path, 4 * BLOCK_SIZE as u64, &EngineOptions::default()).unwrap();
    for store_keys in [mem.vertex_keys().unwrap(), ooc.vertex_keys().unwrap()] {
        assert_eq!(store_keys.len() as usize, sorted.len());
        for (r, k) in sorted.iter().enumerate().step_by(97) {
            assert_eq!(&store_keys.key(r as u32).unwrap(), k);
            assert_eq!(store_keys.find(k).unwrap(), Some(r as u32));
        }
        assert_eq!(store_keys.find("user-").unwrap(), None);
        let near = store_keys
            .near(&format!("{}z", sorted[1500]), 4, 16)
            .unwrap();
        assert_eq!(near, sorted[1497..1505]);
    }
    // Internal ids are ranks: the ring's edge keys[i] -> keys[i+1] is stored between ranks.
    let rank = |k: &String| sorted.binary_search(k).unwrap() as u32;
    let mut seen = Vec::new();
    mem.for_each_list(
        storage::Direction::Out,
        &[rank(&keys[0])],
        storage::FetchOrder::AsGiven,
        false,
        |_, ns, _| seen.extend_from_slice(ns),
    )
    .unwrap();
    assert_eq!(seen, [rank(&keys[1])]);
    assert_eq!(mem.input_id(7), 7);
}

#[test]
fn a_damaged_key_block_is_reported_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let (_, text) = keyed_edges(500);
    let path = import_text(dir.path(), &text, vec![]);
    let gf = GraphFile::open(&path).unwrap();
    let s = *gf.superblock.section(SectionKind::KeyBytes).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.write_all_at(b"\x00", s.offset + 100).unwrap();
    let err = MemoryStore::load(&path).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    let keys = VertexKeys::by_block(&gf, 0).unwrap().unwrap();
    let err = (0..keys.len())
        .map(|v| keys.key(v))
        .find_map(Result::err)
        .expect("the damaged block is read");
    assert!(err.to_string().contains("checksum mismatch"), "{err}");
}

/// Rewrites a file's superblock with `version`.
fn set_version(path: &Path, version: u32) {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let len = f.metadata().unwrap().len();
    let mut block = vec![0u8; BLOCK_SIZE];
    f.read_exact_at(&mut block, 0).unwrap();
    let mut sb = Superblock::decode(&block, path, len).unwrap();
    sb.version = version;
    f.write_all_at(&sb.encode(), 0).unwrap();
}

#[test]
fn format_2_files_still_open_and_cannot_hold_keys() {
    let dir = tempfile::tempdir().unwrap();
    // Key order: degree order came with format 4.
    // Written as format 3 (plain lookups), then marked 2.
    let old = |dir: &Path, text: &str| {
        storage::blockfile::writer::writing_version(3, || {
            import_text(dir, text, vec![("layout".into(), "key".into())])
        })
    };
    let path = old(dir.path(), "1 2\n2 3\n");
    set_version(&path, 2);
    let mem = MemoryStore::load(&path).unwrap();
    assert_eq!(mem.graph_file().superblock.version, 2);
    assert!(mem.vertex_keys().is_none());
    assert_eq!(mem.internal_id(3), Some(2));

    let keyed = tempfile::tempdir().unwrap();
    let path = old(keyed.path(), "a b\n");
    set_version(&path, 2);
    let err = GraphFile::open(&path).unwrap_err();
    assert!(
        err.to_string()
            .contains("string-key sections in a format 2 file"),
        "{err}"
    );
}

/// Every list of a store, as (key, neighbour keys, weights), each list by neighbour key (the
/// order within a list follows the layout's internal ids).
fn keyed_lists(store: &MemoryStore) -> Vec<(String, Vec<String>, Vec<u64>)> {
    let ranked = store.vertex_keys().unwrap();
    // Keys are stored by rank; a vertex's rank is its input id.
    let keys = KeysOf(ranked, store);
    let n = store.shape().vertices;
    let mut out = Vec::new();
    for dir in [storage::Direction::Out, storage::Direction::In] {
        store
            .for_each_list(
                dir,
                &(0..n).collect::<Vec<u32>>(),
                storage::FetchOrder::AsGiven,
                true,
                |v, ns, ws| {
                    let mut list: Vec<(String, u64)> = ns
                        .iter()
                        .enumerate()
                        .map(|(i, &w)| (keys.key(w).unwrap(), ws.map_or(0, |ws| ws[i].to_bits())))
                        .collect();
                    list.sort();
                    let (ns, ws): (Vec<String>, Vec<u64>) = list.into_iter().unzip();
                    out.push((
                        keys.key(v).unwrap(),
                        ns,
                        if store.shape().weighted {
                            ws
                        } else {
                            Vec::new()
                        },
                    ))
                },
            )
            .unwrap();
    }
    out.sort();
    out
}

/// The key of an internal id.
struct KeysOf<'a>(&'a storage::blockfile::keys::VertexKeys, &'a MemoryStore);

impl KeysOf<'_> {
    fn key(&self, v: u32) -> storage::Result<String> {
        self.0.key(self.1.input_id(v) as u32)
    }
}

#[test]
fn a_small_budget_spills_and_gives_the_same_graph() {
    let (keys, _) = keyed_edges(4000);
    // Duplicates and reversed pairs, weights that tell them apart.
    let mut text = String::new();
    for i in 0..12000usize {
        let (a, b) = (
            keys[(i * 37) % 4000].clone(),
            keys[(i * 91 + 5) % 4000].clone(),
        );
        text.push_str(&format!("{a} {b} {}\n", i % 13));
    }
    for directed in [true, false] {
        let mut graphs = Vec::new();
        for budget in [64 << 10, 64 << 20] {
            let dir = tempfile::tempdir().unwrap();
            let src = dir.path().join("in.el");
            std::fs::write(&src, &text).unwrap();
            let dest = dir.path().join("g.fgraph");
            let mut req = request(&src, InputFormat::Edgelist, &dest, &dir.path().join("tmp"));
            req.memory_budget = budget;
            req.weighted = true;
            req.directed = Some(directed);
            req.options = vec![("duplicates".into(), "sum".into())];
            let s = run(&req).unwrap();
            assert!(s.string_keys);
            assert_eq!(s.runs_spilled > 0, budget == 64 << 10, "budget {budget}");
            graphs.push((
                s.vertices,
                s.edges,
                keyed_lists(&MemoryStore::load(&dest).unwrap()),
            ));
        }
        assert_eq!(graphs[0], graphs[1], "directed {directed}");
    }
}
