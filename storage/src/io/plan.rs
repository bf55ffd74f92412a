//! Read plans: which reads fetch a set of needed blocks, and what they cost on this device.
//!
//! A sparse level needs scattered blocks. Reading each on its own pays the device's per-read
//! cost every time; reading one large range pays for every block in it, needed or not. Between
//! the two, needed blocks separated by a gap small enough that streaming through it costs less
//! than starting another read are joined into one read (FlashGraph and Graphene merge requests
//! the same way). [`DeviceCosts`] prices a plan from `frontier calibrate`'s figures, so the gap
//! that is worth reading through, and whether a level is read block by block or coalesced, come
//! from the device rather than from a fixed ratio.

use std::ops::Range;
use std::path::Path;

use crate::blockfile::format::BLOCK_SIZE;

/// What one read of `n` blocks costs, modelled as a fixed part (submission, seek, completion)
/// plus `n` blocks at the sequential rate: the two figures `frontier calibrate` stores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeviceCosts {
    /// 4 KiB random reads per second at the probed depth (`peak_reads_per_sec`).
    pub random_reads_per_sec: f64,
    /// Bytes per second of large sequential reads (`seq_mb_per_sec` × 10^6).
    pub seq_bytes_per_sec: f64,
}

impl DeviceCosts {
    /// Used when the data directory holds no probe: round figures from fio on the SSD this
    /// project is measured on (random 4 KiB reads at depth 32, 1 MiB sequential reads), so that
    /// an unprobed directory is priced like a typical SSD rather than not at all.
    pub const FALLBACK: DeviceCosts = DeviceCosts {
        random_reads_per_sec: 60_000.0,
        seq_bytes_per_sec: 1.0e9,
    };

    /// The figures of a `device.json` text, when it holds both and both are positive.
    pub fn from_device_json(text: &str) -> Option<DeviceCosts> {
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        let random = v.get("peak_reads_per_sec")?.as_f64()?;
        let seq_mb = v.get("seq_mb_per_sec")?.as_f64()?;
        (random > 0.0 && seq_mb > 0.0).then_some(DeviceCosts {
            random_reads_per_sec: random,
            seq_bytes_per_sec: seq_mb * 1e6,
        })
    }

    /// The figures of `dir/device.json`, or [`DeviceCosts::FALLBACK`] when there is none (or an
    /// older one without the sequential figure).
    pub fn of_data_dir(dir: &Path) -> DeviceCosts {
        std::fs::read_to_string(dir.join("device.json"))
            .ok()
            .and_then(|t| DeviceCosts::from_device_json(&t))
            .unwrap_or(DeviceCosts::FALLBACK)
    }

    /// Seconds to stream one block.
    pub fn block_secs(&self) -> f64 {
        BLOCK_SIZE as f64 / self.seq_bytes_per_sec
    }

    /// The fixed part of a read: a random 4 KiB read's time less its one block of transfer.
    pub fn read_secs(&self) -> f64 {
        (1.0 / self.random_reads_per_sec - self.block_secs()).max(0.0)
    }

    /// The longest gap of unneeded blocks that is cheaper to read through than to skip with a
    /// new read.
    pub fn max_gap_blocks(&self) -> u64 {
        (self.read_secs() / self.block_secs()).floor() as u64
    }

    /// Seconds for `reads` reads moving `blocks` blocks in all.
    pub fn secs(&self, reads: u64, blocks: u64) -> f64 {
        reads as f64 * self.read_secs() + blocks as f64 * self.block_secs()
    }
}

/// How an out-of-core store plans the reads of a scan: the device's costs and the limits the
/// store applies (the caller prices a level with the same plan the store will run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadModel {
    pub costs: DeviceCosts,
    /// Gaps of at most this many blocks are read through.
    pub max_gap: u64,
    /// No read is longer than this many blocks.
    pub max_read_blocks: u64,
}

impl ReadModel {
    /// The model of `costs` with reads of at most `max_read_blocks`.
    pub fn new(costs: DeviceCosts, max_read_blocks: u64) -> ReadModel {
        ReadModel {
            costs,
            max_gap: costs.max_gap_blocks(),
            max_read_blocks: max_read_blocks.max(1),
        }
    }
}

