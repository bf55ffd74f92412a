//! Opening a graph file: the superblock, identity and block checksums are read and checked
//! ([`FileHeader`]); the id map and vertex indexes are streamed in pieces, checked, and built
//! into plain arrays ([`GraphFile`], for the in-memory and DM paths) or compact ones
//! ([`CompactFile`](crate::blockfile::compact::CompactFile), for the out-of-core reader). Edge
//! and weight sections are left on disk for the reader that sits on top.
//!
//! Everything a reader later trusts without re-checking is checked here once: section CRCs,
//! id-map order, index entries that stay inside their edge section, degree sums equal to the
//! superblock's arc count, and a block checksum for every edge/weight block. A file that fails
//! any check is refused with [`StoreError::Corrupt`], never half-read.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::blockfile::format::{
    FileIdentity, Section, SectionKind, Superblock, BLOCK_SIZE, INDEX_ENTRY_BYTES,
    PACKED_LOOKUPS_VERSION,
};
use crate::blockfile::id_runs::{IdRuns, IdRunsBuilder};
use crate::blockfile::packed::PackedU64s;
use crate::error::{Result, StoreError};
use crate::store::{Direction, GraphShape};

/// One direction's vertex index: where each list starts (slot within the edge section) and how
/// long it is. Kept in memory by every reader, because every access path needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VertexIndex {
    /// Start slot of each vertex's list within its edge section.
    pub starts: Vec<u64>,
    /// Degree of each vertex (the on-disk `u64` is checked to fit a `u32`).
    pub degrees: Vec<u32>,
}

impl VertexIndex {
    /// The edge block (relative to the edge section) holding the start of `v`'s list.
    #[inline]
    pub fn block_of(&self, v: u32) -> u64 {
        self.starts[v as usize] / crate::blockfile::format::SLOTS_PER_BLOCK as u64
    }
}

/// What every reader of a graph file needs besides its per-vertex lookups: the checked
/// superblock, identity and block checksums. [`GraphFile`] adds the id map and indexes as plain
/// arrays; the out-of-core reader adds compact ones
/// ([`CompactFile`](crate::blockfile::compact::CompactFile)).
#[derive(Debug, Clone)]
pub struct FileHeader {
    /// The file's path (named in every error).
    pub path: PathBuf,
    /// The file's size in bytes when it was opened.
    pub file_len: u64,
    /// The decoded superblock.
    pub superblock: Superblock,
    /// What the file says about itself; `None` for version 1 files, which predate it.
    pub identity: Option<FileIdentity>,
    /// CRC-32 of every block before the `BlockCrcs` section, by absolute block number
    /// (entry 0, the superblock, is 0: the superblock has its own checksum).
    pub block_crcs: Vec<u32>,
}

/// An opened, checked graph file with its small sections in memory as plain arrays.
#[derive(Debug, Clone)]
pub struct GraphFile {
    header: FileHeader,
    /// Input id of each internal vertex (for string keys its key rank), in [`IdRuns`].
    pub ids: Vec<u64>,
    /// The id map's ascending runs: one in key order.
    pub runs: IdRuns,
    /// Out-adjacency index.
    pub out: VertexIndex,
    /// In-adjacency index; `None` for undirected graphs (in-lists are the out-lists).
    pub inn: Option<VertexIndex>,
    /// `Some(first id)` when the input ids are contiguous, making `internal_id` O(1).
    contiguous_base: Option<u64>,
}

/// The superblock, identity and checksums are what every reader shares; `GraphFile` only adds
/// the arrays.
impl std::ops::Deref for GraphFile {
    type Target = FileHeader;
    fn deref(&self) -> &FileHeader {
        &self.header
    }
}

impl FileHeader {
    /// Opens `path` and checks the superblock, the section table, the identity and the block
    /// checksums; the id map and indexes are left for [`FileHeader::read_ids`] and
    /// [`FileHeader::read_index`].
    pub fn open(path: impl AsRef<Path>) -> Result<(FileHeader, File)> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(|e| StoreError::io(&path, e))?;
        let file_len = file.metadata().map_err(|e| StoreError::io(&path, e))?.len();
        let bad = |why: String| StoreError::Corrupt {
            path: path.clone(),
            why,
        };
        if file_len < BLOCK_SIZE as u64 {
            return Err(bad(format!(
                "file is {file_len} bytes, shorter than its superblock (truncated?)"
            )));
        }
        let sb = read_superblock(&file, &path, file_len)?;
        // Writers pad every section to whole blocks, so the file is whole blocks too.
        if file_len & (BLOCK_SIZE as u64 - 1) != 0 {
            return Err(bad(format!(
                "file is {file_len} bytes, not a whole number of blocks (truncated?)"
            )));
        }
        if let Some(s) = sb
            .sections
            .iter()
            .find(|s| (s.first_block() + s.blocks()) * BLOCK_SIZE as u64 > file_len)
        {
            return Err(bad(format!(
                "section {:?} ends past the end of the file (truncated?)",
                s.kind
            )));
        }

