//! The vertices a member already sent a remote claim for, so that a claim round sends one
//! remote CAS per vertex rather than one per edge (claims never revert: a vertex claimed
//! once stays claimed). Exact, in bits over every vertex, when those fit a sixteenth of
//! `cn_cache` or the table's floor (1 MiB: graphs of up to 8 Mi vertices); otherwise exact over the member's owned range when those bits fit
//! ([`OwnedSet::fits`]), and for the other vertices a fixed table of recent claims, so the
//! filter never grows with |V|: a vertex the table forgot is claimed again, and that claim
//! fails at the memory node, costing one remote operation and changing nothing.

use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::bitmap::AtomicBitmap;
use crate::remote_part::OwnedSet;

/// Fewest slots of the table of recent claims (1 MiB), whatever `cn_cache`: part of the
/// constant of the bound (docs/DM.md). A table much smaller than the vertices it sees forgets
/// most of them between two of their in-edges, and each is claimed again.
pub const RECENT_FLOOR: usize = 1 << 18;
/// Most slots of that table (16 MiB).
const RECENT_MOST: usize = 1 << 22;

/// See the module documentation.
#[derive(Debug)]
pub struct ClaimFilter {
    owned: Range<u32>,
    /// `owned.start` rounded down to a word: bit `i` is vertex `first + i`.
    first: u32,
    bits: AtomicBitmap,
    /// Slot `hash(v)` holds `v + 1` once `v` was claimed (0: empty).
    recent: Vec<AtomicU32>,
}

impl ClaimFilter {
    /// A filter over `n` vertices for the member owning `owned` (see the module
    /// documentation): the table, when there is one, has `budget / 16 / 4` slots, at least
    /// [`RECENT_FLOOR`] and at most one per vertex (a power of two).
    pub fn new(n: u32, owned: Range<u32>, budget: u64) -> ClaimFilter {
        let bitmap = (n as u64).div_ceil(8);
        let whole = OwnedSet::fits(&(0..n), budget)
            || bitmap <= (RECENT_FLOOR * 4) as u64
            || (owned.start == 0 && owned.end >= n);
        let owned = if whole {
            0..n
        } else if OwnedSet::fits(&owned, budget) {
            owned
        } else {
            owned.start..owned.start
        };
        let first = owned.start / 64 * 64;
        let slots = if whole {
            0
        } else {
            let want = (budget / 16 / 4).clamp(RECENT_FLOOR as u64, RECENT_MOST as u64) as usize;
            // One slot per vertex at most: the table then rarely forgets.
            want.min((n as usize).next_power_of_two())
                .next_power_of_two()
        };
        ClaimFilter {
            bits: AtomicBitmap::new(owned.end.saturating_sub(first)),
            first,
            owned,
            recent: (0..slots).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// True when `v` should be claimed: the first time it is offered (exactly once for an
    /// owned vertex, whatever the threads), or when the table no longer remembers it.
    #[inline]
    pub fn first_time(&self, v: u32) -> bool {
        if self.owned.contains(&v) {
            return self.bits.set(v - self.first);
        }
        if self.recent.is_empty() {
            return true;
        }
        let slot = (v as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        let slot = slot as usize & (self.recent.len() - 1);
        let mark = v.wrapping_add(1);
        let cell = &self.recent[slot];
        cell.load(Ordering::Relaxed) != mark && cell.swap(mark, Ordering::Relaxed) != mark
    }

    /// Bytes held (for tests and the bound).
    pub fn held_bytes(&self) -> usize {
        self.owned.len().div_ceil(64) * 8 + self.recent.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_vertices_pass_once_and_the_rest_within_a_fixed_table() {
        let n = 1 << 24;
        let f = ClaimFilter::new(n, 1000..5000, 1 << 20);
        assert!(f.held_bytes() < (n / 8) as usize, "not a bitmap over |V|");
        assert!(f.first_time(1000) && !f.first_time(1000));
        assert!(f.first_time(4999) && !f.first_time(4999));
        assert!(
            f.first_time(7) && !f.first_time(7),
            "a recent claim is remembered"
        );
        // Every vertex of the graph offered: the table does not grow.
        let passed = (0..n).filter(|&v| f.first_time(v)).count();
        assert!(passed >= n as usize - 4000 - 1);
        assert!(f.held_bytes() <= 4000 / 8 + 64 + RECENT_FLOOR * 4);
        // A vertex pushed out of its slot is let through again (its claim fails remotely).
        assert!(!f.first_time(n - 1), "the latest claim is remembered");
        assert!(
            (5000..n).filter(|&v| f.first_time(v)).count() > 0,
            "early ones were pushed out"
        );
        assert!(
            (1000..5000).all(|v| !f.first_time(v)),
            "owned vertices stay exact"
        );
    }

    #[test]
    fn owned_bits_that_do_not_fit_the_budget_are_not_held() {
        let f = ClaimFilter::new(1 << 24, 1000..500_000, 16);
        assert_eq!(f.held_bytes(), RECENT_FLOOR * 4);
        assert!(f.first_time(2000) && !f.first_time(2000));
    }

    #[test]
    fn bits_over_every_vertex_that_fit_the_budget_or_the_floor_are_exact() {
        for (n, budget) in [(1 << 20, 1 << 30), (1 << 20, 16)] {
            let f = ClaimFilter::new(n, 1000..5000, budget);
            assert_eq!(f.held_bytes(), (n / 8) as usize);
            assert!((0..n).all(|v| f.first_time(v)));
            assert!((0..n).all(|v| !f.first_time(v)));
        }
        let n = 1 << 24;
        let f = ClaimFilter::new(n, 1000..5000, 1 << 30);
        assert_eq!(f.held_bytes(), (n / 8) as usize);
        assert!((0..n).all(|v| f.first_time(v)));
        assert!((0..n).all(|v| !f.first_time(v)));
    }

    #[test]
    fn a_filter_over_every_vertex_is_exact_and_has_no_table() {
        let f = ClaimFilter::new(100, 0..100, 1 << 30);
        assert_eq!(f.held_bytes(), 16);
        assert!((0..100).all(|v| f.first_time(v)));
        assert!((0..100).all(|v| !f.first_time(v)));
        assert!(f.first_time(100), "beyond |V| nothing is remembered");
    }
}
