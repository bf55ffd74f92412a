//! Loading a graph into the memory-node pool (DMG §4.2.3) and the layout metadata the catalog
//! keeps about it.
//!
//! The source is any opened [`GraphStore`] (in practice the block file the importer just wrote,
//! kept as the durable copy: memory nodes are volatile). Steps:
//!
//! 1. Tiny chunks (DMG §4.4.1): 1024 contiguous vertex ranges with their vertex and edge counts,
//!    assembled into one partition per memory node balancing `8(p−1)|V_i| + |E_i|`.
//! 2. Per direction, one index array of 32-byte entries ([`layout`](super::layout)),
//!    range-partitioned: partition `i` lives on memory node `i`, behind a 32-byte header that
//!    lets a later reader check the node still holds this graph.
//! 3. Loader threads take batches of consecutive vertices (never crossing a partition). Lists of
//!    at most 7 neighbours go in place; the batch's longer lists are packed into one region on a
//!    memory node chosen round-robin per batch, so consecutive out-of-place lists are contiguous.
//!    Each batch ends with one WRITE of its index entries.
//! 4. Commit. Every region is allocated *leased* to the loader's connection and *owned* by the
//!    load's nonce (`ALLOC_OWNED`), and the layout records each node's epoch, so that DROP and
//!    REPLACE free only what is still this graph's: a node restarted since the load (which hands
//!    out the same addresses again) or another graph's region refuses the free. Leased
//!    ([`lease`](super::lease)), so a loader that dies before committing (killed, or its
//!    connection cut) leaves nothing allocated. [`load_pending`] returns before the commit, so
//!    the caller can record the layout in its catalog first: a crash between the two leaves a
//!    catalog entry whose regions are gone, which opening reports ("no longer holds this
//!    graph"), never memory that nothing refers to.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::addr::GlobalAddr;
use super::descriptor::GraphDescriptor;
use super::layout::{self, ENTRY_BYTES};
use super::protocol::{Message, VerbReply};
use super::region::held_bytes;
use super::tcp::{TcpOptions, TcpTransport};
use super::transport::{Batch, Transport};
use crate::error::{Result, StoreError};
use crate::store::{Direction, GraphStore};

/// Layout format written into [`DmLayout::version`] (2: entries and lists carry checksums).
pub const LAYOUT_VERSION: u32 = 2;
/// Number of tiny chunks recorded at load (fewer when the graph has fewer vertices).
pub const TINY_CHUNKS: u32 = 1024;
/// Vertices per load batch: large enough that each batch is a few big writes.
const LOAD_BATCH: u32 = 4096;
/// Largest single WRITE the loader sends (well under the frame limit).
const WRITE_PIECE: usize = 8 << 20;
/// Magic at the start of every index region's header.
pub const HEADER_MAGIC: [u8; 8] = *b"FRDMGv1\0";

/// One memory node of the pool as the layout knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeMeta {
    /// `host:port`.
    pub addr: String,
    /// The id the node reported (the high 16 bits of its addresses).
    pub id: u16,
    /// The node's epoch when the graph was loaded (`None`: loaded before epochs existed).
    #[serde(default)]
    pub epoch: Option<u64>,
}

/// One contiguous tiny chunk of vertices and its counts (DMG §4.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TinyChunk {
    /// First vertex (internal id).
    pub first: u32,
    /// Vertices in the chunk.
    pub vertices: u32,
    /// Arcs of those vertices (out plus in for directed graphs).
    pub edges: u64,
}

/// The layout of one direction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirLayout {
    /// Start (raw global address) of each partition's index region; entries follow its header.
    pub index: Vec<u64>,
    /// Vertices whose list is stored in place.
    pub in_place: u64,
    /// Bytes of out-of-place list data.
    pub out_of_place_bytes: u64,
}

