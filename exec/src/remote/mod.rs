//! Kernels whose per-vertex state lives in remote memory (DMG §4.3.2, direct remote update).
//!
//! **When.** A kernel asks [`remote_space`] before allocating its state: if the store offers
//! remote attributes ([`GraphStore::remote_attributes`], a DM graph) and the state (bytes per
//! vertex × |V|) exceeds the compute node's budget (`SET cn_cache`), the state is a
//! [`storage::dm::RemoteArray`] and the kernel runs its variant here; otherwise the local kernel
//! runs unchanged, with no extra cost beyond that one check.
//!
//! PageRank ([`pagerank`]) has no frontier: every round walks the vertices in ranges of one
//! update buffer, reading their ranks and adding contributions remotely. WCC ([`wcc`]) keeps a
//! bitmap frontier and walks the ranges that hold active vertices.
//!
//! **What stays local.** Only the frontier, as a sparse list (the vertices activated, plus for
//! SSSP the distance each was given, so the next round needs no read of the sources' state), and
//! per-thread update buffers of at most [`update_buffer_len`] items. No |V|-sized array is kept
//! while the kernel runs; the result (one value per vertex) is read back once at the end, because
//! the result table holds every row anyway.
//!
//! **How a round goes** ([`push_round`]). The frontier is split over the workers; each fetches
//! its lists through the store's batched retrieval and turns every edge into an update in its
//! buffer; a full buffer (or the end of the chunk) is sent as one batched remote update — per
//! memory node one or more doorbell batches, several in flight — and the updates that changed
//! a value form the next frontier. Rounds always push: a pull round would read every vertex's
//! remote state.

pub mod bfs;
pub mod pagerank;
pub mod sssp;
pub mod wcc;

use planner::AlgoCall;
use rayon::prelude::*;
use storage::{AttributeSpace, Direction, FetchOrder, GraphStore};

use crate::context::RunContext;
use crate::error::ExecError;

/// The name PROFILE prints for a round of a remote-state kernel.
pub const STRATEGY: &str = "push remote";

/// Smallest update buffer, whatever the budget: below this, round trips dominate.
const MIN_BUFFER: usize = 64;
/// Largest update buffer: beyond it batches stop getting cheaper per item.
const MAX_BUFFER: usize = 1 << 16;
/// Bytes one buffered update occupies (index and value).
const UPDATE_BYTES: u64 = 16;

/// The attribute space to keep a kernel's state in, when it must be remote: the store offers one
/// and `bytes_per_vertex` × |V| exceeds its local budget.
pub fn remote_space<S: GraphStore>(
    store: &S,
    bytes_per_vertex: u64,
) -> Option<&dyn AttributeSpace> {
    let space = store.remote_attributes()?;
    let state = bytes_per_vertex.saturating_mul(store.shape().vertices as u64);
    (state > space.local_budget()).then_some(space)
}

/// The per-vertex state of `call`'s kernel in bytes, and whether it has a remote variant.
pub fn state_bytes_per_vertex(call: &AlgoCall) -> (u64, bool) {
    match call {
        AlgoCall::Bfs { .. } => (bfs::STATE_BYTES, true),
        AlgoCall::Sssp { .. } => (sssp::STATE_BYTES, true),
        AlgoCall::PageRank { .. } => (pagerank::STATE_BYTES, true),
        AlgoCall::Wcc => (wcc::STATE_BYTES, true),
        // Label and next label (u64 each).
        AlgoCall::Cdlp { .. } => (16, false),
        // Coefficient (f64) and triangle count (u64).
        AlgoCall::Lcc => (16, false),
        // Parent (u32) and discovery order (u64).
        AlgoCall::Dfs { .. } => (12, false),
        AlgoCall::RandomWalk { .. } | AlgoCall::Degree => (0, false),
    }
}

/// EXPLAIN's line for a DM graph: whether the kernel's state will be remote or local, and why.
pub fn explain_state(call: &AlgoCall, vertices: u64, cn_cache: u64) -> String {
    let (per, converted) = state_bytes_per_vertex(call);
    let total = per.saturating_mul(vertices);
    let sizes = format!(
        "{per} B × {vertices} vertices = {} vs cn_cache {}",
        planner::settings::format_size(total),
        planner::settings::format_size(cn_cache)
    );
    if per == 0 {
        "local (no per-vertex state)".to_string()
    } else if !converted {
        format!("local ({sizes}; this kernel has no remote-state variant yet)")
    } else if total > cn_cache {
        format!("remote ({sizes}: direct remote update, frontier kept locally)")
    } else {
        format!("local ({sizes}: fits)")
    }
}

/// Updates one worker may buffer before sending them: its share of `cn_cache` (half of it; the
/// other half is the store's read windows) in [`MIN_BUFFER`]..[`MAX_BUFFER`].
pub fn update_buffer_len(budget: u64, threads: usize) -> usize {
    let share = budget / 2 / threads.max(1) as u64 / UPDATE_BYTES;
    (share as usize).clamp(MIN_BUFFER, MAX_BUFFER)
}

