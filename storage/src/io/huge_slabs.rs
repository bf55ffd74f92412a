//! Read buffers of 64 KiB to 2 MiB carved from 2 MiB slabs that the kernel is asked to back with
//! one transparent huge page each.
//!
//! Why: a virtual disk is handed one segment per physically contiguous piece of a read's
//! buffer, and the host serves each segment on its own. A heap buffer is scattered 4 KiB pages,
//! so a 1 MiB read is 256 segments; in a huge page it is one (figures in docs/PERFORMANCE.md,
//! "Read buffers in huge pages"). Where THP is off, the slabs are ordinary memory and nothing
//! else changes.
//!
//! Pieces are buddies: their sizes are powers of two times [`PIECE`] and each starts at a
//! multiple of its size, so a freed piece merges with its free buddy and a slab serves any size
//! again. A request that is not such a size takes the smallest piece that holds it and hands the
//! tail back at once, so a buffer holds less than [`PIECE`] more than it asked for. Whole free
//! slabs beyond one spare go back to the allocator.

use std::alloc::{self, Layout};
use std::collections::BTreeSet;
use std::ptr::NonNull;
use std::sync::Mutex;

/// One slab: the size (and alignment) of an x86-64 / arm64 transparent huge page.
pub const SLAB: usize = 2 << 20;
/// The smallest piece; smaller buffers come from the heap (a few segments each).
pub const PIECE: usize = 64 << 10;
/// Piece sizes `PIECE << k` for `k < ORDERS`; the last is a whole slab.
const ORDERS: usize = (SLAB / PIECE).trailing_zeros() as usize + 1;

/// Free pieces by order (addresses), and at most one whole free slab kept for reuse.
pub struct Slabs {
    free: [BTreeSet<usize>; ORDERS],
    spare: Option<usize>,
}

impl Default for Slabs {
    fn default() -> Self {
        Self::new()
    }
}

impl Slabs {
    pub const fn new() -> Slabs {
        Slabs {
            free: [const { BTreeSet::new() }; ORDERS],
            spare: None,
        }
    }

    /// An exclusive piece of `bytes` (a multiple of [`PIECE`], at most [`SLAB`]) whose bytes
    /// the caller must initialise, or `None` when `bytes` is out of range or no slab can be
    /// allocated (the caller then uses the heap).
    pub fn take(&mut self, bytes: usize) -> Option<NonNull<u8>> {
        if bytes == 0 || bytes > SLAB || !bytes.is_multiple_of(PIECE) {
            return None;
        }
        let order = bytes.div_ceil(PIECE).next_power_of_two().trailing_zeros() as usize;
        let (at, mut o) = match (order..ORDERS).find(|&o| !self.free[o].is_empty()) {
            Some(o) => (self.free[o].pop_first()?, o),
            None => (self.spare.take().or_else(new_slab)?, ORDERS - 1),
        };
        // Split down to the order asked for, freeing the upper halves.
        while o > order {
            o -= 1;
            self.free[o].insert(at + (PIECE << o));
        }
        // Hand back the tail beyond `bytes`.
        self.give_range(at + bytes, (PIECE << order) - bytes);
        NonNull::new(at as *mut u8)
    }

    /// Returns a piece taken with [`Slabs::take`] with the same `bytes`.
    pub fn give(&mut self, ptr: NonNull<u8>, bytes: usize) {
        self.give_range(ptr.as_ptr() as usize, bytes);
    }

    /// Frees `[at, at + len)` (both multiples of [`PIECE`]) as the largest aligned pieces it
    /// holds.
    fn give_range(&mut self, mut at: usize, mut len: usize) {
        while len > 0 {
            let o = (0..ORDERS)
                .rev()
                .find(|&o| (PIECE << o) <= len && at.is_multiple_of(PIECE << o))
                .expect("ranges are multiples of the smallest piece");
            self.give_piece(at, o);
            at += PIECE << o;
            len -= PIECE << o;
        }
    }

