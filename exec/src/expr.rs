//! Expressions over a result — WHERE conditions, ORDER BY keys, YIELD items — evaluated batch by
//! batch with Arrow's compute kernels: `arrow-arith` for arithmetic and AND / OR / NOT / IS NULL,
//! `arrow-ord` for comparisons. The planner has already resolved the columns and checked the
//! types (`planner::condition`), so what can still fail here is arithmetic overflow.
//!
//! Numbers meet in one type per operator: Float64 when either side is a float or the operator
//! is `/` (so `/` never truncates and never divides by zero as integers do), UInt64 when both
//! sides are unsigned (but Int64 for `-`, so `component - 1` may go below zero), Int64
//! otherwise. Nulls follow SQL: a comparison with null is null, AND / OR are three-valued
//! (Kleene).

use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, is_not_null, is_null, not, or_kleene};
use arrow_arith::numeric;
use arrow_array::{
    new_null_array, Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch,
    UInt64Array,
};
use arrow_schema::{DataType, SchemaRef};
use grammar::{BinaryOp, Expr, Value};

use crate::error::ExecError;

/// `expr`, an expression of `clause` (`WHERE`, `ORDER BY`, `YIELD`, named in errors), over every
/// row of `batch`, as an array of the batch's length.
pub fn evaluate(expr: &Expr, batch: &RecordBatch, clause: &str) -> Result<ArrayRef, ExecError> {
    evaluate_rows(expr, batch).map_err(|e| ExecError::Other(format!("{clause}: {e}")))
}

/// The type `expr` yields over `schema`, found by evaluating it on no rows.
pub fn data_type(expr: &Expr, schema: SchemaRef, clause: &str) -> Result<DataType, ExecError> {
    Ok(evaluate(expr, &RecordBatch::new_empty(schema), clause)?
        .data_type()
        .clone())
}

fn evaluate_rows(expr: &Expr, batch: &RecordBatch) -> Result<ArrayRef, String> {
    let rows = batch.num_rows();
    let fail = |e: arrow_schema::ArrowError| e.to_string();
    Ok(match expr {
        Expr::Column(c) => batch
            .column_by_name(&c.name)
            .cloned()
            .ok_or_else(|| format!("no column `{}`", c.name))?,
        Expr::Literal(l) => match l.value {
            Value::Int(n) if n >= 0 => Arc::new(UInt64Array::from_value(n as u64, rows)),
            Value::Int(n) => Arc::new(Int64Array::from_value(n, rows)),
            Value::Size(n) | Value::BigInt(n) => Arc::new(UInt64Array::from_value(n, rows)),
            Value::Float(x) => Arc::new(Float64Array::from_value(x, rows)),
            _ => return Err("only numbers can be computed on".into()),
        },
        Expr::Null(_) => new_null_array(&DataType::Null, rows),
        Expr::Negate { expr, .. } => {
            let v = evaluate_rows(expr, batch)?;
            let v = if v.data_type() == &DataType::Float64 {
                v
            } else {
                cast(&v, &DataType::Int64)?
            };
            numeric::neg(&v).map_err(fail)?
        }
        Expr::Not { expr, .. } => {
            Arc::new(not(&boolean(evaluate_rows(expr, batch)?)?).map_err(fail)?)
        }
        Expr::IsNull { expr, negated, .. } => {
            let v = evaluate_rows(expr, batch)?;
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
            let v = evaluate_rows(expr, batch)?;
            let mut any: Option<BooleanArray> = None;
            for item in list {
                let eq = compare(BinaryOp::Eq, v.clone(), evaluate_rows(item, batch)?)?;
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
            let l = evaluate_rows(left, batch)?;
            let r = evaluate_rows(right, batch)?;
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
fn boolean(v: ArrayRef) -> Result<BooleanArray, String> {
    let v = cast(&v, &DataType::Boolean)?;
    v.as_any()
        .downcast_ref::<BooleanArray>()
        .cloned()
        .ok_or_else(|| "expected a condition".to_string())
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

fn cast(v: &ArrayRef, to: &DataType) -> Result<ArrayRef, String> {
    if v.data_type() == to {
        return Ok(v.clone());
    }
    arrow_cast::cast(v, to).map_err(|e| e.to_string())
}

fn compare(op: BinaryOp, l: ArrayRef, r: ArrayRef) -> Result<BooleanArray, String> {
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
    kernel(&l, &r).map_err(|e| e.to_string())
}

fn arithmetic(op: BinaryOp, l: ArrayRef, r: ArrayRef) -> Result<ArrayRef, String> {
    let ty = common_type(l.data_type(), r.data_type(), op);
    let (l, r) = (cast(&l, &ty)?, cast(&r, &ty)?);
    let kernel = match op {
        BinaryOp::Add => numeric::add,
        BinaryOp::Sub => numeric::sub,
        BinaryOp::Mul => numeric::mul,
        _ => numeric::div,
    };
    kernel(&l, &r).map_err(|e| {
        format!(
            "`{}` failed: {e} (integer arithmetic is checked; multiply by a float such as 1.0 to compute in floating point)",
            op.symbol()
        )
    })
}
