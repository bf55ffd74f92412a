//! Per-vertex state arrays with a placement: a kernel allocates its state through the run
//! context ([`RunContext::vertex_array`]) and never learns where it lives.
//!
//! **Placement** is the runtime's decision, made once per run ([`Placement::decide`]): on a store
//! that offers remote memory (a DM graph) the state goes to the memory nodes when the
//! kernel's declared state (bytes per vertex × |V|) exceeds the compute node's budget
//! (`SET cn_cache`); everywhere else it is a local array of atomics.
//!
//! **Operations** are those of the array: per-element claims, min-updates and sums on local
//! atomics, and the same operations batched for remote arrays (one CAS per claim and no read,
//! read-compare-CAS for minima, the memory nodes' pass-by-value add for f64 sums; DMG §4.3.2,
//! direct remote update). The operators (`edgemap`, `reduce`, `vertexmap`) pick the local
//! fast path or the batched remote path; kernels only name the operation.
//!
//! [`RunContext::vertex_array`]: crate::context::RunContext::vertex_array

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use storage::cluster::Member;
use storage::{ElementKind, RemoteMemory, RemoteVector, StoreError};

use crate::error::ExecError;

/// Smallest update buffer, whatever the budget: below this, round trips dominate.
const MIN_BUFFER: usize = 64;
/// Largest update buffer: beyond it batches stop getting cheaper per item.
const MAX_BUFFER: usize = 1 << 16;
/// Bytes one buffered update occupies (index and value).
const UPDATE_BYTES: u64 = 16;
/// Elements per piece when a remote array is read or written whole (1 MiB of words).
const PIECE: usize = 1 << 17;

/// A value a vertex array can hold: a local atomic cell, and one 64-bit word remotely.
pub trait StateValue: Copy + PartialOrd + Send + Sync + 'static {
    /// The local cell.
    type Cell: Send + Sync;
    /// The remote element kind.
    const KIND: ElementKind;

    fn cell(v: Self) -> Self::Cell;
    fn load(c: &Self::Cell) -> Self;
    fn store(c: &Self::Cell, v: Self);
    /// `c = new` if `c == expected`; true when this call wrote it.
    fn claim(c: &Self::Cell, expected: Self, new: Self) -> bool;
    /// `c = min(c, v)`; the value this call replaced, when it lowered it.
    fn lower_from(c: &Self::Cell, v: Self) -> Option<Self>;
    /// `c = min(c, v)`; true when this call lowered it.
    #[inline]
    fn lower(c: &Self::Cell, v: Self) -> bool {
        Self::lower_from(c, v).is_some()
    }
    /// `c += v`.
    fn add(c: &Self::Cell, v: Self);
    fn to_word(self) -> u64;
    fn from_word(w: u64) -> Self;
}

impl StateValue for u32 {
    type Cell = AtomicU32;
    const KIND: ElementKind = ElementKind::U32;

    #[inline]
    fn cell(v: u32) -> AtomicU32 {
        AtomicU32::new(v)
    }
    #[inline]
    fn load(c: &AtomicU32) -> u32 {
        c.load(Ordering::Relaxed)
    }
    #[inline]
    fn store(c: &AtomicU32, v: u32) {
        c.store(v, Ordering::Relaxed)
    }
    #[inline]
    fn claim(c: &AtomicU32, expected: u32, new: u32) -> bool {
        c.compare_exchange(expected, new, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }
    #[inline]
    fn lower_from(c: &AtomicU32, v: u32) -> Option<u32> {
        if c.load(Ordering::Relaxed) <= v {
            return None;
        }
        Some(c.fetch_min(v, Ordering::Relaxed)).filter(|&old| old > v)
    }
    #[inline]
    fn add(c: &AtomicU32, v: u32) {
        c.fetch_add(v, Ordering::Relaxed);
    }
    fn to_word(self) -> u64 {
        self as u64
    }
    fn from_word(w: u64) -> u32 {
        w as u32
    }
}

impl StateValue for u64 {
    type Cell = AtomicU64;
    const KIND: ElementKind = ElementKind::U64;

