//! Writing a graph file (format v2, see [`crate::blockfile::format`]).
//!
//! Adjacency arrives one direction at a time, as sorted neighbour lists in vertex order, so the
//! writer never holds more than the vertex indexes, a small window of open edge blocks and one
//! list. Each direction's edge (and weight) blocks go to side files in a work directory first
//! ([`ListWriter`]); [`write_graph_file`] then assembles the final file sequentially — identity, id map,
//! indexes, edge and weight sections, block checksums — and writes the superblock last. The file
//! is written under `<dest>.tmp-<pid>`, fsync'd, renamed over `dest`, and the directory fsync'd,
//! so a crash never leaves a half-written file under the final name.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::blockfile::format::{
    FileIdentity, IdOrder, Section, SectionKind, Superblock, BLOCK_SIZE, EMPTY_SLOT,
    FORMAT_VERSION, PACKED_LOOKUPS_VERSION, SLOTS_PER_BLOCK,
};
use crate::blockfile::open::VertexIndex;
use crate::blockfile::packed::{PackedBuilder, PackedU64s};
use crate::error::{Result, StoreError};

/// Open edge blocks kept for first-fit packing of short lists. A small window keeps packing
/// dense (few empty slots) while memory stays a few dozen KiB.
pub const PACKING_WINDOW: usize = 16;

/// An open block is retired once this many blocks were started after it, even with room left:
/// a scan holds a block only while it is within a few of its reads behind, so a list placed far
/// behind the lists around it is read twice. When lists come by falling length (`LAYOUT
/// degree`) a block's gap would otherwise wait for a much later short list; the bound leaves
/// only a few more blocks in the file than packing without it.
pub const MAX_OPEN_AGE: u64 = 128;

struct OpenBlock {
    block: u64,
    used: usize,
    slots: Vec<u32>,
    weights: Option<Vec<f64>>,
}

/// Packs one direction's neighbour lists into edge blocks (and parallel weight blocks) in side
/// files. Lists must be pushed in ascending vertex order; skipped vertices get degree 0.
pub struct ListWriter {
    edges_path: PathBuf,
    weights_path: Option<PathBuf>,
    edges: File,
    weights: Option<File>,
    index: VertexIndex,
    vertices: u32,
    next_vertex: u64,
    next_block: u64,
    open: Vec<OpenBlock>,
    max_open_age: u64,
    arcs: u64,
    scratch: Vec<u8>,
}

/// One direction's finished adjacency: the index in memory, the blocks in side files.
pub struct WrittenLists {
    /// Start slot and degree of every vertex.
    pub index: VertexIndex,
    /// Side file holding `blocks` edge blocks.
    pub edges_path: PathBuf,
    /// Side file holding the parallel weight blocks, when weighted.
    pub weights_path: Option<PathBuf>,
    /// Edge blocks written.
    pub blocks: u64,
    /// Arcs written (sum of degrees).
    pub arcs: u64,
}

fn create(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| StoreError::io(path, e))
}

impl ListWriter {
    /// Starts a direction whose side files are `<work_dir>/<name>.edges` (and `.weights`).
    pub fn new(work_dir: &Path, name: &str, vertices: u32, weighted: bool) -> Result<ListWriter> {
        let edges_path = work_dir.join(format!("{name}.edges"));
        let edges = create(&edges_path)?;
        let (weights_path, weights) = if weighted {
            let p = work_dir.join(format!("{name}.weights"));
            let f = create(&p)?;
            (Some(p), Some(f))
        } else {
            (None, None)
        };
        Ok(ListWriter {
            edges_path,
            weights_path,
            edges,
            weights,
            index: VertexIndex {
                starts: vec![0; vertices as usize],
                degrees: vec![0; vertices as usize],
            },
            vertices,
            next_vertex: 0,
            next_block: 0,
            open: Vec::with_capacity(PACKING_WINDOW),
            max_open_age: MAX_OPEN_AGE,
            arcs: 0,
            scratch: Vec::new(),
        })
    }

    /// Keeps open blocks for `blocks` blocks instead of [`MAX_OPEN_AGE`] (`u64::MAX`: until the
    /// window needs the room, as files written before the bound were packed).
    pub fn with_max_open_age(mut self, blocks: u64) -> ListWriter {
        self.max_open_age = blocks;
        self
    }

