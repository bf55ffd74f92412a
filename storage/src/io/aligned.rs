//! Block-aligned heap buffers: `O_DIRECT` needs the memory, the offset and the length of every
//! read aligned to the device's logical block, and the readers reinterpret edge blocks as
//! `u32`/`f64` slices without copying, which needs at least 8-byte alignment. Aligning to 4 KiB
//! covers both.

use std::alloc::{self, Layout};
use std::ptr::NonNull;
use std::sync::Mutex;

use super::huge_slabs;
use crate::blockfile::format::BLOCK_SIZE;

#[cfg(target_endian = "big")]
compile_error!("the block-file readers reinterpret little-endian blocks in place");

/// The alignment of every buffer (one block).
pub const ALIGN: usize = BLOCK_SIZE;

/// A zero-initialised, 4 KiB-aligned byte buffer whose length is a multiple of 4 KiB.
///
/// Owned and movable: the memory never moves when the value does, which is what lets the
/// io_uring engine hand its address to the kernel while the value sits in a table.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    /// Bytes in use (what reads fill and the typed views show).
    len: usize,
    /// Bytes allocated; `len <= cap`, so a pooled buffer can serve a shorter read.
    cap: usize,
    /// Where the memory came from, so that it goes back there.
    origin: Origin,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Origin {
    /// One block from [`single_blocks`].
    SingleBlock,
    /// A piece of a huge-page slab ([`huge_slabs`]): 64 KiB to 2 MiB.
    Slab,
    /// The heap: 8–60 KiB, more than 2 MiB, or when no slab could be had.
    Heap,
}

// SAFETY: `AlignedBuf` owns its allocation exclusively (like `Vec<u8>`); shared references only
// allow reads, so sending or sharing it between threads is sound.
unsafe impl Send for AlignedBuf {}
// SAFETY: see above; `&AlignedBuf` gives read-only access.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `blocks` blocks (at least one block is allocated, so the pointer is
    /// always valid for the kernel). Buffers of 64 KiB to 2 MiB are pieces of huge-page slabs,
    /// so that a read into them is a few physically contiguous segments (see [`huge_slabs`]);
    /// their capacity is rounded up to 64 KiB.
    pub fn new(blocks: usize) -> AlignedBuf {
        if blocks <= 1 {
            let ptr = single_blocks::take();
            // SAFETY: `take` returns an exclusive, live, 4096-aligned block of BLOCK_SIZE bytes.
            unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, BLOCK_SIZE) };
            return AlignedBuf {
                ptr,
                len: BLOCK_SIZE,
                cap: BLOCK_SIZE,
                origin: Origin::SingleBlock,
            };
        }
        let len = blocks
            .checked_mul(BLOCK_SIZE)
            .expect("buffer size overflows");
        if let Some(cap) = slab_bytes(len) {
            if let Some(ptr) = huge_slabs::take(cap) {
                // SAFETY: `take` returns an exclusive, live piece of `cap` bytes aligned to at
                // least 64 KiB.
                unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, cap) };
                return AlignedBuf {
                    ptr,
                    len,
                    cap,
                    origin: Origin::Slab,
                };
            }
        }
        let layout = Layout::from_size_align(len, ALIGN).expect("valid layout");
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuf {
            ptr,
            len,
            cap: len,
            origin: Origin::Heap,
        }
    }

    /// Uses the first `blocks` blocks (at least one) of the allocation. The bytes are whatever
    /// the buffer held before: callers that read into it overwrite them.
    ///
    /// # Panics
    /// If `blocks` blocks do not fit the allocation (a caller bug, not an input error).
    pub fn set_blocks(&mut self, blocks: usize) {
        let len = blocks.max(1) * BLOCK_SIZE;
        assert!(len <= self.cap, "set_blocks beyond the allocation");
        self.len = len;
    }

    /// The capacity in blocks of `AlignedBuf::new(blocks)` (slab pieces round up to 64 KiB).
    pub fn capacity_for(blocks: usize) -> usize {
        let blocks = blocks.max(1);
        slab_bytes(blocks.saturating_mul(BLOCK_SIZE)).map_or(blocks, |b| b / BLOCK_SIZE)
    }

    /// Blocks allocated (the most [`AlignedBuf::set_blocks`] accepts).
    pub fn capacity_blocks(&self) -> usize {
        self.cap / BLOCK_SIZE
    }

    /// Length in bytes (a multiple of [`BLOCK_SIZE`]).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true: every buffer holds at least one block. (Present for clippy's sake.)
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.len / BLOCK_SIZE
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is a live allocation of `len` initialised (zeroed at birth) bytes owned by
        // `self`, and the returned borrow ties it to `&self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutably.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_bytes`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The raw pointer for handing to the kernel. The caller must keep `self` alive and
    /// untouched until the kernel is done with it.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The buffer as little-endian `u32`s (edge blocks), without copying.
    pub fn as_u32s(&self) -> &[u32] {
        // SAFETY: the allocation is 4096-aligned (so 4-aligned), `len` is a multiple of 4, every
        // bit pattern is a valid `u32`, and the target is little endian (checked above), so the
        // values read are the on-disk little-endian ones.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr() as *const u32, self.len / 4) }
    }

    /// The buffer as little-endian `f64`s (weight blocks), without copying.
    pub fn as_f64s(&self) -> &[f64] {
        // SAFETY: 4096-aligned (so 8-aligned), `len` a multiple of 8, every bit pattern is a
        // valid `f64`, little-endian target.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr() as *const f64, self.len / 8) }
    }
}

