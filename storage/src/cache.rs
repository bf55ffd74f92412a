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
//! - An in-flight table makes concurrent misses of one block share one read:
//!   [`BlockCache::get_or_claim`] answers a hit, a *claim* (this caller reads the block and must
//!   [`fulfil`](BlockCache::fulfil) or [`abandon`](BlockCache::abandon) it), or a [`Pending`]
//!   read of another caller to collect when it lands. A caller only ever blocks on a pending
//!   read once all its own claims are fulfilled, so claims cannot wait on each other in a
//!   cycle; an abandoned claim (the reader failed) wakes its waiters, who then read the block
//!   themselves. [`BlockCache::insert`] still adopts a copy another thread inserted first.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use rustc_hash::FxHashMap as HashMap;

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

/// The outcome of one read that other callers wait for: `None` while reading, then the block,
/// or `Some(None)` when the reader gave up.
#[derive(Default)]
struct InFlight {
    state: Mutex<Option<Option<BlockRef>>>,
    landed: Condvar,
}

impl InFlight {
    fn settle(&self, outcome: Option<BlockRef>) {
        *lock(&self.state) = Some(outcome);
        self.landed.notify_all();
    }
}

/// Another caller's read of a block this caller wants.
#[derive(Clone)]
pub struct Pending(Arc<InFlight>);

impl Pending {
    /// The block once the read has landed (`Some(Some(block))`), `Some(None)` when its reader
    /// abandoned it (read it yourself), `None` while it is still being read.
    pub fn poll(&self) -> Option<Option<BlockRef>> {
        lock(&self.0.state).clone()
    }

