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
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, ParamSpec, Step};
use planner::AlgoCall;
use storage::{Direction, GraphStore};

use super::Algorithm;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::per_vertex_batches;
use crate::reduce::EdgeReduce;
use crate::reference::{close, column, compare, Lists};
use crate::result::ResultTable;
use crate::vertexmap::vertex_transform;

/// PageRank.
pub struct PageRank;

/// PageRank's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub iterations: u32,
    pub damping: f64,
}

impl Default for Config {
    /// The declared defaults.
    fn default() -> Config {
        PageRank::config(&AlgoCall::new(&PageRank::SPEC))
    }
}

impl Algorithm for PageRank {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "pagerank",
        summary: "PageRank with dangling mass spread over all vertices (Graphalytics semantics)",
        iter_param: Some("iter"),
        params: &[
            ParamSpec::int("iter", 1, super::ITERATIONS_MAX, 20, "iterations (run exactly, no convergence test)"),
            ParamSpec::float("damping", 0.0, 1.0, 0.85, "damping factor"),
        ],
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("rank", ColumnType::Float64),
        ],
        program: &[
            Step::setup("rank := 1/|V| for all vertices"),
            Step::call(Operator::VertexMap, "all, contrib := rank/out_degree; sink mass := sum of sinks' rank"),
            Step::call(Operator::EdgeReduceSum, "in, rank' := (1-d)/|V| + d*(sum contrib + sink mass/|V|); ITER times with the VertexMap"),
        ],
        dense: true,
        // rank, contribution and next rank (f64 each)
        state_bytes: 24,
        ..AlgorithmSpec::BASE
    };
    type Config = Config;
    type Output = Vec<f64>;

    fn config(call: &AlgoCall) -> Config {
        Config {
            iterations: call.int("iter") as u32,
            damping: call.float("damping"),
        }
    }

    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &Config,
    ) -> Result<Vec<f64>, ExecError> {
        compute(ctx, cfg.iterations, cfg.damping)
    }

    fn batches<S: GraphStore>(
        store: &S,
        schema: &SchemaRef,
        out: &Vec<f64>,
    ) -> Result<Vec<RecordBatch>, ExecError> {
        batches(store, schema, out)
    }

    fn verify<S: GraphStore>(store: &S, cfg: &Config, table: &ResultTable) -> Result<(), String> {
        verify(store, cfg.iterations, cfg.damping, table)
    }
}

/// Ranks after `iterations` rounds with damping `damping`.
fn compute<S: GraphStore>(
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
fn batches<S: GraphStore>(
    store: &S,
    schema: &SchemaRef,
    rank: &[f64],
) -> Result<Vec<RecordBatch>, ExecError> {
    per_vertex_batches(store, schema, |r| {
        vec![Arc::new(Float64Array::from(rank[r].to_vec())) as ArrayRef]
    })
}

/// Checks PageRank ranks against a sequential computation of the Graphalytics definition.
fn verify<S: GraphStore>(
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
