//! The string keys of a graph's vertices (the `KeyOffsets` and `KeyBytes` sections): key of an
//! internal id, internal id of a key (a binary search: the keys are sorted), and the keys
//! nearest a missing one (for "did you mean").
//!
//! Two ways to hold them:
//! - **loaded**: both sections read whole and checked once (the in-memory store, which holds
//!   the whole file anyway);
//! - **by block**: 4 KiB blocks read on demand through a [`BlockCache`] of a size the opener
//!   takes out of its own budget (the out-of-core and DM stores), each block checked against
//!   the file's block checksums as it is read. A lookup reads O(log |V|) blocks; a result
//!   column reads the blocks its keys sit in.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::blockfile::format::{Section, SectionKind, BLOCK_SIZE};
use crate::blockfile::open::FileHeader;
use crate::cache::{BlockCache, BlockRef};
use crate::error::{Result, StoreError};
use crate::io::{AlignedBuf, IoCounters};

/// The string keys of a graph, by internal id.
pub struct VertexKeys {
    n: u32,
    path: PathBuf,
    source: Source,
}

enum Source {
    Loaded {
        offsets: Vec<u64>,
        bytes: Vec<u8>,
    },
    Blocks {
        file: File,
        offsets: Section,
        bytes: Section,
        /// The block checksums of the two sections, by absolute block number.
        crcs: Vec<(u64, u32)>,
        cache: BlockCache,
    },
}

impl std::fmt::Debug for VertexKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match &self.source {
            Source::Loaded { .. } => "loaded",
            Source::Blocks { .. } => "by block",
        };
        write!(f, "VertexKeys({} keys, {how})", self.n)
    }
}

/// The smallest cache a block reader gets: a binary search step reads at most four blocks.
pub const MIN_KEY_CACHE: u64 = 4 * BLOCK_SIZE as u64;

impl VertexKeys {
    /// Reads and checks both sections whole; `None` when the graph has integer ids.
    pub fn load(gf: &FileHeader) -> Result<Option<VertexKeys>> {
        let Some((off_s, bytes_s)) = sections(gf) else {
            return Ok(None);
        };
        let file = File::open(&gf.path).map_err(|e| StoreError::io(&gf.path, e))?;
        let raw = crate::blockfile::open::read_section(&file, &gf.path, &off_s)?;
        let offsets: Vec<u64> = raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        drop(raw);
        let bytes = crate::blockfile::open::read_section(&file, &gf.path, &bytes_s)?;
        let keys = VertexKeys {
            n: gf.superblock.vertices as u32,
            path: gf.path.clone(),
            source: Source::Loaded { offsets, bytes },
        };
        keys.check_all()?;
        Ok(Some(keys))
    }

    /// Reads the sections block by block through a cache of `cache_bytes` (at least
    /// [`MIN_KEY_CACHE`]); `None` when the graph has integer ids.
    pub fn by_block(gf: &FileHeader, cache_bytes: u64) -> Result<Option<VertexKeys>> {
        let Some((offsets, bytes)) = sections(gf) else {
            return Ok(None);
        };
        let file = File::open(&gf.path).map_err(|e| StoreError::io(&gf.path, e))?;
        let crcs = [offsets, bytes]
            .iter()
            .flat_map(|s| s.first_block()..s.first_block() + s.blocks())
            .map(|b| (b, gf.block_crcs.get(b as usize).copied().unwrap_or(0)))
            .collect();
        Ok(Some(VertexKeys {
            n: gf.superblock.vertices as u32,
            path: gf.path.clone(),
            source: Source::Blocks {
                file,
                offsets,
                bytes,
                crcs,
                cache: BlockCache::new(
                    cache_bytes.max(MIN_KEY_CACHE),
                    Arc::new(IoCounters::default()),
                ),
            },
        }))
    }

    /// Number of keys (|V|).
    pub fn len(&self) -> u32 {
        self.n
    }

