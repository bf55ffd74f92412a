//! Verifiers beside the kernels (GAPBS style), implementing the LDBC Graphalytics validation
//! rules over `id → value` maps, plus a parser for Graphalytics reference output files.
//!
//! Rules (from the Graphalytics validator, see the Graphalytics README):
//! * BFS, CDLP — exact match of 64-bit integers.
//! * WCC — equivalence: the two labellings induce the same partition.
//! * PR, LCC, SSSP — epsilon: if either value is infinite both must be +∞; otherwise
//!   `|expected − actual| ≤ 1e-4 · expected` (so an expected 0 needs an exact 0).
//!
//! Before values are compared, the number of vertices and the set of ids must be equal.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt64Type};
use arrow_array::Array;
use arrow_schema::DataType;

use crate::result::ResultTable;

/// Relative tolerance of the epsilon rule.
pub const EPSILON: f64 = 1e-4;

/// A value as the validator compares it: integers exactly, floats by epsilon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
}

impl Value {
    fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Float(f) => f,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
        }
    }
}

/// The Graphalytics kernels a result can be validated as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    Bfs,
    Cdlp,
    Wcc,
    PageRank,
    Lcc,
    Sssp,
}

/// How a kernel's values are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Exact,
    Equivalence,
    Epsilon,
}

impl Kernel {
    /// The validation rule the Graphalytics validator applies to this kernel.
    pub fn rule(self) -> Rule {
        match self {
            Kernel::Bfs | Kernel::Cdlp => Rule::Exact,
            Kernel::Wcc => Rule::Equivalence,
            Kernel::PageRank | Kernel::Lcc | Kernel::Sssp => Rule::Epsilon,
        }
    }

    /// The result column holding this kernel's value.
    pub fn value_column(self) -> &'static str {
        match self {
            Kernel::Bfs => "depth",
            Kernel::Cdlp => "label",
            Kernel::Wcc => "component",
            Kernel::PageRank => "rank",
            Kernel::Lcc => "coefficient",
            Kernel::Sssp => "distance",
        }
    }

    /// The suffix of the reference file (`<graph>-<SUFFIX>`).
    pub fn suffix(self) -> &'static str {
        match self {
            Kernel::Bfs => "BFS",
            Kernel::Cdlp => "CDLP",
            Kernel::Wcc => "WCC",
            Kernel::PageRank => "PR",
            Kernel::Lcc => "LCC",
            Kernel::Sssp => "SSSP",
        }
    }
}

/// Why a validation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VerifyError {
    /// A reference line that is not `id value`.
    #[error("line {line}: {message}")]
    Parse { line: usize, message: String },
    /// An id appears twice in one output.
    #[error("vertex {0} appears more than once")]
    Duplicate(u64),
    #[error("expected {expected} vertices, got {actual}")]
    Count { expected: usize, actual: usize },
    #[error("the vertex ids differ: e.g. {missing:?} missing, {extra:?} unexpected")]
    Ids { missing: Vec<u64>, extra: Vec<u64> },
    /// Some vertices failed the rule; `examples` shows the first few as `id: expected vs actual`.
    #[error("{failed} of {total} vertices fail the {rule:?} rule, e.g. {examples:?}")]
    Values {
        rule: Rule,
        failed: usize,
        total: usize,
        examples: Vec<String>,
    },
    /// The result has no such column, or a column of an unexpected type.
    #[error("result column: {0}")]
    Column(String),
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

/// Parses Graphalytics output text: one `id value` per line (blank lines skipped). Integers
/// stay integers; anything else must parse as f64 (`Infinity`, `+Infinity`, `infinity`, and
/// scientific notation included).
pub fn parse_output(text: &str) -> Result<BTreeMap<u64, Value>, VerifyError> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let err = |message: String| VerifyError::Parse {
            line: i + 1,
            message,
        };
        let mut parts = line.split_whitespace();
        let (Some(id), Some(value), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(err(format!("expected `id value`, found `{line}`")));
        };
        let id: u64 = id
            .parse()
            .map_err(|_| err(format!("`{id}` is not a vertex id")))?;
        let value = match value.parse::<i128>() {
            Ok(v) => Value::Int(v),
            Err(_) => Value::Float(
                value
                    .parse::<f64>()
                    .map_err(|_| err(format!("`{value}` is not a number")))?,
            ),
        };
        if out.insert(id, value).is_some() {
            return Err(VerifyError::Duplicate(id));
        }
    }
    Ok(out)
}

