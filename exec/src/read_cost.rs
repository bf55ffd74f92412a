//! Out of core, what an EdgeMap level's reads cost each way, priced with the store's
//! [`ReadModel`] (the device's random-read rate and sequential bandwidth from
//! `frontier calibrate`): the frontier's lists block by block, the same lists in coalesced
//! reads, or the in-lists of every vertex that still wants updates (pull). `EdgeMap::run`
//! takes the cheapest under `mode = auto`; in memory and on remote memory every pattern costs
//! the same and Ligra's density rule decides alone.

use rayon::prelude::*;
use storage::io::plan::plan_size;
use storage::io::ReadModel;
use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::subset::VertexSubset;

/// Edge slots per 4 KiB edge block (a list shorter than this lies in one block).
const SLOTS_PER_BLOCK: u64 = 1024;

/// Seconds of CPU a scan spends per vertex of its range testing whether it is wanted: a scan
/// walks the whole range, so a tiny frontier is cheaper block by block even when its blocks
/// are adjacent (a bitmap test and an index lookup, a few ns; measured as ~1–2 ns per vertex
/// in memory, rounded up).
const SCAN_SECS_PER_VERTEX: f64 = 2e-9;

/// The blocks a list of `deg` neighbours starting in block `first` occupies, inclusive (a
/// long list's tail may reach one block further than this; the estimate is for pricing).
fn span(first: u64, deg: u64) -> (u64, u64) {
    (first, first + deg.saturating_sub(1) / SLOTS_PER_BLOCK)
}

/// The spans of the `dir` lists of `vertices` that `keep` accepts, sorted by first block, with
/// neighbouring repeats (vertices sharing a block) dropped.
fn spans_of<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    ranges: Vec<Vec<u32>>,
) -> Vec<(u64, u64)> {
    let store = ctx.store;
    let mut spans: Vec<(u64, u64)> = ctx.pool.install(|| {
        ranges
            .into_par_iter()
            .flat_map_iter(|vs| {
                let mut out: Vec<(u64, u64)> = Vec::new();
                for v in vs {
                    let deg = store.degree(dir, v);
                    if deg == 0 {
                        continue;
                    }
                    let s = span(store.edge_block(dir, v), deg);
                    if out.last() != Some(&s) {
                        out.push(s);
                    }
                }
                out
            })
            .collect()
    });
    spans.par_sort_unstable();
    spans.dedup();
    spans
}

/// The spans of the frontier's `dir` lists (what a push level reads).
pub fn push_spans<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    frontier: &VertexSubset,
) -> Vec<(u64, u64)> {
    let list = match frontier.as_list() {
        Some(l) => l.to_vec(),
        None => frontier.to_list(),
    };
    let chunk = ctx.pool.chunk_len(list.len(), 4096, 65536).max(1);
    spans_of(ctx, dir, list.chunks(chunk).map(<[u32]>::to_vec).collect())
}

/// The spans of the `rev` lists of every vertex `wants` accepts (what a pull level reads).
pub fn pull_spans<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    rev: Direction,
    n: u32,
    wants: impl Fn(u32) -> bool + Sync,
) -> Vec<(u64, u64)> {
    let ranges = ctx.pool.word_ranges(n, 4096, 65536);
    let wanted: Vec<Vec<u32>> = ctx.pool.install(|| {
        ranges
            .into_par_iter()
            .map(|r| r.filter(|&v| wants(v)).collect())
            .collect()
    });
    spans_of(ctx, rev, wanted)
}

/// Seconds to read `spans` (sorted) as the block-by-block path does: one read per distinct
/// block of short lists, a long list's blocks in reads of up to the model's longest.
pub fn block_by_block_secs(spans: &[(u64, u64)], model: &ReadModel) -> f64 {
    let (mut reads, mut blocks, mut covered) = (0u64, 0u64, 0u64);
    for &(a, z) in spans {
        let from = a.max(covered);
        if from > z {
            continue;
        }
        let n = z + 1 - from;
        blocks += n;
        reads += if a == z {
            1
        } else {
            n.div_ceil(model.max_read_blocks)
        };
        covered = z + 1;
    }
    model.costs.secs(reads, blocks)
}

/// Seconds to read `spans` (sorted) in a scan of `vertices` vertices that coalesces them as the
/// store does.
pub fn coalesced_secs(spans: &[(u64, u64)], model: &ReadModel, vertices: u32) -> f64 {
    let size = plan_size(spans.iter().copied(), model.max_gap, model.max_read_blocks);
    model.costs.secs(size.reads, size.blocks) + vertices as f64 * SCAN_SECS_PER_VERTEX
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::io::DeviceCosts;

    fn model() -> ReadModel {
        // 50 k random reads/s, 1 GB/s: a read 15.9 µs, a block 4.1 µs, gaps of 3 read through.
        ReadModel::new(
            DeviceCosts {
                random_reads_per_sec: 50_000.0,
                seq_bytes_per_sec: 1.0e9,
            },
            256,
        )
    }

    #[test]
    fn spans_cover_long_lists() {
        assert_eq!(span(7, 1), (7, 7));
        assert_eq!(span(7, 1024), (7, 7));
        assert_eq!(span(7, 1025), (7, 8));
        assert_eq!(span(7, 0), (7, 7));
    }

    #[test]
    fn a_tiny_frontier_reads_block_by_block() {
        let m = model();
        let spans = [(10, 10), (11, 11)];
        assert!(block_by_block_secs(&spans, &m) < coalesced_secs(&spans, &m, 1 << 20));
    }

    #[test]
    fn a_level_with_close_blocks_reads_them_coalesced() {
        let m = model();
        assert_eq!(m.max_gap, 3);
        // Every other block of 20 000: one random read each, or 79 reads through the gaps.
        let spans: Vec<(u64, u64)> = (0..10_000).map(|i| (2 * i, 2 * i)).collect();
        let by_block = block_by_block_secs(&spans, &m);
        let coalesced = coalesced_secs(&spans, &m, 1 << 20);
        assert!(coalesced < by_block / 2.0, "{coalesced} vs {by_block}");
        // Far apart blocks gain nothing from coalescing and pay the scan's walk.
        let far: Vec<(u64, u64)> = (0..1_000).map(|i| (100 * i, 100 * i)).collect();
        assert!(block_by_block_secs(&far, &m) < coalesced_secs(&far, &m, 1 << 20));
    }

    #[test]
    fn block_by_block_counts_each_block_once() {
        let m = model();
        // Two short lists in block 5, a long list over 5..=7: blocks 5, 6, 7 and two reads.
        let spans = [(5, 5), (5, 7)];
        assert_eq!(block_by_block_secs(&spans, &m), m.costs.secs(2, 3));
    }
}
