//! A pass over every list of one direction in which the workers share one stream of reads
//! ([`GraphStore::scan_all_shared`](crate::store::GraphStore::scan_all_shared)).
//!
//! Scans of separate ranges tie each worker to its own reads: a worker whose read is late waits
//! while another's landed reads wait for their worker, and each issues reads only between its
//! lists. Here one reader thread keeps the whole scan reserve in flight, and the block cache's
//! room too (lent to the pass, which needs no cached block), from both ends of the file at once
//! (under `LAYOUT degree` the hubs' long lists at the front, which sum faster than the device
//! reads them, beside the short lists at the back, which cost more to visit than to read), and
//! any worker takes any landed read: the lists that start in it. A list that runs on into later
//! reads is copied piece by piece as they land, each piece let go once copied, so a hub never
//! holds all of its reads at once.
//!
//! The two ends are kept level in what their reads ask of the workers, not in bytes. Level in
//! bytes, the costly short lists would crowd the start of every pass: the reads held would fill
//! with landed reads waiting for the workers while the device idles. Level in work, every costly
//! read from the back goes with several cheap ones from the front, and the device stays busy.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use rustc_hash::FxHashMap as HashMap;

use super::{
    assembly_bytes, reserve_assembly, ActiveScan, Lay, OutOfCoreStore, SCAN_DEPTH,
    SCAN_RESERVE_MAX, SLOTS,
};
use crate::blockfile::format::BLOCK_SIZE;
use crate::blockfile::scan_plan::ReadOf;
use crate::error::{Result, StoreError};
use crate::io::{AlignedBuf, Completion};
use crate::store::{Direction, RunWorkers};

/// What visiting one list costs the workers beyond its ids, in bytes of reading of the same cost:
/// finding it in the index, starting its sum and storing the result, expressed as the ids of
/// reading that cost as much (fitted to traces of PageRank's pass); the pass needs it only
/// roughly, to keep the two ends of a pass level in work.
const LIST_VISIT_BYTES: u64 = 48;

/// What a pass over one direction reads and who needs each read. The same every pass, so the
/// store keeps it ([`PassPlans`]).
#[derive(Debug)]
pub(super) struct PassPlan {
    /// Block ranges, sorted, one read each.
    reads: Vec<Range<u64>>,
    /// The vertices whose lists start in read `c` (with the empty lists among them), as runs:
    /// `runs[first_run[c]..first_run[c + 1]]`.
    first_run: Vec<u32>,
    runs: Vec<Range<u32>>,
    /// How many pieces of work need each read: its own runs (once), and every list that starts
    /// in an earlier read and runs on into it.
    users: Vec<u32>,
    /// Vertices whose lists start in each read (the empty ones too).
    lists: Vec<u32>,
}

impl PassPlan {
    fn runs_of(&self, c: usize) -> &[Range<u32>] {
        &self.runs[self.first_run[c] as usize..self.first_run[c + 1] as usize]
    }
}

/// The pass plans of one store, by direction and whether weights are read.
#[derive(Debug, Default)]
pub(super) struct PassPlans(Mutex<HashMap<(Direction, bool), Arc<PassPlan>>>);

impl PassPlans {
    /// Forgets every plan (the reads they chose no longer fit the device's costs).
    pub(super) fn clear(&self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    fn get_or_plan(
        &self,
        key: (Direction, bool),
        plan: impl FnOnce() -> PassPlan,
    ) -> Arc<PassPlan> {
        if let Some(p) = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return p.clone();
        }
        let p = Arc::new(plan());
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, p.clone());
        p
    }
}

/// A landed read: its edge blocks, the weight blocks beside them, and whether they were checked.
struct Landed {
    edges: AlignedBuf,
    weights: Option<AlignedBuf>,
    /// Checked against the block checksums and the vertex count by its first user, so that its
    /// bytes are in that core's cache for the sums.
    checked: Mutex<bool>,
}