/// Reads a reference output: a file, or a directory whose files together hold the output.
pub fn read_reference(path: &Path) -> Result<BTreeMap<u64, Value>, VerifyError> {
    let io = |e: std::io::Error| VerifyError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    if path.is_dir() {
        let mut files: Vec<_> = std::fs::read_dir(path)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        let mut all = BTreeMap::new();
        for f in files {
            for (id, v) in read_reference(&f)? {
                if all.insert(id, v).is_some() {
                    return Err(VerifyError::Duplicate(id));
                }
            }
        }
        Ok(all)
    } else {
        parse_output(&std::fs::read_to_string(path).map_err(io)?)
    }
}

/// Checks that both outputs have the same vertices.
fn same_ids(
    expected: &BTreeMap<u64, Value>,
    actual: &BTreeMap<u64, Value>,
) -> Result<(), VerifyError> {
    if expected.len() != actual.len() {
        return Err(VerifyError::Count {
            expected: expected.len(),
            actual: actual.len(),
        });
    }
    let missing: Vec<u64> = expected
        .keys()
        .filter(|k| !actual.contains_key(k))
        .take(5)
        .copied()
        .collect();
    let extra: Vec<u64> = actual
        .keys()
        .filter(|k| !expected.contains_key(k))
        .take(5)
        .copied()
        .collect();
    if missing.is_empty() && extra.is_empty() {
        Ok(())
    } else {
        Err(VerifyError::Ids { missing, extra })
    }
}

/// Whether one value passes the epsilon rule.
pub fn epsilon_match(expected: f64, actual: f64) -> bool {
    if expected.is_infinite() || actual.is_infinite() {
        return expected == actual;
    }
    (expected - actual).abs() <= EPSILON * expected
}

/// Validates `actual` against `expected` with `rule`.
pub fn validate(
    rule: Rule,
    expected: &BTreeMap<u64, Value>,
    actual: &BTreeMap<u64, Value>,
) -> Result<(), VerifyError> {
    same_ids(expected, actual)?;
    let failed: Vec<u64> = match rule {
        Rule::Exact => expected
            .iter()
            .filter(|(id, e)| !exact_match(**e, actual[id]))
            .map(|(id, _)| *id)
            .collect(),
        Rule::Epsilon => expected
            .iter()
            .filter(|(id, e)| !epsilon_match(e.as_f64(), actual[id].as_f64()))
            .map(|(id, _)| *id)
            .collect(),
        Rule::Equivalence => equivalence_failures(expected, actual),
    };
    if failed.is_empty() {
        return Ok(());
    }
    Err(VerifyError::Values {
        rule,
        failed: failed.len(),
        total: expected.len(),
        examples: failed
            .iter()
            .take(5)
            .map(|id| format!("{id}: {} vs {}", expected[id], actual[id]))
            .collect(),
    })
}

fn exact_match(e: Value, a: Value) -> bool {
    match (e, a) {
        (Value::Int(x), Value::Int(y)) => x == y,
        _ => false,
    }
}

/// Vertices whose expected class and actual class disagree: a vertex fails when another vertex
/// shares its expected label but not its actual one, or the reverse. Equivalent to checking
/// that the labels map one-to-one through each vertex's (expected, actual) pair.
fn equivalence_failures(
    expected: &BTreeMap<u64, Value>,
    actual: &BTreeMap<u64, Value>,
) -> Vec<u64> {
    let key = |v: Value| match v {
        Value::Int(i) => format!("i{i}"),
        Value::Float(f) => format!("f{}", f.to_bits()),
    };
    let mut e_to_a: HashMap<String, Vec<String>> = HashMap::new();
    let mut a_to_e: HashMap<String, Vec<String>> = HashMap::new();
    for (id, e) in expected {
        let (ek, ak) = (key(*e), key(actual[id]));
        let ea = e_to_a.entry(ek.clone()).or_default();
        if !ea.contains(&ak) {
            ea.push(ak.clone());
        }
        let ae = a_to_e.entry(ak).or_default();
        if !ae.contains(&ek) {
            ae.push(ek);
        }
    }
    expected
        .iter()
        .filter(|(id, e)| e_to_a[&key(**e)].len() > 1 || a_to_e[&key(actual[*id])].len() > 1)
        .map(|(id, _)| *id)
        .collect()
}

