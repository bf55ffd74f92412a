//! Vertex ranges cut to equal work rather than equal vertex counts.
//!
//! A worker's share of a pass over all lists is the edges of its vertices plus a little per
//! vertex. Under `LAYOUT degree` the hubs are numbered first (the first 64 Ki vertices of R-MAT
//! scale 20 hold 81 % of its arcs), so ranges of equal vertex count would give one worker most
//! of a PageRank round. Ranges here are cut where the store says the edges before a vertex (its
//! list offset) plus `VERTEX_COST` per vertex reach equal fractions of the total: a binary
//! search per cut, so a pass pays a few hundred index lookups, not one per vertex.
//! (`storage::cluster::split_ranges` splits compute nodes' ranges from per-chunk costs the DM
//! layout stores; this needs no table.)

use std::ops::Range;
use std::sync::Mutex;

use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::error::ExecError;

/// What visiting one vertex costs beside its edges, in edges (index lookup, the slot write).
pub(crate) const VERTEX_COST: u64 = 2;

/// About as many ranges as `ctx.pool.word_ranges(n, min, max)` gives, each starting at a
/// multiple of 64 (so a range owns whole bitmap words), cut to equal edges + vertices of
/// `dir` where the store can tell list offsets, and to equal vertex counts where it cannot.
pub fn list_ranges<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    n: u32,
    min: usize,
    max: usize,
) -> Vec<Range<u32>> {
    let even = ctx.pool.word_ranges(n, min, max);
    let store = ctx.store;
    if even.len() < 2 || store.list_offset(dir, 0).is_none() {
        return even;
    }
    let last = n - 1;
    let edges_end = store.list_offset(dir, last).unwrap_or(0) + store.degree(dir, last);
    let cost = |v: u32| -> u64 {
        let edges = if v >= n {
            edges_end
        } else {
            store.list_offset(dir, v).unwrap_or(0)
        };
        edges + v as u64 * VERTEX_COST
    };
    cut_by_cost(n, even.len(), 64, cost)
}

/// Splits `0..n` into at most `pieces` consecutive non-empty ranges whose inner bounds are
/// multiples of `align`, cutting where the non-decreasing prefix cost `cost(v)` (the work of
/// vertices `0..v`; `cost(n)` is the total) crosses each `k / pieces` of the total. A cost
/// that decreases somewhere still gives ranges that cover `0..n` once, only less even.
pub fn cut_by_cost(
    n: u32,
    pieces: usize,
    align: u32,
    cost: impl Fn(u32) -> u64,
) -> Vec<Range<u32>> {
    let align = align.max(1);
    let total = cost(n) as u128;
    let mut out = Vec::with_capacity(pieces);
    let mut start = 0u32;
    for k in 1..pieces.max(1) as u128 {
        let target = (total * k / pieces as u128) as u64;
        // The first v in start..=n with cost(v) >= target.
        let (mut lo, mut hi) = (start, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if cost(mid) < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let cut = lo / align * align;
        if cut > start && cut < n {
            out.push(start..cut);
            start = cut;
        }
    }
    if start < n {
        out.push(start..n);
    }
    out
}

/// Runs `task` on the ranges of an out-of-core pass over the `dir` lists of `0..n`, one scan
/// each, and returns the results in range order. The ranges are equal-work pieces joined by
/// [`BothEnds`]: half of the workers take them from the front of the file, half from its back.
/// Under `LAYOUT degree` the front holds the hubs' long lists, which a worker sums about as fast
/// as the device reads them, and the back the short lists, which cost more to visit than to
/// read. Workers all taking ranges in file order would reach each kind at the same time: all
/// waiting for reads at the front, the device idle while all of them visit the back. From
/// both ends, one kind of work runs beside the other.
pub fn each_scan_range<S: GraphStore, T: Send>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    n: u32,
    task: impl Fn(Range<u32>) -> Result<T, ExecError> + Sync,
) -> Result<Vec<T>, ExecError> {
    let threads = ctx.pool.threads();
    let ends = Mutex::new(BothEnds::new(
        list_ranges(ctx, dir, n, 4096, 16384),
        threads,
    ));
    let mut done = ctx.pool.each_drawn(
        |worker| {
            let from_back = worker % 2 == 1;
            ends.lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(from_back)
        },
        |range| {
            let start = range.start;
            task(range).map(|t| (start, t)).map_err(|e| (start, e))
        },
    );
    done.sort_unstable_by_key(|r| match r {
        Ok((start, _)) | Err((start, _)) => *start,
    });
    done.into_iter()
        .map(|r| r.map(|(_, t)| t).map_err(|(_, e)| e))
        .collect()
}

