//! [`DmStore`]: the [`GraphStore`] over a graph loaded into memory nodes, with DMG's merged and
//! batched retrieval (§4.2.2).
//!
//! A call's vertices are cut into *windows* of consecutive (sorted) vertices. For a window:
//! one doorbell batch per memory node reads the index entries of all its vertices, contiguous
//! runs merged into one READ; once those arrive, one batch per memory node reads the
//! out-of-place lists the entries point to, again merged where lists are adjacent (the loader put
//! consecutive vertices' lists next to each other). Several windows are in flight per calling
//! thread, so a thread never waits one round trip per vertex. Windows complete in order, so
//! `scan_lists` visits in vertex order.
//!
//! Every entry and list is checked against its checksum ([`layout`](super::layout)) before it
//! is used: a memory node's damaged copy is an error naming the graph, node and region, never a
//! different answer.
//!
//! What the compute node keeps locally: in the session's process the vertex id map and degrees
//! (read from the durable block file; the trait's `degree` and `input_id` are synchronous); in
//! a compute-node worker pages of them from the graph's descriptor, through a cache charged to
//! `cn_cache` ([`DescriptorPages`]); and the buffers of the windows in flight, sized from
//! `cn_cache`. No edge data is cached between calls.
//!
//! Connections: one transport (TCP, RDMA or in-process: the store is generic over its
//! [`Connector`]) per memory node per concurrent caller (part 1's
//! measurements favour a connection per worker thread over one shared connection), checked out
//! from a pool; a set that saw an error is dropped, so a dead node is reconnected (and refused
//! with an error naming it) on the next call rather than reused.

use std::collections::VecDeque;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::addr::GlobalAddr;
use super::attrs::{NodeSet, RemoteArray};
use super::descriptor::GraphDescriptor;
use super::descriptor_pages::DescriptorPages;
use super::layout::{self, Entry, ENTRY_BYTES};
use super::load::{header, DmLayout, PoolConfig};
use super::protocol::VerbReply;
use super::stats::{CostModel, StatsSnapshot};
use super::tcp::TcpConnector;
use super::transport::{Batch, Connector, Ticket, Transport};
use crate::blockfile::open::GraphFile;
use crate::error::{Result, StoreError};
use crate::remote_memory::{ElementKind, RemoteMemory, RemoteTraffic, RemoteVector};
use crate::store::{Direction, FetchOrder, GraphShape, GraphStore, IoStats};

/// Most vertices in one window.
const MAX_WINDOW: usize = 512;
/// Windows in flight per calling thread.
const DEPTH: usize = 8;
/// Gap (bytes) up to which two reads on one node are merged into one.
const MERGE_GAP: u64 = 256;
/// Largest single READ.
const READ_PIECE: u64 = 4 << 20;
/// Largest total of READ bytes per batch (under the protocol's per-batch limit).
const BATCH_BYTES: u64 = 32 << 20;

/// How to open a DM graph.
#[derive(Debug, Clone)]
pub struct DmOptions {
    /// The graph's name, for errors (a damaged copy names the graph to re-create).
    pub graph: String,
    pub pool: PoolConfig,
    /// The compute node's budget for DM data in flight (`SET cn_cache`).
    pub cn_cache: u64,
    /// Worker threads that may call at once; the budget is split between them.
    pub threads: usize,
}

/// One connection to each memory node, in partition order.
type ConnSet<C> = Vec<<C as Connector>::Transport>;

struct Pool<C: Connector> {
    connector: C,
    nodes: Vec<String>,
    ids: Vec<u16>,
    free: Mutex<Vec<Arc<ConnSet<C>>>>,
    all: Mutex<Vec<Arc<ConnSet<C>>>>,
}

impl<C: Connector> Pool<C> {
    fn connect(&self) -> Result<Arc<ConnSet<C>>> {
        let mut set = Vec::with_capacity(self.nodes.len());
        for (addr, &id) in self.nodes.iter().zip(&self.ids) {
            let t = self.connector.connect(addr).map_err(|e| match e {
                StoreError::Other(m) => StoreError::Remote {
                    node: addr.clone(),
                    message: m,
                },
                e => e,
            })?;
            if t.node_id() != id {
                return Err(StoreError::Remote {
                    node: t.node_name().to_string(),
                    message: format!(
                        "answers as node id {}, but the graph was loaded onto id {id} there (restarted with another --node-id?)",
                        t.node_id()
                    ),
                });
            }
            set.push(t);
        }
        let set = Arc::new(set);
        self.all
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(set.clone());
        Ok(set)
    }

    fn checkout(&self) -> Result<Arc<ConnSet<C>>> {
        let got = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match got {
            Some(s) => Ok(s),
            None => self.connect(),
        }
    }

