//! Damaged graph files are refused: any flipped byte in the superblock (section table
//! included) or in a small section at open, truncation at open, and a flipped edge or weight
//! byte by `verify_file` (naming the block and its section), by `MemoryStore::load` and by an
//! out-of-core scan.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use storage::blockfile::format::{SectionKind, BLOCK_SIZE};
use storage::blockfile::memory::MemoryStore;
use storage::blockfile::open::GraphFile;
use storage::blockfile::verify::verify_file;
use storage::import::InputFormat;
use storage::StoreError;

fn make(dir: &Path) -> PathBuf {
    let src = dir.join("g.txt");
    let mut edges = Vec::new();
    for i in 0..3000u64 {
        edges.push((i % 50, (i * 7919) % 2000, (i % 10) as f64));
    }
    write_edgelist(&src, &edges, true);
    let dest = dir.join("g.frontier");
    let mut req = request(&src, InputFormat::Edgelist, &dest, dir);
    req.weighted = true;
    run(&req).unwrap();
    dest
}

fn flipped(good: &[u8], at: usize, path: &Path) {
    let mut b = good.to_vec();
    b[at] ^= 0x10;
    std::fs::write(path, b).unwrap();
}

#[test]
fn flipped_superblock_and_small_section_bytes_are_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let g = make(dir.path());
    let good = std::fs::read(&g).unwrap();
    let gf = GraphFile::open(&g).unwrap();
    let bad = dir.path().join("bad.frontier");
    for at in 0..BLOCK_SIZE {
        flipped(&good, at, &bad);
        let err = GraphFile::open(&bad).unwrap_err();
        assert!(
            matches!(err, StoreError::Corrupt { .. }),
            "byte {at}: {err}"
        );
    }
    for kind in [
        SectionKind::IdMap,
        SectionKind::OutIndex,
        SectionKind::InIndex,
        SectionKind::BlockCrcs,
    ] {
        let s = gf.superblock.section(kind).unwrap();
        for at in [s.offset, s.offset + s.length / 2, s.offset + s.length - 1] {
            flipped(&good, at as usize, &bad);
            let err = GraphFile::open(&bad).unwrap_err().to_string();
            assert!(
                err.contains(&format!("{kind:?}")) && err.contains("checksum"),
                "{err}"
            );
        }
    }
}

#[test]
fn truncated_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let g = make(dir.path());
    let good = std::fs::read(&g).unwrap();
    let bad = dir.path().join("bad.frontier");
    for len in [0, 100, BLOCK_SIZE, good.len() / 2, good.len() - 1] {
        std::fs::write(&bad, &good[..len]).unwrap();
        let err = GraphFile::open(&bad).unwrap_err();
        assert!(
            matches!(err, StoreError::Corrupt { .. }),
            "len {len}: {err}"
        );
        assert!(err.to_string().contains("truncated"), "len {len}: {err}");
        assert!(verify_file(&bad).is_err());
        assert!(MemoryStore::load(&bad).is_err());
    }
}

#[test]
fn verify_names_a_flipped_edge_block() {
    let dir = tempfile::tempdir().unwrap();
    let g = make(dir.path());
    let report = verify_file(&g).unwrap();
    assert_eq!(
        report.blocks_checked as usize,
        std::fs::metadata(&g).unwrap().len() as usize / BLOCK_SIZE - 1 - 1
    );
    let good = std::fs::read(&g).unwrap();
    let gf = GraphFile::open(&g).unwrap();
    let bad = dir.path().join("bad.frontier");
    for kind in [SectionKind::OutEdges, SectionKind::InWeights] {
        let s = gf.superblock.section(kind).unwrap();
        assert!(s.blocks() >= 2, "{kind:?} has {} blocks", s.blocks());
        let at = s.offset + BLOCK_SIZE as u64 + 17;
        flipped(&good, at as usize, &bad);
        let block = at / BLOCK_SIZE as u64;
        let err = verify_file(&bad).unwrap_err().to_string();
        assert!(
            err.contains(&format!("block {block} (section {kind:?}, its block 1)")),
            "{err}"
        );
        // Open does not read edge blocks; the in-memory load checks every one.
        GraphFile::open(&bad).unwrap();
        let err = MemoryStore::load(&bad).unwrap_err().to_string();
        assert!(err.contains(&format!("block {block}")), "{err}");
    }
}

