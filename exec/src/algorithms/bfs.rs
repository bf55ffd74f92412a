//! Breadth-first search over out-edges (Graphalytics BFS): the depth of every vertex from the
//! source, null when unreachable.
//!
//! Each level is one EdgeMap round. Under `Auto` this is direction-optimising BFS (Beamer):
//! top-down push while the frontier is small, bottom-up pull with bitmaps — every unvisited
//! vertex scans its in-list and stops at the first parent in the frontier — once the frontier's
//! out-degree sum passes |arcs|/20. With a CSR view both directions run over slices.
//!
//! On a DM graph whose depths do not fit `cn_cache`, `compute` hands over to
//! `remote::bfs`, which keeps the depths in the memory nodes.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::SchemaRef;
use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::edgemap::{EdgeFunc, EdgeMap};
use crate::error::ExecError;
use crate::output::per_vertex_batches;
use crate::remote;
use crate::subset::VertexSubset;

/// Depth of an unvisited vertex.
pub const UNREACHED: u32 = u32::MAX;

/// One BFS level: claims unvisited destinations with depth `level`.
struct Level<'d> {
    depth: &'d [AtomicU32],
    level: u32,
}

impl EdgeFunc for Level<'_> {
    const CLAIMS: bool = true;

    #[inline]
    fn update_atomic(&self, _src: u32, dst: u32, _w: f64) -> bool {
        self.depth[dst as usize]
            .compare_exchange(UNREACHED, self.level, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    #[inline]
    fn update(&self, _src: u32, dst: u32, _w: f64) -> bool {
        self.depth[dst as usize].store(self.level, Ordering::Relaxed);
        true
    }

    #[inline]
    fn cond(&self, dst: u32) -> bool {
        self.depth[dst as usize].load(Ordering::Relaxed) == UNREACHED
    }
}

/// Depths from `source` ([`UNREACHED`] when not reachable); an out-of-range source reaches
/// nothing.
pub fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, source: u32) -> Result<Vec<u32>, ExecError> {
    let n = ctx.n();
    if source >= n {
        return Ok(vec![UNREACHED; n as usize]);
    }
    // Depths too large for the compute node's budget stay in remote memory.
    if let Some(space) = remote::remote_space(ctx.store, remote::bfs::STATE_BYTES) {
        return remote::bfs::compute(ctx, space, source);
    }
    let depth: Vec<AtomicU32> = storage::huge::collect((0..n).map(|_| AtomicU32::new(UNREACHED)));
    depth[source as usize].store(0, Ordering::Relaxed);
    let mut frontier = VertexSubset::single(n, source);
    let mut edge_map = EdgeMap::new(ctx);
    let mut level = 1;
    while !frontier.is_empty() {
        let step = Level {
            depth: &depth,
            level,
        };
        frontier = edge_map.run(&frontier, Direction::Out, &step, None)?;
        level += 1;
    }
    Ok(depth.into_iter().map(AtomicU32::into_inner).collect())
}

/// Rows `(vertex, depth)`.
pub fn batches<S: GraphStore>(
    store: &S,
    schema: &SchemaRef,
    depth: &[u32],
) -> Result<Vec<RecordBatch>, ExecError> {
    per_vertex_batches(store, schema, |r| {
        let col: Int64Array = depth[r]
            .iter()
            .map(|&d| (d != UNREACHED).then_some(d as i64))
            .collect();
        vec![Arc::new(col) as ArrayRef]
    })
}
