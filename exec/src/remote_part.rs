//! A member's part of a split frontier kept in the memory nodes, for a compute node whose
//! `cn_cache` cannot hold the bits of its owned range (DMG keeps activation bits in the memory
//! pool, beside the attributes): one word per owned vertex, 1 when the vertex is in the set.
//! Vertices are added from sorted lists: a dense run (at least [`DENSE_RUN`] vertices, each
//! within [`DENSE_GAP`] of the next) is read, set and written back as one span, and the rest
//! goes in batches of one-sided CASes (0 → 1, so a batch learns how many it added); a round
//! reads its sources one window of words at a time, so what the compute node holds of the
//! part is one window, whatever its range.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use storage::remote_memory::{ElementKind, RemoteMemory, RemoteVector};

use crate::bitmap::{AtomicBitmap, Bitmap};
use crate::error::ExecError;

/// Words read at a time when listing a range of a remote part (128 KiB).
const READ_WORDS: u32 = 1 << 14;
/// Vertices added by one batch of CASes (a batch's verbs are built before it is sent: about
/// 80 B a vertex).
const ADD_BATCH: usize = 1 << 12;
/// Fewest vertices of a sorted list written as one span rather than CASed one by one.
const DENSE_RUN: usize = 64;
/// Widest step between neighbours of a dense run: a span holds at least one vertex added per
/// this many words read and written.
const DENSE_GAP: u32 = 8;
/// Most words of one span (128 KiB).
const SPAN_WORDS: u32 = 1 << 14;

/// Fewest vertices a set in remote memory buffers before adding them, whatever `cn_cache`
/// (64 KiB; part of the constant of the bound, docs/DM.md).
pub const PENDING_FLOOR: usize = 16 << 10;

/// The owned range's words in remote memory.
#[derive(Debug)]
pub struct RemotePart {
    owned: Range<u32>,
    /// `None`: every vertex of the range (nothing is stored).
    words: Option<Box<dyn RemoteVector>>,
    /// Held while adding: a span written back must not undo another thread's add.
    adding: Mutex<()>,
}

impl RemotePart {
    /// An empty part over `owned`.
    pub fn alloc(memory: &dyn RemoteMemory, owned: Range<u32>) -> Result<RemotePart, ExecError> {
        let words = memory.alloc(owned.len() as u64, ElementKind::U64, 0)?;
        Ok(RemotePart {
            owned,
            words: Some(words),
            adding: Mutex::new(()),
        })
    }

    /// The part holding every vertex of `owned` (a round from every vertex), which stores
    /// nothing.
    pub fn whole(owned: Range<u32>) -> RemotePart {
        RemotePart {
            owned,
            words: None,
            adding: Mutex::new(()),
        }
    }

    /// Adds the owned vertices of the sorted, distinct `list`: dense runs as spans, the rest
    /// in batches of [`ADD_BATCH`] CASes; returns how many were not in the set before.
    fn add(&self, list: &[u32]) -> Result<u64, ExecError> {
        let Some(words) = &self.words else {
            return Ok(0);
        };
        let _alone = self.adding.lock().unwrap_or_else(|p| p.into_inner());
        let a = list.partition_point(|&v| v < self.owned.start);
        let b = list.partition_point(|&v| v < self.owned.end);
        let list = &list[a..b];
        let base = self.owned.start;
        let mut added = 0;
        let mut single: Vec<u64> = Vec::new();
        let mut i = 0;
        while i < list.len() {
            let mut j = i + 1;
            while j < list.len()
                && list[j] - list[j - 1] <= DENSE_GAP
                && list[j] - list[i] < SPAN_WORDS
            {
                j += 1;
            }
            if j - i >= DENSE_RUN {
                let first = list[i];
                let mut span = vec![0u64; (list[j - 1] - first + 1) as usize];
                words.read_range((first - base) as u64, &mut span)?;
                for &v in &list[i..j] {
                    let w = &mut span[(v - first) as usize];
                    added += (*w == 0) as u64;
                    *w = 1;
                }
                words.write_slice((first - base) as u64, &span)?;
            } else {
                single.extend(list[i..j].iter().map(|&v| (v - base) as u64));
            }
            i = j;
        }
        for chunk in single.chunks(ADD_BATCH) {
            added += words.claim_batch(chunk, 0, 1)?.len() as u64;
        }
        Ok(added)
    }

    /// The vertices of the set within `range`, ascending (read a window of words at a time).
    pub fn ones_in(&self, range: Range<u32>) -> Result<Vec<u32>, ExecError> {
        let a = range.start.max(self.owned.start);
        let b = range.end.min(self.owned.end);
        let Some(words) = &self.words else {
            return Ok((a..b.max(a)).collect());
        };
        let mut out = Vec::new();
        let mut buf = Vec::new();
        let mut at = a;
        while at < b {
            let len = READ_WORDS.min(b - at);
            buf.resize(len as usize, 0);
            words.read_range((at - self.owned.start) as u64, &mut buf)?;
            out.extend(
                buf.iter()
                    .enumerate()
                    .filter(|(_, &w)| w != 0)
                    .map(|(i, _)| at + i as u32),
            );
            at += len;
        }
        Ok(out)
    }
}

/// The bits of a member's part of a frontier: in memory, or in the memory nodes.
#[derive(Debug, Clone)]
pub enum PartBits {
    /// Bit `i` is vertex `first + i` (`first` a multiple of 64).
    Local {
        first: u32,
        bits: Bitmap,
    },
    Remote(std::sync::Arc<RemotePart>),
}