/// `good` with slot 0 of the first out-edge block set to `id`, every checksum over it made
/// right again: a file only a wrong writer (or a forger) makes.
fn with_first_slot(good: &[u8], id: u32, path: &Path) {
    let gf_path = path.with_extension("good");
    std::fs::write(&gf_path, good).unwrap();
    let sb = GraphFile::open(&gf_path).unwrap().superblock.clone();
    let mut b = good.to_vec();
    let edges = *sb.section(SectionKind::OutEdges).unwrap();
    let crcs = *sb.section(SectionKind::BlockCrcs).unwrap();
    let at = edges.offset as usize;
    b[at..at + 4].copy_from_slice(&id.to_le_bytes());
    let block = at / BLOCK_SIZE;
    let crc = crc32fast::hash(&b[at..at + BLOCK_SIZE]);
    let entry = crcs.offset as usize + 4 * block;
    b[entry..entry + 4].copy_from_slice(&crc.to_le_bytes());
    // The section table's checksums of both sections, then the superblock's own.
    for (i, s) in sb.sections.iter().enumerate() {
        let from = s.offset as usize;
        let crc = crc32fast::hash(&b[from..from + s.length as usize]);
        let at = 48 + 32 * i + 24;
        b[at..at + 4].copy_from_slice(&crc.to_le_bytes());
    }
    let crc = crc32fast::hash(&b[..BLOCK_SIZE - 4]);
    b[BLOCK_SIZE - 4..BLOCK_SIZE].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(path, b).unwrap();
}

#[test]
fn a_neighbour_past_the_vertices_in_a_checksum_valid_file_is_refused() {
    use storage::blockfile::ooc::OutOfCoreStore;
    use storage::{Direction, FetchOrder, GraphStore};
    let dir = tempfile::tempdir().unwrap();
    let g = make(dir.path());
    let good = std::fs::read(&g).unwrap();
    let n = GraphFile::open(&g).unwrap().superblock.vertices as u32;
    let bad = dir.path().join("bad.frontier");
    // The slot rewritten with a vertex passes every check: the checksums are right.
    with_first_slot(&good, n - 1, &bad);
    let ooc = OutOfCoreStore::open(&bad, 64 << 10, &Default::default()).unwrap();
    ooc.scan_lists(Direction::Out, 0..n, false, |_, _, _| {})
        .unwrap();
    for id in [n, n + 7, u32::MAX - 1] {
        with_first_slot(&good, id, &bad);
        let ooc = OutOfCoreStore::open(&bad, 64 << 10, &Default::default()).unwrap();
        let mut visited_bad = false;
        let scanned = ooc.scan_lists(Direction::Out, 0..n, false, |_, ns, _| {
            visited_bad |= ns.iter().any(|&u| u >= n);
        });
        let err = scanned.unwrap_err().to_string();
        assert!(err.contains(&format!("holds {id}, not a vertex")), "{err}");
        assert!(!visited_bad, "a list with {id} was visited");
        let fetched = ooc.for_each_list(
            Direction::Out,
            &(0..n).collect::<Vec<_>>(),
            FetchOrder::ByBlock,
            false,
            |_, _, _| {},
        );
        let err = fetched.unwrap_err().to_string();
        assert!(err.contains(&format!("holds {id}, not a vertex")), "{err}");
        let err = MemoryStore::load(&bad).unwrap_err().to_string();
        assert!(err.contains(&id.to_string()), "{err}");
    }
}