/// The bytes of the slab piece that holds a buffer of `len` bytes, `None` when such a buffer
/// does not come from the slabs.
fn slab_bytes(len: usize) -> Option<usize> {
    (huge_slabs::PIECE..=huge_slabs::SLAB)
        .contains(&len)
        .then(|| len.next_multiple_of(huge_slabs::PIECE))
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        match self.origin {
            Origin::SingleBlock => single_blocks::give(self.ptr),
            Origin::Slab => huge_slabs::give(self.ptr, self.cap),
            Origin::Heap => {
                let layout = Layout::from_size_align(self.cap, ALIGN).expect("valid layout");
                // SAFETY: `ptr` was allocated in `new` with exactly this layout and is freed once.
                unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) }
            }
        }
    }
}

/// Single blocks (the cache's unit) come from 256 KiB slabs and go back to a free list.
///
/// A 4 KiB allocation aligned to 4 KiB costs glibc up to twice its size (the alignment gap is
/// split off and rarely reused), so a block cache of N bytes held about 2N. The free list keeps
/// what it was given for reuse, so the memory of single blocks is their peak live count, exactly.
mod single_blocks {
    use super::{alloc, Layout, Mutex, NonNull, ALIGN, BLOCK_SIZE};

    /// Blocks carved from one slab.
    const SLAB_BLOCKS: usize = 64;

    /// Free blocks, as addresses (so the list is `Send`).
    static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

    /// An exclusive block: a free one, or the first of a fresh slab.
    pub(super) fn take() -> NonNull<u8> {
        let mut free = FREE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(addr) = free.pop() {
            // Addresses on the list came from `NonNull`s (`give`, or a slab below).
            return NonNull::new(addr as *mut u8).expect("free blocks are non-null");
        }
        let layout =
            Layout::from_size_align(SLAB_BLOCKS * BLOCK_SIZE, ALIGN).expect("valid layout");
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { alloc::alloc(layout) };
        let slab = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        // Slabs live for the process: their blocks circulate through the free list.
        free.extend((1..SLAB_BLOCKS).map(|i| slab.as_ptr() as usize + i * BLOCK_SIZE));
        slab
    }

    /// Returns a block taken with [`take`] (and no longer used) to the free list.
    pub(super) fn give(ptr: NonNull<u8>) {
        FREE.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(ptr.as_ptr() as usize);
    }
}

/// Free lists of buffers for the sequential-scan reads, by size class: powers of two blocks up
/// to the pool's size, which is the last class.
///
/// Scans allocate and drop buffers at a high rate; glibc keeps such freed chunks in its arenas,
/// so without reuse the process's RSS grows far past the cache budget (figures in
/// docs/PERFORMANCE.md, "Why the code is as it is"), and every fresh buffer is zeroed and
/// faulted in for nothing (a sparse level makes thousands of short reads). A read takes a
/// recycled buffer of its class or a little larger, so it holds at most four times what it
/// reads; the idle buffers kept are bounded in bytes.
pub struct BufPool {
    blocks: usize,
    keep_bytes: usize,
    free: Mutex<Idle>,
}

/// The idle buffers: `(capacity in blocks, buffers)` per class, and their bytes in all.
#[derive(Default)]
struct Idle {
    classes: Vec<(usize, Vec<AlignedBuf>)>,
    bytes: usize,
}