    /// Whether the graph has no vertices.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn corrupt(&self, why: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            why,
        }
    }

    /// Loaded keys: offsets that frame every key, keys in UTF-8 and strictly ascending.
    fn check_all(&self) -> Result<()> {
        let Source::Loaded { offsets, bytes } = &self.source else {
            return Ok(());
        };
        if offsets.first() != Some(&0) || offsets.last() != Some(&(bytes.len() as u64)) {
            return Err(self.corrupt("KeyOffsets does not frame KeyBytes".into()));
        }
        let mut prev: Option<&[u8]> = None;
        for v in 0..self.n as usize {
            let (s, e) = (offsets[v], offsets[v + 1]);
            if s > e {
                return Err(self.corrupt(format!("KeyOffsets decreases at vertex {v}")));
            }
            let k = &bytes[s as usize..e as usize];
            if std::str::from_utf8(k).is_err() {
                return Err(self.corrupt(format!("the key of vertex {v} is not UTF-8")));
            }
            if prev.is_some_and(|p| p >= k) {
                return Err(self.corrupt(format!("the keys are not ascending at vertex {v}")));
            }
            prev = Some(k);
        }
        Ok(())
    }

    /// One checked block of the file, through the cache.
    fn block(&self, b: u64) -> Result<BlockRef> {
        let Source::Blocks {
            file, crcs, cache, ..
        } = &self.source
        else {
            unreachable!("block reads only by block");
        };
        if let Some(hit) = cache.get(b) {
            return Ok(hit);
        }
        let mut buf = AlignedBuf::new(1);
        file.read_exact_at(buf.as_bytes_mut(), b * BLOCK_SIZE as u64)
            .map_err(|e| StoreError::io(&self.path, e))?;
        let want = crcs
            .binary_search_by_key(&b, |&(blk, _)| blk)
            .ok()
            .map(|i| crcs[i].1);
        if want != Some(crc32fast::hash(buf.as_bytes())) {
            return Err(self.corrupt(format!("block {b} (string keys) checksum mismatch")));
        }
        Ok(cache.insert(b, Arc::new(buf)))
    }

    /// Bytes `start..start + len` of section `s`, block by block.
    fn read(&self, s: &Section, start: u64, len: u64, out: &mut Vec<u8>) -> Result<()> {
        if start.checked_add(len).is_none_or(|end| end > s.length) {
            return Err(self.corrupt(format!("{:?} is read past its end", s.kind)));
        }
        let mut at = s.offset + start;
        let end = at + len;
        while at < end {
            let b = at / BLOCK_SIZE as u64;
            let block = self.block(b)?;
            let from = (at % BLOCK_SIZE as u64) as usize;
            let to = ((end - b * BLOCK_SIZE as u64) as usize).min(BLOCK_SIZE);
            out.extend_from_slice(&block.as_bytes()[from..to]);
            at = (b + 1) * BLOCK_SIZE as u64;
        }
        Ok(())
    }

    /// The byte range of key `v` in `KeyBytes`.
    fn span(&self, v: u32) -> Result<(u64, u64)> {
        let (s, e) = match &self.source {
            Source::Loaded { offsets, .. } => (offsets[v as usize], offsets[v as usize + 1]),
            Source::Blocks { offsets, .. } => {
                let mut raw = Vec::with_capacity(16);
                self.read(offsets, v as u64 * 8, 16, &mut raw)?;
                (
                    u64::from_le_bytes(raw[0..8].try_into().expect("8 bytes")),
                    u64::from_le_bytes(raw[8..16].try_into().expect("8 bytes")),
                )
            }
        };
        if s > e {
            return Err(self.corrupt(format!("KeyOffsets decreases at vertex {v}")));
        }
        Ok((s, e))
    }

    /// Appends the key of internal vertex `v` to `out`.
    pub fn append_key(&self, v: u32, out: &mut Vec<u8>) -> Result<()> {
        if v >= self.n {
            return Err(self.corrupt(format!("no key for vertex {v} of {}", self.n)));
        }
        let (s, e) = self.span(v)?;
        match &self.source {
            Source::Loaded { bytes, .. } => out.extend_from_slice(&bytes[s as usize..e as usize]),
            Source::Blocks { bytes, .. } => self.read(bytes, s, e - s, out)?,
        }
        Ok(())
    }

    /// The key of internal vertex `v`.
    pub fn key(&self, v: u32) -> Result<String> {
        let mut raw = Vec::new();
        self.append_key(v, &mut raw)?;
        String::from_utf8(raw)
            .map_err(|_| self.corrupt(format!("the key of vertex {v} is not UTF-8")))
    }

    /// The internal id of `key`, or where it would be inserted (`Err` of the inner result).
    fn search(&self, key: &[u8]) -> Result<std::result::Result<u32, u32>> {
        let (mut lo, mut hi) = (0u32, self.n);
        let mut probe = Vec::new();
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            probe.clear();
            self.append_key(mid, &mut probe)?;
            match probe.as_slice().cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Ok(mid)),
            }
        }
        Ok(Err(lo))
    }

    /// The rank of key `key` (the vertex's input id; its internal id unless the graph is in
    /// degree order), if there is one.
    pub fn find(&self, key: &str) -> Result<Option<u32>> {
        Ok(self.search(key.as_bytes())?.ok())
    }

    /// Up to `2 * around` keys next to where `key` would sit in sorted order: candidates for
    /// "did you mean" (every key, when the graph has at most `all_below` vertices).
    pub fn near(&self, key: &str, around: u32, all_below: u32) -> Result<Vec<String>> {
        let range = if self.n <= all_below {
            0..self.n
        } else {
            let at = match self.search(key.as_bytes())? {
                Ok(i) | Err(i) => i,
            };
            at.saturating_sub(around)..at.saturating_add(around).min(self.n)
        };
        range.map(|v| self.key(v)).collect()
    }

    /// Bytes the keys take in the file (both sections).
    pub fn file_bytes(gf: &FileHeader) -> u64 {
        sections(gf).map_or(0, |(o, b)| o.length + b.length)
    }
}

fn sections(gf: &FileHeader) -> Option<(Section, Section)> {
    let sb = &gf.superblock;
    Some((
        *sb.section(SectionKind::KeyOffsets)?,
        *sb.section(SectionKind::KeyBytes)?,
    ))
}