/// Turns a result into `id → value` using the `vertex` column and `column`. Nulls take the
/// Graphalytics conventions: an unreachable depth is i64::MAX, an unreachable distance +∞.
pub fn table_values(
    table: &ResultTable,
    column: &str,
) -> Result<BTreeMap<u64, Value>, VerifyError> {
    let mut out = BTreeMap::new();
    for batch in &table.batches {
        let ids = batch
            .column_by_name("vertex")
            .and_then(|c| c.as_primitive_opt::<UInt64Type>())
            .ok_or_else(|| VerifyError::Column("no UInt64 `vertex` column".into()))?;
        let col = batch
            .column_by_name(column)
            .ok_or_else(|| VerifyError::Column(format!("no `{column}` column")))?;
        for row in 0..batch.num_rows() {
            let value = match col.data_type() {
                DataType::Int64 => Value::Int(if col.is_null(row) {
                    i64::MAX as i128
                } else {
                    col.as_primitive::<Int64Type>().value(row) as i128
                }),
                DataType::UInt64 => Value::Int(if col.is_null(row) {
                    i64::MAX as i128
                } else {
                    col.as_primitive::<UInt64Type>().value(row) as i128
                }),
                DataType::Float64 => Value::Float(if col.is_null(row) {
                    f64::INFINITY
                } else {
                    col.as_primitive::<Float64Type>().value(row)
                }),
                other => return Err(VerifyError::Column(format!("`{column}` has type {other}"))),
            };
            if out.insert(ids.value(row), value).is_some() {
                return Err(VerifyError::Duplicate(ids.value(row)));
            }
        }
    }
    Ok(out)
}

/// Validates a result of `kernel` against reference output text.
pub fn verify_table(
    kernel: Kernel,
    table: &ResultTable,
    reference: &str,
) -> Result<(), VerifyError> {
    let expected = parse_output(reference)?;
    let actual = table_values(table, kernel.value_column())?;
    validate(kernel.rule(), &expected, &actual)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_graphalytics_notations() {
        let m = parse_output(
            "1 3\n2 1.477629166666667e-01\n3 Infinity\n4 +Infinity\n5 infinity\n\n6 0.15",
        )
        .unwrap();
        assert_eq!(m[&1], Value::Int(3));
        assert!(matches!(m[&2], Value::Float(x) if (x - 0.1477629166666667).abs() < 1e-15));
        assert!(matches!(m[&3], Value::Float(x) if x == f64::INFINITY));
        assert!(matches!(m[&5], Value::Float(x) if x == f64::INFINITY));
        assert!(parse_output("1 2 3").is_err());
        assert!(parse_output("x 2").is_err());
        assert!(parse_output("1 2\n1 3").is_err());
    }

    #[test]
    fn epsilon_is_relative_and_inclusive() {
        assert!(epsilon_match(0.0, 0.0));
        assert!(!epsilon_match(0.0, 1e-300));
        assert!(epsilon_match(1.0, 1.0001));
        assert!(!epsilon_match(1.0, 1.00011));
        assert!(epsilon_match(f64::INFINITY, f64::INFINITY));
        assert!(!epsilon_match(f64::INFINITY, f64::MAX));
    }

    #[test]
    fn id_sets_must_match() {
        let e = parse_output("1 1\n2 2").unwrap();
        assert!(matches!(
            validate(Rule::Exact, &e, &parse_output("1 1").unwrap()),
            Err(VerifyError::Count { .. })
        ));
        assert!(matches!(
            validate(Rule::Exact, &e, &parse_output("1 1\n3 2").unwrap()),
            Err(VerifyError::Ids { .. })
        ));
    }
}
