//! Collaborative update (DMG §4.3): how a round's updates reach vertex state kept in the memory
//! nodes, chosen per iteration.
//!
//! * **Direct** remote update ([`crate::batched`]): each buffer of updates is one batch of
//!   one-sided verbs or pass-by-value applies; duplicates are combined only within a buffer,
//!   so a vertex with many in-edges receives many remote operations.
//! * **ValRD** ([`round`]): the state is cut into **windows** (contiguous vertex ranges), cut
//!   again at the compute nodes' owned ranges into **pieces**, each owned by the one compute
//!   node whose range holds it ([`pieces::Pieces`]). The sources' updates are combined per
//!   destination in per-window buckets on the compute node (sum for add, minimum for min) and a
//!   bucket that stays full after combining is sent by value into the window's mailbox, on the
//!   memory node that holds the window. The owner then reads its window once, applies what its
//!   mailbox holds locally, and writes the window back once: each vertex costs O(1) remote
//!   operations per round, and every transfer is a large sequential one.
//! * **RefRD**: as ValRD, but where one list has a long run of edges into one window the writer
//!   sends a reference (the source and its value) instead of the edges, and the owner reads
//!   that list itself and applies the run. (Here the writer has already read the list: the
//!   store has no read of index entries alone, so references save mailbox bytes, not reads.)
//!
//! **The cost rule** ([`choose`]). A collaborative round costs about 24 bytes per update
//! (pushed into a mailbox and pulled back, 12 bytes each way) plus 16 bytes per vertex of each
//! window it touches (read and written back); a direct round costs one NIC operation per
//! update after combining, which at the cost model's 60 M operations/s and 100 Gb/s is worth
//! [`OP_BYTES`] bytes of bandwidth, plus its 16 bytes. The round goes collaborative when that
//! is cheaper for the updates its frontier will send (the sum of its degrees): dense rounds
//! (PageRank, early WCC) go collaborative, sparse ones (BFS levels, late WCC) direct, as in the
//! paper. `SET dm_update` forces one strategy; the rule never picks RefRD by itself, because
//! here it reads long lists twice.
//!
//! **The budget rule** ([`Windows::for_budget`]). Half of `cn_cache` is the workers' window
//! accumulators (8 bytes per vertex, one window per worker at a time), the other half their
//! buckets (one per window per worker, 12 bytes per item). A window holds at least
//! [`MIN_WINDOW`] vertices and a bucket at least [`MIN_BUCKET`] items whatever the budget, so
//! the smallest footprint is `threads × (8 × MIN_WINDOW + windows × 12 × MIN_BUCKET)` bytes
//! (2.5 MiB for two threads on a graph of 2¹⁸ vertices): a budget of 16 bytes cannot mean
//! 16-byte batches. Mail queued on the memory nodes is bounded too: the frontier is walked in
//! phases of at most [`QUEUE_LIMIT`] bytes of expected mail, each followed by the owners'
//! apply.

pub mod mail;
pub mod pieces;
pub mod round;
pub mod sources;

use planner::DmUpdate;

/// Fewest vertices per window, whatever the budget (512 KiB of accumulator).
pub const MIN_WINDOW: u32 = 1 << 16;
/// Fewest items per bucket, whatever the budget (48 KiB).
pub const MIN_BUCKET: usize = 4096;
/// Most items per bucket: beyond it a push stops getting cheaper per item.
pub const MAX_BUCKET: usize = 1 << 16;
/// Most windows: a mailbox id keeps 16 bits for the window.
pub const MAX_WINDOWS: u32 = 1 << 16;
/// Expected mail (bytes) queued on the memory nodes before the owners apply it.
pub const QUEUE_LIMIT: u64 = 64 << 20;
/// One NIC operation in bytes of bandwidth: 100 Gb/s ÷ 60 M operations/s.
pub const OP_BYTES: u64 = 208;

/// How one round's updates travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateStrategy {
    Direct,
    ValRd,
    RefRd,
}

impl UpdateStrategy {
    /// The name PROFILE prints for the round.
    pub fn profile_name(self) -> &'static str {
        match self {
            UpdateStrategy::Direct => crate::batched::STRATEGY,
            UpdateStrategy::ValRd => "remote valrd",
            UpdateStrategy::RefRd => "remote refrd",
        }
    }
}

