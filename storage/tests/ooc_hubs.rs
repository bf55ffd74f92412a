//! Hubs out of core: lists far longer than the cache come back exactly as in memory, while the
//! buffers that assemble them stay bounded — one hub at a time beyond the list reserve, and a
//! scan never holds all of a hub's chunks at once.

mod ooc_support;

use ooc_support::*;
use storage::blockfile::memory::MemoryStore;
use storage::blockfile::ooc::OutOfCoreStore;
use storage::io::EngineOptions;
use storage::{Direction, FetchOrder, GraphStore};

/// Hubs `0..hubs`, each joined to every leaf `hubs..hubs + leaves` (undirected, weighted).
fn stars(hubs: u32, leaves: u32) -> Adj {
    let mut adj: Adj = vec![Vec::new(); (hubs + leaves) as usize];
    for h in 0..hubs {
        for l in hubs..hubs + leaves {
            let w = (h * 7 + l % 13) as f64 + 0.5;
            adj[h as usize].push((l, w));
            adj[l as usize].push((h, w));
        }
    }
    adj
}

/// Bytes one list of `deg` neighbours takes once assembled.
fn list_bytes(deg: u32, weights: bool) -> u64 {
    deg as u64 * if weights { 12 } else { 4 }
}

const HUBS: u32 = 6;
const LEAVES: u32 = 200_000;

fn open(path: &std::path::Path, cache: u64) -> OutOfCoreStore {
    OutOfCoreStore::open(
        path,
        cache,
        &EngineOptions {
            depth: 8,
            ..EngineOptions::default()
        },
    )
    .unwrap()
}

#[test]
fn fetching_many_hubs_assembles_them_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_graph(dir.path(), "stars", &stars(HUBS, LEAVES), false, true);
    let mem = MemoryStore::load(&path).unwrap();
    let n = HUBS + LEAVES;
    // Every hub first, so a reader without a bound would assemble all of them at once.
    let all: Vec<u32> = (0..n).collect();
    let file_bytes = std::fs::metadata(&path).unwrap().len();
    for cache in [64u64 << 10, 16 << 20] {
        assert!(file_bytes > cache, "the graph does not fit the cache");
        for order in [FetchOrder::AsGiven, FetchOrder::ByBlock] {
            for weights in [false, true] {
                let ooc = open(&path, cache);
                let got = fetch(&ooc, Direction::Out, &all, order, weights);
                let want = fetch(&mem, Direction::Out, &all, order, weights);
                assert!(got == want, "cache {cache} {order:?} weights {weights}");
                let budget = ooc.list_budget();
                let one_hub = list_bytes(LEAVES, weights);
                assert!(
                    budget.high_water() <= budget.reserve() + one_hub,
                    "cache {cache} {order:?} weights {weights}: {} bytes of lists held, \
                     reserve {} and one hub {one_hub}",
                    budget.high_water(),
                    budget.reserve()
                );
                assert!(budget.high_water() >= one_hub, "the hubs were counted");
                assert!(budget.reserve() < HUBS as u64 * one_hub);
                assert_eq!(budget.in_use(), 0, "every list's budget handed back");
            }
        }
    }
}

#[test]
fn scanning_a_hub_holds_a_few_chunks_not_all_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_graph(dir.path(), "stars", &stars(HUBS, LEAVES), false, true);
    let mem = MemoryStore::load(&path).unwrap();
    let n = HUBS + LEAVES;
    for weights in [false, true] {
        let ooc = open(&path, 64 << 10);
        let got = scan(&ooc, Direction::Out, 0..n, weights);
        let want = scan(&mem, Direction::Out, 0..n, weights);
        assert!(got == want, "weights {weights}");
        let one_hub = list_bytes(LEAVES, weights);
        assert!(
            ooc.scan_buffer_high_water() < one_hub / 2,
            "weights {weights}: the scan held {} bytes of chunks for a {one_hub}-byte hub",
            ooc.scan_buffer_high_water()
        );
        assert!(ooc.list_budget().high_water() <= one_hub);
        assert_eq!(ooc.list_budget().in_use(), 0);
    }
}

