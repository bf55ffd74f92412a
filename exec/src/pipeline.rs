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
use crate::result::{PendingResult, ResultTable, RowStream};
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
    run_joined(store, plan, cfg)?.into_table()
}

/// [`run_all`] with the rows left to be built as they are taken ([`PendingResult::rows`]);
/// several algorithms' rows are joined as they are built.
pub fn run_all_pending<'s, S: GraphStore>(
    store: &'s S,
    plan: &RunPlan,
    cfg: &RunConfig,
) -> Result<PendingResult<'s>, ExecError> {
    if let [only] = &plan.calls[..] {
        return crate::run::run_pending(store, &only.call, cfg);
    }
    run_joined(store, plan, cfg)
}

/// Runs the algorithms of `plan` one after another and joins their rows by vertex.
fn run_joined<'s, S: GraphStore>(
    store: &'s S,
    plan: &RunPlan,
    cfg: &RunConfig,
) -> Result<PendingResult<'s>, ExecError> {
    let mut parts = Vec::with_capacity(plan.calls.len());
    for c in &plan.calls {
        let mut part = crate::run::run_pending(store, &c.call, cfg)?;
        // Summaries are told apart by the call's prefix (its `AS` name, else the algorithm's).
        for s in &mut part.info.summaries {
            s.scope = c.prefix.clone();
        }
        parts.push(part);
    }
    Ok(crate::join::by_vertex_pending(parts, joined_schema(plan)))
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
pub fn finish(mut table: ResultTable, plan: &RunPlan) -> Result<ResultTable, ExecError> {
    let batches = std::mem::take(&mut table.batches);
    let rows = finish_rows(RowStream::from_batches(table.schema.clone(), batches), plan)?;
    let schema = rows.schema.clone();
    Ok(table.with_rows(schema, rows.collect()?))
}

/// [`finish`] over rows as they are built: WHERE and YIELD take each batch as it is pulled,
/// LIMIT without ORDER BY stops pulling once it has its rows, and a limited ORDER BY holds the
/// best rows so far and a window of new ones (`topk::order_and_limit_rows`).
pub fn finish_rows<'a>(rows: RowStream<'a>, plan: &'a RunPlan) -> Result<RowStream<'a>, ExecError> {
    let rows = match &plan.filter {
        Some(condition) => crate::filter::apply_rows(rows, condition),
        None => rows,
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
    let rows = crate::topk::order_and_limit_rows(rows, &keys, plan.limit, plan.offset)?;
    match &plan.keep {
        Some(keep) => project_rows(rows, keep),
        None => Ok(rows),
    }
}

/// The columns of YIELD, in order: a column passed through without copying (renamed by AS), an
/// expression computed batch by batch.
pub fn project(mut table: ResultTable, keep: &[Projection]) -> Result<ResultTable, ExecError> {
    let batches = std::mem::take(&mut table.batches);
    let rows = project_rows(RowStream::from_batches(table.schema.clone(), batches), keep)?;
    let schema = rows.schema.clone();
    Ok(table.with_rows(schema, rows.collect()?))
}

/// [`project`] over rows as they are built: the schema now, each batch when pulled.
pub fn project_rows<'a>(
    rows: RowStream<'a>,
    keep: &'a [Projection],
) -> Result<RowStream<'a>, ExecError> {
    let mut fields = Vec::with_capacity(keep.len());
    for p in keep {
        fields.push(match &p.expr {
            Expr::Column(c) => {
                let field = rows.schema.field(rows.schema.index_of(&c.name)?);
                field.as_ref().clone().with_name(&p.name)
            }
            e => Field::new(
                &p.name,
                crate::expr::data_type(e, rows.schema.clone(), "YIELD")?,
                true,
            ),
        });
    }
    let schema = Arc::new(Schema::new_with_metadata(
        fields,
        rows.schema.metadata().clone(),
    ));
    let out = schema.clone();
    let projected = rows.batches.map(move |batch| {
        let batch = batch?;
        let columns = keep
            .iter()
            .map(|p| match &p.expr {
                Expr::Column(c) => batch
                    .column_by_name(&c.name)
                    .cloned()
                    .ok_or_else(|| ExecError::Other(format!("YIELD: no column `{}`", c.name))),
                e => crate::expr::evaluate(e, &batch, "YIELD"),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RecordBatch::try_new(out.clone(), columns)?)
    });
    Ok(RowStream {
        schema,
        batches: Box::new(projected),
    })
}