    fn checkin(&self, s: Arc<ConnSet<C>>) {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).push(s);
    }

    fn discard(&self, s: &Arc<ConnSet<C>>) {
        let mut all = self.all.lock().unwrap_or_else(|e| e.into_inner());
        // Keep the counters of a dropped set: fold them into a placeholder-free total below.
        all.retain(|x| !Arc::ptr_eq(x, s));
    }

    fn stats(&self) -> StatsSnapshot {
        let all = self.all.lock().unwrap_or_else(|e| e.into_inner());
        let mut t = StatsSnapshot::default();
        for set in all.iter() {
            for c in set.iter() {
                t = t.plus(&c.stats());
            }
        }
        t
    }
}

/// What a compute node keeps of a DM graph besides the layout. One per store: the variants'
/// sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Local {
    /// The session's process: the durable block file (ids, degrees) and the string keys.
    File {
        file: GraphFile,
        keys: Option<crate::blockfile::keys::VertexKeys>,
    },
    /// A compute-node worker: the shape, and degrees and input ids paged from the graph's
    /// descriptor in the memory nodes through a cache charged to `cn_cache`; no string keys.
    Descriptor {
        shape: GraphShape,
        pages: DescriptorPages,
    },
}

impl Local {
    fn shape(&self) -> GraphShape {
        match self {
            Local::File { file, .. } => file.shape(),
            Local::Descriptor { shape, .. } => *shape,
        }
    }

    /// The degree of `v` along `dir`; 0 out of range.
    fn degree(&self, dir: Direction, v: u32) -> u32 {
        match self {
            Local::File { file, .. } => file
                .index(dir)
                .degrees
                .get(v as usize)
                .copied()
                .unwrap_or(0),
            Local::Descriptor { pages, .. } => pages.degree(dir, v),
        }
    }

    /// The traffic of a worker's degree and id pages.
    fn page_stats(&self) -> StatsSnapshot {
        match self {
            Local::File { .. } => StatsSnapshot::default(),
            Local::Descriptor { pages, .. } => pages.stats(),
        }
    }

    /// A descriptor page that could not be read since the last call (a worker's degrees).
    fn take_failure(&self) -> Option<StoreError> {
        match self {
            Local::File { .. } => None,
            Local::Descriptor { pages, .. } => pages.take_failure(),
        }
    }
}

/// Fewest bytes of list data per read window, whatever `cn_cache`.
const MIN_WINDOW_BYTES: u64 = 64 << 10;

/// A graph stored in memory nodes, read with merged and batched remote reads.
pub struct DmStore<C: Connector = TcpConnector> {
    graph: String,
    /// Where shape, degrees and ids come from.
    local: Local,
    layout: DmLayout,
    pool: Pool<C>,
    /// Counters of connection sets dropped after errors, so totals never go backwards.
    retired: Mutex<StatsSnapshot>,
    /// The last totals reported: reports never go backwards, even when a dropped set's late
    /// replies race with its retirement (per-iteration differences subtract them).
    reported: Mutex<StatsSnapshot>,
    /// Bytes of list data one window may carry.
    window_bytes: u64,
    cn_cache: u64,
    /// The connections remote attribute arrays share (multiplexed across threads), opened on
    /// first use; registered with the pool so their traffic counts in `remote_stats`.
    attr_conns: Mutex<Option<Arc<ConnSet<C>>>>,
}

impl<C: Connector> std::fmt::Debug for DmStore<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DmStore")
            .field("nodes", &self.layout.nodes)
            .field("vertices", &self.layout.vertices)
            .finish()
    }
}

/// One merged READ target: where, how long, and which vertices' data it carries.
struct Span {
    node: usize,
    addr: GlobalAddr,
    len: u64,
    /// (position in window, offset in span, degree)
    members: Vec<(usize, u64, u32)>,
}

struct Window {
    dir: Direction,
    verts: Vec<u32>,
    /// Decoded entries, parallel to `verts` (filled after stage 1).
    entries: Vec<Option<Entry>>,
    /// Tickets of the current stage, with what each piece is: (node, pieces in batch order).
    tickets: Vec<(usize, Ticket, Vec<Piece>)>,
    spans: Vec<Span>,
    bufs: Vec<Vec<u8>>,
    /// Stage 1: (index span, byte offset) of each vertex's entry, parallel to `verts`.
    idx_loc: Vec<(usize, usize)>,
}

/// One READ verb inside a batch: which span (or index run) it fills, at which offset.
#[derive(Clone, Copy)]
struct Piece {
    target: usize,
    offset: u64,
    len: u64,
}

impl DmStore<TcpConnector> {
    /// Opens a loaded graph over TCP with the pool's token and timeouts (see [`open_with`]).
    ///
    /// [`open_with`]: DmStore::open_with
    pub fn open(file: &Path, layout: DmLayout, opts: &DmOptions) -> Result<DmStore> {
        let connector = TcpConnector {
            token: opts.pool.token.clone(),
            opts: opts.pool.tcp,
        };
        DmStore::open_with(file, layout, opts, connector)
    }
}