        // Which sections must exist, and which must not.
        use SectionKind::*;
        let mut required = vec![IdMap, OutIndex, OutEdges, BlockCrcs];
        let mut forbidden = vec![];
        if sb.version >= 2 {
            required.push(Identity);
        } else {
            forbidden.push(Identity);
        }
        match (sb.section(KeyOffsets), sb.section(KeyBytes)) {
            (Some(_), Some(_)) if sb.version < 3 => {
                return Err(bad(format!(
                    "string-key sections in a format {} file",
                    sb.version
                )))
            }
            (Some(_), None) => return Err(bad("section KeyBytes is missing".into())),
            (None, Some(_)) => return Err(bad("section KeyOffsets is missing".into())),
            (Some(o), Some(_)) if o.length != (sb.vertices + 1) * 8 => {
                return Err(bad(format!(
                    "KeyOffsets is {} bytes, {} vertices need {}",
                    o.length,
                    sb.vertices,
                    (sb.vertices + 1) * 8
                )))
            }
            _ => {}
        }
        if sb.weighted {
            required.push(OutWeights);
        } else {
            forbidden.extend([OutWeights, InWeights]);
        }
        if sb.directed {
            required.extend([InIndex, InEdges]);
            if sb.weighted {
                required.push(InWeights);
            }
        } else {
            forbidden.extend([InIndex, InEdges, InWeights]);
        }
        for k in &required {
            if sb.section(*k).is_none() {
                return Err(bad(format!("section {k:?} is missing")));
            }
        }
        for k in &forbidden {
            if sb.section(*k).is_some() {
                return Err(bad(format!(
                    "section {k:?} present in a{} {} graph",
                    if sb.directed {
                        " directed"
                    } else {
                        "n undirected"
                    },
                    if sb.weighted {
                        "weighted"
                    } else {
                        "unweighted"
                    }
                )));
            }
        }
        // Sections must not overlap each other or the superblock.
        let mut spans: Vec<(u64, u64, SectionKind)> = sb
            .sections
            .iter()
            .map(|s| (s.offset, s.offset + s.blocks() * BLOCK_SIZE as u64, s.kind))
            .collect();
        spans.sort_by_key(|s| (s.0, s.1));
        for w in spans.windows(2) {
            if w[0].1 > w[1].0 {
                return Err(bad(format!(
                    "sections {:?} and {:?} overlap",
                    w[0].2, w[1].2
                )));
            }
        }

        let n = sb.vertices;
        let section = |k: SectionKind| *sb.section(k).expect("checked above");
        let identity = read_identity_section(&file, &path, &sb)?;
        let packed = sb.version >= PACKED_LOOKUPS_VERSION;
        let idmap = section(IdMap);
        if !packed && idmap.length != n * 8 {
            return Err(bad(format!(
                "IdMap is {} bytes, {} vertices need {}",
                idmap.length,
                n,
                n * 8
            )));
        }

        // Edge sections: whole blocks, weights parallel.
        let check_edges = |edges: &Section, weights: Option<&Section>| -> Result<()> {
            if edges.length & (BLOCK_SIZE as u64 - 1) != 0 {
                return Err(bad(format!(
                    "{:?} is {} bytes, not a whole number of blocks",
                    edges.kind, edges.length
                )));
            }
            let slots = edges.length / 4;
            if let Some(w) = weights {
                if w.length != slots * 8 {
                    return Err(bad(format!(
                        "{:?} is {} bytes, {} slots need {}",
                        w.kind,
                        w.length,
                        slots,
                        slots * 8
                    )));
                }
            }
            Ok(())
        };
        check_edges(&section(OutEdges), sb.section(OutWeights))?;
        let mut index_kinds = vec![OutIndex];
        if sb.directed {
            check_edges(&section(InEdges), sb.section(InWeights))?;
            index_kinds.push(InIndex);
        }
        for k in index_kinds.into_iter().filter(|_| !packed) {
            let s = section(k);
            if s.length != n * INDEX_ENTRY_BYTES as u64 {
                return Err(bad(format!(
                    "{:?} is {} bytes, {} vertices need {}",
                    s.kind,
                    s.length,
                    n,
                    n * INDEX_ENTRY_BYTES as u64
                )));
            }
        }

