//! Server-side memory of a memory node: regions allocated on request, bounds-checked verbs,
//! mailboxes and pass-by-value updates. Shared by the TCP server and the in-process transport,
//! so both run exactly the same checks.
//!
//! Memory is held as `AtomicU64` words so that CAS/FAA and concurrent byte writes from many
//! connection threads are race-free without `unsafe` and without a global lock. Bytes map to
//! words little-endian: byte `i` of a region is bits `8*(i%8)..` of word `i/8`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use super::addr::{GlobalAddr, MAX_OFFSET};
use super::protocol::{ErrorCode, Message, UpdateItem, UpdateOp, Verb, VerbReply, MAX_BATCH_READ};
use crate::remote_memory::ElementKind;

/// First offset handed out: offset 0 stays invalid so a zeroed address never reads memory.
const FIRST_OFFSET: u64 = 4096;
/// Regions start on this boundary, so a region's words are aligned like its offsets.
const REGION_ALIGN: u64 = 64;

struct Region {
    start: u64,
    len: u64,
    /// Who may free it once committed: a graph load's nonce, or [`NO_OWNER`] for regions of
    /// plain `ALLOC` / `ALLOC_LEASED` (a run's state, a job region), which any FREE frees.
    owner: u64,
    words: Box<[AtomicU64]>,
}

/// The owner of regions allocated without one.
pub const NO_OWNER: u64 = 0;

/// The bytes a region asked for `size` bytes holds on its node (whole 8-byte words), `None`
/// when that overflows.
pub fn held_bytes(size: u64) -> Option<u64> {
    size.checked_add(7).map(|s| s & !7)
}

type Fail = (ErrorCode, String);

impl Region {
    fn word(&self, byte_off: u64) -> &AtomicU64 {
        &self.words[(byte_off / 8) as usize]
    }

    fn read(&self, off: u64, out: &mut Vec<u8>, len: u64) {
        let mut i = off;
        let end = off + len;
        while i < end {
            let w = self.word(i).load(Ordering::Acquire).to_le_bytes();
            let from = (i % 8) as usize;
            let to = ((end - (i - i % 8)).min(8)) as usize;
            out.extend_from_slice(&w[from..to]);
            i = i - i % 8 + 8;
        }
    }

    fn write(&self, off: u64, data: &[u8]) {
        let mut i = off;
        let mut rest = data;
        while !rest.is_empty() {
            let from = (i % 8) as usize;
            let n = (8 - from).min(rest.len());
            let word = self.word(i);
            if n == 8 {
                let mut a = [0u8; 8];
                a.copy_from_slice(&rest[..8]);
                word.store(u64::from_le_bytes(a), Ordering::Release);
            } else {
                // A partial word: merge without disturbing the neighbours' bytes.
                let _ = word.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                    let mut b = old.to_le_bytes();
                    b[from..from + n].copy_from_slice(&rest[..n]);
                    Some(u64::from_le_bytes(b))
                });
            }
            rest = &rest[n..];
            i += n as u64;
        }
    }
}

/// One region's memory, kept alive while held (a device registration holds one, so a region
/// freed while registered is unmapped only after its registration is dropped).
#[derive(Clone)]
pub struct RegionMemory {
    region: Arc<Region>,
    node_id: u16,
}

impl RegionMemory {
    /// The region's first global address.
    pub fn start(&self) -> GlobalAddr {
        GlobalAddr::new(self.node_id, self.region.start).unwrap_or_default()
    }

    /// Bytes in the region.
    pub fn len(&self) -> u64 {
        self.region.len
    }

    /// True for a region of no bytes (never allocated: ALLOC refuses size 0).
    pub fn is_empty(&self) -> bool {
        self.region.len == 0
    }

    /// The region's first byte, for registering it with a device. Its words are atomics, so a
    /// device writing them behind the compiler's back is the interior mutability they allow.
    pub fn as_ptr(&self) -> *mut u8 {
        self.region.words.as_ptr() as *mut u8
    }

    /// True while the node still holds this region (not freed).
    pub fn is_live(&self, node: &MemoryNode) -> bool {
        node.regions
            .read()
            .map(|r| {
                r.get(&self.region.start)
                    .is_some_and(|x| Arc::ptr_eq(x, &self.region))
            })
            .unwrap_or(false)
    }
}

