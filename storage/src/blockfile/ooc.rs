//! The out-of-core reader: a [`GraphStore`] over a block file, with the vertex indexes in memory
//! and edge/weight blocks fetched through the [`BlockCache`] and the [`IoEngine`].
//!
//! One call of [`GraphStore::for_each_list`] is one engine [`Session`](crate::io::Session): the
//! calling thread keeps up to `io_depth` reads in flight (the budget is shared by every thread
//! using the store) and visits each vertex as soon as all its blocks are in.
//!
//! - A list inside one edge block (every list shorter than 1024) is visited straight from the
//!   pinned cached block; its weights come from the one or two weight blocks parallel to it.
//! - A longer list spans consecutive blocks; missing runs are read with reads of up to 1 MiB and
//!   assembled into a private buffer. Runs too large for half the cache bypass it (hubs must not
//!   flush the cache). The assembly buffers come out of the cache budget ([`ListBudget`]): a
//!   call admits another long list only when the budget has room, so a frontier of hubs is
//!   fetched a few at a time, and read buffers are allocated when a read is submitted, not when
//!   it is decided, so at most the engine's depth of them exists at once.
//! - Sequential scans copy a list spanning several scan chunks piece by piece as each chunk
//!   arrives, and drop each chunk once copied, rather than holding all of a hub's chunks at once.
//! - A pass over every list can be shared by the workers (`ooc/shared_pass.rs`): one reader thread
//!   keeps the scan reserve in flight and any worker visits any landed read.
//! - `ByBlock` sorts the vertices by first edge block and admits each block's vertices together,
//!   so each needed block is read at most once per call, even with a cache of one block.
//! - Every block read is checked against the file's block checksums before anyone sees it, and
//!   its neighbour ids against the vertex count ([`crate::blockfile::ids_check`]): a scan checks
//!   each read once, when its first list is visited, a fetch each list it visits.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::blockfile::compact::{CompactFile, CompactIndex};
use crate::blockfile::format::{IdOrder, BLOCK_SIZE, EMPTY_SLOT, SLOTS_PER_BLOCK};
use crate::blockfile::ids_check::{first_outside, first_stray_slot};
use crate::blockfile::keys::VertexKeys;
use crate::blockfile::list_budget::{try_filled, ListBudget};
use crate::blockfile::scan_plan::{ReadOf, ScanPlan, ScanPlans};
use crate::cache::{BlockCache, BlockRef, Lookup, Pending};
use crate::error::{Result, StoreError};
use crate::io::plan::{self, DeviceCosts, ReadModel};
use crate::io::{
    AlignedBuf, BufPool, Completion, DeviceBusy, EngineOptions, IoCounters, IoEngine, ReadRequest,
    Session,
};
use crate::store::{Direction, FetchOrder, GraphShape, GraphStore, IoStats, RunWorkers};

mod shared_pass;
use shared_pass::PassPlans;

/// Largest single read (blocks): 1 MiB.
const MAX_READ_BLOCKS: u64 = 256;
/// Largest sequential-scan read (blocks): 1 MiB of edges (2 MiB of weights alongside).
const SCAN_CHUNK_MAX_BLOCKS: u64 = 256;
/// Smallest sequential-scan read (blocks): 64 KiB.
const SCAN_CHUNK_MIN_BLOCKS: u64 = 16;
/// Scan reads kept in flight per scan, within its share of the scan buffers: a few large reads
/// saturate the device, and a sparse level's short reads need many in flight to.
const SCAN_DEPTH: usize = 32;
/// Scan reads that fit the scan buffers at once (their size permitting): with two workers
/// scanning, each keeps the read it visits and about three ahead. With fewer, larger reads (at
/// a 3 % cache of R-MAT scale 22: 1 MiB reads in 4.4 MiB of buffers) each scan would be one
/// read ahead, and the worker summing the hubs' lists would wait for nearly every read.
const SCAN_CHUNKS: u64 = 8;
/// Caches below this are all block cache; scans then use the smallest reads.
const SCAN_RESERVE_FROM: u64 = 1 << 20;
/// The most of the cache budget set aside for scan buffers.
const SCAN_RESERVE_MAX: u64 = 8 << 20;
/// The least the scans' buffers get once the cache is past `SCAN_RESERVE_FROM`, even when the
/// cache's share for them is smaller: reads much under 256 KiB stream well below the device's
/// sequential speed (docs/PERFORMANCE.md, "Why the code is as it is"). What this adds beyond
/// the cache is part of the out-of-core bound's constant (docs/ARCHITECTURE.md, "Out-of-core
/// memory").
const SCAN_RESERVE_FLOOR: u64 = 2 << 20;
/// The share of the block cache's budget set aside for assembling long lists, when the graph
/// has any and the cache is not tiny (a tiny cache is all blocks; lists are then assembled one
/// at a time per call) ...
const LIST_RESERVE_DIVISOR: u64 = 8;
/// ... up to this much.
const LIST_RESERVE_MAX: u64 = 64 << 20;
/// A scan's assembly buffer keeps at most this capacity between lists (a hub's is freed).
const SCAN_ASSEMBLY_KEEP: usize = 1 << 18;
/// Weight slots per weight block.
const WEIGHTS_PER_BLOCK: u64 = (BLOCK_SIZE / 8) as u64;
const SLOTS: u64 = SLOTS_PER_BLOCK as u64;
/// The per-vertex lookups take at most this fraction (one over it) of the cache budget; the
/// rest is the blocks' and buffers', however large the lookups: a cache without blocks reads
/// every list from the device.
const LOOKUP_SHARE_DIVISOR: u64 = 2;
/// The most of the cache budget the string keys' block cache takes.
pub const KEY_CACHE_MAX: u64 = 8 << 20;

/// A graph file read out of core. `Send + Sync`: worker threads call it concurrently.
pub struct OutOfCoreStore {
    /// The id map and vertex indexes, compact, counted against the cache budget.
    file: CompactFile,
    /// The vertices' string keys, read through their own share of the cache budget.
    keys: Option<VertexKeys>,
    engine: IoEngine,
    cache: BlockCache,
    counters: Arc<IoCounters>,
    /// Recycled buffers of sequential-scan reads (edges, and weights at twice the size).
    scan_edges: BufPool,
    scan_weights: BufPool,
    /// Blocks per scan read.
    scan_chunk: u64,
    /// Bytes of the cache budget the scans' buffers may use (shared by concurrent scans).
    scan_reserve: u64,
    /// How much of `scan_reserve` is beyond the cache budget (the floor's excess over the
    /// cache's share).
    scan_beyond_cache: u64,
    /// How much of the lookups (id map, indexes, checksums) is held beyond the cache budget:
    /// what exceeds its share of it.
    lookups_beyond_cache: u64,
    /// Scans running now, so each takes its share of `scan_reserve`.
    active_scans: AtomicUsize,
    /// Buffers of lists assembled from several blocks.
    lists: ListBudget,
    /// The most bytes of chunk buffers one scan held at once (read or being read).
    scan_high_water: AtomicU64,
    /// Plans of whole-range scans, for the next scan of the same range.
    scan_plans: ScanPlans,
    /// Plans of passes over all lists shared by the workers.
    pass_plans: PassPlans,
    /// The device's read costs, which set how scans coalesce (the data directory's probe, once
    /// the opener hands it over with [`OutOfCoreStore::set_device_costs`]).
    costs: DeviceCosts,
    /// The device under the file, for PROFILE's busy share.
    device: Option<DeviceBusy>,
}

/// Counts a running scan for as long as it lives.
struct ActiveScan<'a>(&'a AtomicUsize);

impl<'a> ActiveScan<'a> {
    fn enter(count: &'a AtomicUsize) -> (ActiveScan<'a>, usize) {
        let now = count.fetch_add(1, Ordering::Relaxed) + 1;
        (ActiveScan(count), now)
    }
}

impl Drop for ActiveScan<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for OutOfCoreStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "OutOfCoreStore({}, {})",
            self.file.path.display(),
            self.describe_reader()
        )
    }
}

/// Where one direction's data lives.
#[derive(Clone, Copy)]
struct Lay<'a> {
    idx: &'a CompactIndex,
    /// First absolute block of the edge section.
    e0: u64,
    /// First absolute block of the weight section, when weights are wanted and exist.
    w0: Option<u64>,
}

/// The blocks one list occupies (absolute block numbers, inclusive ranges).
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u64,
    deg: u32,
    e_first: u64,
    e_last: u64,
    /// Weight blocks, when weights are wanted.
    w: Option<(u64, u64)>,
}