        // Block checksums: one per block before the BlockCrcs section, covering every
        // edge and weight block.
        let crcs = section(BlockCrcs);
        if crcs.length & 3 != 0 {
            return Err(bad(format!(
                "BlockCrcs is {} bytes, not a multiple of 4",
                crcs.length
            )));
        }
        let mut block_crcs: Vec<u32> = Vec::with_capacity((crcs.length / 4) as usize);
        read_section_streaming(&file, &path, &crcs, |b| {
            block_crcs.extend(
                b.chunks_exact(4)
                    .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))),
            );
            Ok(())
        })?;
        for s in &sb.sections {
            if s.kind != BlockCrcs && s.first_block() + s.blocks() > block_crcs.len() as u64 {
                return Err(bad(format!(
                    "BlockCrcs covers {} blocks, section {:?} reaches block {}",
                    block_crcs.len(),
                    s.kind,
                    s.first_block() + s.blocks()
                )));
            }
        }
        Ok((
            FileHeader {
                path,
                file_len,
                superblock: sb,
                identity,
                block_crcs,
            },
            file,
        ))
    }

    /// Streams the id map to `sink`, checking its checksum and its order (strictly ascending in
    /// key order, strictly ascending runs in degree and locality order); returns the runs.
    pub fn read_ids(&self, file: &File, mut sink: impl FnMut(u64)) -> Result<IdRuns> {
        let s = *self.section(SectionKind::IdMap);
        let n = self.superblock.vertices;
        let mut runs = IdRunsBuilder::new(self.superblock.order);
        if self.packed_lookups() {
            let bytes = read_section_whole(file, &self.path, &s)?;
            let ids = self.packed(&bytes, SectionKind::IdMap, n)?.0;
            for v in 0..n {
                let id = ids.get(v);
                runs.push(id).map_err(|why| self.corrupt(why))?;
                sink(id);
            }
            return Ok(runs.finish());
        }
        read_section_streaming(file, &self.path, &s, |b| {
            for c in b.chunks_exact(8) {
                let id = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                runs.push(id).map_err(|why| self.corrupt(why))?;
                sink(id);
            }
            Ok(())
        })?;
        Ok(runs.finish())
    }

    /// Whether the id map and indexes are packed (format version 5 on).
    fn packed_lookups(&self) -> bool {
        self.superblock.version >= PACKED_LOOKUPS_VERSION
    }

    /// The packed array at the front of `bytes`, which must hold `n` values, and what follows.
    fn packed<'b>(
        &self,
        bytes: &'b [u8],
        kind: SectionKind,
        n: u64,
    ) -> Result<(PackedU64s, &'b [u8])> {
        let (p, rest) =
            PackedU64s::read_from(bytes).map_err(|why| self.corrupt(format!("{kind:?}: {why}")))?;
        if p.len() != n {
            return Err(self.corrupt(format!(
                "{kind:?} holds {} values for {n} vertices",
                p.len()
            )));
        }
        Ok((p, rest))
    }

    /// Streams the vertex index of `dir` to `sink` as (start slot, degree), checking its
    /// checksum, that every list stays inside its edge section and that the degrees sum to the
    /// superblock's arc count.
    pub fn read_index(
        &self,
        file: &File,
        dir: Direction,
        mut sink: impl FnMut(u64, u32),
    ) -> Result<()> {
        let kind = match dir {
            Direction::In if self.superblock.directed => SectionKind::InIndex,
            _ => SectionKind::OutIndex,
        };
        let s = *self.section(kind);
        let slots = self.edge_section(dir).length / 4;
        let mut sum: u64 = 0;
        let mut v: u64 = 0;
        let mut entry = |start: u64, degree: u64| -> Result<()> {
            if degree > u32::MAX as u64 {
                return Err(self.corrupt(format!(
                    "{kind:?}: vertex {v} has degree {degree}, more than 2^32-1"
                )));
            }
            if start.checked_add(degree).is_none_or(|end| end > slots) {
                return Err(self.corrupt(format!(
                    "{kind:?}: the list of vertex {v} runs outside its edge section"
                )));
            }
            sum = sum.saturating_add(degree);
            v += 1;
            sink(start, degree as u32);
            Ok(())
        };
        if self.packed_lookups() {
            let n = self.superblock.vertices;
            let bytes = read_section_whole(file, &self.path, &s)?;
            let (starts, rest) = self.packed(&bytes, kind, n)?;
            let (degrees, _) = self.packed(rest, kind, n)?;
            for u in 0..n {
                match degrees.get(u) {
                    0 => entry(0, 0)?,
                    d => entry(starts.get(u), d)?,
                }
            }
        } else {
            read_section_streaming(file, &self.path, &s, |b| {
                for e in b.chunks_exact(INDEX_ENTRY_BYTES) {
                    let start = u64::from_le_bytes(e[0..8].try_into().expect("8 bytes"));
                    let degree = u64::from_le_bytes(e[8..16].try_into().expect("8 bytes"));
                    entry(start, degree)?;
                }
                Ok(())
            })?;
        }
        if sum != self.superblock.arcs {
            return Err(self.corrupt(format!(
                "{kind:?}: degrees sum to {sum}, the superblock says {} arcs",
                self.superblock.arcs
            )));
        }
        Ok(())
    }

    fn corrupt(&self, why: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            why,
        }
    }

    fn section(&self, kind: SectionKind) -> &Section {
        self.superblock.section(kind).expect("checked at open")
    }

    /// Whether the vertices have string keys (the file has the key sections).
    pub fn string_keys(&self) -> bool {
        self.superblock.section(SectionKind::KeyOffsets).is_some()
    }

    /// |V|, |E|, directed, weighted.
    pub fn shape(&self) -> GraphShape {
        GraphShape {
            vertices: self.superblock.vertices as u32,
            arcs: self.superblock.arcs,
            edges: self.superblock.edges,
            directed: self.superblock.directed,
            weighted: self.superblock.weighted,
        }
    }

    /// The edge section of `dir` (undirected graphs answer `In` with `OutEdges`).
    pub fn edge_section(&self, dir: Direction) -> &Section {
        let kind = match dir {
            Direction::In if self.superblock.directed => SectionKind::InEdges,
            _ => SectionKind::OutEdges,
        };
        self.section(kind)
    }

    /// The weight section of `dir`, when the graph is weighted.
    pub fn weight_section(&self, dir: Direction) -> Option<&Section> {
        let kind = match dir {
            Direction::In if self.superblock.directed => SectionKind::InWeights,
            _ => SectionKind::OutWeights,
        };
        self.superblock.section(kind)
    }
}