/// The reads (block ranges) that fetch every block of `spans`, the inclusive block ranges of
/// the needed lists, in any order and possibly overlapping. Needed blocks separated by at most
/// `max_gap` unneeded ones share a read; no read is longer than `max_read_blocks` (a longer run
/// of needed blocks is split); every needed block lies in exactly one read, and an unneeded
/// block only ever between two needed blocks of the same read. The reads come sorted. `spans`
/// is sorted in place.
pub fn coalesce(spans: &mut [(u64, u64)], max_gap: u64, max_read_blocks: u64) -> Vec<Range<u64>> {
    spans.sort_unstable();
    let mut reads = Vec::new();
    coalesce_sorted(spans.iter().copied(), max_gap, max_read_blocks, |r| {
        reads.push(r)
    });
    reads
}

/// [`coalesce`] over spans already sorted by first block, handing each read to `emit` as soon
/// as it is complete (pricing a plan needs no list of it).
pub fn coalesce_sorted(
    spans: impl IntoIterator<Item = (u64, u64)>,
    max_gap: u64,
    max_read_blocks: u64,
    mut emit: impl FnMut(Range<u64>),
) {
    let max_len = max_read_blocks.max(1);
    // The read being built: [start, end).
    let mut cur: Option<Range<u64>> = None;
    let mut prev_first = 0;
    for (first, last) in spans {
        debug_assert!(first <= last, "a span runs backwards");
        debug_assert!(first >= prev_first, "spans are not sorted");
        prev_first = first;
        let mut b = first;
        if let Some(c) = &cur {
            // Blocks already covered by the reads so far.
            b = b.max(c.end);
        }
        while b <= last {
            match &mut cur {
                Some(c) if b - c.end <= max_gap && b < c.start + max_len => {
                    // Joins (through a gap of b - c.end blocks), up to the length limit.
                    let end = (last + 1).min(c.start + max_len);
                    c.end = end;
                    b = end;
                }
                _ => {
                    if let Some(c) = cur.take() {
                        emit(c);
                    }
                    let end = (last + 1).min(b + max_len);
                    cur = Some(b..end);
                    b = end;
                }
            }
        }
    }
    if let Some(c) = cur {
        emit(c);
    }
}

/// What a plan moves: reads and blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlanSize {
    pub reads: u64,
    pub blocks: u64,
}

/// The size of the plan [`coalesce_sorted`] makes of `spans` (sorted by first block).
pub fn plan_size(
    spans: impl IntoIterator<Item = (u64, u64)>,
    max_gap: u64,
    max_read_blocks: u64,
) -> PlanSize {
    let mut size = PlanSize::default();
    coalesce_sorted(spans, max_gap, max_read_blocks, |r| {
        size.reads += 1;
        size.blocks += r.end - r.start;
    });
    size
}

