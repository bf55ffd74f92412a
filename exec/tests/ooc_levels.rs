//! Out of core, a traversal level reads each block it needs at most once, whatever the cache
//! size: blocks read (a deterministic counter) against the distinct blocks of the level's
//! frontier, and results equal to the in-memory run.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{f64_col, i64_col, u64_col, Lcg};
use exec::algorithms::call;
use exec::{run, RunConfig};
use planner::Mode;
use storage::blockfile::format::SLOTS_PER_BLOCK;
use storage::blockfile::memory::MemoryStore;
use storage::blockfile::ooc::OutOfCoreStore;
use storage::blockfile::open::GraphFile;
use storage::blockfile::writer::{write_graph_file, GraphFileContents, ListWriter};
use storage::io::EngineOptions;
use storage::Direction;

/// An undirected graph of `n` vertices, every list far shorter than a block (so a list lies in
/// one block), written as a block file.
fn write_sparse_graph(dir: &Path, n: u32, degree: u64, seed: u64) -> PathBuf {
    let mut rng = Lcg(seed);
    let mut adj: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); n as usize];
    for v in 0..n {
        for _ in 0..rng.below(2 * degree) {
            let u = rng.below(n as u64) as u32;
            adj[v as usize].insert(u);
            adj[u as usize].insert(v);
        }
    }
    write_undirected(dir, &adj)
}

/// A band: `v` is joined to `v + 1 ..= v + width`, so BFS from 0 visits the ids in order and
/// the vertices still unvisited at a level are the highest ids.
fn write_band_graph(dir: &Path, n: u32, width: u32) -> PathBuf {
    let mut adj: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); n as usize];
    for v in 0..n {
        for u in v + 1..=(v + width).min(n - 1) {
            adj[v as usize].insert(u);
            adj[u as usize].insert(v);
        }
    }
    write_undirected(dir, &adj)
}

fn write_undirected(dir: &Path, adj: &[BTreeSet<u32>]) -> PathBuf {
    let n = adj.len() as u32;
    let mut w = ListWriter::new(dir, "sparse-out", n, false).unwrap();
    for (v, l) in adj.iter().enumerate() {
        let ns: Vec<u32> = l.iter().copied().collect();
        assert!(ns.len() < SLOTS_PER_BLOCK / 4);
        w.push(v as u32, &ns, None).unwrap();
    }
    let out = w.finish().unwrap();
    let arcs: u64 = adj.iter().map(|l| l.len() as u64).sum();
    let dest = dir.join("sparse.frontier");
    write_graph_file(
        &dest,
        &GraphFileContents {
            order: storage::blockfile::format::IdOrder::Key,
            identity: storage::blockfile::format::FileIdentity::new(
                "sparse",
                1,
                "test adjacency",
                storage::catalog::StorageKind::Blockfile,
            ),
            ids: (0..n as u64).collect(),
            keys: None,
            edges: arcs / 2,
            directed: false,
            weighted: false,
            out,
            inn: None,
        },
    )
    .unwrap();
    dest
}

/// The distinct edge blocks holding the lists of `vs`.
/// BFS depths from vertex 0 with the graph in memory (the reference).
fn bfs_depths_in_memory(path: &Path) -> Vec<Option<i64>> {
    let t = run(
        &MemoryStore::load(path).unwrap(),
        &call("bfs").from(0),
        &RunConfig::with_threads(2),
    )
    .unwrap();
    i64_col(&t, "depth")
}

/// BFS from vertex 0 out of core under `auto`.
fn bfs_out_of_core(store: &OutOfCoreStore, threads: usize) -> exec::ResultTable {
    run(
        store,
        &call("bfs").from(0),
        &RunConfig::with_threads(threads),
    )
    .unwrap()
}

fn blocks_of(file: &GraphFile, vs: &[u32]) -> usize {
    let idx = file.vertex_index(Direction::Out);
    let spb = SLOTS_PER_BLOCK as u64;
    vs.iter()
        .filter(|&&v| idx.degrees[v as usize] > 0)
        .map(|&v| idx.starts[v as usize] / spb)
        .collect::<BTreeSet<u64>>()
        .len()
}

