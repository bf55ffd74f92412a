//! Several algorithms' results side by side, one row per vertex.
//!
//! Every per-vertex result is built in key order in batches of [`BATCH_ROWS`]
//! (`output::per_vertex_rows`), so the i-th batches of all results hold the same vertices:
//! the join takes the first result's `vertex` column and every result's other columns as they
//! are, without copying a value. The joined rows are built as they are pulled, each result's
//! i-th batch built when the joined i-th batch is.
//!
//! [`BATCH_ROWS`]: crate::result::BATCH_ROWS

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;

use crate::error::ExecError;
use crate::result::{BatchIter, PendingResult, ResultTable, RowSource};

/// The results of `tables` joined by vertex, in `schema` (the first table's `vertex` column,
/// then every table's other columns in order).
pub fn by_vertex(tables: Vec<ResultTable>, schema: SchemaRef) -> Result<ResultTable, ExecError> {
    let parts = tables.into_iter().map(PendingResult::built).collect();
    by_vertex_pending(parts, schema).into_table()
}

/// [`by_vertex`] over results whose rows are not built yet: the joined rows are built batch by
/// batch as they are pulled. The statistics and summaries are every part's, in order.
pub fn by_vertex_pending(parts: Vec<PendingResult<'_>>, schema: SchemaRef) -> PendingResult<'_> {
    let infos: Vec<&ResultTable> = parts.iter().map(|p| &p.info).collect();
    let mut operators: Vec<_> = infos.iter().flat_map(|t| t.operators.clone()).collect();
    operators.sort_by_key(|op| op.bit());
    operators.dedup();
    let info = ResultTable {
        schema,
        batches: Vec::new(),
        iterations: infos.iter().flat_map(|t| t.iterations.clone()).collect(),
        algorithm_time: infos.iter().map(|t| t.algorithm_time).sum(),
        operators,
        summaries: infos.iter().flat_map(|t| t.summaries.clone()).collect(),
    };
    PendingResult::new(info, Box::new(Joined { parts }))
}

/// The parts of a join, whose i-th batches are joined into its i-th batch.
struct Joined<'s> {
    parts: Vec<PendingResult<'s>>,
}

impl RowSource for Joined<'_> {
    fn rows(&self, schema: &SchemaRef) -> Result<BatchIter<'_>, ExecError> {
        let mut streams = Vec::with_capacity(self.parts.len());
        let mut vertex_columns = Vec::with_capacity(self.parts.len());
        for part in &self.parts {
            let rows = part.rows()?;
            vertex_columns.push(rows.schema.index_of("vertex").unwrap_or(0));
            streams.push(rows.batches);
        }
        let schema = schema.clone();
        let mut failed = false;
        Ok(Box::new(std::iter::from_fn(move || {
            if failed || streams.is_empty() {
                return None;
            }
            let next: Vec<Option<Result<RecordBatch, ExecError>>> =
                streams.iter_mut().map(Iterator::next).collect();
            if next.iter().all(Option::is_none) {
                return None;
            }
            let joined = join_batches(next, &vertex_columns, &schema);
            failed = joined.is_err();
            Some(joined)
        })))
    }
}

/// One joined batch from every part's batch of the same vertices.
fn join_batches(
    next: Vec<Option<Result<RecordBatch, ExecError>>>,
    vertex_columns: &[usize],
    schema: &SchemaRef,
) -> Result<RecordBatch, ExecError> {
    let not_alike = || {
        ExecError::Other("internal error: results to join by vertex are not batched alike".into())
    };
    let mut batches = Vec::with_capacity(next.len());
    for batch in next {
        batches.push(batch.ok_or_else(not_alike)??);
    }
    if batches
        .iter()
        .any(|b| b.num_rows() != batches[0].num_rows())
    {
        return Err(not_alike());
    }
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    columns.push(batches[0].column(0).clone());
    for (batch, &vertex) in batches.iter().zip(vertex_columns) {
        columns.extend(
            (0..batch.num_columns())
                .filter(|&c| c != vertex)
                .map(|c| batch.column(c).clone()),
        );
    }
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}