/// Consecutive pieces of about equal work, handed out as ranges from either end: each range
/// joins `1 / (2 · threads)` of the pieces left (at least one), so that ranges are few (out of
/// core each is one scan, which waits for its first read) and shrink to one piece where the
/// two ends meet (the idle tail at the end of a pass).
///
/// Each end's first range is that share of all the pieces, whichever end draws first: the same
/// first ranges every pass, so their scans reuse the plans of the pass before (the back's first
/// range holds the most lists of any, and planning it again delays that worker's first read).
#[derive(Debug)]
pub struct BothEnds {
    pieces: Vec<Range<u32>>,
    /// The pieces not yet taken are `pieces[front..back]`.
    front: usize,
    back: usize,
    threads: usize,
    /// Whether the front and the back have handed out a range yet.
    drawn: [bool; 2],
}

impl BothEnds {
    pub fn new(pieces: Vec<Range<u32>>, threads: usize) -> BothEnds {
        let back = pieces.len();
        BothEnds {
            pieces,
            front: 0,
            back,
            threads: threads.max(1),
            drawn: [false; 2],
        }
    }

    /// The next range from the back (`true`) or the front; `None` once every piece is taken.
    pub fn take(&mut self, from_back: bool) -> Option<Range<u32>> {
        let left = self.back - self.front;
        if left == 0 {
            return None;
        }
        let basis = if std::mem::replace(&mut self.drawn[from_back as usize], true) {
            left
        } else {
            self.pieces.len()
        };
        let k = (basis / (2 * self.threads)).clamp(1, left);
        let (first, last) = if from_back {
            self.back -= k;
            (self.back, self.back + k - 1)
        } else {
            self.front += k;
            (self.front - k, self.front - 1)
        };
        Some(self.pieces[first].start..self.pieces[last].end)
    }
}

