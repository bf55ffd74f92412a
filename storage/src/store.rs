//! The graph-store trait every frontier operator reads through.
//!
//! Three stores implement it: the in-memory reader (neighbour lists are plain slices), the
//! out-of-core block-file reader (4 KiB blocks arrive as I/O completes) and the
//! disaggregated-memory store (remote batches arrive as round trips complete). The trait is
//! therefore *batch-in, callback-out*: a caller hands over many vertices at once and is called
//! back once per vertex as its list becomes available, in completion order. That lets a store
//! keep `io_depth` reads (or remote batches) in flight from a single calling thread, so I/O
//! depth does not depend on the number of worker threads.
//!
//! The trait is generic over the visitor (not object safe) on purpose: algorithms are
//! monomorphised per store, so the in-memory path has no per-edge or per-list dynamic dispatch.

use std::ops::Range;

use crate::error::StoreError;
use crate::remote_memory::RemoteMemory;
use crate::weights::WeightSlice;

/// Which adjacency to read. Undirected graphs answer `In` with the same lists as `Out`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    Out,
    In,
}

/// How a batch of lists should be fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FetchOrder {
    /// Fetch each list on its own, in the given order, many in flight (CAVE ProcessQueue).
    AsGiven,
    /// Group the vertices by edge block first and read each block once (CAVE ProcessQueueBlock).
    ByBlock,
}

/// The facts every store knows without touching edge data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphShape {
    /// Number of vertices (internal ids are `0..vertices`).
    pub vertices: u32,
    /// Number of stored arcs per direction: an undirected input edge counts twice.
    pub arcs: u64,
    /// Number of edges as the user counts them: an undirected edge counts once.
    pub edges: u64,
    pub directed: bool,
    pub weighted: bool,
}

/// Counters of the work a store did; a snapshot, subtract two for one iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoStats {
    /// Edge/weight blocks read from the device (or remote batches fetched).
    pub blocks_read: u64,
    /// Block requests served from the cache.
    pub cache_hits: u64,
    /// Block requests that had to be read.
    pub cache_misses: u64,
    /// Bytes read from the device or the network.
    pub bytes_read: u64,
    /// The largest number of reads that were in flight at once.
    pub inflight_high_water: u64,
    /// Time threads spent blocked waiting for reads, summed over the threads (nanoseconds):
    /// beside the algorithm's time times the threads, it says how I/O-bound a run was.
    pub wait_nanos: u64,
}

impl IoStats {
    /// The counters accumulated since `earlier` (the high-water mark is kept as is).
    pub fn since(&self, earlier: &IoStats) -> IoStats {
        IoStats {
            blocks_read: self.blocks_read - earlier.blocks_read,
            cache_hits: self.cache_hits - earlier.cache_hits,
            cache_misses: self.cache_misses - earlier.cache_misses,
            bytes_read: self.bytes_read - earlier.bytes_read,
            inflight_high_water: self.inflight_high_water,
            wait_nanos: self.wait_nanos - earlier.wait_nanos,
        }
    }

    /// Fraction of block requests served from the cache, or `None` when there were none (a
    /// pass that only scanned reads past the cache, so the cache says nothing about it).
    pub fn hit_rate(&self) -> Option<f64> {
        let total = self.cache_hits + self.cache_misses;
        (total > 0).then(|| self.cache_hits as f64 / total as f64)
    }
}

/// A contiguous in-memory view of one direction's adjacency: the fast path for kernels that
/// want tight loops (pull PageRank, direction-optimising BFS). Only the in-memory store has it.
#[derive(Debug, Clone, Copy)]
pub struct CsrView<'a> {
    /// Start slot of each vertex's list in `targets`.
    pub starts: &'a [u64],
    /// Length of each vertex's list.
    pub degrees: &'a [u32],
    /// Neighbour ids (internal), with bin-packing gaps between lists.
    pub targets: &'a [u32],
    /// Edge weights parallel to `targets`, when the graph is weighted.
    pub weights: Option<WeightSlice<'a>>,
    /// The largest weight when every weight is a whole number from 0 to 2^24 (1 when the
    /// graph is unweighted): sums of such weights are exact in integers.
    pub whole_weight_max: Option<u32>,
}