#[test]
fn a_push_level_reads_each_block_at_most_once() {
    let dir = tempfile::tempdir().unwrap();
    let n = 30_000;
    let path = write_sparse_graph(dir.path(), n, 6, 11);
    let file = GraphFile::open(&path).unwrap();
    let depths = bfs_depths_in_memory(&path);
    // A cache of a few blocks: a block evicted between two of its vertices would be re-read.
    for cache in [4096u64, 8 << 10, 64 << 10] {
        for threads in [1, 2] {
            let store = OutOfCoreStore::open(
                &path,
                cache,
                &EngineOptions {
                    depth: 8,
                    ..EngineOptions::default()
                },
            )
            .unwrap();
            let cfg = RunConfig {
                mode: Mode::Push,
                ..RunConfig::with_threads(threads)
            };
            let t = run(&store, &call("bfs").from(0), &cfg).unwrap();
            assert_eq!(i64_col(&t, "depth"), depths, "cache {cache}");
            assert!(t.iterations.len() > 3);
            for it in &t.iterations {
                let level: Vec<u32> = (0..n)
                    .filter(|&v| depths[v as usize] == Some(it.iteration as i64))
                    .collect();
                assert_eq!(it.active, level.len() as u64);
                let needed = blocks_of(&file, &level) as u64;
                assert!(
                    it.blocks_read <= needed,
                    "cache {cache}, {threads} threads, level {}: {} blocks read, {needed} needed",
                    it.iteration,
                    it.blocks_read
                );
            }
        }
    }
}

#[test]
fn a_pull_level_reads_only_the_chunks_of_vertices_still_unvisited() {
    let dir = tempfile::tempdir().unwrap();
    let n = 6000;
    let path = write_band_graph(dir.path(), n, 100);
    let file = GraphFile::open(&path).unwrap();
    let depths = bfs_depths_in_memory(&path);
    let idx = file.vertex_index(Direction::Out);
    let spb = SLOTS_PER_BLOCK as u64;
    let blocks = |v: u32| {
        let s = idx.starts[v as usize];
        (s / spb, (s + idx.degrees[v as usize] as u64 - 1) / spb)
    };
    // A cache of 4 MiB (the file is larger): scans read chunks of 64 blocks, one partial chunk
    // at each end of a worker's range at most.
    let cache = 4 << 20;
    assert!(std::fs::metadata(&path).unwrap().len() > cache);
    let slack = 2 * 64 * 2;
    for threads in [1, 2] {
        let store = OutOfCoreStore::open(&path, cache, &EngineOptions::default()).unwrap();
        let cfg = RunConfig {
            mode: Mode::Pull,
            ..RunConfig::with_threads(threads)
        };
        let t = run(&store, &call("bfs").from(0), &cfg).unwrap();
        assert_eq!(i64_col(&t, "depth"), depths);
        assert!(t.iterations.len() > 20);
        for it in &t.iterations {
            // The blocks from the first to the last that an unvisited vertex's list uses.
            let unvisited: Vec<(u64, u64)> = (0..n)
                .filter(|&v| depths[v as usize].is_none_or(|d| d > it.iteration as i64))
                .map(blocks)
                .collect();
            let lo = unvisited.iter().map(|b| b.0).min().unwrap_or(0);
            let hi = unvisited.iter().map(|b| b.1).max().unwrap_or(0);
            let tail = hi + 1 - lo;
            assert!(
                it.blocks_read <= tail + slack,
                "{threads} threads, level {}: {} blocks read, the unvisited lists lie in {tail}",
                it.iteration,
                it.blocks_read
            );
        }
    }
}

#[test]
fn auto_reads_a_push_level_needing_most_blocks_by_a_scan() {
    let dir = tempfile::tempdir().unwrap();
    let n = 30_000;
    let path = write_sparse_graph(dir.path(), n, 6, 23);
    let depths = bfs_depths_in_memory(&path);
    for threads in [1, 2] {
        let store = OutOfCoreStore::open(&path, 64 << 10, &EngineOptions::default()).unwrap();
        let t = bfs_out_of_core(&store, threads);
        assert_eq!(i64_col(&t, "depth"), depths);
        let strategies: Vec<&str> = t.iterations.iter().map(|i| i.strategy).collect();
        // The first level needs one block; a later sparse one touches most of them.
        assert_eq!(strategies[0], "push", "{strategies:?}");
        assert!(strategies.contains(&"scan push"), "{strategies:?}");
        // Forced push never scans.
        let cfg = RunConfig {
            mode: Mode::Push,
            ..RunConfig::with_threads(threads)
        };
        let forced = run(&store, &call("bfs").from(0), &cfg).unwrap();
        assert_eq!(i64_col(&forced, "depth"), depths);
        assert!(forced.iterations.iter().all(|i| i.strategy == "push"));
    }
}

