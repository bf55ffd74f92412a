//! Block-level behaviour of the out-of-core reader: ByBlock reads each needed block once,
//! corrupt blocks are reported (never returned), and `open_store` picks the access path.

mod ooc_support;

use std::collections::BTreeSet;
use std::os::unix::fs::FileExt;

use ooc_support::*;
use storage::blockfile::format::{BLOCK_SIZE, SLOTS_PER_BLOCK};
use storage::blockfile::ooc::OutOfCoreStore;
use storage::blockfile::open::GraphFile;
use storage::blockfile::open_store::{open_store, BlockStore, ReaderOptions};
use storage::io::{EngineOptions, EnginePreference};
use storage::{with_block_store, Direction, FetchOrder, GraphStore, StoreError};

/// The distinct blocks the lists of `vs` occupy (edge blocks, plus weight blocks if asked).
fn needed_blocks(f: &GraphFile, dir: Direction, vs: &[u32], weights: bool) -> usize {
    let idx = f.vertex_index(dir);
    let e0 = f.edge_section(dir).first_block();
    let w0 = f.weight_section(dir).map(|s| s.first_block());
    let mut set = BTreeSet::new();
    for &v in vs {
        let (s, d) = (idx.starts[v as usize], idx.degrees[v as usize] as u64);
        if d == 0 {
            continue;
        }
        let spb = SLOTS_PER_BLOCK as u64;
        set.extend(e0 + s / spb..=e0 + (s + d - 1) / spb);
        if let (true, Some(w0)) = (weights, w0) {
            let wpb = (BLOCK_SIZE / 8) as u64;
            set.extend(w0 + s / wpb..=w0 + (s + d - 1) / wpb);
        }
    }
    set.len()
}

#[test]
fn by_block_reads_each_needed_block_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let n = 6000;
    let adj = random_adjacency(n, 3, 5);
    let path = write_graph(dir.path(), "g", &adj, true, true);
    let file = GraphFile::open(&path).unwrap();
    let mut rng = Xoshiro256::new(77);
    for cache in [0u64, 4096, 64 << 10, 64 << 20] {
        for prefer in [EnginePreference::Auto, EnginePreference::Pread] {
            for (k, weights) in [
                (40usize, false),
                (700, true),
                (n as usize, true),
                (n as usize, false),
            ] {
                for d in [Direction::Out, Direction::In] {
                    // A cold cache for every call.
                    let ooc = OutOfCoreStore::open(
                        &path,
                        cache,
                        &EngineOptions {
                            depth: 8,
                            prefer,
                            ..EngineOptions::default()
                        },
                    )
                    .unwrap();
                    let vs = random_subset(n, k, &mut rng);
                    let before = ooc.io_stats();
                    fetch(&ooc, d, &vs, FetchOrder::ByBlock, weights);
                    let st = ooc.io_stats().since(&before);
                    assert_eq!(
                        st.blocks_read as usize,
                        needed_blocks(&file, d, &vs, weights),
                        "cache {cache} k {k} weights {weights} {d:?} {prefer:?}"
                    );
                    assert_eq!(st.bytes_read, st.blocks_read * BLOCK_SIZE as u64);
                    assert!(st.inflight_high_water <= 8);
                }
            }
        }
    }
}

#[test]
fn a_warm_cache_serves_repeats_without_reading() {
    let dir = tempfile::tempdir().unwrap();
    let adj = random_adjacency(3000, 0, 8);
    let path = write_graph(dir.path(), "g", &adj, false, false);
    let ooc = OutOfCoreStore::open(&path, 64 << 20, &EngineOptions::default()).unwrap();
    let vs: Vec<u32> = (0..3000).collect();
    fetch(&ooc, Direction::Out, &vs, FetchOrder::AsGiven, false);
    let before = ooc.io_stats();
    fetch(&ooc, Direction::Out, &vs, FetchOrder::AsGiven, false);
    let st = ooc.io_stats().since(&before);
    assert_eq!(st.blocks_read, 0, "{st:?}");
    assert!(st.cache_hits > 0 && st.cache_misses == 0, "{st:?}");
}

/// Flips one byte inside the first edge block of `v`'s out-list; returns that block's number.
fn corrupt_list_of(path: &std::path::Path, v: u32) -> u64 {
    let f = GraphFile::open(path).unwrap();
    let start = f.out.starts[v as usize];
    let block = f.edge_section(Direction::Out).first_block() + start / SLOTS_PER_BLOCK as u64;
    let at = block * BLOCK_SIZE as u64 + (start % SLOTS_PER_BLOCK as u64) * 4;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    file.read_exact_at(&mut b, at).unwrap();
    b[0] ^= 0x5a;
    file.write_all_at(&b, at).unwrap();
    file.sync_all().unwrap();
    block
}