impl Lay<'_> {
    /// The first weight block parallel to edge block `f` (two weight blocks per edge block), when
    /// weights are read.
    fn weights_of(&self, f: u64) -> Option<u64> {
        self.w0.map(|w0| w0 + 2 * (f - self.e0))
    }

    /// The span of a list given its index entry (start slot, degree).
    fn span_of(&self, (start, deg): (u64, u32)) -> Span {
        let last_slot = start + (deg.max(1) as u64) - 1;
        Span {
            start,
            deg,
            e_first: self.e0 + start / SLOTS,
            e_last: self.e0 + last_slot / SLOTS,
            w: self.w0.map(|w0| {
                (
                    w0 + start / WEIGHTS_PER_BLOCK,
                    w0 + last_slot / WEIGHTS_PER_BLOCK,
                )
            }),
        }
    }
}

/// A list a fetch wants: its vertex, index entry and (ByBlock) first edge block, relative.
#[derive(Clone, Copy)]
struct Wanted {
    block: u64,
    v: u32,
    start: u64,
    deg: u32,
}

/// Consecutive non-empty lists (in vertex order) with the same span of edge blocks: `lists` of
/// them, the first of which is vertex `first`.
struct SpanRun {
    e_first: u64,
    e_last: u64,
    first: u32,
    lists: u32,
}

enum JobData {
    /// The list lies in one edge block: visited from the pinned blocks.
    Small {
        edge: Option<BlockRef>,
        weights: [Option<BlockRef>; 2],
    },
    /// The list spans blocks: assembled here.
    Big { nbrs: Vec<u32>, wts: Vec<f64> },
}

struct Job {
    v: u32,
    span: Span,
    remaining: u32,
    data: JobData,
}

impl OutOfCoreStore {
    /// Opens `path` out of core with a cache of `cache_bytes` and the given engine options.
    pub fn open(path: &Path, cache_bytes: u64, engine: &EngineOptions) -> Result<OutOfCoreStore> {
        let file = CompactFile::open(path)?;
        Self::from_file(file, cache_bytes, engine)
    }

    /// Wraps an already opened and checked file.
    pub fn from_file(
        file: CompactFile,
        cache_bytes: u64,
        engine: &EngineOptions,
    ) -> Result<OutOfCoreStore> {
        // The id map, indexes and block checksums are part of the budget, up to its share:
        // the rest is for blocks, keys and buffers, so blocks always get at least half of it.
        // Lookups beyond that share are held besides the budget, like per-vertex state.
        let lookups_in_cache = file.lookup_bytes().min(cache_bytes / LOOKUP_SHARE_DIVISOR);
        let lookups_beyond_cache = file.lookup_bytes() - lookups_in_cache;
        let cache_bytes = cache_bytes - lookups_in_cache;
        let counters = Arc::new(IoCounters::default());
        let engine = IoEngine::open(&file.path, engine, counters.clone())?;
        let device = DeviceBusy::of(&file.path);
        // String keys are read block by block through a cache of their own, taken out of
        // the budget (a sixteenth, at most 8 MiB).
        let key_cache = if file.string_keys() {
            (cache_bytes / 16).min(KEY_CACHE_MAX)
        } else {
            0
        };
        let keys = VertexKeys::by_block(&file, key_cache)?;
        let cache_bytes = cache_bytes - key_cache;
        // `cache` is the reader's whole buffer budget: part of it (up to 8 MiB) holds the large
        // reads of sequential scans, the rest is the block cache.
        let scan_share = if cache_bytes >= SCAN_RESERVE_FROM {
            (cache_bytes / 2).min(SCAN_RESERVE_MAX)
        } else {
            0
        };
        let scan_reserve = if cache_bytes >= SCAN_RESERVE_FROM {
            scan_share.max(SCAN_RESERVE_FLOOR)
        } else {
            0
        };
        let scan_chunk = scan_chunk_blocks(scan_reserve);
        let keep = (scan_reserve / (scan_chunk * BLOCK_SIZE as u64)).max(2) as usize;
        // Long lists are assembled in buffers of their own; their share comes out of the rest.
        let blocks_share = cache_bytes - scan_share;
        let list_reserve = if cache_bytes >= SCAN_RESERVE_FROM && has_long_lists(&file) {
            (blocks_share / LIST_RESERVE_DIVISOR).min(LIST_RESERVE_MAX)
        } else {
            0
        };
        let cache = BlockCache::new(blocks_share - list_reserve, counters.clone());
        Ok(OutOfCoreStore {
            file,
            keys,
            engine,
            cache,
            counters,
            scan_edges: BufPool::new(scan_chunk as usize, keep),
            scan_weights: BufPool::new(2 * scan_chunk as usize, keep.div_ceil(2)),
            scan_chunk,
            scan_reserve,
            scan_beyond_cache: scan_reserve - scan_share,
            lookups_beyond_cache,
            active_scans: AtomicUsize::new(0),
            lists: ListBudget::new(list_reserve),
            scan_high_water: AtomicU64::new(0),
            scan_plans: ScanPlans::default(),
            pass_plans: PassPlans::default(),
            costs: DeviceCosts::FALLBACK,
            device,
        })
    }

    /// The budget of long lists' assembly buffers (its high water shows the most ever held).
    pub fn list_budget(&self) -> &ListBudget {
        &self.lists
    }

    /// Bytes of the cache budget the sequential scans' reads may hold at once (0 under a tiny
    /// cache, whose scans read through the block cache).
    pub fn scan_reserve(&self) -> u64 {
        self.scan_reserve
    }

    /// Blocks of edges in a sequential scan's largest read.
    pub fn scan_read_blocks(&self) -> u64 {
        self.scan_chunk
    }

    /// The most bytes of chunk buffers one sequential scan has held at once.
    pub fn scan_buffer_high_water(&self) -> u64 {
        self.scan_high_water.load(Ordering::Relaxed)
    }

    /// The engine (which one runs, its depth).
    pub fn engine(&self) -> &IoEngine {
        &self.engine
    }

    /// Prices reads with `costs` (the probe of the data directory the graph lives in).
    pub fn set_device_costs(&mut self, costs: DeviceCosts) {
        self.costs = costs;
        self.scan_plans.clear();
        self.pass_plans.clear();
    }

    /// How scans plan their reads: the device's costs and the longest scan read.
    fn model(&self) -> ReadModel {
        ReadModel::new(self.costs, self.scan_chunk)
    }

    /// The block cache.
    pub fn cache(&self) -> &BlockCache {
        &self.cache
    }

    /// The opened file (id map, indexes, checksums).
    pub fn graph_file(&self) -> &CompactFile {
        &self.file
    }

