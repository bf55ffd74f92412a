//! External merge sort of fixed-size records under a memory budget.
//!
//! Records are collected in a buffer of bounded size; a full buffer is sorted (stably when asked,
//! so the first of equal keys stays first) and spilled to a run file in the import's temporary
//! directory. At the end the runs are merged k ways; when there are more runs than
//! [`FAN_IN`] they are first merged in groups of consecutive runs, which keeps the input order
//! among equal keys and bounds open files and read buffers. A graph that fits in one buffer
//! never touches the disk. Buffers are sorted in parallel on the sorter's rayon pool
//! ([`Sorter::on_pool`]: an import's `SET threads`), or rayon's global pool if it has none.
//!
//! A [`Sorter::deferred`] one holds records whose keys are not known yet (arcs before `LAYOUT
//! degree` renumbers their vertices): it spills them unsorted, and [`Sorter::remap`] streams
//! them, renumbered, into an ordinary sorter, so they are sorted once.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use rayon::slice::ParallelSliceMut;

use crate::error::{Result, StoreError};

/// Runs merged at once: bounds open files and read-buffer memory.
pub const FAN_IN: usize = 64;

/// Consumed records an in-memory [`Merged`] lets go of at a time (at least; a sixteenth of
/// what it holds when that is more, so that shrinking costs little whatever the allocator).
const SHRINK_RECORDS: usize = 1 << 16;

/// Gives back the memory of the records popped off `v`, once there is enough of it.
#[inline]
fn release_popped<R>(v: &mut Vec<R>) {
    let free = v.capacity() - v.len();
    if free >= SHRINK_RECORDS.max(v.capacity() / 16) {
        v.shrink_to_fit();
    }
}

/// A fixed-size record that can be spilled to disk and sorted by key.
pub trait Record: Copy + Send + Sync {
    /// The sort key; ties keep input order.
    type Key: Ord + Copy;
    /// Bytes of the encoded record.
    const BYTES: usize;
    /// The sort key.
    fn key(&self) -> Self::Key;
    /// Encodes into `out` (exactly [`Record::BYTES`] long).
    fn encode(&self, out: &mut [u8]);
    /// Decodes from `b` (exactly [`Record::BYTES`] long).
    fn decode(b: &[u8]) -> Self;
}

/// An input-id edge: sorted by (src, dst).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InputEdge {
    pub src: u64,
    pub dst: u64,
    pub weight: f64,
}

impl Record for InputEdge {
    type Key = (u64, u64);
    const BYTES: usize = 24;
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.src, self.dst)
    }
    #[inline]
    fn encode(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.src.to_le_bytes());
        out[8..16].copy_from_slice(&self.dst.to_le_bytes());
        out[16..24].copy_from_slice(&self.weight.to_le_bytes());
    }
    #[inline]
    fn decode(b: &[u8]) -> Self {
        InputEdge {
            src: u64::from_le_bytes(b[0..8].try_into().expect("8 bytes")),
            dst: u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
            weight: f64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
        }
    }
}

/// An internal-id arc: sorted by (from, to).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arc {
    pub from: u32,
    pub to: u32,
    pub weight: f64,
}

impl Record for Arc {
    type Key = u64;
    const BYTES: usize = 16;
    #[inline]
    fn key(&self) -> u64 {
        ((self.from as u64) << 32) | self.to as u64
    }
    #[inline]
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.from.to_le_bytes());
        out[4..8].copy_from_slice(&self.to.to_le_bytes());
        out[8..16].copy_from_slice(&self.weight.to_le_bytes());
    }
    #[inline]
    fn decode(b: &[u8]) -> Self {
        Arc {
            from: u32::from_le_bytes(b[0..4].try_into().expect("4 bytes")),
            to: u32::from_le_bytes(b[4..8].try_into().expect("4 bytes")),
            weight: f64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
        }
    }
}

/// An input-id edge whatever its record: phase 1 sorts weighted edges as [`InputEdge`]s and
/// unweighted ones as [`PlainEdge`]s.
pub trait EdgeRecord: Record<Key = (u64, u64)> {
    fn src(&self) -> u64;
    fn dst(&self) -> u64;
    /// The weight (0 for an unweighted edge).
    fn weight(&self) -> f64;
    /// Sets the weight (an unweighted edge has none to set).
    fn set_weight(&mut self, weight: f64);
}

