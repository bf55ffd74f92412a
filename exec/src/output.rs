//! Output columns of every algorithm and the Arrow batches results are built into.
//!
//! Column names here are the contract with the planner (which declares them for EXPLAIN and
//! ORDER BY) and with the sinks; keep them identical.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use planner::AlgoCall;
use storage::GraphStore;

use crate::error::ExecError;
use crate::result::BATCH_ROWS;

/// The columns `call` produces: first `vertex` (or `walk`, `step`, `vertex` for random walks).
pub fn output_schema(call: &AlgoCall) -> SchemaRef {
    let vertex = Field::new("vertex", DataType::UInt64, false);
    let fields = match call {
        AlgoCall::Bfs { .. } => vec![vertex, Field::new("depth", DataType::Int64, true)],
        AlgoCall::PageRank { .. } => vec![vertex, Field::new("rank", DataType::Float64, false)],
        AlgoCall::Wcc => vec![vertex, Field::new("component", DataType::UInt64, false)],
        AlgoCall::Sssp { .. } => vec![vertex, Field::new("distance", DataType::Float64, true)],
        AlgoCall::Cdlp { .. } => vec![vertex, Field::new("label", DataType::UInt64, false)],
        AlgoCall::Lcc => vec![vertex, Field::new("coefficient", DataType::Float64, false)],
        AlgoCall::RandomWalk { .. } => vec![
            Field::new("walk", DataType::UInt64, false),
            Field::new("step", DataType::UInt32, false),
            vertex,
        ],
        AlgoCall::Dfs { .. } => vec![
            vertex,
            Field::new("discovered", DataType::UInt64, true),
            Field::new("parent", DataType::UInt64, true),
        ],
        AlgoCall::Degree => vec![
            vertex,
            Field::new("out_degree", DataType::UInt64, false),
            Field::new("in_degree", DataType::UInt64, false),
        ],
    };
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