    fn give_piece(&mut self, mut at: usize, mut o: usize) {
        while o < ORDERS - 1 {
            let buddy = at ^ (PIECE << o);
            if !self.free[o].remove(&buddy) {
                self.free[o].insert(at);
                return;
            }
            at = at.min(buddy);
            o += 1;
        }
        // A whole slab is free: keep one, release the rest.
        match self.spare {
            None => self.spare = Some(at),
            Some(_) => {
                // SAFETY: `at` is the start of a slab allocated in `new_slab` with `slab_layout`,
                // and every piece of it has been given back, so nothing uses it.
                unsafe { alloc::dealloc(at as *mut u8, slab_layout()) }
            }
        }
    }

    /// Bytes of free pieces (tests).
    #[cfg(test)]
    fn free_bytes(&self) -> usize {
        (0..ORDERS).map(|o| self.free[o].len() * (PIECE << o)).sum()
    }
}

impl Drop for Slabs {
    /// Releases the spare slab; slabs with pieces in use stay (only the process's own `Slabs`,
    /// which is never dropped, hands pieces out for long).
    fn drop(&mut self) {
        if let Some(at) = self.spare.take() {
            // SAFETY: the spare is a whole slab from `new_slab` that nothing uses.
            unsafe { alloc::dealloc(at as *mut u8, slab_layout()) }
        }
    }
}

fn slab_layout() -> Layout {
    Layout::from_size_align(SLAB, SLAB).expect("valid layout")
}

/// A fresh slab, advised `MADV_HUGEPAGE` before anything touches it (the advice only shapes
/// pages faulted in later: the first piece's initialisation faults the huge page in).
fn new_slab() -> Option<usize> {
    // SAFETY: the layout has a non-zero size.
    let raw = unsafe { alloc::alloc(slab_layout()) };
    let at = NonNull::new(raw)?.as_ptr() as usize;
    crate::huge::advise_range(at, SLAB);
    Some(at)
}

/// The process's slabs, shared by every engine.
static SLABS: Mutex<Slabs> = Mutex::new(Slabs::new());

/// [`Slabs::take`] on the process's slabs.
pub fn take(bytes: usize) -> Option<NonNull<u8>> {
    SLABS.lock().unwrap_or_else(|p| p.into_inner()).take(bytes)
}

/// [`Slabs::give`] on the process's slabs.
pub fn give(ptr: NonNull<u8>, bytes: usize) {
    SLABS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .give(ptr, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(p: NonNull<u8>) -> usize {
        p.as_ptr() as usize
    }

    #[test]
    fn pieces_are_aligned_disjoint_and_merge_back_into_the_slab() {
        let mut s = Slabs::new();
        let sizes = [PIECE, 3 * PIECE, 8 * PIECE, PIECE, 5 * PIECE, 16 * PIECE];
        let got: Vec<(usize, usize)> = sizes
            .iter()
            .map(|&b| (addr(s.take(b).expect("a piece")), b))
            .collect();
        for &(a, b) in &got {
            // Aligned to the piece it came from (the smallest power of two holding it).
            assert_eq!(a % (b.next_power_of_two().min(SLAB)), 0, "{a:#x} {b}");
        }
        let mut spans = got.clone();
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "pieces overlap: {w:?}");
        }
        for &(a, b) in &got {
            s.give(NonNull::new(a as *mut u8).unwrap(), b);
        }
        // Everything merged: no free pieces, whole slabs kept (one) or released.
        assert_eq!(s.free_bytes(), 0);
        let spare = s.spare.expect("one whole slab is kept");
        // The next whole-slab request reuses it.
        assert_eq!(addr(s.take(SLAB).unwrap()), spare);
        s.give(NonNull::new(spare as *mut u8).unwrap(), SLAB);
    }

    #[test]
    fn a_tail_is_handed_back_at_once() {
        let mut s = Slabs::new();
        // 3 pieces take a 4-piece block and give the fourth back; a 1-piece request gets it.
        let a = addr(s.take(3 * PIECE).unwrap());
        let b = addr(s.take(PIECE).unwrap());
        assert_eq!(b, a + 3 * PIECE);
        s.give(NonNull::new(a as *mut u8).unwrap(), 3 * PIECE);
        s.give(NonNull::new(b as *mut u8).unwrap(), PIECE);
        assert_eq!(s.free_bytes(), 0);
    }

    #[test]
    fn sizes_out_of_range_are_refused() {
        let mut s = Slabs::new();
        assert!(s.take(0).is_none());
        assert!(s.take(PIECE + 4096).is_none());
        assert!(s.take(2 * SLAB).is_none());
    }
}