    #[inline]
    fn cell(v: u64) -> AtomicU64 {
        AtomicU64::new(v)
    }
    #[inline]
    fn load(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
    #[inline]
    fn store(c: &AtomicU64, v: u64) {
        c.store(v, Ordering::Relaxed)
    }
    #[inline]
    fn claim(c: &AtomicU64, expected: u64, new: u64) -> bool {
        c.compare_exchange(expected, new, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }
    #[inline]
    fn lower_from(c: &AtomicU64, v: u64) -> Option<u64> {
        if c.load(Ordering::Relaxed) <= v {
            return None;
        }
        Some(c.fetch_min(v, Ordering::Relaxed)).filter(|&old| old > v)
    }
    #[inline]
    fn add(c: &AtomicU64, v: u64) {
        c.fetch_add(v, Ordering::Relaxed);
    }
    fn to_word(self) -> u64 {
        self
    }
    fn from_word(w: u64) -> u64 {
        w
    }
}

/// f64 cells hold the bits; min and add are compare-exchange loops.
impl StateValue for f64 {
    type Cell = AtomicU64;
    const KIND: ElementKind = ElementKind::F64;

    #[inline]
    fn cell(v: f64) -> AtomicU64 {
        AtomicU64::new(v.to_bits())
    }
    #[inline]
    fn load(c: &AtomicU64) -> f64 {
        f64::from_bits(c.load(Ordering::Relaxed))
    }
    #[inline]
    fn store(c: &AtomicU64, v: f64) {
        c.store(v.to_bits(), Ordering::Relaxed)
    }
    #[inline]
    fn claim(c: &AtomicU64, expected: f64, new: f64) -> bool {
        c.compare_exchange(
            expected.to_bits(),
            new.to_bits(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        )
        .is_ok()
    }
    #[inline]
    fn lower_from(c: &AtomicU64, v: f64) -> Option<f64> {
        let mut cur = c.load(Ordering::Relaxed);
        while v < f64::from_bits(cur) {
            match c.compare_exchange_weak(cur, v.to_bits(), Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(f64::from_bits(cur)),
                Err(seen) => cur = seen,
            }
        }
        None
    }
    #[inline]
    fn add(c: &AtomicU64, v: f64) {
        let mut cur = c.load(Ordering::Relaxed);
        loop {
            let new = (f64::from_bits(cur) + v).to_bits();
            match c.compare_exchange_weak(cur, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return,
                Err(seen) => cur = seen,
            }
        }
    }
    fn to_word(self) -> u64 {
        self.to_bits()
    }
    fn from_word(w: u64) -> f64 {
        f64::from_bits(w)
    }
}

/// Where a run keeps its per-vertex state.
#[derive(Clone, Copy)]
pub enum Placement<'a> {
    /// Local arrays of atomics.
    Local,
    /// Remote vectors in `memory` (the memory nodes), updated in batches.
    Remote(&'a dyn RemoteMemory),
}

impl<'a> Placement<'a> {
    /// Remote when `memory` exists and `bytes_per_vertex` × `vertices` exceeds its budget.
    pub fn decide(
        memory: Option<&'a dyn RemoteMemory>,
        bytes_per_vertex: u64,
        vertices: u32,
    ) -> Placement<'a> {
        match memory {
            Some(memory)
                if bytes_per_vertex.saturating_mul(vertices as u64) > memory.local_budget() =>
            {
                Placement::Remote(memory)
            }
            _ => Placement::Local,
        }
    }

    /// The remote memory, when the state is placed there.
    pub fn memory(&self) -> Option<&'a dyn RemoteMemory> {
        match self {
            Placement::Local => None,
            Placement::Remote(memory) => Some(*memory),
        }
    }

    pub fn is_remote(&self) -> bool {
        matches!(self, Placement::Remote(_))
    }

    /// The compute node's budget for remote-state rounds (unbounded for local state).
    pub fn budget(&self) -> u64 {
        match self {
            Placement::Local => u64::MAX,
            Placement::Remote(memory) => memory.local_budget(),
        }
    }

    /// Updates one worker may buffer before sending them: its share of the budget (half of
    /// it; the other half is the store's read windows), within [`MIN_BUFFER`]..[`MAX_BUFFER`].
    pub fn buffer_len(&self, threads: usize) -> usize {
        let budget = match self {
            Placement::Local => u64::MAX,
            Placement::Remote(memory) => memory.local_budget(),
        };
        update_buffer_len(budget, threads)
    }
}

/// Updates one worker may buffer under `budget` bytes shared by `threads` workers.
pub fn update_buffer_len(budget: u64, threads: usize) -> usize {
    let share = budget / 2 / threads.max(1) as u64 / UPDATE_BYTES;
    (share.min(MAX_BUFFER as u64) as usize).max(MIN_BUFFER)
}

/// One value per vertex, local or remote.
pub struct VertexArray<T: StateValue> {
    len: u32,
    place: Place<T>,
    /// Set when several compute nodes share the array: this member's part of the run. The
    /// kernel's own writes (`set`, `write_range`, `add_batch`) then apply to the owned
    /// vertices only, and member 0, which allocated it, frees it once every member is done.
    shared: Option<Member>,
}

enum Place<T: StateValue> {
    Local(Vec<T::Cell>),
    /// One dynamic call per batch: the per-element work is on the remote side.
    Remote(Box<dyn RemoteVector>),
}

impl<T: StateValue> VertexArray<T> {
    /// The local array of `cells` (see `Pool::filled_vec` for filling a large one).
    pub fn from_cells(cells: Vec<T::Cell>) -> Self {
        VertexArray {
            len: cells.len() as u32,
            place: Place::Local(cells),
            shared: None,
        }
    }

