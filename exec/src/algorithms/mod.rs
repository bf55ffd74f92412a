//! One file per algorithm. Each exposes `compute` (the kernel, timed as algorithm time) and
//! `batches` (Arrow rows in internal-id order, built afterwards), and declares the bytes of
//! per-vertex state it allocates, from which the run decides where that state lives.

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

use planner::AlgoCall;

/// The per-vertex state of `call`'s kernel in bytes, and whether the kernel allocates it
/// through the run context (so it may be placed remotely).
pub fn state_bytes_per_vertex(call: &AlgoCall) -> (u64, bool) {
    match call {
        AlgoCall::Bfs { .. } => (bfs::STATE_BYTES, true),
        AlgoCall::Sssp { .. } => (sssp::STATE_BYTES, true),
        AlgoCall::PageRank { .. } => (pagerank::STATE_BYTES, true),
        AlgoCall::Wcc => (wcc::STATE_BYTES, true),
        AlgoCall::Cdlp { .. } => (cdlp::STATE_BYTES, true),
        AlgoCall::Lcc => (lcc::STATE_BYTES, true),
        // Parent (u32) and discovery order (u64).
        AlgoCall::Dfs { .. } => (12, false),
        AlgoCall::RandomWalk { .. } | AlgoCall::Degree => (0, false),
    }
}

/// EXPLAIN's line for a DM graph: whether the kernel's state will be remote or local, and why.
pub fn explain_state(call: &AlgoCall, vertices: u64, cn_cache: u64) -> String {
    let (per, placed) = state_bytes_per_vertex(call);
    let total = per.saturating_mul(vertices);
    let sizes = format!(
        "{per} B × {vertices} vertices = {} vs cn_cache {}",
        planner::settings::format_size(total),
        planner::settings::format_size(cn_cache)
    );
    if per == 0 {
        "local (no per-vertex state)".to_string()
    } else if !placed {
        format!("local ({sizes}; this kernel has no remote-state variant yet)")
    } else if total > cn_cache {
        format!("remote ({sizes}: direct remote update, frontier kept locally)")
    } else {
        format!("local ({sizes}: fits)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explain_says_where_the_state_lives_and_why() {
        let bfs = AlgoCall::Bfs { source: 0 };
        let s = explain_state(&bfs, 10, 16);
        assert!(
            s.starts_with("remote (4 B × 10 vertices = 40 B vs cn_cache 16 B"),
            "{s}"
        );
        assert!(explain_state(&bfs, 10, 40).starts_with("local ("));
        let dfs = AlgoCall::Dfs { source: 0 };
        assert!(explain_state(&dfs, 10, 16).contains("no remote-state variant"));
        assert!(explain_state(&AlgoCall::Degree, 10, 16).contains("no per-vertex state"));
    }
}
