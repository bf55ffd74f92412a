//! Choosing the access path for a graph file: in memory when the file fits the cache budget,
//! out of core otherwise.
//!
//! [`BlockStore`] is an enum rather than a trait object on purpose: the [`GraphStore`] trait is
//! generic over the visitor, and algorithms are monomorphised per store, so the in-memory path
//! has no per-list dynamic dispatch. [`with_block_store!`](crate::with_block_store) matches once
//! and runs the body with the concrete store.

use std::path::Path;

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

/// Opens `path` in memory when the file size is at most `cache_bytes`, else out of core with a
/// cache of `cache_bytes` and `io_depth` reads in flight (io_uring or the pread pool, decided
/// at run time).
pub fn open_store(path: &Path, opts: &ReaderOptions) -> Result<BlockStore> {
    let len = std::fs::metadata(path)
        .map_err(|e| crate::error::StoreError::io(path, e))?
        .len();
    if len <= opts.cache_bytes {
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