    /// Waits until the read has landed or was abandoned.
    pub fn wait(&self) -> Option<BlockRef> {
        let mut state = lock(&self.0.state);
        loop {
            if let Some(outcome) = state.as_ref() {
                return outcome.clone();
            }
            state = self.0.landed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// What [`BlockCache::get_or_claim`] found.
pub enum Lookup {
    /// Cached: the block, pinned.
    Hit(BlockRef),
    /// Nobody has it or is reading it: the caller reads it, then fulfils or abandons the claim.
    Claimed,
    /// Another caller is reading it.
    Pending(Pending),
}

/// One shard of the map: the cached blocks and, apart, the blocks being read.
struct Shard {
    cached: Mutex<HashMap<u64, Entry>>,
    /// Blocks claimed by a reader and not yet fulfilled.
    reading: Mutex<HashMap<u64, Arc<InFlight>>>,
}

/// A concurrent cache of 4 KiB blocks keyed by absolute block number.
pub struct BlockCache {
    shards: Vec<Shard>,
    slots: Vec<Slot>,
    hand: AtomicUsize,
    capacity_bytes: u64,
    counters: Arc<IoCounters>,
    /// The cache's room is lent ([`BlockCache::lend`]): nothing new is cached.
    lent: AtomicBool,
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
            shards: (0..SHARDS)
                .map(|_| Shard {
                    cached: Mutex::new(HashMap::default()),
                    reading: Mutex::new(HashMap::default()),
                })
                .collect(),
            slots,
            hand: AtomicUsize::new(0),
            capacity_bytes,
            counters,
            lent: AtomicBool::new(false),
        }
    }

    fn shard(&self, block: u64) -> &Mutex<HashMap<u64, Entry>> {
        &self.shards[(block % SHARDS as u64) as usize].cached
    }

    fn reading(&self, block: u64) -> &Mutex<HashMap<u64, Arc<InFlight>>> {
        &self.shards[(block % SHARDS as u64) as usize].reading
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
        self.shards.iter().map(|s| lock(&s.cached).len()).sum()
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

    /// The block if cached (a hit), else the read another caller has in flight for it (counted
    /// as a hit: no read is needed), else a claim: the caller must read the block and then
    /// [`fulfil`](Self::fulfil) or [`abandon`](Self::abandon) the claim (a miss).
    pub fn get_or_claim(&self, block: u64) -> Lookup {
        let found = {
            let shard = lock(self.shard(block));
            shard.get(&block).map(|e| {
                self.slots[e.slot].referenced.store(true, Ordering::Relaxed);
                e.data.clone()
            })
        };
        let lookup = match found {
            Some(r) => Lookup::Hit(r),
            None => {
                let mut reading = lock(self.reading(block));
                match reading.get(&block) {
                    Some(f) => Lookup::Pending(Pending(f.clone())),
                    None => {
                        // It may have landed between the two lookups.
                        if let Some(e) = lock(self.shard(block)).get(&block) {
                            Lookup::Hit(e.data.clone())
                        } else {
                            reading.insert(block, Arc::default());
                            Lookup::Claimed
                        }
                    }
                }
            }
        };
        let ctr = match lookup {
            Lookup::Claimed => &self.counters.cache_misses,
            _ => &self.counters.cache_hits,
        };
        ctr.fetch_add(1, Ordering::Relaxed);
        lookup
    }

    /// Completes a claim with the block read (and checked): offers it to the cache as
    /// [`insert`](Self::insert) does and hands the block to everyone waiting for it.
    pub fn fulfil(&self, block: u64, data: BlockRef) -> BlockRef {
        let r = self.insert(block, data);
        let waiting = lock(self.reading(block)).remove(&block);
        if let Some(f) = waiting {
            f.settle(Some(r.clone()));
        }
        r
    }

    /// Gives up a claim (the read failed or was never made): its waiters read it themselves.
    pub fn abandon(&self, block: u64) {
        let waiting = lock(self.reading(block)).remove(&block);
        if let Some(f) = waiting {
            f.settle(None);
        }
    }

    /// Whether `block` is cached (no counting, no pinning).
    pub fn contains(&self, block: u64) -> bool {
        lock(self.shard(block)).contains_key(&block)
    }

    /// Empties slot `i`, whose key lock the caller holds: lets its block go unless someone holds
    /// it (then `false`, and the slot keeps it).
    fn empty_slot(&self, i: usize, key: &mut Option<u64>) -> bool {
        if let Some(old) = *key {
            let mut shard = lock(self.shard(old));
            match shard.get(&old) {
                Some(e) if e.slot == i && Arc::strong_count(&e.data) > 1 => return false,
                Some(e) if e.slot == i => {
                    shard.remove(&old);
                }
                _ => {}
            }
            *key = None;
        }
        true
    }

    /// Lends up to `most` bytes of the cache's room to a caller that needs buffers and no
    /// cached block (a pass that streams every list): free slots first, then slots of blocks no
    /// one holds, let go. Until the loan is dropped nothing new is cached (lookups still find
    /// the blocks left and read the rest through), so the blocks cached and the bytes lent stay
    /// within the capacity. `None` when the room is lent already.
    pub fn lend(&self, most: u64) -> Option<CacheLoan<'_>> {
        self.lent
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .ok()?;
        let want = usize::try_from(most / BLOCK_SIZE as u64).unwrap_or(usize::MAX);
        // Each slot is looked at under its lock: an insert that began before the loan has
        // finished with it, and none after the loan fills it.
        let mut free = self
            .slots
            .iter()
            .filter(|slot| lock(&slot.key).is_none())
            .count();
        for (i, slot) in self.slots.iter().enumerate() {
            if free >= want {
                break;
            }
            let mut key = lock(&slot.key);
            if key.is_some() && self.empty_slot(i, &mut key) {
                free += 1;
            }
        }
        Some(CacheLoan {
            cache: self,
            bytes: free.min(want) as u64 * BLOCK_SIZE as u64,
        })
    }

    /// Offers a freshly read (and checked) block to the cache and returns the block to use:
    /// the cached copy if another thread inserted it first, else `data` itself (cached when a
    /// slot could be freed, private otherwise). Never blocks on a slot.
    pub fn insert(&self, block: u64, data: BlockRef) -> BlockRef {
        let n = self.slots.len();
        if n == 0 || self.lent.load(Ordering::Relaxed) {
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
            // Checked under the slot's lock, which `lend` takes to count the slot after lending:
            // an insert that missed the loan has filled its slot before it is counted.
            if self.lent.load(Ordering::SeqCst) {
                return data;
            }
            if slot.referenced.swap(false, Ordering::Relaxed) {
                continue;
            }
            if !self.empty_slot(i, &mut key) {
                continue;
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

/// The cache's room, lent ([`BlockCache::lend`]); caching resumes when it is dropped.
pub struct CacheLoan<'a> {
    cache: &'a BlockCache,
    bytes: u64,
}

impl CacheLoan<'_> {
    /// Bytes lent (at most those asked for): free slots and slots let go.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for CacheLoan<'_> {
    fn drop(&mut self) {
        self.cache.lent.store(false, Ordering::SeqCst);
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
    fn concurrent_misses_share_one_claim() {
        let c = cache(4);
        assert!(matches!(c.get_or_claim(9), Lookup::Claimed));
        let Lookup::Pending(p) = c.get_or_claim(9) else {
            panic!("a second miss must wait for the first read");
        };
        assert!(p.poll().is_none());
        let waiter = std::thread::scope(|s| {
            let h = s.spawn(|| p.wait());
            let r = c.fulfil(9, block(9));
            let got = h.join().unwrap().expect("landed");
            assert!(Arc::ptr_eq(&got, &r));
            got
        });
        assert_eq!(waiter.as_bytes()[0], 9);
        assert!(matches!(c.get_or_claim(9), Lookup::Hit(_)));
        let s = c.counters.snapshot();
        assert_eq!((s.cache_hits, s.cache_misses), (2, 1));
    }

    #[test]
    fn an_abandoned_claim_wakes_its_waiters_and_can_be_claimed_again() {
        let c = cache(0);
        assert!(matches!(c.get_or_claim(3), Lookup::Claimed));
        let Lookup::Pending(p) = c.get_or_claim(3) else {
            panic!("pending expected");
        };
        c.abandon(3);
        assert!(p.wait().is_none());
        assert!(matches!(c.get_or_claim(3), Lookup::Claimed));
        // A cache of no slots still hands the block to the waiters.
        let Lookup::Pending(p) = c.get_or_claim(3) else {
            panic!("pending expected");
        };
        c.fulfil(3, block(3));
        assert_eq!(p.poll().unwrap().unwrap().as_bytes()[0], 3);
    }

    #[test]
    fn a_loan_takes_free_slots_then_unheld_blocks_and_caches_nothing_until_dropped() {
        let c = cache(4);
        c.insert(1, block(1));
        let held = c.insert(2, block(2));
        c.insert(3, block(3));
        // One slot is free: a loan of one block lets nothing go.
        let loan = c.lend(BLOCK_SIZE as u64).expect("nothing was lent");
        assert_eq!(loan.bytes(), BLOCK_SIZE as u64);
        assert!(c.contains(1) && c.contains(2) && c.contains(3));
        assert!(c.lend(u64::MAX).is_none(), "the room is lent once");
        drop(loan);
        // All it can: block 2 is held (its slot is not lent), the others are let go.
        let loan = c.lend(u64::MAX).expect("lent again");
        assert_eq!(loan.bytes(), 3 * BLOCK_SIZE as u64);
        assert!(c.contains(2) && !c.contains(1) && !c.contains(3));
        let fresh = c.insert(5, block(5));
        assert_eq!(fresh.as_bytes()[0], 5, "the caller's block is handed back");
        assert!(!c.contains(5), "nothing is cached during the loan");
        assert!(matches!(c.get_or_claim(6), Lookup::Claimed));
        c.fulfil(6, block(6));
        assert!(!c.contains(6));
        drop(loan);
        drop(held);
        c.insert(5, block(5));
        assert!(c.contains(5), "caching resumes");
        assert_eq!(
            c.lend(u64::MAX).expect("lent again").bytes(),
            4 * BLOCK_SIZE as u64
        );
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
