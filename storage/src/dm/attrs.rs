//! Remote vertex attribute arrays (DMG §4.3.2, direct remote update): per-vertex state that does
//! not fit the compute node's `cn_cache` lives in the memory nodes and is updated there with
//! one-sided verbs, batched. [`RemoteArray`] is the disaggregated store's [`RemoteVector`].
//!
//! **Placement.** An array is range-partitioned like the vertex index: partition `p` (elements
//! `bounds[p]..bounds[p+1]`, the same vertex boundaries as [`DmLayout::partition_of`]) is one
//! region on memory node `p`, allocated leased to the array's connection (so a query killed
//! mid-run leaves nothing behind: see [`lease`](super::lease)) and released with FREE
//! (explicitly with [`RemoteArray::free`], or best effort on drop). Every element is one 8-byte
//! word whatever its [`ElementKind`]: CAS and FAA work on aligned words, so a `U32` attribute is
//! stored zero-extended and costs 8 bytes remotely, not 4.
//!
//! **Batching.** No operation waits one round trip per element. Indices are grouped by memory
//! node, packed into doorbell batches of at most [`MAX_VERBS`] verbs, and up to [`DEPTH`] batches
//! are in flight per calling thread; several threads may use one array at once (the transports
//! are multiplexed).
//!
//! **Update protocols.**
//! * [`RemoteArray::cas_min_batch`]: read the current words (nearby indices merged into one READ),
//!   compare locally, CAS the ones that would drop; a failed CAS returns the word it saw, so the
//!   retry needs no second read and only the failed items are retried, until each item has
//!   either been written or is no longer smaller. Duplicate indices in one call are reduced to
//!   their minimum first (the compute node's share of collaborative combining).
//! * [`RemoteArray::claim_batch`]: one CAS per index from a known value (BFS's "unvisited"), no
//!   read at all: exactly one caller wins each index.
//! * [`RemoteArray::add_batch`]: integers with FAA (one-sided, one verb per distinct index);
//!   `F64` with the memory node's pass-by-value `Apply(Add)`, one call per node per batch.
//!   A one-sided f64 add would be a read-CAS loop: two round trips at best and unbounded retries
//!   under contention, where the node applies the sum atomically in one round trip at the price
//!   of a little memory-node CPU (the trade DMG's ValRD makes, §4.3.1).
//!
//! Every reply is checked: a failed verb, a reply of the wrong kind or count, or a dead node is a
//! [`StoreError::Remote`] naming the node, never a panic.
//!
//! [`DmLayout::partition_of`]: super::load::DmLayout::partition_of

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

use super::addr::GlobalAddr;
use super::protocol::{UpdateItem, UpdateOp, VerbReply};
use super::transport::{Batch, Ticket, Transport};
use crate::error::{Result, StoreError};
use crate::remote_memory::{ElementKind, RemoteVector};

/// Bytes of one remote element.
pub const WORD: u64 = 8;
/// Most verbs (or pass-by-value items) in one doorbell batch.
pub const MAX_VERBS: usize = 1024;
/// Batches in flight per calling thread.
pub const DEPTH: usize = 8;
/// Largest READ or WRITE verb in bulk transfers.
const PIECE: u64 = 1 << 20;
/// Gap (elements) up to which two reads of one node are merged into one.
const MERGE_GAP: u64 = 8;
/// Longest merged read of `cas_min_batch`, in elements.
const MERGE_MAX: u64 = 4096;

/// First word of a descriptor: its format, so a peer of another version is refused.
const DESCRIPTOR_TAG: u64 = 0x4654_4154_5452_0001;

fn kind_code(kind: ElementKind) -> u64 {
    match kind {
        ElementKind::U32 => 1,
        ElementKind::U64 => 2,
        ElementKind::F64 => 3,
    }
}

fn kind_of(code: u64) -> Option<ElementKind> {
    match code {
        1 => Some(ElementKind::U32),
        2 => Some(ElementKind::U64),
        3 => Some(ElementKind::F64),
        _ => None,
    }
}

/// The memory nodes an array lives on, in partition order: one transport per node.
pub trait NodeSet: Send + Sync {
    /// How many nodes (= partitions).
    fn count(&self) -> usize;
    /// The transport to partition `p`'s node.
    fn node(&self, p: usize) -> Option<&dyn Transport>;
}