/// The state of one memory node: its regions, capacity accounting and mailboxes.
pub struct MemoryNode {
    node_id: u16,
    /// Drawn at random when the node starts: addresses handed out in another life of the node
    /// (it restarts from the same first offset) are told apart by it.
    epoch: u64,
    capacity: u64,
    used: AtomicU64,
    next_offset: Mutex<u64>,
    regions: RwLock<BTreeMap<u64, Arc<Region>>>,
    mailboxes: Mutex<HashMap<u64, VecDeque<Vec<u8>>>>,
}

impl MemoryNode {
    /// A node with id `node_id` that will hand out at most `capacity` bytes (regions + mailboxes).
    pub fn new(node_id: u16, capacity: u64) -> MemoryNode {
        MemoryNode {
            node_id,
            epoch: fresh_epoch(),
            capacity,
            used: AtomicU64::new(0),
            next_offset: Mutex::new(FIRST_OFFSET),
            regions: RwLock::new(BTreeMap::new()),
            mailboxes: Mutex::new(HashMap::new()),
        }
    }

    /// The region holding `addr`, if any.
    pub fn region_memory(&self, addr: GlobalAddr) -> Option<RegionMemory> {
        if addr.node() != self.node_id {
            return None;
        }
        let regions = self.regions.read().unwrap_or_else(|e| e.into_inner());
        let (_, r) = regions.range(..=addr.offset()).next_back()?;
        (addr.offset() - r.start < r.len).then(|| RegionMemory {
            region: r.clone(),
            node_id: self.node_id,
        })
    }

    /// This node's id, the high 16 bits of every address it hands out.
    pub fn node_id(&self) -> u16 {
        self.node_id
    }

