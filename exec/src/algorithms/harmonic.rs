//! Harmonic centrality as networkx computes it (`harmonic_centrality`): the sum over the other
//! vertices u of 1/d(u, v), hops along out-edges towards v (unreachable pairs add nothing).
//!
//! Exact when `SAMPLES` >= |V|; otherwise the sum runs over the sampled sources and is scaled
//! by |V|/k. One breadth-first search per source ([`distances`]), each accumulated by a
//! VertexMap.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, Step};
use planner::AlgoCall;
use storage::GraphStore;

use super::closeness::Sampling;
use super::distances::{self, bfs_reference, from_each_source, sample_sources};
use super::Algorithm;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::{per_vertex_rows, pick};
use crate::reference::{close, compare, Lists};
use crate::result::BatchIter;
use crate::result::ResultTable;
use crate::vertexmap::{vertex_transform, vertex_transform2};

/// Harmonic centrality.
pub struct Harmonic;

impl Algorithm for Harmonic {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "harmonic",
        summary: "harmonic centrality: sum of 1/distance from the other vertices (networkx); sampled with SAMPLES k SEED s",
        semantics: "networkx harmonic_centrality: the sum over the other vertices u of 1/d(u, v), d along out-edges, unreachable vertices contributing 0. Unweighted. With SAMPLES k < |V| only k sources drawn with SEED are used and the sum is scaled by |V|/k; exact when k >= |V|.",
        example: "RUN harmonic ON g SAMPLES 64 SEED 1 ORDER BY harmonic DESC LIMIT 10;",
        params: &distances::PARAMS,
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("harmonic", ColumnType::Float64),
        ],
        program: &[
            Step::setup("sources := SAMPLES vertices drawn with SEED (every vertex when SAMPLES >= |V|)"),
            Step::call(Operator::EdgeMap, "per source: frontier, out, depth[v] unset => depth[v] := level+1"),
            Step::call(Operator::VertexMap, "per source: reached v: harmonic[v] += 1/depth[v]; at the end scaled by |V|/k"),
        ],
        // depth and sum (f64 each)
        state_bytes: 16,
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
        let sum = ctx.vertex_array(0.0)?;
        from_each_source(ctx, &sources, |_, depth| {
            vertex_transform2(ctx, depth, &sum, &sum, |_, d, h| {
                (
                    if d > 0.0 && d.is_finite() {
                        h + 1.0 / d
                    } else {
                        h
                    },
                    0.0,
                )
            })?;
            Ok(())
        })?;
        if scale != 1.0 {
            vertex_transform(ctx, &sum, &sum, |_, h| (h * scale, 0.0))?;
        }
        sum.into_vec()
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
        let mut sum = vec![0.0; n as usize];
        for &s in &sources {
            for (v, d) in bfs_reference(&lists.out, s as usize)
                .into_iter()
                .enumerate()
            {
                if let Some(d) = d.filter(|&d| d > 0) {
                    sum[v] += 1.0 / d as f64;
                }
            }
        }
        let want: Vec<Option<f64>> = sum
            .into_iter()
            .map(|h| Some(if scale != 1.0 { h * scale } else { h }))
            .collect();
        compare(store, table, "harmonic", &want, |a, b| {
            close(a, b) || a == b
        })
    }
}