impl<T: Transport> NodeSet for Vec<T> {
    fn count(&self) -> usize {
        self.len()
    }
    fn node(&self, p: usize) -> Option<&dyn Transport> {
        self.get(p).map(|t| t as &dyn Transport)
    }
}

/// A fixed-length array of 8-byte words range-partitioned over memory nodes.
pub struct RemoteArray {
    kind: ElementKind,
    len: u64,
    /// Partition `p` holds elements `bounds[p]..bounds[p + 1]`.
    bounds: Vec<u64>,
    nodes: Arc<dyn NodeSet>,
    /// Base address of each partition's region; `None` for an empty partition, and all `None`
    /// once freed.
    bases: Mutex<Vec<Option<GlobalAddr>>>,
    /// `(partition, mailbox)` pushed to and not pulled since: drained when the array goes.
    mailboxes: Mutex<BTreeSet<(usize, u32)>>,
    /// False for a handle attached to another compute node's array: it frees nothing.
    owns: bool,
}

impl std::fmt::Debug for RemoteArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteArray")
            .field("kind", &self.kind)
            .field("len", &self.len)
            .field("bounds", &self.bounds)
            .finish()
    }
}

/// What a batch in flight carries back to its reply handler.
struct InFlight<T> {
    part: usize,
    ticket: Ticket,
    tag: T,
}

impl RemoteArray {
    /// Allocates an array of `bounds.last()` elements of `kind`, partition `p` on node `p`, every
    /// element `fill`. `bounds` starts at 0, never decreases, and has one more entry than there
    /// are nodes. A failed allocation frees what was already allocated.
    pub fn alloc(
        nodes: Arc<dyn NodeSet>,
        bounds: Vec<u64>,
        kind: ElementKind,
        fill: u64,
    ) -> Result<RemoteArray> {
        if bounds.len() != nodes.count() + 1
            || bounds.first() != Some(&0)
            || bounds.windows(2).any(|w| w[0] > w[1])
        {
            return Err(StoreError::Other(format!(
                "attribute array: {} partition bounds for {} memory nodes (must start at 0, never decrease, one per node plus one)",
                bounds.len(),
                nodes.count()
            )));
        }
        let len = bounds.last().copied().unwrap_or(0);
        let arr = RemoteArray {
            kind,
            len,
            bases: Mutex::new(vec![None; nodes.count()]),
            mailboxes: Mutex::new(BTreeSet::new()),
            bounds,
            nodes,
            owns: true,
        };
        for p in 0..arr.nodes.count() {
            let count = arr.bounds[p + 1] - arr.bounds[p];
            if count == 0 {
                continue;
            }
            let bytes = count.checked_mul(WORD).ok_or_else(|| {
                StoreError::Other(format!("attribute array of {len} elements overflows"))
            })?;
            let base = arr.node(p)?.alloc_leased(bytes)?;
            arr.bases.lock().unwrap_or_else(|e| e.into_inner())[p] = Some(base);
        }
        // Regions arrive zeroed; only a non-zero fill costs a write.
        if fill != 0 {
            arr.fill(fill)?;
        }
        Ok(arr)
    }

    /// The partition (= node) holding element `i`.
    pub fn partition_of(&self, i: u64) -> usize {
        self.bounds.partition_point(|&b| b <= i).saturating_sub(1)
    }

    /// Releases the regions, reporting a node that refuses. Later operations fail.
    pub fn free(self) -> Result<()> {
        self.release()
    }

    /// The words another compute node attaches with: a version tag, the element kind, the
    /// partition count, the partition bounds, and each partition's base address (0 for an
    /// empty partition).
    pub fn descriptor(&self) -> Vec<u64> {
        let bases = self.bases.lock().unwrap_or_else(|e| e.into_inner());
        let mut d = vec![DESCRIPTOR_TAG, kind_code(self.kind), bases.len() as u64];
        d.extend(&self.bounds);
        d.extend(bases.iter().map(|b| b.map_or(0, GlobalAddr::raw)));
        d
    }