    fn lay(&self, dir: Direction, want_weights: bool) -> Lay<'_> {
        Lay {
            idx: self.file.vertex_index(dir),
            e0: self.file.edge_section(dir).first_block(),
            w0: if want_weights {
                self.file.weight_section(dir).map(|s| s.first_block())
            } else {
                None
            },
        }
    }

    fn corrupt(&self, why: String) -> StoreError {
        StoreError::Corrupt {
            path: self.file.path.clone(),
            why,
        }
    }

    /// Checks one block against the file's block checksums.
    fn verify(&self, block: u64, bytes: &[u8]) -> Result<()> {
        match self.file.block_crcs.get(block as usize) {
            Some(&crc) if crc32fast::hash(bytes) == crc => Ok(()),
            Some(_) => Err(self.corrupt(format!("block {block} fails its checksum"))),
            None => Err(self.corrupt(format!("block {block} has no checksum"))),
        }
    }

    /// Checks every block of a read that starts at block `first`.
    fn verify_blocks(&self, first: u64, buf: &AlignedBuf) -> Result<()> {
        for (i, bytes) in buf.as_bytes().chunks_exact(BLOCK_SIZE).enumerate() {
            self.verify(first + i as u64, bytes)?;
        }
        Ok(())
    }

    /// Turns a completion into its checked bytes, or the error naming the file and block.
    fn landed(&self, c: &Completion) -> Result<()> {
        let first = c.offset / BLOCK_SIZE as u64;
        match &c.result {
            Err(e) => Err(StoreError::io(
                &self.file.path,
                std::io::Error::new(e.kind(), format!("reading block {first}: {e}")),
            )),
            Ok(n) if *n < c.buf.len() => Err(self.corrupt(format!(
                "blocks {first}..{} lie past the end of the file (truncated?)",
                first + c.buf.blocks() as u64
            ))),
            Ok(_) => Ok(()),
        }
    }

    /// Neighbour ids must be vertices: a checksum-valid but wrong file must not make an
    /// algorithm index out of bounds.
    fn check_list(&self, v: u32, nbrs: &[u32]) -> Result<()> {
        match first_outside(nbrs, self.file.superblock.vertices) {
            None => Ok(()),
            Some(x) => Err(self.corrupt(format!("the list of vertex {v} holds {x}, not a vertex"))),
        }
    }

    /// Checks every neighbour slot of a scan's read of edge blocks from `first_block` at once,
    /// so the scan visits its lists unchecked.
    fn check_slots(&self, first_block: u64, slots: &[u32]) -> Result<()> {
        match first_stray_slot(slots, self.file.superblock.vertices) {
            None => Ok(()),
            Some((i, x)) => Err(self.corrupt(format!(
                "edge block {} holds {x}, not a vertex",
                first_block + (i / SLOTS_PER_BLOCK) as u64
            ))),
        }
    }

    /// Submits scan read `c` of the edge blocks `blocks` (tag `c << 1`) and, when weights are
    /// read, of the weight blocks beside them (tag `c << 1 | 1`), in buffers from the scan pools.
    fn submit_scan_read(
        &self,
        session: &mut Session<'_>,
        lay: &Lay<'_>,
        c: u64,
        blocks: Range<u64>,
    ) -> Result<()> {
        let n = (blocks.end - blocks.start) as usize;
        session.submit(ReadRequest {
            tag: c << 1,
            offset: blocks.start * BLOCK_SIZE as u64,
            buf: self.scan_edges.take(n),
        })?;
        if let Some(wf) = lay.weights_of(blocks.start) {
            session.submit(ReadRequest {
                tag: (c << 1) | 1,
                offset: wf * BLOCK_SIZE as u64,
                buf: self.scan_weights.take(2 * n),
            })?;
        }
        Ok(())
    }

    /// Checks a scan read of edge blocks from `first` (checksums, neighbour ids) and the weight
    /// blocks read beside it (checksums).
    fn check_scan_read(
        &self,
        lay: &Lay<'_>,
        first: u64,
        edges: &AlignedBuf,
        weights: Option<&AlignedBuf>,
    ) -> Result<()> {
        self.verify_blocks(first, edges)?;
        self.check_slots(first, edges.as_u32s())?;
        if let (Some(w), Some(wf)) = (weights, lay.weights_of(first)) {
            self.verify_blocks(wf, w)?;
        }
        Ok(())
    }

    fn check_vertex(&self, v: u32) -> Result<()> {
        if (v as u64) < self.file.superblock.vertices {
            Ok(())
        } else {
            Err(StoreError::Other(format!(
                "vertex {v} is out of range (the graph has {} vertices)",
                self.file.superblock.vertices
            )))
        }
    }
}

/// Blocks per scan read for scan buffers of `reserve` bytes: the largest power of two (so that
/// the reads' buffers are whole pieces of the huge-page slabs) that lets [`SCAN_CHUNKS`] reads
/// share the reserve, within the smallest and largest scan reads.
fn scan_chunk_blocks(reserve: u64) -> u64 {
    let fits = (reserve / SCAN_CHUNKS / BLOCK_SIZE as u64).max(1);
    (1u64 << fits.ilog2()).clamp(SCAN_CHUNK_MIN_BLOCKS, SCAN_CHUNK_MAX_BLOCKS)
}

/// Whether some list of `file` is long enough to span edge blocks.
fn has_long_lists(file: &CompactFile) -> bool {
    [Direction::Out, Direction::In]
        .iter()
        .any(|&d| file.vertex_index(d).max_degree() as u64 >= SLOTS)
}

/// Empties the assembly buffers and makes room in them for `v`'s list of `deg` neighbours (and
/// weights): an error, not an abort, when the machine has not the memory.
fn reserve_assembly(
    v: u32,
    deg: u32,
    weights: bool,
    assembled: &mut Vec<u32>,
    wassembled: &mut Vec<f64>,
) -> Result<()> {
    assembled.clear();
    wassembled.clear();
    let reserved = assembled.try_reserve_exact(deg as usize).and_then(|_| {
        if weights {
            wassembled.try_reserve_exact(deg as usize)
        } else {
            Ok(())
        }
    });
    reserved.map_err(|_| {
        StoreError::Other(format!(
            "the list of vertex {v} ({deg} neighbours, {}) cannot be allocated: the machine is \
             out of memory",
            base::format_size(assembly_bytes(deg, weights))
        ))
    })
}

/// Bytes of the buffers that assemble a list of `deg` neighbours (and weights).
fn assembly_bytes(deg: u32, weights: bool) -> u64 {
    deg as u64 * if weights { 12 } else { 4 }
}

/// The state of one `for_each_list` call.
struct Batch<'s> {
    store: &'s OutOfCoreStore,
    lay: Lay<'s>,
    by_block: bool,
    jobs: Vec<Option<Job>>,
    free: Vec<usize>,
    live: usize,
    /// Blocks requested in this call and not yet arrived, with the jobs waiting for them.
    waiting: HashMap<u64, Vec<usize>>,
    /// Reads decided but not yet submitted (their buffers are allocated at submission).
    queue: VecDeque<PendingRead>,
    /// Bytes of the store's list budget this call holds for its long lists.
    list_held: u64,
    /// ByBlock: tail blocks of long lists, which a later group may share, with the edge block
    /// (relative) they belong to.
    held: HashMap<u64, (u64, BlockRef)>,
    wscratch: Vec<f64>,
    /// Cache the blocks of multi-block runs up to this many blocks.
    cacheable_run: u64,
    /// Blocks this call claimed in the cache's in-flight table and has not yet fulfilled.
    claims: HashSet<u64>,
    /// Blocks other callers are reading for this call's jobs.
    foreign: Vec<(u64, Pending)>,
    /// A spreading call's blocks, kept until it returns: the lists it is handed next are
    /// mostly in them, and a cache smaller than the call's blocks would have let them go.
    /// At most the cache's number of blocks (or [`KEPT_FLOOR`]).
    kept: Option<KeptBlocks>,
}

/// A block a spreading call keeps. Once `checked`, its slots are known to hold only vertices
/// or filler, and the slots before `clean` only vertices: a list within them needs no check of
/// its own (lists are packed from a block's start; a list reaching past `clean` is checked).
struct Kept {
    r: BlockRef,
    checked: bool,
    clean: usize,
}

/// The blocks a spreading call keeps, by block number. Lists are visited grouped by block, so
/// the block found last is remembered and asked for again without a lookup.
#[derive(Default)]
struct KeptBlocks {
    at: HashMap<u64, usize>,
    blocks: Vec<Kept>,
    /// The block found last and its place in `blocks`.
    last: Option<(u64, usize)>,
}

impl KeptBlocks {
    fn len(&self) -> usize {
        self.blocks.len()
    }

    fn insert(&mut self, b: u64, r: &BlockRef) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.at.entry(b) {
            e.insert(self.blocks.len());
            self.blocks.push(Kept {
                r: r.clone(),
                checked: false,
                clean: 0,
            });
        }
    }

    fn get(&mut self, b: u64) -> Option<&mut Kept> {
        let i = match self.last {
            Some((last, i)) if last == b => i,
            _ => {
                let i = *self.at.get(&b)?;
                self.last = Some((b, i));
                i
            }
        };
        Some(&mut self.blocks[i])
    }
}

/// How many of a block's slots, from its start, hold no filler: the slots before its trailing
/// filler, or 0 when filler also lies among them (a file no writer of ours makes, whose lists
/// are then all checked). Branch-free, so the search over a whole block vectorises.
fn clean_prefix(slots: &[u32]) -> usize {
    let end = slots.len() - slots.iter().rev().take_while(|&&x| x == EMPTY_SLOT).count();
    let inner = slots[..end]
        .iter()
        .fold(false, |any, &x| any | (x == EMPTY_SLOT));
    if inner {
        0
    } else {
        end
    }
}

/// Blocks a spreading call may keep however small the cache: a few lists' worth.
const KEPT_FLOOR: usize = 16;

/// Tag bit: insert the read's blocks into the cache.
const TAG_CACHE: u64 = 1;

/// A read decided but not yet submitted.
struct PendingRead {
    tag: u64,
    first: u64,
    count: u64,
}

impl PendingRead {
    /// The request, with its buffer allocated now.
    fn into_request(self) -> ReadRequest {
        ReadRequest {
            tag: self.tag,
            offset: self.first * BLOCK_SIZE as u64,
            buf: AlignedBuf::new(self.count as usize),
        }
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        // A call that stops early (an error) still hands back its lists' budget, and lets
        // whoever waits for its reads read those blocks themselves.
        self.store.lists.give(self.list_held);
        for &b in &self.claims {
            self.store.cache.abandon(b);
        }
    }
}

