//! Closeness centrality as networkx computes it (`closeness_centrality`, Wasserman–Faust
//! scaling for graphs that are not connected): for a vertex v reached from r − 1 other
//! vertices at total distance D (hops, along out-edges towards v),
//! `C(v) = ((r − 1) / D) · ((r − 1) / (|V| − 1))`, and 0 when nothing reaches it.
//!
//! Exact when `SAMPLES` >= |V|; otherwise r − 1 and D are summed over the sampled sources, and
//! r − 1 is scaled by |V|/k in the second factor (the first is a ratio of two sums over the
//! same sample). One breadth-first search per source ([`distances`]), each accumulated by a
//! VertexMap.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, Step};
use planner::AlgoCall;
use storage::GraphStore;

use super::distances::{self, bfs_reference, from_each_source, sample_sources};
use super::Algorithm;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::{per_vertex_rows, pick};
use crate::reference::{close, compare, Lists};
use crate::result::BatchIter;
use crate::result::ResultTable;
use crate::vertexmap::vertex_transform2;

/// Closeness centrality.
pub struct Closeness;

/// Which sources the searches start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampling {
    pub samples: u64,
    pub seed: u64,
}

impl Sampling {
    /// The sampling of a checked call.
    pub fn of(call: &AlgoCall) -> Sampling {
        Sampling {
            samples: call.int("samples"),
            seed: call.int("seed"),
        }
    }
}

impl Algorithm for Closeness {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "closeness",
        summary: "closeness centrality over in-distances, Wasserman-Faust scaled (networkx); sampled with SAMPLES k SEED s",
        semantics: "networkx closeness_centrality over in-distances (distance from u to v along out-edges): (r/total)(r/(|V|-1)) where r is the number of other vertices reaching v and total their distances (Wasserman-Faust scaling); 0 when nothing reaches v. Unweighted. With SAMPLES k < |V| only k sources drawn with SEED are used and r is scaled by |V|/k; exact when k >= |V|.",
        example: "RUN closeness ON g SAMPLES 64 SEED 1 ORDER BY closeness DESC LIMIT 10;",
        params: &distances::PARAMS,
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("closeness", ColumnType::Float64),
        ],
        program: &[
            Step::setup("sources := SAMPLES vertices drawn with SEED (every vertex when SAMPLES >= |V|)"),
            Step::call(Operator::EdgeMap, "per source: frontier, out, depth[v] unset => depth[v] := level+1"),
            Step::call(Operator::VertexMap, "per source: reached v: total[v] += depth[v], count[v] += 1; at the end closeness := (count/total)(count·|V|/k)/(|V|-1)"),
        ],
        // depth, total distance and count (f64 each)
        state_bytes: 24,
        passes: Some("one breadth-first search per sampled source"),
        ..AlgorithmSpec::BASE
    };
    type Config = Sampling;
    type Output = Vec<f64>;

    fn config(call: &AlgoCall) -> Sampling {
        Sampling::of(call)
    }

    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &Sampling,
    ) -> Result<Vec<f64>, ExecError> {
        let n = ctx.n();
        let sources = sample_sources(ctx.store, cfg.samples, cfg.seed);
        let scale = distances::scale(n, sources.len());
        let total = ctx.vertex_array(0.0)?;
        let count = ctx.vertex_array(0.0)?;
        from_each_source(ctx, &sources, |_, depth| {
            let reached = |d: f64| d > 0.0 && d.is_finite();
            vertex_transform2(ctx, depth, &total, &total, |_, d, t| {
                (if reached(d) { t + d } else { t }, 0.0)
            })?;
            vertex_transform2(ctx, depth, &count, &count, |_, d, c| {
                (if reached(d) { c + 1.0 } else { c }, 0.0)
            })?;
            Ok(())
        })?;
        vertex_transform2(ctx, &total, &count, &total, |_, t, c| {
            (closeness(c, t, c * scale, n), 0.0)
        })?;
        count.free()?;
        total.into_vec()
    }

    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        out: &'a Vec<f64>,
    ) -> Result<BatchIter<'a>, ExecError> {
        Ok(per_vertex_rows(store, schema, move |vertices| {
            vec![Arc::new(Float64Array::from(pick(out, vertices))) as ArrayRef]
        }))
    }

    /// Checks against sequential searches from the same sources.
    fn verify<S: GraphStore>(store: &S, cfg: &Sampling, table: &ResultTable) -> Result<(), String> {
        let lists = Lists::read(store)?;
        let n = lists.n() as u32;
        let sources = sample_sources(store, cfg.samples, cfg.seed);
        let scale = distances::scale(n, sources.len());
        let mut total = vec![0.0; n as usize];
        let mut count = vec![0.0; n as usize];
        for &s in &sources {
            for (v, d) in bfs_reference(&lists.out, s as usize)
                .into_iter()
                .enumerate()
            {
                if let Some(d) = d.filter(|&d| d > 0) {
                    total[v] += d as f64;
                    count[v] += 1.0;
                }
            }
        }
        let want: Vec<Option<f64>> = (0..n as usize)
            .map(|v| Some(closeness(count[v], total[v], count[v] * scale, n)))
            .collect();
        compare(store, table, "closeness", &want, |a, b| {
            close(a, b) || a == b
        })
    }
}

/// `(count/total)·(reached/(n−1))`, 0 when nothing reaches the vertex.
fn closeness(count: f64, total: f64, reached: f64, n: u32) -> f64 {
    if total > 0.0 && n > 1 {
        (count / total) * (reached / f64::from(n - 1))
    } else {
        0.0
    }
}