#[test]
fn a_shared_pass_holds_its_reserve_and_a_read_per_worker_not_the_hubs() {
    // More hubs than the other tests: together they must outweigh the reserve and the block
    // cache's room.
    let hubs = 16;
    let dir = tempfile::tempdir().unwrap();
    let path = write_graph(dir.path(), "stars", &stars(hubs, LEAVES), false, true);
    let mem = MemoryStore::load(&path).unwrap();
    let n = hubs + LEAVES;
    for weights in [false, true] {
        let ooc = open(&path, 8 << 20);
        assert!(ooc.scan_reserve() > 0);
        let workers = 3;
        let got = shared_pass(&ooc, Direction::Out, weights, workers).expect("scan buffers");
        let want = scan(&mem, Direction::Out, 0..n, weights);
        assert!(got == want, "weights {weights}");
        // Beyond its reserve and the block cache's room (lent to it), a pass holds at most the
        // read each worker waits for (edges, and weights at twice their size).
        let all_hubs = hubs as u64 * list_bytes(LEAVES, weights);
        let read_most = ooc.scan_read_blocks() * 4096 * if weights { 3 } else { 1 };
        let bound = ooc.scan_reserve() + ooc.cache().capacity_bytes() + workers as u64 * read_most;
        assert!(
            bound < all_hubs,
            "the test's hubs are too small to show anything"
        );
        assert!(
            ooc.scan_buffer_high_water() <= bound,
            "weights {weights}: the pass held {} bytes of reads, reserve {}",
            ooc.scan_buffer_high_water(),
            ooc.scan_reserve()
        );
        assert!(ooc.list_budget().high_water() <= workers as u64 * list_bytes(LEAVES, weights));
        assert_eq!(ooc.list_budget().in_use(), 0);
        assert!(
            ooc.cache().lend(1).is_some(),
            "the pass gave the cache's room back"
        );
    }
}

#[test]
fn a_shared_pass_asked_to_stop_ends_early_without_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_graph(dir.path(), "stars", &stars(HUBS, LEAVES), false, false);
    let ooc = open(&path, 8 << 20);
    let visited = std::sync::atomic::AtomicU32::new(0);
    let run_workers = on_threads(2);
    let ran = ooc
        .scan_all_shared(Direction::In, false, &run_workers, &|| true, &|_, _, _| {
            visited.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .unwrap();
    assert!(ran);
    let visited = visited.into_inner();
    assert!(
        visited < HUBS + LEAVES,
        "{visited} lists visited after the pass was asked to stop"
    );
    assert_eq!(ooc.list_budget().in_use(), 0);
}

#[test]
fn a_shared_pass_whose_workers_never_ran_or_panicked_fails_rather_than_hangs() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_graph(dir.path(), "stars", &stars(HUBS, LEAVES), false, false);
    let ooc = open(&path, 8 << 20);
    // No worker ran: the pass must not report success with nothing visited.
    let err = ooc
        .scan_all_shared(Direction::In, false, &|_| {}, &|| false, &|_, _, _| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("unvisited"), "{err}");
    // A visitor that panics: the panic reaches the caller, and the reader thread ends.
    let run_workers = on_threads(2);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ooc.scan_all_shared(Direction::In, false, &run_workers, &|| false, &|v, _, _| {
            if v == HUBS + 7 {
                panic!("visitor failed");
            }
        })
    }));
    assert!(panicked.is_err());
    // The store still serves a whole pass afterwards.
    let mem = MemoryStore::load(&path).unwrap();
    let got = shared_pass(&ooc, Direction::In, false, 2).expect("scan buffers");
    assert!(got == scan(&mem, Direction::In, 0..HUBS + LEAVES, false));
}
