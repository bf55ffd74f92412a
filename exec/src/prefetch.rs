//! A hint to the core to start loading a cache line that a loop will touch a little later.
//!
//! Kernels whose loads go to random places (a distance per neighbour, a vertex's index entry
//! per frontier entry) wait for memory on each one; an atomic update between them keeps the
//! core from running ahead to the next loads by itself.

/// Starts loading the cache line holding `value` into every cache level. A hint only: it
/// never faults and changes no memory.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 reads nothing architecturally and cannot fault; `value` is a live
    // reference besides.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
