//! Community detection by label propagation (Graphalytics CDLP). L₀(v) = v's input id; each
//! of exactly `iterations` synchronous rounds gives every vertex the most frequent label among
//! its neighbours, ties going to the smallest label; a vertex without neighbours keeps its own.
//! On directed graphs the histogram takes the labels of all in-neighbours and then of all
//! out-neighbours, so a neighbour joined by arcs both ways counts twice. On undirected graphs
//! each neighbour is counted once (counting both stored directions would double every count
//! and change nothing).
//!
//! Each round is a mode edge reduce ([`EdgeReduce::mode`]), so the labels may be local or
//! remote.

use std::sync::Arc;

use arrow_array::{ArrayRef, UInt64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, ParamSpec, Step};
use planner::AlgoCall;
use storage::{Direction, GraphStore};

use super::Algorithm;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::{per_vertex_rows, pick};
use crate::reduce::EdgeReduce;
use crate::reference::{compare, Lists};
use crate::result::BatchIter;
use crate::result::ResultTable;
use crate::vertexmap::vertex_transform;

/// Community detection by label propagation.
pub struct Cdlp;

/// CDLP's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    pub iterations: u32,
}

impl Default for Config {
    /// The declared defaults.
    fn default() -> Config {
        Cdlp::config(&AlgoCall::new(&Cdlp::SPEC))
    }
}

impl Algorithm for Cdlp {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "cdlp",
        summary: "community detection by synchronous label propagation (Graphalytics semantics)",
        semantics: "Graphalytics community detection: every vertex starts with its own input id as label; each of exactly ITER synchronous rounds gives every vertex the most frequent label among its neighbours, the smallest on a tie; a vertex without neighbours keeps its own. On directed graphs in- and out-neighbours both count, so a neighbour joined both ways counts twice. Weights are ignored.",
        example: "RUN cdlp ITER 10 ON g ORDER BY label;",
        iter_param: Some("iter"),
        params: &[ParamSpec::int(
            "iter",
            1,
            super::ITERATIONS_MAX,
            10,
            "iterations (run exactly)",
        )],
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("label", ColumnType::VertexKey),
        ],
        program: &[
            Step::call(Operator::VertexMap, "all, label := own input id"),
            Step::call(
                Operator::EdgeReduceMode,
                "in+out, label' := most frequent neighbour label, ties to the smallest; ITER times",
            ),
        ],
        dense: true,
        // label and next label (u64 each)
        state_bytes: 16,
        splits: true,
        ..AlgorithmSpec::BASE
    };
    type Config = Config;
    type Output = Vec<u64>;

    fn config(call: &AlgoCall) -> Config {
        Config {
            iterations: call.int("iter") as u32,
        }
    }

    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &Config,
    ) -> Result<Vec<u64>, ExecError> {
        compute(ctx, cfg.iterations)
    }

    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        out: &'a Vec<u64>,
    ) -> Result<BatchIter<'a>, ExecError> {
        rows(store, schema, out)
    }

    fn verify<S: GraphStore>(store: &S, cfg: &Config, table: &ResultTable) -> Result<(), String> {
        verify(store, cfg.iterations, table)
    }
}

/// Labels (input ids) after `iterations` rounds.
fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, iterations: u32) -> Result<Vec<u64>, ExecError> {
    let store = ctx.store;
    let n = ctx.n();
    let mut labels = ctx.vertex_array(0u64)?;
    vertex_transform(ctx, &labels, &labels, |v, _| (store.input_id(v), 0.0))?;
    let mut next = ctx.vertex_array(0u64)?;
    let dirs: &[Direction] = if store.shape().directed {
        &[Direction::In, Direction::Out]
    } else {
        &[Direction::Out]
    };
    let mut reduce = EdgeReduce::new(ctx);
    for _ in 0..iterations {
        ctx.check()?;
        let start = ctx.begin();
        let done = reduce.mode(&labels, &mut next, dirs)?;
        std::mem::swap(&mut labels, &mut next);
        ctx.finish(start, n as u64, done.edges, done.strategy, Some(iterations))?;
    }
    next.free()?;
    labels.into_vec()
}

/// Rows `(vertex, label)`.
fn rows<'a, S: GraphStore>(
    store: &'a S,
    schema: &SchemaRef,
    label: &'a [u64],
) -> Result<BatchIter<'a>, ExecError> {
    Ok(per_vertex_rows(store, schema, move |vertices| {
        vec![Arc::new(UInt64Array::from(pick(label, vertices))) as ArrayRef]
    }))
}

/// Checks CDLP labels against a sequential computation with a histogram per vertex.
fn verify<S: GraphStore>(store: &S, iterations: u32, table: &ResultTable) -> Result<(), String> {
    let lists = Lists::read(store)?;
    let n = lists.n();
    let directed = store.shape().directed;
    let mut label: Vec<u64> = (0..n as u32).map(|v| store.input_id(v)).collect();
    for _ in 0..iterations {
        label = (0..n)
            .map(|v| {
                let mut hist = std::collections::BTreeMap::new();
                let ins = lists.inn[v].iter().filter(|_| directed);
                for u in ins.copied().chain(lists.out[v].iter().map(|e| e.0)) {
                    *hist.entry(label[u as usize]).or_insert(0) += 1;
                }
                let mut best = (0, label[v]);
                for (l, c) in hist {
                    if c > best.0 {
                        best = (c, l);
                    }
                }
                best.1
            })
            .collect();
    }
    let want: Vec<Option<f64>> = label.into_iter().map(|l| Some(l as f64)).collect();
    compare(store, table, "label", &want, |a, b| a == b)
}
