//! `import_memory` is a real bound: the heap an import holds at its peak (a global allocator
//! that counts every live byte) stays within the budget plus what the import documents it
//! holds on top ([`PEAK_BYTES_PER_VERTEX`] per vertex, [`PEAK_FIXED_BYTES`] of buffers). The
//! same import with the budget out of the way peaks far above that bound, so the check would
//! fail if the budget were ignored. One test function, so no other test allocates beside the
//! measurement.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use storage::import::{InputFormat, PEAK_BYTES_PER_VERTEX, PEAK_FIXED_BYTES};

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are updated besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            grew(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The heap an import of `src` adds at its peak, and how many vertices it found.
fn peak_of(src: &std::path::Path, budget: u64, weighted: bool, directed: bool) -> (u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("g.frontier");
    let mut req = request(src, InputFormat::Edgelist, &dest, &dir.path().join("tmp"));
    req.memory_budget = budget;
    req.weighted = weighted;
    req.directed = Some(directed);
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let summary = run(&req).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    (peak as u64, summary.vertices)
}

#[test]
fn an_imports_peak_heap_stays_within_import_memory_plus_the_documented_overhead() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("edges.el");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&src).unwrap());
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..2_000_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let (s, d) = ((x >> 20) % 65536, (x >> 40) % 65536);
        writeln!(out, "{s} {d} {}.5", i % 7).unwrap();
    }
    out.into_inner().unwrap().sync_all().unwrap();

    let budget = 8u64 << 20;
    for (weighted, directed) in [(false, false), (true, true)] {
        let (peak, vertices) = peak_of(&src, budget, weighted, directed);
        let bound = budget + PEAK_BYTES_PER_VERTEX * vertices + PEAK_FIXED_BYTES;
        assert!(
            peak <= bound,
            "weighted {weighted}, directed {directed}: the import peaked at {peak} bytes, more \
             than import_memory {budget} + {PEAK_BYTES_PER_VERTEX} x {vertices} vertices + \
             {PEAK_FIXED_BYTES}"
        );
        // The measurement sees the budget: without it, the same import holds more than the bound.
        let (unbounded, _) = peak_of(&src, 1 << 40, weighted, directed);
        assert!(
            unbounded > bound,
            "with the budget out of the way the import peaked at {unbounded} bytes, not \
             above the bound {bound}: the test would not notice a budget ignored"
        );
        eprintln!("weighted {weighted}: peak {peak} (bound {bound}), unbounded {unbounded}");
    }
}