impl BufPool {
    /// A pool of buffers of up to `blocks` blocks keeping at most `keep` full-size buffers'
    /// worth of idle ones.
    pub fn new(blocks: usize, keep: usize) -> BufPool {
        let blocks = blocks.max(1);
        BufPool {
            blocks,
            keep_bytes: keep * blocks * BLOCK_SIZE,
            free: Mutex::new(Idle::default()),
        }
    }

    /// The capacity of the buffers that serve a read of `blocks` blocks (at most the pool's).
    fn class(&self, blocks: usize) -> usize {
        blocks.max(1).next_power_of_two().min(self.blocks)
    }

    /// A buffer of `blocks` blocks: recycled when one of its class (or a larger one of at most
    /// four times the read) is idle, new otherwise (also when it is larger than the pool's size, which is then never
    /// pooled).
    pub fn take(&self, blocks: usize) -> AlignedBuf {
        if blocks > self.blocks {
            return AlignedBuf::new(blocks);
        }
        let cap = self.class(blocks);
        let recycled = {
            let mut idle = self.free.lock().unwrap_or_else(|p| p.into_inner());
            // The smallest idle buffer of the class or a larger one of at most four times the
            // read, so that the classes the scan just used serve it while a read never holds
            // more than four times what the scan counts for it.
            let most = 4 * blocks.max(1);
            let got = idle
                .classes
                .iter_mut()
                .filter(|(c, list)| (cap..=most).contains(c) && !list.is_empty())
                .min_by_key(|(c, _)| *c)
                .and_then(|(_, list)| list.pop());
            if let Some(b) = &got {
                idle.bytes -= b.capacity_blocks() * BLOCK_SIZE;
            }
            got
        };
        let mut buf = recycled.unwrap_or_else(|| AlignedBuf::new(cap));
        buf.set_blocks(blocks);
        buf
    }

    /// Returns a buffer for reuse (dropped when it is not of a class, or when the idle bytes
    /// would pass the bound even without the idle buffers smaller than it).
    pub fn give(&self, buf: AlignedBuf) {
        let cap = buf.capacity_blocks();
        if cap != AlignedBuf::capacity_for(self.class(cap)) {
            return;
        }
        let bytes = cap * BLOCK_SIZE;
        let mut idle = self.free.lock().unwrap_or_else(|p| p.into_inner());
        // Room is made by dropping smaller idle buffers, the cheaper ones to make again.
        while idle.bytes + bytes > self.keep_bytes {
            let smaller = idle
                .classes
                .iter_mut()
                .filter(|(c, list)| *c < cap && !list.is_empty())
                .min_by_key(|(c, _)| *c)
                .and_then(|(_, list)| list.pop());
            match smaller {
                Some(b) => idle.bytes -= b.capacity_blocks() * BLOCK_SIZE,
                None => return,
            }
        }
        idle.bytes += bytes;
        match idle.classes.iter_mut().find(|(c, _)| *c == cap) {
            Some((_, list)) => list.push(buf),
            None => idle.classes.push((cap, vec![buf])),
        }
    }