impl<'s> Batch<'s> {
    fn new(store: &'s OutOfCoreStore, lay: Lay<'s>, by_block: bool) -> Batch<'s> {
        Batch {
            store,
            lay,
            by_block,
            jobs: Vec::new(),
            free: Vec::new(),
            live: 0,
            waiting: HashMap::default(),
            queue: VecDeque::new(),
            list_held: 0,
            held: HashMap::default(),
            wscratch: Vec::new(),
            cacheable_run: store.cache.slots() as u64 / 2,
            claims: HashSet::default(),
            foreign: Vec::new(),
            kept: None,
        }
    }

    /// Keeps `b` for the rest of a spreading call, up to as many blocks as the cache holds
    /// (what a call keeps beyond what the cache still has is outside the `cache` budget).
    fn keep(&mut self, b: u64, r: &BlockRef) {
        let most = self.store.cache.slots().max(KEPT_FLOOR);
        if let Some(kept) = &mut self.kept {
            if kept.len() < most {
                kept.insert(b, r);
            }
        }
    }

    /// The neighbours of `v`'s short list at `start` (`deg` of them, all in kept edge block
    /// `b`), when the call keeps `b`, checked: the block's slots the first time, the list
    /// itself only when it reaches the block's filler.
    fn kept_list(&mut self, v: u32, b: u64, start: u64, deg: u32) -> Result<Option<&[u32]>> {
        let Some(k) = self.kept.as_mut().and_then(|k| k.get(b)) else {
            return Ok(None);
        };
        let slots = k.r.as_u32s();
        if !k.checked {
            self.store.check_slots(b, slots)?;
            k.clean = clean_prefix(slots);
            k.checked = true;
        }
        let off = (start % SLOTS) as usize;
        let nbrs = &slots[off..off + deg as usize];
        if off + nbrs.len() > k.clean {
            self.store.check_list(v, nbrs)?;
        }
        Ok(Some(nbrs))
    }

    /// Looks `b` up in the cache; with `claim`, a miss claims the block in the cache's in-flight
    /// table (or finds another caller's read of it). Without, a miss is `Claimed` unregistered.
    fn lookup(&mut self, b: u64, claim: bool) -> Lookup {
        if !claim {
            return self.store.cache.get(b).map_or(Lookup::Claimed, Lookup::Hit);
        }
        let found = self.store.cache.get_or_claim(b);
        if matches!(found, Lookup::Claimed) {
            self.claims.insert(b);
        }
        found
    }

    /// Offers a block this call read to the cache, completing its claim when it made one.
    fn offer(&mut self, b: u64, r: BlockRef) -> BlockRef {
        if self.claims.remove(&b) {
            self.store.cache.fulfil(b, r)
        } else {
            self.store.cache.insert(b, r)
        }
    }

    /// Collects the blocks other callers have read for this call: with `wait`, waits for one
    /// first (called only when this call has nothing of its own in flight or queued, so every
    /// claim it holds is fulfilled and no two callers can wait for each other).
    fn collect_foreign<F>(&mut self, wait: bool, visit: &mut F) -> Result<()>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        if wait {
            if let Some((b, p)) = self.foreign.pop() {
                let got = p.wait();
                self.foreign_landed(b, got, visit)?;
            }
        }
        let mut i = 0;
        while i < self.foreign.len() {
            match self.foreign[i].1.poll() {
                None => i += 1,
                Some(got) => {
                    let (b, _) = self.foreign.swap_remove(i);
                    self.foreign_landed(b, got, visit)?;
                }
            }
        }
        Ok(())
    }

    /// Another caller's read of `b` landed (`Some`) or was abandoned (`None`: read it here).
    fn foreign_landed<F>(&mut self, b: u64, got: Option<BlockRef>, visit: &mut F) -> Result<()>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        if let Some(r) = got {
            return self.arrived(b, Some(r), None, false, visit);
        }
        match self.lookup(b, true) {
            Lookup::Hit(r) => self.arrived(b, Some(r), None, false, visit),
            Lookup::Pending(p) => {
                self.foreign.push((b, p));
                Ok(())
            }
            Lookup::Claimed => {
                self.request(b, 1, true);
                Ok(())
            }
        }
    }

    fn request(&mut self, first: u64, count: u64, cache: bool) {
        self.queue.push_back(PendingRead {
            tag: if cache { TAG_CACHE } else { 0 },
            first,
            count,
        });
    }

    /// Takes the list budget for the long lists among `vs` before they are admitted; `false`
    /// when this call must first finish the long lists it holds.
    fn take_lists(&mut self, spans: impl Iterator<Item = Span>) -> bool {
        let bytes: u64 = spans
            .filter(|s| s.deg > 0 && s.e_first != s.e_last)
            .map(|s| assembly_bytes(s.deg, s.w.is_some()))
            .sum();
        if bytes == 0 {
            return true;
        }
        let taken = self.store.lists.try_take(bytes, self.list_held);
        if taken {
            self.list_held += bytes;
        }
        taken
    }

    /// Hands back the budget of a long list that has been visited.
    fn give_list(&mut self, span: &Span) {
        let bytes = assembly_bytes(span.deg, span.w.is_some());
        self.list_held -= bytes;
        self.store.lists.give(bytes);
    }

    /// Starts fetching `v`'s list (at `span`); visits it at once when everything is at hand.
    fn admit<F>(&mut self, v: u32, span: Span, visit: &mut F) -> Result<()>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        let want_w = span.w.is_some();
        if span.deg == 0 {
            visit(v, &[], want_w.then_some(&[]));
            return Ok(());
        }
        let small = span.e_first == span.e_last;
        // A spreading call's short unweighted list in a block it keeps: visited at once.
        if small && !want_w {
            if let Some(nbrs) = self.kept_list(v, span.e_first, span.start, span.deg)? {
                visit(v, nbrs, None);
                return Ok(());
            }
        }
        let id = match self.free.pop() {
            Some(i) => i,
            None => {
                self.jobs.push(None);
                self.jobs.len() - 1
            }
        };
        let mut job = Job {
            v,
            span,
            remaining: 0,
            data: if small {
                JobData::Small {
                    edge: None,
                    weights: [None, None],
                }
            } else {
                let too_big = || {
                    StoreError::Other(format!(
                        "the list of vertex {v} ({} neighbours, {}) cannot be allocated: \
                         the machine is out of memory",
                        span.deg,
                        base::format_size(assembly_bytes(span.deg, want_w))
                    ))
                };
                JobData::Big {
                    nbrs: try_filled(span.deg as usize).ok_or_else(too_big)?,
                    wts: if want_w {
                        try_filled(span.deg as usize).ok_or_else(too_big)?
                    } else {
                        Vec::new()
                    },
                }
            },
        };
        let weight_blocks = span.w.into_iter().flat_map(|(a, b)| a..=b);
        let block_count = span.e_last - span.e_first + 1 + span.w.map_or(0, |(a, b)| b - a + 1);
        // Missing blocks are read in runs of consecutive blocks.
        let mut run: Option<(u64, u64)> = None;
        let cache_run = small || block_count <= self.cacheable_run;
        for b in (span.e_first..=span.e_last).chain(weight_blocks) {
            if let Some(r) = self
                .kept
                .as_mut()
                .and_then(|k| k.get(b))
                .map(|k| k.r.clone())
            {
                deliver(&mut job, &self.lay, b, Some(&r), r.as_bytes());
                continue;
            }
            if let Some((_, r)) = self.held.get(&b) {
                let r = r.clone();
                deliver(&mut job, &self.lay, b, Some(&r), r.as_bytes());
                self.hold_if_tail(&job, b, &r);
                continue;
            }
            if let Some(w) = self.waiting.get_mut(&b) {
                job.remaining += 1;
                w.push(id);
                if let Some((f, c)) = run.take() {
                    self.request(f, c, cache_run);
                }
                continue;
            }
            match self.lookup(b, cache_run) {
                Lookup::Hit(r) => {
                    self.keep(b, &r);
                    deliver(&mut job, &self.lay, b, Some(&r), r.as_bytes());
                    self.hold_if_tail(&job, b, &r);
                    continue;
                }
                Lookup::Pending(p) => {
                    job.remaining += 1;
                    self.waiting.insert(b, vec![id]);
                    self.foreign.push((b, p));
                    if let Some((f, c)) = run.take() {
                        self.request(f, c, cache_run);
                    }
                    continue;
                }
                Lookup::Claimed => {}
            }
            job.remaining += 1;
            self.waiting.insert(b, vec![id]);
            run = match run {
                Some((f, c)) if f + c == b && c < MAX_READ_BLOCKS => Some((f, c + 1)),
                Some((f, c)) => {
                    self.request(f, c, cache_run);
                    Some((b, 1))
                }
                None => Some((b, 1)),
            };
        }
        if let Some((f, c)) = run {
            self.request(f, c, cache_run);
        }
        if job.remaining == 0 {
            self.free.push(id);
            return self.finish(job, visit);
        }
        self.jobs[id] = Some(job);
        self.live += 1;
        Ok(())
    }

    /// ByBlock: keeps the last block of a long list (and its weight blocks) for the group that
    /// starts in it, so a tiny cache cannot make the call read it twice.
    fn hold_if_tail(&mut self, job: &Job, b: u64, r: &BlockRef) {
        if !self.by_block || matches!(job.data, JobData::Small { .. }) {
            return;
        }
        let tail_rel = job.span.e_last - self.lay.e0;
        let is_tail = b == job.span.e_last
            || (self
                .lay
                .w0
                .is_some_and(|w0| b >= w0 && (b - w0) / 2 == tail_rel)
                && job.span.w.is_some_and(|(wf, wl)| (wf..=wl).contains(&b)));
        if is_tail {
            self.held.insert(b, (tail_rel, r.clone()));
        }
    }

    /// ByBlock: a group starting at relative edge block `g` is being admitted; earlier tails
    /// can no longer be needed.
    fn advance_group(&mut self, g: u64) {
        if !self.held.is_empty() {
            self.held.retain(|_, (rel, _)| *rel >= g);
        }
    }

    /// Hands a finished read's blocks to the jobs waiting for them.
    fn complete<F>(&mut self, c: Completion, visit: &mut F) -> Result<()>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        self.store.landed(&c)?;
        let first = c.offset / BLOCK_SIZE as u64;
        let count = c.buf.blocks();
        let cache_it = c.tag & TAG_CACHE != 0;
        self.store.verify_blocks(first, &c.buf)?;
        if count == 1 {
            let mut r = Arc::new(c.buf);
            if cache_it {
                r = self.offer(first, r);
            }
            return self.arrived(first, Some(r), None, cache_it, visit);
        }
        for i in 0..count {
            let bytes = &c.buf.as_bytes()[i * BLOCK_SIZE..(i + 1) * BLOCK_SIZE];
            self.arrived(first + i as u64, None, Some(bytes), cache_it, visit)?;
        }
        Ok(())
    }

    /// Block `b` is in (checked): as a shareable block `r`, or as bytes of a larger read.
    fn arrived<F>(
        &mut self,
        b: u64,
        r: Option<BlockRef>,
        bytes: Option<&[u8]>,
        cache_it: bool,
        visit: &mut F,
    ) -> Result<()>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        let waiters = self.waiting.remove(&b).unwrap_or_default();
        let mut r = r;
        if r.is_none() {
            let needs = cache_it
                || self.by_block
                || waiters.iter().any(|&j| {
                    matches!(
                        self.jobs[j].as_ref().map(|j| &j.data),
                        Some(JobData::Small { .. })
                    )
                });
            if let (true, Some(bytes)) = (needs, bytes) {
                let mut own = AlignedBuf::new(1);
                own.as_bytes_mut().copy_from_slice(bytes);
                let own = Arc::new(own);
                r = Some(if cache_it { self.offer(b, own) } else { own });
            }
        }
        if let Some(r) = &r {
            self.keep(b, r);
        }
        for j in waiters {
            let Some(job) = self.jobs[j].as_mut() else {
                continue;
            };
            let data = match (&r, bytes) {
                (Some(r), _) => r.as_bytes(),
                (None, Some(x)) => x,
                (None, None) => continue,
            };
            deliver(job, &self.lay, b, r.as_ref(), data);
            job.remaining -= 1;
            let done = job.remaining == 0;
            if let Some(r) = &r {
                let job = self.jobs[j].take().expect("job is live");
                self.hold_if_tail(&job, b, r);
                self.jobs[j] = Some(job);
            }
            if done {
                let job = self.jobs[j].take().expect("job is live");
                self.free.push(j);
                self.live -= 1;
                self.finish(job, visit)?;
            }
        }
        Ok(())
    }

    /// Visits a job whose blocks are all in.
    fn finish<F>(&mut self, job: Job, visit: &mut F) -> Result<()>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        let Job { v, span, data, .. } = job;
        let deg = span.deg as usize;
        match data {
            JobData::Small { edge, weights } => {
                let missing =
                    || StoreError::Other(format!("internal: a block of vertex {v} went missing"));
                let e = edge.ok_or_else(missing)?;
                let off = (span.start % SLOTS) as usize;
                let nbrs = &e.as_u32s()[off..off + deg];
                self.store.check_list(v, nbrs)?;
                if span.w.is_none() {
                    visit(v, nbrs, None);
                    return Ok(());
                }
                let woff = (span.start % WEIGHTS_PER_BLOCK) as usize;
                let w0 = weights[0].as_ref().ok_or_else(missing)?;
                if woff + deg <= WEIGHTS_PER_BLOCK as usize {
                    visit(v, nbrs, Some(&w0.as_f64s()[woff..woff + deg]));
                } else {
                    let w1 = weights[1].as_ref().ok_or_else(missing)?;
                    let first = WEIGHTS_PER_BLOCK as usize - woff;
                    self.wscratch.clear();
                    self.wscratch.extend_from_slice(&w0.as_f64s()[woff..]);
                    self.wscratch
                        .extend_from_slice(&w1.as_f64s()[..deg - first]);
                    visit(v, nbrs, Some(&self.wscratch));
                }
            }
            JobData::Big { nbrs, wts } => {
                self.store.check_list(v, &nbrs)?;
                visit(v, &nbrs, span.w.map(|_| &wts[..]));
                drop((nbrs, wts));
                self.give_list(&span);
            }
        }
        Ok(())
    }
}

