//! Several compute nodes running one query (DMG §4.1–4.2): which vertices each member works on,
//! and the collectives the members synchronise through.
//!
//! Every member runs the same kernel over the same remote state; the operators restrict their
//! work to the member's `owned` vertices and meet at collectives (a barrier after each round,
//! the sums a kernel reduces to, the union of the next frontier). Member 0 is the session's own
//! process. [`LocalCollectives`] joins threads of one process (tests); the memory-node
//! implementation keeps its counters in a memory node, so an iteration ends at a barrier held
//! there and not in the session.

use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex};

use crate::error::{Result, StoreError};

/// What the members of one run share. Every member calls the same collectives in the same order;
/// each call returns once all members have made it, or with an error once any member aborted.
pub trait Collectives: Send + Sync {
    /// How many members take part.
    fn size(&self) -> usize;
    /// This member's index, `0..size()`; 0 is the session's own process.
    fn rank(&self) -> usize;
    /// Returns once every member has called `barrier` as many times as this one.
    fn barrier(&self) -> Result<()>;
    /// The sum of every member's `x`, added in member order, so every member gets the same bits.
    fn sum_f64(&self, x: f64) -> Result<f64>;
    /// The sum of every member's `x` (wrapping).
    fn sum_u64(&self, x: u64) -> Result<u64>;
    /// Every member's `x`, in member order (per-member times for PROFILE's imbalance).
    fn gather(&self, x: u64) -> Result<Vec<u64>>;
    /// Replaces `words` with the bitwise OR of every member's `words` (the same length on all).
    fn or_words(&self, words: &mut [u64]) -> Result<()>;
    /// Member 0's `words` on every member (the others pass `None`).
    fn broadcast(&self, words: Option<&[u64]>) -> Result<Vec<u64>>;
    /// Makes every member's pending and later collectives fail with `reason` (a member failed,
    /// or a compute node died). Idempotent; the first reason is kept.
    fn abort(&self, reason: &str);
}

/// One member of a run over several compute nodes: the collectives it shares, and the vertices
/// whose work it does (the tiny chunks assigned to it, contiguous).
#[derive(Clone)]
pub struct Member {
    pub collectives: Arc<dyn Collectives>,
    pub owned: Range<u32>,
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Member")
            .field("rank", &self.collectives.rank())
            .field("size", &self.collectives.size())
            .field("owned", &self.owned)
            .finish()
    }
}

/// Splits `0..vertices` into `members` contiguous ranges of about equal `cost`, where `cost(a, b)`
/// is the work of vertices `a..b` (callers pass the tiny chunks' `8(p−1)|V_i| + |E_i|`).
pub fn split_ranges(boundaries: &[u32], costs: &[u64], members: usize) -> Vec<Range<u32>> {
    debug_assert_eq!(boundaries.len(), costs.len() + 1);
    let members = members.max(1);
    let total: u64 = costs.iter().sum();
    let mut out = Vec::with_capacity(members);
    let mut start = boundaries.first().copied().unwrap_or(0);
    let mut acc = 0u64;
    let mut chunk = 0usize;
    for m in 0..members {
        let target = total.saturating_mul(m as u64 + 1) / members as u64;
        while chunk < costs.len() && (m + 1 == members || acc + costs[chunk] / 2 < target) {
            acc += costs[chunk];
            chunk += 1;
        }
        let end = boundaries[chunk];
        out.push(start..end);
        start = end;
    }
    out
}

/// Collectives between threads of one process: each call is a generation of a shared slot table.
pub struct LocalCollectives {
    shared: Arc<LocalShared>,
    rank: usize,
}

struct LocalShared {
    size: usize,
    state: Mutex<LocalState>,
    wake: Condvar,
}

struct LocalState {
    /// Calls completed by every member.
    generation: u64,
    /// Members that arrived at the current call, and their contributions.
    arrived: usize,
    slots: Vec<Option<Vec<u64>>>,
    /// The combined contributions of the last completed call.
    result: Vec<Vec<u64>>,
    aborted: Option<String>,
}

impl LocalCollectives {
    /// `size` members, one per thread that will run a member.
    pub fn group(size: usize) -> Vec<LocalCollectives> {
        let shared = Arc::new(LocalShared {
            size,
            state: Mutex::new(LocalState {
                generation: 0,
                arrived: 0,
                slots: vec![None; size],
                result: Vec::new(),
                aborted: None,
            }),
            wake: Condvar::new(),
        });
        (0..size)
            .map(|rank| LocalCollectives {
                shared: shared.clone(),
                rank,
            })
            .collect()
    }