/// Everything needed to read a DM graph back; stored as JSON in `GraphMeta.extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DmLayout {
    pub version: u32,
    /// Random tag written into every index header, checked at open.
    pub nonce: u64,
    pub vertices: u32,
    pub directed: bool,
    pub weighted: bool,
    /// The memory nodes; partition `i` of every index is on node `i`.
    pub nodes: Vec<NodeMeta>,
    /// Partition boundaries: partition `i` is vertices `bounds[i]..bounds[i+1]`.
    pub bounds: Vec<u32>,
    pub out: DirLayout,
    /// The in-edge layout of directed graphs.
    pub inn: Option<DirLayout>,
    pub tiny_chunks: Vec<TinyChunk>,
    /// Every region allocated for the graph (raw addresses), to free it on DROP.
    pub regions: Vec<u64>,
    /// The bytes each of `regions` holds on its node, in the same order (empty for graphs
    /// loaded before sizes were recorded), so that a DROP that cannot free them says how much
    /// is left.
    #[serde(default)]
    pub region_bytes: Vec<u64>,
    /// Where the graph descriptor is (raw address), from which a compute node opens the graph
    /// without the block file; `None` for graphs loaded before descriptors existed.
    #[serde(default)]
    pub descriptor: Option<u64>,
}

impl DmLayout {
    /// The layout of `dir` (undirected graphs answer `In` with `Out`).
    pub fn dir(&self, dir: Direction) -> &DirLayout {
        match (dir, &self.inn) {
            (Direction::In, Some(l)) => l,
            _ => &self.out,
        }
    }

    /// Fraction of vertices whose `dir` list is in place.
    pub fn in_place_fraction(&self, dir: Direction) -> f64 {
        if self.vertices == 0 {
            1.0
        } else {
            self.dir(dir).in_place as f64 / self.vertices as f64
        }
    }

    /// Remote reads a vertex costs when fetched alone: one for the entry, one more when the
    /// list is out of place (before merging and batching, which only lower it).
    pub fn expected_reads_per_vertex(&self, dir: Direction) -> f64 {
        2.0 - self.in_place_fraction(dir)
    }

    /// The layout as catalog JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// Reads the layout back from catalog JSON, checking it is self-consistent.
    pub fn from_json(v: &serde_json::Value) -> Result<DmLayout> {
        let l: DmLayout = serde_json::from_value(v.clone()).map_err(|e| {
            StoreError::Other(format!("DM layout in the catalog is unreadable: {e}"))
        })?;
        if l.version != LAYOUT_VERSION {
            return Err(StoreError::Other(format!(
                "the graph was loaded into memory nodes with layout version {} (this frontier reads {LAYOUT_VERSION}, whose lists carry checksums); re-create it with CREATE OR REPLACE GRAPH ... STORAGE dm",
                l.version
            )));
        }
        let p = l.nodes.len();
        let ok = l.version == LAYOUT_VERSION
            && p > 0
            && l.bounds.len() == p + 1
            && l.bounds.first() == Some(&0)
            && l.bounds.last() == Some(&l.vertices)
            && l.bounds.windows(2).all(|w| w[0] <= w[1])
            && l.out.index.len() == p
            && l.inn.as_ref().is_none_or(|i| i.index.len() == p)
            && l.inn.is_some() == l.directed;
        if !ok {
            return Err(StoreError::Other(
                "DM layout in the catalog is inconsistent; CREATE OR REPLACE the graph".into(),
            ));
        }
        Ok(l)
    }

    /// The partition (memory node position) holding vertex `v`'s entries.
    pub fn partition_of(&self, v: u32) -> usize {
        self.bounds[1..].partition_point(|&b| b <= v)
    }

    /// Address of `v`'s entry in direction `dir`.
    pub fn entry_addr(&self, dir: Direction, v: u32) -> Option<GlobalAddr> {
        let p = self.partition_of(v);
        let base = GlobalAddr::from_raw(*self.dir(dir).index.get(p)?);
        base.checked_add(ENTRY_BYTES as u64 * (1 + (v - self.bounds[p]) as u64))
    }
}