impl<C: Connector> DmStore<C> {
    /// Opens a loaded graph: the block file for ids and degrees, the layout from the catalog;
    /// connects through `connector` once to check every memory node still holds this graph
    /// (index headers). `opts.pool`'s node list is replaced by the layout's.
    pub fn open_with(
        file: &Path,
        layout: DmLayout,
        opts: &DmOptions,
        connector: C,
    ) -> Result<DmStore<C>> {
        let file = GraphFile::open(file)?;
        let sh = file.shape();
        if sh.vertices != layout.vertices
            || sh.directed != layout.directed
            || sh.weighted != layout.weighted
        {
            return Err(StoreError::Other(
                "the DM layout does not match the graph file; CREATE OR REPLACE the graph".into(),
            ));
        }
        // String keys stay on the compute node: read from the block file by block, through
        // a cache of a sixteenth of `cn_cache` (at most 8 MiB).
        let keys = crate::blockfile::keys::VertexKeys::by_block(
            &file,
            (opts.cn_cache / 16).min(crate::blockfile::ooc::KEY_CACHE_MAX),
        )?;
        DmStore::assemble(Local::File { file, keys }, layout, opts, connector)
    }

    /// Opens a loaded graph from its descriptor in the memory nodes alone (a compute-node
    /// worker, which has no block file). `opts.pool.nodes` are the memory nodes' addresses;
    /// the descriptor's node is found among them by id.
    pub fn open_remote(
        descriptor: GlobalAddr,
        opts: &DmOptions,
        connector: C,
    ) -> Result<DmStore<C>> {
        let mut found = None;
        for addr in &opts.pool.nodes {
            let t = connector.connect(addr)?;
            if t.node_id() == descriptor.node() {
                found = Some(t);
                break;
            }
        }
        let t = found.ok_or_else(|| {
            StoreError::Other(format!(
                "no memory node given has id {} (where the graph descriptor is)",
                descriptor.node()
            ))
        })?;
        let d = GraphDescriptor::locate(&t, descriptor)?;
        let local = Local::Descriptor {
            shape: d.shape,
            pages: DescriptorPages::new(Box::new(t), &d, opts.cn_cache),
        };
        DmStore::assemble(local, d.layout, opts, connector)
    }

    /// Connects to the layout's memory nodes, checks each still holds this graph (index
    /// headers), and sizes the read windows from `cn_cache`.
    fn assemble(
        local: Local,
        layout: DmLayout,
        opts: &DmOptions,
        connector: C,
    ) -> Result<DmStore<C>> {
        let pool = Pool {
            ids: layout.nodes.iter().map(|n| n.id).collect(),
            nodes: layout.nodes.iter().map(|n| n.addr.clone()).collect(),
            connector,
            free: Mutex::new(Vec::new()),
            all: Mutex::new(Vec::new()),
        };
        let set = pool.connect()?;
        let dirs: &[Direction] = if layout.directed {
            &[Direction::Out, Direction::In]
        } else {
            &[Direction::Out]
        };
        for &dir in dirs {
            for (p, c) in set.iter().enumerate() {
                let base = GlobalAddr::from_raw(layout.dir(dir).index[p]);
                let count = layout.bounds[p + 1] - layout.bounds[p];
                let want = header(layout.nonce, layout.bounds[p], count, dir);
                let got = c.read(base, ENTRY_BYTES as u32).map_err(|e| match e {
                    StoreError::Remote { node, message } => StoreError::Remote {
                        node,
                        message: format!(
                            "no longer holds this graph ({message}); was it restarted? CREATE OR REPLACE the graph"
                        ),
                    },
                    e => e,
                })?;
                if got != want {
                    return Err(StoreError::Remote {
                        node: c.node_name().to_string(),
                        message: "holds other data where this graph's index was; was it restarted? CREATE OR REPLACE the graph".into(),
                    });
                }
            }
        }
        pool.checkin(set);
        let threads = opts.threads.max(1) as u64;
        // A floor of 64 KiB per window whatever the budget (1 MiB in flight for two threads):
        // a tiny `cn_cache` keeps the vertex state remote, not the lists one at a time.
        let window_bytes = (opts.cn_cache / threads / DEPTH as u64).max(MIN_WINDOW_BYTES);
        Ok(DmStore {
            graph: opts.graph.clone(),
            local,
            layout,
            pool,
            retired: Mutex::new(StatsSnapshot::default()),
            reported: Mutex::new(StatsSnapshot::default()),
            window_bytes,
            cn_cache: opts.cn_cache,
            attr_conns: Mutex::new(None),
        })
    }