    /// Contributes `words` and returns every member's contribution, in member order.
    fn exchange(&self, words: Vec<u64>) -> Result<Vec<Vec<u64>>> {
        let s = &self.shared;
        let mut st = s.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = &st.aborted {
            return Err(aborted(r));
        }
        let generation = st.generation;
        st.slots[self.rank] = Some(words);
        st.arrived += 1;
        if st.arrived == s.size {
            st.result = st
                .slots
                .iter_mut()
                .map(|w| w.take().unwrap_or_default())
                .collect();
            st.arrived = 0;
            st.generation += 1;
            s.wake.notify_all();
        } else {
            while st.generation == generation && st.aborted.is_none() {
                st = s.wake.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            if st.generation == generation {
                return Err(aborted(st.aborted.as_deref().unwrap_or("aborted")));
            }
        }
        Ok(st.result.clone())
    }
}

fn aborted(reason: &str) -> StoreError {
    StoreError::Other(format!("the run was aborted: {reason}"))
}

impl Collectives for LocalCollectives {
    fn size(&self) -> usize {
        self.shared.size
    }

    fn rank(&self) -> usize {
        self.rank
    }

    fn barrier(&self) -> Result<()> {
        self.exchange(Vec::new()).map(|_| ())
    }

    fn sum_f64(&self, x: f64) -> Result<f64> {
        let all = self.exchange(vec![x.to_bits()])?;
        Ok(all.iter().map(|w| f64::from_bits(w[0])).sum())
    }

    fn sum_u64(&self, x: u64) -> Result<u64> {
        let all = self.exchange(vec![x])?;
        Ok(all.iter().fold(0u64, |a, w| a.wrapping_add(w[0])))
    }

    fn gather(&self, x: u64) -> Result<Vec<u64>> {
        let all = self.exchange(vec![x])?;
        Ok(all.iter().map(|w| w[0]).collect())
    }

    fn or_words(&self, words: &mut [u64]) -> Result<()> {
        let all = self.exchange(words.to_vec())?;
        for (i, w) in words.iter_mut().enumerate() {
            *w = all
                .iter()
                .fold(0, |a, m| a | m.get(i).copied().unwrap_or(0));
        }
        Ok(())
    }

    fn broadcast(&self, words: Option<&[u64]>) -> Result<Vec<u64>> {
        let mine = if self.rank == 0 {
            words.unwrap_or_default().to_vec()
        } else {
            Vec::new()
        };
        let mut all = self.exchange(mine)?;
        Ok(std::mem::take(&mut all[0]))
    }

    fn abort(&self, reason: &str) {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.aborted.is_none() {
            st.aborted = Some(reason.to_string());
        }
        self.shared.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_collectives_combine_every_member() {
        let group = LocalCollectives::group(3);
        let out: Vec<(f64, u64, Vec<u64>, Vec<u64>)> = std::thread::scope(|s| {
            let handles: Vec<_> = group
                .iter()
                .map(|c| {
                    s.spawn(move || {
                        let r = c.rank() as u64;
                        c.barrier().unwrap();
                        let f = c.sum_f64(0.5 * (r + 1) as f64).unwrap();
                        let u = c.sum_u64(r + 10).unwrap();
                        assert_eq!(c.gather(r * 2).unwrap(), vec![0, 2, 4]);
                        let mut bits = vec![1u64 << r, 0];
                        c.or_words(&mut bits).unwrap();
                        let b = c.broadcast((r == 0).then_some(&[7u64, 8][..])).unwrap();
                        (f, u, bits, b)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (f, u, bits, b) in out {
            assert_eq!(f, 3.0);
            assert_eq!(u, 33);
            assert_eq!(bits, vec![0b111, 0]);
            assert_eq!(b, vec![7, 8]);
        }
    }

    #[test]
    fn an_abort_releases_the_waiting_members() {
        let group = LocalCollectives::group(2);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| group[1].barrier());
            std::thread::sleep(std::time::Duration::from_millis(20));
            group[0].abort("compute node 127.0.0.1:9 died");
            let err = waiter.join().unwrap().unwrap_err().to_string();
            assert!(err.contains("127.0.0.1:9 died"), "{err}");
        });
        assert!(group[0].barrier().is_err());
    }

    #[test]
    fn ranges_split_by_cost_and_cover_every_vertex() {
        let bounds = [0, 10, 20, 30, 40];
        let ranges = split_ranges(&bounds, &[100, 1, 1, 100], 2);
        assert_eq!(ranges, vec![0..20, 20..40]);
        let ranges = split_ranges(&bounds, &[1, 1, 1, 1], 3);
        assert_eq!(ranges.first().unwrap().start, 0);
        assert_eq!(ranges.last().unwrap().end, 40);
        for w in ranges.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        assert_eq!(split_ranges(&bounds, &[1, 1, 1, 1], 1), vec![0..40]);
    }
}