/// Blocks moved by `reads`.
pub fn blocks_of(reads: &[Range<u64>]) -> u64 {
    reads.iter().map(|r| r.end - r.start).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every needed block in exactly one read, reads sorted and disjoint, none too long, and
    /// every read starting and ending on a needed block.
    fn check(spans: &[(u64, u64)], reads: &[Range<u64>], max_read: u64) {
        let needed: std::collections::BTreeSet<u64> =
            spans.iter().flat_map(|&(a, z)| a..=z).collect();
        for w in reads.windows(2) {
            assert!(
                w[0].end <= w[1].start,
                "reads overlap or are unsorted: {reads:?}"
            );
        }
        for r in reads {
            assert!(
                !r.is_empty() && r.end - r.start <= max_read,
                "bad read {r:?}"
            );
            assert!(needed.contains(&r.start) && needed.contains(&(r.end - 1)));
        }
        for b in &needed {
            let n = reads.iter().filter(|r| r.contains(b)).count();
            assert_eq!(n, 1, "block {b} is in {n} reads: {reads:?}");
        }
    }

    #[test]
    fn gaps_up_to_the_threshold_are_read_through() {
        let mut spans = vec![(10, 10), (12, 12), (16, 16), (17, 18), (30, 30)];
        let reads = coalesce(&mut spans, 3, 256);
        // 10 and 12 (gap 1), 12 and 16 (gap 3) join; 18 to 30 (gap 11) does not.
        assert_eq!(reads, vec![10..19, 30..31]);
        check(&spans, &reads, 256);
        let reads = coalesce(&mut spans, 2, 256);
        assert_eq!(reads, vec![10..13, 16..19, 30..31]);
        let reads = coalesce(&mut spans, 0, 256);
        assert_eq!(reads, vec![10..11, 12..13, 16..19, 30..31]);
        check(&spans, &reads, 256);
    }

    #[test]
    fn no_block_is_read_twice_when_spans_overlap_or_repeat() {
        let mut spans = vec![(5, 9), (7, 7), (5, 5), (8, 12), (3, 6), (12, 12)];
        let reads = coalesce(&mut spans, 0, 256);
        assert_eq!(reads, vec![3..13]);
        check(&spans, &reads, 256);
        assert_eq!(blocks_of(&reads), 10);
    }

    #[test]
    fn reads_respect_the_length_limit() {
        // A long list splits; a gap is joined only up to the limit (8..12 reads 10 through),
        // past it a new read starts.
        let mut spans = vec![(0, 9), (11, 11), (13, 20)];
        let reads = coalesce(&mut spans, 4, 4);
        check(&spans, &reads, 4);
        assert_eq!(reads, vec![0..4, 4..8, 8..12, 13..17, 17..21]);
        let mut big = vec![(100, 100 + 1000)];
        let reads = coalesce(&mut big, 8, 256);
        check(&big, &reads, 256);
        assert_eq!(reads.len(), 4);
        assert_eq!(blocks_of(&reads), 1001);
    }

    #[test]
    fn plan_size_counts_what_coalesce_makes() {
        let mut spans = vec![(40, 41), (1, 1), (3, 3), (9, 9), (300, 600)];
        let reads = coalesce(&mut spans, 2, 256);
        let size = plan_size(spans.iter().copied(), 2, 256);
        assert_eq!(size.reads, reads.len() as u64);
        assert_eq!(size.blocks, blocks_of(&reads));
        assert_eq!(
            size,
            PlanSize {
                reads: 5,
                blocks: 3 + 1 + 2 + 301
            }
        );
    }

    #[test]
    fn random_spans_keep_every_invariant() {
        let mut rng = base::Xoshiro256::new(16);
        for round in 0..200 {
            let n = 1 + rng.next_u64() % 40;
            let mut spans: Vec<(u64, u64)> = (0..n)
                .map(|_| {
                    let a = rng.next_u64() % 500;
                    (a, a + rng.next_u64() % 6)
                })
                .collect();
            let gap = round % 7;
            let max_read = 1 + (round * 13) % 40;
            let reads = coalesce(&mut spans, gap, max_read);
            check(&spans, &reads, max_read);
            // Two consecutive reads that could have joined would have: their gap is larger
            // than allowed, or the second starts past the first's longest reach.
            for w in reads.windows(2) {
                assert!(w[1].start - w[0].end > gap || w[1].start >= w[0].start + max_read);
            }
        }
    }

    #[test]
    fn the_gap_threshold_follows_the_device() {
        // 250 k random reads/s and 1 GB/s: a read costs 4 µs, a block 4.1 µs: no gap pays.
        let fast = DeviceCosts {
            random_reads_per_sec: 250_000.0,
            seq_bytes_per_sec: 1.0e9,
        };
        assert_eq!(fast.max_gap_blocks(), 0);
        // 50 k reads/s and 2 GB/s: 20 µs a read, 2.05 µs a block: gaps up to 8 blocks pay.
        let slow = DeviceCosts {
            random_reads_per_sec: 50_000.0,
            seq_bytes_per_sec: 2.0e9,
        };
        assert_eq!(slow.max_gap_blocks(), 8);
        assert!(slow.secs(1, 9) < slow.secs(2, 1));
        assert!(slow.secs(1, 12) > slow.secs(2, 2));
    }

    #[test]
    fn device_json_is_read_and_incomplete_probes_fall_back() {
        let t = r#"{ "io_depth": 64, "peak_reads_per_sec": 81427.0, "seq_mb_per_sec": 965.6 }"#;
        let c = DeviceCosts::from_device_json(t).expect("both figures");
        assert_eq!(c.random_reads_per_sec, 81427.0);
        assert_eq!(c.seq_bytes_per_sec, 965.6e6);
        assert!(DeviceCosts::from_device_json(r#"{ "peak_reads_per_sec": 1.0 }"#).is_none());
        assert!(DeviceCosts::from_device_json(
            r#"{ "peak_reads_per_sec": 0, "seq_mb_per_sec": 5 }"#
        )
        .is_none());
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(DeviceCosts::of_data_dir(dir.path()), DeviceCosts::FALLBACK);
    }
}
