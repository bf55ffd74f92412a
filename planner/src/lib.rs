//! The planner: semantic checks against the algorithms the executor registers with "did you mean", strategy choice
//! from graph statistics and settings, and EXPLAIN text. Touches no bytes and no threads.

pub mod blocking;
pub mod check;
pub mod columns;
pub mod condition;
pub mod error;
pub mod explain;
pub mod plan;
pub mod registry;
pub mod result_clauses;
pub mod settings;
pub mod suggest;
pub mod vertex;

pub use check::{
    blocking_fits, estimate_memory, plan_run, plan_run_on, unknown_graph, CallPlan, MemoryEstimate,
    RunPlan,
};
pub use columns::OutputColumn;
pub use error::PlanError;
pub use explain::{explain, ReaderInfo};
pub use plan::{AlgoCall, Mode};
pub use registry::{AlgorithmSpec, Registry};
pub use result_clauses::{OrderKey, Projection};
pub use settings::{DmUpdate, Settings};