    /// `len` elements equal to `fill` in `memory` (the memory nodes).
    pub fn in_remote(memory: &dyn RemoteMemory, len: u32, fill: T) -> Result<Self, ExecError> {
        Ok(VertexArray {
            len,
            place: Place::Remote(memory.alloc(len as u64, T::KIND, fill.to_word())?),
            shared: None,
        })
    }

    /// An array of `len` elements equal to `fill` in `memory`, shared by the members of a run
    /// over several compute nodes: member 0 allocates it and broadcasts its descriptor, the
    /// others attach to it (a collective: every member calls it at the same point).
    pub fn shared(
        memory: &dyn RemoteMemory,
        member: Member,
        len: u32,
        fill: T,
    ) -> Result<Self, ExecError> {
        let c = &member.collectives;
        let vector = if c.rank() == 0 {
            let vector = memory.alloc(len as u64, T::KIND, fill.to_word())?;
            let descriptor = vector.descriptor();
            if descriptor.is_empty() {
                let reason = "this remote memory cannot share vectors between compute nodes";
                c.abort(reason);
                return Err(ExecError::Other(format!("compute_nodes: {reason}")));
            }
            c.broadcast(Some(&descriptor))?;
            vector
        } else {
            let descriptor = c.broadcast(None)?;
            memory.attach(&descriptor)?
        };
        if vector.len() != len as u64 || vector.kind() != T::KIND {
            return Err(ExecError::Store(StoreError::Other(format!(
                "compute node {} attached an array of {} {:?} elements, expected {len} {:?}",
                c.rank(),
                vector.len(),
                vector.kind(),
                T::KIND
            ))));
        }
        Ok(VertexArray {
            len,
            place: Place::Remote(vector),
            shared: Some(member),
        })
    }

    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The local cells, for the operators' in-memory paths; `None` when remote.
    #[inline]
    pub fn local(&self) -> Option<&[T::Cell]> {
        match &self.place {
            Place::Local(c) => Some(c),
            Place::Remote(_) => None,
        }
    }

    /// The local cells, mutable (no other borrow can be updating them).
    pub fn local_mut(&mut self) -> Option<&mut [T::Cell]> {
        match &mut self.place {
            Place::Local(c) => Some(c),
            Place::Remote(_) => None,
        }
    }

    pub fn is_remote(&self) -> bool {
        matches!(self.place, Place::Remote(_))
    }

    /// The remote vector behind the array, for the collaborative strategies' mailboxes.
    pub fn remote(&self) -> Option<&dyn RemoteVector> {
        match &self.place {
            Place::Local(_) => None,
            Place::Remote(r) => Some(&**r),
        }
    }

    /// `self[v] = x` (on a shared array, by the member that owns `v`).
    pub fn set(&self, v: u32, x: T) -> Result<(), ExecError> {
        self.write_range(v, &[x])
    }

    /// `self[start..start + data.len()] = data` (on a shared array, the owned part of it).
    pub fn write_range(&self, start: u32, data: &[T]) -> Result<(), ExecError> {
        self.bounds(start, data.len())?;
        let (start, data) = match &self.shared {
            None => (start, data),
            Some(m) => {
                let a = start.max(m.owned.start);
                let b = (start as u64 + data.len() as u64).min(m.owned.end as u64) as u32;
                if a >= b {
                    return Ok(());
                }
                (a, &data[(a - start) as usize..(b - start) as usize])
            }
        };
        match &self.place {
            Place::Local(c) => {
                for (cell, &x) in c[start as usize..].iter().zip(data) {
                    T::store(cell, x);
                }
            }
            Place::Remote(r) => {
                let words: Vec<u64> = data.iter().map(|x| x.to_word()).collect();
                r.write_slice(start as u64, &words)?;
            }
        }
        Ok(())
    }

