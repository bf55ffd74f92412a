//! One file per algorithm. Each exposes `compute` (the kernel, timed as algorithm time) and
//! `batches` (Arrow rows in internal-id order, built afterwards).

pub mod bfs;
pub mod cdlp;
pub mod degree;
pub mod dfs;
pub mod lcc;
pub mod pagerank;
pub mod randomwalk;
pub mod sssp;
pub mod sssp_delta;
pub mod wcc;
