//! Large arrays backed by transparent huge pages where the kernel offers them.
//!
//! Graph kernels read neighbour ids in order but per-vertex values (PageRank contributions,
//! depths) at random: with 4 KiB pages a few MB of such an array already miss the TLB on most
//! accesses. Linux's default THP mode on many distributions is `madvise`, so
//! the pages are only huge if asked for before they are first touched.

/// Arrays smaller than this are not worth advising (a huge page is 2 MiB).
const MIN_BYTES: usize = 4 << 20;

/// A vector of `len` copies of `value`, its memory advised `MADV_HUGEPAGE` before it is filled.
pub fn filled<T: Clone>(len: usize, value: T) -> Vec<T> {
    let mut v = with_capacity(len);
    v.resize(len, value);
    v
}

/// A vector of `len` default values advised `MADV_HUGEPAGE`. For types whose default is all
/// zero bits (integers, floats) the memory comes zeroed from the allocator and is not touched
/// here, so the page faults happen later, in whichever threads fill it.
pub fn zeroed<T: Clone + Default>(len: usize) -> Vec<T> {
    let v = vec![T::default(); len];
    advise(
        v.as_ptr() as usize,
        len.saturating_mul(std::mem::size_of::<T>()),
    );
    v
}

/// An empty vector with room for `cap` elements, its memory advised `MADV_HUGEPAGE`; fill it
/// afterwards (advice given after the first touch only helps when khugepaged gets to it).
pub fn with_capacity<T>(cap: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(cap);
    advise(
        v.as_ptr() as usize,
        cap.saturating_mul(std::mem::size_of::<T>()),
    );
    v
}

/// Advises the whole 2 MiB-aligned pages inside `[addr, addr + len)` when the range is large
/// enough to be worth it.
fn advise(addr: usize, len: usize) {
    if len >= MIN_BYTES {
        advise_range(addr, len);
    }
}

/// Advises the whole 2 MiB-aligned pages inside `[addr, addr + len)`. Advice is a hint: errors
/// (no THP support, an old kernel) are ignored.
pub(crate) fn advise_range(addr: usize, len: usize) {
    const HUGE: usize = 2 << 20;
    let start = addr.next_multiple_of(HUGE);
    let end = (addr + len) & !(HUGE - 1);
    if end <= start {
        return;
    }
    // SAFETY: the range lies inside a live allocation owned by the caller; MADV_HUGEPAGE changes
    // only how the kernel backs it, never its contents.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn filled_and_reserved_vectors_are_ordinary_vectors() {
        let v = super::filled(3 << 20, 7u32);
        assert_eq!(v.len(), 3 << 20);
        assert!(v.iter().all(|&x| x == 7));
        let z: Vec<u32> = super::zeroed(3 << 20);
        assert!(z.len() == 3 << 20 && z.iter().all(|&x| x == 0));
        let mut w: Vec<f64> = super::with_capacity(10);
        w.extend([1.0, 2.0]);
        assert_eq!(w, [1.0, 2.0]);
    }
}