/// What the reader and the workers share, under one lock.
struct PassState {
    /// Reads landed and still needed.
    landed: Vec<Option<Arc<Landed>>>,
    issued: Vec<bool>,
    /// Pieces of work that still need each read (from the plan, counted down).
    users: Vec<u32>,
    /// Landed reads whose lists no worker has taken yet, in landing order.
    ready: VecDeque<usize>,
    /// Reads wanted at once by a worker copying a long list (read whatever the budget).
    urgent: Vec<usize>,
    /// The reads `front..back` are not yet issued from either end (some may be, urgently).
    front: usize,
    back: usize,
    /// Work issued from each end (see [`Pass::work_of`]), which keeps the two ends level.
    front_work: u64,
    back_work: u64,
    /// Bytes of reads in flight or landed and still needed.
    held: u64,
    /// Reads with lists that start in them, not yet done.
    units_left: usize,
    error: Option<StoreError>,
    /// The workers have stopped (done, asked to stop, or failed): the reader stops too.
    over: bool,
    /// A worker was asked to stop (`stop` said yes).
    stopped: bool,
}

impl PassState {
    /// Nothing issued yet, every use of every read still to come.
    fn new(plan: &PassPlan) -> Self {
        let reads = plan.reads.len();
        PassState {
            landed: (0..reads).map(|_| None).collect(),
            issued: vec![false; reads],
            users: plan.users.clone(),
            ready: VecDeque::new(),
            urgent: Vec::new(),
            front: 0,
            back: reads,
            front_work: 0,
            back_work: 0,
            held: 0,
            units_left: (0..reads).filter(|&c| !plan.runs_of(c).is_empty()).count(),
            error: None,
            over: false,
            stopped: false,
        }
    }

    /// The read to issue next: one a worker waits for, else the next from the end behind,
    /// within `budget` bytes held (always one when nothing is held).
    fn next_read(&mut self, budget: u64, bytes_of: impl Fn(usize) -> u64) -> Option<usize> {
        while let Some(c) = self.urgent.pop() {
            if !self.issued[c] {
                return Some(c);
            }
        }
        while self.front < self.back && self.issued[self.front] {
            self.front += 1;
        }
        while self.front < self.back && self.issued[self.back - 1] {
            self.back -= 1;
        }
        if self.front >= self.back {
            return None;
        }
        let c = if self.front_work <= self.back_work {
            self.front
        } else {
            self.back - 1
        };
        (self.held == 0 || self.held + bytes_of(c) <= budget).then_some(c)
    }

    fn note_issued(&mut self, c: usize, bytes: u64, work: u64) {
        self.issued[c] = true;
        self.held += bytes;
        if c == self.front {
            self.front += 1;
            self.front_work += work;
        } else if c + 1 == self.back {
            self.back -= 1;
            self.back_work += work;
        }
    }
}