impl<'a> CsrView<'a> {
    /// The neighbours of `v`.
    #[inline]
    pub fn neighbours(&self, v: u32) -> &'a [u32] {
        let s = self.starts[v as usize] as usize;
        &self.targets[s..s + self.degrees[v as usize] as usize]
    }

    /// The weights of `v`'s edges as f64: the stored slice when wide, otherwise widened into
    /// `scratch`.
    #[inline]
    pub fn weights_f64<'s>(&self, v: u32, scratch: &'s mut Vec<f64>) -> Option<&'s [f64]>
    where
        'a: 's,
    {
        self.weights_of(v).map(|w| w.widen(scratch))
    }

    /// The weights of `v`'s edges, parallel to [`CsrView::neighbours`].
    #[inline]
    pub fn weights_of(&self, v: u32) -> Option<WeightSlice<'a>> {
        let s = self.starts[v as usize] as usize;
        self.weights
            .map(|w| w.slice(s..s + self.degrees[v as usize] as usize))
    }
}

/// A job that runs once on each worker, given the worker's index.
pub type WorkerJob<'a> = dyn Fn(usize) + Sync + 'a;

/// Runs a [`WorkerJob`] on every worker of the caller's pool and returns when all have.
pub type RunWorkers<'a> = dyn Fn(&WorkerJob<'_>) + Sync + 'a;

/// A graph that frontier operators can read.
pub trait GraphStore: Send + Sync {
    /// |V|, |E|, directed, weighted.
    fn shape(&self) -> GraphShape;

    /// Degree of internal vertex `v` in direction `dir` (no edge data is read).
    fn degree(&self, dir: Direction, v: u32) -> u64;

    /// The input (user-visible) id of internal vertex `v`.
    fn input_id(&self, v: u32) -> u64;

    /// The internal id of input id `id`, if the graph has that vertex.
    fn internal_id(&self, id: u64) -> Option<u32>;

    /// The internal ids in runs whose input ids ascend, together covering every vertex: one
    /// run `0..n` when internal order is key order, one per degree bucket under `LAYOUT
    /// degree`. Result rows are merged from these runs so that they come in key order in
    /// every layout.
    fn key_runs(&self) -> Vec<Range<u32>> {
        crate::blockfile::id_runs::IdRuns::single(self.shape().vertices)
            .ranges()
            .collect()
    }

    /// The vertices' string keys, when the graph has them; then `input_id(v)` is `v` (the
    /// rank of its key) and the keys name the vertices.
    fn vertex_keys(&self) -> Option<&crate::blockfile::keys::VertexKeys> {
        None
    }

