//! The columns of a RUN's result: the algorithms' declared columns joined by vertex, and how a
//! name written in WHERE, ORDER BY or YIELD finds one of them.
//!
//! With one algorithm the columns are its own. With several, `vertex` comes once, first, and each
//! algorithm's other columns follow in the order the algorithms are written. A column name two
//! algorithms share is qualified by its algorithm, `wcc.component`, or by the call's `AS` name;
//! any column may be written qualified, a clashing one must be.

use grammar::Ident;

use crate::error::PlanError;
use crate::registry::{ColumnSpec, ColumnType};
use crate::suggest::did_you_mean;

/// One column of the joined result.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputColumn {
    /// The name the result carries: `rank`, or `wcc.component` after a clash.
    pub name: String,
    /// The algorithm call it comes from (index into `RunPlan::calls`); `None` for the shared
    /// `vertex` column of a joined result.
    pub call: Option<usize>,
    /// The call's prefix: its `AS` name, else its algorithm's name.
    pub prefix: String,
    pub spec: ColumnSpec,
}

impl OutputColumn {
    pub fn ty(&self) -> ColumnType {
        self.spec.ty
    }
}

/// The joined columns of calls given as `(prefix, declared columns)`, or an error when two calls
/// with the same prefix have a column in common (`pagerank, pagerank` without AS).
pub fn joined(
    calls: &[(String, &'static [ColumnSpec], &Ident)],
) -> Result<Vec<OutputColumn>, PlanError> {
    if let [(prefix, columns, _)] = calls {
        return Ok(columns
            .iter()
            .map(|c| OutputColumn {
                name: c.name.to_string(),
                call: Some(0),
                prefix: prefix.clone(),
                spec: *c,
            })
            .collect());
    }
    let mut out = vec![OutputColumn {
        name: "vertex".into(),
        call: None,
        prefix: String::new(),
        spec: ColumnSpec::VERTEX,
    }];
    for (i, (prefix, columns, at)) in calls.iter().enumerate() {
        if let Some((earlier, _, _)) = calls[..i]
            .iter()
            .find(|(p, _, _)| p.eq_ignore_ascii_case(prefix))
        {
            return Err(PlanError::new(
                at.pos,
                format!(
                    "`{earlier}` appears twice in this RUN; name one with AS so their columns can be told apart (RUN {earlier} ITER 5 AS short, {earlier} ...)"
                ),
            ));
        }
        for c in columns.iter().filter(|c| c.name != "vertex") {
            let clash = calls
                .iter()
                .enumerate()
                .any(|(j, (_, other, _))| j != i && other.iter().any(|o| o.name == c.name));
            out.push(OutputColumn {
                name: if clash {
                    format!("{prefix}.{}", c.name)
                } else {
                    c.name.to_string()
                },
                call: Some(i),
                prefix: prefix.clone(),
                spec: *c,
            });
        }
    }
    Ok(out)
}

/// The column `name` stands for, matched case-insensitively: its result name (`rank`,
/// `wcc.component`), or `prefix.column` for any column. An unknown name gets the nearest
/// suggestion and the list of columns; a name two algorithms share is ambiguous.
pub fn resolve<'a>(
    columns: &'a [OutputColumn],
    name: &Ident,
    clause: &str,
) -> Result<&'a OutputColumn, PlanError> {
    let wanted = name.name.as_str();
    if let Some(c) = columns.iter().find(|c| c.name.eq_ignore_ascii_case(wanted)) {
        return Ok(c);
    }
    if let Some((prefix, column)) = wanted.split_once('.') {
        if let Some(c) = columns.iter().find(|c| {
            c.spec.name.eq_ignore_ascii_case(column)
                && (c.prefix.eq_ignore_ascii_case(prefix) || c.call.is_none())
        }) {
            return Ok(c);
        }
    }
    let shared: Vec<&str> = columns
        .iter()
        .filter(|c| c.spec.name.eq_ignore_ascii_case(wanted))
        .map(|c| c.name.as_str())
        .collect();
    if shared.len() > 1 {
        return Err(PlanError::new(
            name.pos,
            format!(
                "{clause}: column `{wanted}` is ambiguous: write {}",
                shared.join(" or ")
            ),
        ));
    }
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let mut prefixes: Vec<&str> = columns
        .iter()
        .filter(|c| c.call.is_some())
        .map(|c| c.prefix.as_str())
        .collect();
    prefixes.dedup();
    let whose = match &prefixes[..] {
        [one] => format!("{one} has"),
        many => format!("the result of {} has", many.join(", ")),
    };
    Err(PlanError::new(
        name.pos,
        format!(
            "{whose} no column `{wanted}`{}; its columns are {}",
            did_you_mean(wanted, names.iter().copied()),
            names.join(", ")
        ),
    ))
}