    /// A remote attribute array of `len` elements (see [`RemoteArray`]), partitioned with the
    /// vertex index's boundaries scaled to `len` (the same boundaries when `len` is |V|).
    /// Connections of a failed allocation are dropped, so a restarted node is reconnected.
    pub fn alloc_attr(&self, len: u64, kind: ElementKind, fill: u64) -> Result<RemoteArray> {
        let bounds = self.attr_bounds(len);
        let set = self.attr_nodes()?;
        let nodes: Arc<dyn NodeSet> = set.clone();
        let r = RemoteArray::alloc(nodes, bounds, kind, fill);
        if r.is_err() {
            self.drop_attr_nodes(&set);
        }
        r
    }

    /// A handle on an attribute array another compute node of the same graph allocated
    /// ([`RemoteArray::attach`]: the descriptor is checked against this store's layout).
    pub fn attach_attr(&self, descriptor: &[u64]) -> Result<RemoteArray> {
        let len = RemoteArray::described_len(descriptor, self.layout.nodes.len());
        let bounds = self.attr_bounds(len);
        let set = self.attr_nodes()?;
        let nodes: Arc<dyn NodeSet> = set.clone();
        RemoteArray::attach(nodes, &bounds, descriptor)
    }

    /// Partition bounds of an attribute array of `len` elements: the vertex index's boundaries
    /// scaled to `len`.
    fn attr_bounds(&self, len: u64) -> Vec<u64> {
        let v = self.layout.vertices as u64;
        let parts = self.layout.nodes.len() as u64;
        self.layout
            .bounds
            .iter()
            .enumerate()
            .map(|(p, &b)| {
                if v == 0 {
                    len * p as u64 / parts.max(1)
                } else {
                    ((b as u128 * len as u128) / v as u128) as u64
                }
            })
            .collect()
    }

    /// The connections attribute arrays use (opened on first use).
    fn attr_nodes(&self) -> Result<Arc<ConnSet<C>>> {
        let mut g = self.attr_conns.lock().unwrap_or_else(|e| e.into_inner());
        match &*g {
            Some(s) => Ok(s.clone()),
            None => {
                let s = self.pool.connect()?;
                *g = Some(s.clone());
                Ok(s)
            }
        }
    }

    /// Forgets `set` after a failed allocation, so a restarted node is reconnected.
    fn drop_attr_nodes(&self, set: &Arc<ConnSet<C>>) {
        let mut g = self.attr_conns.lock().unwrap_or_else(|e| e.into_inner());
        if g.as_ref().is_some_and(|s| Arc::ptr_eq(s, set)) {
            *g = None;
        }
    }

