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
/// are adjacent (a bitmap test and an index lookup per vertex; the constant is what that was
/// measured to cost in memory, rounded up).
const SCAN_SECS_PER_VERTEX: f64 = 2e-9;

/// Vertices per task when marking blocks (each task fills a bitmap of the direction's blocks).
const MARK_CHUNK: usize = 1 << 14;

/// The edge blocks a level would read, as bits over one direction's edge section: `needed`
/// holds every block some wanted list occupies, `cont` the blocks a long list continues into
/// from the block before (the block-by-block path reads those with the list, in one run).
/// Two bits per block and no sort, whatever the frontier's order or size.
#[derive(Debug, Clone, PartialEq)]
pub struct NeededBlocks {
    needed: Vec<u64>,
    cont: Vec<u64>,
}

impl NeededBlocks {
    fn empty(blocks: u64) -> NeededBlocks {
        let words = blocks.div_ceil(64) as usize;
        NeededBlocks {
            needed: vec![0; words],
            cont: vec![0; words],
        }
    }

    /// Marks a list of `deg` neighbours starting in (relative) block `first`.
    #[inline]
    fn mark(&mut self, first: u64, deg: u64) {
        if deg <= SLOTS_PER_BLOCK {
            // Most lists: no more slots than a block, marked as their first block alone (as
            // the loop below would), without its bookkeeping.
            if let Some(w) = self.needed.get_mut((first / 64) as usize) {
                *w |= 1 << (first % 64);
            }
            return;
        }
        let end = self.needed.len() as u64 * 64;
        let last = first + deg.saturating_sub(1) / SLOTS_PER_BLOCK;
        for b in first..(last + 1).min(end) {
            self.needed[(b / 64) as usize] |= 1 << (b % 64);
            if b > first {
                self.cont[(b / 64) as usize] |= 1 << (b % 64);
            }
        }
    }

    fn union(mut self, other: NeededBlocks) -> NeededBlocks {
        for (a, b) in self.needed.iter_mut().zip(&other.needed) {
            *a |= b;
        }
        for (a, b) in self.cont.iter_mut().zip(&other.cont) {
            *a |= b;
        }
        self
    }

    fn bit(words: &[u64], b: u64) -> bool {
        words[(b / 64) as usize] >> (b % 64) & 1 == 1
    }

    /// Maximal runs of set bits of `words`, as inclusive (first, last) block ranges in order.
    fn runs(words: &[u64]) -> impl Iterator<Item = (u64, u64)> + '_ {
        let total = words.len() as u64 * 64;
        let mut b = 0u64;
        std::iter::from_fn(move || {
            // Skip clear words whole, then clear bits.
            while b < total {
                let w = words[(b / 64) as usize] >> (b % 64);
                if w == 0 {
                    b = (b / 64 + 1) * 64;
                    continue;
                }
                b += w.trailing_zeros() as u64;
                break;
            }
            if b >= total {
                return None;
            }
            let first = b;
            while b < total {
                let w = !words[(b / 64) as usize] >> (b % 64);
                if w == 0 {
                    b = (b / 64 + 1) * 64;
                    continue;
                }
                b += w.trailing_zeros() as u64;
                break;
            }
            let last = b.min(total) - 1;
            Some((first, last))
        })
    }

    /// Blocks needed.
    pub fn blocks(&self) -> u64 {
        self.needed.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// Reads the block-by-block path makes: one per needed block that does not continue a
    /// long list, and a long list's further blocks in runs of up to `max_read_blocks`.
    pub fn block_by_block_reads(&self, max_read_blocks: u64) -> u64 {
        let starts: u64 = self
            .needed
            .iter()
            .zip(&self.cont)
            .map(|(n, c)| (n & !c).count_ones() as u64)
            .sum();
        let runs: u64 = Self::runs(&self.cont)
            .map(|(a, z)| (z + 1 - a).div_ceil(max_read_blocks.max(1)))
            .sum();
        starts + runs
    }

    /// Whether block `b` (relative) is needed.
    pub fn contains(&self, b: u64) -> bool {
        b < self.needed.len() as u64 * 64 && Self::bit(&self.needed, b)
    }
}

/// The blocks of the `dir` lists each task marks through `lists(task, base, marks)` (a list
/// starting in absolute block `first` is marked at `first - base`); each task marks its own
/// bitmap and the bitmaps are joined.
fn needed_blocks<S, T>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    tasks: Vec<T>,
    lists: impl Fn(T, u64, &mut NeededBlocks) + Sync,
) -> NeededBlocks
where
    S: GraphStore,
    T: Send,
{
    let store = ctx.store;
    let n = ctx.n();
    if n == 0 {
        return NeededBlocks::empty(0);
    }
    let base = store.edge_block(dir, 0);
    let last = n - 1;
    let end =
        store.edge_block(dir, last) + store.degree(dir, last).max(1).div_ceil(SLOTS_PER_BLOCK) + 1;
    let blocks = end - base;
    ctx.pool.install(|| {
        tasks
            .into_par_iter()
            .fold(
                || NeededBlocks::empty(blocks),
                |mut acc, task| {
                    lists(task, base, &mut acc);
                    acc
                },
            )
            .reduce(|| NeededBlocks::empty(blocks), NeededBlocks::union)
    })
}

/// The blocks of the `dir` lists of the vertices of `0..n` that `member` accepts, looked up in
/// vertex order (the index is read front to back, a group of entries at a time).
fn needed_blocks_where<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    n: u32,
    member: impl Fn(u32) -> bool + Sync,
) -> NeededBlocks {
    let store = ctx.store;
    let ranges = ctx.pool.word_ranges(n, MARK_CHUNK, MARK_CHUNK * 4);
    needed_blocks(ctx, dir, ranges, |r, base, marks| {
        store.each_list_start(dir, r, &member, |first, deg| marks.mark(first - base, deg))
    })
}

