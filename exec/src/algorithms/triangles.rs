//! Triangle count per vertex: the triangles of the graph with directions ignored that pass
//! through the vertex (networkx's `triangles` on the undirected view; opposite arcs count as
//! one edge, self-loops none). The neighbour-intersection operator counts the unordered pairs
//! of neighbours joined by an edge ([`Count::Pairs`]), which is exactly that number. The run
//! reports the graph's total, the sum over vertices divided by 3.

use std::sync::Arc;

use arrow_array::{ArrayRef, UInt64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, Step, SummarySpec};
use planner::AlgoCall;
use storage::GraphStore;

use super::Algorithm;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::intersect::{neighbour_arcs, Count};
use crate::output::{per_vertex_rows, pick};
use crate::reference::{compare, Lists};
use crate::result::BatchIter;
use crate::result::{ResultTable, SummaryValue};

/// Triangles through every vertex.
pub struct Triangles;

impl Algorithm for Triangles {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "triangles",
        summary: "triangles through every vertex, directions ignored",
        semantics: "The number of triangles through every vertex, directions ignored (networkx triangles on the undirected view): each triangle counts once at each of its three corners; self-loops and parallel edges do not make triangles. Reports the graph's total (the sum / 3).",
        example: "RUN triangles ON g ORDER BY triangles DESC LIMIT 10;",
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("triangles", ColumnType::UInt64),
        ],
        program: &[Step::call(
            Operator::NeighbourIntersect,
            "all, N(v) := in ∪ out; triangles := pairs {u, w} of N(v) joined either way",
        )],
        dense: true,
        // triangle count (u64)
        state_bytes: 8,
        summaries: &[SummarySpec::new(
            "total",
            ColumnType::UInt64,
            "triangles of the graph (the sum over vertices / 3)",
        )],
        ..AlgorithmSpec::BASE
    };
    type Config = ();
    type Output = Vec<u64>;

    fn config(_: &AlgoCall) {}

    fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, _: &()) -> Result<Vec<u64>, ExecError> {
        let shape = ctx.store.shape();
        let count = ctx.vertex_array(0u64)?;
        let start = ctx.begin();
        let strategy = neighbour_arcs(ctx, Count::Pairs, |first, counts| {
            let ts: Vec<u64> = counts.iter().map(|&(t, _)| t).collect();
            count.write_range(first, &ts)
        })?;
        let arcs = shape.arcs * if shape.directed { 2 } else { 1 };
        ctx.finish(start, shape.vertices as u64, arcs, strategy, Some(1))?;
        count.into_vec()
    }

    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        count: &'a Vec<u64>,
    ) -> Result<BatchIter<'a>, ExecError> {
        Ok(per_vertex_rows(store, schema, move |vertices| {
            vec![Arc::new(UInt64Array::from(pick(count, vertices))) as ArrayRef]
        }))
    }

    fn summaries(count: &Vec<u64>) -> Vec<(&'static str, SummaryValue)> {
        vec![("total", SummaryValue::UInt64(count.iter().sum::<u64>() / 3))]
    }

    /// Checks the counts against every pair of neighbours, directions ignored.
    fn verify<S: GraphStore>(store: &S, _: &(), table: &ResultTable) -> Result<(), String> {
        use std::collections::BTreeSet;
        let lists = Lists::read(store)?;
        let n = lists.n();
        let nb: Vec<BTreeSet<u32>> = (0..n)
            .map(|v| {
                lists.out[v]
                    .iter()
                    .map(|e| e.0)
                    .chain(lists.inn[v].iter().copied())
                    .filter(|&u| u as usize != v)
                    .collect()
            })
            .collect();
        let want: Vec<Option<f64>> = (0..n)
            .map(|v| {
                let t = nb[v]
                    .iter()
                    .flat_map(|&a| nb[v].iter().map(move |&b| (a, b)))
                    .filter(|&(a, b)| a < b && nb[a as usize].contains(&b))
                    .count();
                Some(t as f64)
            })
            .collect();
        compare(store, table, "triangles", &want, |a, b| a == b)
    }
}
