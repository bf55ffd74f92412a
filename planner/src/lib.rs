//! The planner: the algorithm registry, semantic checks with "did you mean", strategy choice
//! from graph statistics and settings, and EXPLAIN text. Touches no bytes and no threads.

pub mod plan;

pub use plan::{AlgoCall, Mode};