#[test]
fn a_corrupt_edge_block_is_an_error_naming_the_block() {
    let dir = tempfile::tempdir().unwrap();
    let adj = random_adjacency(6000, 2, 21);
    let path = write_graph(dir.path(), "g", &adj, true, true);
    let v = (0..6000u32).find(|&v| adj[v as usize].len() > 5).unwrap();
    let hub = (0..6000u32)
        .find(|&v| adj[v as usize].len() > 4096)
        .unwrap();
    let block = corrupt_list_of(&path, v);
    let hub_block = corrupt_list_of(&path, hub);
    for prefer in [EnginePreference::Auto, EnginePreference::Pread] {
        for cache in [0u64, 64 << 10] {
            let ooc = OutOfCoreStore::open(
                &path,
                cache,
                &EngineOptions {
                    prefer,
                    ..EngineOptions::default()
                },
            )
            .unwrap();
            for (who, blk) in [(v, block), (hub, hub_block)] {
                for order in [FetchOrder::AsGiven, FetchOrder::ByBlock] {
                    let mut visited_bad = false;
                    let err = ooc
                        .for_each_list(Direction::Out, &[who], order, false, |x, _, _| {
                            visited_bad |= x == who;
                        })
                        .unwrap_err();
                    assert!(!visited_bad, "a corrupt list was handed out");
                    match &err {
                        StoreError::Corrupt { path: p, why } => {
                            assert_eq!(p, &path);
                            assert!(why.contains(&format!("block {blk}")), "{why}");
                        }
                        other => panic!("expected Corrupt, got {other:?}"),
                    }
                }
                let err = ooc
                    .scan_lists(Direction::Out, 0..6000, false, |_, _, _| {})
                    .unwrap_err();
                assert!(err.to_string().contains("block"), "{err}");
            }
            // Other lists still read fine.
            let ok: Vec<u32> = (0..6000u32)
                .filter(|&x| x != v && x != hub)
                .take(50)
                .collect();
            fetch(&ooc, Direction::In, &ok, FetchOrder::AsGiven, true);
        }
    }
}

#[test]
fn open_store_picks_the_path_by_size() {
    let dir = tempfile::tempdir().unwrap();
    let adj = random_adjacency(2000, 0, 4);
    let path = write_graph(dir.path(), "g", &adj, true, false);
    let len = std::fs::metadata(&path).unwrap().len();
    let mem = open_store(
        &path,
        &ReaderOptions {
            cache_bytes: len,
            io_depth: 8,
        },
    )
    .unwrap();
    assert!(mem.is_in_memory());
    let ooc = open_store(
        &path,
        &ReaderOptions {
            cache_bytes: len - 1,
            io_depth: 8,
        },
    )
    .unwrap();
    assert!(matches!(ooc, BlockStore::OutOfCore(_)));
    let desc = with_block_store!(&ooc, s => s.describe_reader());
    assert!(
        desc.starts_with("out of core (") && desc.contains("depth 8"),
        "{desc}"
    );
    let vs: Vec<u32> = (0..2000).collect();
    let a = with_block_store!(&mem, s => fetch(s, Direction::In, &vs, FetchOrder::ByBlock, false));
    let b = with_block_store!(&ooc, s => fetch(s, Direction::In, &vs, FetchOrder::ByBlock, false));
    assert!(a == b);
    assert!(open_store(&dir.path().join("missing"), &ReaderOptions::default()).is_err());
}

#[test]
fn vertices_out_of_range_are_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let adj = random_adjacency(100, 0, 4);
    let path = write_graph(dir.path(), "g", &adj, false, false);
    let ooc = OutOfCoreStore::open(&path, 0, &EngineOptions::default()).unwrap();
    assert!(ooc
        .for_each_list(
            Direction::Out,
            &[1, 100],
            FetchOrder::AsGiven,
            false,
            |_, _, _| {}
        )
        .is_err());
    assert!(ooc
        .scan_lists(Direction::Out, 0..101, false, |_, _, _| {})
        .is_err());
}

/// A list that first-fit packing placed thousands of blocks behind its neighbours in vertex
/// order (files written before the writer retired blocks after `MAX_OPEN_AGE`; written here
/// without that bound): a sequential scan keeps the chunk holding it while a later list still
/// needs it, so every block is read once per scan, however far apart its users are. (Scans
/// read 1 MiB chunks and release a chunk as soon as no remaining list of the range needs it.)
#[test]
fn a_scan_reads_each_block_once_even_when_packing_reaches_far_back() {
    let dir = tempfile::tempdir().unwrap();
    // v0 leaves its block half empty; lists of 600 never fit there, and the writer retires the
    // fullest open block first, so v0's block stays open until the last vertex's 400-list lands
    // in it, ~3000 blocks (12 chunks) later.
    let n = 3002u32;
    let mut rng = Xoshiro256::new(11);
    let list = |len: usize, rng: &mut Xoshiro256| -> Vec<(u32, f64)> {
        let mut set = std::collections::BTreeSet::new();
        while set.len() < len {
            set.insert(rng.below(n as u64) as u32);
        }
        set.into_iter().map(|u| (u, 1.0)).collect()
    };
    let mut adj: Adj = Vec::new();
    adj.push(list(500, &mut rng));
    for _ in 1..n - 1 {
        adj.push(list(600, &mut rng));
    }
    adj.push(list(400, &mut rng));
    let path = write_graph_packed(dir.path(), "far", &adj, true, false, u64::MAX);
    let file = GraphFile::open(&path).unwrap();
    let idx = file.vertex_index(Direction::Out);
    let spb = SLOTS_PER_BLOCK as u64;
    assert_eq!(
        idx.starts[0] / spb,
        idx.starts[(n - 1) as usize] / spb,
        "the test needs the last list packed into the first vertex's block"
    );
    // 16 MiB: 8 MiB of it for scan buffers, i.e. eight 1 MiB chunks, fewer than the file's 12.
    let ooc = OutOfCoreStore::open(&path, 16 << 20, &EngineOptions::default()).unwrap();
    let before = ooc.io_stats();
    let seen = scan(&ooc, Direction::Out, 0..n, false);
    let st = ooc.io_stats().since(&before);
    for (v, l) in adj.iter().enumerate() {
        let want: Vec<u32> = l.iter().map(|&(u, _)| u).collect();
        assert_eq!(seen[&(v as u32)].0, want, "list of {v}");
    }
    let all: Vec<u32> = (0..n).collect();
    assert_eq!(
        st.blocks_read as usize,
        needed_blocks(&file, Direction::Out, &all, false),
        "each block read once"
    );
}