impl GraphFile {
    /// Opens `path`, checks the superblock and every small section, and loads them.
    pub fn open(path: impl AsRef<Path>) -> Result<GraphFile> {
        let (header, file) = FileHeader::open(path)?;
        let n = header.superblock.vertices as usize;
        let mut ids = Vec::with_capacity(n);
        let runs = header.read_ids(&file, |id| ids.push(id))?;
        let read = |dir| -> Result<VertexIndex> {
            let mut idx = VertexIndex {
                starts: Vec::with_capacity(n),
                degrees: Vec::with_capacity(n),
            };
            header.read_index(&file, dir, |s, d| {
                idx.starts.push(s);
                idx.degrees.push(d);
            })?;
            Ok(idx)
        };
        let out = read(Direction::Out)?;
        let inn = if header.superblock.directed {
            Some(read(Direction::In)?)
        } else {
            None
        };
        let contiguous_base = match (ids.first(), ids.last()) {
            (Some(&f), Some(&l)) if runs.is_single() && l - f == n as u64 - 1 => Some(f),
            _ => None,
        };
        Ok(GraphFile {
            header,
            ids,
            runs,
            out,
            inn,
            contiguous_base,
        })
    }

    /// The internal id of input id `input`: O(1) when the ids are contiguous, a binary search
    /// per run otherwise.
    pub fn internal_id(&self, input: u64) -> Option<u32> {
        if let Some(base) = self.contiguous_base {
            let d = input.checked_sub(base)?;
            return (d < self.ids.len() as u64).then_some(d as u32);
        }
        if self.runs.is_single() {
            return self.ids.binary_search(&input).ok().map(|i| i as u32);
        }
        self.runs.find(input, |v| self.ids[v as usize])
    }

    /// The input id of internal vertex `v`.
    #[inline]
    pub fn input_id(&self, v: u32) -> u64 {
        self.ids[v as usize]
    }

