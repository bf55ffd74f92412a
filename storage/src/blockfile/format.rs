//! The on-disk block-file format (versions 3 to 5): the one place its layout is written down.
//!
//! ```text
//! block 0            superblock (see below)
//! sections           each starts on a 4 KiB block boundary, in the order of the section table
//! ```
//!
//! Superblock (little endian):
//!
//! | bytes      | field                                                             |
//! |------------|-------------------------------------------------------------------|
//! | 0..8       | magic `FRONTIER`                                                  |
//! | 8..12      | format version (`u32`: [`FORMAT_VERSION`], or an older readable one) |
//! | 12..16     | flags (`u32`): bit 0 directed, bit 1 weighted, bit 2 degree order, bit 3 locality order |
//! | 16..24     | vertices (`u64`)                                                  |
//! | 24..32     | arcs per direction (`u64`; an undirected edge counts twice)       |
//! | 32..40     | edges as the user counts them (`u64`)                             |
//! | 40..44     | number of sections (`u32`, at most [`MAX_SECTIONS`])              |
//! | 44..48     | reserved, zero                                                    |
//! | 48..       | section table: [`SECTION_ENTRY_BYTES`]-byte entries               |
//! | 4092..4096 | CRC-32 of bytes 0..4092                                           |
//!
//! Section entry: kind `u32`, reserved `u32`, byte offset `u64` (a multiple of 4096), byte length
//! `u64`, CRC-32 of the section's `length` bytes `u32`, reserved `u32`.
//!
//! Sections:
//! - `IdMap`: `u64` input id of each internal vertex (packed from version 5). In key order (neither flag bit 2 nor 3)
//!   strictly ascending: internal id = rank of the input id, so input → internal is a binary
//!   search. In degree order (flag bit 2, version 4 on; `LAYOUT degree`) the vertices are grouped
//!   by degree bucket, the bucket of the largest degrees first, and ascending within each bucket,
//!   so the map is at most [`MAX_ID_RUNS`] strictly ascending runs. In locality order (flag bit
//!   3, version 5; `LAYOUT locality`) the vertices are grouped in small clusters of neighbours,
//!   each about one edge block of lists and ascending within itself, so the map is one strictly
//!   ascending run per cluster (any number of them). Input → internal is one binary search per
//!   run. Lists and neighbour ids are in internal order either way.
//! - `KeyOffsets` / `KeyBytes` (version 3 on, only when the vertices have string keys): the
//!   keys ascending byte-wise, and `IdMap` holds each internal vertex's key rank (the index of
//!   its key): `0..n` in key order, ascending runs in degree order. `KeyOffsets` holds
//!   `n + 1` `u64` byte offsets into `KeyBytes` (key `v` is bytes `offsets[v]..offsets[v+1]`),
//!   `KeyBytes` the keys' UTF-8 bytes back to back. Both are covered by `BlockCrcs`, so a
//!   reader can check and read them block by block instead of loading them whole.
//! - `OutIndex` / `InIndex`: 16 bytes per vertex (packed from version 5): start slot `u64`
//!   (index of the first `u32` of the list within the edge section) and degree `u64`.
//! - `OutEdges` / `InEdges`: 4 KiB blocks of 1024 `u32` internal neighbour ids, sorted ascending
//!   within a list. A list shorter than 1024 never straddles two blocks (first-fit bin packing
//!   over a window of open blocks); a longer list starts at a block boundary and spans
//!   consecutive blocks. Unused slots hold `u32::MAX`.
//! - `OutWeights` / `InWeights`: `f64` per slot, parallel to the edge section (slot `s` of the
//!   edge section has its weight at byte `8 s` of the weight section).
//! - `Identity` (version 2 on; absent in version 1): the file's self-description as UTF-8 JSON,
//!   [`FileIdentity`]: graph name, generation, a random file id, source, creation time and
//!   storage kind (directedness and weights are the superblock's flags). It lets the catalog be
//!   rebuilt from the graph files alone and lets a catalog entry check that the file at its path
//!   is the one it registered, not another graph's file copied over it.
//! - `BlockCrcs`: a CRC-32 (`u32`) for every block of the file, indexed by absolute block number;
//!   checked on every edge/weight block read and by `VERIFY GRAPH`. It is the last section and
//!   covers every block before it; entry 0 (the superblock, which carries its own checksum) is
//!   0. Every section is padded with zeros to whole blocks (block CRCs cover the padding), so
//!   the file length is a multiple of [`BLOCK_SIZE`]; edge sections are whole blocks.
//!
//! Packed lookups (version 5): `IdMap` and each `*Index` section hold [`PackedU64s`] in their
//! on-disk form ([`PackedU64s::write_to`]) instead of plain arrays: the ids; the start slots
//! then the degrees (an empty list's start is not kept: it reads as 0). Groups of 64 values
//! store a base and offsets at the width the group needs, so the lookups of a graph of degree
//! 3 take about 3 bytes a vertex on disk instead of 24.
//!
//! Version 1 files (written before the `Identity` section existed) are read as before; they
//! just cannot tell which graph they belong to. Version 2 files are version 3 files without
//! string keys; version 4 added degree order, version 5 locality order and packed lookups.
//! Every order is written as version 5; versions 1 to 4 are still read.
//!
//! [`PackedU64s`]: crate::blockfile::packed::PackedU64s
//! [`PackedU64s::write_to`]: crate::blockfile::packed::PackedU64s::write_to
//!
//! Undirected graphs have no `In*` sections: in-lists are the out-lists.
//! Addressing: slots are `u64`, so more than 2^32 edges and degrees above 2^24 are covered.