impl EdgeRecord for InputEdge {
    #[inline]
    fn src(&self) -> u64 {
        self.src
    }
    #[inline]
    fn dst(&self) -> u64 {
        self.dst
    }
    #[inline]
    fn weight(&self) -> f64 {
        self.weight
    }
    #[inline]
    fn set_weight(&mut self, weight: f64) {
        self.weight = weight;
    }
}

/// An unweighted input-id edge, sorted by (src, dst): two thirds of the bytes of an
/// [`InputEdge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlainEdge {
    pub src: u64,
    pub dst: u64,
}

impl Record for PlainEdge {
    type Key = (u64, u64);
    const BYTES: usize = 16;
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.src, self.dst)
    }
    #[inline]
    fn encode(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.src.to_le_bytes());
        out[8..16].copy_from_slice(&self.dst.to_le_bytes());
    }
    #[inline]
    fn decode(b: &[u8]) -> Self {
        PlainEdge {
            src: u64::from_le_bytes(b[0..8].try_into().expect("8 bytes")),
            dst: u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
        }
    }
}

impl EdgeRecord for PlainEdge {
    #[inline]
    fn src(&self) -> u64 {
        self.src
    }
    #[inline]
    fn dst(&self) -> u64 {
        self.dst
    }
    #[inline]
    fn weight(&self) -> f64 {
        0.0
    }
    #[inline]
    fn set_weight(&mut self, _weight: f64) {}
}

/// An internal-id arc whatever its record: the import's arc sorts are written once for
/// weighted arcs ([`Arc`]) and unweighted ones ([`PlainArc`]).
pub trait ArcRecord: Record<Key = u64> {
    fn arc(from: u32, to: u32, weight: f64) -> Self;
    fn from(&self) -> u32;
    fn to(&self) -> u32;
    /// The weight (0 for an unweighted arc).
    fn weight(&self) -> f64;
}

impl ArcRecord for Arc {
    #[inline]
    fn arc(from: u32, to: u32, weight: f64) -> Self {
        Arc { from, to, weight }
    }
    #[inline]
    fn from(&self) -> u32 {
        self.from
    }
    #[inline]
    fn to(&self) -> u32 {
        self.to
    }
    #[inline]
    fn weight(&self) -> f64 {
        self.weight
    }
}

/// An unweighted internal-id arc, sorted by (from, to): half the bytes of an [`Arc`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlainArc {
    pub from: u32,
    pub to: u32,
}

impl Record for PlainArc {
    type Key = u64;
    const BYTES: usize = 8;
    #[inline]
    fn key(&self) -> u64 {
        ((self.from as u64) << 32) | self.to as u64
    }
    #[inline]
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.from.to_le_bytes());
        out[4..8].copy_from_slice(&self.to.to_le_bytes());
    }
    #[inline]
    fn decode(b: &[u8]) -> Self {
        PlainArc {
            from: u32::from_le_bytes(b[0..4].try_into().expect("4 bytes")),
            to: u32::from_le_bytes(b[4..8].try_into().expect("4 bytes")),
        }
    }
}

impl ArcRecord for PlainArc {
    #[inline]
    fn arc(from: u32, to: u32, _weight: f64) -> Self {
        PlainArc { from, to }
    }
    #[inline]
    fn from(&self) -> u32 {
        self.from
    }
    #[inline]
    fn to(&self) -> u32 {
        self.to
    }
    #[inline]
    fn weight(&self) -> f64 {
        0.0
    }
}

struct Run {
    path: PathBuf,
    records: u64,
}

/// Collects records, spilling sorted runs when the buffer is full.
pub struct Sorter<R: Record> {
    dir: PathBuf,
    name: String,
    buf: Vec<R>,
    cap: usize,
    stable: bool,
    /// False for a [`Sorter::deferred`] one: its runs are spilled as pushed.
    sorts: bool,
    runs: Vec<Run>,
    next_run: usize,
    read_buffer: usize,
    total: u64,
    /// The threads that sort a run (`SET threads`); rayon's global pool (every core) if unset.
    pool: Option<std::sync::Arc<rayon::ThreadPool>>,
}

impl<R: Record> Sorter<R> {
    /// A sorter holding at most `buffer_bytes` of records in memory, spilling runs named
    /// `<dir>/<name>-<n>.run`. `stable` keeps input order among equal keys (costs a scratch
    /// buffer of half the records while sorting). `read_buffer` is the bytes of each run
    /// reader's buffer while merging.
    pub fn new(
        dir: &Path,
        name: &str,
        buffer_bytes: usize,
        stable: bool,
        read_buffer: usize,
    ) -> Self {
        let cap = (buffer_bytes / std::mem::size_of::<R>()).max(16);
        Sorter {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            buf: Vec::new(),
            cap,
            stable,
            sorts: true,
            runs: Vec::new(),
            next_run: 0,
            read_buffer: read_buffer.max(4096),
            total: 0,
            pool: None,
        }
    }