#[test]
fn a_selective_scan_reads_the_coalesced_plan_of_the_wanted_lists() {
    use storage::io::plan::{blocks_of as plan_blocks, coalesce};
    use storage::io::DeviceCosts;
    use storage::GraphStore;

    let dir = tempfile::tempdir().unwrap();
    let n = 30_000;
    let path = write_sparse_graph(dir.path(), n, 6, 31);
    let file = GraphFile::open(&path).unwrap();
    let memory = MemoryStore::load(&path).unwrap();
    let csr = memory.csr(Direction::Out).unwrap();
    let idx = file.vertex_index(Direction::Out);
    let spb = SLOTS_PER_BLOCK as u64;
    let span = |v: u32| {
        let s = idx.starts[v as usize];
        (s / spb, (s + idx.degrees[v as usize] as u64 - 1) / spb)
    };
    // The vertices whose lists lie in blocks 0 and 1 of every 9: needed pairs 7 blocks apart.
    let wanted = |v: u32| idx.degrees[v as usize] > 0 && span(v).0 % 9 < 2;
    let needed: u64 = (0..n)
        .filter(|&v| wanted(v))
        .flat_map(|v| span(v).0..=span(v).1)
        .collect::<BTreeSet<u64>>()
        .len() as u64;
    // A device where no gap is worth reading (gap 0) and one where gaps of 8 are.
    let fast = DeviceCosts {
        random_reads_per_sec: 250_000.0,
        seq_bytes_per_sec: 1.0e9,
    };
    let slow = DeviceCosts {
        random_reads_per_sec: 50_000.0,
        seq_bytes_per_sec: 2.0e9,
    };
    for (costs, gap) in [(fast, 0), (slow, 8)] {
        // 16 MiB: 1 MiB scan reads and room for every chunk, so nothing is re-read.
        let mut store = OutOfCoreStore::open(&path, 16 << 20, &EngineOptions::default()).unwrap();
        store.set_device_costs(costs);
        let model = store.read_model().unwrap();
        assert_eq!(model.max_gap, gap);
        let before = store.io_stats();
        let mut got = Vec::new();
        store
            .scan_lists_where(Direction::Out, 0..n, false, wanted, |v, ns, _| {
                got.push((v, ns.to_vec()))
            })
            .unwrap();
        let expect: Vec<(u32, Vec<u32>)> = (0..n)
            .filter(|&v| wanted(v))
            .map(|v| (v, csr.neighbours(v).to_vec()))
            .collect();
        assert_eq!(got, expect);
        let mut spans: Vec<(u64, u64)> = (0..n).filter(|&v| wanted(v)).map(span).collect();
        let plan = coalesce(&mut spans, model.max_gap, model.max_read_blocks);
        let read = store.io_stats().since(&before).blocks_read;
        assert_eq!(read, plan_blocks(&plan), "gap {gap}");
        if gap == 0 {
            assert_eq!(read, needed);
        } else {
            // Every 7-block gap is read through: about all of the blocks up to the last needed.
            assert!(read > 3 * needed, "{read} blocks read, {needed} needed");
        }
    }
}

/// A core of 250 vertices joined to each other (most of the arcs), each with 4 leaves whose ids
/// sit between the core's (so their one-entry lists are packed among the core's lists, all over
/// the file), a 3-vertex tail hanging off leaf 6 and, apart, a triangle. BFS from 0: the core
/// and 0's leaves, then every other leaf (a frontier of short lists spread over most blocks, far
/// under Ligra's |E|/20, so the density rule pushes), then the tail.
fn write_core_and_leaves(dir: &Path) -> PathBuf {
    let core = 250u32;
    let n = core * 5 + 3 + 3;
    let mut adj: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); n as usize];
    let mut join = |a: u32, b: u32| {
        adj[a as usize].insert(b);
        adj[b as usize].insert(a);
    };
    for i in 0..core {
        for j in i + 1..core {
            join(i * 5, j * 5);
        }
        for leaf in 1..5 {
            join(i * 5, i * 5 + leaf);
        }
    }
    let tail = core * 5;
    join(6, tail);
    join(tail, tail + 1);
    join(tail + 1, tail + 2);
    let tri = tail + 3;
    join(tri, tri + 1);
    join(tri + 1, tri + 2);
    join(tri, tri + 2);
    write_undirected(dir, &adj)
}

