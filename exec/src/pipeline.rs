//! A RUN from its plan to its rows: the algorithms one after another on the one opened store,
//! joined by vertex, then WHERE, ORDER BY / LIMIT / OFFSET and YIELD, in that order.

use std::sync::Arc;

use arrow_schema::{Field, Schema, SchemaRef};
use planner::RunPlan;
use storage::GraphStore;

use crate::config::RunConfig;
use crate::error::ExecError;
use crate::output::arrow_type;
use crate::result::ResultTable;

/// Runs every algorithm of `plan` on `store` and joins their results by vertex. One algorithm's
/// result is returned as it is, without a copy.
pub fn run_all<S: GraphStore>(
    store: &S,
    plan: &RunPlan,
    cfg: &RunConfig,
) -> Result<ResultTable, ExecError> {
    if let [only] = &plan.calls[..] {
        return crate::run::run(store, &only.call, cfg);
    }
    let mut tables = Vec::with_capacity(plan.calls.len());
    for c in &plan.calls {
        let mut table = crate::run::run(store, &c.call, cfg)?;
        // Summaries are told apart by the call's prefix (its `AS` name, else the algorithm's).
        for s in &mut table.summaries {
            s.scope = c.prefix.clone();
        }
        tables.push(table);
    }
    crate::join::by_vertex(tables, joined_schema(plan))
}

/// The schema of the joined result: the plan's columns, named as the plan names them.
pub fn joined_schema(plan: &RunPlan) -> SchemaRef {
    let fields: Vec<Field> = plan
        .columns
        .iter()
        .map(|c| Field::new(&c.name, arrow_type(c.ty()), c.spec.nullable))
        .collect();
    Arc::new(Schema::new(fields))
}

/// The clauses after the algorithms: WHERE, then ORDER BY with LIMIT and OFFSET (a bounded heap
/// when limited), then YIELD.
pub fn finish(table: ResultTable, plan: &RunPlan) -> Result<ResultTable, ExecError> {
    let table = match &plan.filter {
        Some(condition) => crate::filter::apply(table, condition)?,
        None => table,
    };
    let keys: Vec<(&str, bool)> = plan
        .order_by
        .iter()
        .map(|(c, d)| (c.as_str(), *d))
        .collect();
    let table = crate::topk::order_and_limit(table, &keys, plan.limit, plan.offset)
        .map_err(|e| ExecError::Other(e.to_string()))?;
    match &plan.keep {
        Some(keep) => select(table, keep),
        None => Ok(table),
    }
}

/// Only the columns `keep`, in that order (YIELD), without copying any data.
pub fn select(table: ResultTable, keep: &[String]) -> Result<ResultTable, ExecError> {
    let indices = keep
        .iter()
        .map(|name| table.schema.index_of(name))
        .collect::<Result<Vec<_>, _>>()?;
    let schema = Arc::new(table.schema.project(&indices)?);
    let batches = table
        .batches
        .iter()
        .map(|b| b.project(&indices))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ResultTable {
        schema,
        batches,
        ..table
    })
}