    /// This sorter with its runs sorted on `pool`'s threads.
    pub fn on_pool(mut self, pool: &std::sync::Arc<rayon::ThreadPool>) -> Self {
        self.pool = Some(pool.clone());
        self
    }

    /// A sorter whose records' keys are not known yet: it spills runs unsorted, and
    /// [`Sorter::remap`] gives the records their keys and sorts them once (instead of a sort
    /// under keys that are then replaced).
    pub fn deferred(dir: &Path, name: &str, buffer_bytes: usize, read_buffer: usize) -> Self {
        Sorter {
            sorts: false,
            ..Sorter::new(dir, name, buffer_bytes, false, read_buffer)
        }
    }

    /// Every record pushed so far passed through `f` (which may fail, e.g. when cancelled), in
    /// a new sorter named `name` with this one's budget; each run read is removed. Adds the
    /// runs this one spilled to `runs`.
    pub fn remap(
        mut self,
        name: &str,
        runs: &mut u64,
        mut f: impl FnMut(R) -> Result<R>,
    ) -> Result<Sorter<R>> {
        let mut next = Sorter::new(&self.dir, name, 0, self.stable, self.read_buffer);
        next.cap = self.cap;
        next.pool = self.pool.clone();
        *runs += self.next_run as u64;
        for run in std::mem::take(&mut self.runs) {
            let mut records = Merged::<R>::open(std::slice::from_ref(&run), self.read_buffer)?;
            while let Some(r) = records.next()? {
                next.push(f(r)?)?;
            }
            drop(records);
            let _ = std::fs::remove_file(&run.path);
        }
        // Taken from the end (reversed first, so in push order), the buffer shrinking as the
        // new one grows: the two together hold the records about once, not twice.
        let mut buf = std::mem::take(&mut self.buf);
        buf.reverse();
        while let Some(r) = buf.pop() {
            next.push(f(r)?)?;
            release_popped(&mut buf);
        }
        Ok(next)
    }

    /// [`Sorter::remap`] for a sorter that spilled nothing, on its pool's threads: every record
    /// is renamed in place (no second buffer), `f` called on slices of records in no particular
    /// order, and the sorter is named `name` and sorts from now on. False (nothing done) when
    /// runs were spilled: they are read in order by [`Sorter::remap`] instead.
    pub fn remap_in_memory(&mut self, name: &str, f: impl Fn(R) -> R + Sync) -> bool {
        if !self.runs.is_empty() || self.next_run != 0 {
            return false;
        }
        let (buf, f) = (&mut self.buf, &f);
        let mut rename = move || {
            use rayon::prelude::*;
            buf.par_chunks_mut(1 << 16)
                .for_each(|c| c.iter_mut().for_each(|r| *r = f(*r)));
        };
        match &self.pool {
            Some(pool) => pool.install(rename),
            None => rename(),
        }
        self.name = name.to_string();
        self.sorts = true;
        true
    }

    /// Appends `records` as if each were [`Sorter::push`]ed: copied a slice at a time, spilling
    /// where a push would.
    pub fn extend_from_slice(&mut self, mut records: &[R]) -> Result<()> {
        while !records.is_empty() {
            if self.buf.len() >= self.cap {
                self.spill()?;
            }
            let room = self.cap - self.buf.len();
            let take = room.min(records.len());
            if self.buf.capacity() - self.buf.len() < take {
                // Grows as pushes would: doubling (from 64 Ki records) but never past the
                // budget.
                let len = self.buf.len();
                let grow = len.max(1 << 16).min(self.cap.saturating_sub(len)).max(take);
                self.buf.reserve_exact(grow);
            }
            self.buf.extend_from_slice(&records[..take]);
            self.total += take as u64;
            records = &records[take..];
        }
        Ok(())
    }

    /// Calls `f` on every record pushed so far (spilled runs first, then the buffer), leaving
    /// them where they are.
    pub fn for_each(&self, mut f: impl FnMut(&R)) -> Result<()> {
        for run in &self.runs {
            let mut records = Merged::<R>::open(std::slice::from_ref(run), self.read_buffer)?;
            while let Some(r) = records.next()? {
                f(&r);
            }
        }
        self.buf.iter().for_each(f);
        Ok(())
    }

