//! Output schemas, derived from the algorithm registry, and the Arrow batches results are built
//! into.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use planner::registry::ColumnType;
use planner::AlgoCall;
use storage::GraphStore;

use crate::error::ExecError;
use crate::result::BATCH_ROWS;

/// The columns `call` produces, as the registry declares them.
pub fn output_schema(call: &AlgoCall) -> SchemaRef {
    let fields: Vec<Field> = call
        .spec
        .columns
        .iter()
        .map(|c| {
            let ty = match c.ty {
                // Internal ids while the run builds, orders and limits the rows; a string-keyed
                // graph's keys replace them last (`vertex_keys::with_keys`).
                ColumnType::UInt64 | ColumnType::VertexKey => DataType::UInt64,
                ColumnType::Int64 => DataType::Int64,
                ColumnType::UInt32 => DataType::UInt32,
                ColumnType::Float64 => DataType::Float64,
            };
            Field::new(c.name, ty, c.nullable)
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// Builds one row per vertex in internal-id order, at most [`BATCH_ROWS`] rows per batch: the
/// `vertex` column holds input ids, `values(range)` builds the other columns for those rows.
pub(crate) fn per_vertex_batches<S: GraphStore>(
    store: &S,
    schema: &SchemaRef,
    values: impl Fn(Range<usize>) -> Vec<ArrayRef>,
) -> Result<Vec<RecordBatch>, ExecError> {
    let n = store.shape().vertices as usize;
    let mut batches = Vec::with_capacity(n.div_ceil(BATCH_ROWS));
    let mut start = 0;
    while start < n {
        let end = (start + BATCH_ROWS).min(n);
        let ids: UInt64Array = (start..end).map(|v| store.input_id(v as u32)).collect();
        let mut cols: Vec<ArrayRef> = vec![Arc::new(ids)];
        cols.extend(values(start..end));
        batches.push(RecordBatch::try_new(schema.clone(), cols)?);
        start = end;
    }
    Ok(batches)
}
