//! Several algorithms' results side by side, one row per vertex.
//!
//! Every per-vertex result is built in key order in batches of [`BATCH_ROWS`]
//! (`output::per_vertex_batches`), so the i-th batches of all results hold the same vertices:
//! the join takes the first result's `vertex` column and every result's other columns as they
//! are, without copying a value.

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;

use crate::error::ExecError;
use crate::result::ResultTable;

/// The tables joined by vertex under `schema`: `vertex`, then each table's other columns in
/// order. Statistics and summaries are concatenated, times added, operators united.
pub fn by_vertex(tables: Vec<ResultTable>, schema: SchemaRef) -> Result<ResultTable, ExecError> {
    let Some(first) = tables.first() else {
        return Ok(ResultTable::empty(schema));
    };
    let shape: Vec<usize> = first.batches.iter().map(RecordBatch::num_rows).collect();
    for t in &tables {
        let other: Vec<usize> = t.batches.iter().map(RecordBatch::num_rows).collect();
        if other != shape {
            return Err(ExecError::Other(
                "internal error: results to join by vertex are not batched alike".into(),
            ));
        }
    }
    let mut batches = Vec::with_capacity(shape.len());
    for b in 0..shape.len() {
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
        columns.push(first.batches[b].column(0).clone());
        for t in &tables {
            let batch = &t.batches[b];
            let vertex = t.schema.index_of("vertex").unwrap_or(0);
            columns.extend(
                (0..batch.num_columns())
                    .filter(|&c| c != vertex)
                    .map(|c| batch.column(c).clone()),
            );
        }
        batches.push(RecordBatch::try_new(schema.clone(), columns)?);
    }
    let mut operators: Vec<_> = tables.iter().flat_map(|t| t.operators.clone()).collect();
    operators.sort_by_key(|op| op.bit());
    operators.dedup();
    Ok(ResultTable {
        schema,
        batches,
        iterations: tables.iter().flat_map(|t| t.iterations.clone()).collect(),
        algorithm_time: tables.iter().map(|t| t.algorithm_time).sum(),
        operators,
        summaries: tables.iter().flat_map(|t| t.summaries.clone()).collect(),
    })
}