    /// Records pushed so far.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// True when nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Changes the in-memory budget (something else now holds part of it): a smaller buffer
    /// spills sooner and is shrunk after its next spill.
    pub fn set_buffer_bytes(&mut self, buffer_bytes: usize) {
        self.cap = (buffer_bytes / std::mem::size_of::<R>()).max(16);
    }

    /// Runs spilled so far (for tests and progress).
    pub fn runs_spilled(&self) -> usize {
        self.next_run
    }

    /// Adds a record.
    #[inline]
    pub fn push(&mut self, r: R) -> Result<()> {
        if self.buf.len() >= self.cap {
            self.spill()?;
        }
        if self.buf.len() == self.buf.capacity() {
            // Grow to the budget lazily (tiny graphs do not allocate it), doubling but never
            // past it: the buffer's allocation is what the budget bounds.
            let len = self.buf.len();
            let grow = len.max(1 << 16).min(self.cap.saturating_sub(len)).max(1);
            self.buf.reserve_exact(grow);
        }
        self.buf.push(r);
        self.total += 1;
        Ok(())
    }

    /// Sorts the buffer on the sorter's threads: the sorts are most of an import's CPU.
    fn sort_buf(&mut self) {
        if !self.sorts {
            return;
        }
        let (buf, stable) = (&mut self.buf, self.stable);
        let mut sort = move || {
            if stable {
                buf.par_sort_by_key(|r| r.key());
            } else {
                buf.par_sort_unstable_by_key(|r| r.key());
            }
        };
        match &self.pool {
            Some(pool) => pool.install(sort),
            None => sort(),
        }
    }

    fn run_path(&mut self) -> PathBuf {
        let p = self
            .dir
            .join(format!("{}-{}.run", self.name, self.next_run));
        self.next_run += 1;
        p
    }

    fn spill(&mut self) -> Result<()> {
        self.sort_buf();
        let path = self.run_path();
        write_run(&path, self.buf.iter().copied().map(Ok))?;
        self.runs.push(Run {
            path,
            records: self.buf.len() as u64,
        });
        self.buf.clear();
        if self.buf.capacity() > self.cap {
            self.buf.shrink_to(self.cap);
        }
        Ok(())
    }

    /// [`Sorter::finish`], adding the runs spilled to `runs`.
    pub fn finish_counting(mut self, runs: &mut u64) -> Result<Merged<R>> {
        if !self.runs.is_empty() && !self.buf.is_empty() {
            self.spill()?;
        }
        *runs += self.next_run as u64;
        self.finish()
    }

    /// Sorts what is left and returns the merged, sorted stream of every record.
    pub fn finish(mut self) -> Result<Merged<R>> {
        if !self.sorts {
            return Err(StoreError::Other(
                "internal error: a deferred sort finished before its records were remapped".into(),
            ));
        }
        if self.runs.is_empty() {
            // Taken from the end, so that the buffer can give memory back as it empties: sorted
            // descending. An unstable sort sorts so directly (its order among equal keys is
            // unspecified either way); a stable one sorts ascending and reverses, so that equal
            // keys still come out in input order.
            if self.stable {
                self.sort_buf();
                self.buf.reverse();
            } else {
                let buf = &mut self.buf;
                let mut sort = move || buf.par_sort_unstable_by_key(|r| Reverse(r.key()));
                match &self.pool {
                    Some(pool) => pool.install(sort),
                    None => sort(),
                }
            }
            let mem = std::mem::take(&mut self.buf);
            return Ok(Merged {
                mem,
                heap: BinaryHeap::new(),
                readers: Vec::new(),
                scratch: vec![0; R::BYTES],
            });
        }
        if !self.buf.is_empty() {
            self.spill()?;
        }
        self.buf = Vec::new();
        // Cascade: merge groups of consecutive runs until FAN_IN remain.
        while self.runs.len() > FAN_IN {
            let mut next = Vec::new();
            let runs = std::mem::take(&mut self.runs);
            let mut it = runs.into_iter().peekable();
            while it.peek().is_some() {
                let group: Vec<Run> = it.by_ref().take(FAN_IN).collect();
                if group.len() == 1 {
                    next.extend(group);
                    continue;
                }
                let records = group.iter().map(|r| r.records).sum();
                let mut m = Merged::<R>::open(&group, self.read_buffer)?;
                let path = self.run_path();
                write_run(&path, std::iter::from_fn(|| m.next().transpose()))?;
                for r in &group {
                    let _ = std::fs::remove_file(&r.path);
                }
                next.push(Run { path, records });
            }
            self.runs = next;
        }
        Merged::open(&self.runs, self.read_buffer)
    }
}

