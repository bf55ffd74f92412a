//! The block cache of the out-of-core path (CAVE's concurrent cache pool, made cheaper to look
//! up): a fixed number of 4 KiB slots, clock eviction, and blocks pinned while in use.
//!
//! - A cached block is an `Arc<AlignedBuf>`; a *pin* is simply a clone of that `Arc`. The map
//!   holds one reference, so a block with a strong count above one is in use and is never
//!   evicted. Clones are only taken under the block's shard lock, and eviction checks the count
//!   under the same lock, so a block cannot be pinned between the check and the eviction.
//! - The map is sharded (64 mutexes, each held for a hash lookup), so two threads hitting cached
//!   blocks rarely meet; CAVE's single global lock is what this replaces.
//! - Eviction sweeps the clock at most twice round; when every slot is pinned (tiny caches) the
//!   insert gives up and the caller keeps its block privately for as long as it needs it. No
//!   caller ever waits for a slot, so a cache of one block cannot deadlock.
//! - Two threads missing the same block at once may both read it; the second insert finds the
//!   first and adopts it. (Waiting for another thread's read would tie sessions together.)

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::blockfile::format::BLOCK_SIZE;
use crate::io::{AlignedBuf, IoCounters};

/// A pinned block: hold it while using the data, drop it to unpin.
pub type BlockRef = Arc<AlignedBuf>;

const SHARDS: usize = 64;

struct Entry {
    slot: usize,
    data: BlockRef,
}

struct Slot {
    /// The block this slot holds; locked only by inserting/evicting threads.
    key: Mutex<Option<u64>>,
    /// The clock's reference bit, set on every hit.
    referenced: AtomicBool,
}

/// A concurrent cache of 4 KiB blocks keyed by absolute block number.
pub struct BlockCache {
    shards: Vec<Mutex<HashMap<u64, Entry>>>,
    slots: Vec<Slot>,
    hand: AtomicUsize,
    capacity_bytes: u64,
    counters: Arc<IoCounters>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere while holding the lock leaves the map consistent (every update is a
    // single insert/remove), so poisoning is ignored.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlockCache({} slots)", self.slots.len())
    }
}

impl BlockCache {
    /// A cache of `capacity_bytes / 4096` slots (zero slots is allowed: nothing is cached).
    /// Hits and misses are counted in `counters`.
    pub fn new(capacity_bytes: u64, counters: Arc<IoCounters>) -> BlockCache {
        let n = usize::try_from(capacity_bytes / BLOCK_SIZE as u64).unwrap_or(usize::MAX);
        let slots = (0..n)
            .map(|_| Slot {
                key: Mutex::new(None),
                referenced: AtomicBool::new(false),
            })
            .collect();
        BlockCache {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            slots,
            hand: AtomicUsize::new(0),
            capacity_bytes,
            counters,
        }
    }

    fn shard(&self, block: u64) -> &Mutex<HashMap<u64, Entry>> {
        &self.shards[(block % SHARDS as u64) as usize]
    }