    /// The transport the store's connections use (`tcp`, `rdma`, `in-process`), for status
    /// lines and PROFILE.
    pub fn transport_name(&self) -> &'static str {
        self.pool.connector.transport_name()
    }

    /// The layout (for EXPLAIN and tests).
    pub fn layout(&self) -> &DmLayout {
        &self.layout
    }

    /// Every remote operation of this store's readers so far (loading excluded).
    pub fn remote_stats(&self) -> StatsSnapshot {
        let r = *self.retired.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.pool.stats().plus(&r).plus(&self.local.page_stats());
        let mut last = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        // Field-wise maximum: last + max(now − last, 0).
        *last = last.plus(&now.since(&last));
        *last
    }

    /// The cost model's estimate of `s` on a 100 Gb/s RDMA network with this store's depth and
    /// memory nodes.
    pub fn rdma_estimate(&self, s: &StatsSnapshot) -> std::time::Duration {
        CostModel {
            memory_nodes: self.layout.nodes.len() as u32,
            ..CostModel::default()
        }
        .estimate(s, DEPTH as u32)
    }

    fn bytes_of(&self, dir: Direction, v: u32, want_weights: bool) -> u64 {
        let d = self.local.degree(dir, v);
        if d <= layout::in_place_capacity(self.layout.weighted) {
            0
        } else {
            layout::list_read_bytes(d, want_weights && self.layout.weighted)
        }
    }

    /// The error for data a memory node holds that fails its checks: names the graph, the
    /// node and the region, and says how to repair (the block file is the durable copy).
    fn damaged(&self, node: String, region: GlobalAddr, what: String) -> StoreError {
        let g = &self.graph;
        StoreError::Remote {
            node,
            message: format!(
                "graph `{g}`, region {region}: {what}; the memory node's copy of the graph is damaged: re-create it with CREATE OR REPLACE GRAPH {g} FROM ... STORAGE dm"
            ),
        }
    }

    /// The region of this graph that holds `addr` (the nearest region start at or below it).
    fn region_of(&self, addr: GlobalAddr) -> GlobalAddr {
        self.layout
            .regions
            .iter()
            .map(|&r| GlobalAddr::from_raw(r))
            .filter(|r| r.node() == addr.node() && r.offset() <= addr.offset())
            .max_by_key(|r| r.offset())
            .unwrap_or(addr)
    }

    /// Runs the pipeline over `verts` (sorted), visiting each window's vertices in order.
    fn fetch<F>(
        &self,
        dir: Direction,
        verts: &[u32],
        want_weights: bool,
        visit: &mut F,
    ) -> Result<()>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        // A degree page that failed since the last read fails this one, naming the node.
        if let Some(e) = self.local.take_failure() {
            return Err(e);
        }
        if verts.is_empty() {
            return Ok(());
        }
        let n = self.layout.vertices;
        if let Some(&bad) = verts.iter().find(|&&v| v >= n) {
            return Err(StoreError::Other(format!(
                "vertex {bad} is out of range (|V| = {n})"
            )));
        }
        // An undirected graph has one list per vertex, loaded (and checksummed) as `Out`.
        let dir = if self.layout.directed {
            dir
        } else {
            Direction::Out
        };
        let set = self.pool.checkout()?;
        let r = self.pipeline(&set, dir, verts, want_weights, visit);
        // A degree page that failed meanwhile explains the read better than what followed.
        let r = match self.local.take_failure() {
            Some(e) => Err(e),
            None => r,
        };
        match r {
            Ok(()) => self.pool.checkin(set),
            Err(_) => {
                let s: StatsSnapshot = set
                    .iter()
                    .fold(StatsSnapshot::default(), |a, c| a.plus(&c.stats()));
                let mut ret = self.retired.lock().unwrap_or_else(|e| e.into_inner());
                *ret = ret.plus(&s);
                self.pool.discard(&set);
            }
        }
        r
    }

    fn pipeline<F>(
        &self,
        set: &ConnSet<C>,
        dir: Direction,
        verts: &[u32],
        want_weights: bool,
        visit: &mut F,
    ) -> Result<()>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        let mut next = 0usize;
        let mut stage1: VecDeque<Window> = VecDeque::new();
        let mut stage2: VecDeque<Window> = VecDeque::new();
        let mut targets = Vec::new();
        let mut weights = Vec::new();
        loop {
            while stage1.len() + stage2.len() < DEPTH && next < verts.len() {
                let mut end = next;
                let mut bytes = 0u64;
                while end < verts.len() && end - next < MAX_WINDOW {
                    let b = ENTRY_BYTES as u64 + self.bytes_of(dir, verts[end], want_weights);
                    if end > next && bytes + b > self.window_bytes {
                        break;
                    }
                    bytes += b;
                    end += 1;
                }
                stage1.push_back(self.submit_index(set, dir, &verts[next..end])?);
                next = end;
            }
            // Finish the oldest window first once enough are waiting for their lists.
            if stage2.len() >= DEPTH / 2 || (stage1.is_empty() && !stage2.is_empty()) {
                if let Some(w) = stage2.pop_front() {
                    self.finish(set, w, want_weights, visit, &mut targets, &mut weights)?;
                    continue;
                }
            }
            match stage1.pop_front() {
                Some(w) => stage2.push_back(self.submit_lists(set, w, dir, want_weights)?),
                None => break,
            }
        }
        Ok(())
    }

    /// Stage 1: one batch per memory node reading the window's index entries, runs merged.
    fn submit_index(&self, set: &ConnSet<C>, dir: Direction, verts: &[u32]) -> Result<Window> {
        // Runs of entries: (node, first vertex, last vertex), merged across small gaps.
        let gap = MERGE_GAP / ENTRY_BYTES as u64;
        let mut runs: Vec<(usize, u32, u32)> = Vec::new();
        let mut idx_loc = Vec::with_capacity(verts.len());
        for &v in verts {
            let p = self.layout.partition_of(v);
            match runs.last_mut() {
                Some((rp, first, last))
                    if *rp == p && v >= *first && (v as u64) <= *last as u64 + 1 + gap =>
                {
                    *last = (*last).max(v)
                }
                _ => runs.push((p, v, v)),
            }
            let (_, first, _) = runs[runs.len() - 1];
            idx_loc.push((runs.len() - 1, ENTRY_BYTES * (v - first) as usize));
        }
        let mut spans = Vec::with_capacity(runs.len());
        for &(p, a, b) in &runs {
            let addr = self.layout.entry_addr(dir, a).ok_or_else(|| {
                StoreError::Other(format!("vertex {a}: index address out of range"))
            })?;
            spans.push(Span {
                node: p,
                addr,
                len: ENTRY_BYTES as u64 * (b - a + 1) as u64,
                members: Vec::new(),
            });
        }
        let tickets = self.submit_spans(set, &spans)?;
        Ok(Window {
            dir,
            verts: verts.to_vec(),
            entries: Vec::new(),
            tickets,
            bufs: spans.iter().map(|s| vec![0u8; s.len as usize]).collect(),
            spans,
            idx_loc,
        })
    }

    /// Packs the spans' READs into doorbell batches per node and submits them.
    fn submit_spans(
        &self,
        set: &ConnSet<C>,
        spans: &[Span],
    ) -> Result<Vec<(usize, Ticket, Vec<Piece>)>> {
        let mut per_node: Vec<Vec<(Batch, Vec<Piece>, u64)>> =
            (0..set.len()).map(|_| Vec::new()).collect();
        for (i, s) in spans.iter().enumerate() {
            let mut off = 0u64;
            while off < s.len {
                let len = READ_PIECE.min(s.len - off);
                let addr = s
                    .addr
                    .checked_add(off)
                    .ok_or_else(|| StoreError::Other("remote address overflow".into()))?;
                let list = &mut per_node[s.node];
                if list.last().is_none_or(|(_, _, b)| b + len > BATCH_BYTES) {
                    list.push((Batch::new(), Vec::new(), 0));
                }
                if let Some((b, pieces, bytes)) = list.last_mut() {
                    b.read(addr, len as u32);
                    pieces.push(Piece {
                        target: i,
                        offset: off,
                        len,
                    });
                    *bytes += len;
                }
                off += len;
            }
        }
        let mut out = Vec::new();
        for (node, list) in per_node.into_iter().enumerate() {
            let c = set.get(node).ok_or_else(|| {
                StoreError::Other(format!("no connection for memory node {node}"))
            })?;
            for (b, pieces, _) in list {
                out.push((node, c.submit_batch(b)?, pieces));
            }
        }
        Ok(out)
    }

    /// Waits for a stage's tickets and copies the data into the window's buffers.
    fn collect(&self, set: &ConnSet<C>, w: &mut Window) -> Result<()> {
        for (node, t, pieces) in std::mem::take(&mut w.tickets) {
            let name = set.get(node).map(|c| c.node_name()).unwrap_or("?");
            let replies = t.wait_batch()?;
            if replies.len() != pieces.len() {
                return Err(StoreError::Remote {
                    node: name.to_string(),
                    message: "wrong number of replies to a read batch".into(),
                });
            }
            for (r, p) in replies.into_iter().zip(pieces) {
                match r {
                    VerbReply::Read(d) if d.len() as u64 == p.len => {
                        let o = p.offset as usize;
                        if let Some(dst) = w
                            .bufs
                            .get_mut(p.target)
                            .and_then(|b| b.get_mut(o..o + d.len()))
                        {
                            dst.copy_from_slice(&d);
                        }
                    }
                    VerbReply::Failed { code, message } => {
                        return Err(StoreError::Remote {
                            node: name.to_string(),
                            message: format!("read failed: {message} ({code:?})"),
                        })
                    }
                    _ => {
                        return Err(StoreError::Remote {
                            node: name.to_string(),
                            message: "malformed reply to a read".into(),
                        })
                    }
                }
            }
        }
        Ok(())
    }

    /// Stage 2: decode the entries, then read the out-of-place lists, merged per node.
    fn submit_lists(
        &self,
        set: &ConnSet<C>,
        mut w: Window,
        dir: Direction,
        want_weights: bool,
    ) -> Result<Window> {
        self.collect(set, &mut w)?;
        let weighted = self.layout.weighted;
        let mut entries = Vec::with_capacity(w.verts.len());
        for (i, &v) in w.verts.iter().enumerate() {
            let (si, off) = w.idx_loc[i];
            let raw = w
                .bufs
                .get(si)
                .and_then(|b| b.get(off..off + ENTRY_BYTES))
                .ok_or_else(|| StoreError::Other("index read too short".into()))?;
            let node = w.spans[si].node;
            if let Err(e) = layout::verify(raw, v, dir) {
                let region = GlobalAddr::from_raw(self.layout.dir(dir).index[node]);
                return Err(self.damaged(
                    self.node_label(node, set),
                    region,
                    format!("the {dir:?} index entry of vertex {v} {}", bare(&e)),
                ));
            }
            let e = layout::decode(raw, weighted).map_err(|e| StoreError::Remote {
                node: self.node_label(node, set),
                message: format!("{dir:?} index entry of vertex {v}: {e}"),
            })?;
            let expect = self.local.degree(dir, v);
            let got = match &e {
                Entry::InPlace { targets, .. } => targets.len() as u32,
                Entry::OutOfPlace { degree, .. } => *degree,
            };
            if got != expect {
                return Err(StoreError::Remote {
                    node: self.node_label(w.spans[si].node, set),
                    message: format!(
                        "{dir:?} index entry of vertex {v} says degree {got}, the graph file {expect}"
                    ),
                });
            }
            entries.push(Some(e));
        }
        // Out-of-place reads, in vertex order; adjacent lists on one node merge.
        let mut spans: Vec<Span> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if let Some(Entry::OutOfPlace { degree, addr, .. }) = e {
                let len = layout::list_read_bytes(*degree, want_weights && weighted);
                let node = self
                    .pool
                    .ids
                    .iter()
                    .position(|&id| id == addr.node())
                    .ok_or_else(|| {
                        StoreError::Other(format!(
                            "vertex {}: list address {addr} names no memory node of this graph",
                            w.verts[i]
                        ))
                    })?;
                match spans.last_mut() {
                    Some(s)
                        if s.node == node
                            && addr.offset() >= s.addr.offset() + s.len
                            && addr.offset() - (s.addr.offset() + s.len) <= MERGE_GAP
                            && s.len + len <= READ_PIECE =>
                    {
                        let off = addr.offset() - s.addr.offset();
                        s.members.push((i, off, *degree));
                        s.len = off + len;
                    }
                    _ => spans.push(Span {
                        node,
                        addr: *addr,
                        len,
                        members: vec![(i, 0, *degree)],
                    }),
                }
            }
        }
        w.tickets = self.submit_spans(set, &spans)?;
        w.bufs = spans.iter().map(|s| vec![0u8; s.len as usize]).collect();
        w.spans = spans;
        w.entries = entries;
        Ok(w)
    }

    fn node_label(&self, p: usize, set: &ConnSet<C>) -> String {
        set.get(p)
            .map(|c| c.node_name().to_string())
            .unwrap_or_else(|| format!("#{p}"))
    }

    /// Waits for a window's lists and visits its vertices in order.
    fn finish<F>(
        &self,
        set: &ConnSet<C>,
        mut w: Window,
        want_weights: bool,
        visit: &mut F,
        targets: &mut Vec<u32>,
        weights: &mut Vec<f64>,
    ) -> Result<()>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        self.collect(set, &mut w)?;
        let n = self.layout.vertices;
        let weighted = self.layout.weighted;
        // Where each out-of-place vertex's bytes are: (span, offset, degree) by window position.
        let mut loc: Vec<Option<(usize, u64, u32)>> = vec![None; w.verts.len()];
        for (si, s) in w.spans.iter().enumerate() {
            for &(i, off, d) in &s.members {
                if let Some(l) = loc.get_mut(i) {
                    *l = Some((si, off, d));
                }
            }
        }
        for (i, &v) in w.verts.iter().enumerate() {
            let bad = |t: u32| {
                StoreError::Other(format!(
                "list of vertex {v} names vertex {t}, past |V| = {n} (memory node data damaged?)"
            ))
            };
            match w.entries.get(i).and_then(|e| e.as_ref()) {
                Some(Entry::InPlace {
                    targets: t,
                    weights: ws,
                }) => {
                    if let Some(&x) = t.iter().find(|&&x| x >= n) {
                        return Err(bad(x));
                    }
                    let ws = if want_weights { ws.as_deref() } else { None };
                    visit(v, t, ws);
                }
                Some(Entry::OutOfPlace { addr, .. }) => {
                    let (si, off, d) = loc[i].ok_or_else(|| {
                        StoreError::Other(format!("vertex {v}: list was not read"))
                    })?;
                    let buf = &w.bufs[si];
                    let o = off as usize;
                    let with_weights = want_weights && weighted;
                    let len = layout::list_read_bytes(d, with_weights) as usize;
                    let checked = buf
                        .get(o..o + len)
                        .ok_or(layout::LayoutError::Malformed("list read too short"))
                        .and_then(|b| layout::verify_list(b, d, with_weights, v, w.dir));
                    let (tb, wb) = match checked {
                        Ok(x) => x,
                        Err(e) => {
                            let dir = w.dir;
                            return Err(self.damaged(
                                self.node_label(w.spans[si].node, set),
                                self.region_of(*addr),
                                format!("the {dir:?} list of vertex {v} {}", bare(&e)),
                            ));
                        }
                    };
                    targets.clear();
                    targets.extend(
                        tb.chunks_exact(4)
                            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                    );
                    if let Some(&x) = targets.iter().find(|&&x| x >= n) {
                        return Err(bad(x));
                    }
                    let ws = match wb {
                        Some(wb) => {
                            weights.clear();
                            weights.extend(
                                wb.chunks_exact(8)
                                    .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))),
                            );
                            Some(weights.as_slice())
                        }
                        None => None,
                    };
                    visit(v, targets, ws);
                }
                None => {
                    return Err(StoreError::Other(format!("vertex {v}: entry missing")));
                }
            }
        }
        Ok(())
    }
}

