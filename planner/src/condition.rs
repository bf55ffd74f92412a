//! Expressions over result columns — WHERE conditions, ORDER BY keys, YIELD items: their
//! columns resolved against the result and their types checked before anything runs, so that
//! `rank > 'x'` or `component AND 1` fails with the line and column of the fault rather than
//! after a long run. The executor evaluates the checked expression (`exec::expr`).

use grammar::{BinaryOp, Expr, Value};

use crate::columns::{resolve, OutputColumn};
use crate::error::PlanError;
use crate::registry::ColumnType;

/// What an expression yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Number,
    Condition,
    /// `NULL`: fits anywhere.
    Null,
}

/// `expr` with every column reference rewritten to its result name, after checking that it is a
/// condition (true, false or null per row).
pub fn check(expr: &Expr, columns: &[OutputColumn]) -> Result<Expr, PlanError> {
    let (checked, kind) = check_in(expr, columns, "WHERE")?;
    match kind {
        Kind::Condition | Kind::Null => Ok(checked),
        Kind::Number => Err(PlanError::new(
            expr.pos(),
            format!(
                "WHERE needs a condition such as `{} > 0`, but `{}` is a number",
                text(expr),
                text(expr)
            ),
        )),
    }
}

/// `expr`, an expression of `clause` (`ORDER BY`, `YIELD`), with its columns rewritten to their
/// result names, and what it yields.
pub fn check_in(
    expr: &Expr,
    columns: &[OutputColumn],
    clause: &str,
) -> Result<(Expr, Kind), PlanError> {
    let mut checked = expr.clone();
    let kind = Checker { columns, clause }.kind(&mut checked)?;
    Ok((checked, kind))
}

/// Whether `expr` reads any column (an expression without one is the same on every row).
pub fn reads_columns(expr: &Expr) -> bool {
    match expr {
        Expr::Column(_) => true,
        Expr::Literal(_) | Expr::Null(_) => false,
        Expr::Negate { expr, .. } | Expr::Not { expr, .. } | Expr::IsNull { expr, .. } => {
            reads_columns(expr)
        }
        Expr::Binary { left, right, .. } => reads_columns(left) || reads_columns(right),
        Expr::InList { expr, list, .. } => reads_columns(expr) || list.iter().any(reads_columns),
    }
}

/// Resolves and type-checks the expressions of one clause.
struct Checker<'a> {
    columns: &'a [OutputColumn],
    clause: &'a str,
}

impl Checker<'_> {
    fn kind(&self, expr: &mut Expr) -> Result<Kind, PlanError> {
        let clause = self.clause;
        Ok(match expr {
            Expr::Column(c) => {
                let col = resolve(self.columns, c, clause)?;
                c.name = col.name.clone();
                match col.ty() {
                    // Vertex columns hold input ids; string keys are refused before
                    // (`vertex_column`).
                    ColumnType::UInt64
                    | ColumnType::Int64
                    | ColumnType::UInt32
                    | ColumnType::Float64
                    | ColumnType::VertexKey => Kind::Number,
                }
            }
            Expr::Literal(l) => match &l.value {
                Value::Int(_) | Value::BigInt(_) | Value::Float(_) => Kind::Number,
                Value::Size(_) => Kind::Number,
                other => {
                    return Err(PlanError::new(
                        l.pos,
                        format!(
                            "{clause} computes on numbers, and {} is not one (every result column is a number)",
                            crate::settings::describe(other)
                        ),
                    ))
                }
            },
            Expr::Null(_) => Kind::Null,
            Expr::Negate { expr: inner, .. } => {
                self.number(inner, "-")?;
                Kind::Number
            }
            Expr::Not { expr: inner, .. } => {
                self.condition(inner, "NOT")?;
                Kind::Condition
            }
            Expr::Binary {
                op, left, right, ..
            } => {
                let op = *op;
                match op {
                    BinaryOp::And | BinaryOp::Or => {
                        self.condition(left, op.symbol())?;
                        self.condition(right, op.symbol())?;
                        Kind::Condition
                    }
                    _ => {
                        self.number(left, op.symbol())?;
                        self.number(right, op.symbol())?;
                        if op.is_comparison() {
                            Kind::Condition
                        } else {
                            Kind::Number
                        }
                    }
                }
            }
            Expr::IsNull { expr: inner, .. } => {
                self.kind(inner)?;
                Kind::Condition
            }
            Expr::InList {
                expr: inner, list, ..
            } => {
                self.number(inner, "IN")?;
                for item in list {
                    self.number(item, "IN")?;
                }
                Kind::Condition
            }
        })
    }

    /// Checks that `expr`, an operand of `op`, is a number (or NULL).
    /// The operand is shown only when it is at fault: rendering every operand of a long chain
    /// would make the check quadratic in the statement's length.
    fn number(&self, expr: &mut Expr, op: &str) -> Result<(), PlanError> {
        match self.kind(expr)? {
            Kind::Number | Kind::Null => Ok(()),
            Kind::Condition => Err(PlanError::new(
                expr.pos(),
                format!(
                    "`{op}` needs numbers on both sides, but `{}` is a condition (true or false)",
                    text(expr)
                ),
            )),
        }
    }

    /// Checks that `expr`, an operand of `op`, is a condition (or NULL).
    fn condition(&self, expr: &mut Expr, op: &str) -> Result<(), PlanError> {
        match self.kind(expr)? {
            Kind::Condition | Kind::Null => Ok(()),
            Kind::Number => {
                let shown = text(expr);
                Err(PlanError::new(
                    expr.pos(),
                    format!("`{op}` needs conditions on both sides, but `{shown}` is a number; compare it, e.g. `{shown} > 0`"),
                ))
            }
        }
    }
}