    /// The vertex index of `dir` (undirected graphs answer `In` with the out-index).
    #[allow(clippy::should_implement_trait)]
    pub fn index(&self, dir: Direction) -> &VertexIndex {
        self.vertex_index(dir)
    }

    /// The vertex index of `dir`: the same as [`GraphFile::index`], under a name clippy does
    /// not confuse with `std::ops::Index`.
    pub fn vertex_index(&self, dir: Direction) -> &VertexIndex {
        match dir {
            Direction::In => self.inn.as_ref().unwrap_or(&self.out),
            Direction::Out => &self.out,
        }
    }
}

/// Reads and checks only a file's superblock and `Identity` section: what the catalog needs
/// to recognise a file, without loading its indexes.
pub fn read_identity(path: &Path) -> Result<(Superblock, Option<FileIdentity>)> {
    let file = File::open(path).map_err(|e| StoreError::io(path, e))?;
    let file_len = file.metadata().map_err(|e| StoreError::io(path, e))?.len();
    let sb = read_superblock(&file, path, file_len)?;
    let identity = read_identity_section(&file, path, &sb)?;
    if sb.version >= 2 && identity.is_none() {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            why: "section Identity is missing".into(),
        });
    }
    Ok((sb, identity))
}

fn read_superblock(file: &File, path: &Path, file_len: u64) -> Result<Superblock> {
    if file_len < BLOCK_SIZE as u64 {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            why: format!("file is {file_len} bytes, shorter than its superblock (truncated?)"),
        });
    }
    let mut block = vec![0u8; BLOCK_SIZE];
    file.read_exact_at(&mut block, 0)
        .map_err(|e| StoreError::io(path, e))?;
    Superblock::decode(&block, path, file_len)
}

/// Identities are a few hundred bytes; a larger section is damage, not a description.
const MAX_IDENTITY_BYTES: u64 = 1 << 20;

fn read_identity_section(
    file: &File,
    path: &Path,
    sb: &Superblock,
) -> Result<Option<FileIdentity>> {
    let Some(s) = sb.section(SectionKind::Identity) else {
        return Ok(None);
    };
    if s.length > MAX_IDENTITY_BYTES {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            why: format!("the Identity section is {} bytes, too large", s.length),
        });
    }
    let bytes = read_section(file, path, s)?;
    FileIdentity::decode(&bytes, path).map(Some)
}

/// Reads a whole section and checks its CRC.
pub(crate) fn read_section(file: &File, path: &Path, s: &Section) -> Result<Vec<u8>> {
    let len = usize::try_from(s.length).map_err(|_| StoreError::Corrupt {
        path: path.to_path_buf(),
        why: format!("section {:?} is too large for this machine", s.kind),
    })?;
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, s.offset)
        .map_err(|e| StoreError::io(path, e))?;
    if crc32fast::hash(&buf) != s.crc {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            why: format!("section {:?} checksum mismatch", s.kind),
        });
    }
    Ok(buf)
}

/// Bytes per read while streaming a section: the id map and indexes are read in pieces, so
/// opening never holds a section's raw bytes besides what is built from them.
const STREAM_CHUNK: usize = 1 << 20;

/// Reads a section in pieces, handing each to `sink`, and checks the section's CRC. A checksum
/// mismatch is reported before any error `sink` raised (damage explains both); after a `sink`
/// error the rest is only hashed.
/// A whole section's bytes, its checksum checked.
pub(crate) fn read_section_whole(file: &File, path: &Path, s: &Section) -> Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(s.length as usize);
    read_section_streaming(file, path, s, |b| {
        bytes.extend_from_slice(b);
        Ok(())
    })?;
    Ok(bytes)
}

pub(crate) fn read_section_streaming(
    file: &File,
    path: &Path,
    s: &Section,
    mut sink: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let mut buf = vec![0u8; STREAM_CHUNK.min(s.length as usize)];
    let mut hasher = crc32fast::Hasher::new();
    let mut failed: Option<StoreError> = None;
    let mut at = 0u64;
    while at < s.length {
        let n = (s.length - at).min(STREAM_CHUNK as u64) as usize;
        file.read_exact_at(&mut buf[..n], s.offset + at)
            .map_err(|e| StoreError::io(path, e))?;
        hasher.update(&buf[..n]);
        if failed.is_none() {
            failed = sink(&buf[..n]).err();
        }
        at += n as u64;
    }
    if hasher.finalize() != s.crc {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            why: format!("section {:?} checksum mismatch", s.kind),
        });
    }
    failed.map_or(Ok(()), Err)
}
