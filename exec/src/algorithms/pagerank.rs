//! PageRank with the exact Graphalytics semantics: PR₀ = 1/|V|; each of exactly `iterations`
//! synchronous rounds computes
//! `PR(v) = (1-d)/|V| + d·Σ_{u→v} PR(u)/outdeg(u) + (d/|V|)·Σ_{sinks w} PR(w)`,
//! i.e. the rank held by sinks (no out-edges) is scaled by d and spread over all vertices.
//!
//! Each round is a VertexMap (`contrib[u] = PR(u)/outdeg(u)`, and the rank held by sinks) and
//! a sum edge reduce over in-edges (`crate::reduce`), whose strategy — cache-blocked pull, pull,
//! push, or batched remote adds — the operator picks from the store, the mode and where the
//! state lives. Pull sums follow list order, so the result does not depend on the thread count.
//!
//! Options, as networkx's `pagerank` has them:
//! * `weights 1`: u passes rank to v in proportion to the weight of u → v:
//!   `contrib[u] = PR(u)/W(u)` with W(u) the sum of u's out-edge weights (a sink when W(u) = 0),
//!   and the reduce multiplies by the weight; negative weights are refused;
//! * `FROM s` (personalised): the teleport and the sinks' rank go to s alone:
//!   `PR(v) = d·Σ … + [v = s]·((1-d) + d·Σ_{sinks} PR(w))`;
//! * `tolerance t > 0`: stop after the first round whose L1 change Σ|PR' − PR| is below
//!   t·|V| (networkx's rule); `ITER` is then the most rounds, and PROFILE shows how many ran.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array};
use arrow_schema::SchemaRef;
use planner::registry::{
    AlgorithmSpec, ColumnSpec, ColumnType, Operator, ParamSpec, SourceRule, Step,
};
use planner::AlgoCall;
use storage::{Direction, GraphStore};

use super::Algorithm;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::{per_vertex_rows, pick};
use crate::reduce::EdgeReduce;
use crate::result::BatchIter;
use crate::result::ResultTable;
use crate::state::{StateValue, VertexArray};
use crate::vertexmap::{vertex_sum2, vertex_transform, vertex_transform2, TRANSFORM_CHUNK};
use rayon::prelude::*;

/// PageRank.
pub struct PageRank;

/// PageRank's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Rounds, or the most rounds when `tolerance` is set.
    pub iterations: u32,
    pub damping: f64,
    /// Whether rank flows in proportion to edge weights.
    pub weighted: bool,
    /// Stop once the L1 change is below `tolerance`·|V|; 0 runs every round.
    pub tolerance: f64,
    /// Personalised PageRank: the vertex (internal id) that teleports and sinks go to.
    pub source: Option<u32>,
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
        summary: "PageRank with dangling mass spread over all vertices (Graphalytics semantics); FROM v: personalised to v",
        semantics: "Graphalytics PageRank: PR starts at 1/|V| and each of exactly ITER rounds computes (1-d)/|V| + d * (the sum over in-neighbours u of PR(u)/outdeg(u)) + d/|V| * (the rank held by vertices without out-edges): dangling mass is spread over all vertices, and edge weights are ignored unless `weights 1`. `tolerance t` stops once the ranks change by less than t per vertex in total (ITER is then the cap). With FROM v the teleport and the dangling mass go to v (personalised PageRank). On undirected graphs every edge counts both ways.",
        example: "RUN pagerank ITER 20 ON g ORDER BY rank DESC LIMIT 10;",
        source: SourceRule::Optional,
        iter_param: Some("iter"),
        params: &[
            ParamSpec::int("iter", 1, super::ITERATIONS_MAX, 20, "iterations (exactly, or at most with tolerance)"),
            ParamSpec::float("damping", 0.0, 1.0, 0.85, "damping factor"),
            ParamSpec::int("weights", 0, 1, 0, "1: rank flows in proportion to edge weights (weights must be >= 0)"),
            ParamSpec::float("tolerance", 0.0, 1.0, 0.0, "stop once the L1 change of the ranks is below tolerance x |V|; 0: run every iteration"),
        ],
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("rank", ColumnType::Float64),
        ],
        program: &[
            Step::setup("rank := 1/|V| for all vertices"),
            Step::call(Operator::EdgeReduceSum, "weights 1 only: out, W(u) := sum of out-weights"),
            Step::call(Operator::VertexMap, "all, contrib := rank/out_degree (weighted: rank/W); sink mass := sum of sinks' rank"),
            Step::call(Operator::EdgeReduceSum, "in, rank' := (1-d)/|V| + d*(sum contrib + sink mass/|V|), weighted: contrib x weight, FROM s: teleport and sink mass to s only; ITER times with the VertexMap"),
            Step::call(Operator::VertexMap, "tolerance t > 0 only: stop once sum |rank' - rank| < t x |V|"),
        ],
        dense: true,
        // rank, contribution and next rank (f64 each)
        state_bytes: 24,
        splits: true,
        ..AlgorithmSpec::BASE
    };
    type Config = Config;
    type Output = Vec<f64>;

    fn config(call: &AlgoCall) -> Config {
        Config {
            iterations: call.int("iter") as u32,
            damping: call.float("damping"),
            weighted: call.int("weights") == 1,
            tolerance: call.float("tolerance"),
            source: call.source,
        }
    }

    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &Config,
    ) -> Result<Vec<f64>, ExecError> {
        compute(ctx, cfg)
    }

    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        out: &'a Vec<f64>,
    ) -> Result<BatchIter<'a>, ExecError> {
        rows(store, schema, out)
    }

    fn verify<S: GraphStore>(store: &S, cfg: &Config, table: &ResultTable) -> Result<(), String> {
        super::checks::pagerank::verify(store, cfg, table)
    }
}

