//! The in-memory graph store: the whole file is read once, sequentially, every edge and weight
//! block checked against its block checksum, and lists are then served as plain slices with no
//! locking and no per-access checks. This is the fast path for graphs that fit in memory.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

use crate::blockfile::format::{Section, BLOCK_SIZE};
use crate::blockfile::keys::VertexKeys;
use crate::blockfile::open::{GraphFile, VertexIndex};
use crate::error::{Result, StoreError};
use crate::store::{CsrView, Direction, FetchOrder, GraphShape, GraphStore, IoStats};
use crate::weights::{StoredWeights, WeightsBuilder};

/// One direction's adjacency in memory.
#[derive(Debug)]
struct Adjacency {
    targets: Vec<u32>,
    /// At f32 width when every weight is exact in f32 (`crate::weights`).
    weights: Option<StoredWeights>,
}

/// A graph held entirely in memory, loaded from a graph file.
#[derive(Debug)]
pub struct MemoryStore {
    file: GraphFile,
    keys: Option<VertexKeys>,
    out: Adjacency,
    inn: Option<Adjacency>,
    stats: IoStats,
}

/// Bytes a graph of this shape holds once loaded whole, besides its string keys: the id map
/// (8 bytes a vertex), each direction's index (12) and targets (4 an arc) and weights (at most
/// 8 an arc). Files pack the id map and indexes, so this, not the file's size, is what loading
/// costs.
pub fn loaded_bytes(vertices: u64, arcs: u64, directed: bool, weighted: bool) -> u64 {
    let dirs = if directed { 2 } else { 1 };
    let per_arc = 4 + if weighted { 8 } else { 0 };
    vertices
        .saturating_mul(8 + 12 * dirs)
        .saturating_add(arcs.saturating_mul(per_arc * dirs))
}

/// Bytes per sequential read while loading: large reads keep the device streaming.
const LOAD_CHUNK: usize = 4 << 20;

impl MemoryStore {
    /// Opens `path`, checks it (superblock, section CRCs, every edge/weight block) and loads
    /// the whole adjacency.
    pub fn load(path: impl AsRef<Path>) -> Result<MemoryStore> {
        let file = GraphFile::open(path)?;
        // The superblock and the small sections were read by `open`.
        let small = BLOCK_SIZE as u64
            + file
                .superblock
                .sections
                .iter()
                .filter(|s| {
                    use crate::blockfile::format::SectionKind::*;
                    matches!(s.kind, IdMap | OutIndex | InIndex | BlockCrcs)
                })
                .map(|s| s.length)
                .sum::<u64>();
        let mut stats = IoStats {
            bytes_read: small,
            ..IoStats::default()
        };
        let keys = VertexKeys::load(&file)?;
        stats.bytes_read += VertexKeys::file_bytes(&file);
        let mut f = File::open(&file.path).map_err(|e| StoreError::io(&file.path, e))?;
        let out = load_direction(&file, &mut f, Direction::Out, &mut stats)?;
        let inn = if file.superblock.directed {
            Some(load_direction(&file, &mut f, Direction::In, &mut stats)?)
        } else {
            None
        };
        Ok(MemoryStore {
            file,
            keys,
            out,
            inn,
            stats,
        })
    }

    /// The opened file's metadata (superblock, id map, indexes).
    pub fn graph_file(&self) -> &GraphFile {
        &self.file
    }

    #[inline]
    fn adj(&self, dir: Direction) -> (&VertexIndex, &Adjacency) {
        match (dir, &self.inn) {
            (Direction::In, Some(a)) => (self.file.index(Direction::In), a),
            _ => (&self.file.out, &self.out),
        }
    }

    /// `v`'s list and, when wanted, its weights as f64 (widened into `scratch` when narrow).
    #[inline]
    fn list<'s>(
        &'s self,
        dir: Direction,
        v: u32,
        want_weights: bool,
        scratch: &'s mut Vec<f64>,
    ) -> (&'s [u32], Option<&'s [f64]>) {
        let (idx, a) = self.adj(dir);
        let s = idx.starts[v as usize] as usize;
        let e = s + idx.degrees[v as usize] as usize;
        let w = if want_weights {
            a.weights
                .as_ref()
                .map(|w| w.as_slice().slice(s..e).widen(scratch))
        } else {
            None
        };
        (&a.targets[s..e], w)
    }

    /// Bytes per weight held in memory in direction `dir` (0 when unweighted): 4 when every
    /// weight is exact in f32, else 8.
    pub fn weight_width(&self, dir: Direction) -> usize {
        self.adj(dir)
            .1
            .weights
            .as_ref()
            .map_or(0, StoredWeights::width)
    }
}

