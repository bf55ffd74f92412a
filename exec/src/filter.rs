//! WHERE over a result, batch by batch: the condition evaluated with Arrow's kernels
//! (`expr.rs`), the rows kept with `arrow-select`. A row whose condition is null is dropped, as
//! in SQL.

use arrow_array::{Array, BooleanArray};

use grammar::Expr;

use crate::error::ExecError;
use crate::result::ResultTable;

/// The rows of `table` for which `condition` is true.
pub fn apply(table: ResultTable, condition: &Expr) -> Result<ResultTable, ExecError> {
    let mut batches = Vec::with_capacity(table.batches.len());
    for batch in &table.batches {
        let mask = crate::expr::evaluate(condition, batch, "WHERE")?;
        let mask = mask
            .as_any()
            .downcast_ref::<BooleanArray>()
            .ok_or_else(|| ExecError::Other("WHERE: the condition is not true or false".into()))?;
        let kept = arrow_select::filter::filter_record_batch(batch, mask)?;
        if kept.num_rows() > 0 {
            batches.push(kept);
        }
    }
    Ok(ResultTable { batches, ..table })
}