/// Pins (small lists) or copies (long lists) block `b` into `job`.
fn deliver(job: &mut Job, lay: &Lay<'_>, b: u64, r: Option<&BlockRef>, bytes: &[u8]) {
    let span = job.span;
    let is_edge = (span.e_first..=span.e_last).contains(&b);
    match &mut job.data {
        JobData::Small { edge, weights } => {
            if is_edge {
                *edge = r.cloned();
            } else if let Some((wf, _)) = span.w {
                if let Some(slot) = weights.get_mut((b - wf) as usize) {
                    *slot = r.cloned();
                }
            }
        }
        JobData::Big { nbrs, wts } => {
            let (first_slot, per, width) = if is_edge {
                ((b - lay.e0) * SLOTS, SLOTS, 4)
            } else {
                let Some(w0) = lay.w0 else { return };
                ((b - w0) * WEIGHTS_PER_BLOCK, WEIGHTS_PER_BLOCK, 8)
            };
            let lo = first_slot.max(span.start);
            let hi = (first_slot + per).min(span.start + span.deg as u64);
            if lo >= hi {
                return;
            }
            let src =
                &bytes[((lo - first_slot) * width) as usize..((hi - first_slot) * width) as usize];
            let at = (lo - span.start) as usize;
            if is_edge {
                for (d, s) in nbrs[at..].iter_mut().zip(src.chunks_exact(4)) {
                    *d = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                }
            } else {
                for (d, s) in wts[at..].iter_mut().zip(src.chunks_exact(8)) {
                    *d = f64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]);
                }
            }
        }
    }
}