/// The lock and the two places to wait: workers for landed reads, the reader for room.
struct Shared {
    state: Mutex<PassState>,
    workers: Condvar,
    reader: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, PassState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl OutOfCoreStore {
    /// Plans a pass over every list of `n` vertices: the reads of a whole-range scan, and for
    /// each read the runs of vertices whose lists start in it.
    fn plan_pass(&self, lay: &Lay<'_>, n: u32) -> PassPlan {
        let spans = Self::span_runs(lay, 0..n, true);
        let reads = self.reads_of(&spans);
        let mut users = vec![0u32; reads.len()];
        // (read, vertices) in vertex order; an empty list joins the run before it (the first
        // run starts at vertex 0).
        let mut runs: Vec<(usize, Range<u32>)> = Vec::new();
        let read_of = ReadOf::new(&reads);
        for span in &spans {
            let c0 = read_of.of(span.e_first);
            let c1 = read_of.of(span.e_last);
            for u in &mut users[c0 + 1..=c1] {
                *u += span.lists;
            }
            if runs.last().map(|r| r.0) != Some(c0) {
                let begin = if runs.is_empty() { 0 } else { span.first };
                if let Some(last) = runs.last_mut() {
                    last.1.end = span.first;
                }
                runs.push((c0, begin..n));
            }
        }
        runs.sort_by_key(|r| r.0);
        let mut first_run = Vec::with_capacity(reads.len() + 1);
        let mut lists = Vec::with_capacity(reads.len());
        let mut k = 0;
        for (c, u) in users.iter_mut().enumerate() {
            first_run.push(k as u32);
            let (own, vertices) = runs[k..]
                .iter()
                .take_while(|r| r.0 == c)
                .fold((0, 0u32), |(own, vs), r| (own + 1, vs + r.1.len() as u32));
            if own > 0 {
                *u += 1;
            }
            lists.push(vertices);
            k += own;
        }
        first_run.push(k as u32);
        PassPlan {
            reads,
            first_run,
            runs: runs.into_iter().map(|r| r.1).collect(),
            users,
            lists,
        }
    }

    /// The body of `scan_all_shared` for this store.
    pub(super) fn shared_pass<F>(
        &self,
        dir: Direction,
        want_weights: bool,
        run_workers: &RunWorkers<'_>,
        stop: &(dyn Fn() -> bool + Sync),
        visit: &F,
    ) -> Result<bool>
    where
        F: Fn(u32, &[u32], Option<&[f64]>) + Sync,
    {
        let n = self.file.superblock.vertices as u32;
        if n == 0 {
            return Ok(true);
        }
        if self.scan_reserve == 0 {
            // No scan buffers (a tiny cache): the ranges' scans read block by block instead.
            return Ok(false);
        }
        let lay = self.lay(dir, want_weights);
        let want_w = lay.w0.is_some();
        let plan = self
            .pass_plans
            .get_or_plan((dir, want_w), || self.plan_pass(&lay, n));
        if plan.reads.is_empty() {
            for v in 0..n {
                visit(v, &[], want_w.then_some(&[]));
            }
            return Ok(true);
        }
        let (_active, scans) = ActiveScan::enter(&self.active_scans);
        // The pass needs no cached block, and the more reads it holds, the longer the workers
        // may fall behind before the device idles: it borrows the block cache's room (at most
        // as much again as the scans' largest reserve, so a large cache stays mostly warm).
        let loan = self.cache.lend(SCAN_RESERVE_MAX);
        let budget = self.scan_reserve / scans as u64 + loan.as_ref().map_or(0, |l| l.bytes());
        let shared = Shared {
            state: Mutex::new(PassState::new(&plan)),
            workers: Condvar::new(),
            reader: Condvar::new(),
        };
        let pass = Pass {
            store: self,
            lay,
            plan: &plan,
            shared: &shared,
            want_w,
            budget,
        };
        std::thread::scope(|scope| {
            let reader = std::thread::Builder::new()
                .name("frontier-reader".into())
                .spawn_scoped(scope, || pass.read_all());
            let reader = match reader {
                Ok(r) => r,
                Err(e) => {
                    shared.fail(StoreError::Other(format!(
                        "cannot start the reader thread of a scan: {e}"
                    )));
                    return;
                }
            };
            // Ends the pass for the reader however the workers return (a visitor's panic too),
            // so that the scope's join of the reader cannot hang.
            let _end = EndOnDrop(&shared);
            run_workers(&|_| {
                if let Err(e) = pass.work(stop, visit) {
                    shared.fail(e);
                }
            });
            drop(_end);
            if reader.join().is_err() {
                shared.fail(StoreError::Other(
                    "the reader thread of a scan panicked".into(),
                ));
            }
        });
        let mut st = shared.lock();
        match st.error.take() {
            Some(e) => Err(e),
            None if st.units_left > 0 && !st.stopped => Err(StoreError::Other(format!(
                "a pass over the lists ended with {} of its reads unvisited (its workers returned \
                 early)",
                st.units_left
            ))),
            None => Ok(true),
        }
    }
}

impl Shared {
    /// Ends the pass for the reader and every worker.
    fn end(&self) {
        self.lock().over = true;
        self.reader.notify_all();
        self.workers.notify_all();
    }

    /// Ends the pass with `e` (the first error wins).
    fn fail(&self, e: StoreError) {
        self.lock().error.get_or_insert(e);
        self.end();
    }
}

/// Ends the pass when dropped.
struct EndOnDrop<'a>(&'a Shared);

impl Drop for EndOnDrop<'_> {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// Ends the pass when dropped by a panic.
struct EndOnPanic<'a>(&'a Shared);

impl Drop for EndOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.end();
        }
    }
}

/// One pass: the plan, the shared state, and what the reader and the workers need to know.
struct Pass<'a> {
    store: &'a OutOfCoreStore,
    lay: Lay<'a>,
    plan: &'a PassPlan,
    shared: &'a Shared,
    want_w: bool,
    /// Bytes of reads the pass may hold at once (in flight or landed and needed).
    budget: u64,
}