use crate::catalog::StorageKind;
use crate::error::StoreError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Bytes per block: the unit of I/O, caching and checksums.
pub const BLOCK_SIZE: usize = 4096;
/// `u32` neighbour slots per edge block.
pub const SLOTS_PER_BLOCK: usize = BLOCK_SIZE / 4;
/// The first eight bytes of every graph file.
pub const MAGIC: &[u8; 8] = b"FRONTIER";
/// The format version this build writes, the newest it reads: locality order and packed
/// lookups.
pub const FORMAT_VERSION: u32 = 5;
/// The version that added degree order.
pub const DEGREE_ORDER_VERSION: u32 = 4;
/// The first version whose id map and indexes are packed.
pub const PACKED_LOOKUPS_VERSION: u32 = 5;

/// The order of a file's internal ids (the `LAYOUT` it was imported with).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdOrder {
    /// Internal id = rank of the input id.
    #[default]
    Key,
    /// Grouped by degree bucket, hubs first: at most [`MAX_ID_RUNS`] ascending runs.
    Degree,
    /// Grouped in clusters of neighbours: one ascending run per cluster.
    Locality,
}

impl IdOrder {
    /// The most strictly ascending runs an id map in this order may have.
    pub fn max_runs(self) -> usize {
        match self {
            IdOrder::Key => 1,
            IdOrder::Degree => MAX_ID_RUNS,
            IdOrder::Locality => usize::MAX,
        }
    }

    /// The `LAYOUT` keyword that writes this order.
    pub fn keyword(self) -> &'static str {
        match self {
            IdOrder::Key => "key",
            IdOrder::Degree => "degree",
            IdOrder::Locality => "locality",
        }
    }
}
/// Most ascending runs a degree-ordered id map may have (one per degree bucket: degrees are
/// below 2^32, so 33 buckets suffice); more means the file is damaged.
pub const MAX_ID_RUNS: usize = 33;
/// The oldest format version this build still reads (version 1 has no `Identity` section).
pub const OLDEST_READABLE_VERSION: u32 = 1;
/// Bytes of one section-table entry.
pub const SECTION_ENTRY_BYTES: usize = 32;
/// Where the section table starts in the superblock.
pub const SECTION_TABLE_OFFSET: usize = 48;
/// Where the superblock checksum lives.
pub const SUPERBLOCK_CRC_OFFSET: usize = BLOCK_SIZE - 4;
/// Sections that fit in the superblock.
pub const MAX_SECTIONS: usize =
    (SUPERBLOCK_CRC_OFFSET - SECTION_TABLE_OFFSET) / SECTION_ENTRY_BYTES;
/// Bytes of one vertex-index entry.
pub const INDEX_ENTRY_BYTES: usize = 16;
/// Filler of unused edge slots.
pub const EMPTY_SLOT: u32 = u32::MAX;