/// How a layout error reads after "the list of vertex v": "fails its checksum", or the fault.
fn bare(e: &layout::LayoutError) -> String {
    match e {
        layout::LayoutError::Checksum(_) => "fails its checksum".into(),
        other => format!("is unreadable ({other})"),
    }
}

impl<C: Connector> GraphStore for DmStore<C> {
    fn shape(&self) -> GraphShape {
        self.local.shape()
    }

    fn degree(&self, dir: Direction, v: u32) -> u64 {
        self.local.degree(dir, v) as u64
    }

    fn input_id(&self, v: u32) -> u64 {
        match &self.local {
            Local::File { file, .. } => file.ids.get(v as usize).copied().unwrap_or(u64::MAX),
            Local::Descriptor { pages, .. } => pages.input_id(v),
        }
    }

    fn internal_id(&self, id: u64) -> Option<u32> {
        match &self.local {
            Local::File { file, .. } => file.internal_id(id),
            Local::Descriptor { shape, pages } if !pages.has_ids() => {
                u32::try_from(id).ok().filter(|&v| v < shape.vertices)
            }
            // Workers get sources as internal ids and never look one up: a scan is enough.
            Local::Descriptor { shape, pages } => {
                (0..shape.vertices).find(|&v| pages.input_id(v) == id)
            }
        }
    }

