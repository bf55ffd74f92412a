//! A barrier whose waiters spin, then yield (or sleep, with more parties than cores), for
//! kernels that run many short rounds on workers kept busy for the whole run; the last party
//! to arrive closes the round before any party leaves.
//!
//! A round per pool broadcast parks the workers between rounds, and waking a parked thread on
//! a VM costs tens of microseconds (a futex wake and an inter-processor interrupt through the
//! hypervisor), which delta-stepping's hundreds of rounds would pay every round. OpenMP's
//! barriers, which the GAPBS kernels use, spin in the same way. With more parties than cores
//! the waiters sleep.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Busy-wait iterations before a waiter starts yielding its core (tens of microseconds: longer
/// than the gap between two rounds, short against a round).
const SPINS: u32 = 1 << 12;

/// A reusable barrier for a fixed number of parties.
#[derive(Debug)]
pub struct SpinBarrier {
    parties: usize,
    arrived: AtomicUsize,
    /// Counts completed rounds: a waiter leaves once it moves on.
    generation: AtomicUsize,
    /// With more parties than cores a spinning waiter would take a core from a party that has
    /// work left: then waiters sleep on this condition variable (the mutex guards the arrival
    /// and the round's closing).
    sleeping: Option<(Mutex<()>, Condvar)>,
}

impl SpinBarrier {
    /// A barrier for `parties`, which spins when they fit the machine's cores.
    pub fn new(parties: usize) -> SpinBarrier {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        SpinBarrier::with_cores(parties, cores)
    }

    fn with_cores(parties: usize, cores: usize) -> SpinBarrier {
        let parties = parties.max(1);
        SpinBarrier {
            parties,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            sleeping: (parties > cores).then(|| (Mutex::new(()), Condvar::new())),
        }
    }

    /// Returns once every party has called `wait_then` for this round; the last to arrive runs
    /// `close` first. What a party wrote before its call, and what `close` wrote, is visible to
    /// every party after theirs.
    pub fn wait_then(&self, close: impl FnOnce()) {
        let guard = self
            .sleeping
            .as_ref()
            .map(|(lock, _)| lock.lock().unwrap_or_else(|p| p.into_inner()));
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            close();
            // The count is reset before the generation moves, so no party of the next round
            // counts against this one.
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            if let Some((_, wake)) = &self.sleeping {
                drop(guard);
                wake.notify_all();
            }
            return;
        }
        if let (Some(mut guard), Some((_, wake))) = (guard, &self.sleeping) {
            while self.generation.load(Ordering::Acquire) == generation {
                guard = wake.wait(guard).unwrap_or_else(|p| p.into_inner());
            }
            return;
        }
        let mut spins = 0;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                // A long round: let other processes have the core meanwhile.
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
    fn no_party_passes_a_round_before_every_party_has_reached_it_and_it_is_closed() {
        for (parties, cores) in [(1, 1), (2, 2), (3, 4), (5, 8), (3, 2), (5, 2)] {
            let barrier = SpinBarrier::with_cores(parties, cores);
            assert_eq!(barrier.sleeping.is_some(), parties > cores);
            let rounds = 2000u64;
            // Each party adds to the round's counter and waits; the round's closing checks
            // that every party's addition is there and counts itself; every party then checks
            // that the round was closed once and that no party has started the next one.
            let counters: Vec<AtomicU64> = (0..rounds).map(|_| AtomicU64::new(0)).collect();
            let closed = AtomicU64::new(0);
            std::thread::scope(|s| {
                for _ in 0..parties {
                    s.spawn(|| {
                        for (r, counter) in counters.iter().enumerate() {
                            counter.fetch_add(1, Ordering::Relaxed);
                            barrier.wait_then(|| {
                                assert_eq!(counter.load(Ordering::Relaxed), parties as u64);
                                closed.fetch_add(1, Ordering::Relaxed);
                            });
                            assert_eq!(closed.load(Ordering::Relaxed), r as u64 + 1);
                            assert_eq!(counter.load(Ordering::Relaxed), parties as u64);
                            barrier.wait_then(|| {});
                        }
                    });
                }
            });
            assert_eq!(closed.into_inner(), rounds);
        }
    }
}