    /// The length a descriptor claims for an array over `parts` memory nodes (0 when it is too
    /// short): what the attaching side needs to compute the bounds it checks against.
    pub fn described_len(descriptor: &[u64], parts: usize) -> u64 {
        descriptor.get(3 + parts).copied().unwrap_or(0)
    }

    /// A handle on the array `descriptor` describes, over `nodes` (which must be the same
    /// memory nodes, in the same order, with the same partition `bounds` as the allocator's).
    /// Every word is checked: a descriptor that names another node, a region past the 48-bit
    /// space, or bounds other than `bounds` is refused. The handle never frees the array.
    pub fn attach(
        nodes: Arc<dyn NodeSet>,
        bounds: &[u64],
        descriptor: &[u64],
    ) -> Result<RemoteArray> {
        let bad = |what: &str| {
            StoreError::Other(format!(
                "attribute array descriptor from another compute node is invalid: {what}"
            ))
        };
        let parts = nodes.count();
        if descriptor.len() != 3 + 2 * parts + 1 || descriptor[0] != DESCRIPTOR_TAG {
            return Err(bad(&format!(
                "{} words for {parts} memory nodes",
                descriptor.len()
            )));
        }
        let kind = kind_of(descriptor[1]).ok_or_else(|| bad("unknown element kind"))?;
        if descriptor[2] != parts as u64 {
            return Err(bad(&format!(
                "{} partitions, this store has {parts} memory nodes",
                descriptor[2]
            )));
        }
        let sent_bounds = &descriptor[3..3 + parts + 1];
        if sent_bounds.len() != bounds.len() || sent_bounds.iter().zip(bounds).any(|(a, b)| a != b)
        {
            return Err(bad("its partition bounds differ from this store's layout"));
        }
        let mut bases = Vec::with_capacity(parts);
        for (p, &raw) in descriptor[3 + parts + 1..].iter().enumerate() {
            let count = bounds[p + 1] - bounds[p];
            if count == 0 {
                if raw != 0 {
                    return Err(bad(&format!("a region for empty partition {p}")));
                }
                bases.push(None);
                continue;
            }
            let base = GlobalAddr::from_raw(raw);
            let node = nodes
                .node(p)
                .ok_or_else(|| bad(&format!("no memory node #{p}")))?;
            if base.node() != node.node_id() {
                return Err(bad(&format!(
                    "partition {p} names node {}, expected {}",
                    base.node(),
                    node.node_name()
                )));
            }
            let last = count
                .checked_mul(WORD)
                .and_then(|bytes| base.checked_add(bytes - 1));
            if last.is_none() {
                return Err(bad(&format!("partition {p} runs past the address space")));
            }
            bases.push(Some(base));
        }
        Ok(RemoteArray {
            kind,
            len: bounds.last().copied().unwrap_or(0),
            bounds: bounds.to_vec(),
            nodes,
            bases: Mutex::new(bases),
            mailboxes: Mutex::new(BTreeSet::new()),
            owns: false,
        })
    }