/// Where and how to connect.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// `host:port` of each memory node.
    pub nodes: Vec<String>,
    /// The shared token.
    pub token: String,
    pub tcp: TcpOptions,
}

/// Connects to every node and checks their ids are distinct (addresses would collide).
pub fn connect_all(cfg: &PoolConfig) -> Result<Vec<TcpTransport>> {
    if cfg.nodes.is_empty() {
        return Err(StoreError::Other("no memory nodes given".into()));
    }
    let mut conns: Vec<TcpTransport> = Vec::with_capacity(cfg.nodes.len());
    for addr in &cfg.nodes {
        let t = TcpTransport::connect(addr.as_str(), &cfg.token, cfg.tcp).map_err(|e| match e {
            StoreError::Other(m) => StoreError::Remote {
                node: addr.clone(),
                message: m,
            },
            e => e,
        })?;
        if let Some(other) = conns.iter().find(|c| c.node_id() == t.node_id()) {
            return Err(StoreError::Remote {
                node: t.node_name().to_string(),
                message: format!(
                    "has the same node id as {}; start each `frontier memnode` with a distinct --node-id",
                    other.node_name()
                ),
            });
        }
        conns.push(t);
    }
    Ok(conns)
}

/// Tiny chunks of a store: `TINY_CHUNKS` contiguous ranges with vertex and arc counts.
pub fn tiny_chunks<S: GraphStore>(store: &S) -> Vec<TinyChunk> {
    let sh = store.shape();
    let n = sh.vertices;
    let per = n.div_ceil(TINY_CHUNKS).max(1);
    let mut out = Vec::new();
    let mut first = 0u32;
    while first < n {
        let end = first.saturating_add(per).min(n);
        let mut edges = 0u64;
        for v in first..end {
            edges += store.degree(Direction::Out, v);
            if sh.directed {
                edges += store.degree(Direction::In, v);
            }
        }
        out.push(TinyChunk {
            first,
            vertices: end - first,
            edges,
        });
        first = end;
    }
    out
}

/// Assembles tiny chunks into `p` contiguous partitions balancing `8(p−1)|V_i| + |E_i|`;
/// returns the `p + 1` boundaries.
pub fn partition(chunks: &[TinyChunk], vertices: u32, p: usize) -> Vec<u32> {
    let p = p.max(1);
    let cost = |c: &TinyChunk| 8 * (p as u64 - 1) * c.vertices as u64 + c.edges;
    let total: u64 = chunks.iter().map(cost).sum();
    let mut bounds = vec![0u32];
    let mut acc = 0u64;
    for c in chunks {
        // Cut before this chunk when the running total has reached the next share.
        while bounds.len() < p && acc > 0 && acc * p as u64 >= total * bounds.len() as u64 {
            bounds.push(c.first);
        }
        acc += cost(c);
    }
    while bounds.len() < p + 1 {
        bounds.push(vertices);
    }
    bounds
}

fn nonce() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut x = t ^ ((std::process::id() as u64) << 32) ^ 0x9E37_79B9_7F4A_7C15;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    // Never 0, which owns nothing on a memory node (`region::NO_OWNER`).
    (x ^ (x >> 33)).max(1)
}

/// The 32-byte header in front of each index partition.
pub fn header(nonce: u64, first: u32, count: u32, dir: Direction) -> [u8; ENTRY_BYTES] {
    let mut h = [0u8; ENTRY_BYTES];
    h[..8].copy_from_slice(&HEADER_MAGIC);
    h[8..16].copy_from_slice(&nonce.to_le_bytes());
    h[16..20].copy_from_slice(&first.to_le_bytes());
    h[20..24].copy_from_slice(&count.to_le_bytes());
    h[24] = (dir == Direction::In) as u8;
    h
}

