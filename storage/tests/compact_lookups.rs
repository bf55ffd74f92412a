//! The out-of-core reader's compact vertex index and id map answer exactly what the plain arrays
//! answer: on graph files from the writer (hubs, isolated vertices, both directions) and on
//! arbitrary entries no writer produces (empty lists away from slot 0, starts in any order, ids
//! with gaps of every size).

mod ooc_support;

use ooc_support::*;
use storage::blockfile::compact::{CompactFile, CompactIds, CompactIndex};
use storage::blockfile::open::GraphFile;
use storage::Direction;

#[test]
fn compact_file_equals_plain_file() {
    for (seed, directed, weighted) in [(1, true, false), (2, false, true), (3, true, true)] {
        let dir = tempfile::tempdir().unwrap();
        let n = 5000;
        let mut adj = random_adjacency(n, 4, seed);
        if !directed {
            adj = symmetrise(&adj);
        }
        let path = write_graph(dir.path(), "g", &adj, directed, weighted);
        let plain = GraphFile::open(&path).unwrap();
        let compact = CompactFile::open(&path).unwrap();
        assert_eq!(compact.shape(), plain.shape());
        assert_eq!(compact.block_crcs, plain.block_crcs);
        for d in [Direction::Out, Direction::In] {
            let (p, c) = (plain.vertex_index(d), compact.vertex_index(d));
            assert_eq!(c.len(), p.degrees.len() as u64);
            assert_eq!(c.max_degree(), p.degrees.iter().copied().max().unwrap());
            for v in 0..n {
                let i = v as usize;
                assert_eq!(c.entry(v), (p.starts[i], p.degrees[i]), "{d:?} vertex {v}");
                assert_eq!(c.block_of(v), p.block_of(v));
            }
        }
        for v in 0..n {
            let id = plain.input_id(v);
            assert_eq!(compact.ids.input_id(v), id);
            assert_eq!(compact.ids.internal_id(id), Some(v));
            // The ids are 10 + 3i: the ones between are absent.
            assert_eq!(compact.ids.internal_id(id + 1), None);
        }
        assert_eq!(compact.ids.internal_id(0), None);
        // The compact form is the point: well under the plain 12 bytes per vertex per
        // direction plus 8 per id.
        let dirs = if directed { 2 } else { 1 };
        let plain_bytes = n as u64 * (8 + 12 * dirs);
        assert!(
            compact.lookup_bytes() * 2 < plain_bytes,
            "{} bytes compact, {plain_bytes} plain",
            compact.lookup_bytes()
        );
    }
}

#[test]
fn compact_file_refuses_what_plain_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let adj = random_adjacency(3000, 1, 9);
    let path = write_graph(dir.path(), "g", &adj, true, false);
    let sb = GraphFile::open(&path).unwrap().superblock.clone();
    // Flip one byte in each small section: both openers name the same fault.
    for kind in [
        storage::blockfile::format::SectionKind::IdMap,
        storage::blockfile::format::SectionKind::OutIndex,
        storage::blockfile::format::SectionKind::InIndex,
    ] {
        let s = *sb.section(kind).unwrap();
        let bad = dir.path().join(format!("{kind:?}.frontier"));
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[(s.offset + s.length / 2) as usize] ^= 0x40;
        std::fs::write(&bad, &bytes).unwrap();
        let want = GraphFile::open(&bad).unwrap_err().to_string();
        let got = CompactFile::open(&bad).unwrap_err().to_string();
        assert_eq!(got, want);
        assert!(got.contains("checksum"), "{got}");
    }
}

#[test]
fn compact_index_equals_arbitrary_entries() {
    let mut rng = Xoshiro256::new(77);
    for round in 0..20 {
        let n = 1 + rng.below(3000) as usize;
        let mut entries = Vec::with_capacity(n);
        let mut next = rng.below(1 << 20);
        for _ in 0..n {
            let e = match rng.below(20) {
                // Empty lists: mostly at slot 0, some anywhere (no writer does that).
                0..=2 => (0, 0),
                3 => (rng.below(1 << 40), 0),
                // Hubs far away, and degrees up to 2^32-1.
                4 => (rng.below(u64::MAX / 2), u32::MAX - rng.below(5) as u32),
                5 => (rng.below(1 << 34), 100_000 + rng.below(1 << 20) as u32),
                // Starts that go backwards (first-fit into an older block).
                6..=8 => (next.saturating_sub(rng.below(50_000)), rng.below(64) as u32),
                _ => {
                    let d = rng.below(40) as u32;
                    next += d as u64 + rng.below(3);
                    (next, d)
                }
            };
            entries.push(e);
        }
        if round == 0 {
            entries.iter_mut().for_each(|e| *e = (0, 0));
        }
        let c = CompactIndex::from_entries(entries.iter().copied());
        assert_eq!(c.len(), n as u64);
        for (v, &(s, d)) in entries.iter().enumerate() {
            let v = v as u32;
            assert_eq!(c.entry(v), (s, d), "round {round} vertex {v}");
            assert_eq!(c.start(v), s);
            assert_eq!(c.degree(v), d);
        }
    }
}

#[test]
fn compact_ids_equal_ascending_ids_with_any_gaps() {
    let mut rng = Xoshiro256::new(5);
    for round in 0..30 {
        let n = rng.below(2000) as usize;
        let mut id = rng.below(1 << 40);
        let mut ids = Vec::with_capacity(n);
        for _ in 0..n {
            ids.push(id);
            id += match rng.below(10) {
                0 => 1 + rng.below(1 << 30),
                1..=3 => 1,
                _ => 1 + rng.below(4),
            };
        }
        if round % 5 == 0 {
            // Contiguous ids need no storage at all.
            ids = (0..n as u64).map(|i| 1000 + i).collect();
        }
        let c = CompactIds::from_ascending(ids.iter().copied());
        assert_eq!(c.len(), n as u64);
        if round % 5 == 0 {
            assert_eq!(c.heap_bytes(), 0);
        }
        for (v, &id) in ids.iter().enumerate() {
            assert_eq!(c.input_id(v as u32), id);
            assert_eq!(c.internal_id(id), Some(v as u32));
            if !ids.contains(&(id + 1)) {
                assert_eq!(c.internal_id(id + 1), None, "round {round}");
            }
        }
        if let Some(&first) = ids.first() {
            assert_eq!(c.internal_id(first.wrapping_sub(1)), None);
        }
        assert_eq!(c.internal_id(u64::MAX), None);
    }
    // The largest ids.
    let top = [u64::MAX - 2, u64::MAX - 1, u64::MAX];
    let c = CompactIds::from_ascending(top);
    assert_eq!(c.internal_id(u64::MAX), Some(2));
    let sparse = [0, u64::MAX / 3, u64::MAX];
    let c = CompactIds::from_ascending(sparse);
    assert_eq!(c.input_id(2), u64::MAX);
    assert_eq!(c.internal_id(u64::MAX / 3), Some(1));
}
