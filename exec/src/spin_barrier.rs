//! A barrier whose waiters spin, then yield, but never sleep, for kernels that run many short
//! rounds on workers kept busy for the whole run.
//!
//! A round per pool broadcast parks the workers between rounds, and waking a parked thread on
//! the development VM costs tens of microseconds (a futex wake and an inter-processor
//! interrupt through the hypervisor): delta-stepping at R-MAT scale 20 runs 437 rounds, and
//! its process switched context about 1 400 times more than a BFS. OpenMP's barriers, which the
//! GAPBS kernels use, spin in the same way.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Busy-wait iterations before a waiter starts yielding its core (tens of microseconds: longer
/// than the gap between two rounds, short against a round).
const SPINS: u32 = 1 << 12;

/// A reusable barrier for a fixed number of parties.
#[derive(Debug)]
pub struct SpinBarrier {
    parties: usize,
    arrived: AtomicUsize,
    /// Counts completed waits: a waiter leaves once it moves on.
    generation: AtomicUsize,
}

impl SpinBarrier {
    pub fn new(parties: usize) -> SpinBarrier {
        SpinBarrier {
            parties: parties.max(1),
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    /// Returns once every party has called `wait` for this round. What a party wrote before
    /// its call is visible to every party after theirs.
    pub fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            // The last to arrive opens the barrier: the count is reset before the generation
            // moves, so no party of the next round counts against this one.
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                // More workers than cores, or a long round: let the others run.
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn no_party_passes_a_round_before_every_party_has_reached_it() {
        for parties in [1, 2, 3, 5] {
            let barrier = SpinBarrier::new(parties);
            let rounds = 2000u64;
            // Each party adds to the round's counter, waits, and checks that every party's
            // addition for this round is there and none for the next one yet.
            let counters: Vec<AtomicU64> = (0..rounds).map(|_| AtomicU64::new(0)).collect();
            std::thread::scope(|s| {
                for _ in 0..parties {
                    s.spawn(|| {
                        for r in 0..rounds as usize {
                            counters[r].fetch_add(1, Ordering::Relaxed);
                            barrier.wait();
                            assert_eq!(counters[r].load(Ordering::Relaxed), parties as u64);
                            if r + 1 < rounds as usize {
                                assert!(
                                    counters[r + 1].load(Ordering::Relaxed) < parties as u64,
                                    "round {} done while a party was still in round {r}",
                                    r + 1
                                );
                            }
                            barrier.wait();
                        }
                    });
                }
            });
        }
    }
}