    fn release(&self) -> Result<()> {
        if !self.owns {
            return Ok(());
        }
        self.drain_mailboxes();
        let bases = std::mem::take(&mut *self.bases.lock().unwrap_or_else(|e| e.into_inner()));
        let mut first_err = None;
        for (p, b) in bases.into_iter().enumerate() {
            if let Some(b) = b {
                if let Err(e) = self.node(p).and_then(|n| n.free(b)) {
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    pub(super) fn node(&self, p: usize) -> Result<&dyn Transport> {
        self.nodes
            .node(p)
            .ok_or_else(|| StoreError::Other(format!("attribute array: no memory node #{p}")))
    }

    pub(super) fn node_name(&self, p: usize) -> String {
        self.nodes
            .node(p)
            .map(|n| n.node_name().to_string())
            .unwrap_or_else(|| format!("#{p}"))
    }

    pub(super) fn out_of_range(&self, i: u64) -> StoreError {
        StoreError::Other(format!(
            "attribute index {i} is out of range (array of {} elements)",
            self.len
        ))
    }

    fn mailbox_set(&self) -> std::sync::MutexGuard<'_, BTreeSet<(usize, u32)>> {
        self.mailboxes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Remembers that `mailbox` on partition `p`'s node may hold this array's buffers.
    pub(super) fn note_mailbox(&self, p: usize, mailbox: u32) {
        self.mailbox_set().insert((p, mailbox));
    }

    /// Forgets a mailbox that was pulled empty.
    pub(super) fn forget_mailbox(&self, p: usize, mailbox: u32) {
        self.mailbox_set().remove(&(p, mailbox));
    }

    /// The mailboxes that may still hold buffers, forgetting them.
    pub(super) fn take_mailboxes(&self) -> BTreeSet<(usize, u32)> {
        std::mem::take(&mut *self.mailbox_set())
    }

    /// Base address of partition `p`'s region (an error once the array is freed).
    pub(super) fn region_base(&self, p: usize) -> Result<GlobalAddr> {
        self.bases
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(p)
            .copied()
            .flatten()
            .ok_or_else(|| StoreError::Other("attribute array was freed".into()))
    }

    /// Address of element `i`, and its partition.
    fn addr(&self, i: u64) -> Result<(usize, GlobalAddr)> {
        if i >= self.len {
            return Err(self.out_of_range(i));
        }
        let p = self.partition_of(i);
        let a = self
            .region_base(p)?
            .checked_add((i - self.bounds[p]) * WORD)
            .ok_or_else(|| StoreError::Other("remote address overflow".into()))?;
        Ok((p, a))
    }

    fn remote(&self, p: usize, message: String) -> StoreError {
        StoreError::Remote {
            node: self.node_name(p),
            message,
        }
    }

    /// Submits `batches` keeping up to [`DEPTH`] in flight, and hands each reply with its tag to
    /// `on_reply` in submission order.
    fn pipeline<T>(
        &self,
        batches: impl IntoIterator<Item = (usize, Batch, T)>,
        mut on_reply: impl FnMut(usize, T, Vec<VerbReply>) -> Result<()>,
    ) -> Result<()> {
        let mut q: VecDeque<InFlight<T>> = VecDeque::new();
        let mut drain_one = |q: &mut VecDeque<InFlight<T>>| -> Result<()> {
            if let Some(f) = q.pop_front() {
                let replies = f.ticket.wait_batch()?;
                on_reply(f.part, f.tag, replies)?;
            }
            Ok(())
        };
        for (part, batch, tag) in batches {
            if q.len() >= DEPTH {
                drain_one(&mut q)?;
            }
            let ticket = self.node(part)?.submit_batch(batch)?;
            q.push_back(InFlight { part, ticket, tag });
        }
        while !q.is_empty() {
            drain_one(&mut q)?;
        }
        Ok(())
    }

    /// Checks a batch reply has one answer per verb.
    fn count_ok(&self, p: usize, replies: &[VerbReply], want: usize) -> Result<()> {
        if replies.len() != want {
            return Err(self.remote(
                p,
                format!("{} replies to a batch of {want} verbs", replies.len()),
            ));
        }
        Ok(())
    }

    fn verb_failed(&self, p: usize, what: &str, r: &VerbReply) -> StoreError {
        match r {
            VerbReply::Failed { code, message } => {
                self.remote(p, format!("attribute {what} failed: {message} ({code:?})"))
            }
            other => {
                let mut s = format!("{other:?}");
                s.truncate(80);
                self.remote(p, format!("unexpected reply to an attribute {what}: {s}"))
            }
        }
    }

    /// Contiguous pieces of `start..start+n`: (partition, address, first element, elements),
    /// each inside one partition and at most [`PIECE`] bytes.
    fn pieces(&self, start: u64, n: u64) -> Result<Vec<(usize, GlobalAddr, u64, u64)>> {
        let end = start
            .checked_add(n)
            .filter(|&e| e <= self.len)
            .ok_or_else(|| self.out_of_range(start.saturating_add(n).saturating_sub(1)))?;
        let mut out = Vec::new();
        let mut i = start;
        while i < end {
            let (p, a) = self.addr(i)?;
            let part_end = self.bounds[p + 1].min(end);
            let k = (part_end - i).min(PIECE / WORD);
            out.push((p, a, i, k));
            i += k;
        }
        Ok(out)
    }

    /// Writes `n` elements from `start`, cycling through `data` when it is shorter (a fill).
    fn write_range(&self, start: u64, data: &[u64], n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        if data.is_empty() {
            return Err(StoreError::Other("attribute write without data".into()));
        }
        let batches = self.pieces(start, n)?.into_iter().map(|(p, a, first, k)| {
            let mut bytes = Vec::with_capacity((k * WORD) as usize);
            for j in 0..k {
                let src = ((first - start + j) % data.len() as u64) as usize;
                bytes.extend_from_slice(&data[src].to_le_bytes());
            }
            let mut b = Batch::new();
            b.write(a, bytes);
            (p, b, ())
        });
        self.pipeline(batches, |p, (), replies| {
            self.count_ok(p, &replies, 1)?;
            match &replies[0] {
                VerbReply::Written => Ok(()),
                r => Err(self.verb_failed(p, "write", r)),
            }
        })
    }

    /// `a < b` in the array's type (f64 by value, NaN never smaller).
    fn less(&self, a: u64, b: u64) -> bool {
        match self.kind {
            ElementKind::F64 => f64::from_bits(a) < f64::from_bits(b),
            ElementKind::U32 | ElementKind::U64 => a < b,
        }
    }

    /// Checks every index and groups the items by partition, sorted by index.
    fn by_partition(&self, items: &[(u64, u64)]) -> Result<Vec<Vec<(u64, u64)>>> {
        let mut parts: Vec<Vec<(u64, u64)>> = vec![Vec::new(); self.nodes.count()];
        for &(i, v) in items {
            if i >= self.len {
                return Err(self.out_of_range(i));
            }
            parts[self.partition_of(i)].push((i, v));
        }
        for p in &mut parts {
            p.sort_unstable_by_key(|&(i, _)| i);
        }
        Ok(parts)
    }

    /// F64 sums applied by the memory nodes: one `Apply(Add)` per node per [`MAX_VERBS`] items,
    /// several in flight.
    fn apply_add(&self, parts: &[Vec<(u64, u64)>]) -> Result<()> {
        let mut q: VecDeque<(usize, Ticket)> = VecDeque::new();
        let wait = |(p, t): (usize, Ticket)| -> Result<()> {
            match t.wait()? {
                super::protocol::Message::Applied { .. } => Ok(()),
                m => Err(super::transport::unexpected(&self.node_name(p), &m)),
            }
        };
        for (p, list) in parts.iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            let base = self.addr(self.bounds[p])?.1;
            for chunk in list.chunks(MAX_VERBS) {
                if q.len() >= DEPTH {
                    if let Some(f) = q.pop_front() {
                        wait(f)?;
                    }
                }
                let items = chunk
                    .iter()
                    .map(|&(i, v)| UpdateItem {
                        index: i - self.bounds[p],
                        value: v,
                    })
                    .collect();
                let t = self.node(p)?.submit(super::protocol::Message::Apply {
                    base,
                    attr: ElementKind::F64,
                    op: UpdateOp::Add,
                    items,
                })?;
                q.push_back((p, t));
            }
        }
        while let Some(f) = q.pop_front() {
            wait(f)?;
        }
        Ok(())
    }
}

impl RemoteVector for RemoteArray {
    /// Number of elements.
    fn len(&self) -> u64 {
        self.len
    }

    /// The element type.
    fn kind(&self) -> ElementKind {
        self.kind
    }

    /// Bytes the array occupies in the memory nodes.
    fn remote_bytes(&self) -> u64 {
        self.len * WORD
    }

    /// Sets every element to `value`.
    fn fill(&self, value: u64) -> Result<()> {
        self.write_range(0, &[value], self.len)
    }

    /// Writes `data` to elements `start..start + data.len()`.
    fn write_slice(&self, start: u64, data: &[u64]) -> Result<()> {
        self.write_range(start, data, data.len() as u64)
    }

    /// Reads elements `start..start + out.len()` into `out`.
    fn read_range(&self, start: u64, out: &mut [u64]) -> Result<()> {
        let pieces = self.pieces(start, out.len() as u64)?;
        let batches = pieces.into_iter().map(|(p, a, first, k)| {
            let mut b = Batch::new();
            b.read(a, (k * WORD) as u32);
            (p, b, (first, k))
        });
        self.pipeline(batches, |p, (first, k), replies| {
            self.count_ok(p, &replies, 1)?;
            match &replies[0] {
                VerbReply::Read(d) if d.len() as u64 == k * WORD => {
                    let o = (first - start) as usize;
                    for (dst, c) in out[o..o + k as usize].iter_mut().zip(d.chunks_exact(8)) {
                        *dst = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
                    }
                    Ok(())
                }
                r => Err(self.verb_failed(p, "read", r)),
            }
        })
    }

    /// `element[i] = min(element[i], v)` for every `(i, v)` of `items`, by direct remote update:
    /// read, compare, CAS, retrying only failed CASes with the value they saw. Returns the
    /// `(index, value)` pairs this call wrote, one per index at most, in index order per node.
    /// Concurrent calls from other threads or compute nodes lose no update: an index ends at the
    /// minimum of everything offered.
    fn cas_min_batch(&self, items: &[(u64, u64)]) -> Result<Vec<(u64, u64)>> {
        let mut parts = self.by_partition(items)?;
        // One item per index: the smallest value offered.
        for p in &mut parts {
            p.dedup_by(|later, kept| {
                if later.0 == kept.0 {
                    if self.less(later.1, kept.1) {
                        kept.1 = later.1;
                    }
                    true
                } else {
                    false
                }
            });
        }
        // Read the current values, nearby indices merged into one READ.
        let mut current: Vec<Vec<u64>> = parts.iter().map(|p| vec![0; p.len()]).collect();
        let mut reads = Vec::new();
        for (p, list) in parts.iter().enumerate() {
            let mut batch = Batch::new();
            // (first item, items, first index, elements) per READ of the batch.
            let mut spans: Vec<(usize, usize, u64, u64)> = Vec::new();
            let mut k = 0;
            while k < list.len() {
                let first = list[k].0;
                let mut end = k + 1;
                while end < list.len()
                    && list[end].0 - list[end - 1].0 <= MERGE_GAP
                    && list[end].0 - first < MERGE_MAX
                {
                    end += 1;
                }
                let elems = list[end - 1].0 - first + 1;
                let (_, a) = self.addr(first)?;
                batch.read(a, (elems * WORD) as u32);
                spans.push((k, end - k, first, elems));
                k = end;
                if batch.len() >= MAX_VERBS || k == list.len() {
                    reads.push((p, std::mem::take(&mut batch), std::mem::take(&mut spans)));
                }
            }
        }
        self.pipeline(reads, |p, spans, replies| {
            self.count_ok(p, &replies, spans.len())?;
            for (r, &(k, n, first, elems)) in replies.iter().zip(&spans) {
                let d = match r {
                    VerbReply::Read(d) if d.len() as u64 == elems * WORD => d,
                    r => return Err(self.verb_failed(p, "read", r)),
                };
                for j in k..k + n {
                    let o = ((parts[p][j].0 - first) * WORD) as usize;
                    current[p][j] = u64::from_le_bytes(d[o..o + 8].try_into().unwrap_or([0; 8]));
                }
            }
            Ok(())
        })?;
        // CAS the items that would lower the value; retry failures against the word they saw.
        let mut pending: Vec<Vec<(u64, u64, u64)>> = parts
            .iter()
            .zip(&current)
            .map(|(list, cur)| {
                list.iter()
                    .zip(cur)
                    .filter(|(&(_, v), &c)| self.less(v, c))
                    .map(|(&(i, v), &c)| (i, v, c))
                    .collect()
            })
            .collect();
        let mut changed = Vec::new();
        while pending.iter().any(|p| !p.is_empty()) {
            let mut batches = Vec::new();
            for (p, list) in pending.iter_mut().enumerate() {
                for chunk in std::mem::take(list).chunks(MAX_VERBS) {
                    let mut b = Batch::new();
                    for &(i, v, expected) in chunk {
                        b.cas(self.addr(i)?.1, expected, v);
                    }
                    batches.push((p, b, chunk.to_vec()));
                }
            }
            self.pipeline(batches, |p, sent, replies| {
                self.count_ok(p, &replies, sent.len())?;
                for (r, &(i, v, expected)) in replies.iter().zip(&sent) {
                    match r {
                        VerbReply::Cas { old } if *old == expected => changed.push((i, v)),
                        VerbReply::Cas { old } if self.less(v, *old) => {
                            pending[p].push((i, v, *old))
                        }
                        VerbReply::Cas { .. } => {}
                        r => return Err(self.verb_failed(p, "CAS", r)),
                    }
                }
                Ok(())
            })?;
        }
        Ok(changed)
    }

    /// Sets `element[i] = new` for every index of `indices` whose element is `expected`, one CAS
    /// each and no read: of all concurrent claims of an index exactly one succeeds. Returns the
    /// indices this call claimed (duplicates in `indices` are claimed once).
    fn claim_batch(&self, indices: &[u64], expected: u64, new: u64) -> Result<Vec<u64>> {
        let items: Vec<(u64, u64)> = indices.iter().map(|&i| (i, 0)).collect();
        let mut parts = self.by_partition(&items)?;
        for p in &mut parts {
            p.dedup_by_key(|x| x.0);
        }
        let mut batches = Vec::new();
        for (p, list) in parts.iter().enumerate() {
            for chunk in list.chunks(MAX_VERBS) {
                let mut b = Batch::new();
                for &(i, _) in chunk {
                    b.cas(self.addr(i)?.1, expected, new);
                }
                batches.push((p, b, chunk));
            }
        }
        let mut claimed = Vec::new();
        self.pipeline(batches, |p, sent, replies| {
            self.count_ok(p, &replies, sent.len())?;
            for (r, &(i, _)) in replies.iter().zip(sent) {
                match r {
                    VerbReply::Cas { old } if *old == expected => claimed.push(i),
                    VerbReply::Cas { .. } => {}
                    r => return Err(self.verb_failed(p, "CAS", r)),
                }
            }
            Ok(())
        })?;
        Ok(claimed)
    }

    /// `element[i] += v` for every `(i, v)` of `items` (wrapping for integers; `v` holds the f64
    /// bits for `F64`). Integers use one FAA per distinct index (values for one index summed
    /// first); `F64` uses the nodes' pass-by-value add (see the module documentation for why).
    fn add_batch(&self, items: &[(u64, u64)]) -> Result<()> {
        let mut parts = self.by_partition(items)?;
        let kind = self.kind;
        for p in &mut parts {
            p.dedup_by(|later, kept| {
                if later.0 == kept.0 {
                    kept.1 = match kind {
                        ElementKind::F64 => {
                            (f64::from_bits(kept.1) + f64::from_bits(later.1)).to_bits()
                        }
                        ElementKind::U32 | ElementKind::U64 => kept.1.wrapping_add(later.1),
                    };
                    true
                } else {
                    false
                }
            });
        }
        if kind == ElementKind::F64 {
            return self.apply_add(&parts);
        }
        let mut batches = Vec::new();
        for (p, list) in parts.iter().enumerate() {
            for chunk in list.chunks(MAX_VERBS) {
                let mut b = Batch::new();
                for &(i, v) in chunk {
                    b.faa(self.addr(i)?.1, v);
                }
                batches.push((p, b, chunk.len()));
            }
        }
        self.pipeline(batches, |p, n, replies| {
            self.count_ok(p, &replies, n)?;
            match replies.iter().find(|r| !matches!(r, VerbReply::Faa { .. })) {
                Some(r) => Err(self.verb_failed(p, "FAA", r)),
                None => Ok(()),
            }
        })
    }

    fn mailbox_push(&self, buffers: Vec<(u64, u32, Vec<u8>)>) -> Result<()> {
        self.push_mail(buffers)
    }

    fn mailbox_pull(&self, at: u64, mailbox: u32, max_bytes: u32) -> Result<Vec<Vec<u8>>> {
        self.pull_mail(at, mailbox, max_bytes)
    }

    fn free(self: Box<Self>) -> Result<()> {
        RemoteArray::free(*self)
    }

    fn descriptor(&self) -> Vec<u64> {
        RemoteArray::descriptor(self)
    }
}

impl Drop for RemoteArray {
    /// Frees the regions best effort: a node that is gone has lost them anyway.
    fn drop(&mut self) {
        let _ = self.release();
    }
}