    /// Adds the list of `v` (neighbours sorted ascending; `weights` parallel when weighted).
    /// `v` must be above every vertex pushed before.
    pub fn push(&mut self, v: u32, neighbours: &[u32], weights: Option<&[f64]>) -> Result<()> {
        if (v as u64) < self.next_vertex || v >= self.vertices {
            return Err(StoreError::Other(format!(
                "graph writer: vertex {v} pushed out of order or out of range"
            )));
        }
        if self.weights.is_some() != weights.is_some()
            || weights.is_some_and(|w| w.len() != neighbours.len())
        {
            return Err(StoreError::Other(
                "graph writer: weights do not match the list".into(),
            ));
        }
        if neighbours.len() > u32::MAX as usize {
            return Err(StoreError::Other(format!(
                "vertex {v} has {} neighbours, more than 2^32-1",
                neighbours.len()
            )));
        }
        self.next_vertex = v as u64 + 1;
        let len = neighbours.len();
        self.index.degrees[v as usize] = len as u32;
        self.arcs += len as u64;
        if len == 0 {
            return Ok(());
        }
        if len < SLOTS_PER_BLOCK {
            let mut i = 0;
            while i < self.open.len() {
                if self.next_block - self.open[i].block > self.max_open_age {
                    let b = self.open.remove(i);
                    self.flush(&b)?;
                } else {
                    i += 1;
                }
            }
            let fit = self
                .open
                .iter()
                .position(|b| SLOTS_PER_BLOCK - b.used >= len);
            let i = match fit {
                Some(i) => i,
                None => {
                    if self.open.len() == PACKING_WINDOW {
                        // Retire the fullest block: it is the least useful for what comes next.
                        let (i, _) = self
                            .open
                            .iter()
                            .enumerate()
                            .max_by_key(|(_, b)| b.used)
                            .expect("window is full");
                        let b = self.open.remove(i);
                        self.flush(&b)?;
                    }
                    self.open.push(OpenBlock {
                        block: self.next_block,
                        used: 0,
                        slots: vec![EMPTY_SLOT; SLOTS_PER_BLOCK],
                        weights: self.weights.as_ref().map(|_| vec![0.0; SLOTS_PER_BLOCK]),
                    });
                    self.next_block += 1;
                    self.open.len() - 1
                }
            };
            let b = &mut self.open[i];
            b.slots[b.used..b.used + len].copy_from_slice(neighbours);
            if let (Some(bw), Some(w)) = (b.weights.as_mut(), weights) {
                bw[b.used..b.used + len].copy_from_slice(w);
            }
            self.index.starts[v as usize] = b.block * SLOTS_PER_BLOCK as u64 + b.used as u64;
            b.used += len;
            return Ok(());
        }
        // A long list: starts on a block boundary and spans consecutive blocks.
        let first = self.next_block;
        let blocks = len.div_ceil(SLOTS_PER_BLOCK) as u64;
        self.next_block += blocks;
        self.index.starts[v as usize] = first * SLOTS_PER_BLOCK as u64;
        let padded = blocks as usize * SLOTS_PER_BLOCK;
        // Write in pieces so a huge hub does not need a second full-size buffer.
        const PIECE: usize = 64 * SLOTS_PER_BLOCK;
        let mut slot = 0usize;
        while slot < padded {
            let end = (slot + PIECE).min(padded);
            self.scratch.clear();
            for i in slot..end {
                let x = neighbours.get(i).copied().unwrap_or(EMPTY_SLOT);
                self.scratch.extend_from_slice(&x.to_le_bytes());
            }
            let off = (first * SLOTS_PER_BLOCK as u64 + slot as u64) * 4;
            self.edges
                .write_all_at(&self.scratch, off)
                .map_err(|e| StoreError::io(&self.edges_path, e))?;
            if let (Some(wf), Some(w)) = (self.weights.as_ref(), weights) {
                self.scratch.clear();
                for i in slot..end {
                    let x = w.get(i).copied().unwrap_or(0.0);
                    self.scratch.extend_from_slice(&x.to_le_bytes());
                }
                let off = (first * SLOTS_PER_BLOCK as u64 + slot as u64) * 8;
                wf.write_all_at(&self.scratch, off).map_err(|e| {
                    StoreError::io(self.weights_path.as_deref().unwrap_or(Path::new("")), e)
                })?;
            }
            slot = end;
        }
        Ok(())
    }