fn write_verbs(t: &TcpTransport, addr: GlobalAddr, data: &[u8]) -> Result<()> {
    let mut off = 0usize;
    let mut tickets = Vec::new();
    while off < data.len() {
        let end = (off + WRITE_PIECE).min(data.len());
        let a = addr
            .checked_add(off as u64)
            .ok_or_else(|| StoreError::Other("address overflow while loading".into()))?;
        let mut b = Batch::new();
        b.write(a, data[off..end].to_vec());
        tickets.push(t.submit_batch(b)?);
        off = end;
    }
    for tk in tickets {
        for r in tk.wait_batch()? {
            if let VerbReply::Failed { code, message } = r {
                return Err(StoreError::Remote {
                    node: t.node_name().to_string(),
                    message: format!("write failed while loading: {message} ({code:?})"),
                });
            }
        }
    }
    Ok(())
}

/// A graph loaded into the pool whose regions are still leased to the loader's connections:
/// dropping it without [`commit`](PendingLoad::commit) frees every one of them.
pub struct PendingLoad {
    layout: DmLayout,
    conns: Vec<TcpTransport>,
}

impl PendingLoad {
    /// The layout to record in the catalog.
    pub fn layout(&self) -> &DmLayout {
        &self.layout
    }

    /// Makes every region permanent (pipelined, one COMMIT per region). On failure every
    /// region is freed, so nothing is left half committed.
    pub fn commit(self) -> Result<DmLayout> {
        let mut tickets = Vec::with_capacity(self.layout.regions.len());
        let mut result = Ok(());
        for &r in &self.layout.regions {
            let a = GlobalAddr::from_raw(r);
            match self.conns.iter().find(|c| c.node_id() == a.node()) {
                Some(c) => match c.submit(Message::Commit { addr: a }) {
                    Ok(t) => tickets.push((c.node_name().to_string(), t)),
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                },
                None => {
                    result = Err(StoreError::Other(format!(
                        "region {a} names no memory node of the load"
                    )));
                    break;
                }
            }
        }
        for (node, t) in tickets {
            let r = t.wait().and_then(|m| match m {
                Message::Done => Ok(()),
                m => Err(StoreError::Remote {
                    node,
                    message: format!("unexpected reply to COMMIT: {m:?}"),
                }),
            });
            if result.is_ok() {
                result = r;
            }
        }
        match result {
            Ok(()) => Ok(self.layout),
            Err(e) => {
                free_regions(&self.conns, &self.layout.regions, self.layout.nonce);
                Err(e)
            }
        }
    }
}

/// Loads `store` into the pool and commits it (see [`load_pending`]).
pub fn load<S: GraphStore>(store: &S, cfg: &PoolConfig, threads: usize) -> Result<DmLayout> {
    load_pending(store, cfg, threads)?.commit()
}

/// Loads `store` into the pool with `threads` loader threads. Every region allocated is in the
/// layout, leased until [`PendingLoad::commit`]; freed again if loading fails.
pub fn load_pending<S: GraphStore>(
    store: &S,
    cfg: &PoolConfig,
    threads: usize,
) -> Result<PendingLoad> {
    let conns = connect_all(cfg)?;
    let sh = store.shape();
    let n = sh.vertices;
    let chunks = tiny_chunks(store);
    let bounds = partition(&chunks, n, conns.len());
    let regions = Mutex::new(Vec::<(u64, u64)>::new());
    let nonce = nonce();
    let result = load_inner(store, &conns, &bounds, threads, nonce, &regions);
    let (regions, region_bytes): (Vec<u64>, Vec<u64>) = regions
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .unzip();
    match result {
        Ok((out, inn)) => {
            let layout = DmLayout {
                version: LAYOUT_VERSION,
                nonce,
                vertices: n,
                directed: sh.directed,
                weighted: sh.weighted,
                nodes: cfg
                    .nodes
                    .iter()
                    .zip(&conns)
                    .map(|(a, c)| NodeMeta {
                        addr: a.clone(),
                        id: c.node_id(),
                        epoch: Some(c.epoch()),
                    })
                    .collect(),
                bounds,
                out,
                inn,
                tiny_chunks: chunks,
                regions,
                region_bytes,
                descriptor: None,
            };
            let mut pending = PendingLoad { layout, conns };
            // Dropping `pending` on failure frees every region leased so far.
            let (desc, bytes) =
                GraphDescriptor::of(store, &pending.layout).store(&pending.conns[0], nonce)?;
            pending.layout.regions.push(desc.raw());
            pending
                .layout
                .region_bytes
                .push(held_bytes(bytes).unwrap_or(bytes));
            pending.layout.descriptor = Some(desc.raw());
            Ok(pending)
        }
        Err(e) => {
            free_regions(&conns, &regions, nonce);
            Err(e)
        }
    }
}

