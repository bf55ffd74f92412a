//! Local clustering coefficient (Graphalytics LCC). N(v) = in- ∪ out-neighbours as a set
//! (v itself excluded), d = |N(v)|; the value is 0 when d ≤ 1, else t / (d(d−1)) where t counts
//! the ordered pairs (u, w) of N(v) with an arc u → w. Arcs among neighbours keep their
//! direction on directed graphs; on undirected graphs each edge counts twice, giving the usual
//! 2T / (d(d−1)). The neighbour-intersection operator ([`neighbour_arcs`]) counts t and d; the
//! coefficients go to a vertex array, local or remote.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, Step};
use planner::AlgoCall;
use storage::GraphStore;

use super::Algorithm;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::intersect::{neighbour_arcs, Count};
use crate::output::{per_vertex_rows, pick};
use crate::reference::{close, compare, Lists};
use crate::result::BatchIter;
use crate::result::ResultTable;

/// Local clustering coefficient.
pub struct Lcc;

impl Algorithm for Lcc {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "lcc",
        summary: "local clustering coefficient (directed graphs: N(v) = in- and out-neighbours)",
        semantics: "Graphalytics local clustering coefficient: N(v) is the set of v's neighbours, and on directed graphs it is in- and out-neighbours together (in ∪ out); with d = |N(v)|, the value is t / (d(d-1)) where t counts the ordered pairs (u, w) of N(v) with an arc u -> w, so arcs keep their direction (on undirected graphs this is the usual 2T / (d(d-1))). 0 when d <= 1; weights are ignored.",
        example: "RUN lcc ON g WHERE coefficient > 0.5 ORDER BY coefficient DESC;",
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("coefficient", ColumnType::Float64),
        ],
        program: &[Step::call(
            Operator::NeighbourIntersect,
            "all, N(v) := in ∪ out; count arcs among N(v); coefficient := t / (d(d-1))",
        )],
        dense: true,
        // coefficient (f64) and arc count (u64)
        state_bytes: 16,
        splits: true,
        ..AlgorithmSpec::BASE
    };
    type Config = ();
    type Output = Vec<f64>;

    fn config(_: &AlgoCall) {}

    fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, _: &()) -> Result<Vec<f64>, ExecError> {
        compute(ctx)
    }

    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        out: &'a Vec<f64>,
    ) -> Result<BatchIter<'a>, ExecError> {
        rows(store, schema, out)
    }

    fn verify<S: GraphStore>(store: &S, _: &(), table: &ResultTable) -> Result<(), String> {
        verify(store, table)
    }
}

/// The coefficient of every vertex.
fn compute<S: GraphStore>(ctx: &RunContext<'_, S>) -> Result<Vec<f64>, ExecError> {
    let shape = ctx.store.shape();
    let coef = ctx.vertex_array(0.0)?;
    let start = ctx.begin();
    let strategy = neighbour_arcs(ctx, Count::Arcs, |first, counts| {
        let xs: Vec<f64> = counts.iter().map(|&(t, d)| coefficient(t, d)).collect();
        coef.write_range(first, &xs)
    })?;
    let arcs = shape.arcs * if shape.directed { 2 } else { 1 };
    ctx.finish(start, shape.vertices as u64, arcs, strategy, Some(1))?;
    coef.into_vec()
}

/// t / (d(d−1)), or 0 when d ≤ 1.
fn coefficient(t: u64, d: usize) -> f64 {
    if d <= 1 {
        0.0
    } else {
        t as f64 / (d as f64 * (d as f64 - 1.0))
    }
}

/// Rows `(vertex, coefficient)`.
fn rows<'a, S: GraphStore>(
    store: &'a S,
    schema: &SchemaRef,
    coef: &'a [f64],
) -> Result<BatchIter<'a>, ExecError> {
    Ok(per_vertex_rows(store, schema, move |vertices| {
        vec![Arc::new(Float64Array::from(pick(coef, vertices))) as ArrayRef]
    }))
}

/// Checks LCC coefficients against a sequential count over every ordered neighbour pair.
fn verify<S: GraphStore>(store: &S, table: &ResultTable) -> Result<(), String> {
    use std::collections::BTreeSet;
    let lists = Lists::read(store)?;
    let arcs: BTreeSet<(u32, u32)> = (0..lists.n())
        .flat_map(|u| lists.out[u].iter().map(move |e| (u as u32, e.0)))
        .collect();
    let want: Vec<Option<f64>> = (0..lists.n())
        .map(|v| {
            let nb: BTreeSet<u32> = lists.out[v]
                .iter()
                .map(|e| e.0)
                .chain(lists.inn[v].iter().copied())
                .filter(|&u| u as usize != v)
                .collect();
            let t = nb
                .iter()
                .flat_map(|&a| nb.iter().map(move |&b| (a, b)))
                .filter(|p| arcs.contains(p))
                .count();
            Some(coefficient(t as u64, nb.len()))
        })
        .collect();
    compare(store, table, "coefficient", &want, close)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coefficient_of_small_neighbourhoods() {
        assert_eq!(coefficient(2, 4), 2.0 / 12.0);
        assert_eq!(coefficient(0, 1), 0.0);
    }
}