/// A set of owned vertices being built by a round ([`crate::cluster::marks`]): bits in memory
/// when the owned range's bits fit `budget`, else a [`RemotePart`] fed from a bounded list.
pub enum OwnedSet {
    Local {
        first: u32,
        bits: AtomicBitmap,
    },
    Remote {
        part: RemotePart,
        pending: Mutex<Vec<u32>>,
        limit: usize,
        added: AtomicU64,
        failed: Mutex<Option<ExecError>>,
    },
}

impl OwnedSet {
    /// Whether the bits of `owned` fit `budget` bytes (what a round may spend on one set of
    /// bits over its owned range: a sixteenth of `cn_cache`).
    pub fn fits(owned: &Range<u32>, budget: u64) -> bool {
        (owned.len() as u64).div_ceil(8) <= budget / 16
    }

    /// An empty set over `owned`: in memory when it [`fits`](OwnedSet::fits) `budget` or no
    /// remote memory is given, else in `memory`, buffering at most `budget / 32 / 4` (at least
    /// [`PENDING_FLOOR`]) vertices before adding them.
    pub fn new(
        owned: Range<u32>,
        budget: u64,
        memory: Option<&dyn RemoteMemory>,
    ) -> Result<OwnedSet, ExecError> {
        match memory {
            Some(memory) if !OwnedSet::fits(&owned, budget) => {
                let limit = (budget / 32 / 4).clamp(PENDING_FLOOR as u64, 1 << 24) as usize;
                Ok(OwnedSet::Remote {
                    part: RemotePart::alloc(memory, owned)?,
                    pending: Mutex::new(Vec::new()),
                    limit,
                    added: AtomicU64::new(0),
                    failed: Mutex::new(None),
                })
            }
            _ => {
                let first = owned.start / 64 * 64;
                Ok(OwnedSet::Local {
                    first,
                    bits: AtomicBitmap::new(owned.end.saturating_sub(first)),
                })
            }
        }
    }

    /// Adds every vertex of `list` (owned vertices).
    pub fn add_all(&self, list: &[u32]) {
        match self {
            OwnedSet::Local { first, bits } => {
                for &v in list {
                    bits.set(v - first);
                }
            }
            OwnedSet::Remote {
                part,
                pending,
                limit,
                added,
                failed,
            } => {
                let full = {
                    let mut p = pending.lock().unwrap_or_else(|e| e.into_inner());
                    p.extend_from_slice(list);
                    (p.len() >= *limit).then(|| std::mem::take(&mut *p))
                };
                if let Some(mut list) = full {
                    list.sort_unstable();
                    list.dedup();
                    match part.add(&list) {
                        Ok(k) => {
                            added.fetch_add(k, Ordering::Relaxed);
                        }
                        Err(e) => {
                            let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
                            f.get_or_insert(e);
                        }
                    }
                }
            }
        }
    }

    /// The finished set and how many vertices it holds.
    pub fn finish(self) -> Result<(PartBits, u64), ExecError> {
        match self {
            OwnedSet::Local { first, bits } => {
                let bits = bits.into_bitmap();
                let count = bits.count();
                Ok((PartBits::Local { first, bits }, count))
            }
            OwnedSet::Remote {
                part,
                pending,
                added,
                failed,
                ..
            } => {
                if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
                    return Err(e);
                }
                let mut rest = pending.into_inner().unwrap_or_else(|p| p.into_inner());
                rest.sort_unstable();
                rest.dedup();
                let count = added.into_inner() + part.add(&rest)?;
                Ok((PartBits::Remote(std::sync::Arc::new(part)), count))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subset::VertexSubset;
    use crate::testing::{memory_nodes, VecGraph};
    use storage::GraphStore;

    /// A set whose bits do not fit the budget lives in remote memory: adds beyond the pending
    /// list, repeats and vertices outside the range are counted once each, and a range of it
    /// lists exactly its vertices; one that fits is bits.
    #[test]
    fn a_set_over_a_range_too_large_for_the_budget_is_kept_remote() {
        let nodes = memory_nodes(2);
        let g = VecGraph::new(vec![0, 1], vec![(0, 1)], false, None).with_memory_nodes(16, &nodes);
        let memory = g.remote_memory().unwrap();
        let owned = 1000..200_000u32;
        let set = OwnedSet::new(owned.clone(), 16, Some(memory)).unwrap();
        assert!(matches!(set, OwnedSet::Remote { .. }));
        // Dense runs (every third vertex) and sparse stretches (every 97th) alternate.
        let want: Vec<u32> = owned
            .clone()
            .filter(|v| {
                if (v / 5000) % 2 == 0 {
                    v % 3 == 0
                } else {
                    v % 97 == 0
                }
            })
            .collect();
        for chunk in want.chunks(1000) {
            set.add_all(chunk);
            set.add_all(&chunk[..10]);
        }
        let (bits, count) = set.finish().unwrap();
        assert_eq!(count, want.len() as u64);
        let part = VertexSubset::from_part_bits(300_000, bits, count);
        assert!(part.is_part() && part.held_words() == 0);
        assert_eq!(part.ones_in(0..300_000).unwrap(), want);
        let some: Vec<u32> = want
            .iter()
            .copied()
            .filter(|v| (5000..90_001).contains(v))
            .collect();
        assert_eq!(part.ones_in(5000..90_001).unwrap(), some);
        drop(part);
        let used: u64 = nodes.iter().map(|n| n.used()).sum();
        assert_eq!(used, 0, "a dropped part frees its words");
        let local = OwnedSet::new(owned, 1 << 30, Some(memory)).unwrap();
        assert!(matches!(local, OwnedSet::Local { .. }));
    }
}