/// An expression as EXPLAIN and messages show it; nested operators get parentheses, except an
/// `AND` in an `AND` or an `OR` in an `OR`, so that a chain reads as written whatever its tree.
pub fn text(expr: &Expr) -> String {
    fn operand(e: &Expr) -> String {
        match e {
            Expr::Binary { .. } | Expr::IsNull { .. } | Expr::InList { .. } | Expr::Not { .. } => {
                format!("({})", text(e))
            }
            _ => text(e),
        }
    }
    fn chained(e: &Expr, parent: BinaryOp) -> String {
        match e {
            Expr::Binary { op, .. }
                if *op == parent && matches!(op, BinaryOp::And | BinaryOp::Or) =>
            {
                text(e)
            }
            _ => operand(e),
        }
    }
    match expr {
        Expr::Column(c) => c.name.clone(),
        Expr::Literal(l) => match &l.value {
            Value::Int(n) => n.to_string(),
            Value::BigInt(n) => n.to_string(),
            Value::Float(x) => x.to_string(),
            Value::Size(n) => n.to_string(),
            Value::Str(s) => format!("'{}'", s.replace('\'', "''")),
            Value::Word(w) => w.clone(),
        },
        Expr::Null(_) => "NULL".into(),
        Expr::Negate { expr, .. } => format!("-{}", operand(expr)),
        Expr::Not { expr, .. } => format!("NOT {}", operand(expr)),
        Expr::Binary {
            op, left, right, ..
        } => {
            format!(
                "{} {} {}",
                chained(left, *op),
                op.symbol(),
                chained(right, *op)
            )
        }
        Expr::IsNull { expr, negated, .. } => format!(
            "{} IS {}NULL",
            operand(expr),
            if *negated { "NOT " } else { "" }
        ),
        Expr::InList {
            expr,
            list,
            negated,
            ..
        } => format!(
            "{} {}IN ({})",
            operand(expr),
            if *negated { "NOT " } else { "" },
            list.iter().map(operand).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The first column of `expr` that holds vertices (declared `VertexKey`), if any: on a graph with
/// string keys those hold keys, which expressions cannot compute on yet.
pub fn vertex_column<'e>(expr: &'e Expr, columns: &[OutputColumn]) -> Option<&'e grammar::Ident> {
    match expr {
        Expr::Column(c) => columns
            .iter()
            .any(|o| o.name == c.name && o.ty() == ColumnType::VertexKey)
            .then_some(c),
        Expr::Literal(_) | Expr::Null(_) => None,
        Expr::Negate { expr, .. } | Expr::Not { expr, .. } | Expr::IsNull { expr, .. } => {
            vertex_column(expr, columns)
        }
        Expr::Binary { left, right, .. } => {
            vertex_column(left, columns).or_else(|| vertex_column(right, columns))
        }
        Expr::InList { expr, list, .. } => vertex_column(expr, columns)
            .or_else(|| list.iter().find_map(|e| vertex_column(e, columns))),
    }
}