fn write_run<R: Record>(path: &Path, items: impl Iterator<Item = Result<R>>) -> Result<()> {
    let f = File::create(path).map_err(|e| StoreError::io(path, e))?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let mut b = vec![0u8; R::BYTES];
    for r in items {
        r?.encode(&mut b);
        w.write_all(&b).map_err(|e| StoreError::io(path, e))?;
    }
    w.flush().map_err(|e| StoreError::io(path, e))?;
    Ok(())
}

struct RunReader {
    path: PathBuf,
    r: BufReader<File>,
    left: u64,
}

struct HeapItem<K: Ord> {
    key: K,
    run: usize,
}
impl<K: Ord> PartialEq for HeapItem<K> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl<K: Ord> Eq for HeapItem<K> {}
impl<K: Ord> PartialOrd for HeapItem<K> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<K: Ord> Ord for HeapItem<K> {
    fn cmp(&self, o: &Self) -> Ordering {
        // Equal keys: the earlier run (earlier input) first.
        (&self.key, self.run).cmp(&(&o.key, o.run))
    }
}

/// The sorted stream of a [`Sorter`]'s records.
pub struct Merged<R: Record> {
    /// A sort that fit in memory, in reverse order: the next record is the last, and the
    /// buffer shrinks as it is consumed, so that what the records feed (the next sort) can
    /// grow into the memory they leave instead of on top of all of it.
    mem: Vec<R>,
    heap: BinaryHeap<Reverse<HeapItem<R::Key>>>,
    readers: Vec<(RunReader, Option<R>)>,
    scratch: Vec<u8>,
}

impl<R: Record> Merged<R> {
    fn open(runs: &[Run], read_buffer: usize) -> Result<Merged<R>> {
        let mut m = Merged {
            mem: Vec::new(),
            heap: BinaryHeap::new(),
            readers: Vec::with_capacity(runs.len()),
            scratch: vec![0; R::BYTES],
        };
        for (i, run) in runs.iter().enumerate() {
            let f = File::open(&run.path).map_err(|e| StoreError::io(&run.path, e))?;
            m.readers.push((
                RunReader {
                    path: run.path.clone(),
                    r: BufReader::with_capacity(read_buffer, f),
                    left: run.records,
                },
                None,
            ));
            m.advance(i)?;
        }
        Ok(m)
    }

    fn advance(&mut self, i: usize) -> Result<()> {
        let (rr, slot) = &mut self.readers[i];
        if rr.left == 0 {
            *slot = None;
            return Ok(());
        }
        rr.r.read_exact(&mut self.scratch)
            .map_err(|e| StoreError::io(&rr.path, e))?;
        rr.left -= 1;
        let rec = R::decode(&self.scratch);
        *slot = Some(rec);
        self.heap.push(Reverse(HeapItem {
            key: rec.key(),
            run: i,
        }));
        Ok(())
    }

    /// The records left of a sort that fit in memory, in reverse order (the next record last),
    /// or `None` when runs are merged from disk.
    pub fn in_memory(&self) -> Option<&[R]> {
        self.readers.is_empty().then_some(&self.mem[..])
    }

    /// Consumes the in-memory records from the end down to the first `keep` (what
    /// [`Merged::next`] would have returned), giving their memory back.
    pub fn consume_in_memory(&mut self, keep: usize) {
        self.mem.truncate(keep);
        release_popped(&mut self.mem);
    }