const FLAG_DIRECTED: u32 = 1;
const FLAG_WEIGHTED: u32 = 2;
const FLAG_DEGREE_ORDER: u32 = 4;
const FLAG_LOCALITY_ORDER: u32 = 8;

/// The kinds of section a file may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum SectionKind {
    IdMap = 1,
    OutIndex = 2,
    OutEdges = 3,
    OutWeights = 4,
    InIndex = 5,
    InEdges = 6,
    InWeights = 7,
    BlockCrcs = 8,
    Identity = 9,
    KeyOffsets = 10,
    KeyBytes = 11,
}

impl SectionKind {
    fn from_u32(v: u32) -> Option<SectionKind> {
        use SectionKind::*;
        Some(match v {
            1 => IdMap,
            2 => OutIndex,
            3 => OutEdges,
            4 => OutWeights,
            5 => InIndex,
            6 => InEdges,
            7 => InWeights,
            8 => BlockCrcs,
            9 => Identity,
            10 => KeyOffsets,
            11 => KeyBytes,
            _ => return None,
        })
    }
}

/// One entry of the section table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub kind: SectionKind,
    /// Byte offset in the file, a multiple of [`BLOCK_SIZE`].
    pub offset: u64,
    /// Byte length of the section's content.
    pub length: u64,
    /// CRC-32 of the content.
    pub crc: u32,
}

impl Section {
    /// The first block of the section.
    pub fn first_block(&self) -> u64 {
        self.offset / BLOCK_SIZE as u64
    }

    /// Blocks the section occupies (its length rounded up).
    pub fn blocks(&self) -> u64 {
        self.length.div_ceil(BLOCK_SIZE as u64)
    }
}

/// The decoded superblock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superblock {
    /// The format version the file was written in.
    pub version: u32,
    pub vertices: u64,
    pub arcs: u64,
    pub edges: u64,
    pub directed: bool,
    pub weighted: bool,
    /// The order of internal ids (flag bits 2 and 3).
    pub order: IdOrder,
    pub sections: Vec<Section>,
}

impl Superblock {
    /// The section of `kind`, if the file has one.
    pub fn section(&self, kind: SectionKind) -> Option<&Section> {
        self.sections.iter().find(|s| s.kind == kind)
    }