    /// A worker (`Descriptor`) sends state, not rows, so one run serves it.
    fn key_runs(&self) -> Vec<std::ops::Range<u32>> {
        match &self.local {
            Local::File { file, .. } => file.runs.ranges().collect(),
            Local::Descriptor { shape, .. } => {
                crate::blockfile::id_runs::IdRuns::single(shape.vertices)
                    .ranges()
                    .collect()
            }
        }
    }

    fn vertex_keys(&self) -> Option<&crate::blockfile::keys::VertexKeys> {
        match &self.local {
            Local::File { keys, .. } => keys.as_ref(),
            Local::Descriptor { .. } => None,
        }
    }

    fn for_each_list<F>(
        &self,
        dir: Direction,
        vertices: &[u32],
        _order: FetchOrder,
        want_weights: bool,
        mut visit: F,
    ) -> Result<(), StoreError>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        // Activation is checked per window of consecutive vertices: sorting puts neighbours
        // in the index next to each other so their entries merge into one read.
        let mut sorted = vertices.to_vec();
        sorted.sort_unstable();
        self.fetch(dir, &sorted, want_weights, &mut visit)
    }

    fn scan_lists<F>(
        &self,
        dir: Direction,
        range: Range<u32>,
        want_weights: bool,
        mut visit: F,
    ) -> Result<(), StoreError>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        let end = range.end.min(self.layout.vertices);
        let verts: Vec<u32> = (range.start.min(end)..end).collect();
        self.fetch(dir, &verts, want_weights, &mut visit)
    }

    fn edge_block(&self, dir: Direction, v: u32) -> u64 {
        // Index entries of one 4 KiB stretch share a block: grouping by it merges their reads.
        let _ = dir;
        v as u64 / (4096 / ENTRY_BYTES as u64)
    }

    fn io_stats(&self) -> IoStats {
        let s = self.remote_stats();
        IoStats {
            // A remote batch plays the role of a block read: PROFILE's per-iteration column.
            blocks_read: s.round_trips,
            cache_hits: 0,
            cache_misses: s.round_trips,
            bytes_read: s.bytes_received,
            inflight_high_water: DEPTH as u64,
            wait_nanos: 0,
        }
    }

    fn remote_memory(&self) -> Option<&dyn RemoteMemory> {
        Some(self)
    }

    fn describe_reader(&self) -> String {
        format!(
            "disaggregated memory over {} ({} memory nodes, {:.1} % of lists in place, {} windows in flight per thread, cn_cache {} bytes)",
            self.pool.connector.describe(),
            self.layout.nodes.len(),
            100.0 * self.layout.in_place_fraction(Direction::Out),
            DEPTH,
            self.cn_cache
        )
    }
}

/// Per-vertex state in the graph's memory nodes, partitioned like its vertex index. The traffic
/// is the whole store's: list reads and state updates share the connection pool.
impl<C: Connector> RemoteMemory for DmStore<C> {
    fn local_budget(&self) -> u64 {
        self.cn_cache
    }

    fn alloc(&self, len: u64, kind: ElementKind, fill: u64) -> Result<Box<dyn RemoteVector>> {
        Ok(Box::new(self.alloc_attr(len, kind, fill)?))
    }

    fn attach(&self, descriptor: &[u64]) -> Result<Box<dyn RemoteVector>> {
        Ok(Box::new(self.attach_attr(descriptor)?))
    }

    fn traffic(&self) -> RemoteTraffic {
        let s = self.remote_stats();
        RemoteTraffic {
            round_trips: s.round_trips,
            remote_ops: s.nic_ops(),
            bytes_sent: s.bytes_sent,
        }
    }
}
