//! LDBC Graphalytics output: one `id value` line per vertex, so the official validator can check
//! a run. Uses the first two columns. An unreachable vertex (a null value) is written the way the
//! reference outputs write it: `9223372036854775807` for an integer column (BFS depth) and
//! `Infinity` for a float column (SSSP distance). Floats use scientific notation with the
//! shortest mantissa that reads back to the same f64 (`1.477629166666667e-01`).

use std::io::Write;
use std::path::PathBuf;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use grammar::ast::OutputFormat;

use super::{FormatName, OutputFile, SinkError};

/// What Graphalytics writes for an unreachable vertex in an integer-valued output.
pub const UNREACHABLE_INT: i64 = i64::MAX;

pub(crate) struct GraphalyticsSink {
    file: OutputFile,
    path: PathBuf,
    line: String,
}

impl GraphalyticsSink {
    pub(crate) fn new(file: OutputFile, schema: SchemaRef) -> Result<GraphalyticsSink, SinkError> {
        let path = file.dest().to_path_buf();
        let unsupported = |reason: String| SinkError::Unsupported {
            path: path.clone(),
            format: FormatName(OutputFormat::Graphalytics),
            reason,
        };
        let fields = schema.fields();
        if fields.len() < 2 {
            return Err(unsupported(format!(
                "it needs an id and a value column, the result has {} column(s)",
                fields.len()
            )));
        }
        if !is_integer(fields[0].data_type()) && fields[0].data_type() != &DataType::Utf8 {
            return Err(unsupported(format!(
                "the first column `{}` must hold vertex ids or keys, not {}",
                fields[0].name(),
                fields[0].data_type()
            )));
        }
        let vt = fields[1].data_type();
        if !is_integer(vt) && !matches!(vt, DataType::Float32 | DataType::Float64 | DataType::Utf8)
        {
            return Err(unsupported(format!(
                "the value column `{}` must be an integer, float or vertex key, not {vt}",
                fields[1].name()
            )));
        }
        Ok(GraphalyticsSink {
            file,
            path,
            line: String::with_capacity(64),
        })
    }

    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        let (ids, values) = match (batch.columns().first(), batch.columns().get(1)) {
            (Some(a), Some(b)) => (a.as_ref(), b.as_ref()),
            _ => return Err(self.unsupported("a batch has fewer than two columns".into())),
        };
        for row in 0..batch.num_rows() {
            self.line.clear();
            match integer_text(ids, row) {
                Some(Ok(id)) => self.line.push_str(&id),
                Some(Err(())) => {
                    return Err(self.unsupported(format!(
                        "the id column `{}` changed type to {}",
                        batch.schema().field(0).name(),
                        ids.data_type()
                    )))
                }
                None => {
                    return Err(self.unsupported(format!("row {} has no vertex id (null)", row + 1)))
                }
            }
            self.line.push(' ');
            if let Err(reason) = push_value(&mut self.line, values, row) {
                return Err(self.unsupported(reason));
            }
            if self.line.trim_end().contains(['\n', '\r'])
                || self.line.split_whitespace().count() != 2
            {
                return Err(self.unsupported(format!(
                    "row {}: a vertex key with whitespace cannot be written as `id value` text; \
                     use FORMAT csv or parquet",
                    row + 1
                )));
            }
            self.line.push('\n');
            self.file
                .write_all(self.line.as_bytes())
                .map_err(|source| SinkError::Io {
                    path: self.path.clone(),
                    source,
                })?;
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> Result<u64, SinkError> {
        self.file.commit()
    }

    fn unsupported(&self, reason: String) -> SinkError {
        SinkError::Unsupported {
            path: self.path.clone(),
            format: FormatName(OutputFormat::Graphalytics),
            reason,
        }
    }
}

fn is_integer(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
    )
}

/// The decimal text of an integer cell, or a vertex key: `None` for null, `Err` for a column of
/// another type.
fn integer_text(a: &dyn Array, row: usize) -> Option<Result<String, ()>> {
    if a.is_null(row) {
        return None;
    }
    let s = match a.data_type() {
        DataType::Int8 => a.as_primitive::<Int8Type>().value(row).to_string(),
        DataType::Int16 => a.as_primitive::<Int16Type>().value(row).to_string(),
        DataType::Int32 => a.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => a.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::UInt8 => a.as_primitive::<UInt8Type>().value(row).to_string(),
        DataType::UInt16 => a.as_primitive::<UInt16Type>().value(row).to_string(),
        DataType::UInt32 => a.as_primitive::<UInt32Type>().value(row).to_string(),
        DataType::UInt64 => a.as_primitive::<UInt64Type>().value(row).to_string(),
        // A string-keyed graph's vertex keys.
        DataType::Utf8 => a.as_string::<i32>().value(row).to_string(),
        _ => return Some(Err(())),
    };
    Some(Ok(s))
}

/// Appends the value of `row`, nulls as the Graphalytics "unreachable" markers.
fn push_value(out: &mut String, a: &dyn Array, row: usize) -> Result<(), String> {
    match a.data_type() {
        DataType::Float64 | DataType::Float32 => {
            if a.is_null(row) {
                out.push_str("Infinity");
            } else if let DataType::Float64 = a.data_type() {
                push_float(out, a.as_primitive::<Float64Type>().value(row));
            } else {
                push_float(out, f64::from(a.as_primitive::<Float32Type>().value(row)));
            }
            Ok(())
        }
        t => match integer_text(a, row) {
            Some(Ok(s)) => {
                out.push_str(&s);
                Ok(())
            }
            None => {
                out.push_str(&UNREACHABLE_INT.to_string());
                Ok(())
            }
            Some(Err(())) => Err(format!("the value column changed type to {t}")),
        },
    }
}

/// Appends `x` in Graphalytics' recommended scientific notation, `d.ddde±XX`, with the
/// shortest mantissa that round-trips (Rust's `{:e}`), and the exponent padded to two digits.
pub fn push_float(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    let s = format!("{x:e}");
    let (mantissa, exp) = match s.split_once('e') {
        Some(parts) => parts,
        None => (s.as_str(), "0"),
    };
    out.push_str(mantissa);
    out.push('e');
    let (sign, digits) = match exp.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exp),
    };
    out.push(sign);
    if digits.len() < 2 {
        out.push('0');
    }
    out.push_str(digits);
}

#[cfg(test)]
mod tests {
    use super::push_float;

    fn fmt(x: f64) -> String {
        let mut s = String::new();
        push_float(&mut s, x);
        s
    }

    #[test]
    fn floats_round_trip_in_scientific_notation() {
        assert_eq!(fmt(0.1477629166666667), "1.477629166666667e-01");
        assert_eq!(fmt(0.0), "0e+00");
        assert_eq!(fmt(1.0), "1e+00");
        assert_eq!(fmt(12345.5), "1.23455e+04");
        assert_eq!(fmt(1e-300), "1e-300");
        assert_eq!(fmt(f64::INFINITY), "Infinity");
        for x in [
            0.01230514588446495,
            1.0 / 3.0,
            f64::MIN_POSITIVE,
            f64::MAX,
            -2.5e-7,
            5e-324,
        ] {
            assert_eq!(fmt(x).parse::<f64>().unwrap(), x, "{x}");
        }
    }
}