/// Frees a failed load's regions over its own connections: still leased ones, and committed
/// ones (owned by the load's nonce, in the epoch these connections see).
fn free_regions(conns: &[TcpTransport], regions: &[u64], owner: u64) {
    for &r in regions {
        let a = GlobalAddr::from_raw(r);
        if let Some(c) = conns.iter().find(|c| c.node_id() == a.node()) {
            let _ = c.free_owned(a, c.epoch(), owner);
        }
    }
}

type DirResult = (DirLayout, Option<DirLayout>);

fn load_inner<S: GraphStore>(
    store: &S,
    conns: &[TcpTransport],
    bounds: &[u32],
    threads: usize,
    nonce: u64,
    regions: &Mutex<Vec<(u64, u64)>>,
) -> Result<DirResult> {
    let sh = store.shape();
    let dirs: &[Direction] = if sh.directed {
        &[Direction::Out, Direction::In]
    } else {
        &[Direction::Out]
    };
    let mut layouts = Vec::new();
    for &dir in dirs {
        // Index regions, one per partition, each with its header.
        let mut index = Vec::with_capacity(conns.len());
        for (p, c) in conns.iter().enumerate() {
            let count = bounds[p + 1] - bounds[p];
            let bytes = ENTRY_BYTES as u64 * (1 + count as u64);
            let a = c.alloc_owned(bytes, nonce)?;
            regions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((a.raw(), held_bytes(bytes).unwrap_or(bytes)));
            c.write(a, &header(nonce, bounds[p], count, dir))?;
            index.push(a);
        }
        // Batches of consecutive vertices that never cross a partition.
        let mut batches = Vec::new();
        for p in 0..conns.len() {
            let mut s = bounds[p];
            while s < bounds[p + 1] {
                let e = s.saturating_add(LOAD_BATCH).min(bounds[p + 1]);
                batches.push((p, s, e));
                s = e;
            }
        }
        let next = AtomicUsize::new(0);
        let in_place = Arc::new(AtomicUsize::new(0));
        let oop_bytes = Arc::new(Mutex::new(0u64));
        let failed: Mutex<Option<StoreError>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..threads.max(1) {
                scope.spawn(|| loop {
                    if failed.lock().map(|f| f.is_some()).unwrap_or(true) {
                        return;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(p, s, e)) = batches.get(k) else {
                        return;
                    };
                    let edge_node = &conns[k % conns.len()];
                    let r = load_batch(
                        store, dir, s, e, bounds, &conns[p], index[p], bounds[p], edge_node, nonce,
                        regions,
                    );
                    match r {
                        Ok((ip, bytes)) => {
                            in_place.fetch_add(ip, Ordering::Relaxed);
                            if let Ok(mut b) = oop_bytes.lock() {
                                *b += bytes;
                            }
                        }
                        Err(err) => {
                            if let Ok(mut f) = failed.lock() {
                                f.get_or_insert(err);
                            }
                            return;
                        }
                    }
                });
            }
        });
        if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(e);
        }
        let bytes = *oop_bytes.lock().unwrap_or_else(|e| e.into_inner());
        layouts.push(DirLayout {
            index: index.iter().map(|a| a.raw()).collect(),
            in_place: in_place.load(Ordering::Relaxed) as u64,
            out_of_place_bytes: bytes,
        });
    }
    let mut it = layouts.into_iter();
    let out = it
        .next()
        .ok_or_else(|| StoreError::Other("no direction loaded".into()))?;
    Ok((out, it.next()))
}

