//! Arrow record batches as an edge source: the rows of a Parquet file as they are decoded, or a
//! data frame handed over in memory (a Python binding's pandas, polars or pyarrow edges).
//! Columns are chosen by name, defaulting to the first two (and third); ids and weights are
//! checked as the Parquet importer checks them, and `line` in errors is the 1-based row.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, Schema};

use super::edgelist::input_err;
use super::parquet::{ids, weights};
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
        let column = |i: usize| (batch.column(i).as_ref(), schema.field(i).name());
        let (s, s_name) = column(cols.src);
        let (d, d_name) = column(cols.dst);
        let sv = ids(s, label, row, s_name)?;
        let dv = ids(d, label, row, d_name)?;
        let wv = match cols.weight {
            Some(w) => {
                let (w, w_name) = column(w);
                Some(weights(w, label, row, w_name)?)
            }
            None => None,
        };
        for i in 0..sv.len() {
            let weight = wv.as_ref().map_or(0.0, |w| w[i]);
            sink.edge(sv[i], dv[i], weight, label, row + i as u64)?;
        }
        row += sv.len() as u64;
        sink.lines += sv.len() as u64;
    }
    Ok(())
}