impl OutOfCoreStore {
    /// The body of `for_each_list` and `for_each_list_spreading`: the vertices `visit` pushes
    /// onto its last argument join the call's queue (by block after what it was given), so
    /// the blocks just read are found in the cache. With `left` (spreading), only those whose
    /// lists start in a block of the vertices given join; the others go to `left`.
    fn fetch<F>(
        &self,
        dir: Direction,
        vertices: &[u32],
        order: FetchOrder,
        want_weights: bool,
        mut left: Option<&mut Vec<u32>>,
        mut visit: F,
    ) -> Result<()>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>, &mut Vec<u32>),
    {
        if vertices.is_empty() {
            return Ok(());
        }
        for &v in vertices {
            self.check_vertex(v)?;
        }
        let lay = self.lay(dir, want_weights);
        let by_block = order == FetchOrder::ByBlock;
        // The wanted lists with their index entries, each looked up once; ByBlock sorted by
        // first edge block and admitted a block's worth at a time.
        let wanted = |v: u32| {
            let (start, deg) = lay.idx.entry(v);
            Wanted {
                block: if by_block { start / SLOTS } else { 0 },
                v,
                start,
                deg,
            }
        };
        let mut sorted: Vec<Wanted> = vertices.iter().map(|&v| wanted(v)).collect();
        if by_block {
            sorted.sort_unstable_by_key(|w| (w.block, w.v));
        }
        let spreading = left.is_some();
        // A spreading call carries vertices on within the blocks of those it was given
        // (relative, ascending): the blocks it reads first and keeps.
        let mut home: Vec<u64> = Vec::new();
        if spreading {
            home = sorted.iter().map(|w| w.block).collect();
            home.dedup();
        }
        let more = std::cell::RefCell::new(Vec::new());
        let mut visit = |v: u32, ns: &[u32], ws: Option<&[f64]>| {
            visit(v, ns, ws, &mut more.borrow_mut());
        };
        let mut b = Batch::new(self, lay, by_block);
        if spreading {
            b.kept = Some(KeptBlocks::default());
        }
        let mut session = self.engine.session()?;
        let max_jobs = 64 * self.engine.depth() as usize + 256;
        let mut cursor = 0usize;
        let mut done: Vec<Completion> = Vec::new();
        let mut added: Vec<Wanted> = Vec::new();
        loop {
            let mut grown = more.borrow_mut();
            if !grown.is_empty() {
                // Group what was added by block, after the blocks still to come.
                added.clear();
                for v in grown.drain(..) {
                    self.check_vertex(v)?;
                    let w = wanted(v);
                    match &mut left {
                        Some(left) if home.binary_search(&w.block).is_err() => left.push(v),
                        _ => added.push(w),
                    }
                }
                if by_block {
                    added.sort_unstable_by_key(|w| (w.block, w.v));
                }
                sorted.extend_from_slice(&added);
            }
            drop(grown);
            while !b.queue.is_empty() && session.has_room() {
                let read = b.queue.pop_front().expect("queue is not empty");
                session.submit(read.into_request())?;
            }
            // A spreading call's next list, when short, unweighted and in a block it keeps, is
            // visited at once.
            if spreading && !want_weights && cursor < sorted.len() {
                let w = sorted[cursor];
                if w.deg > 0 && w.start % SLOTS + w.deg as u64 <= SLOTS {
                    if let Some(nbrs) = b.kept_list(w.v, lay.e0 + w.block, w.start, w.deg)? {
                        visit(w.v, nbrs, None);
                        cursor += 1;
                        continue;
                    }
                }
            }
            // Admit the next vertex (ByBlock: the next group), unless its long list must wait
            // for the ones this call holds.
            if b.queue.is_empty() && cursor < sorted.len() && b.live < max_jobs {
                let end = if by_block {
                    let g = sorted[cursor].block;
                    cursor + sorted[cursor..].iter().take_while(|x| x.block == g).count()
                } else {
                    cursor + 1
                };
                let group = &sorted[cursor..end];
                if b.take_lists(group.iter().map(|w| lay.span_of((w.start, w.deg)))) {
                    if by_block {
                        b.advance_group(sorted[cursor].block);
                    }
                    for w in &sorted[cursor..end] {
                        b.admit(w.v, lay.span_of((w.start, w.deg)), &mut visit)?;
                    }
                    cursor = end;
                    continue;
                }
            }
            if session.in_flight() == 0 {
                if b.queue.is_empty() {
                    if b.foreign.is_empty() {
                        break;
                    }
                    b.collect_foreign(true, &mut visit)?;
                }
                continue;
            }
            session.wait(|c| done.push(c))?;
            for c in done.drain(..) {
                b.complete(c, &mut visit)?;
            }
            if !b.foreign.is_empty() {
                b.collect_foreign(false, &mut visit)?;
            }
        }
        if b.live != 0 || cursor < sorted.len() {
            return Err(StoreError::Other(format!(
                "internal: {} lists were never completed, {} never admitted",
                b.live,
                sorted.len() - cursor
            )));
        }
        Ok(())
    }

    /// The wanted lists' spans of edge blocks, in vertex order. Lists sharing a block give the
    /// same span: kept once, so a range of short lists yields about one span per block.
    fn span_runs(
        lay: &Lay<'_>,
        wanted: impl IntoIterator<Item = u32>,
        dense: bool,
    ) -> Vec<SpanRun> {
        let mut runs: Vec<SpanRun> = Vec::new();
        let mut index = lay.idx.cursor(dense);
        for v in wanted {
            let s = lay.span_of(index.entry(v));
            if s.deg == 0 {
                continue;
            }
            match runs.last_mut() {
                Some(r) if (r.e_first, r.e_last) == (s.e_first, s.e_last) => r.lists += 1,
                _ => runs.push(SpanRun {
                    e_first: s.e_first,
                    e_last: s.e_last,
                    first: v,
                    lists: 1,
                }),
            }
        }
        runs
    }

    /// The reads that fetch the blocks of `runs`, joined through gaps the device reads faster
    /// than it starts a new read, each at most a scan chunk long.
    fn reads_of(&self, runs: &[SpanRun]) -> Vec<Range<u64>> {
        let mut spans: Vec<(u64, u64)> = runs.iter().map(|r| (r.e_first, r.e_last)).collect();
        plan::coalesce(&mut spans, self.model().max_gap, self.scan_chunk)
    }

    /// The reads of a scan over the `wanted` lists ([`Self::reads_of`]), and how many of the
    /// lists need each read.
    fn plan_scan(
        &self,
        lay: &Lay<'_>,
        wanted: impl IntoIterator<Item = u32>,
        dense: bool,
    ) -> ScanPlan {
        let runs = Self::span_runs(lay, wanted, dense);
        let reads = self.reads_of(&runs);
        let read_of = ReadOf::new(&reads);
        let mut uses = vec![0u32; reads.len()];
        for r in &runs {
            for u in &mut uses[read_of.of(r.e_first)..=read_of.of(r.e_last)] {
                *u += r.lists;
            }
        }
        ScanPlan { reads, uses }
    }

    /// The body of `scan_lists` and `scan_lists_where`: the edge blocks of the wanted vertices
    /// of the range in coalesced reads of up to 1 MiB ([`Self::plan_scan`]), up to
    /// [`SCAN_DEPTH`] in flight within the scan's share of the scan buffers (counted in bytes,
    /// so short reads fly together), lists visited in vertex order. A block is read only if a
    /// wanted list needs it or it lies in a gap shorter than [`ReadModel::max_gap`] between two
    /// that are. A scan wanting every list of its range reuses the plan an earlier scan of the
    /// same range made ([`ScanPlans`]).
    fn scan<W, F>(
        &self,
        dir: Direction,
        range: Range<u32>,
        want_weights: bool,
        want: W,
        mut visit: F,
    ) -> Result<()>
    where
        W: Fn(u32) -> bool,
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        if range.is_empty() {
            return Ok(());
        }
        self.check_vertex(range.end - 1)?;
        let lay = self.lay(dir, want_weights);
        let want_w = lay.w0.is_some();
        let range_len = range.len();
        let key = (dir, want_w, range.clone());
        let wanted: Vec<u32> = range.filter(|&v| want(v)).collect();
        // Decoding the index a group at a time pays when about a quarter of the range is wanted.
        let dense = wanted.len() * 4 >= range_len;
        // A "chunk" below is one of the plan's reads.
        let plan = if wanted.len() == range_len {
            self.scan_plans
                .get_or_plan(key, || self.plan_scan(&lay, wanted.iter().copied(), dense))
        } else {
            Arc::new(self.plan_scan(&lay, wanted.iter().copied(), dense))
        };
        if plan.reads.is_empty() {
            for &v in &wanted {
                visit(v, &[], want_w.then_some(&[]));
            }
            return Ok(());
        }
        let reads = &plan.reads;
        let chunks = reads.len() as u64;
        // The read holding block `b`.
        let read_of = ReadOf::new(reads);
        let chunk_of = |b: u64| read_of.of(b) as u64;
        // This scan's share of the scan buffers, in bytes of the reads it holds (edges plus
        // weights), so that a sparse level's many short reads fly together: at least the chunk
        // in use and one read ahead, whatever their size.
        let (_active, scans) = ActiveScan::enter(&self.active_scans);
        let per_block = BLOCK_SIZE as u64 * if want_w { 3 } else { 1 };
        let share = self.scan_reserve / scans as u64;
        let bytes_of = |c: u64| (reads[c as usize].end - reads[c as usize].start) * per_block;
        // Bytes of the chunks read or being read, counted as chunks are issued and recycled.
        let held = std::cell::Cell::new(0u64);
        let room = |loaded: &BTreeMap<u64, Chunk>, issued: &HashSet<u64>, c: u64| {
            loaded.len() + issued.len() < 2 || held.get() + bytes_of(c) <= share
        };
        // How many lists of the range still need each chunk: a chunk is read only if some list
        // needs it and released as soon as the last one is visited.
        let mut uses = plan.uses.clone();
        let chunk_blocks = |c: u64| {
            let r = &reads[c as usize];
            (r.start, r.end - r.start)
        };
        struct Chunk {
            edges: Option<AlignedBuf>,
            weights: Option<AlignedBuf>,
            /// Checked against the block checksums and the vertex count: done when the chunk is
            /// first used, not when it lands, so that its bytes are still in the core's cache
            /// when its lists are summed (reads ahead land together, more than the cache holds).
            checked: bool,
        }
        // Checks chunk `c`'s blocks (checksums; neighbour ids of the edge blocks) once.
        let check = |c: u64, ch: &mut Chunk| -> Result<()> {
            if ch.checked {
                return Ok(());
            }
            let (f, _) = chunk_blocks(c);
            if let Some(e) = &ch.edges {
                self.check_scan_read(&lay, f, e, ch.weights.as_ref())?;
            }
            ch.checked = true;
            Ok(())
        };
        // Counts the events after which this scan can read further ahead (a chunk recycled
        // frees share, completed reads free depth), so that the read-ahead between lists runs
        // only when one happened. Room that other scans free in the engine's shared budget is
        // taken at this scan's next event, or before its next wait at the latest.
        let progress = std::cell::Cell::new(0u64);
        let mut ahead_at = u64::MAX;
        // Hands used chunk `c`'s buffers back to the pools.
        let recycle = |c: u64, ch: Chunk| {
            progress.set(progress.get() + 1);
            held.set(held.get() - bytes_of(c));
            if let Some(b) = ch.edges {
                self.scan_edges.give(b);
            }
            if let Some(b) = ch.weights {
                self.scan_weights.give(b);
            }
        };
        let mut loaded: BTreeMap<u64, Chunk> = BTreeMap::new();
        let mut pending: HashMap<u64, Chunk> = HashMap::default();
        let mut issued: HashSet<u64> = HashSet::default();
        let mut next_issue = 0u64;
        let mut session = self.engine.session()?;
        let mut done: Vec<Completion> = Vec::new();
        let mut assembled: Vec<u32> = Vec::new();
        let mut wassembled: Vec<f64> = Vec::new();
        let reads_per_chunk = if want_w { 2 } else { 1 };

        // Submits both reads of chunk `c`.
        let issue = |session: &mut Session<'_>, c: u64| -> Result<()> {
            let (f, n) = chunk_blocks(c);
            held.set(held.get() + bytes_of(c));
            self.submit_scan_read(session, &lay, c, f..f + n)
        };

        // Keeps up to SCAN_DEPTH reads in flight ahead of the one being used, within the share.
        let read_ahead = |session: &mut Session<'_>,
                          loaded: &BTreeMap<u64, Chunk>,
                          issued: &mut HashSet<u64>,
                          next_issue: &mut u64,
                          uses: &[u32]|
         -> Result<()> {
            while *next_issue < chunks
                && session.in_flight() < SCAN_DEPTH * reads_per_chunk
                && room(loaded, issued, *next_issue)
            {
                if uses[*next_issue as usize] > 0
                    && !loaded.contains_key(next_issue)
                    && !issued.contains(next_issue)
                {
                    if !session.has_room() {
                        break;
                    }
                    issue(session, *next_issue)?;
                    issued.insert(*next_issue);
                }
                *next_issue += 1;
            }
            // The lists of the chunks already loaded are visited next: the reads ahead must be
            // at the device meanwhile, not queued until the next wait.
            session.flush()
        };

        let mut index = lay.idx.cursor(dense);
        let mut next = 0;
        while let Some(&v) = wanted.get(next) {
            next += 1;
            let s = lay.span_of(index.entry(v));
            if s.deg == 0 {
                visit(v, &[], want_w.then_some(&[]));
                continue;
            }
            let (c0, c1) = (chunk_of(s.e_first), chunk_of(s.e_last));
            // A list spanning chunks is copied chunk by chunk, each chunk dropped once copied
            // (unless a later list needs it), so a hub never holds all of its chunks at once.
            let pieces = c0 != c1;
            let end = s.start + s.deg as u64;
            let list_bytes = assembly_bytes(s.deg, want_w);
            let loan = pieces.then(|| self.lists.lend(list_bytes));
            if pieces {
                reserve_assembly(v, s.deg, want_w, &mut assembled, &mut wassembled)?;
            }
            // The chunks waited for in turn: all of a one-chunk list's, or the next piece's.
            let mut piece = c0;
            loop {
                let (want_lo, want_hi) = if pieces { (piece, piece) } else { (c0, c1) };
                loop {
                    if (want_lo..=want_hi).all(|c| loaded.contains_key(&c)) {
                        break;
                    }
                    let missing = (want_lo..=want_hi)
                        .find(|c| !loaded.contains_key(c) && !issued.contains(c));
                    if let Some(c) = missing {
                        if session.has_room() {
                            issue(&mut session, c)?;
                            issued.insert(c);
                            if c >= next_issue {
                                next_issue = c + 1;
                            }
                            continue;
                        }
                    }
                    read_ahead(&mut session, &loaded, &mut issued, &mut next_issue, &uses)?;
                    self.scan_high_water
                        .fetch_max(held.get(), Ordering::Relaxed);
                    session.wait(|c| done.push(c))?;
                    progress.set(progress.get() + 1);
                    for c in done.drain(..) {
                        self.landed(&c)?;
                        let idx = c.tag >> 1;
                        let e = pending.entry(idx).or_insert(Chunk {
                            edges: None,
                            weights: None,
                            checked: false,
                        });
                        if c.tag & 1 == 0 {
                            e.edges = Some(c.buf);
                        } else {
                            e.weights = Some(c.buf);
                        }
                        if e.edges.is_some() && (e.weights.is_some() || !want_w) {
                            let ch = pending.remove(&idx).expect("present");
                            issued.remove(&idx);
                            loaded.insert(idx, ch);
                        }
                    }
                }
                if ahead_at != progress.get() {
                    ahead_at = progress.get();
                    read_ahead(&mut session, &loaded, &mut issued, &mut next_issue, &uses)?;
                }
                if !pieces {
                    break;
                }
                // Copy this chunk's part of the list, then let the chunk go if nothing later
                // needs it.
                let ch = loaded.get_mut(&piece).expect("waited for");
                check(piece, ch)?;
                let (f, n) = chunk_blocks(piece);
                let c_lo = (f - lay.e0) * SLOTS;
                let c_hi = c_lo + n * SLOTS;
                let (a, z) = (s.start.max(c_lo), end.min(c_hi));
                let span = (a - c_lo) as usize..(z - c_lo) as usize;
                let e = ch.edges.as_ref().expect("loaded chunks have edges");
                assembled.extend_from_slice(&e.as_u32s()[span.clone()]);
                if let Some(w) = &ch.weights {
                    wassembled.extend_from_slice(&w.as_f64s()[span]);
                }
                let u = &mut uses[piece as usize];
                *u -= 1;
                if *u == 0 {
                    if let Some(ch) = loaded.remove(&piece) {
                        recycle(piece, ch);
                    }
                }
                if piece == c1 {
                    break;
                }
                piece += 1;
            }
            if pieces {
                visit(v, &assembled, want_w.then_some(&wassembled[..]));
                // A hub's capacity is not kept for the small lists that follow.
                if assembled.capacity() * 4 > SCAN_ASSEMBLY_KEEP {
                    assembled = Vec::new();
                    wassembled = Vec::new();
                }
                drop(loan);
            } else {
                // All of v's list is in chunk c0, and so are most of the lists after it: they
                // are visited here in one run, without the bookkeeping above (which cost more
                // than a short list's sum).
                let ch = loaded.get_mut(&c0).expect("waited for");
                check(c0, ch)?;
                let ids = ch
                    .edges
                    .as_ref()
                    .expect("loaded chunks have edges")
                    .as_u32s();
                let weights = ch.weights.as_ref().map(|w| w.as_f64s());
                let (f, n) = chunk_blocks(c0);
                let c_lo = (f - lay.e0) * SLOTS;
                let c_hi = c_lo + n * SLOTS;
                let (mut v, mut start, mut deg) = (v, s.start, s.deg as u64);
                let mut lists = 0;
                loop {
                    let at = (start - c_lo) as usize..(start - c_lo + deg) as usize;
                    visit(v, &ids[at.clone()], weights.map(|w| &w[at]));
                    lists += 1;
                    // The next list, if it lies in this chunk too (empty ones are visited on
                    // the way).
                    let mut in_chunk = None;
                    while let Some(&w) = wanted.get(next) {
                        let (w_start, w_deg) = index.entry(w);
                        if w_deg == 0 {
                            visit(w, &[], want_w.then_some(&[]));
                        } else if c_lo <= w_start && w_start + w_deg as u64 <= c_hi {
                            in_chunk = Some((w, w_start, w_deg as u64));
                        } else {
                            break;
                        }
                        next += 1;
                        if in_chunk.is_some() {
                            break;
                        }
                    }
                    match in_chunk {
                        Some(list) => (v, start, deg) = list,
                        None => break,
                    }
                }
                let u = &mut uses[c0 as usize];
                *u -= lists;
                if *u == 0 {
                    if let Some(ch) = loaded.remove(&c0) {
                        recycle(c0, ch);
                    }
                }
            }
            // While over budget, drop the oldest chunks behind this list that later lists still
            // need (they are re-read then).
            while loaded.len() + issued.len() > 2
                && held.get() > share
                && loaded.range(..c0).next().is_some()
            {
                if let Some((c, ch)) = loaded.pop_first() {
                    recycle(c, ch);
                }
            }
        }
        for (c, ch) in std::mem::take(&mut loaded) {
            recycle(c, ch);
        }
        Ok(())
    }
}

