//! PageRank with the exact Graphalytics semantics: PR₀ = 1/|V|; each of exactly `iterations`
//! synchronous rounds computes
//! `PR(v) = (1-d)/|V| + d·Σ_{u→v} PR(u)/outdeg(u) + (d/|V|)·Σ_{sinks w} PR(w)`,
//! i.e. the rank held by sinks (no out-edges) is scaled by d and spread over all vertices.
//!
//! Each round is a VertexMap (`contrib[u] = PR(u)/outdeg(u)`, and the rank held by sinks) and
//! a sum edge reduce over in-edges (`crate::reduce`), whose strategy — cache-blocked pull, pull,
//! push, or batched remote adds — the operator picks from the store, the mode and where the
//! state lives. Pull sums follow list order, so the result does not depend on the thread count.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use arrow_schema::SchemaRef;
use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::per_vertex_batches;
use crate::reduce::EdgeReduce;
use crate::reference::{close, column, compare, Lists};
use crate::result::ResultTable;
use crate::vertexmap::vertex_transform;

/// Ranks after `iterations` rounds with damping `damping`.
pub fn compute<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    iterations: u32,
    damping: f64,
) -> Result<Vec<f64>, ExecError> {
    let store = ctx.store;
    let n = ctx.n();
    if n == 0 {
        return Ok(Vec::new());
    }
    let nf = n as f64;
    let mut rank = ctx.vertex_array(1.0 / nf)?;
    let contrib = ctx.vertex_array(0.0)?;
    let mut next = ctx.vertex_array(0.0)?;
    let mut reduce = EdgeReduce::new(ctx);
    for _ in 0..iterations {
        ctx.check()?;
        let start = ctx.begin();
        let sink = vertex_transform(ctx, &rank, &contrib, |v, r: f64| {
            match store.degree(Direction::Out, v) {
                0 => (0.0, r),
                d => (r / d as f64, 0.0),
            }
        })?;
        let base = (1.0 - damping) / nf + damping * sink / nf;
        let done = reduce.sum(&contrib, &mut next, |sum| base + damping * sum)?;
        std::mem::swap(&mut rank, &mut next);
        ctx.finish(start, n as u64, done.edges, done.strategy, Some(iterations))?;
    }
    contrib.free()?;
    next.free()?;
    rank.into_vec()
}

/// Rows `(vertex, rank)`.
pub fn batches<S: GraphStore>(
    store: &S,
    schema: &SchemaRef,
    rank: &[f64],
) -> Result<Vec<RecordBatch>, ExecError> {
    per_vertex_batches(store, schema, |r| {
        vec![Arc::new(Float64Array::from(rank[r].to_vec())) as ArrayRef]
    })
}

/// Checks PageRank ranks against a sequential computation of the Graphalytics definition.
pub fn verify<S: GraphStore>(
    store: &S,
    iterations: u32,
    damping: f64,
    table: &ResultTable,
) -> Result<(), String> {
    let lists = Lists::read(store)?;
    let n = lists.n();
    let nf = n as f64;
    let mut rank = vec![1.0 / nf; n];
    for _ in 0..iterations {
        let sink: f64 = (0..n)
            .filter(|&v| lists.out[v].is_empty())
            .map(|v| rank[v])
            .sum();
        rank = (0..n)
            .map(|v| {
                let sum: f64 = lists.inn[v]
                    .iter()
                    .map(|&u| rank[u as usize] / lists.out[u as usize].len() as f64)
                    .sum();
                (1.0 - damping) / nf + damping * sum + damping * sink / nf
            })
            .collect();
    }
    let want: Vec<Option<f64>> = rank.into_iter().map(Some).collect();
    compare(store, &column(table, "rank")?, &want, close)
}