    /// This life's epoch (see [`Message::HelloOk`]).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The `--capacity` limit in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Bytes currently allocated (regions + queued mailbox buffers).
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    fn reserve(&self, bytes: u64) -> Result<(), Fail> {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                u.checked_add(bytes).filter(|&t| t <= self.capacity)
            })
            .map(|_| ())
            .map_err(|u| {
                (
                    ErrorCode::Capacity,
                    format!(
                        "capacity exceeded: {bytes} bytes requested, {} of {} in use",
                        u, self.capacity
                    ),
                )
            })
    }

    fn release(&self, bytes: u64) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// Allocates a zeroed region; the capacity is checked before any memory is touched, and a
    /// failed host allocation is an error, not an abort.
    pub fn alloc(&self, size: u64) -> Result<GlobalAddr, Fail> {
        self.alloc_owned(size, NO_OWNER)
    }

    /// [`alloc`](MemoryNode::alloc), the region tagged with `owner`: once committed, only
    /// [`free_owned`](MemoryNode::free_owned) with the same owner and this epoch frees it.
    pub fn alloc_owned(&self, size: u64, owner: u64) -> Result<GlobalAddr, Fail> {
        if size == 0 {
            return Err((ErrorCode::BadRequest, "zero-size allocation".into()));
        }
        let len = held_bytes(size).ok_or((ErrorCode::Capacity, "size overflows".to_string()))?;
        self.reserve(len)?;
        let n = (len / 8) as usize;
        let mut v: Vec<AtomicU64> = Vec::new();
        if v.try_reserve_exact(n).is_err() {
            self.release(len);
            return Err((
                ErrorCode::Capacity,
                format!("host memory exhausted allocating {len} bytes"),
            ));
        }
        v.extend((0..n).map(|_| AtomicU64::new(0)));
        let start = {
            let mut next = self.next_offset.lock().unwrap_or_else(|e| e.into_inner());
            let start = *next;
            let end = start.checked_add(len).filter(|&e| e <= MAX_OFFSET);
            let Some(end) = end else {
                self.release(len);
                return Err((ErrorCode::Capacity, "48-bit address space exhausted".into()));
            };
            *next = end.div_ceil(REGION_ALIGN) * REGION_ALIGN;
            start
        };
        let region = Arc::new(Region {
            start,
            len,
            owner,
            words: v.into_boxed_slice(),
        });
        self.regions
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(start, region);
        Ok(GlobalAddr::new(self.node_id, start).unwrap_or_default())
    }

    /// Frees the region starting exactly at `addr`, if it has no owner. Offsets are never
    /// reused within one life of the node, so a stale address is refused rather than aliasing
    /// a newer region; an owned region (a graph's) is refused too: only its owner frees it,
    /// with [`free_owned`](MemoryNode::free_owned).
    pub fn free(&self, addr: GlobalAddr) -> Result<(), Fail> {
        self.remove_if(addr, |r| {
            if r.owner == NO_OWNER {
                Ok(())
            } else {
                Err((
                    ErrorCode::NotOwner,
                    format!("{addr} holds a graph's data; only a FREE naming its owner frees it"),
                ))
            }
        })
    }

    /// Frees the region starting exactly at `addr` if it was allocated in `epoch` of this
    /// node by `owner`; otherwise refuses (`NotOwner`) and leaves it as it is.
    pub fn free_owned(&self, addr: GlobalAddr, epoch: u64, owner: u64) -> Result<(), Fail> {
        if epoch != self.epoch {
            return Err((
                ErrorCode::NotOwner,
                format!(
                    "{addr} was allocated in an earlier life of this memory node (it restarted since): nothing of the caller's is here, nothing freed"
                ),
            ));
        }
        self.remove_if(addr, |r| {
            if r.owner == owner {
                Ok(())
            } else {
                Err((
                    ErrorCode::NotOwner,
                    format!("{addr} belongs to another owner; nothing freed"),
                ))
            }
        })
    }

    /// Frees the region at `addr` whatever its owner: the end of the lease of the connection
    /// that allocated it and never committed it.
    pub(crate) fn free_leased(&self, addr: GlobalAddr) -> Result<(), Fail> {
        self.remove_if(addr, |_| Ok(()))
    }

    fn remove_if(
        &self,
        addr: GlobalAddr,
        may: impl FnOnce(&Region) -> Result<(), Fail>,
    ) -> Result<(), Fail> {
        self.check_node(addr)?;
        let r = {
            let mut regions = self.regions.write().unwrap_or_else(|e| e.into_inner());
            match regions.get(&addr.offset()) {
                Some(r) => may(r.as_ref())?,
                None => {
                    return Err((
                        ErrorCode::OutOfBounds,
                        format!("{addr} is not the start of an allocated region"),
                    ))
                }
            }
            regions.remove(&addr.offset())
        };
        if let Some(r) = r {
            self.release(r.len);
            self.drop_mailboxes_of(addr.offset());
        }
        Ok(())
    }

    fn check_node(&self, addr: GlobalAddr) -> Result<(), Fail> {
        if addr.node() != self.node_id {
            return Err((
                ErrorCode::WrongNode,
                format!(
                    "{addr} belongs to memory node {}, this is {}",
                    addr.node(),
                    self.node_id
                ),
            ));
        }
        Ok(())
    }

    /// The region holding `[addr, addr+len)`, and the offset inside it; refused unless the whole
    /// range lies inside one allocated region.
    fn locate(&self, addr: GlobalAddr, len: u64) -> Result<(Arc<Region>, u64), Fail> {
        self.check_node(addr)?;
        let off = addr.offset();
        let regions = self.regions.read().unwrap_or_else(|e| e.into_inner());
        let found = regions.range(..=off).next_back().map(|(_, r)| r.clone());
        drop(regions);
        let oob = || {
            (
                ErrorCode::OutOfBounds,
                format!("{addr}+{len} is outside every allocated region"),
            )
        };
        let r = found.ok_or_else(oob)?;
        let rel = off - r.start;
        match rel.checked_add(len) {
            Some(end) if end <= r.len => Ok((r, rel)),
            _ => Err(oob()),
        }
    }

    fn word_at(&self, addr: GlobalAddr, width: u64) -> Result<(Arc<Region>, u64), Fail> {
        if addr.offset() & (width - 1) != 0 {
            return Err((
                ErrorCode::Unaligned,
                format!("{addr} is not aligned to {width} bytes"),
            ));
        }
        self.locate(addr, width)
    }

    /// Runs one verb; errors are per verb so the rest of a batch still runs (as with RDMA work
    /// requests, each of which completes on its own).
    pub fn verb(&self, v: &Verb) -> VerbReply {
        let r = match v {
            Verb::Read { addr, len } => self.locate(*addr, *len as u64).map(|(r, off)| {
                let mut out = Vec::with_capacity(*len as usize);
                r.read(off, &mut out, *len as u64);
                VerbReply::Read(out)
            }),
            Verb::Write { addr, data } => self.locate(*addr, data.len() as u64).map(|(r, off)| {
                r.write(off, data);
                VerbReply::Written
            }),
            Verb::Cas {
                addr,
                expected,
                new,
            } => self.word_at(*addr, 8).map(|(r, off)| {
                let old = match r.word(off).compare_exchange(
                    *expected,
                    *new,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(o) | Err(o) => o,
                };
                VerbReply::Cas { old }
            }),
            Verb::Faa { addr, delta } => self.word_at(*addr, 8).map(|(r, off)| VerbReply::Faa {
                old: r.word(off).fetch_add(*delta, Ordering::AcqRel),
            }),
        };
        r.unwrap_or_else(|(code, message)| VerbReply::Failed { code, message })
    }

    /// Runs a batch in order. Refuses the whole batch up front when its READ answers could not
    /// fit in one reply frame.
    pub fn batch(&self, verbs: &[Verb]) -> Message {
        let read_bytes: u64 = verbs
            .iter()
            .map(|v| match v {
                Verb::Read { len, .. } => *len as u64,
                _ => 0,
            })
            .sum();
        if read_bytes > MAX_BATCH_READ {
            return Message::Error {
                code: ErrorCode::TooLarge,
                message: format!("batch reads {read_bytes} bytes, limit {MAX_BATCH_READ}"),
            };
        }
        Message::BatchReply(verbs.iter().map(|v| self.verb(v)).collect())
    }

    /// Appends a buffer to a mailbox; its bytes count against the capacity until pulled.
    ///
    /// A mailbox belongs to a region: its id is the region's offset shifted left by 16 bits,
    /// plus a number the region's owner chooses. Freeing the region (or its lease ending with
    /// the connection) drops its mailboxes, so a compute node killed mid-round leaves nothing
    /// behind, and mail for a region that is gone is refused.
    pub fn mailbox_push(&self, mailbox: u64, data: Vec<u8>) -> Result<(), Fail> {
        let owner = mailbox >> 16;
        self.reserve(data.len() as u64)?;
        let mut boxes = self.mailboxes.lock().unwrap_or_else(|e| e.into_inner());
        let owned = self
            .regions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&owner);
        if !owned {
            drop(boxes);
            self.release(data.len() as u64);
            return Err((
                ErrorCode::OutOfBounds,
                format!("mailbox {mailbox:#x} belongs to no region of this node (freed?)"),
            ));
        }
        boxes.entry(mailbox).or_default().push_back(data);
        Ok(())
    }

    /// Drops the mailboxes of the region at `offset`, returning their bytes to the capacity.
    fn drop_mailboxes_of(&self, offset: u64) {
        let mut boxes = self.mailboxes.lock().unwrap_or_else(|e| e.into_inner());
        let ids: Vec<u64> = boxes
            .keys()
            .copied()
            .filter(|id| id >> 16 == offset)
            .collect();
        let mut bytes = 0u64;
        for id in ids {
            if let Some(q) = boxes.remove(&id) {
                bytes += q.iter().map(|b| b.len() as u64).sum::<u64>();
            }
        }
        drop(boxes);
        self.release(bytes);
    }

    /// Takes the oldest buffers of a mailbox up to `max_bytes` (at least one if any waits), so a
    /// receiver pulls in batches of a size it chose.
    pub fn mailbox_pull(&self, mailbox: u64, max_bytes: u32) -> Vec<Vec<u8>> {
        let mut boxes = self.mailboxes.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        let mut total = 0u64;
        let mut limit = (max_bytes as u64).min(MAX_BATCH_READ);
        if let Some(q) = boxes.get_mut(&mailbox) {
            while let Some(front) = q.front() {
                let n = front.len() as u64;
                if !out.is_empty() && total + n > limit {
                    break;
                }
                total += n;
                limit = limit.max(n);
                if let Some(b) = q.pop_front() {
                    out.push(b);
                }
            }
            if q.is_empty() {
                boxes.remove(&mailbox);
            }
        }
        drop(boxes);
        self.release(total);
        out
    }

    /// Applies pass-by-value updates locally. Every item is bounds-checked before any is
    /// applied, so a bad item leaves the attributes untouched. Returns how many changed.
    pub fn apply(
        &self,
        base: GlobalAddr,
        attr: ElementKind,
        op: UpdateOp,
        items: &[UpdateItem],
    ) -> Result<u64, Fail> {
        let w = attr.width();
        if items.is_empty() {
            return Ok(0);
        }
        let max_index = items.iter().map(|i| i.index).max().unwrap_or(0);
        let span = max_index
            .checked_add(1)
            .and_then(|n| n.checked_mul(w))
            .ok_or((ErrorCode::OutOfBounds, "vertex index overflows".to_string()))?;
        if base.offset() & (w - 1) != 0 {
            return Err((
                ErrorCode::Unaligned,
                format!("attribute base {base} is not aligned to {w} bytes"),
            ));
        }
        // One region must hold base..base+span: attribute arrays are single regions.
        let (r, rel) = self.locate(base, span)?;
        let mut changed = 0u64;
        for it in items {
            let off = rel + it.index * w;
            let word = r.word(off);
            let res = match attr {
                ElementKind::U64 => match op {
                    UpdateOp::Min => {
                        let old = word.fetch_min(it.value, Ordering::AcqRel);
                        it.value < old
                    }
                    UpdateOp::Add => {
                        word.fetch_add(it.value, Ordering::AcqRel);
                        it.value != 0
                    }
                },
                ElementKind::F64 => {
                    let v = f64::from_bits(it.value);
                    let mut did = false;
                    let _ = word.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                        let o = f64::from_bits(old);
                        let n = match op {
                            UpdateOp::Min => {
                                if v < o {
                                    v
                                } else {
                                    return None;
                                }
                            }
                            UpdateOp::Add => o + v,
                        };
                        did = n.to_bits() != old;
                        Some(n.to_bits())
                    });
                    did
                }
                ElementKind::U32 => {
                    let shift = (off % 8) * 8;
                    let v = it.value as u32;
                    let mut did = false;
                    let _ = word.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                        let o = (old >> shift) as u32;
                        let n = match op {
                            UpdateOp::Min if v < o => v,
                            UpdateOp::Min => return None,
                            UpdateOp::Add => o.wrapping_add(v),
                        };
                        did = n != o;
                        Some((old & !(0xFFFF_FFFFu64 << shift)) | ((n as u64) << shift))
                    });
                    did
                }
            };
            changed += res as u64;
        }
        Ok(changed)
    }

    /// Answers one request. Errors become `Message::Error`, never a panic, whatever the request.
    pub fn handle(&self, msg: Message) -> Message {
        let err = |(code, message): Fail| Message::Error { code, message };
        match msg {
            Message::Alloc { size } => self
                .alloc(size)
                .map(|addr| Message::Allocated { addr })
                .unwrap_or_else(err),
            Message::Free { addr } => self.free(addr).map(|_| Message::Done).unwrap_or_else(err),
            Message::FreeOwned { addr, epoch, owner } => self
                .free_owned(addr, epoch, owner)
                .map(|_| Message::Done)
                .unwrap_or_else(err),
            Message::Batch(verbs) => self.batch(&verbs),
            Message::MailboxPush { mailbox, data } => self
                .mailbox_push(mailbox, data)
                .map(|_| Message::Done)
                .unwrap_or_else(err),
            Message::MailboxPull { mailbox, max_bytes } => {
                Message::Pulled(self.mailbox_pull(mailbox, max_bytes))
            }
            Message::Apply {
                base,
                attr,
                op,
                items,
            } => self
                .apply(base, attr, op, &items)
                .map(|changed| Message::Applied { changed })
                .unwrap_or_else(err),
            Message::AllocOwned { .. } => err((
                ErrorCode::BadRequest,
                "ALLOC_OWNED is leased to a connection; send it over one".into(),
            )),
            Message::Info => Message::InfoReply {
                node_id: self.node_id,
                capacity: self.capacity,
                used: self.used(),
                regions: self.regions.read().map(|r| r.len() as u64).unwrap_or(0),
            },
            Message::Hello { .. } => err((ErrorCode::BadRequest, "already authenticated".into())),
            // A memory node with a usable device answers these in its server, before here.
            Message::RdmaConnect { .. } | Message::RegionKeyOf { .. } => err((
                ErrorCode::BadRequest,
                "this memory node offers no RDMA (no device, or built without the `rdma` feature); use the TCP transport".into(),
            )),
            other => err((
                ErrorCode::BadRequest,
                format!("not a request: {}", short_name(&other)),
            )),
        }
    }
}

