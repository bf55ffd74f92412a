//! Coreness (k-core decomposition): the largest k such that the vertex belongs to a subgraph
//! in which every vertex has degree at least k. Self-loops are ignored; on directed graphs the
//! degree is in-degree + out-degree (networkx's `core_number`), so a pair of opposite arcs
//! counts twice.
//!
//! Peeling in EdgeMap rounds: the degrees are counted by one addition round from every vertex
//! ([`EdgeMap::add`]); then, for the smallest remaining degree k, the vertices of degree k are
//! removed (their core is k), each removal takes one from its neighbours' degrees, and the
//! neighbours that fall to k or below are removed in the next round, until none falls; then
//! the next k. Degrees are kept with a bias so that removed vertices, whose degrees keep
//! falling, stay below every remaining one without wrapping; a removed vertex is recognised by
//! its core being set, which a claim does exactly once.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, Step};
use planner::AlgoCall;
use storage::{Direction, GraphStore};

use super::Algorithm;
use crate::context::RunContext;
use crate::edgemap::EdgeMap;
use crate::error::ExecError;
use crate::output::{per_vertex_batches, pick};
use crate::reference::{compare, Lists};
use crate::result::ResultTable;
use crate::subset::VertexSubset;
use crate::vertexmap::{vertex_min, vertex_select};

/// Degree 0 in the degree array: far above any number of decrements a vertex can receive.
const BIAS: u64 = 1 << 62;
/// The core of a vertex not yet removed.
const UNSET: u64 = u64::MAX;

/// k-core decomposition.
pub struct KCore;

impl Algorithm for KCore {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "kcore",
        summary: "coreness of every vertex by peeling (directed graphs: degree = in + out; self-loops ignored)",
        semantics: "The coreness of v is the largest k such that v belongs to a subgraph whose vertices all have degree at least k (networkx core_number). On directed graphs the degree is in + out; self-loops are ignored; isolated vertices have core 0.",
        example: "RUN kcore ON g ORDER BY core DESC LIMIT 10;",
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("core", ColumnType::UInt64),
        ],
        program: &[
            Step::call(Operator::EdgeMap, "all, out (and in), degree[w] += 1"),
            Step::call(Operator::VertexMap, "k := smallest degree of a remaining vertex; frontier := remaining v with degree[v] = k"),
            Step::call(Operator::EdgeMap, "frontier, out (and in), degree[w] -= 1; frontier := w with degree[w] <= k not yet removed, core[w] := k; until empty, then the next k"),
        ],
        // degree (u64) and core (u64)
        state_bytes: 16,
        passes: Some("peeling: per core value, EdgeMap rounds until no degree falls to it"),
        ..AlgorithmSpec::BASE
    };
    type Config = ();
    type Output = Vec<u64>;

    fn config(_: &AlgoCall) {}

    fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, _: &()) -> Result<Vec<u64>, ExecError> {
        compute(ctx)
    }

    fn batches<S: GraphStore>(
        store: &S,
        schema: &SchemaRef,
        core: &Vec<u64>,
    ) -> Result<Vec<RecordBatch>, ExecError> {
        per_vertex_batches(store, schema, |vertices| {
            vec![Arc::new(UInt64Array::from(pick(core, vertices))) as ArrayRef]
        })
    }

    fn verify<S: GraphStore>(store: &S, _: &(), table: &ResultTable) -> Result<(), String> {
        verify(store, table)
    }
}

/// The directions whose lists together hold every neighbour once per arc.
fn directions<S: GraphStore>(store: &S) -> &'static [Direction] {
    if store.shape().directed {
        &[Direction::Out, Direction::In]
    } else {
        &[Direction::Out]
    }
}

/// The core of every vertex.
fn compute<S: GraphStore>(ctx: &RunContext<'_, S>) -> Result<Vec<u64>, ExecError> {
    let n = ctx.n();
    let dirs = directions(ctx.store);
    let degree = ctx.vertex_array(BIAS)?;
    let core = ctx.vertex_array(UNSET)?;
    let mut edge_map = EdgeMap::new(ctx);
    edge_map.add(&VertexSubset::all(n), dirs, &degree, 1u64, None)?;
    // Remaining vertices have degree >= floor; removed ones below it.
    let mut floor = 0u64;
    while let Some(k) = vertex_min(ctx, &degree, |d| (d >= BIAS + floor).then(|| d - BIAS))? {
        let first = vertex_select(ctx, &degree, |_, d| d == BIAS + k)?;
        let won = core.claim_batch(&first.to_list(), UNSET, k)?;
        let mut frontier = VertexSubset::from_list(n, won);
        while !frontier.is_empty() {
            let lowered = edge_map.add(&frontier, dirs, &degree, u64::MAX, None)?;
            let fallen: Vec<u32> = lowered
                .into_iter()
                .filter(|&(_, d)| d <= BIAS + k)
                .map(|(v, _)| v)
                .collect();
            frontier = VertexSubset::from_list(n, core.claim_batch(&fallen, UNSET, k)?);
        }
        floor = k + 1;
    }
    degree.free()?;
    core.into_vec()
}

/// Checks the cores against sequential peeling: repeatedly remove a vertex of smallest
/// remaining degree; its core is the largest such degree seen so far.
fn verify<S: GraphStore>(store: &S, table: &ResultTable) -> Result<(), String> {
    let lists = Lists::read(store)?;
    let n = lists.n();
    let directed = store.shape().directed;
    let neighbours: Vec<Vec<usize>> = (0..n)
        .map(|v| {
            let out = lists.out[v].iter().map(|e| e.0 as usize);
            let inn = lists.inn[v].iter().map(|&u| u as usize);
            let all: Vec<usize> = if directed {
                out.chain(inn).collect()
            } else {
                out.collect()
            };
            all.into_iter().filter(|&u| u != v).collect()
        })
        .collect();
    let mut degree: Vec<usize> = neighbours.iter().map(Vec::len).collect();
    let mut queue: std::collections::BTreeSet<(usize, usize)> =
        (0..n).map(|v| (degree[v], v)).collect();
    let mut core = vec![0u64; n];
    let mut k = 0;
    while let Some((d, v)) = queue.pop_first() {
        k = k.max(d);
        core[v] = k as u64;
        for &u in &neighbours[v] {
            if queue.remove(&(degree[u], u)) {
                degree[u] -= 1;
                queue.insert((degree[u], u));
            }
        }
    }
    let want: Vec<Option<f64>> = core.into_iter().map(|c| Some(c as f64)).collect();
    compare(store, table, "core", &want, |a, b| a == b)
}