    fn flush(&mut self, b: &OpenBlock) -> Result<()> {
        self.scratch.clear();
        for x in &b.slots {
            self.scratch.extend_from_slice(&x.to_le_bytes());
        }
        self.edges
            .write_all_at(&self.scratch, b.block * BLOCK_SIZE as u64)
            .map_err(|e| StoreError::io(&self.edges_path, e))?;
        if let (Some(wf), Some(w)) = (self.weights.as_ref(), b.weights.as_ref()) {
            self.scratch.clear();
            for x in w {
                self.scratch.extend_from_slice(&x.to_le_bytes());
            }
            wf.write_all_at(&self.scratch, b.block * 2 * BLOCK_SIZE as u64)
                .map_err(|e| {
                    StoreError::io(self.weights_path.as_deref().unwrap_or(Path::new("")), e)
                })?;
        }
        Ok(())
    }

    /// Flushes the open blocks and hands over the finished direction.
    pub fn finish(mut self) -> Result<WrittenLists> {
        let open = std::mem::take(&mut self.open);
        for b in &open {
            self.flush(b)?;
        }
        Ok(WrittenLists {
            index: self.index,
            edges_path: self.edges_path,
            weights_path: self.weights_path,
            blocks: self.next_block,
            arcs: self.arcs,
        })
    }
}

/// Streams sections into the output file, block by block, keeping a CRC per block.
struct SectionSink {
    path: PathBuf,
    out: BufWriter<File>,
    block: Vec<u8>,
    pos: u64,
    block_crcs: Vec<u32>,
    hasher: crc32fast::Hasher,
    start: u64,
    length: u64,
    sections: Vec<Section>,
}

impl SectionSink {
    fn begin(&mut self) {
        self.hasher = crc32fast::Hasher::new();
        self.start = self.pos;
        self.length = 0;
    }

    fn write(&mut self, mut data: &[u8]) -> Result<()> {
        self.hasher.update(data);
        self.length += data.len() as u64;
        while !data.is_empty() {
            let take = (BLOCK_SIZE - self.block.len()).min(data.len());
            self.block.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.block.len() == BLOCK_SIZE {
                self.emit_block()?;
            }
        }
        Ok(())
    }

    fn emit_block(&mut self) -> Result<()> {
        self.block.resize(BLOCK_SIZE, 0);
        self.block_crcs.push(crc32fast::hash(&self.block));
        self.out
            .write_all(&self.block)
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.pos += BLOCK_SIZE as u64;
        self.block.clear();
        Ok(())
    }

    fn end(&mut self, kind: SectionKind) -> Result<()> {
        if !self.block.is_empty() {
            self.emit_block()?;
        }
        let hasher = std::mem::take(&mut self.hasher);
        self.sections.push(Section {
            kind,
            offset: self.start,
            length: self.length,
            crc: hasher.finalize(),
        });
        Ok(())
    }

    fn copy_file(&mut self, path: &Path, bytes: u64) -> Result<()> {
        let mut f = File::open(path).map_err(|e| StoreError::io(path, e))?;
        let mut buf = vec![0u8; 1 << 20];
        let mut left = bytes;
        while left > 0 {
            let n = (buf.len() as u64).min(left) as usize;
            // The side file may be shorter than its block count when trailing blocks were
            // never written (cannot happen, but a short read must not pass silently).
            f.read_exact(&mut buf[..n])
                .map_err(|e| StoreError::io(path, e))?;
            self.write(&buf[..n])?;
            left -= n as u64;
        }
        Ok(())
    }
}

/// Removes the temporary file unless the write completed.
struct TmpGuard(Option<PathBuf>);
impl Drop for TmpGuard {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// What to write: the graph's facts plus each direction's packed lists.
pub struct GraphFileContents {
    /// What the file says about itself: the graph, generation, file id, source.
    pub identity: FileIdentity,
    /// Input id (for string keys: key rank) of every internal vertex: strictly ascending in key
    /// order, ascending runs in degree and locality order.
    pub ids: Vec<u64>,
    /// The order of internal ids (see the format's `IdMap`).
    pub order: IdOrder,
    /// The string key of every internal vertex, ascending, when the vertices have string keys.
    pub keys: Option<crate::import::keys::SortedKeys>,
    /// Edges as the user counts them.
    pub edges: u64,
    pub directed: bool,
    pub weighted: bool,
    /// Out-adjacency (the only adjacency of an undirected graph).
    pub out: WrittenLists,
    /// In-adjacency, for directed graphs.
    pub inn: Option<WrittenLists>,
}

/// The temporary name a file is written under before it is renamed to `dest`.
pub fn temp_name(dest: &Path) -> PathBuf {
    let mut name = dest
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "graph".into());
    name.push(format!(".tmp-{}", std::process::id()));
    dest.with_file_name(name)
}

