//! ORDER BY keys and YIELD items: a column, or an expression over the columns with the same
//! grammar, resolution and type checks as WHERE (`condition.rs`).
//!
//! - An ORDER BY key is a number: a column or arithmetic (`rank * degree DESC`). A key without a
//!   column (`ORDER BY 1`) is refused, since it would order nothing. A bare name that is a YIELD
//!   item's `AS` name orders by that item (`YIELD rank * 1000 AS score ORDER BY score`).
//! - A YIELD item is a column or an expression (a number or a condition), named by its `AS` name,
//!   else by the column's result name, else by the expression's text as EXPLAIN prints it
//!   (`rank * 1000`), as DuckDB and PostgreSQL's `?column?` do for unnamed expressions.
//!
//! On a graph with string keys the vertex columns hold keys once the run ends, so an expression
//! (not a bare column) over one is refused, as in WHERE.

use grammar::{Expr, Ident, OrderBy, YieldItem};
use storage::catalog::GraphMeta;

use crate::columns::OutputColumn;
use crate::condition::{self, Kind};
use crate::error::PlanError;
use crate::registry::ColumnType;

/// One key of ORDER BY, its columns named as in the result.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderKey {
    /// A column (`Expr::Column`) or an expression over columns.
    pub expr: Expr,
    pub descending: bool,
}

/// One column of the statement's result after YIELD.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    /// The name the column carries in the result.
    pub name: String,
    /// A column (`Expr::Column`, possibly renamed by AS) or an expression over columns.
    pub expr: Expr,
}

impl Projection {
    /// The result column this item passes through unchanged, if it is a bare column.
    pub fn source_column(&self) -> Option<&str> {
        match &self.expr {
            Expr::Column(c) => Some(&c.name),
            _ => None,
        }
    }
}

/// The YIELD items `items` checked against `columns`, with their result names.
pub fn plan_yield(
    items: &[YieldItem],
    columns: &[OutputColumn],
    graph: &GraphMeta,
) -> Result<Vec<Projection>, PlanError> {
    let mut out: Vec<Projection> = Vec::with_capacity(items.len());
    for item in items {
        let (expr, kind) = condition::check_in(&item.expr, columns, "YIELD")?;
        if kind == Kind::Null {
            return Err(PlanError::new(
                item.expr.pos(),
                "YIELD: `NULL` alone has no type; yield a column or an expression over one",
            ));
        }
        refuse_keys_in_expressions(&expr, columns, graph, "YIELD")?;
        let name = match (&item.alias, &expr) {
            (Some(alias), _) => alias.name.clone(),
            (None, Expr::Column(c)) => c.name.clone(),
            (None, e) => condition::text(e),
        };
        let at = item.alias.as_ref().map_or(item.expr.pos(), |a| a.pos);
        if out.iter().any(|p| p.name.eq_ignore_ascii_case(&name)) {
            return Err(PlanError::new(
                at,
                format!(
                    "YIELD: two columns would be named `{name}` (names ignore case); give one another name with AS"
                ),
            ));
        }
        out.push(Projection { name, expr });
    }
    Ok(out)
}

/// The ORDER BY keys `keys` checked against `columns` and the YIELD items `yielded`.
pub fn plan_order_by(
    keys: &[OrderBy],
    columns: &[OutputColumn],
    yielded: Option<&[Projection]>,
    graph: &GraphMeta,
) -> Result<Vec<OrderKey>, PlanError> {
    let mut out: Vec<OrderKey> = Vec::with_capacity(keys.len());
    for key in keys {
        let named = match (&key.key, yielded) {
            (Expr::Column(c), Some(items)) => named_item(items, c, columns),
            _ => None,
        };
        let expr = checked_key(named.map_or(&key.key, |p| &p.expr), columns)?;
        refuse_keys_in_expressions(&expr, columns, graph, "ORDER BY")?;
        let shown = condition::text(&expr);
        if out.iter().any(|k| condition::text(&k.expr) == shown) {
            return Err(PlanError::new(
                key.key.pos(),
                format!("ORDER BY: `{shown}` is given twice"),
            ));
        }
        out.push(OrderKey {
            expr,
            descending: key.descending,
        });
    }
    Ok(out)
}

/// The YIELD item a bare ORDER BY name stands for: one named so by AS that is not also a
/// column of the result (a column wins, as it does in WHERE).
fn named_item<'p>(
    items: &'p [Projection],
    name: &Ident,
    columns: &[OutputColumn],
) -> Option<&'p Projection> {
    let is_column = columns
        .iter()
        .any(|c| c.name.eq_ignore_ascii_case(&name.name));
    if is_column {
        return None;
    }
    items
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(&name.name) && p.source_column() != Some(&p.name))
}

/// One ORDER BY key checked: a number that reads a column.
fn checked_key(key: &Expr, columns: &[OutputColumn]) -> Result<Expr, PlanError> {
    let (expr, kind) = condition::check_in(key, columns, "ORDER BY")?;
    let shown = condition::text(key);
    match kind {
        Kind::Number if condition::reads_columns(&expr) => Ok(expr),
        Kind::Number | Kind::Null => Err(PlanError::new(
            key.pos(),
            format!(
                "ORDER BY `{shown}` is the same on every row, so it orders nothing; order by a column or an expression over columns (ORDER BY rank DESC)"
            ),
        )),
        Kind::Condition => Err(PlanError::new(
            key.pos(),
            format!(
                "ORDER BY needs a number, but `{shown}` is a condition (true or false); filter with WHERE instead"
            ),
        )),
    }
}

/// Refuses an expression (not a bare column) over a vertex column on a graph with string keys.
fn refuse_keys_in_expressions(
    expr: &Expr,
    columns: &[OutputColumn],
    graph: &GraphMeta,
    clause: &str,
) -> Result<(), PlanError> {
    if !graph.string_keys() || matches!(expr, Expr::Column(_)) {
        return Ok(());
    }
    match condition::vertex_column(expr, columns) {
        Some(c) => Err(PlanError::new(
            c.pos,
            format!(
                "graph `{}` has string keys, and {clause} cannot compute on the vertex column `{}`; use it alone, or write the result with INTO and compute there",
                graph.name, c.name
            ),
        )),
        None => Ok(()),
    }
}

/// Whether the result column `name` (after YIELD) holds vertices: a bare vertex column, possibly
/// renamed.
pub fn holds_vertices(
    name: &str,
    columns: &[OutputColumn],
    yielded: Option<&[Projection]>,
) -> bool {
    let source = match yielded {
        None => Some(name),
        Some(items) => items
            .iter()
            .find(|p| p.name == name)
            .and_then(Projection::source_column),
    };
    source.is_some_and(|s| {
        columns
            .iter()
            .any(|c| c.name == s && c.ty() == ColumnType::VertexKey)
    })
}
