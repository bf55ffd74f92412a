//! A RUN from its plan to its rows: the algorithms one after another on the one opened store,
//! joined by vertex, then WHERE, ORDER BY / LIMIT / OFFSET and YIELD, in that order.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};
use grammar::Expr;
use planner::{Projection, RunPlan};
use storage::GraphStore;

use crate::config::RunConfig;
use crate::error::ExecError;
use crate::output::arrow_type;
use crate::result::ResultTable;
use crate::topk::{SortKey, TopKError};

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
/// when limited; computed keys evaluated batch by batch), then YIELD, whose expressions are
/// computed only for the rows kept.
pub fn finish(table: ResultTable, plan: &RunPlan) -> Result<ResultTable, ExecError> {
    let table = match &plan.filter {
        Some(condition) => crate::filter::apply(table, condition)?,
        None => table,
    };
    // One closure per key (all of one type), each evaluating its expression on a batch.
    let computed: Vec<_> = plan
        .order_by
        .iter()
        .map(|k| {
            move |batch: &RecordBatch| -> Result<ArrayRef, TopKError> {
                crate::expr::evaluate(&k.expr, batch, "ORDER BY")
                    .map_err(|e| TopKError::Key(e.to_string()))
            }
        })
        .collect();
    let keys: Vec<(SortKey<'_>, bool)> = plan
        .order_by
        .iter()
        .zip(&computed)
        .map(|(k, compute)| {
            let key = match &k.expr {
                Expr::Column(c) => SortKey::Column(&c.name),
                _ => SortKey::Computed(compute),
            };
            (key, k.descending)
        })
        .collect();
    let table = crate::topk::order_and_limit_by(table, &keys, plan.limit, plan.offset)
        .map_err(|e| ExecError::Other(e.to_string()))?;
    match &plan.keep {
        Some(keep) => project(table, keep),
        None => Ok(table),
    }
}

/// The columns of YIELD, in order: a column passed through without copying (renamed by AS), an
/// expression computed batch by batch.
pub fn project(table: ResultTable, keep: &[Projection]) -> Result<ResultTable, ExecError> {
    let mut fields = Vec::with_capacity(keep.len());
    for p in keep {
        fields.push(match &p.expr {
            Expr::Column(c) => {
                let field = table.schema.field(table.schema.index_of(&c.name)?);
                field.as_ref().clone().with_name(&p.name)
            }
            e => Field::new(
                &p.name,
                crate::expr::data_type(e, table.schema.clone(), "YIELD")?,
                true,
            ),
        });
    }
    let schema = Arc::new(Schema::new_with_metadata(
        fields,
        table.schema.metadata().clone(),
    ));
    let mut batches = Vec::with_capacity(table.batches.len());
    for batch in &table.batches {
        let columns = keep
            .iter()
            .map(|p| match &p.expr {
                Expr::Column(c) => batch
                    .column_by_name(&c.name)
                    .cloned()
                    .ok_or_else(|| ExecError::Other(format!("YIELD: no column `{}`", c.name))),
                e => crate::expr::evaluate(e, batch, "YIELD"),
            })
            .collect::<Result<Vec<_>, _>>()?;
        batches.push(RecordBatch::try_new(schema.clone(), columns)?);
    }
    Ok(ResultTable {
        schema,
        batches,
        ..table
    })
}