/// The lists one push round reads, and how many updates a worker buffers.
#[derive(Debug, Clone, Copy)]
pub struct RoundLists<'f> {
    /// The active vertices, sorted, no duplicates.
    pub frontier: &'f [u32],
    pub dir: Direction,
    pub want_weights: bool,
    /// Updates buffered per worker before they are sent ([`update_buffer_len`]).
    pub buffer_len: usize,
}

/// One push round over `lists.frontier`. For each fetched list, `per_src(v)` is evaluated once
/// and `emit(&that, dst, weight)` once per edge; emitted updates are buffered and
/// `flush(buffer)` sends them (and must empty the buffer), returning what they activated.
/// Returns everything activated, in no particular order, and the number of edges examined.
pub fn push_round<S, P, U, A>(
    ctx: &RunContext<'_, S>,
    lists: RoundLists<'_>,
    per_src: impl Fn(u32) -> P + Sync,
    emit: impl Fn(&P, u32, f64) -> Option<U> + Sync,
    flush: impl Fn(&mut Vec<U>) -> Result<Vec<A>, ExecError> + Sync,
) -> Result<(Vec<A>, u64), ExecError>
where
    S: GraphStore,
    U: Send,
    A: Send,
{
    let store = ctx.store;
    let RoundLists {
        frontier,
        dir,
        want_weights,
        buffer_len,
    } = lists;
    let chunk = ctx.pool.chunk_len(frontier.len(), 16, 4096);
    let parts = ctx.pool.install(|| {
        frontier
            .par_chunks(chunk)
            .map(|chunk| {
                ctx.check()?;
                let mut buf: Vec<U> = Vec::with_capacity(buffer_len);
                let mut out: Vec<A> = Vec::new();
                let mut edges = 0u64;
                let mut failed: Option<ExecError> = None;
                store.for_each_list(
                    dir,
                    chunk,
                    FetchOrder::AsGiven,
                    want_weights,
                    |v, ns, ws| {
                        if failed.is_some() {
                            return;
                        }
                        edges += ns.len() as u64;
                        let p = per_src(v);
                        for (k, &dst) in ns.iter().enumerate() {
                            let w = ws.and_then(|w| w.get(k)).copied().unwrap_or(1.0);
                            if let Some(u) = emit(&p, dst, w) {
                                buf.push(u);
                            }
                            if buf.len() >= buffer_len {
                                match flush(&mut buf) {
                                    Ok(a) => out.extend(a),
                                    Err(e) => {
                                        failed = Some(e);
                                        return;
                                    }
                                }
                            }
                        }
                    },
                )?;
                if let Some(e) = failed {
                    return Err(e);
                }
                if !buf.is_empty() {
                    out.extend(flush(&mut buf)?);
                }
                Ok((out, edges))
            })
            .collect::<Result<Vec<_>, ExecError>>()
    })?;
    let edges = parts.iter().map(|p| p.1).sum();
    let mut all = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
    for (p, _) in parts {
        all.extend(p);
    }
    Ok((all, edges))
}

/// Elements per piece when a finished array is read back (1 MiB, several pieces in flight).
const READ_BACK_PIECE: usize = 1 << 17;

/// Reads a finished remote array back for the result, `convert`ing each word, through a
/// transfer buffer of [`READ_BACK_PIECE`] words.
pub fn read_back<T>(
    arr: &storage::dm::RemoteArray,
    convert: impl Fn(u64) -> T,
) -> Result<Vec<T>, ExecError> {
    let n = arr.len();
    let mut out = Vec::with_capacity(n as usize);
    let mut buf = vec![0u64; READ_BACK_PIECE];
    let mut i = 0u64;
    while i < n {
        let k = (n - i).min(buf.len() as u64) as usize;
        arr.read_range(i, &mut buf[..k])?;
        out.extend(buf[..k].iter().map(|&w| convert(w)));
        i += k as u64;
    }
    Ok(out)
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
        let cdlp = AlgoCall::Cdlp { iterations: 2 };
        assert!(explain_state(&cdlp, 10, 16).contains("no remote-state variant"));
        assert!(explain_state(&AlgoCall::Degree, 10, 16).contains("no per-vertex state"));
    }

    #[test]
    fn update_buffers_share_the_budget_within_bounds() {
        assert_eq!(update_buffer_len(16, 2), MIN_BUFFER);
        assert_eq!(update_buffer_len(1 << 40, 1), MAX_BUFFER);
        // 1 MiB over 4 threads: half of it, 16 bytes per update.
        assert_eq!(update_buffer_len(1 << 20, 4), (1 << 20) / 2 / 4 / 16);
    }
}