#[test]
fn an_out_of_core_scan_names_a_flipped_edge_or_weight_block() {
    use storage::blockfile::ooc::OutOfCoreStore;
    use storage::{Direction, GraphStore};
    let dir = tempfile::tempdir().unwrap();
    let g = make(dir.path());
    let good = std::fs::read(&g).unwrap();
    let gf = GraphFile::open(&g).unwrap();
    let n = gf.superblock.vertices as u32;
    let bad = dir.path().join("bad.frontier");
    for kind in [SectionKind::OutEdges, SectionKind::OutWeights] {
        let s = gf.superblock.section(kind).unwrap();
        let at = s.offset + BLOCK_SIZE as u64 + 5;
        flipped(&good, at as usize, &bad);
        let block = at / BLOCK_SIZE as u64;
        for cache in [64 << 10, 1 << 20] {
            let ooc = OutOfCoreStore::open(&bad, cache, &Default::default()).unwrap();
            let mut visited = 0;
            let err = ooc
                .scan_lists(Direction::Out, 0..n, true, |_, _, _| visited += 1)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!("block {block} fails its checksum")),
                "{kind:?}: {err}"
            );
            assert!(visited < n, "{kind:?}: every list was visited");
        }
        // One pass shared by two workers names it too.
        let ooc = OutOfCoreStore::open(&bad, 8 << 20, &Default::default()).unwrap();
        let run_workers = |job: &storage::WorkerJob<'_>| {
            std::thread::scope(|s| {
                s.spawn(|| job(0));
                s.spawn(|| job(1));
            })
        };
        let err = ooc
            .scan_all_shared(Direction::Out, true, &run_workers, &|| false, &|_, _, _| {})
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("block {block} fails its checksum")),
            "{kind:?}: {err}"
        );
    }
}

#[test]
fn a_spreading_call_refuses_a_stray_id_or_filler_inside_a_list_it_carries_on() {
    use storage::blockfile::format::SLOTS_PER_BLOCK;
    use storage::blockfile::ooc::OutOfCoreStore;
    use storage::{Direction, GraphStore};
    let dir = tempfile::tempdir().unwrap();
    let g = make(dir.path());
    let good = std::fs::read(&g).unwrap();
    let n = GraphFile::open(&g).unwrap().superblock.vertices as u32;
    let bad = dir.path().join("bad.frontier");
    // The list rewritten starts at slot 0; the others of its block are the seeds, and the
    // first visit pushes it, so it is carried on from the block the call keeps.
    let ooc = OutOfCoreStore::open(&g, 64 << 10, &Default::default()).unwrap();
    let in_block_0 = |v: &u32| {
        ooc.degree(Direction::Out, *v) > 0
            && ooc.list_offset(Direction::Out, *v).unwrap() < SLOTS_PER_BLOCK as u64
    };
    let first = (0..n)
        .find(|v| in_block_0(v) && ooc.list_offset(Direction::Out, *v) == Some(0))
        .unwrap();
    let seeds: Vec<u32> = (0..n).filter(|v| in_block_0(v) && *v != first).collect();
    assert!(!seeds.is_empty());
    for id in [n, u32::MAX - 1, u32::MAX] {
        with_first_slot(&good, id, &bad);
        let ooc = OutOfCoreStore::open(&bad, 64 << 10, &Default::default()).unwrap();
        let mut pushed = false;
        let mut visited_bad = false;
        let mut left = Vec::new();
        let spread = ooc.for_each_list_spreading(
            Direction::Out,
            &seeds,
            false,
            |_, ns, _, more| {
                visited_bad |= ns.iter().any(|&u| u >= n);
                if !pushed {
                    more.push(first);
                    pushed = true;
                }
            },
            &mut left,
        );
        let err = spread.unwrap_err().to_string();
        assert!(err.contains(&format!("holds {id}, not a vertex")), "{err}");
        assert!(!visited_bad, "a list with {id} was visited");
        assert!(left.is_empty(), "the pushed list was not carried on");
    }
}
