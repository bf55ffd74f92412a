//! WHERE over a result, batch by batch: the condition evaluated with Arrow's kernels
//! (`expr.rs`), the rows kept with `arrow-select`. A row whose condition is null is dropped, as
//! in SQL.

use arrow_array::{Array, BooleanArray, RecordBatch};

use grammar::Expr;

use crate::error::ExecError;
use crate::result::{ResultTable, RowStream};

/// The rows of `table` for which `condition` is true.
pub fn apply(table: ResultTable, condition: &Expr) -> Result<ResultTable, ExecError> {
    let mut batches = Vec::with_capacity(table.batches.len());
    for batch in &table.batches {
        let kept = keep(batch, condition)?;
        if kept.num_rows() > 0 {
            batches.push(kept);
        }
    }
    Ok(ResultTable { batches, ..table })
}

/// [`apply`] over rows as they are built: each batch is filtered when pulled.
pub fn apply_rows<'a>(rows: RowStream<'a>, condition: &'a Expr) -> RowStream<'a> {
    let kept = rows
        .batches
        .map(move |batch| keep(&batch?, condition))
        .filter(|kept| kept.as_ref().map_or(true, |b| b.num_rows() > 0));
    RowStream {
        schema: rows.schema,
        batches: Box::new(kept),
    }
}

/// The rows of `batch` whose condition is true.
fn keep(batch: &RecordBatch, condition: &Expr) -> Result<RecordBatch, ExecError> {
    let mask = crate::expr::evaluate(condition, batch, "WHERE")?;
    let mask = mask
        .as_any()
        .downcast_ref::<BooleanArray>()
        .ok_or_else(|| ExecError::Other("WHERE: the condition is not true or false".into()))?;
    Ok(arrow_select::filter::filter_record_batch(batch, mask)?)
}