#[test]
fn auto_pulls_a_level_whose_unvisited_lists_lie_in_fewer_blocks_than_its_frontiers() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_core_and_leaves(dir.path());
    let file = GraphFile::open(&path).unwrap();
    let n = file.vertex_index(Direction::Out).degrees.len() as u32;
    let depths = bfs_depths_in_memory(&path);
    let at = |d: i64| -> Vec<u32> { (0..n).filter(|&v| depths[v as usize] == Some(d)).collect() };
    let after = |d: i64| -> Vec<u32> {
        (0..n)
            .filter(|&v| depths[v as usize].is_none_or(|x| x > d))
            .collect()
    };
    // Level 2's frontier (the other cores' leaves) spreads over most blocks; what is still
    // unvisited then (the tail and the triangle) over very few.
    let push_blocks = blocks_of(&file, &at(2));
    let pull_blocks = blocks_of(&file, &after(2));
    assert!(
        push_blocks >= 20 && pull_blocks <= 2,
        "{push_blocks} vs {pull_blocks}"
    );
    for threads in [1, 2] {
        let store = OutOfCoreStore::open(&path, 64 << 10, &EngineOptions::default()).unwrap();
        let t = bfs_out_of_core(&store, threads);
        assert_eq!(i64_col(&t, "depth"), depths);
        let level = &t.iterations[2];
        assert_eq!(level.active, at(2).len() as u64);
        assert_eq!(level.strategy, "pull", "{:?}", t.iterations);
        // The pull reads the unvisited lists' blocks (and at most a short gap between them),
        // not the frontier's.
        assert!(
            level.blocks_read <= 5,
            "{threads} threads: level 2 read {} blocks (push needs {push_blocks})",
            level.blocks_read
        );
    }
}

#[test]
fn wcc_out_of_core_reads_the_file_once_and_then_only_the_lists_outside_the_big_component() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_core_and_leaves(dir.path());
    let file = GraphFile::open(&path).unwrap();
    let memory = run(
        &MemoryStore::load(&path).unwrap(),
        &call("wcc"),
        &RunConfig::with_threads(2),
    )
    .unwrap();
    let components = u64_col(&memory, "component");
    let n = components.len() as u32;
    let idx = file.vertex_index(Direction::Out);
    let spb = SLOTS_PER_BLOCK as u64;
    let edge_blocks = (0..n as usize)
        .filter(|&v| idx.degrees[v] > 0)
        .map(|v| (idx.starts[v] + idx.degrees[v] as u64 - 1) / spb + 1)
        .max()
        .unwrap();
    for threads in [1, 2] {
        for cache in [4096u64, 64 << 10] {
            let store = OutOfCoreStore::open(&path, cache, &EngineOptions::default()).unwrap();
            let t = run(&store, &call("wcc"), &RunConfig::with_threads(threads)).unwrap();
            assert_eq!(u64_col(&t, "component"), components);
            let rounds: Vec<(&str, u64)> = t
                .iterations
                .iter()
                .map(|i| (i.strategy, i.blocks_read))
                .collect();
            assert_eq!(rounds.len(), 2, "{rounds:?}");
            assert_eq!(rounds[0].0, "link sample");
            assert_eq!(rounds[1].0, "link");
            // The sample reads the file about once: a block is read again only when a tiny
            // cache dropped it before another list needed it. Short lists fill the gaps of
            // earlier blocks (first-fit), so the range after a cut between two workers' ranges
            // reads again some blocks of the range before it (here 9 at a cut mid-core).
            assert!(
                rounds[0].1 >= edge_blocks && rounds[0].1 <= edge_blocks + edge_blocks / 4,
                "{threads} threads, cache {cache}: {rounds:?} of {edge_blocks}"
            );
            // The finish reads only the triangle's lists (the rest joined the big component).
            assert!(rounds[1].1 <= 2, "{rounds:?}");
        }
    }
}

#[test]
fn pagerank_out_of_core_gives_the_in_memory_ranks_bit_for_bit_whoever_takes_which_range() {
    // Enough vertices for a pass of about ten equal-work pieces, so that workers take ranges
    // from both ends of the file and meet in its middle.
    let dir = tempfile::tempdir().unwrap();
    let n = 40_000;
    let path = write_sparse_graph(dir.path(), n, 4, 11);
    let pagerank = call("pagerank").with("iter", 3u64).with("damping", 0.85);
    let in_memory = run(
        &MemoryStore::load(&path).unwrap(),
        &pagerank,
        &RunConfig::with_threads(2),
    )
    .unwrap();
    let expected: Vec<Option<u64>> = f64_col(&in_memory, "rank")
        .into_iter()
        .map(|r| r.map(f64::to_bits))
        .collect();
    assert_eq!(expected.len(), n as usize);
    for threads in [1, 2, 3] {
        for cache in [64u64 << 10, 2 << 20] {
            let store = OutOfCoreStore::open(&path, cache, &EngineOptions::default()).unwrap();
            let t = run(&store, &pagerank, &RunConfig::with_threads(threads)).unwrap();
            let got: Vec<Option<u64>> = f64_col(&t, "rank")
                .into_iter()
                .map(|r| r.map(f64::to_bits))
                .collect();
            let differing = expected.iter().zip(&got).filter(|(a, b)| a != b).count();
            assert_eq!(
                differing, 0,
                "{threads} threads, cache {cache}: ranks differ"
            );
        }
    }
}