/// Reads a section sequentially, checking each block against the block checksums, and hands
/// the bytes to `sink` chunk by chunk.
fn read_checked(
    gf: &GraphFile,
    f: &mut File,
    s: &Section,
    stats: &mut IoStats,
    mut sink: impl FnMut(&[u8]),
) -> Result<()> {
    let path = &gf.path;
    f.seek(SeekFrom::Start(s.offset))
        .map_err(|e| StoreError::io(path, e))?;
    let mut buf = vec![0u8; LOAD_CHUNK];
    let mut left = s.length;
    let mut block = s.first_block();
    let mut hasher = crc32fast::Hasher::new();
    while left > 0 {
        let n = (LOAD_CHUNK as u64).min(left) as usize;
        f.read_exact(&mut buf[..n])
            .map_err(|e| StoreError::io(path, e))?;
        for b in buf[..n].chunks(BLOCK_SIZE) {
            let want = gf.block_crcs.get(block as usize).copied();
            if want != Some(crc32fast::hash(b)) {
                return Err(StoreError::Corrupt {
                    path: path.clone(),
                    why: format!("block {block} (section {:?}) checksum mismatch", s.kind),
                });
            }
            block += 1;
        }
        hasher.update(&buf[..n]);
        stats.blocks_read += n.div_ceil(BLOCK_SIZE) as u64;
        stats.bytes_read += n as u64;
        sink(&buf[..n]);
        left -= n as u64;
    }
    if hasher.finalize() != s.crc {
        return Err(StoreError::Corrupt {
            path: path.clone(),
            why: format!("section {:?} checksum mismatch", s.kind),
        });
    }
    Ok(())
}

fn load_direction(
    gf: &GraphFile,
    f: &mut File,
    dir: Direction,
    stats: &mut IoStats,
) -> Result<Adjacency> {
    let es = *gf.edge_section(dir);
    let slots = (es.length / 4) as usize;
    let mut targets = crate::huge::with_capacity(slots);
    read_checked(gf, f, &es, stats, |b| {
        targets.extend(
            b.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        )
    })?;
    let weights = match gf.weight_section(dir) {
        Some(ws) => {
            let ws = *ws;
            let mut w = WeightsBuilder::new(slots);
            read_checked(gf, f, &ws, stats, |b| w.extend_le_bytes(b))?;
            Some(w.finish())
        }
        None => None,
    };
    // Every list must name existing vertices: checked once here so algorithms can index freely.
    let n = gf.superblock.vertices;
    let idx = gf.index(dir);
    for v in 0..idx.starts.len() {
        let s = idx.starts[v] as usize;
        let list = &targets[s..s + idx.degrees[v] as usize];
        if let Some(bad) = list.iter().find(|&&t| t as u64 >= n) {
            return Err(StoreError::Corrupt {
                path: gf.path.clone(),
                why: format!("{dir:?} list of vertex {v} names vertex {bad}, past |V| = {n}"),
            });
        }
    }
    Ok(Adjacency { targets, weights })
}

impl GraphStore for MemoryStore {
    fn shape(&self) -> GraphShape {
        self.file.shape()
    }

    fn degree(&self, dir: Direction, v: u32) -> u64 {
        self.file.index(dir).degrees[v as usize] as u64
    }

    fn input_id(&self, v: u32) -> u64 {
        self.file.ids[v as usize]
    }

    fn internal_id(&self, id: u64) -> Option<u32> {
        self.file.internal_id(id)
    }

    fn key_runs(&self) -> Vec<std::ops::Range<u32>> {
        self.file.runs.ranges().collect()
    }

    fn vertex_keys(&self) -> Option<&VertexKeys> {
        self.keys.as_ref()
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
        let mut scratch = Vec::new();
        for &v in vertices {
            let (n, w) = self.list(dir, v, want_weights, &mut scratch);
            visit(v, n, w);
        }
        Ok(())
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
        let mut scratch = Vec::new();
        for v in range {
            let (n, w) = self.list(dir, v, want_weights, &mut scratch);
            visit(v, n, w);
        }
        Ok(())
    }

    fn csr(&self, dir: Direction) -> Option<CsrView<'_>> {
        let (idx, a) = self.adj(dir);
        Some(CsrView {
            starts: &idx.starts,
            degrees: &idx.degrees,
            targets: &a.targets,
            weights: a.weights.as_ref().map(StoredWeights::as_slice),
            whole_weight_max: match &a.weights {
                Some(w) => w.whole_max(),
                None => Some(1),
            },
        })
    }

    fn edge_block(&self, dir: Direction, v: u32) -> u64 {
        self.file.edge_section(dir).first_block() + self.file.index(dir).block_of(v)
    }

    fn list_offset(&self, dir: Direction, v: u32) -> Option<u64> {
        self.file.index(dir).starts.get(v as usize).copied()
    }

    fn io_stats(&self) -> IoStats {
        self.stats
    }

    fn describe_reader(&self) -> String {
        "memory".into()
    }
}
