//! WHERE over a result, batch by batch, with Arrow's compute kernels: `arrow-arith` for
//! arithmetic and AND / OR / NOT / IS NULL, `arrow-ord` for comparisons, `arrow-select` to keep
//! the rows. The planner has already resolved the columns and checked the types
//! (`planner::condition`), so what can still fail here is arithmetic overflow.
//!
//! Numbers meet in one type per operator: Float64 when either side is a float or the operator
//! is `/` (so `/` never truncates and never divides by zero as integers do), UInt64 when both
//! sides are unsigned (but Int64 for `-`, so `component - 1` may go below zero), Int64
//! otherwise. Nulls follow SQL: a comparison with null is null, AND /
//! OR are three-valued (Kleene), and a row whose condition is null is dropped.

use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, is_not_null, is_null, not, or_kleene};
use arrow_arith::numeric;
use arrow_array::{
    new_null_array, Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch,
    UInt64Array,
};
use arrow_schema::DataType;
use grammar::{BinaryOp, Expr, Value};

use crate::error::ExecError;
use crate::result::ResultTable;

/// The rows of `table` for which `condition` is true.
pub fn apply(table: ResultTable, condition: &Expr) -> Result<ResultTable, ExecError> {
    let mut batches = Vec::with_capacity(table.batches.len());
    for batch in &table.batches {
        let mask = evaluate(condition, batch)?;
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

/// `expr` over every row of `batch`, as an array of the batch's length.
pub fn evaluate(expr: &Expr, batch: &RecordBatch) -> Result<ArrayRef, ExecError> {
    let rows = batch.num_rows();
    let fail = |e: arrow_schema::ArrowError| ExecError::Other(format!("WHERE: {e}"));
    Ok(match expr {
        Expr::Column(c) => batch
            .column_by_name(&c.name)
            .cloned()
            .ok_or_else(|| ExecError::Other(format!("WHERE: no column `{}`", c.name)))?,
        Expr::Literal(l) => match l.value {
            Value::Int(n) if n >= 0 => Arc::new(UInt64Array::from_value(n as u64, rows)),
            Value::Int(n) => Arc::new(Int64Array::from_value(n, rows)),
            Value::Size(n) => Arc::new(UInt64Array::from_value(n, rows)),
            Value::Float(x) => Arc::new(Float64Array::from_value(x, rows)),
            _ => {
                return Err(ExecError::Other(
                    "WHERE: only numbers can be compared".into(),
                ))
            }
        },
        Expr::Null(_) => new_null_array(&DataType::Null, rows),
        Expr::Negate { expr, .. } => {
            let v = evaluate(expr, batch)?;
            let v = if v.data_type() == &DataType::Float64 {
                v
            } else {
                cast(&v, &DataType::Int64)?
            };
            numeric::neg(&v).map_err(fail)?
        }
        Expr::Not { expr, .. } => Arc::new(not(&boolean(evaluate(expr, batch)?)?).map_err(fail)?),
        Expr::IsNull { expr, negated, .. } => {
            let v = evaluate(expr, batch)?;
            Arc::new(
                if *negated {
                    is_not_null(&v)
                } else {
                    is_null(&v)
                }
                .map_err(fail)?,
            )
        }
        Expr::InList {
            expr,
            list,
            negated,
            ..
        } => {
            let v = evaluate(expr, batch)?;
            let mut any: Option<BooleanArray> = None;
            for item in list {
                let eq = compare(BinaryOp::Eq, v.clone(), evaluate(item, batch)?)?;
                any = Some(match any {
                    None => eq,
                    Some(a) => or_kleene(&a, &eq).map_err(fail)?,
                });
            }
            let any = any.unwrap_or_else(|| BooleanArray::from(vec![false; rows]));
            Arc::new(if *negated {
                not(&any).map_err(fail)?
            } else {
                any
            })
        }
        Expr::Binary {
            op, left, right, ..
        } => {
            let l = evaluate(left, batch)?;
            let r = evaluate(right, batch)?;
            match op {
                BinaryOp::And => Arc::new(and_kleene(&boolean(l)?, &boolean(r)?).map_err(fail)?),
                BinaryOp::Or => Arc::new(or_kleene(&boolean(l)?, &boolean(r)?).map_err(fail)?),
                op if op.is_comparison() => Arc::new(compare(*op, l, r)?),
                op => arithmetic(*op, l, r)?,
            }
        }
    })
}

/// A condition's value as booleans (a NULL literal becomes a null boolean).
fn boolean(v: ArrayRef) -> Result<BooleanArray, ExecError> {
    let v = cast(&v, &DataType::Boolean)?;
    v.as_any()
        .downcast_ref::<BooleanArray>()
        .cloned()
        .ok_or_else(|| ExecError::Other("WHERE: expected a condition".into()))
}

/// The type two operands meet in (see the module comment).
fn common_type(l: &DataType, r: &DataType, op: BinaryOp) -> DataType {
    let unsigned = |t: &DataType| t.is_unsigned_integer() || t == &DataType::Null;
    if op == BinaryOp::Div || l.is_floating() || r.is_floating() {
        DataType::Float64
    } else if unsigned(l) && unsigned(r) && op != BinaryOp::Sub {
        DataType::UInt64
    } else {
        DataType::Int64
    }
}

fn cast(v: &ArrayRef, to: &DataType) -> Result<ArrayRef, ExecError> {
    if v.data_type() == to {
        return Ok(v.clone());
    }
    arrow_cast::cast(v, to).map_err(|e| ExecError::Other(format!("WHERE: {e}")))
}

fn compare(op: BinaryOp, l: ArrayRef, r: ArrayRef) -> Result<BooleanArray, ExecError> {
    let ty = common_type(l.data_type(), r.data_type(), op);
    let (l, r) = (cast(&l, &ty)?, cast(&r, &ty)?);
    let kernel = match op {
        BinaryOp::Eq => arrow_ord::cmp::eq,
        BinaryOp::NotEq => arrow_ord::cmp::neq,
        BinaryOp::Lt => arrow_ord::cmp::lt,
        BinaryOp::LtEq => arrow_ord::cmp::lt_eq,
        BinaryOp::Gt => arrow_ord::cmp::gt,
        _ => arrow_ord::cmp::gt_eq,
    };
    kernel(&l, &r).map_err(|e| ExecError::Other(format!("WHERE: {e}")))
}

fn arithmetic(op: BinaryOp, l: ArrayRef, r: ArrayRef) -> Result<ArrayRef, ExecError> {
    let ty = common_type(l.data_type(), r.data_type(), op);
    let (l, r) = (cast(&l, &ty)?, cast(&r, &ty)?);
    let kernel = match op {
        BinaryOp::Add => numeric::add,
        BinaryOp::Sub => numeric::sub,
        BinaryOp::Mul => numeric::mul,
        _ => numeric::div,
    };
    kernel(&l, &r).map_err(|e| {
        ExecError::Other(format!(
            "WHERE: `{}` failed: {e} (integer arithmetic is checked; multiply by a float such as 1.0 to compute in floating point)",
            op.symbol()
        ))
    })
}