impl Pass<'_> {
    fn bytes_of(&self, c: usize) -> u64 {
        let r = &self.plan.reads[c];
        (r.end - r.start) * BLOCK_SIZE as u64 * if self.want_w { 3 } else { 1 }
    }

    /// What read `c` asks of the workers, in bytes of reading: its bytes, and
    /// [`LIST_VISIT_BYTES`] for every list that starts in it.
    fn work_of(&self, c: usize) -> u64 {
        self.bytes_of(c) + LIST_VISIT_BYTES * self.plan.lists[c] as u64
    }

    /// The reader thread: keeps reads in flight within the budget and hands each landed read
    /// to the workers. Errors end the pass for everyone.
    fn read_all(&self) {
        match self.read_loop() {
            Ok(()) => self.shared.workers.notify_all(),
            Err(e) => self.shared.fail(e),
        }
    }

    fn read_loop(&self) -> Result<()> {
        let store = self.store;
        let mut session = store.engine.session()?.without_wait_count();
        let reads_per_chunk = if self.want_w { 2 } else { 1 };
        // Reads whose edges or weights have landed but not both.
        let mut halves: HashMap<usize, (Option<AlignedBuf>, Option<AlignedBuf>)> =
            HashMap::default();
        let mut done: Vec<Completion> = Vec::new();
        loop {
            {
                let mut st = self.shared.lock();
                loop {
                    if st.over {
                        return Ok(());
                    }
                    while session.in_flight() < 2 * SCAN_DEPTH * reads_per_chunk {
                        let Some(c) = st.next_read(self.budget, |c| self.bytes_of(c)) else {
                            break;
                        };
                        if !session.has_room() {
                            // The engine's depth is taken by other sessions: issued after
                            // the next completion, ahead of the ends.
                            st.urgent.push(c);
                            break;
                        }
                        let blocks = self.plan.reads[c].clone();
                        store.submit_scan_read(&mut session, &self.lay, c as u64, blocks)?;
                        st.note_issued(c, self.bytes_of(c), self.work_of(c));
                        store
                            .scan_high_water
                            .fetch_max(st.held, std::sync::atomic::Ordering::Relaxed);
                    }
                    if session.in_flight() > 0 {
                        break;
                    }
                    if st.front >= st.back && st.urgent.is_empty() {
                        // Everything is read; the workers finish without the reader.
                        return Ok(());
                    }
                    // Nothing in flight and no room: wait for a worker to let a read go.
                    st = self
                        .shared
                        .reader
                        .wait(st)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
            session.flush()?;
            session.wait(|c| done.push(c))?;
            let mut st = self.shared.lock();
            for c in done.drain(..) {
                store.landed(&c)?;
                let idx = (c.tag >> 1) as usize;
                let half = halves.entry(idx).or_default();
                if c.tag & 1 == 0 {
                    half.0 = Some(c.buf);
                } else {
                    half.1 = Some(c.buf);
                }
                if half.0.is_some() && (half.1.is_some() || !self.want_w) {
                    let (edges, weights) = halves.remove(&idx).expect("present");
                    st.landed[idx] = Some(Arc::new(Landed {
                        edges: edges.expect("edges landed"),
                        weights,
                        checked: Mutex::new(false),
                    }));
                    if !self.plan.runs_of(idx).is_empty() {
                        st.ready.push_back(idx);
                    }
                }
            }
            drop(st);
            self.shared.workers.notify_all();
        }
    }

    /// A worker: takes landed reads and visits the lists that start in them until every read's
    /// lists are visited, `stop` says so, or the pass fails.
    fn work<F>(&self, stop: &(dyn Fn() -> bool + Sync), visit: &F) -> Result<()>
    where
        F: Fn(u32, &[u32], Option<&[f64]>) + Sync,
    {
        // A worker whose visitor panics ends the pass, or the others would wait for its read.
        let _ends_on_panic = EndOnPanic(self.shared);
        let mut assembled: Vec<u32> = Vec::new();
        let mut wassembled: Vec<f64> = Vec::new();
        loop {
            let c = {
                let mut st = self.shared.lock();
                loop {
                    if st.over || st.units_left == 0 {
                        return Ok(());
                    }
                    if let Some(c) = st.ready.pop_front() {
                        break c;
                    }
                    st = self.wait_for_reads(st);
                }
            };
            if !self.visit_read(c, visit, &mut assembled, &mut wassembled)? {
                return Ok(());
            }
            let mut st = self.shared.lock();
            st.units_left -= 1;
            if st.units_left == 0 {
                drop(st);
                self.shared.workers.notify_all();
                return Ok(());
            }
            drop(st);
            if stop() {
                self.shared.lock().stopped = true;
                self.shared.end();
                return Ok(());
            }
        }
    }

    /// Waits for the reader to land a read, counted as this thread waiting for reads.
    fn wait_for_reads<'g>(&self, st: MutexGuard<'g, PassState>) -> MutexGuard<'g, PassState> {
        let started = Instant::now();
        let st = self
            .shared
            .workers
            .wait(st)
            .unwrap_or_else(PoisonError::into_inner);
        let waited = started.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        self.store
            .counters
            .wait_nanos
            .fetch_add(waited, std::sync::atomic::Ordering::Relaxed);
        st
    }

    /// Landed read `d`, waiting for it (and asking the reader for it first) if need be; `None`
    /// once the pass is over (stopped, or failed elsewhere).
    fn landed(&self, d: usize) -> Option<Arc<Landed>> {
        let mut st = self.shared.lock();
        loop {
            if let Some(l) = &st.landed[d] {
                return Some(l.clone());
            }
            if st.over {
                return None;
            }
            if !st.issued[d] && !st.urgent.contains(&d) {
                st.urgent.push(d);
                self.shared.reader.notify_all();
            }
            st = self.wait_for_reads(st);
        }
    }

    /// Checks read `c`'s blocks once (checksums; neighbour ids of the edge blocks).
    fn check(&self, c: usize, l: &Landed) -> Result<()> {
        let mut checked = l.checked.lock().unwrap_or_else(PoisonError::into_inner);
        if !*checked {
            let first = self.plan.reads[c].start;
            self.store
                .check_scan_read(&self.lay, first, &l.edges, l.weights.as_ref())?;
            *checked = true;
        }
        Ok(())
    }

    /// Done with read `d` (the caller has dropped its handle): the last user lets it go.
    fn release(&self, d: usize) {
        let mut st = self.shared.lock();
        st.users[d] -= 1;
        if st.users[d] > 0 {
            return;
        }
        let gone = st.landed[d].take();
        st.held -= self.bytes_of(d);
        drop(st);
        self.shared.reader.notify_all();
        if let Some(Ok(l)) = gone.map(Arc::try_unwrap) {
            self.store.scan_edges.give(l.edges);
            if let Some(w) = l.weights {
                self.store.scan_weights.give(w);
            }
        }
    }

    /// The slots read `d` holds (edge slot numbers of the direction).
    fn slots_of(&self, d: usize) -> Range<u64> {
        let r = &self.plan.reads[d];
        (r.start - self.lay.e0) * SLOTS..(r.end - self.lay.e0) * SLOTS
    }

    /// Visits the lists that start in read `c`, in vertex order; a list running on into later
    /// reads is copied piece by piece as they land. `false` when the pass ended meanwhile.
    fn visit_read<F>(
        &self,
        c: usize,
        visit: &F,
        assembled: &mut Vec<u32>,
        wassembled: &mut Vec<f64>,
    ) -> Result<bool>
    where
        F: Fn(u32, &[u32], Option<&[f64]>) + Sync,
    {
        let want_w = self.want_w;
        let Some(chunk) = self.landed(c) else {
            return Ok(false);
        };
        self.check(c, &chunk)?;
        let ids = chunk.edges.as_u32s();
        let weights = chunk.weights.as_ref().map(|w| w.as_f64s());
        let here = self.slots_of(c);
        let mut index = self.lay.idx.cursor(true);
        for run in self.plan.runs_of(c) {
            for v in run.clone() {
                let (start, deg) = index.entry(v);
                if deg == 0 {
                    visit(v, &[], want_w.then_some(&[]));
                    continue;
                }
                let end = start + deg as u64;
                if end <= here.end {
                    let at = (start - here.start) as usize..(end - here.start) as usize;
                    visit(v, &ids[at.clone()], weights.map(|w| &w[at]));
                    continue;
                }
                if !self.visit_long(v, start, deg, c, &chunk, visit, assembled, wassembled)? {
                    return Ok(false);
                }
            }
        }
        drop(chunk);
        self.release(c);
        Ok(true)
    }

    /// Visits `v`'s list, which starts in read `c` (landed as `first`) and runs on into the
    /// reads after it: each piece copied as its read lands, each later read let go once copied.
    /// `false` when the pass ended meanwhile.
    #[allow(clippy::too_many_arguments)]
    fn visit_long<F>(
        &self,
        v: u32,
        start: u64,
        deg: u32,
        c: usize,
        first: &Landed,
        visit: &F,
        assembled: &mut Vec<u32>,
        wassembled: &mut Vec<f64>,
    ) -> Result<bool>
    where
        F: Fn(u32, &[u32], Option<&[f64]>) + Sync,
    {
        let want_w = self.want_w;
        let end = start + deg as u64;
        let list_bytes = assembly_bytes(deg, want_w);
        let loan = self.store.lists.lend(list_bytes);
        reserve_assembly(v, deg, want_w, assembled, wassembled)?;
        let mut copy = |d: usize, l: &Landed| {
            let slots = self.slots_of(d);
            let piece = (start.max(slots.start) - slots.start) as usize
                ..(end.min(slots.end) - slots.start) as usize;
            assembled.extend_from_slice(&l.edges.as_u32s()[piece.clone()]);
            if let Some(w) = &l.weights {
                wassembled.extend_from_slice(&w.as_f64s()[piece]);
            }
        };
        copy(c, first);
        let mut d = c + 1;
        while d < self.plan.reads.len() && self.slots_of(d).start < end {
            let Some(l) = self.landed(d) else {
                return Ok(false);
            };
            self.check(d, &l)?;
            copy(d, &l);
            drop(l);
            self.release(d);
            d += 1;
        }
        if assembled.len() != deg as usize {
            return Err(StoreError::Other(format!(
                "the reads planned for a pass miss part of the list of vertex {v}"
            )));
        }
        visit(v, assembled, want_w.then_some(&wassembled[..]));
        drop(loan);
        // A hub's capacity is not kept for the small lists that follow.
        if assembled.capacity() * 4 > super::SCAN_ASSEMBLY_KEEP {
            *assembled = Vec::new();
            *wassembled = Vec::new();
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan of `lists.len()` one-block reads, each with its own run of `lists[c]` vertices.
    fn plan_of(lists: &[u32]) -> PassPlan {
        let mut runs = Vec::new();
        let mut v = 0;
        for &n in lists {
            runs.push(v..v + n);
            v += n;
        }
        PassPlan {
            reads: (0..lists.len() as u64).map(|c| c..c + 1).collect(),
            first_run: (0..=lists.len() as u32).collect(),
            runs,
            users: vec![1; lists.len()],
            lists: lists.to_vec(),
        }
    }

    /// The order `next_read` issues every read in, with room for all of them.
    fn issue_order(plan: &PassPlan, work: impl Fn(usize) -> u64) -> Vec<usize> {
        let mut st = PassState::new(plan);
        let mut order = Vec::new();
        while let Some(c) = st.next_read(u64::MAX, |_| 1) {
            st.note_issued(c, 1, work(c));
            order.push(c);
        }
        order
    }

    #[test]
    fn the_ends_stay_level_in_work_so_costly_reads_are_spread_out() {
        // Level in bytes, the two ends alternate whatever their lists cost.
        let plan = plan_of(&[1, 1, 1, 1, 1, 1, 40, 40]);
        assert_eq!(issue_order(&plan, |_| 10), [0, 7, 1, 6, 2, 5, 3, 4]);
        // Level in work, each costly read from the back comes with the cheap ones that match it.
        let work = |c: usize| 10 + plan.lists[c] as u64;
        assert_eq!(issue_order(&plan, work), [0, 7, 1, 2, 3, 4, 6, 5]);
        // A read a worker waits for goes first, and an issued read is not issued again.
        let mut st = PassState::new(&plan);
        st.urgent.push(5);
        assert_eq!(st.next_read(u64::MAX, |_| 1), Some(5));
        st.note_issued(5, 1, work(5));
        assert_eq!(st.next_read(u64::MAX, |_| 1), Some(0));
    }

    #[test]
    fn reads_wait_for_room_but_one_always_goes() {
        let plan = plan_of(&[1, 1, 1]);
        let mut st = PassState::new(&plan);
        // Nothing held: a read larger than the budget still goes.
        assert_eq!(st.next_read(5, |_| 8), Some(0));
        st.note_issued(0, 8, 8);
        assert_eq!(st.next_read(5, |_| 8), None);
        assert_eq!(st.next_read(20, |_| 8), Some(2));
    }
}
