//! Single-source shortest paths over out-edges (Graphalytics SSSP): the distance from the
//! source with the edges' f64 weights (1.0 on unweighted graphs), null when unreachable.
//!
//! In memory under `SET mode = auto`, with non-negative weights, it runs delta-stepping
//! (`sssp_delta.rs`). Otherwise, frontier Bellman-Ford: each EdgeMap round relaxes the out-edges of the vertices whose
//! distance dropped in the previous round (push: compare-exchange min on the distance's bits;
//! pull: a vertex relaxes from its active in-neighbours). With non-negative weights it reaches
//! the same fixpoint as Dijkstra. A round count above |V| can only come from a negative cycle,
//! which is reported instead of looping.
//!
//! On a DM graph whose distances do not fit `cn_cache`, `compute` hands over to
//! `remote::sssp`, which keeps the distances in the memory nodes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use arrow_schema::SchemaRef;
use planner::Mode;
use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::edgemap::{EdgeFunc, EdgeMap};
use crate::error::ExecError;
use crate::output::per_vertex_batches;
use crate::remote;
use crate::subset::VertexSubset;

use super::sssp_delta;

/// Relaxes `dst` through `src`.
struct Relax<'d> {
    dist: &'d [AtomicU64],
}

impl EdgeFunc for Relax<'_> {
    const WEIGHTED: bool = true;

    #[inline]
    fn update_atomic(&self, src: u32, dst: u32, w: f64) -> bool {
        let candidate = f64::from_bits(self.dist[src as usize].load(Ordering::Relaxed)) + w;
        sssp_delta::lower(&self.dist[dst as usize], candidate)
    }
}

/// Distances from `source` (+∞ when unreachable).
pub fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, source: u32) -> Result<Vec<f64>, ExecError> {
    if ctx.cfg.mode == Mode::Auto {
        if let Some(csr) = ctx.store.csr(Direction::Out) {
            let shape = ctx.store.shape();
            let average_degree = shape.arcs as f64 / f64::from(shape.vertices.max(1));
            if let Some(delta) = sssp_delta::pick_delta(&csr, average_degree) {
                return sssp_delta::compute(ctx, csr, source, delta);
            }
        }
    }
    bellman_ford(ctx, source)
}

/// Frontier Bellman-Ford over EdgeMap: any store, any mode, any weights.
fn bellman_ford<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    source: u32,
) -> Result<Vec<f64>, ExecError> {
    let n = ctx.n();
    // Distances too large for the compute node's budget stay in remote memory.
    if source < n {
        if let Some(space) = remote::remote_space(ctx.store, remote::sssp::STATE_BYTES) {
            return remote::sssp::compute(ctx, space, source);
        }
    }
    let dist: Vec<AtomicU64> =
        storage::huge::collect((0..n).map(|_| AtomicU64::new(f64::INFINITY.to_bits())));
    if source < n {
        dist[source as usize].store(0f64.to_bits(), Ordering::Relaxed);
        let mut frontier = VertexSubset::single(n, source);
        let mut edge_map = EdgeMap::new(ctx);
        let relax = Relax { dist: &dist };
        let mut rounds = 0u64;
        while !frontier.is_empty() {
            rounds += 1;
            if rounds > n as u64 + 1 {
                return Err(ExecError::Other(
                    "sssp: a negative-weight cycle is reachable from the source".into(),
                ));
            }
            frontier = edge_map.run(&frontier, Direction::Out, &relax, None)?;
        }
    }
    Ok(dist
        .into_iter()
        .map(|d| f64::from_bits(d.into_inner()))
        .collect())
}

/// Rows `(vertex, distance)`.
pub fn batches<S: GraphStore>(
    store: &S,
    schema: &SchemaRef,
    dist: &[f64],
) -> Result<Vec<RecordBatch>, ExecError> {
    per_vertex_batches(store, schema, |r| {
        let col: Float64Array = dist[r]
            .iter()
            .map(|&d| (d != f64::INFINITY).then_some(d))
            .collect();
        vec![Arc::new(col) as ArrayRef]
    })
}