/// Loads vertices `s..e` of one direction; returns (in-place vertices, out-of-place bytes).
#[allow(clippy::too_many_arguments)]
fn load_batch<S: GraphStore>(
    store: &S,
    dir: Direction,
    s: u32,
    e: u32,
    bounds: &[u32],
    index_node: &TcpTransport,
    index_base: GlobalAddr,
    part_first: u32,
    edge_node: &TcpTransport,
    owner: u64,
    regions: &Mutex<Vec<(u64, u64)>>,
) -> Result<(usize, u64)> {
    let weighted = store.shape().weighted;
    let cap = layout::in_place_capacity(weighted) as u64;
    // Out-of-place bytes of the batch, to allocate one region for all of them.
    let mut total = 0u64;
    for v in s..e {
        let d = store.degree(dir, v);
        if d > cap {
            if d > layout::MAX_DEGREE as u64 {
                return Err(StoreError::Other(format!(
                    "vertex {v} has degree {d}, beyond the DM layout's limit of {}",
                    layout::MAX_DEGREE
                )));
            }
            total += layout::out_of_place_bytes(d as u32, weighted);
        }
    }
    let region = if total > 0 {
        let a = edge_node.alloc_owned(total, owner)?;
        regions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((a.raw(), held_bytes(total).unwrap_or(total)));
        Some(a)
    } else {
        None
    };
    let mut entries = Vec::with_capacity((e - s) as usize * ENTRY_BYTES);
    let mut data = Vec::with_capacity(total as usize);
    let mut in_place = 0usize;
    let mut err = None;
    store.scan_lists(dir, s..e, weighted, |v, ns, ws| {
        if err.is_some() {
            return;
        }
        let r = if ns.len() as u64 <= cap {
            in_place += 1;
            layout::encode_in_place(ns, ws)
        } else {
            let at = region.and_then(|r| r.checked_add(data.len() as u64));
            let seg = layout::segments(ns, bounds);
            layout::push_list(&mut data, ns, ws, v, dir);
            match at {
                Some(at) => layout::encode_out_of_place(ns.len() as u32, at, &seg),
                None => {
                    err = Some(StoreError::Other(format!(
                        "vertex {v}: degree changed while loading"
                    )));
                    return;
                }
            }
        };
        match r {
            Ok(mut b) => {
                layout::seal(&mut b, v, dir);
                entries.extend_from_slice(&b)
            }
            Err(x) => err = Some(StoreError::Other(format!("vertex {v}: {x}"))),
        }
    })?;
    if let Some(e) = err {
        return Err(e);
    }
    if data.len() as u64 != total {
        return Err(StoreError::Other(
            "lists changed size while loading into memory nodes".into(),
        ));
    }
    if let Some(r) = region {
        write_verbs(edge_node, r, &data)?;
    }
    let at = index_base
        .checked_add(ENTRY_BYTES as u64 * (1 + (s - part_first) as u64))
        .ok_or_else(|| StoreError::Other("index address overflow".into()))?;
    write_verbs(index_node, at, &entries)?;
    Ok((in_place, data.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_balance_and_cover() {
        let chunks: Vec<TinyChunk> = (0..10)
            .map(|i| TinyChunk {
                first: i * 10,
                vertices: 10,
                edges: if i == 0 { 1000 } else { 10 },
            })
            .collect();
        let b = partition(&chunks, 100, 2);
        assert_eq!(b.len(), 3);
        assert_eq!((b[0], b[2]), (0, 100));
        assert_eq!(b[1], 10, "the heavy first chunk is a partition of its own");
        assert_eq!(partition(&chunks, 100, 1), vec![0, 100]);
        assert_eq!(partition(&[], 0, 3), vec![0, 0, 0, 0]);
        let b = partition(&chunks[..1], 10, 3);
        assert_eq!(b.len(), 4);
        assert!(b.windows(2).all(|w| w[0] <= w[1]));
    }
}