    /// Number of block slots.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// The configured capacity.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Blocks cached right now.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).len()).sum()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The block, pinned, if cached; counts a hit or a miss.
    pub fn get(&self, block: u64) -> Option<BlockRef> {
        let found = {
            let shard = lock(self.shard(block));
            shard.get(&block).map(|e| {
                self.slots[e.slot].referenced.store(true, Ordering::Relaxed);
                e.data.clone()
            })
        };
        let ctr = if found.is_some() {
            &self.counters.cache_hits
        } else {
            &self.counters.cache_misses
        };
        ctr.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Whether `block` is cached (no counting, no pinning).
    pub fn contains(&self, block: u64) -> bool {
        lock(self.shard(block)).contains_key(&block)
    }

    /// Offers a freshly read (and checked) block to the cache and returns the block to use:
    /// the cached copy if another thread inserted it first, else `data` itself (cached when a
    /// slot could be freed, private otherwise). Never blocks on a slot.
    pub fn insert(&self, block: u64, data: BlockRef) -> BlockRef {
        let n = self.slots.len();
        if n == 0 {
            return data;
        }
        if let Some(e) = lock(self.shard(block)).get(&block) {
            return e.data.clone();
        }
        for _ in 0..2 * n + 1 {
            let i = self.hand.fetch_add(1, Ordering::Relaxed) % n;
            let slot = &self.slots[i];
            let Ok(mut key) = slot.key.try_lock() else {
                continue;
            };
            if slot.referenced.swap(false, Ordering::Relaxed) {
                continue;
            }
            if let Some(old) = *key {
                let mut shard = lock(self.shard(old));
                match shard.get(&old) {
                    Some(e) if e.slot == i && Arc::strong_count(&e.data) > 1 => continue,
                    Some(e) if e.slot == i => {
                        shard.remove(&old);
                    }
                    _ => {}
                }
                *key = None;
            }
            let mut shard = lock(self.shard(block));
            if let Some(e) = shard.get(&block) {
                return e.data.clone();
            }
            shard.insert(
                block,
                Entry {
                    slot: i,
                    data: data.clone(),
                },
            );
            *key = Some(block);
            return data;
        }
        data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(tag: u8) -> BlockRef {
        let mut b = AlignedBuf::new(1);
        b.as_bytes_mut().fill(tag);
        Arc::new(b)
    }

    fn cache(blocks: u64) -> BlockCache {
        BlockCache::new(blocks * BLOCK_SIZE as u64, Arc::new(IoCounters::default()))
    }

    #[test]
    fn hit_miss_and_eviction() {
        let c = cache(2);
        assert!(c.get(1).is_none());
        c.insert(1, block(1));
        c.insert(2, block(2));
        assert_eq!(c.get(1).unwrap().as_bytes()[0], 1);
        // Unpinned: a third block evicts one of them.
        c.insert(3, block(3));
        assert_eq!(c.len(), 2);
        assert!(c.contains(3));
        let s = c.counters.snapshot();
        assert_eq!((s.cache_hits, s.cache_misses), (1, 1));
    }

    #[test]
    fn pinned_blocks_are_never_evicted() {
        let c = cache(2);
        let p1 = c.insert(1, block(1));
        let p2 = c.insert(2, block(2));
        for k in 10..100 {
            let b = c.insert(k, block(k as u8));
            assert_eq!(b.as_bytes()[0], k as u8);
            assert!(!c.contains(k), "all slots pinned, {k} must stay private");
        }
        assert!(Arc::ptr_eq(&c.get(1).unwrap(), &p1));
        assert!(Arc::ptr_eq(&c.get(2).unwrap(), &p2));
        drop(p1);
        c.insert(50, block(50));
        assert!(c.contains(50) && !c.contains(1) && c.contains(2));
    }

    #[test]
    fn zero_slots_caches_nothing() {
        let c = BlockCache::new(100, Arc::new(IoCounters::default()));
        let b = c.insert(1, block(1));
        assert_eq!(b.as_bytes()[0], 1);
        assert!(c.is_empty());
    }

    #[test]
    fn a_racing_insert_adopts_the_first_copy() {
        let c = cache(4);
        let a = c.insert(7, block(1));
        let b = c.insert(7, block(2));
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn tiny_caches_under_two_threads() {
        for slots in [1u64, 2] {
            let c = cache(slots);
            std::thread::scope(|s| {
                for t in 0..2u64 {
                    let c = &c;
                    s.spawn(move || {
                        // Each thread pins one block of its own for the whole run and churns
                        // others; the pinned one must stay cached and intact when it got a slot.
                        let mine = c.insert(1000 + t, block(t as u8 + 1));
                        let cached = c.contains(1000 + t);
                        for i in 0..2000u64 {
                            let k = t * 1_000_000 + i % 37;
                            let b = match c.get(k) {
                                Some(b) => b,
                                None => c.insert(k, block((k % 200) as u8)),
                            };
                            assert_eq!(b.as_bytes()[4095], (k % 200) as u8);
                            if cached {
                                let again = c.get(1000 + t).expect("pinned block evicted");
                                assert!(Arc::ptr_eq(&again, &mine));
                            }
                        }
                        assert_eq!(mine.as_bytes()[0], t as u8 + 1);
                    });
                }
            });
            assert!(c.len() <= slots as usize);
        }
    }
}
