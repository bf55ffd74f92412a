//! Opening a graph file: the superblock and the small sections (id map, vertex indexes, block
//! checksums) are read, checked and kept in memory; edge and weight sections are left on disk
//! for the reader that sits on top (in-memory or out-of-core).
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
};
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

/// An opened, checked graph file with its small sections in memory.
#[derive(Debug, Clone)]
pub struct GraphFile {
    /// The file's path (named in every error).
    pub path: PathBuf,
    /// The file's size in bytes when it was opened.
    pub file_len: u64,
    /// The decoded superblock.
    pub superblock: Superblock,
    /// What the file says about itself; `None` for version 1 files, which predate it.
    pub identity: Option<FileIdentity>,
    /// Input id of each internal vertex, strictly ascending.
    pub ids: Vec<u64>,
    /// Out-adjacency index.
    pub out: VertexIndex,
    /// In-adjacency index; `None` for undirected graphs (in-lists are the out-lists).
    pub inn: Option<VertexIndex>,
    /// CRC-32 of every block before the `BlockCrcs` section, by absolute block number
    /// (entry 0, the superblock, is 0: the superblock has its own checksum).
    pub block_crcs: Vec<u32>,
    /// `Some(first id)` when the input ids are contiguous, making `internal_id` O(1).
    contiguous_base: Option<u64>,
}

impl GraphFile {
    /// Opens `path`, checks the superblock and every small section, and loads them.
    pub fn open(path: impl AsRef<Path>) -> Result<GraphFile> {
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

        // Id map.
        let idmap = section(IdMap);
        if idmap.length != n * 8 {
            return Err(bad(format!(
                "IdMap is {} bytes, {} vertices need {}",
                idmap.length,
                n,
                n * 8
            )));
        }
        let raw = read_section(&file, &path, &idmap)?;
        let ids: Vec<u64> = raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        drop(raw);
        if let Some(i) = ids.windows(2).position(|w| w[0] >= w[1]) {
            return Err(bad(format!(
                "IdMap is not strictly ascending at internal vertex {}",
                i + 1
            )));
        }

        // Edge sections: whole blocks, weights parallel.
        let check_edges = |edges: &Section, weights: Option<&Section>| -> Result<u64> {
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
            Ok(slots)
        };
        let out_slots = check_edges(&section(OutEdges), sb.section(OutWeights))?;
        let out = read_index(&file, &path, &section(OutIndex), n, out_slots, sb.arcs)?;
        let inn = if sb.directed {
            let in_slots = check_edges(&section(InEdges), sb.section(InWeights))?;
            Some(read_index(
                &file,
                &path,
                &section(InIndex),
                n,
                in_slots,
                sb.arcs,
            )?)
        } else {
            None
        };

        // Block checksums: one per block before the BlockCrcs section, covering every
        // edge and weight block.
        let crcs = section(BlockCrcs);
        if crcs.length & 3 != 0 {
            return Err(bad(format!(
                "BlockCrcs is {} bytes, not a multiple of 4",
                crcs.length
            )));
        }
        let raw = read_section(&file, &path, &crcs)?;
        let block_crcs: Vec<u32> = raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
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

        let contiguous_base = match (ids.first(), ids.last()) {
            (Some(&f), Some(&l)) if l - f == n - 1 => Some(f),
            _ => None,
        };
        Ok(GraphFile {
            path,
            file_len,
            superblock: sb,
            identity,
            ids,
            out,
            inn,
            block_crcs,
            contiguous_base,
        })
    }

    /// The internal id of input id `input`: O(1) when the ids are contiguous, a binary search
    /// otherwise.
    pub fn internal_id(&self, input: u64) -> Option<u32> {
        if let Some(base) = self.contiguous_base {
            let d = input.checked_sub(base)?;
            return (d < self.ids.len() as u64).then_some(d as u32);
        }
        self.ids.binary_search(&input).ok().map(|i| i as u32)
    }

    /// The input id of internal vertex `v`.
    #[inline]
    pub fn input_id(&self, v: u32) -> u64 {
        self.ids[v as usize]
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

    /// The edge section of `dir` (undirected graphs answer `In` with `OutEdges`).
    pub fn edge_section(&self, dir: Direction) -> &Section {
        let kind = match dir {
            Direction::In if self.superblock.directed => SectionKind::InEdges,
            _ => SectionKind::OutEdges,
        };
        self.superblock.section(kind).expect("checked at open")
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

/// Reads and checks one vertex index: `n` entries, every list inside `slots`, degrees summing
/// to `arcs`.
fn read_index(
    file: &File,
    path: &Path,
    s: &Section,
    n: u64,
    slots: u64,
    arcs: u64,
) -> Result<VertexIndex> {
    let bad = |why: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        why,
    };
    if s.length != n * INDEX_ENTRY_BYTES as u64 {
        return Err(bad(format!(
            "{:?} is {} bytes, {} vertices need {}",
            s.kind,
            s.length,
            n,
            n * INDEX_ENTRY_BYTES as u64
        )));
    }
    let raw = read_section(file, path, s)?;
    let mut starts = Vec::with_capacity(n as usize);
    let mut degrees = Vec::with_capacity(n as usize);
    let mut sum: u64 = 0;
    for (v, e) in raw.chunks_exact(INDEX_ENTRY_BYTES).enumerate() {
        let start = u64::from_le_bytes(e[0..8].try_into().expect("8 bytes"));
        let degree = u64::from_le_bytes(e[8..16].try_into().expect("8 bytes"));
        if degree > u32::MAX as u64 {
            return Err(bad(format!(
                "{:?}: vertex {v} has degree {degree}, more than 2^32-1",
                s.kind
            )));
        }
        if start.checked_add(degree).is_none_or(|end| end > slots) {
            return Err(bad(format!(
                "{:?}: the list of vertex {v} runs outside its edge section",
                s.kind
            )));
        }
        sum += degree;
        starts.push(start);
        degrees.push(degree as u32);
    }
    if sum != arcs {
        return Err(bad(format!(
            "{:?}: degrees sum to {sum}, the superblock says {arcs} arcs",
            s.kind
        )));
    }
    Ok(VertexIndex { starts, degrees })
}
