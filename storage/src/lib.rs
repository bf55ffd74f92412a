//! Storage for frontier: the catalog, importers, the block-file format, I/O engines, the block
//! cache, the in-memory path and the disaggregated-memory store. Knows nothing of algorithms.

pub mod blockfile;
pub mod cache;
pub mod catalog;
pub mod cluster;
pub mod dm;
pub mod error;
pub mod gen;
pub mod huge;
pub mod import;
pub mod io;
pub mod remote_memory;
pub mod store;
pub mod weights;

pub use error::{Result, StoreError};
pub use remote_memory::{ElementKind, RemoteMemory, RemoteTraffic, RemoteVector};
pub use store::{
    CsrView, Direction, FetchOrder, GraphShape, GraphStore, IoStats, RunWorkers, WorkerJob,
};
pub use weights::WeightSlice;