    /// Reads `self[start..start + out.len()]` into `out`.
    pub fn read_range(&self, start: u32, out: &mut [T]) -> Result<(), ExecError> {
        self.bounds(start, out.len())?;
        match &self.place {
            Place::Local(c) => {
                for (slot, cell) in out.iter_mut().zip(&c[start as usize..]) {
                    *slot = T::load(cell);
                }
            }
            Place::Remote(r) => {
                let mut words = vec![0u64; out.len()];
                r.read_range(start as u64, &mut words)?;
                for (slot, w) in out.iter_mut().zip(words) {
                    *slot = T::from_word(w);
                }
            }
        }
        Ok(())
    }

    /// The values at the ascending indices `list`: each loaded locally, read in spans of
    /// nearby indices remotely (one read per span).
    pub fn read_at(&self, list: &[u32]) -> Result<Vec<T>, ExecError> {
        /// Widest span read for nearby indices.
        const SPAN: u32 = 4096;
        if let Place::Local(c) = &self.place {
            return list
                .iter()
                .map(|&v| match c.get(v as usize) {
                    Some(cell) => Ok(T::load(cell)),
                    None => self.bounds(v, 1).map(|()| T::from_word(0)),
                })
                .collect();
        }
        let mut out = Vec::with_capacity(list.len());
        let mut buf = Vec::new();
        let mut i = 0;
        while i < list.len() {
            let first = list[i];
            let mut j = i + 1;
            while j < list.len() && list[j] - first < SPAN {
                j += 1;
            }
            let len = (list[j - 1] - first + 1) as usize;
            buf.resize(len, T::from_word(0));
            self.read_range(first, &mut buf)?;
            out.extend(list[i..j].iter().map(|&v| buf[(v - first) as usize]));
            i = j;
        }
        Ok(out)
    }

    /// Sets every index of `indices` whose value is `expected` to `new`; returns the indices
    /// this call set (each once). Remotely one CAS per index and no read.
    pub fn claim_batch(&self, indices: &[u32], expected: T, new: T) -> Result<Vec<u32>, ExecError> {
        match &self.place {
            Place::Local(c) => Ok(indices
                .iter()
                .copied()
                .filter(|&i| {
                    c.get(i as usize)
                        .is_some_and(|c| T::claim(c, expected, new))
                })
                .collect()),
            Place::Remote(r) => {
                let idx: Vec<u64> = indices.iter().map(|&i| i as u64).collect();
                let won = r.claim_batch(&idx, expected.to_word(), new.to_word())?;
                Ok(won.into_iter().map(|i| i as u32).collect())
            }
        }
    }

    /// `self[i] = min(self[i], x)` for every `(i, x)`; returns the `(i, x)` this call wrote
    /// (remotely one per index, the smallest offered).
    pub fn min_batch(&self, items: &[(u32, T)]) -> Result<Vec<(u32, T)>, ExecError> {
        match &self.place {
            Place::Local(c) => Ok(items
                .iter()
                .copied()
                .filter(|&(i, x)| c.get(i as usize).is_some_and(|c| T::lower(c, x)))
                .collect()),
            Place::Remote(r) => {
                let words: Vec<(u64, u64)> = items
                    .iter()
                    .map(|&(i, x)| (i as u64, x.to_word()))
                    .collect();
                let changed = r.cas_min_batch(&words)?;
                Ok(changed
                    .into_iter()
                    .map(|(i, w)| (i as u32, T::from_word(w)))
                    .collect())
            }
        }
    }

    /// `self[i] += x` for every `(i, x)` (on a shared array, for the `i` this member owns:
    /// every member makes the same call, each addition is made once).
    pub fn add_batch(&self, items: &[(u32, T)]) -> Result<(), ExecError> {
        match &self.shared {
            None => self.add_anywhere(items),
            Some(m) => {
                let mine: Vec<(u32, T)> = items
                    .iter()
                    .copied()
                    .filter(|(i, _)| m.owned.contains(i))
                    .collect();
                self.add_anywhere(&mine)
            }
        }
    }