/// Ranks after `cfg.iterations` rounds, or fewer once they converge.
fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, cfg: &Config) -> Result<Vec<f64>, ExecError> {
    let n = ctx.n();
    if n == 0 {
        return Ok(Vec::new());
    }
    let Config {
        iterations,
        damping,
        ..
    } = *cfg;
    let nf = n as f64;
    let source = cfg.source.filter(|&s| s < n);
    let mut rank = ctx.vertex_array(1.0 / nf)?;
    let contrib = ctx.vertex_array(0.0)?;
    let mut next = ctx.vertex_array(0.0)?;
    let mut reduce = EdgeReduce::new(ctx);
    let out_weight: Option<VertexArray<f64>> = if cfg.weighted {
        let w = ctx.vertex_array(0.0)?;
        reduce.out_weights(&w)?;
        Some(w)
    } else {
        None
    };
    for _ in 0..iterations {
        ctx.check()?;
        let start = ctx.begin();
        let sink = match &out_weight {
            None => contributions(ctx, &rank, &contrib)?,
            Some(w) => vertex_transform2(ctx, &rank, w, &contrib, |_, r, w| {
                if w > 0.0 {
                    (r / w, 0.0)
                } else {
                    (0.0, r)
                }
            })?,
        };
        let base = match source {
            Some(_) => 0.0,
            None => (1.0 - damping) / nf + damping * sink / nf,
        };
        let finish = |sum| base + damping * sum;
        let done = match out_weight {
            Some(_) => reduce.weighted_sum(&contrib, &mut next, finish)?,
            None => reduce.sum(&contrib, &mut next, finish)?,
        };
        if let Some(s) = source {
            next.add_batch(&[(s, (1.0 - damping) + damping * sink)])?;
        }
        let converged = cfg.tolerance > 0.0
            && vertex_sum2(ctx, &rank, &next, |_, a, b| (a - b).abs())? < cfg.tolerance * nf;
        std::mem::swap(&mut rank, &mut next);
        ctx.finish(start, n as u64, done.edges, done.strategy, Some(iterations))?;
        if converged {
            break;
        }
    }
    contrib.free()?;
    next.free()?;
    if let Some(w) = out_weight {
        w.free()?;
    }
    rank.into_vec()
}

/// `contrib[v] = rank[v] / outdeg(v)` for every vertex, 0 for a sink; returns the rank the
/// sinks hold, summed as [`vertex_transform`] sums it (in vertex order within each
/// [`TRANSFORM_CHUNK`], then the chunks in order), so the bits do not depend on the path.
/// Local arrays over an in-memory graph are walked beside its out-degree array; anything else
/// goes through [`vertex_transform`].
fn contributions<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    rank: &VertexArray<f64>,
    contrib: &VertexArray<f64>,
) -> Result<f64, ExecError> {
    let store = ctx.store;
    let n = ctx.n() as usize;
    let local = match (rank.local(), contrib.local(), store.csr(Direction::Out)) {
        (Some(r), Some(c), Some(csr)) if r.len() >= n && c.len() >= n && csr.degrees.len() >= n => {
            Some((&r[..n], &c[..n], &csr.degrees[..n]))
        }
        _ => None,
    };
    let Some((rank, contrib, degrees)) = local else {
        return vertex_transform(ctx, rank, contrib, |v, r: f64| {
            match store.degree(Direction::Out, v) {
                0 => (0.0, r),
                d => (r / d as f64, 0.0),
            }
        });
    };
    ctx.record(Operator::VertexMap);
    ctx.check()?;
    let parts: Vec<f64> = ctx.pool.install(|| {
        contrib
            .par_chunks(TRANSFORM_CHUNK)
            .zip(rank.par_chunks(TRANSFORM_CHUNK))
            .zip(degrees.par_chunks(TRANSFORM_CHUNK))
            .map(|((contrib, rank), degrees)| {
                // Ranks are never negative, so the sum starts at +0 and never is -0: leaving
                // out the other vertices' zero terms leaves the bits as they were.
                let mut sink = 0.0;
                for ((c, r), &d) in contrib.iter().zip(rank).zip(degrees) {
                    let r = f64::load(r);
                    if d == 0 {
                        sink += r;
                        f64::store(c, 0.0);
                    } else {
                        f64::store(c, r / f64::from(d));
                    }
                }
                sink
            })
            .collect()
    });
    ctx.split().sum_f64(parts.iter().sum())
}

/// Rows `(vertex, rank)`.
fn rows<'a, S: GraphStore>(
    store: &'a S,
    schema: &SchemaRef,
    rank: &'a [f64],
) -> Result<BatchIter<'a>, ExecError> {
    Ok(per_vertex_rows(store, schema, move |vertices| {
        vec![Arc::new(Float64Array::from(pick(rank, vertices))) as ArrayRef]
    }))
}
