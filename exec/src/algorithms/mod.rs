//! One file per algorithm. Each exposes `compute` (the kernel, timed as algorithm time) and
//! `batches` (Arrow rows in internal-id order, built afterwards). What the kernel is — name,
//! parameters, output columns, per-vertex state bytes — is its entry in `planner::registry`.

pub mod bfs;
pub mod cdlp;
pub mod degree;
pub mod dfs;
pub mod lcc;
pub mod pagerank;
pub mod randomwalk;
pub mod sssp;
pub mod wcc;

use planner::AlgoCall;

/// The bytes of per-vertex state `call`'s kernel allocates through the run context (the
/// registry's `state_bytes`), from which the run decides whether that state is local or remote.
pub fn state_bytes_per_vertex(call: &AlgoCall) -> u64 {
    planner::registry::spec_of(call).state_bytes
}

/// EXPLAIN's line for a DM graph: whether the kernel's state will be remote or local, and why.
pub fn explain_state(call: &AlgoCall, vertices: u64, cn_cache: u64) -> String {
    let per = state_bytes_per_vertex(call);
    let total = per.saturating_mul(vertices);
    let sizes = format!(
        "{per} B × {vertices} vertices = {} vs cn_cache {}",
        planner::settings::format_size(total),
        planner::settings::format_size(cn_cache)
    );
    if per == 0 {
        "local (no per-vertex state)".to_string()
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
        let walk = AlgoCall::RandomWalk {
            start: None,
            walks: 1,
            length: 1,
            seed: 0,
        };
        assert!(explain_state(&walk, 10, 16).contains("no per-vertex state"));
        assert!(explain_state(&AlgoCall::Degree, 10, 16).contains("no per-vertex state"));
    }
}