    /// Encodes into one block, checksum included.
    pub fn encode(&self) -> Vec<u8> {
        assert!(self.sections.len() <= MAX_SECTIONS, "too many sections");
        let mut b = vec![0u8; BLOCK_SIZE];
        b[0..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&self.version.to_le_bytes());
        let flags = if self.directed { FLAG_DIRECTED } else { 0 }
            | if self.weighted { FLAG_WEIGHTED } else { 0 }
            | match self.order {
                IdOrder::Key => 0,
                IdOrder::Degree => FLAG_DEGREE_ORDER,
                IdOrder::Locality => FLAG_LOCALITY_ORDER,
            };
        b[12..16].copy_from_slice(&flags.to_le_bytes());
        b[16..24].copy_from_slice(&self.vertices.to_le_bytes());
        b[24..32].copy_from_slice(&self.arcs.to_le_bytes());
        b[32..40].copy_from_slice(&self.edges.to_le_bytes());
        b[40..44].copy_from_slice(&(self.sections.len() as u32).to_le_bytes());
        for (i, s) in self.sections.iter().enumerate() {
            let o = SECTION_TABLE_OFFSET + i * SECTION_ENTRY_BYTES;
            b[o..o + 4].copy_from_slice(&(s.kind as u32).to_le_bytes());
            b[o + 8..o + 16].copy_from_slice(&s.offset.to_le_bytes());
            b[o + 16..o + 24].copy_from_slice(&s.length.to_le_bytes());
            b[o + 24..o + 28].copy_from_slice(&s.crc.to_le_bytes());
        }
        let crc = crc32fast::hash(&b[..SUPERBLOCK_CRC_OFFSET]);
        b[SUPERBLOCK_CRC_OFFSET..].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes and checks a superblock read from `path` (named in every error).
    /// `file_len` is the file's size: every section must lie inside it.
    pub fn decode(block: &[u8], path: &Path, file_len: u64) -> Result<Superblock, StoreError> {
        let bad = |why: String| StoreError::Corrupt {
            path: path.to_path_buf(),
            why,
        };
        if block.len() < BLOCK_SIZE {
            return Err(bad(format!(
                "file is {} bytes, shorter than its superblock",
                block.len()
            )));
        }
        if &block[0..8] != MAGIC {
            return Err(bad("not a frontier graph file (bad magic)".into()));
        }
        let stored =
            u32::from_le_bytes(block[SUPERBLOCK_CRC_OFFSET..BLOCK_SIZE].try_into().unwrap());
        if crc32fast::hash(&block[..SUPERBLOCK_CRC_OFFSET]) != stored {
            return Err(bad("superblock checksum mismatch".into()));
        }
        let u32_at = |o: usize| u32::from_le_bytes(block[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(block[o..o + 8].try_into().unwrap());
        let version = u32_at(8);
        if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(bad(format!(
                "format version {version}, this build reads versions \
                 {OLDEST_READABLE_VERSION} to {FORMAT_VERSION}; re-create the graph with this \
                 build (CREATE OR REPLACE GRAPH ... FROM its source)"
            )));
        }
        let flags = u32_at(12);
        if flags & !(FLAG_DIRECTED | FLAG_WEIGHTED | FLAG_DEGREE_ORDER | FLAG_LOCALITY_ORDER) != 0 {
            return Err(bad(format!("unknown flags {flags:#x}")));
        }
        if flags & FLAG_DEGREE_ORDER != 0 && version < DEGREE_ORDER_VERSION {
            return Err(bad(format!(
                "format version {version} with the degree-order flag, which version \
                 {DEGREE_ORDER_VERSION} added"
            )));
        }
        if flags & FLAG_LOCALITY_ORDER != 0 && version < FORMAT_VERSION {
            return Err(bad(format!(
                "format version {version} with the locality-order flag, which version \
                 {FORMAT_VERSION} added"
            )));
        }
        let order = match (
            flags & FLAG_DEGREE_ORDER != 0,
            flags & FLAG_LOCALITY_ORDER != 0,
        ) {
            (false, false) => IdOrder::Key,
            (true, false) => IdOrder::Degree,
            (false, true) => IdOrder::Locality,
            (true, true) => {
                return Err(bad(
                    "both the degree-order and the locality-order flags are set".into(),
                ))
            }
        };
        let count = u32_at(40) as usize;
        if count > MAX_SECTIONS {
            return Err(bad(format!("{count} sections, at most {MAX_SECTIONS} fit")));
        }
        let mut sections = Vec::with_capacity(count);
        for i in 0..count {
            let o = SECTION_TABLE_OFFSET + i * SECTION_ENTRY_BYTES;
            let kind = SectionKind::from_u32(u32_at(o))
                .ok_or_else(|| bad(format!("section {i} has unknown kind {}", u32_at(o))))?;
            let s = Section {
                kind,
                offset: u64_at(o + 8),
                length: u64_at(o + 16),
                crc: u32_at(o + 24),
            };
            if s.offset & (BLOCK_SIZE as u64 - 1) != 0 || s.offset == 0 {
                return Err(bad(format!("section {kind:?} is not block aligned")));
            }
            let end = s.offset.checked_add(s.length);
            if end.is_none_or(|e| e > file_len) {
                return Err(bad(format!(
                    "section {kind:?} ends past the end of the file (truncated?)"
                )));
            }
            if sections.iter().any(|x: &Section| x.kind == kind) {
                return Err(bad(format!("section {kind:?} appears twice")));
            }
            sections.push(s);
        }
        let sb = Superblock {
            version,
            vertices: u64_at(16),
            arcs: u64_at(24),
            edges: u64_at(32),
            directed: flags & FLAG_DIRECTED != 0,
            weighted: flags & FLAG_WEIGHTED != 0,
            order,
            sections,
        };
        if sb.vertices > u32::MAX as u64 {
            return Err(bad(format!("{} vertices, more than 2^32", sb.vertices)));
        }
        Ok(sb)
    }
}

/// A graph file's description of itself (the `Identity` section).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIdentity {
    /// The graph the file was written for.
    pub graph: String,
    /// The catalog generation in the file's name (`NAME-GENERATION.fgraph`).
    pub generation: u64,
    /// 128 random bits in hex, unique to this file; the catalog entry records it.
    pub file_id: String,
    /// The path the graph was imported from.
    pub source: String,
    /// Seconds since the Unix epoch.
    pub created_at: u64,
    /// Where the catalog keeps the graph's data.
    pub storage: StorageKind,
}

impl FileIdentity {
    /// The identity of a new file of `graph`, with a fresh random id.
    pub fn new(graph: &str, generation: u64, source: &str, storage: StorageKind) -> FileIdentity {
        FileIdentity {
            graph: graph.to_string(),
            generation,
            file_id: random_file_id(),
            source: source.to_string(),
            created_at: crate::catalog::now_secs(),
            storage,
        }
    }

