//! The frontier runtime: vertex subsets, per-vertex state arrays placed locally or in remote
//! memory, the operators (EdgeMap, edge reduces, VertexMap, list fetch, neighbour intersection,
//! linking, delta-stepping) with their strategies, the worker pool, one file per algorithm,
//! Arrow result building, run statistics and result sinks.
//! Knows no file formats or sockets: it reads graphs through `storage::GraphStore`.

pub mod algorithms;
pub mod balance;
pub mod batched;
pub mod bitmap;
pub mod claim_filter;
pub mod cluster;
pub mod collab;
pub mod config;
pub mod context;
pub mod delta;
pub mod edgemap;
pub mod error;
pub mod expr;
pub mod filter;
pub mod gather;
pub mod intersect;
pub mod join;
pub mod kept_pull;
pub mod link;
pub mod list_sum;
pub mod lists;
pub mod output;
pub mod pipeline;
pub mod pool;
pub mod prefetch;
pub mod read_cost;
pub mod reduce;
pub mod reduce_mode;
pub mod reference;
pub mod remote_part;
pub mod result;
pub mod rng;
pub mod run;
pub mod sink;
pub mod spin_barrier;
pub mod spread;
pub mod stacks;
pub mod state;
pub mod subset;
pub mod testing;
pub mod topk;
pub mod verify;
pub mod vertex_keys;
pub mod vertexmap;

pub use config::{default_threads, Progress, ProgressFn, RunConfig};
pub use context::RunContext;
pub use edgemap::{EdgeFunc, EdgeMap, Strategy};
pub use error::ExecError;
pub use output::output_schema;
pub use result::{IterationStats, ResultTable, Summary, SummaryValue, BATCH_ROWS};
pub use run::run;
pub use state::{Placement, StateValue, VertexArray};
pub use subset::VertexSubset;
pub use vertexmap::vertex_map;
