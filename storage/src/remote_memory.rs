//! Memory outside the compute node for per-vertex state: what a store may offer a kernel whose
//! state exceeds the compute node's budget, without the kernel (or the store trait) naming how
//! that memory is reached.
//!
//! A store that has such memory answers [`GraphStore::remote_memory`] with a [`RemoteMemory`];
//! it hands out [`RemoteVector`]s, fixed-length arrays of 64-bit words updated in batches. The
//! disaggregated store implements both over its memory nodes (`dm::attrs::RemoteArray`).
//!
//! Both traits are object safe: a kernel generic over its store reaches remote state through
//! one dynamic call per batch, never per element.
//!
//! [`GraphStore::remote_memory`]: crate::store::GraphStore::remote_memory

use std::fmt::Debug;

use crate::error::StoreError;

/// The type of a remote vector's elements. Every element is held in one 64-bit word whatever
/// its kind (a `U32` is zero-extended, an `F64` is its bits): the kind decides how words
/// compare and add.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementKind {
    /// Unsigned 32-bit integers.
    U32,
    /// Unsigned 64-bit integers.
    U64,
    /// IEEE doubles.
    F64,
}

impl ElementKind {
    /// Bytes of one value in its natural width (4 for `U32`, 8 otherwise).
    pub fn width(self) -> u64 {
        match self {
            ElementKind::U32 => 4,
            ElementKind::U64 | ElementKind::F64 => 8,
        }
    }
}

/// A fixed-length array of 64-bit words held outside the compute node. Every operation takes a
/// whole batch, so its cost is a few round trips however many elements it touches; several
/// threads may use one vector at once.
pub trait RemoteVector: Send + Sync + Debug {
    /// Number of elements.
    fn len(&self) -> u64;

    /// True for a zero-length vector.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type.
    fn kind(&self) -> ElementKind;

    /// Bytes the vector occupies in remote memory.
    fn remote_bytes(&self) -> u64;

    /// Reads elements `start..start + out.len()` into `out`.
    fn read_range(&self, start: u64, out: &mut [u64]) -> Result<(), StoreError>;

    /// Writes `data` to elements `start..start + data.len()`.
    fn write_slice(&self, start: u64, data: &[u64]) -> Result<(), StoreError>;

    /// Sets every element to `value`.
    fn fill(&self, value: u64) -> Result<(), StoreError>;

    /// Sets `element[i] = new` for every index of `indices` whose element is `expected`: of all
    /// concurrent claims of an index exactly one succeeds. Returns the indices this call
    /// claimed (duplicates in `indices` are claimed once).
    fn claim_batch(&self, indices: &[u64], expected: u64, new: u64)
        -> Result<Vec<u64>, StoreError>;

    /// `element[i] = min(element[i], v)` for every `(i, v)` of `items`, compared as the
    /// vector's [`ElementKind`]. Returns the `(index, value)` pairs this call wrote, one per
    /// index at most. Concurrent calls lose no update: an index ends at the minimum offered.
    fn cas_min_batch(&self, items: &[(u64, u64)]) -> Result<Vec<(u64, u64)>, StoreError>;

    /// `element[i] += v` for every `(i, v)` of `items` (wrapping for integers; `v` holds the
    /// f64 bits for `F64`).
    fn add_batch(&self, items: &[(u64, u64)]) -> Result<(), StoreError>;

    /// Appends each `(at, mailbox, data)` buffer to mailbox `mailbox` beside element `at` (on
    /// the memory node holding it), for the owner of that element to pull: the
    /// redistribution buffers of collaborative update. Several are sent at once.
    fn mailbox_push(&self, buffers: Vec<(u64, u32, Vec<u8>)>) -> Result<(), StoreError> {
        let _ = buffers;
        Err(StoreError::Other(
            "this remote memory has no mailboxes: use direct remote update (SET dm_update = 'direct')".into(),
        ))
    }

    /// Takes the oldest buffers waiting in mailbox `mailbox` beside element `at`, up to
    /// `max_bytes` (at least one if any waits); empty once the mailbox is.
    fn mailbox_pull(
        &self,
        at: u64,
        mailbox: u32,
        max_bytes: u32,
    ) -> Result<Vec<Vec<u8>>, StoreError> {
        let _ = (at, mailbox, max_bytes);
        Err(StoreError::Other(
            "this remote memory has no mailboxes: use direct remote update (SET dm_update = 'direct')".into(),
        ))
    }

    /// Releases the remote memory, reporting a remote side that refuses. Dropping a vector
    /// releases it too, best effort and silently. A vector obtained with
    /// [`RemoteMemory::attach`] releases nothing: its allocator does.
    fn free(self: Box<Self>) -> Result<(), StoreError>;

    /// What another compute node passes to [`RemoteMemory::attach`] to reach this same vector:
    /// words that name its element kind, length and remote regions. Empty when the vector
    /// cannot be shared.
    fn descriptor(&self) -> Vec<u64> {
        Vec::new()
    }
}

/// Counters of the traffic to remote memory; a snapshot, subtract two for one iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemoteTraffic {
    /// Requests that waited for a reply (a batch of operations counts once).
    pub round_trips: u64,
    /// Remote operations (each verb of a batch, each item applied remotely).
    pub remote_ops: u64,
    /// Bytes sent: remote updates send more than they receive, so the bytes a store reads
    /// alone would hide them.
    pub bytes_sent: u64,
}

impl RemoteTraffic {
    /// The traffic since `earlier`.
    pub fn since(&self, earlier: &RemoteTraffic) -> RemoteTraffic {
        RemoteTraffic {
            round_trips: self.round_trips.saturating_sub(earlier.round_trips),
            remote_ops: self.remote_ops.saturating_sub(earlier.remote_ops),
            bytes_sent: self.bytes_sent.saturating_sub(earlier.bytes_sent),
        }
    }
}

/// Memory outside the compute node where a store can keep per-vertex state (the memory nodes
/// of a disaggregated store, DMG §4.3.2).
pub trait RemoteMemory: Send + Sync {
    /// The compute node's budget for graph data and state (`SET cn_cache`), in bytes: a kernel
    /// whose per-vertex state is larger keeps it remote.
    fn local_budget(&self) -> u64;

    /// A new vector of `len` elements of `kind`, each `fill` (raw bits). Its traffic counts in
    /// [`RemoteMemory::traffic`].
    fn alloc(
        &self,
        len: u64,
        kind: ElementKind,
        fill: u64,
    ) -> Result<Box<dyn RemoteVector>, StoreError>;

    /// The traffic of the transport behind this memory so far (the store's own remote reads
    /// included when they share it).
    fn traffic(&self) -> RemoteTraffic;

    /// A handle on a vector another compute node allocated, from its
    /// [`RemoteVector::descriptor`]. The descriptor comes over the network, so it is checked
    /// against this memory (its nodes, partitions and bounds) before anything is accessed.
    /// Freeing or dropping the handle releases nothing: the allocator frees the vector.
    fn attach(&self, descriptor: &[u64]) -> Result<Box<dyn RemoteVector>, StoreError> {
        let _ = descriptor;
        Err(StoreError::Other(
            "this remote memory cannot share vectors between compute nodes".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traffic_since_subtracts_each_counter() {
        let a = RemoteTraffic {
            round_trips: 3,
            remote_ops: 10,
            bytes_sent: 100,
        };
        let b = RemoteTraffic {
            round_trips: 5,
            remote_ops: 17,
            bytes_sent: 164,
        };
        assert_eq!(
            b.since(&a),
            RemoteTraffic {
                round_trips: 2,
                remote_ops: 7,
                bytes_sent: 64
            }
        );
    }
}