/// The blocks of the frontier's `dir` lists (what a push level reads). A short list is looked
/// up as it is; a long one (in discovery order) through a bitmap, so in vertex order.
pub fn push_blocks<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    frontier: &VertexSubset,
) -> NeededBlocks {
    let n = frontier.universe();
    match (frontier.as_list(), frontier.as_bitmap()) {
        (Some(list), _) if list.len() as u64 <= n as u64 / 64 => {
            let chunks: Vec<&[u32]> = list.chunks(MARK_CHUNK).collect();
            let store = ctx.store;
            needed_blocks(ctx, dir, chunks, |c, base, marks| {
                for &v in c {
                    let (first, deg) = store.list_start_block(dir, v);
                    if deg > 0 {
                        marks.mark(first - base, deg);
                    }
                }
            })
        }
        (_, Some(bits)) => needed_blocks_where(ctx, dir, n, |v| bits.get(v)),
        _ => {
            let bits = frontier.to_bitmap();
            needed_blocks_where(ctx, dir, n, |v| bits.get(v))
        }
    }
}

/// The blocks of the `rev` lists of every vertex `wants` accepts (what a pull level reads).
pub fn pull_blocks<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    rev: Direction,
    n: u32,
    wants: impl Fn(u32) -> bool + Sync,
) -> NeededBlocks {
    needed_blocks_where(ctx, rev, n, wants)
}

/// Seconds to read `needed` as the block-by-block path does.
pub fn block_by_block_secs(needed: &NeededBlocks, model: &ReadModel) -> f64 {
    model.costs.secs(
        needed.block_by_block_reads(model.max_read_blocks),
        needed.blocks(),
    )
}

/// Seconds to read `needed` in a scan of `vertices` vertices that coalesces them as the store
/// does.
pub fn coalesced_secs(needed: &NeededBlocks, model: &ReadModel, vertices: u32) -> f64 {
    let size = plan_size(
        NeededBlocks::runs(&needed.needed),
        model.max_gap,
        model.max_read_blocks,
    );
    model.costs.secs(size.reads, size.blocks) + scan_walk_secs(vertices)
}

/// The least any scan over `vertices` vertices costs: its walk over the range.
pub fn scan_walk_secs(vertices: u32) -> f64 {
    vertices as f64 * SCAN_SECS_PER_VERTEX
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

    /// The needed blocks of lists given as (first block, degree), over `blocks` blocks.
    fn needed(blocks: u64, lists: &[(u64, u64)]) -> NeededBlocks {
        let mut nb = NeededBlocks::empty(blocks);
        for &(first, deg) in lists {
            nb.mark(first, deg);
        }
        nb
    }

    #[test]
    fn marks_cover_long_lists() {
        let nb = needed(200, &[(7, 1), (9, 1024), (11, 1025), (13, 0)]);
        let got: Vec<u64> = (0..200).filter(|&b| nb.contains(b)).collect();
        assert_eq!(got, vec![7, 9, 11, 12, 13]);
        assert_eq!(nb.blocks(), 5);
    }

    #[test]
    fn runs_cross_words_and_end_at_the_last_bit() {
        let nb = needed(256, &[(3, 1), (60, 1024 * 10), (255, 1)]);
        let runs: Vec<(u64, u64)> = NeededBlocks::runs(&nb.needed).collect();
        assert_eq!(runs, vec![(3, 3), (60, 69), (255, 255)]);
        assert_eq!(
            NeededBlocks::runs(&NeededBlocks::empty(128).needed).count(),
            0
        );
    }

    #[test]
    fn a_tiny_frontier_reads_block_by_block() {
        let m = model();
        let nb = needed(20_000, &[(10, 1), (11, 1)]);
        assert!(block_by_block_secs(&nb, &m) < coalesced_secs(&nb, &m, 1 << 20));
    }

    #[test]
    fn a_level_with_close_blocks_reads_them_coalesced() {
        let m = model();
        assert_eq!(m.max_gap, 3);
        // Every other block of 20 000: one random read each, or 79 reads through the gaps.
        let lists: Vec<(u64, u64)> = (0..10_000).map(|i| (2 * i, 1)).collect();
        let nb = needed(20_000, &lists);
        let by_block = block_by_block_secs(&nb, &m);
        let coalesced = coalesced_secs(&nb, &m, 1 << 20);
        assert!(coalesced < by_block / 2.0, "{coalesced} vs {by_block}");
        // Far apart blocks gain nothing from coalescing and pay the scan's walk.
        let far: Vec<(u64, u64)> = (0..1_000).map(|i| (100 * i, 1)).collect();
        let nb = needed(100_000, &far);
        assert!(block_by_block_secs(&nb, &m) < coalesced_secs(&nb, &m, 1 << 20));
    }

    #[test]
    fn block_by_block_counts_each_block_once() {
        let m = model();
        // Two short lists in block 5, a long list over 5..=7: blocks 5, 6, 7 and two reads
        // (block 5, then the list's run 6..=7).
        let nb = needed(64, &[(5, 1), (5, 3), (5, 2048 + 1)]);
        assert_eq!(nb.blocks(), 3);
        assert_eq!(nb.block_by_block_reads(256), 2);
        assert_eq!(block_by_block_secs(&nb, &m), m.costs.secs(2, 3));
        // A run longer than the longest read is split.
        let nb = needed(1024, &[(0, 1024 * 600)]);
        assert_eq!(nb.block_by_block_reads(256), 1 + 3);
    }
}