thread_local! {
    /// The format version this thread writes: [`FORMAT_VERSION`] unless a test asked for an
    /// older one with [`writing_version`].
    static VERSION: std::cell::Cell<u32> = const { std::cell::Cell::new(FORMAT_VERSION) };
}

/// Runs `f` with the graph files this thread writes in format `version` (3 or 4: plain id map
/// and indexes; the order must exist in that version): how tests make the files older builds
/// wrote, to check they still read.
#[doc(hidden)]
pub fn writing_version<R>(version: u32, f: impl FnOnce() -> R) -> R {
    let before = VERSION.with(|v| v.replace(version));
    let r = f();
    VERSION.with(|v| v.set(before));
    r
}

/// Assembles the graph file at `dest` (atomically: temp name, fsync, rename, fsync of the
/// directory). Returns the file's size in bytes.
pub fn write_graph_file(dest: &Path, c: &GraphFileContents) -> Result<u64> {
    let version = VERSION.with(|v| v.get());
    let packed = version >= PACKED_LOOKUPS_VERSION;
    if c.ids.len() > u32::MAX as usize {
        return Err(StoreError::Other(format!(
            "{} vertices, at most 2^32-1 are supported",
            c.ids.len()
        )));
    }
    if c.directed != c.inn.is_some() {
        return Err(StoreError::Other(
            "graph writer: in-lists must be given exactly for directed graphs".into(),
        ));
    }
    if let Some(inn) = &c.inn {
        if inn.arcs != c.out.arcs {
            return Err(StoreError::Other(format!(
                "graph writer: {} out-arcs but {} in-arcs",
                c.out.arcs, inn.arcs
            )));
        }
    }
    let tmp = temp_name(dest);
    let mut guard = TmpGuard(Some(tmp.clone()));
    let file = create(&tmp)?;
    let mut sink = SectionSink {
        path: tmp.clone(),
        out: BufWriter::with_capacity(1 << 20, file),
        block: Vec::with_capacity(BLOCK_SIZE),
        pos: 0,
        block_crcs: Vec::new(),
        hasher: crc32fast::Hasher::new(),
        start: 0,
        length: 0,
        sections: Vec::new(),
    };
    // Placeholder superblock; its block checksum entry is 0 (it carries its own).
    sink.out
        .write_all(&[0u8; BLOCK_SIZE])
        .map_err(|e| StoreError::io(&tmp, e))?;
    sink.pos = BLOCK_SIZE as u64;
    sink.block_crcs.push(0);

    sink.begin();
    sink.write(&c.identity.encode())?;
    sink.end(SectionKind::Identity)?;

    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    sink.begin();
    if packed {
        let ids: PackedU64s = c.ids.iter().copied().collect();
        ids.write_to(&mut buf);
        drop(ids);
        sink.write(&buf)?;
    } else {
        for chunk in c.ids.chunks(8192) {
            buf.clear();
            chunk
                .iter()
                .for_each(|id| buf.extend_from_slice(&id.to_le_bytes()));
            sink.write(&buf)?;
        }
    }
    sink.end(SectionKind::IdMap)?;
    buf.clear();
    buf.shrink_to(1 << 16);

    if let Some(keys) = &c.keys {
        if keys.len() != c.ids.len() {
            return Err(StoreError::Other(format!(
                "graph writer: {} string keys for {} vertices",
                keys.len(),
                c.ids.len()
            )));
        }
        // Offsets of each key's start (and the end of the last), then the keys' bytes.
        sink.begin();
        let mut at = 0u64;
        buf.clear();
        buf.extend_from_slice(&at.to_le_bytes());
        for r in 0..keys.len() as u32 {
            at += keys.key(r).len() as u64;
            buf.extend_from_slice(&at.to_le_bytes());
            if buf.len() >= 1 << 16 {
                sink.write(&buf)?;
                buf.clear();
            }
        }
        sink.write(&buf)?;
        sink.end(SectionKind::KeyOffsets)?;
        sink.begin();
        buf.clear();
        for r in 0..keys.len() as u32 {
            buf.extend_from_slice(keys.key(r));
            if buf.len() >= 1 << 16 {
                sink.write(&buf)?;
                buf.clear();
            }
        }
        sink.write(&buf)?;
        sink.end(SectionKind::KeyBytes)?;
    }

    // Start slots, then degrees; an empty list's start is a placeholder.
    let index = |sink: &mut SectionSink, idx: &VertexIndex, kind| -> Result<()> {
        sink.begin();
        if !packed {
            for (&s, &d) in idx.starts.iter().zip(&idx.degrees) {
                let mut e = [0u8; 16];
                e[..8].copy_from_slice(&s.to_le_bytes());
                e[8..].copy_from_slice(&(d as u64).to_le_bytes());
                sink.write(&e)?;
            }
            return sink.end(kind);
        }
        let mut starts = PackedBuilder::with_capacity(idx.starts.len() as u64);
        for (&s, &d) in idx.starts.iter().zip(&idx.degrees) {
            if d == 0 {
                starts.push_any();
            } else {
                starts.push(s);
            }
        }
        let mut bytes = Vec::new();
        starts.finish().write_to(&mut bytes);
        let degrees: PackedU64s = idx.degrees.iter().map(|&d| d as u64).collect();
        degrees.write_to(&mut bytes);
        sink.write(&bytes)?;
        sink.end(kind)
    };
    index(&mut sink, &c.out.index, SectionKind::OutIndex)?;
    if let Some(inn) = &c.inn {
        index(&mut sink, &inn.index, SectionKind::InIndex)?;
    }
    let lists = |sink: &mut SectionSink, l: &WrittenLists, ek, wk| -> Result<()> {
        sink.begin();
        sink.copy_file(&l.edges_path, l.blocks * BLOCK_SIZE as u64)?;
        sink.end(ek)?;
        if c.weighted {
            let wp = l.weights_path.as_ref().ok_or_else(|| {
                StoreError::Other("graph writer: weighted graph without weights".into())
            })?;
            sink.begin();
            sink.copy_file(wp, l.blocks * 2 * BLOCK_SIZE as u64)?;
            sink.end(wk)?;
        }
        Ok(())
    };
    lists(
        &mut sink,
        &c.out,
        SectionKind::OutEdges,
        SectionKind::OutWeights,
    )?;
    if let Some(inn) = &c.inn {
        lists(&mut sink, inn, SectionKind::InEdges, SectionKind::InWeights)?;
    }
    // Block checksums of everything before this section.
    let crcs = std::mem::take(&mut sink.block_crcs);
    sink.begin();
    let mut bytes = Vec::with_capacity(crcs.len() * 4);
    for c in &crcs {
        bytes.extend_from_slice(&c.to_le_bytes());
    }
    sink.write(&bytes)?;
    sink.end(SectionKind::BlockCrcs)?;

    let sb = Superblock {
        version,
        vertices: c.ids.len() as u64,
        arcs: c.out.arcs,
        edges: c.edges,
        directed: c.directed,
        weighted: c.weighted,
        order: c.order,
        sections: std::mem::take(&mut sink.sections),
    };
    let file_len = sink.pos;
    let file = sink
        .out
        .into_inner()
        .map_err(|e| StoreError::io(&tmp, e.into_error()))?;
    file.write_all_at(&sb.encode(), 0)
        .map_err(|e| StoreError::io(&tmp, e))?;
    file.sync_all().map_err(|e| StoreError::io(&tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, dest).map_err(|e| StoreError::io(dest, e))?;
    guard.0 = None;
    let dir = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if let Ok(d) = File::open(&dir) {
        d.sync_all().map_err(|e| StoreError::io(&dir, e))?;
    }
    Ok(file_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lists of falling length (a degree-ordered file) leave a gap in an early block that only
    /// a much later, short list fits: that list goes to a new block near the others instead.
    #[test]
    fn a_short_list_is_not_placed_far_behind_the_newest_block() {
        let dir = tempfile::tempdir().unwrap();
        let long_ones = 200u32;
        let mut w = ListWriter::new(dir.path(), "out", long_ones + 2, false).unwrap();
        w.push(0, &(0..600).collect::<Vec<u32>>(), None).unwrap();
        let nearly_full: Vec<u32> = (0..1000).collect();
        for v in 1..=long_ones {
            w.push(v, &nearly_full, None).unwrap();
        }
        let newest = w.next_block - 1;
        w.push(long_ones + 1, &(0..100).collect::<Vec<u32>>(), None)
            .unwrap();
        let written = w.finish().unwrap();
        let block = written.index.starts[(long_ones + 1) as usize] / SLOTS_PER_BLOCK as u64;
        assert!(
            block + MAX_OPEN_AGE >= newest,
            "placed in block {block}, the newest was {newest}"
        );
        // The gap was real: without the bound the list would have gone to block 0.
        assert_eq!(written.index.starts[0], 0);
        assert_eq!(written.blocks, long_ones as u64 + 2);
    }
}
