//! The part of the out-of-core reader's cache budget that holds lists assembled from several
//! blocks (lists of 1024 neighbours or more), and the counters that show what it held.
//!
//! A visitor is handed each list as one slice, so a list spanning blocks is copied into a buffer
//! of its degree. Those buffers are taken from this budget: a call that already holds one waits
//! (keeps completing its reads) until the budget has room for the next, so a frontier of many
//! hubs does not allocate all of them at once. A call that holds none may always take one,
//! whatever its size, as the engine's depth budget lets an idle session submit one read: no call
//! ever waits on another's, and the peak is at most the reserve plus one list per thread.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of list buffers in use, the reserve they should fit in, and the most ever in use.
#[derive(Debug)]
pub struct ListBudget {
    reserve: u64,
    in_use: AtomicU64,
    high_water: AtomicU64,
}

impl ListBudget {
    /// A budget of `reserve` bytes.
    pub fn new(reserve: u64) -> ListBudget {
        ListBudget {
            reserve,
            in_use: AtomicU64::new(0),
            high_water: AtomicU64::new(0),
        }
    }

    /// The reserve.
    pub fn reserve(&self) -> u64 {
        self.reserve
    }

    /// Bytes of list buffers in use now.
    pub fn in_use(&self) -> u64 {
        self.in_use.load(Ordering::Relaxed)
    }

    /// The most bytes of list buffers ever in use at once.
    pub fn high_water(&self) -> u64 {
        self.high_water.load(Ordering::Relaxed)
    }

    /// Takes `bytes` for a list buffer: always when the caller holds none (`holding == 0`),
    /// otherwise only if they fit the reserve. Returns whether they were taken.
    pub fn try_take(&self, bytes: u64, holding: u64) -> bool {
        let mut now = self.in_use.load(Ordering::Relaxed);
        loop {
            let after = now.saturating_add(bytes);
            if holding > 0 && after > self.reserve {
                return false;
            }
            match self.in_use.compare_exchange_weak(
                now,
                after,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    self.high_water.fetch_max(after, Ordering::Relaxed);
                    return true;
                }
                Err(seen) => now = seen,
            }
        }
    }

    /// Takes `bytes` whatever the reserve, for a caller that holds no other list buffer, until
    /// the returned loan is dropped.
    pub fn lend(&self, bytes: u64) -> ListLoan<'_> {
        let after = self.in_use.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.high_water.fetch_max(after, Ordering::Relaxed);
        ListLoan {
            budget: self,
            bytes,
        }
    }

    /// Returns `bytes` taken earlier.
    pub fn give(&self, bytes: u64) {
        self.in_use.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// Bytes of a [`ListBudget`], handed back when dropped (also when a call stops on an error).
#[derive(Debug)]
pub struct ListLoan<'a> {
    budget: &'a ListBudget,
    bytes: u64,
}

impl Drop for ListLoan<'_> {
    fn drop(&mut self) {
        self.budget.give(self.bytes);
    }
}

/// A buffer of `n` default values, or `None` when the allocation fails (a list too large for
/// the machine must be an error, not an abort).
pub(crate) fn try_filled<T: Clone + Default>(n: usize) -> Option<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    v.resize(n, T::default());
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_waits_for_room_and_an_empty_caller_never_does() {
        let b = ListBudget::new(100);
        assert!(b.try_take(80, 0));
        assert!(!b.try_take(30, 80), "over the reserve while holding");
        assert!(b.try_take(20, 80));
        assert!(
            b.try_take(500, 0),
            "a caller holding nothing always gets one"
        );
        assert_eq!(b.in_use(), 600);
        b.give(600);
        drop(b.lend(700));
        assert_eq!((b.in_use(), b.high_water()), (0, 700));
    }
}