    /// The section's bytes.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("an identity always serialises")
    }

    /// Decodes the section read from `path` (named in the error).
    pub fn decode(bytes: &[u8], path: &Path) -> Result<FileIdentity, StoreError> {
        serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
            path: path.to_path_buf(),
            why: format!("the Identity section is unreadable: {e}"),
        })
    }
}

/// 128 random bits from the operating system, in hex. Should the OS refuse, the time and the
/// process id still make the id unique in practice.
fn random_file_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        bytes = (nanos ^ ((std::process::id() as u128) << 96)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Superblock {
        Superblock {
            version: FORMAT_VERSION,
            vertices: 10,
            arcs: 34,
            edges: 17,
            directed: true,
            weighted: true,
            order: IdOrder::Locality,
            sections: vec![Section {
                kind: SectionKind::IdMap,
                offset: 4096,
                length: 80,
                crc: 7,
            }],
        }
    }

    #[test]
    fn version_1_files_still_decode_and_unknown_versions_say_what_to_do() {
        let mut old = sample();
        old.version = 1;
        old.order = IdOrder::Key;
        let back = Superblock::decode(&old.encode(), Path::new("g"), 8192).unwrap();
        assert_eq!(back.version, 1);
        // The degree-order flag came with version 4, locality order with 5: an older file
        // carrying either is damaged.
        old.order = IdOrder::Degree;
        let err = Superblock::decode(&old.encode(), Path::new("g"), 8192).unwrap_err();
        assert!(err.to_string().contains("version 4 added"), "{err}");
        old.version = DEGREE_ORDER_VERSION;
        old.order = IdOrder::Locality;
        let err = Superblock::decode(&old.encode(), Path::new("g"), 8192).unwrap_err();
        assert!(err.to_string().contains("version 5 added"), "{err}");
        for order in [IdOrder::Key, IdOrder::Degree, IdOrder::Locality] {
            let mut now = sample();
            now.order = order;
            let back = Superblock::decode(&now.encode(), Path::new("g"), 8192).unwrap();
            assert_eq!(back.order, order);
        }
        let mut future = sample();
        future.version = FORMAT_VERSION + 1;
        let err = Superblock::decode(&future.encode(), Path::new("g"), 8192).unwrap_err();
        assert!(err.to_string().contains("re-create the graph"), "{err}");
    }

    #[test]
    fn identities_round_trip_and_ids_differ() {
        let a = FileIdentity::new("web", 3, "/in/web.e", StorageKind::Memory);
        let b = FileIdentity::new("web", 3, "/in/web.e", StorageKind::Memory);
        assert_eq!(a.file_id.len(), 32);
        assert_ne!(a.file_id, b.file_id);
        assert_eq!(
            FileIdentity::decode(&a.encode(), Path::new("g")).unwrap(),
            a
        );
        assert!(FileIdentity::decode(b"{", Path::new("g")).is_err());
    }

    #[test]
    fn round_trips() {
        let b = sample().encode();
        let back = Superblock::decode(&b, Path::new("g"), 8192).unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn every_flipped_byte_of_the_superblock_is_detected() {
        let b = sample().encode();
        for i in 0..BLOCK_SIZE {
            let mut c = b.clone();
            c[i] ^= 0x40;
            assert!(
                Superblock::decode(&c, Path::new("g"), 8192).is_err(),
                "byte {i}"
            );
        }
    }

    #[test]
    fn a_section_past_the_end_is_refused() {
        let b = sample().encode();
        let err = Superblock::decode(&b, Path::new("g"), 4100).unwrap_err();
        assert!(err.to_string().contains("truncated"), "{err}");
    }
}
