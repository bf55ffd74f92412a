//! Arrow record batches as an edge source: the rows of a Parquet file as they are decoded, or a
//! data frame handed over in memory (a Python binding's pandas, polars or pyarrow edges).
//! Columns are chosen by name, defaulting to the first two (and third); the key columns' types
//! decide between integer and string keys before any batch is read, so a restart with string
//! keys never needs the batches again. `line` in errors is the 1-based row.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, Schema};

use super::edgelist::{check_weight, input_err};
use super::parquet::{holds_strings, key_at, key_column, weights};
use super::EdgeSink;
use crate::error::Result;

/// Which columns of the schema hold the source, the destination and (when weighted) the weight.
struct EdgeColumns {
    src: usize,
    dst: usize,
    weight: Option<usize>,
}

fn choose_columns(
    schema: &Schema,
    label: &Path,
    src: Option<&str>,
    dst: Option<&str>,
    weight: Option<&str>,
    weighted: bool,
) -> Result<EdgeColumns> {
    let col = |name: Option<&str>, default: usize, what: &str| -> Result<usize> {
        match name {
            Some(n) => schema.index_of(n).map_err(|_| {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                input_err(
                    label,
                    0,
                    format!("no column `{n}` (columns: {})", names.join(", ")),
                )
            }),
            None if default < schema.fields().len() => Ok(default),
            None => Err(input_err(
                label,
                0,
                format!(
                    "the input has {} columns, none for `{what}`",
                    schema.fields().len()
                ),
            )),
        }
    };
    Ok(EdgeColumns {
        src: col(src, 0, "src")?,
        dst: col(dst, 1, "dst")?,
        weight: if weighted {
            Some(col(weight, 2, "weight")?)
        } else {
            None
        },
    })
}

/// Checks that the key columns can hold keys, and asks for string keys (a restart of the read,
/// before any batch is taken) when either holds strings.
fn check_key_types(
    schema: &Schema,
    cols: &EdgeColumns,
    label: &Path,
    sink: &mut EdgeSink<'_>,
) -> Result<()> {
    let mut strings = false;
    for c in [cols.src, cols.dst] {
        let f = schema.field(c);
        match holds_strings(f.data_type()) {
            None => {
                return Err(input_err(
                    label,
                    0,
                    format!(
                        "column `{}` has type {}; vertex keys must be integers or strings",
                        f.name(),
                        f.data_type()
                    ),
                ))
            }
            Some(true) if sink.integer_keys_required() => {
                return Err(input_err(
                    label,
                    0,
                    format!(
                        "column `{}` holds strings ({}), but KEYS integer was given; drop it \
                         to import the keys as strings",
                        f.name(),
                        f.data_type()
                    ),
                ))
            }
            Some(t) => strings |= t,
        }
    }
    if strings && !sink.string_keys() {
        return Err(sink.restart_with_strings());
    }
    Ok(())
}

/// Feeds the edges of `batches` (all of `schema`) into the sink; `label` names the input in
/// errors (a file path, or a description of an in-memory frame).
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_batches(
    schema: &Schema,
    batches: &mut dyn Iterator<Item = std::result::Result<RecordBatch, ArrowError>>,
    label: &Path,
    src: Option<&str>,
    dst: Option<&str>,
    weight: Option<&str>,
    weighted: bool,
    sink: &mut EdgeSink<'_>,
) -> Result<()> {
    let cols = choose_columns(schema, label, src, dst, weight, weighted)?;
    check_key_types(schema, &cols, label, sink)?;
    let (s_name, d_name) = (schema.field(cols.src).name(), schema.field(cols.dst).name());
    let mut row = 1u64;
    for batch in batches {
        let batch = batch.map_err(|e| input_err(label, row, e.to_string()))?;
        if batch.schema().fields() != schema.fields() {
            return Err(input_err(
                label,
                row,
                "a record batch's columns differ from the input's schema",
            ));
        }
        let sv = key_column(batch.column(cols.src).as_ref());
        let dv = key_column(batch.column(cols.dst).as_ref());
        let wv = match cols.weight {
            Some(w) => Some(weights(
                batch.column(w).as_ref(),
                label,
                schema.field(w).name(),
            )?),
            None => None,
        };
        for i in 0..batch.num_rows() {
            let r = row + i as u64;
            sink.lines += 1;
            let outcome = (|| {
                let weight = match &wv {
                    None => 0.0,
                    Some(ws) => match ws[i] {
                        None => {
                            return Err(input_err(label, r, format!("row {r}: weight is null")))
                        }
                        Some(x) => check_weight(x, &|| format!("{x} (row {r})"), label, r)?,
                    },
                };
                let a = key_at(&sv, i, r, s_name, label, sink)?;
                let b = key_at(&dv, i, r, d_name, label, sink)?;
                sink.edge(a, b, weight, label, r)
            })();
            sink.line_outcome(outcome)?;
        }
        row += batch.num_rows() as u64;
    }
    Ok(())
}
