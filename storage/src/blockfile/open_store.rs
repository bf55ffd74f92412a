//! Choosing the access path for a graph file: in memory when the loaded graph fits the cache
//! budget, out of core otherwise.
//!
//! [`BlockStore`] is an enum rather than a trait object on purpose: the [`GraphStore`] trait is
//! generic over the visitor, and algorithms are monomorphised per store, so the in-memory path
//! has no per-list dynamic dispatch. [`with_block_store!`](crate::with_block_store) matches once
//! and runs the body with the concrete store.

use std::path::Path;

use crate::blockfile::format::{SectionKind, Superblock, BLOCK_SIZE};
use crate::blockfile::memory::MemoryStore;
use crate::blockfile::ooc::OutOfCoreStore;
use crate::error::Result;
use crate::io::EngineOptions;

/// The reader settings (`SET cache = ...`, `SET io_depth = ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReaderOptions {
    /// The memory budget for graph data: the whole file below it, the block cache above.
    pub cache_bytes: u64,
    /// Reads in flight at once (shared by all threads).
    pub io_depth: u32,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            cache_bytes: 1 << 30,
            io_depth: 32,
        }
    }
}

/// An opened graph, on one of the two block-file access paths.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "made once per opened graph and kept in place: the size difference costs nothing"
)]
pub enum BlockStore {
    /// The whole file in memory: plain slices, no locking.
    Memory(MemoryStore),
    /// Blocks read on demand through the cache and the I/O engine.
    OutOfCore(OutOfCoreStore),
}

impl BlockStore {
    /// Whether the graph was loaded into memory (else it is read out of core).
    pub fn is_in_memory(&self) -> bool {
        matches!(self, BlockStore::Memory(_))
    }
}

/// Opens `path` in memory when what it takes loaded whole is at most `cache_bytes`, else out of core with a
/// cache of `cache_bytes` and `io_depth` reads in flight (io_uring or the pread pool, decided
/// at run time).
pub fn open_store(path: &Path, opts: &ReaderOptions) -> Result<BlockStore> {
    if loaded_bytes_of(path)? <= opts.cache_bytes {
        return Ok(BlockStore::Memory(MemoryStore::load(path)?));
    }
    let engine = EngineOptions {
        depth: opts.io_depth.max(1),
        ..EngineOptions::default()
    };
    Ok(BlockStore::OutOfCore(OutOfCoreStore::open(
        path,
        opts.cache_bytes,
        &engine,
    )?))
}

/// What `path` takes loaded whole ([`crate::catalog::GraphMeta::loaded_bytes`] for a file
/// without its catalog entry): its superblock's shape and key sections, at least its size.
pub fn loaded_bytes_of(path: &Path) -> Result<u64> {
    use std::os::unix::fs::FileExt;
    let io = |e| crate::error::StoreError::io(path, e);
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut block = vec![0u8; BLOCK_SIZE];
    file.read_exact_at(&mut block, 0).map_err(io)?;
    let sb = Superblock::decode(&block, path, len)?;
    let keys: u64 = sb
        .sections
        .iter()
        .filter(|s| matches!(s.kind, SectionKind::KeyOffsets | SectionKind::KeyBytes))
        .map(|s| s.length)
        .sum();
    let plain =
        crate::blockfile::memory::loaded_bytes(sb.vertices, sb.arcs, sb.directed, sb.weighted);
    Ok(plain.saturating_add(keys).max(len))
}

/// Runs `$body` with `$s` bound to the concrete store inside a [`BlockStore`], so the body is
/// compiled once per store type:
///
/// ```no_run
/// use storage::blockfile::open_store::{open_store, ReaderOptions};
/// use storage::GraphStore;
/// let store = open_store(std::path::Path::new("g.frontier"), &ReaderOptions::default())?;
/// let n = storage::with_block_store!(&store, s => s.shape().vertices);
/// # let _ = n;
/// # Ok::<(), storage::StoreError>(())
/// ```
#[macro_export]
macro_rules! with_block_store {
    ($store:expr, $s:ident => $body:expr) => {
        match $store {
            $crate::blockfile::open_store::BlockStore::Memory($s) => $body,
            $crate::blockfile::open_store::BlockStore::OutOfCore($s) => $body,
        }
    };
}