/// `items` split into consecutive slices as long as `ranges` (which cover `0..items.len()`
/// in order), so each range's worker owns its part.
pub fn split_by_ranges<'a, T>(mut items: &'a mut [T], ranges: &[Range<u32>]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let len = ((r.end - r.start) as usize).min(items.len());
        let (head, rest) = std::mem::take(&mut items).split_at_mut(len);
        out.push(head);
        items = rest;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers(ranges: &[Range<u32>], n: u32) {
        let mut at = 0;
        for r in ranges {
            assert_eq!(r.start, at, "{ranges:?}");
            assert!(r.end > r.start, "{ranges:?}");
            at = r.end;
        }
        assert_eq!(at, n, "{ranges:?}");
    }

    /// Every range `ends` hands out to workers drawing from the front, back, front, … in turn.
    fn drawn_alternately(mut ends: BothEnds) -> (Vec<Range<u32>>, Vec<Range<u32>>) {
        let (mut front, mut back) = (Vec::new(), Vec::new());
        for turn in 0.. {
            let from_back = turn % 2 == 1;
            match ends.take(from_back) {
                Some(r) if from_back => back.push(r),
                Some(r) => front.push(r),
                None => break,
            }
        }
        (front, back)
    }

    #[test]
    fn both_ends_cover_every_piece_once_in_ranges_that_shrink_towards_the_middle() {
        let pieces: Vec<Range<u32>> = (0..147).map(|i| i * 64..(i + 1) * 64).collect();
        let (front, back) = drawn_alternately(BothEnds::new(pieces.clone(), 2));
        let mut all: Vec<Range<u32>> = front.iter().chain(&back).cloned().collect();
        all.sort_by_key(|r| r.start);
        covers(&all, 147 * 64);
        // Front ranges run forwards, back ranges backwards, and they meet.
        assert_eq!(front[0].start, 0);
        assert_eq!(back[0].end, 147 * 64);
        assert!(
            front.windows(2).all(|w| w[0].end == w[1].start),
            "{front:?}"
        );
        assert!(back.windows(2).all(|w| w[1].end == w[0].start), "{back:?}");
        assert_eq!(front.last().unwrap().end, back.last().unwrap().start);
        // A quarter of the pieces left per range with two workers, down to one piece.
        let sizes = |rs: &[Range<u32>]| rs.iter().map(|r| r.len() as u32 / 64).collect::<Vec<_>>();
        assert_eq!(sizes(&front)[0], 36);
        assert_eq!(sizes(&back)[0], 36);
        for s in [sizes(&front), sizes(&back)] {
            assert!(s.windows(2).all(|w| w[0] >= w[1]), "{s:?}");
        }
        assert_eq!(all.iter().map(|r| r.len()).min(), Some(64));
        assert!(all.len() < pieces.len() / 4, "{} ranges", all.len());
    }

    #[test]
    fn each_end_starts_with_the_same_range_whichever_draws_first() {
        let pieces: Vec<Range<u32>> = (0..147).map(|i| i * 64..(i + 1) * 64).collect();
        let mut front_first = BothEnds::new(pieces.clone(), 2);
        let f = front_first.take(false);
        let b = front_first.take(true);
        let mut back_first = BothEnds::new(pieces, 2);
        assert_eq!(back_first.take(true), b);
        assert_eq!(back_first.take(false), f);
        // Later ranges shrink with the pieces left, as before.
        let next = front_first.take(false).unwrap();
        assert_eq!(next.len() as u32 / 64, (147 - 2 * 36) / 4);
    }

    #[test]
    fn both_ends_of_few_or_no_pieces() {
        let one_piece = BothEnds::new(std::iter::once(0..64).collect(), 2);
        let (front, back) = drawn_alternately(one_piece);
        assert_eq!(front.first(), Some(&(0..64)));
        assert_eq!((front.len(), back.len()), (1, 0));
        let none = BothEnds::new(Vec::new(), 2);
        assert_eq!(drawn_alternately(none), (vec![], vec![]));
        // One worker takes everything from the front, in order.
        let mut ends = BothEnds::new((0..5).map(|i| i * 64..(i + 1) * 64).collect(), 1);
        let mut got = Vec::new();
        while let Some(r) = ends.take(false) {
            got.push(r);
        }
        covers(&got, 5 * 64);
    }

    #[test]
    fn a_uniform_cost_gives_equal_aligned_ranges() {
        let r = cut_by_cost(1024, 4, 64, |v| v as u64);
        assert_eq!(r, vec![0..256, 256..512, 512..768, 768..1024]);
    }

    #[test]
    fn hubs_first_get_short_ranges_and_the_tail_long_ones() {
        // Vertex v < 64 has 10 000 edges, the other 4 032 have one each.
        let n = 4096;
        let cost = |v: u32| {
            let hubs = v.min(64) as u64;
            hubs * 10_000 + (v as u64 - hubs)
        };
        let r = cut_by_cost(n, 8, 1, cost);
        covers(&r, n);
        let work = |r: &Range<u32>| cost(r.end) - cost(r.start);
        let total = cost(n);
        for piece in &r {
            assert!(work(piece) <= total / 8 + 10_000, "{r:?}");
        }
        assert!(r[0].len() < 64, "{r:?}");
        assert!(r.last().unwrap().len() > 1000, "{r:?}");
    }

    #[test]
    fn a_decreasing_or_degenerate_cost_still_covers_every_vertex() {
        for n in [1u32, 63, 64, 65, 1000] {
            covers(&cut_by_cost(n, 7, 64, |v| (v as u64 * 7919) % 101), n);
            covers(&cut_by_cost(n, 7, 64, |_| 0), n);
            covers(&cut_by_cost(n, 1, 64, |v| v as u64), n);
        }
    }

    #[test]
    fn slices_follow_the_ranges() {
        let mut items: Vec<u32> = (0..10).collect();
        let parts = split_by_ranges(&mut items, &[0..3, 3..4, 4..10]);
        let lens: Vec<usize> = parts.iter().map(|p| p.len()).collect();
        assert_eq!(lens, vec![3, 1, 6]);
        assert_eq!(parts[1][0], 3);
    }
}
