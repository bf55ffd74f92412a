//! Out- and in-degree of every vertex, read from the stores' vertex sections (no edge data).

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use arrow_schema::SchemaRef;
use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::per_vertex_batches;

/// Rows `(vertex, out_degree, in_degree)`; undirected graphs report the same value twice.
pub fn batches<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>, ExecError> {
    let store = ctx.store;
    ctx.check()?;
    per_vertex_batches(store, schema, |r| {
        let out: UInt64Array = r
            .clone()
            .map(|v| store.degree(Direction::Out, v as u32))
            .collect();
        let inn: UInt64Array = r.map(|v| store.degree(Direction::In, v as u32)).collect();
        vec![Arc::new(out) as ArrayRef, Arc::new(inn) as ArrayRef]
    })
}