#[test]
fn concurrent_callers_share_each_block_read() {
    let dir = tempfile::tempdir().unwrap();
    let n = 6000;
    let adj = random_adjacency(n, 2, 31);
    let path = write_graph(dir.path(), "g", &adj, true, true);
    let file = GraphFile::open(&path).unwrap();
    let all: Vec<u32> = (0..n).collect();
    for prefer in [EnginePreference::Auto, EnginePreference::Pread] {
        for order in [FetchOrder::AsGiven, FetchOrder::ByBlock] {
            for weights in [false, true] {
                // A cache that keeps every block, so any block read twice was read by two
                // callers at once.
                let ooc = OutOfCoreStore::open(
                    &path,
                    64 << 20,
                    &EngineOptions {
                        depth: 8,
                        prefer,
                        ..EngineOptions::default()
                    },
                )
                .unwrap();
                let start = std::sync::Barrier::new(3);
                std::thread::scope(|s| {
                    for t in 0..3u32 {
                        let (ooc, all, start) = (&ooc, &all, &start);
                        s.spawn(move || {
                            // Each caller walks the lists from a different point.
                            let mut vs = all.clone();
                            vs.rotate_left((t * n / 3) as usize);
                            start.wait();
                            let got = fetch(ooc, Direction::Out, &vs, order, weights);
                            assert_eq!(got.len(), n as usize);
                        });
                    }
                });
                assert_eq!(
                    ooc.io_stats().blocks_read as usize,
                    needed_blocks(&file, Direction::Out, &all, weights),
                    "{prefer:?} {order:?} weights {weights}"
                );
            }
        }
    }
}

#[test]
fn a_filtered_scan_reads_only_the_chunks_its_wanted_lists_need() {
    let dir = tempfile::tempdir().unwrap();
    let n = 6000;
    let adj = random_adjacency(n, 2, 41);
    let path = write_graph(dir.path(), "g", &adj, true, false);
    let file = GraphFile::open(&path).unwrap();
    let wanted = 4000..4100u32;
    // A cache under 1 MiB scans in chunks of 16 blocks.
    let chunk = 16u64;
    let ooc = OutOfCoreStore::open(&path, 64 << 10, &EngineOptions::default()).unwrap();
    let mut seen = Vec::new();
    ooc.scan_lists_where(
        Direction::Out,
        0..n,
        false,
        |v| wanted.contains(&v),
        |v, ns, _| {
            let want: Vec<u32> = adj[v as usize].iter().map(|x| x.0).collect();
            assert_eq!(ns, &want[..], "list of {v}");
            seen.push(v);
        },
    )
    .unwrap();
    assert_eq!(seen, wanted.clone().collect::<Vec<_>>());
    // The chunks (of the scan's grid, from the first block a wanted list uses) holding them.
    let idx = file.vertex_index(Direction::Out);
    let spb = SLOTS_PER_BLOCK as u64;
    let spans: Vec<(u64, u64)> = wanted
        .clone()
        .filter(|&v| idx.degrees[v as usize] > 0)
        .map(|v| {
            let (s, d) = (idx.starts[v as usize], idx.degrees[v as usize] as u64);
            (s / spb, (s + d - 1) / spb)
        })
        .collect();
    let lo = spans.iter().map(|s| s.0).min().unwrap();
    let chunks: BTreeSet<u64> = spans
        .iter()
        .flat_map(|&(a, b)| (a - lo) / chunk..=(b - lo) / chunk)
        .collect();
    let read = ooc.io_stats().blocks_read;
    let all = needed_blocks(&file, Direction::Out, &(0..n).collect::<Vec<_>>(), false) as u64;
    assert!(
        read <= chunks.len() as u64 * chunk && read < all / 4,
        "{read} blocks read for {} chunks of {chunk} (the whole section: {all})",
        chunks.len()
    );
}