/// The destination windows of a run's remote state and the buckets that feed them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Windows {
    /// Vertices of the state.
    pub n: u32,
    /// Vertices per window (the last may be shorter).
    pub len: u32,
    /// Number of windows.
    pub count: u32,
    /// Items a worker buffers per window before combining and sending them.
    pub bucket: usize,
}

impl Windows {
    /// Windows and buckets for `n` vertices under `budget` bytes shared by `threads` workers
    /// (see the module documentation for the rule and its floors).
    pub fn for_budget(n: u32, budget: u64, threads: usize) -> Windows {
        let threads = threads.max(1) as u64;
        let by_budget = (budget / 2 / threads / 8).min(u32::MAX as u64) as u32;
        let len = by_budget
            .max(MIN_WINDOW)
            .min(n.max(1))
            .max(n.div_ceil(MAX_WINDOWS).max(1));
        let count = n.div_ceil(len);
        let bucket = (budget / 2 / threads / count.max(1) as u64 / mail::VALUE_BYTES as u64)
            .clamp(MIN_BUCKET as u64, MAX_BUCKET as u64) as usize;
        Windows {
            n,
            len,
            count,
            bucket,
        }
    }

    /// The window holding vertex `v`.
    #[inline]
    pub fn of(&self, v: u32) -> u32 {
        v / self.len
    }

    /// The vertices of window `k`.
    pub fn range(&self, k: u32) -> std::ops::Range<u32> {
        let a = k.saturating_mul(self.len).min(self.n);
        a..a.saturating_add(self.len).min(self.n)
    }
}

/// The strategy for a round expected to send `updates` updates (the sum of its frontier's
/// degrees), by `setting` or, under `auto`, by the cost rule of the module documentation.
pub fn choose(setting: DmUpdate, updates: u64, windows: &Windows) -> UpdateStrategy {
    match setting {
        DmUpdate::Direct => UpdateStrategy::Direct,
        DmUpdate::ValRd => UpdateStrategy::ValRd,
        DmUpdate::RefRd => UpdateStrategy::RefRd,
        DmUpdate::Auto => {
            let touched = updates.min(windows.count as u64);
            let collaborative = updates
                .saturating_mul(2 * mail::VALUE_BYTES as u64)
                .saturating_add(touched.saturating_mul(windows.len as u64 * 16));
            let direct = updates.saturating_mul(OP_BYTES + 16);
            if collaborative < direct {
                UpdateStrategy::ValRd
            } else {
                UpdateStrategy::Direct
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_the_budget_within_their_floors() {
        let w = Windows::for_budget(1 << 18, 16, 2);
        assert_eq!((w.len, w.count, w.bucket), (MIN_WINDOW, 4, MIN_BUCKET));
        let w = Windows::for_budget(1 << 18, 1 << 30, 2);
        assert_eq!((w.len, w.count, w.bucket), (1 << 18, 1, MAX_BUCKET));
        let w = Windows::for_budget(10, 16, 2);
        assert_eq!((w.len, w.count, w.range(0)), (10, 1, 0..10));
        let w = Windows::for_budget(u32::MAX, 16, 1);
        assert!(w.count <= MAX_WINDOWS && w.range(w.count - 1).end == u32::MAX);
    }

    #[test]
    fn the_cost_rule_sends_dense_rounds_collaboratively_and_sparse_ones_directly() {
        let w = Windows::for_budget(1 << 18, 16, 2);
        assert_eq!(choose(DmUpdate::Auto, 8 << 20, &w), UpdateStrategy::ValRd);
        assert_eq!(choose(DmUpdate::Auto, 100, &w), UpdateStrategy::Direct);
        assert_eq!(choose(DmUpdate::Auto, 0, &w), UpdateStrategy::Direct);
        assert_eq!(choose(DmUpdate::RefRd, 0, &w), UpdateStrategy::RefRd);
        assert_eq!(
            choose(DmUpdate::Direct, 8 << 20, &w),
            UpdateStrategy::Direct
        );
    }
}
