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

use storage::{Direction, GraphStore};

use crate::context::RunContext;

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

/// The ranges of an out-of-core pass over the `dir` lists of `0..n`, one scan each, for
/// workers to take in turn: equal-work pieces joined by [`guided`], so that few scans wait for
/// their first read and the last ranges are short. Every bound is a multiple of 64 (a range
/// owns whole bitmap words).
pub fn scan_ranges<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    n: u32,
) -> Vec<Range<u32>> {
    guided(&list_ranges(ctx, dir, n, 4096, 16384), ctx.pool.threads())
}

/// `pieces` (consecutive ranges of about equal work) joined into consecutive ranges that shrink
/// as the work runs out: each takes `1 / (2 · threads)` of the pieces left, at least one. Taken
/// in order by whichever worker is free, they keep both the number of ranges small (out of
/// core each range is one scan, which waits for its first read) and the idle tail at the end
/// (one piece).
pub fn guided(pieces: &[Range<u32>], threads: usize) -> Vec<Range<u32>> {
    let mut out = Vec::new();
    let mut rest = pieces;
    while let (Some(first), Some(_)) = (rest.first(), rest.last()) {
        let take = (rest.len() / (2 * threads.max(1))).max(1);
        out.push(first.start..rest[take - 1].end);
        rest = &rest[take..];
    }
    out
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

    #[test]
    fn guided_ranges_cover_and_shrink_to_one_piece() {
        let pieces: Vec<Range<u32>> = (0..147).map(|i| i * 64..(i + 1) * 64).collect();
        let r = guided(&pieces, 2);
        covers(&r, 147 * 64);
        let sizes: Vec<u32> = r.iter().map(|r| r.len() as u32 / 64).collect();
        assert_eq!(sizes[0], 36);
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
        assert_eq!(*sizes.last().unwrap(), 1);
        assert!(r.len() < pieces.len() / 4, "{} ranges", r.len());
        assert_eq!(guided(&pieces[..1], 2), vec![0..64]);
        assert!(guided(&[], 2).is_empty());
        covers(&guided(&pieces[..5], 8), 5 * 64);
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
