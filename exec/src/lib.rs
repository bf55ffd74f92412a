//! The frontier runtime: vertex subsets, EdgeMap/VertexMap and their strategies, the worker
//! pool, one file per algorithm, Arrow result building, run statistics and result sinks.
//! Knows no file formats or sockets: it reads graphs through `storage::GraphStore`.

pub mod result;
pub mod sink;
pub mod topk;

pub use result::{IterationStats, ResultTable, BATCH_ROWS};
