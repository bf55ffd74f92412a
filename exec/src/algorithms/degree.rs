//! Out- and in-degree of every vertex, read from the stores' vertex sections (no edge data).

use std::sync::Arc;

use arrow_array::{ArrayRef, UInt64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, Step};
use planner::AlgoCall;
use storage::{Direction, GraphStore};

use super::Algorithm;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::{per_vertex_rows, pick};
use crate::reference::{compare, Lists};
use crate::result::BatchIter;
use crate::result::ResultTable;
use crate::vertexmap::vertex_values;

/// Vertex degrees.
pub struct Degree;

/// Out- and in-degree per vertex.
pub struct Degrees {
    pub out: Vec<u64>,
    pub inn: Vec<u64>,
}

impl Algorithm for Degree {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "degree",
        summary: "out- and in-degree of every vertex",
        semantics: "The number of out-edges and in-edges of each vertex as stored (an undirected edge counts once at each end, so both columns are equal there). Reads only the vertex index, never edge data.",
        example: "RUN degree ON g ORDER BY out_degree DESC LIMIT 10;",
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("out_degree", ColumnType::UInt64),
            ColumnSpec::new("in_degree", ColumnType::UInt64),
        ],
        program: &[Step::call(
            Operator::VertexMap,
            "all, read the vertex index; no edge data",
        )],
        ..AlgorithmSpec::BASE
    };
    type Config = ();
    type Output = Degrees;

    fn config(_: &AlgoCall) {}

    fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, _: &()) -> Result<Degrees, ExecError> {
        let store = ctx.store;
        Ok(Degrees {
            out: vertex_values(ctx, |v| store.degree(Direction::Out, v))?,
            inn: vertex_values(ctx, |v| store.degree(Direction::In, v))?,
        })
    }

    /// Rows `(vertex, out_degree, in_degree)`; undirected graphs report the same value twice.
    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        d: &'a Degrees,
    ) -> Result<BatchIter<'a>, ExecError> {
        Ok(per_vertex_rows(store, schema, move |vertices| {
            vec![
                Arc::new(UInt64Array::from(pick(&d.out, vertices))) as ArrayRef,
                Arc::new(UInt64Array::from(pick(&d.inn, vertices))) as ArrayRef,
            ]
        }))
    }

    /// Checks the degrees against the lengths of the lists.
    fn verify<S: GraphStore>(store: &S, _: &(), table: &ResultTable) -> Result<(), String> {
        let lists = Lists::read(store)?;
        let out: Vec<Option<f64>> = lists.out.iter().map(|l| Some(l.len() as f64)).collect();
        let inn: Vec<Option<f64>> = lists.inn.iter().map(|l| Some(l.len() as f64)).collect();
        compare(store, table, "out_degree", &out, |a, b| a == b)?;
        compare(store, table, "in_degree", &inn, |a, b| a == b)
    }
}