    /// The next record in key order, or `None` at the end.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<R>> {
        if self.readers.is_empty() {
            let r = self.mem.pop();
            release_popped(&mut self.mem);
            return Ok(r);
        }
        let Some(Reverse(top)) = self.heap.pop() else {
            return Ok(None);
        };
        let rec = self.readers[top.run]
            .1
            .take()
            .ok_or_else(|| StoreError::Other("external sort: run out of step".into()))?;
        self.advance(top.run)?;
        Ok(Some(rec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deferred_sort_sorts_once_under_the_remapped_keys() {
        let scratch = tempfile::tempdir().unwrap();
        let mut s = Sorter::<Arc>::deferred(scratch.path(), "d", 16 * 16, 4096);
        let n = 3000u32;
        for i in 0..n {
            let from = (i * 7919) % n;
            s.push(Arc {
                from,
                to: i,
                weight: 0.0,
            })
            .unwrap();
        }
        assert!(s.runs_spilled() > 100, "spills unsorted runs");
        assert!(
            s.finish_counting(&mut 0).is_err(),
            "refuses to finish before the remap"
        );

        let dir = tempfile::tempdir().unwrap();
        let mut s = Sorter::<Arc>::deferred(dir.path(), "d", 16 * 16, 4096);
        for i in 0..n {
            s.push(Arc {
                from: (i * 7919) % n,
                to: i,
                weight: 0.0,
            })
            .unwrap();
        }
        let mut runs = 0;
        let mut seen = 0;
        // Reverse the ids: the order the records end in comes from the new keys only.
        let remapped = s
            .remap("r", &mut runs, |a| {
                seen += 1;
                Ok(Arc {
                    from: n - 1 - a.from,
                    ..a
                })
            })
            .unwrap();
        assert_eq!(seen, n);
        assert!(runs > 100);
        let mut m = remapped.finish().unwrap();
        let mut froms = Vec::new();
        while let Some(a) = m.next().unwrap() {
            assert_eq!(
                a.from,
                n - 1 - (a.to * 7919) % n,
                "each record keeps its payload"
            );
            froms.push(a.from);
        }
        assert_eq!(froms, (0..n).collect::<Vec<u32>>());
        let left = std::fs::read_dir(dir.path()).unwrap().count();
        assert!(
            left <= FAN_IN + 1,
            "the deferred runs were removed ({left} files left)"
        );
    }

    /// Counts the `key` calls made on threads named `pool-sort-*` and on other rayon threads.
    static ON_POOL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static ELSEWHERE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// A record that notes which threads sort it.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Noted(u64);

    impl Record for Noted {
        type Key = u64;
        const BYTES: usize = 8;
        fn key(&self) -> u64 {
            let name = std::thread::current().name().map(str::to_owned);
            if name.as_deref().is_some_and(|n| n.starts_with("pool-sort-")) {
                ON_POOL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            } else if rayon::current_thread_index().is_some() {
                ELSEWHERE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            self.0
        }
        fn encode(&self, out: &mut [u8]) {
            out.copy_from_slice(&self.0.to_le_bytes());
        }
        fn decode(b: &[u8]) -> Self {
            Noted(u64::from_le_bytes(b.try_into().expect("8 bytes")))
        }
    }

    #[test]
    fn runs_are_sorted_on_the_sorters_pool() {
        let dir = tempfile::tempdir().unwrap();
        let pool = std::sync::Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .thread_name(|i| format!("pool-sort-{i}"))
                .build()
                .unwrap(),
        );
        let mut s = Sorter::<Noted>::new(dir.path(), "p", 64 * 8, false, 4096).on_pool(&pool);
        for i in 0..1000u64 {
            s.push(Noted((i * 7919) % 1000)).unwrap();
        }
        assert!(s.runs_spilled() > 1, "spills runs, each sorted");
        let mut m = s.finish().unwrap();
        let mut out = Vec::new();
        while let Some(r) = m.next().unwrap() {
            out.push(r.0);
        }
        assert_eq!(out, (0..1000).collect::<Vec<u64>>());
        assert!(ON_POOL.load(std::sync::atomic::Ordering::Relaxed) > 0);
        assert_eq!(ELSEWHERE.load(std::sync::atomic::Ordering::Relaxed), 0);
    }

    #[test]
    fn many_runs_merge_in_order_and_keep_first_of_equal_keys() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sorter::<InputEdge>::new(dir.path(), "t", 16 * 24, true, 4096);
        let mut x: u64 = 12345;
        let mut input = Vec::new();
        for i in 0..5000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let e = InputEdge {
                src: (x >> 60) % 7,
                dst: (x >> 50) % 11,
                weight: i as f64,
            };
            input.push(e);
            s.push(e).unwrap();
        }
        assert!(s.runs_spilled() > FAN_IN, "forces a cascade");
        let mut m = s.finish().unwrap();
        let mut out = Vec::new();
        while let Some(r) = m.next().unwrap() {
            out.push(r);
        }
        let mut want = input.clone();
        want.sort_by_key(|r| r.key());
        assert_eq!(out, want);
    }
}