/// A random epoch (the kernel's generator; the clock and process id if it cannot be read),
/// never 0.
fn fresh_epoch() -> u64 {
    use std::io::Read;
    let mut b = [0u8; 8];
    let random = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok();
    let mut x = if random {
        u64::from_le_bytes(b)
    } else {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let mut x = t ^ ((std::process::id() as u64) << 32) ^ 0x9E37_79B9_7F4A_7C15;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^ (x >> 33)
    };
    if x == 0 {
        x = 1;
    }
    x
}

fn short_name(m: &Message) -> &'static str {
    match m {
        Message::HelloOk { .. } => "HelloOk",
        Message::Allocated { .. } => "Allocated",
        Message::Done => "Done",
        Message::BatchReply(_) => "BatchReply",
        Message::Pulled(_) => "Pulled",
        Message::Applied { .. } => "Applied",
        Message::InfoReply { .. } => "InfoReply",
        Message::Error { .. } => "Error",
        _ => "request",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unaligned_reads_and_writes_round_trip() {
        let n = MemoryNode::new(1, 1 << 20);
        let a = n.alloc(100).unwrap();
        let data: Vec<u8> = (0..37u8).collect();
        let at = a.checked_add(5).unwrap();
        assert_eq!(
            n.verb(&Verb::Write {
                addr: at,
                data: data.clone()
            }),
            VerbReply::Written
        );
        assert_eq!(
            n.verb(&Verb::Read { addr: at, len: 37 }),
            VerbReply::Read(data)
        );
        assert_eq!(
            n.verb(&Verb::Read { addr: a, len: 5 }),
            VerbReply::Read(vec![0; 5])
        );
        // 100 rounds up to 104; 104 is the end.
        assert!(matches!(
            n.verb(&Verb::Read {
                addr: a.checked_add(100).unwrap(),
                len: 5
            }),
            VerbReply::Failed {
                code: ErrorCode::OutOfBounds,
                ..
            }
        ));
    }

    #[test]
    fn capacity_is_enforced_and_released() {
        let n = MemoryNode::new(1, 1024);
        let a = n.alloc(1000).unwrap();
        assert_eq!(n.alloc(100).unwrap_err().0, ErrorCode::Capacity);
        n.free(a).unwrap();
        assert!(n.free(a).is_err());
        assert!(n.alloc(1024).is_ok());
        assert_eq!(n.alloc(u64::MAX).unwrap_err().0, ErrorCode::Capacity);
    }

    #[test]
    fn an_owned_region_is_freed_only_by_its_owner_in_the_same_life() {
        let n = MemoryNode::new(1, 1 << 20);
        let a = n.alloc_owned(64, 7).unwrap();
        assert_eq!(n.free(a).unwrap_err().0, ErrorCode::NotOwner);
        assert_eq!(
            n.free_owned(a, n.epoch(), 8).unwrap_err().0,
            ErrorCode::NotOwner
        );
        let other_life = n.epoch().wrapping_add(1);
        assert_eq!(
            n.free_owned(a, other_life, 7).unwrap_err().0,
            ErrorCode::NotOwner
        );
        assert_eq!(n.used(), 64, "every refused free left the region in place");
        n.free_owned(a, n.epoch(), 7).unwrap();
        assert_eq!(n.used(), 0);
        // A restarted node hands out the same offsets again, under another epoch.
        let again = MemoryNode::new(1, 1 << 20);
        let b = again.alloc_owned(64, 9).unwrap();
        assert_eq!(a, b);
        assert_ne!(again.epoch(), n.epoch());
        assert_eq!(
            again.free_owned(a, n.epoch(), 7).unwrap_err().0,
            ErrorCode::NotOwner
        );
        assert_eq!(again.used(), 64);
    }

    #[test]
    fn pass_by_value_min_and_add() {
        let n = MemoryNode::new(1, 1 << 20);
        let a = n.alloc(64).unwrap();
        let it = |index, value| UpdateItem { index, value };
        assert_eq!(
            n.apply(a, ElementKind::U32, UpdateOp::Add, &[it(1, 5), it(1, 2)])
                .unwrap(),
            2
        );
        assert_eq!(
            n.apply(a, ElementKind::U32, UpdateOp::Min, &[it(1, 9), it(1, 3)])
                .unwrap(),
            1
        );
        assert_eq!(
            n.verb(&Verb::Read { addr: a, len: 8 }),
            VerbReply::Read(vec![0, 0, 0, 0, 3, 0, 0, 0])
        );
        assert!(n
            .apply(a, ElementKind::U64, UpdateOp::Add, &[it(8, 1)])
            .is_err());
    }
}