    /// Idle buffers held right now.
    pub fn idle(&self) -> usize {
        let idle = self.free.lock().unwrap_or_else(|p| p.into_inner());
        idle.classes.iter().map(|(_, l)| l.len()).sum()
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_zeroed_and_typed() {
        let mut b = AlignedBuf::new(2);
        assert_eq!(b.len(), 8192);
        assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
        assert!(b.as_bytes().iter().all(|&x| x == 0));
        b.as_bytes_mut()[4..8].copy_from_slice(&7u32.to_le_bytes());
        b.as_bytes_mut()[8..16].copy_from_slice(&2.5f64.to_le_bytes());
        assert_eq!(b.as_u32s()[1], 7);
        assert_eq!(b.as_f64s()[1], 2.5);
        assert_eq!(b.as_u32s().len(), 2048);
        assert_eq!(AlignedBuf::new(0).len(), BLOCK_SIZE);
    }

    #[test]
    fn single_blocks_are_reused_zeroed_and_aligned() {
        let mut held: Vec<AlignedBuf> = (0..200).map(|_| AlignedBuf::new(1)).collect();
        for b in &mut held {
            assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
            b.as_bytes_mut().fill(0xAB);
        }
        let addrs: std::collections::HashSet<usize> =
            held.iter_mut().map(|b| b.as_mut_ptr() as usize).collect();
        assert_eq!(addrs.len(), 200, "live blocks never overlap");
        drop(held);
        for _ in 0..200 {
            let b = AlignedBuf::new(1);
            assert_eq!(b.len(), BLOCK_SIZE);
            assert!(
                b.as_bytes().iter().all(|&x| x == 0),
                "recycled blocks are zeroed"
            );
        }
    }

    #[test]
    fn slab_buffers_are_zeroed_aligned_disjoint_and_pooled() {
        // 64 KiB to 2 MiB come from the huge-page slabs, rounded up to 64 KiB.
        let mut held: Vec<AlignedBuf> = [16usize, 17, 100, 128, 512, 3, 513]
            .iter()
            .map(|&n| AlignedBuf::new(n))
            .collect();
        let caps: Vec<usize> = held.iter().map(|b| b.capacity_blocks()).collect();
        assert_eq!(caps, [16, 32, 112, 128, 512, 3, 513]);
        let mut spans: Vec<(usize, usize)> = held
            .iter_mut()
            .map(|b| {
                assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
                assert!(b.as_bytes().iter().all(|&x| x == 0), "zeroed at birth");
                b.as_bytes_mut().fill(0xCD);
                (b.as_mut_ptr() as usize, b.capacity_blocks() * BLOCK_SIZE)
            })
            .collect();
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "live buffers overlap: {w:?}");
        }
        drop(held);
        let again = AlignedBuf::new(100);
        assert!(
            again.as_bytes().iter().all(|&x| x == 0),
            "a reused piece is zeroed"
        );
        // A pool whose largest class is not a multiple of 64 KiB keeps its rounded buffers.
        let pool = BufPool::new(140, 2);
        let big = pool.take(140);
        assert_eq!(big.capacity_blocks(), 144);
        pool.give(big);
        assert_eq!(pool.idle(), 1);
        assert_eq!(pool.take(120).capacity_blocks(), 144);
    }

    #[test]
    fn pool_recycles_by_class_and_bounds_idle_bytes() {
        let pool = BufPool::new(8, 2);
        let mut a = pool.take(7);
        assert_eq!(a.blocks(), 7);
        assert_eq!(a.capacity_blocks(), 8);
        let ptr = a.as_mut_ptr();
        pool.give(a);
        let mut b = pool.take(5);
        assert_eq!(
            b.as_mut_ptr(),
            ptr,
            "the idle buffer of the class is reused"
        );
        assert_eq!(b.blocks(), 5);
        // A short read takes a buffer of its own class, under twice its size.
        let mut s = pool.take(3);
        assert_eq!(s.capacity_blocks(), 4);
        let sp = s.as_mut_ptr();
        pool.give(s);
        let mut s2 = pool.take(4);
        assert_eq!(s2.as_mut_ptr(), sp, "a short read's buffer is reused");
        assert_eq!(pool.take(2).capacity_blocks(), 2);
        // A larger class serves a read of over a quarter of it, not a shorter one.
        pool.give(AlignedBuf::new(8));
        assert_eq!(pool.take(1).capacity_blocks(), 1);
        assert_eq!(pool.take(2).capacity_blocks(), 8);
        pool.give(pool.take(8));
        let _ = pool.take(8);
        // Larger than the pool's size: a fresh buffer, never pooled.
        let big = pool.take(9);
        assert_eq!(big.blocks(), 9);
        pool.give(big);
        assert_eq!(pool.idle(), 0);
        // Not of a class: dropped.
        pool.give(AlignedBuf::new(3));
        assert_eq!(pool.idle(), 0);
        // At most two full buffers' worth idle (16 blocks): 8 + 4 fit; another 8 makes room by
        // dropping the smaller 4, the cheaper to make again; then nothing smaller fits.
        pool.give(b);
        pool.give(s2);
        assert_eq!(pool.idle(), 2);
        pool.give(AlignedBuf::new(8));
        assert_eq!(pool.idle(), 2);
        pool.give(AlignedBuf::new(4));
        pool.give(AlignedBuf::new(1));
        assert_eq!(pool.idle(), 2, "past the bound");
        assert_eq!(pool.take(5).capacity_blocks(), 8);
        assert_eq!(pool.take(5).capacity_blocks(), 8);
        assert_eq!(pool.idle(), 0);
        // A pool whose size is not a power of two: its size is the last class, and it serves
        // only reads of at least a quarter of it.
        let pool = BufPool::new(12, 2);
        pool.give(AlignedBuf::new(12));
        assert_eq!(pool.take(2).capacity_blocks(), 2);
        assert_eq!(pool.take(9).capacity_blocks(), 12);
        pool.give(AlignedBuf::new(12));
        assert_eq!(pool.take(3).capacity_blocks(), 12);
        assert_eq!(pool.idle(), 0);
    }
}
