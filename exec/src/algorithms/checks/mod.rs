//! The verifiers of the longer kernels, one file each beside the kernels' directory: each
//! computes its algorithm's definition sequentially over the graph's lists and compares a
//! result with it (the shorter kernels carry their verifier in their own file).

pub mod betweenness;
pub mod dfs;
pub mod louvain;
pub mod pagerank;
pub mod randomwalk;
pub mod scc;