    /// `self[i] += x` for every `(i, x)`, owned or not: an operator's updates, which reach
    /// other members' vertices.
    pub(crate) fn add_anywhere(&self, items: &[(u32, T)]) -> Result<(), ExecError> {
        match &self.place {
            Place::Local(c) => {
                for &(i, x) in items {
                    if let Some(c) = c.get(i as usize) {
                        T::add(c, x);
                    }
                }
            }
            Place::Remote(r) => {
                let words: Vec<(u64, u64)> = items
                    .iter()
                    .map(|&(i, x)| (i as u64, x.to_word()))
                    .collect();
                r.add_batch(&words)?;
            }
        }
        Ok(())
    }

    /// Releases the array (a remote one's regions in the memory nodes). A shared array is
    /// released by member 0 once every member got here; the others drop their handle.
    pub fn free(self) -> Result<(), ExecError> {
        if let Some(m) = &self.shared {
            m.collectives.barrier()?;
        }
        self.release()
    }

    /// Frees the remote regions, unless another member allocated them.
    fn release(self) -> Result<(), ExecError> {
        let allocator = self
            .shared
            .as_ref()
            .is_none_or(|m| m.collectives.rank() == 0);
        match self.place {
            Place::Local(_) => Ok(()),
            Place::Remote(r) if allocator => Ok(r.free()?),
            Place::Remote(r) => {
                drop(r);
                Ok(())
            }
        }
    }

    /// Every value, in vertex order, consuming the array (a remote one is read back piece by
    /// piece and freed; a shared one once every member's writes are in, and freed once every
    /// member has read it). Only member 0 returns rows, so on a shared array the other members
    /// get an empty vector: reading the whole array back would cost each of them 8 B per vertex
    /// of memory and the traffic, for nothing.
    pub fn into_vec(self) -> Result<Vec<T>, ExecError> {
        if let Some(m) = &self.shared {
            m.collectives.barrier()?;
        }
        if self
            .shared
            .as_ref()
            .is_some_and(|m| m.collectives.rank() != 0)
        {
            self.free()?;
            return Ok(Vec::new());
        }
        match self.place {
            // Cells and values have one size, so the collect reuses the cells' allocation:
            // the values never exist beside a copy of themselves.
            Place::Local(cells) => Ok(cells.into_iter().map(|c| T::load(&c)).collect()),
            Place::Remote(ref r) => {
                let n = r.len();
                let mut out = Vec::with_capacity(n as usize);
                let mut buf = vec![0u64; PIECE];
                let mut i = 0u64;
                while i < n {
                    let k = (n - i).min(PIECE as u64) as usize;
                    r.read_range(i, &mut buf[..k])?;
                    out.extend(buf[..k].iter().map(|&w| T::from_word(w)));
                    i += k as u64;
                }
                self.free()?;
                Ok(out)
            }
        }
    }

    fn bounds(&self, start: u32, len: usize) -> Result<(), ExecError> {
        if start as u64 + len as u64 > self.len as u64 {
            return Err(ExecError::Other(format!(
                "vertex array of {} elements: range {start}+{len} out of bounds",
                self.len
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_operations() {
        let a = VertexArray::<u32>::from_cells((0..4).map(|_| u32::cell(u32::MAX)).collect());
        assert_eq!(a.claim_batch(&[1, 2, 1], u32::MAX, 3).unwrap(), vec![1, 2]);
        let b = VertexArray::<f64>::from_cells((0..3).map(|_| f64::cell(f64::INFINITY)).collect());
        assert_eq!(
            b.min_batch(&[(0, 2.0), (0, 1.0), (0, 3.0)]).unwrap(),
            vec![(0, 2.0), (0, 1.0)]
        );
        b.add_batch(&[(1, 0.5)]).unwrap();
        let mut r = [0.0; 2];
        b.read_range(0, &mut r).unwrap();
        assert_eq!(r[0], 1.0);
        assert!(b.set(3, 0.0).is_err());
        assert_eq!(a.into_vec().unwrap(), vec![u32::MAX, 3, 3, u32::MAX]);
    }

    #[test]
    fn update_buffers_share_the_budget_within_bounds() {
        assert_eq!(update_buffer_len(16, 2), MIN_BUFFER);
        assert_eq!(update_buffer_len(1 << 40, 1), MAX_BUFFER);
        assert_eq!(update_buffer_len(1 << 20, 4), (1 << 20) / 2 / 4 / 16);
    }
}
