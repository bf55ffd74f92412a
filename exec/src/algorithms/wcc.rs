//! Weakly connected components (Graphalytics WCC): directions ignored; each vertex is labelled
//! with the smallest input id of its component (the references' labelling).
//!
//! With local state: union-find ([`link_components`], Afforest in memory), then every vertex
//! takes the smallest input id of its root's set.
//!
//! When the run keeps its state remote, union-find would chase parent pointers one dependent
//! remote read at a time; the labels are propagated instead ([`EdgeMap::relax_min`] over both
//! directions, every vertex starting with its own input id), which updates in batches and ends
//! with the same labelling after (component diameter + 1) rounds.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::{ArrayRef, UInt64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, Step};
use planner::AlgoCall;
use storage::{Direction, GraphStore};

use super::Algorithm;
use crate::context::RunContext;
use crate::edgemap::EdgeMap;
use crate::error::ExecError;
use crate::link::link_components;
use crate::output::{per_vertex_rows, pick};
use crate::reference::{compare, Lists};
use crate::result::BatchIter;
use crate::result::ResultTable;
use crate::vertexmap::vertex_transform;

/// Weakly connected components.
pub struct Wcc;

impl Algorithm for Wcc {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "wcc",
        summary: "weakly connected components, each labelled with its smallest vertex id",
        semantics: "Weakly connected components: edge directions are ignored, and every vertex gets the smallest input vertex id of its component as `component`.",
        example: "RUN pagerank, wcc ON g WHERE component = 0 ORDER BY rank DESC LIMIT 10;",
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("component", ColumnType::VertexKey),
        ],
        program: &[
            Step::call(Operator::Link, "every edge, directions ignored: union-find, Afforest sampling in memory"),
            Step::setup("component[v] := smallest input id in v's set"),
            Step::call(Operator::VertexMap, "with remote state instead: label[v] := own input id"),
            Step::call(Operator::EdgeMap, "with remote state: frontier, out+in, label[v] := min(label[v], label[u]); until no label changes"),
        ],
        dense: true,
        // parent (u32) and component label (u64)
        state_bytes: 12,
        passes: Some(
            "union-find passes (PROFILE: link sample, link); with remote state, min-label push rounds (remote direct, valrd or refrd)",
        ),
        splits: true,
        ..AlgorithmSpec::BASE
    };
    type Config = ();
    type Output = Vec<u64>;

    fn config(_: &AlgoCall) {}

    fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, _: &()) -> Result<Vec<u64>, ExecError> {
        compute(ctx)
    }

    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        out: &'a Vec<u64>,
    ) -> Result<BatchIter<'a>, ExecError> {
        rows(store, schema, out)
    }

    fn verify<S: GraphStore>(store: &S, _: &(), table: &ResultTable) -> Result<(), String> {
        verify(store, table)
    }
}

/// The component label (smallest input id of the component) of every vertex.
fn compute<S: GraphStore>(ctx: &RunContext<'_, S>) -> Result<Vec<u64>, ExecError> {
    let store = ctx.store;
    if ctx.placement().is_remote() {
        return propagate_labels(ctx);
    }
    let n = ctx.n();
    let comp: Vec<AtomicU32> = ctx
        .pool
        .filled_vec(n as usize, |v| AtomicU32::new(v as u32));
    // Each component's smallest input id, kept at its root's slot; filled in by the last
    // union-find pass, as it finds each vertex's root.
    let min_id: Vec<AtomicU64> = ctx
        .pool
        .filled_vec(n as usize, |_| AtomicU64::new(u64::MAX));
    link_components(ctx, &comp, |v, root| {
        let id = store.input_id(v);
        let min = &min_id[root as usize];
        // Read first: the giant component's root is hit by most vertices, and a contended
        // read-modify-write per vertex on one cache line costs more than the whole search.
        if id < min.load(Ordering::Relaxed) {
            min.fetch_min(id, Ordering::Relaxed);
        }
    })?;
    Ok(ctx.pool.filled_vec(n as usize, |v| {
        min_id[comp[v].load(Ordering::Relaxed) as usize].load(Ordering::Relaxed)
    }))
}

/// Min-label propagation: the remote-state kernel.
fn propagate_labels<S: GraphStore>(ctx: &RunContext<'_, S>) -> Result<Vec<u64>, ExecError> {
    let store = ctx.store;
    let label = ctx.vertex_array(0u64)?;
    vertex_transform(ctx, &label, &label, |v, _| (store.input_id(v), 0.0))?;
    let dirs: &[Direction] = if store.shape().directed {
        &[Direction::Out, Direction::In]
    } else {
        &[Direction::Out]
    };
    // Split over several members, each holds only its owned part of the frontier.
    let mut frontier = ctx
        .split()
        .all(ctx.placement().memory(), ctx.placement().budget());
    let mut edge_map = EdgeMap::new(ctx);
    while !frontier.is_empty() {
        frontier = edge_map.relax_min(&frontier, dirs, &label, false, |l, _| Some(l), None)?;
    }
    label.into_vec()
}

/// Rows `(vertex, component)`.
fn rows<'a, S: GraphStore>(
    store: &'a S,
    schema: &SchemaRef,
    label: &'a [u64],
) -> Result<BatchIter<'a>, ExecError> {
    Ok(per_vertex_rows(store, schema, move |vertices| {
        vec![Arc::new(UInt64Array::from(pick(label, vertices))) as ArrayRef]
    }))
}

/// Checks WCC labels against sequential min-label propagation over both directions.
fn verify<S: GraphStore>(store: &S, table: &ResultTable) -> Result<(), String> {
    let lists = Lists::read(store)?;
    let n = lists.n();
    let mut label: Vec<u64> = (0..n as u32).map(|v| store.input_id(v)).collect();
    loop {
        let mut changed = false;
        for u in 0..n {
            for &(v, _) in &lists.out[u] {
                let m = label[u].min(label[v as usize]);
                if label[u] != m || label[v as usize] != m {
                    label[u] = m;
                    label[v as usize] = m;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let want: Vec<Option<f64>> = label.into_iter().map(|l| Some(l as f64)).collect();
    compare(store, table, "component", &want, |a, b| a == b)
}