    /// Calls `visit(v, neighbours, weights)` exactly once for every vertex of `vertices`, in
    /// completion order. `weights` is `Some` only when asked for and the graph is weighted.
    /// Keeps up to the store's I/O depth of reads in flight. An error (I/O, checksum, a remote
    /// node gone) stops the batch; lists already visited stay visited.
    fn for_each_list<F>(
        &self,
        dir: Direction,
        vertices: &[u32],
        order: FetchOrder,
        want_weights: bool,
        visit: F,
    ) -> Result<(), StoreError>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>);

    /// As [`GraphStore::for_each_list`] by block, and `visit` may push more vertices onto its
    /// last argument to carry them on in the same call (again and again if pushed again). A
    /// traversal uses it to carry on through the blocks it has just read instead of waiting a
    /// round for them. A store visits the pushed vertices it holds at hand (out of core: those
    /// whose lists start in a block of the vertices it was handed) and appends the others to
    /// `left`, unvisited, for the caller's next round; a store whose reads are cheap visits
    /// them all, as this default does.
    fn for_each_list_spreading<F>(
        &self,
        dir: Direction,
        vertices: &[u32],
        want_weights: bool,
        mut visit: F,
        left: &mut Vec<u32>,
    ) -> Result<(), StoreError>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>, &mut Vec<u32>),
    {
        let _ = left;
        let mut todo = vertices.to_vec();
        let mut more = Vec::new();
        while !todo.is_empty() {
            self.for_each_list(
                dir,
                &todo,
                FetchOrder::ByBlock,
                want_weights,
                |v, ns, ws| visit(v, ns, ws, &mut more),
            )?;
            todo = std::mem::take(&mut more);
        }
        Ok(())
    }

    /// Whether the vertices are numbered in clusters of neighbours of about an edge block each
    /// (`LAYOUT locality`) and lists are read block by block: then a traversal that carries on
    /// through the blocks it has read ([`GraphStore::for_each_list_spreading`]) reads each
    /// block about once instead of once per level that crosses it.
    fn clustered(&self) -> bool {
        false
    }

    /// Calls `visit` for every vertex of `range` in vertex order, reading the edge section
    /// sequentially with large reads: the access path of dense (pull) iterations.
    fn scan_lists<F>(
        &self,
        dir: Direction,
        range: Range<u32>,
        want_weights: bool,
        visit: F,
    ) -> Result<(), StoreError>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>);

    /// As [`GraphStore::scan_lists`], but visits only the vertices of `range` that `want`
    /// accepts (asked once per vertex), so a store can skip reading what only the others need:
    /// a pull level reads just the lists of vertices that still want updates.
    fn scan_lists_where<W, F>(
        &self,
        dir: Direction,
        range: Range<u32>,
        want_weights: bool,
        want: W,
        mut visit: F,
    ) -> Result<(), StoreError>
    where
        W: Fn(u32) -> bool,
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        self.scan_lists(dir, range, want_weights, |v, ns, ws| {
            if want(v) {
                visit(v, ns, ws)
            }
        })
    }

    /// Visits every vertex's `dir` list once, on the workers `run_workers` starts (it calls the
    /// job it is given once on each, with the worker's index, and returns when all return), all
    /// of them sharing one stream of large sequential reads: a worker sums whichever read has
    /// landed, so none waits for its own reads while another's are in. Lists come in no
    /// particular order and `visit` runs on several threads at once. `stop` is asked between
    /// reads; once it says yes the pass ends early, with `Ok`. Returns `false`, having visited
    /// nothing, when the store has no such pass (the caller then scans ranges itself).
    fn scan_all_shared<F>(
        &self,
        _dir: Direction,
        _want_weights: bool,
        _run_workers: &RunWorkers<'_>,
        _stop: &(dyn Fn() -> bool + Sync),
        _visit: &F,
    ) -> Result<bool, StoreError>
    where
        F: Fn(u32, &[u32], Option<&[f64]>) + Sync,
    {
        Ok(false)
    }

    /// The whole adjacency as slices, when the store holds it in memory.
    fn csr(&self, _dir: Direction) -> Option<CsrView<'_>> {
        None
    }

    /// The edge block holding the start of `v`'s list, for grouping a frontier by block.
    fn edge_block(&self, dir: Direction, v: u32) -> u64;

    /// The edge block holding the start of `v`'s list and its degree, for pricing a level's
    /// reads (one index lookup where the store can do both at once).
    fn list_start_block(&self, dir: Direction, v: u32) -> (u64, u64) {
        (self.edge_block(dir, v), self.degree(dir, v))
    }

    /// [`GraphStore::list_start_block`] of every vertex of `range` that `want` accepts and
    /// that has a `dir` list, in vertex order: the walk that prices a dense level's reads,
    /// which a store with a compressed index answers a group of entries at a time.
    fn each_list_start<W, F>(&self, dir: Direction, range: Range<u32>, want: W, mut visit: F)
    where
        W: Fn(u32) -> bool,
        F: FnMut(u64, u64),
    {
        for v in range.filter(|&v| want(v)) {
            let (first, deg) = self.list_start_block(dir, v);
            if deg > 0 {
                visit(first, deg);
            }
        }
    }

    /// Where `v`'s list starts among the store's edges (a slot of its edge section), so vertex
    /// ranges can be cut into equal work: with hubs numbered first (`LAYOUT degree`) equal
    /// vertex counts are far from equal edge counts. `None`: the store cannot tell cheaply,
    /// and ranges hold equal numbers of vertices.
    fn list_offset(&self, _dir: Direction, _v: u32) -> Option<u64> {
        None
    }

    /// A snapshot of the store's counters.
    fn io_stats(&self) -> IoStats;

    /// Milliseconds the block device under the store's file has been busy (every process's
    /// requests), for stores that read it while running; `None` otherwise. Read around a run,
    /// not per iteration: it is a file read.
    fn device_busy_ms(&self) -> Option<u64> {
        None
    }

    /// A one-line description for EXPLAIN, e.g. `memory` or `out of core (io_uring, depth 32,
    /// cache 64.0 KiB)`.
    fn describe_reader(&self) -> String;

    /// Memory outside the compute node where per-vertex state can live, when the store offers
    /// it (the disaggregated store does); `None` keeps every kernel's state local. The traffic
    /// to it is reported by [`RemoteMemory::traffic`].
    fn remote_memory(&self) -> Option<&dyn RemoteMemory> {
        None
    }

    /// How the store's scans plan their reads from a disk, when it reads one (out of core):
    /// kernels price a level's reads with it to choose between block-by-block and coalesced
    /// reads. `None`: reads cost the same whatever their pattern (memory, remote memory).
    fn read_model(&self) -> Option<crate::io::ReadModel> {
        None
    }
}