impl GraphStore for OutOfCoreStore {
    fn shape(&self) -> GraphShape {
        self.file.shape()
    }

    fn degree(&self, dir: Direction, v: u32) -> u64 {
        self.file.vertex_index(dir).degree(v) as u64
    }

    fn input_id(&self, v: u32) -> u64 {
        self.file.ids.input_id(v)
    }

    fn internal_id(&self, id: u64) -> Option<u32> {
        self.file.ids.internal_id(id)
    }

    fn key_runs(&self) -> Vec<Range<u32>> {
        self.file.ids.key_runs()
    }

    fn vertex_keys(&self) -> Option<&VertexKeys> {
        self.keys.as_ref()
    }

    fn for_each_list<F>(
        &self,
        dir: Direction,
        vertices: &[u32],
        order: FetchOrder,
        want_weights: bool,
        visit: F,
    ) -> Result<(), StoreError>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        let mut visit = visit;
        self.fetch(dir, vertices, order, want_weights, None, |v, ns, ws, _| {
            visit(v, ns, ws)
        })
    }

    fn for_each_list_spreading<F>(
        &self,
        dir: Direction,
        vertices: &[u32],
        want_weights: bool,
        visit: F,
        left: &mut Vec<u32>,
    ) -> Result<(), StoreError>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>, &mut Vec<u32>),
    {
        self.fetch(
            dir,
            vertices,
            FetchOrder::ByBlock,
            want_weights,
            Some(left),
            visit,
        )
    }

    fn clustered(&self) -> bool {
        self.file.superblock.order == IdOrder::Locality
    }

    fn scan_lists<F>(
        &self,
        dir: Direction,
        range: Range<u32>,
        want_weights: bool,
        visit: F,
    ) -> Result<(), StoreError>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        self.scan(dir, range, want_weights, |_| true, visit)
    }

    fn scan_lists_where<W, F>(
        &self,
        dir: Direction,
        range: Range<u32>,
        want_weights: bool,
        want: W,
        visit: F,
    ) -> Result<(), StoreError>
    where
        W: Fn(u32) -> bool,
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        self.scan(dir, range, want_weights, want, visit)
    }

    fn scan_all_shared<F>(
        &self,
        dir: Direction,
        want_weights: bool,
        run_workers: &RunWorkers<'_>,
        stop: &(dyn Fn() -> bool + Sync),
        visit: &F,
    ) -> Result<bool, StoreError>
    where
        F: Fn(u32, &[u32], Option<&[f64]>) + Sync,
    {
        self.shared_pass(dir, want_weights, run_workers, stop, visit)
    }

    fn edge_block(&self, dir: Direction, v: u32) -> u64 {
        // Absolute block number, as the in-memory store answers.
        self.file.edge_section(dir).first_block() + self.file.vertex_index(dir).block_of(v)
    }

    fn list_offset(&self, dir: Direction, v: u32) -> Option<u64> {
        Some(self.file.vertex_index(dir).start(v))
    }

    fn list_start_block(&self, dir: Direction, v: u32) -> (u64, u64) {
        let (start, deg) = self.file.vertex_index(dir).entry(v);
        (
            self.file.edge_section(dir).first_block() + start / SLOTS,
            deg as u64,
        )
    }

    fn each_list_start<W, F>(&self, dir: Direction, range: Range<u32>, want: W, mut visit: F)
    where
        W: Fn(u32) -> bool,
        F: FnMut(u64, u64),
    {
        // Decoding whole groups costs a few instructions an entry against a few dozen for an
        // entry looked up alone; a group is decoded only when one of its vertices is wanted.
        let first_block = self.file.edge_section(dir).first_block();
        let mut index = self.file.vertex_index(dir).cursor(true);
        for v in range.filter(|&v| want(v)) {
            if let Some((start, deg)) = index.list(v) {
                visit(first_block + start / SLOTS, deg as u64);
            }
        }
    }

    fn io_stats(&self) -> IoStats {
        self.counters.snapshot()
    }

    fn device_busy_ms(&self) -> Option<u64> {
        self.device.as_ref()?.busy_ms()
    }

    fn read_model(&self) -> Option<ReadModel> {
        Some(self.model())
    }

    fn describe_reader(&self) -> String {
        let lookups_in_cache = self.file.lookup_bytes() - self.lookups_beyond_cache;
        let beyond: Vec<String> = [
            (self.lookups_beyond_cache, "of vertex index and ids"),
            (self.scan_beyond_cache, "of scan buffers"),
        ]
        .iter()
        .filter(|(b, _)| *b > 0)
        .map(|(b, what)| format!("{} more {what}", base::format_size(*b)))
        .collect();
        format!(
            "out of core ({}, depth {}, cache {}: {} of vertex index and ids, {} of blocks, \
             {} of scan buffers{}{})",
            self.engine.describe(),
            self.engine.depth(),
            base::format_size(
                lookups_in_cache
                    + self.cache.capacity_bytes()
                    + self.scan_reserve
                    + self.lists.reserve()
                    - self.scan_beyond_cache
            ),
            base::format_size(lookups_in_cache),
            base::format_size(self.cache.capacity_bytes()),
            base::format_size(self.scan_reserve - self.scan_beyond_cache),
            match self.lists.reserve() {
                0 => String::new(),
                r => format!(", {} of long lists", base::format_size(r)),
            },
            if beyond.is_empty() {
                String::new()
            } else {
                format!("; and beyond it {}", beyond.join(", "))
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_prefix_ends_at_the_trailing_filler_or_is_empty() {
        let e = EMPTY_SLOT;
        assert_eq!(clean_prefix(&[1, 2, 3]), 3);
        assert_eq!(clean_prefix(&[1, 2, e, e]), 2);
        assert_eq!(clean_prefix(&[e, e]), 0);
        assert_eq!(clean_prefix(&[1, e, 2, e]), 0);
        assert_eq!(clean_prefix(&[]), 0);
    }

    #[test]
    fn scan_reads_are_powers_of_two_that_fit_the_buffers_eight_times() {
        const MIB: u64 = 1 << 20;
        // 4.4 MiB of buffers (a 3 % cache of R-MAT scale 22): 512 KiB reads, not 1 MiB.
        assert_eq!(scan_chunk_blocks(4 * MIB + 400 * 1024), 128);
        assert_eq!(scan_chunk_blocks(SCAN_RESERVE_FLOOR), 64);
        assert_eq!(scan_chunk_blocks(SCAN_RESERVE_MAX), SCAN_CHUNK_MAX_BLOCKS);
        assert_eq!(scan_chunk_blocks(0), SCAN_CHUNK_MIN_BLOCKS);
        assert_eq!(scan_chunk_blocks(u64::MAX), SCAN_CHUNK_MAX_BLOCKS);
        for reserve in (0..=12 * MIB).step_by(37 * 1024) {
            let c = scan_chunk_blocks(reserve);
            assert!(c.is_power_of_two(), "{reserve}: {c}");
            assert!((SCAN_CHUNK_MIN_BLOCKS..=SCAN_CHUNK_MAX_BLOCKS).contains(&c));
            if c > SCAN_CHUNK_MIN_BLOCKS {
                assert!(
                    c * BLOCK_SIZE as u64 * SCAN_CHUNKS <= reserve,
                    "{reserve}: {c}"
                );
            }
            if c < SCAN_CHUNK_MAX_BLOCKS {
                // The next power of two would not fit eight times.
                assert!(
                    2 * c * BLOCK_SIZE as u64 * SCAN_CHUNKS > reserve,
                    "{reserve}: {c}"
                );
            }
        }
    }
}
