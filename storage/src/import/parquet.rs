//! Parquet edge files via the arrow reader: integer `src`/`dst` columns (any signed or
//! unsigned width; a negative or null id is an error naming the row) and an optional float
//! weight column. Columns are chosen by name, defaulting to the first two (and third).

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::Array;
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::edgelist::{check_weight, input_err};
use super::input::open_input;
use super::EdgeSink;
use crate::error::{Result, StoreError};

/// Rows per decoded batch.
const BATCH: usize = 64 * 1024;

fn ids(col: &dyn Array, path: &Path, first_row: u64, what: &str) -> Result<Vec<u64>> {
    let row_err = |i: usize, m: String| input_err(path, first_row + i as u64, m);
    let null_check = |i: usize| -> Result<()> {
        if col.is_null(i) {
            Err(row_err(
                i,
                format!("row {}: `{what}` is null", first_row + i as u64),
            ))
        } else {
            Ok(())
        }
    };
    macro_rules! signed {
        ($t:ty) => {{
            let a = col.as_primitive::<$t>();
            let mut out = Vec::with_capacity(a.len());
            for i in 0..a.len() {
                null_check(i)?;
                let v = a.value(i);
                if v < 0 {
                    return Err(row_err(
                        i,
                        format!(
                            "row {}: negative vertex id {v} in `{what}`",
                            first_row + i as u64
                        ),
                    ));
                }
                out.push(v as u64);
            }
            Ok(out)
        }};
    }
    macro_rules! unsigned {
        ($t:ty) => {{
            let a = col.as_primitive::<$t>();
            let mut out = Vec::with_capacity(a.len());
            for i in 0..a.len() {
                null_check(i)?;
                out.push(a.value(i) as u64);
            }
            Ok(out)
        }};
    }
    match col.data_type() {
        DataType::Int8 => signed!(Int8Type),
        DataType::Int16 => signed!(Int16Type),
        DataType::Int32 => signed!(Int32Type),
        DataType::Int64 => signed!(Int64Type),
        DataType::UInt8 => unsigned!(UInt8Type),
        DataType::UInt16 => unsigned!(UInt16Type),
        DataType::UInt32 => unsigned!(UInt32Type),
        DataType::UInt64 => unsigned!(UInt64Type),
        t => Err(input_err(
            path,
            0,
            format!("column `{what}` has type {t}, vertex ids must be integers"),
        )),
    }
}

fn weights(col: &dyn Array, path: &Path, first_row: u64, what: &str) -> Result<Vec<f64>> {
    let mut out = Vec::with_capacity(col.len());
    let vals: Box<dyn Fn(usize) -> f64 + '_> = match col.data_type() {
        DataType::Float64 => {
            let a = col.as_primitive::<Float64Type>();
            Box::new(move |i| a.value(i))
        }
        DataType::Float32 => {
            let a = col.as_primitive::<Float32Type>();
            Box::new(move |i| a.value(i) as f64)
        }
        t => {
            return Err(input_err(
                path,
                0,
                format!("column `{what}` has type {t}, weights must be Float32 or Float64"),
            ))
        }
    };
    for i in 0..col.len() {
        let row = first_row + i as u64;
        if col.is_null(i) {
            return Err(input_err(path, row, format!("row {row}: weight is null")));
        }
        let w = vals(i);
        out.push(check_weight(w, &|| format!("{w} (row {row})"), path, row)?);
    }
    Ok(out)
}

/// Reads a Parquet edge file into the sink. `line` in errors is the 1-based row.
pub(crate) fn read_parquet(
    path: &Path,
    src: Option<&str>,
    dst: Option<&str>,
    weight: Option<&str>,
    weighted: bool,
    sink: &mut EdgeSink<'_>,
) -> Result<()> {
    let input = open_input(path, sink.cancel)?;
    if !input.is_regular() {
        return Err(input_err(
            path,
            0,
            "Parquet needs a regular file (its footer is read first); copy the stream to a file",
        ));
    }
    let file = input.into_file();
    let file_len = file.metadata().map_err(|e| StoreError::io(path, e))?.len();
    let pq = |e: parquet::errors::ParquetError| input_err(path, 0, format!("parquet: {e}"));
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(pq)?;
    let schema = builder.schema().clone();
    let col = |name: Option<&str>, default: usize, what: &str| -> Result<usize> {
        match name {
            Some(n) => schema.index_of(n).map_err(|_| {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                input_err(
                    path,
                    0,
                    format!("no column `{n}` (columns: {})", names.join(", ")),
                )
            }),
            None if default < schema.fields().len() => Ok(default),
            None => Err(input_err(
                path,
                0,
                format!(
                    "the file has {} columns, none for `{what}`",
                    schema.fields().len()
                ),
            )),
        }
    };
    let s = col(src, 0, "src")?;
    let d = col(dst, 1, "dst")?;
    let w = if weighted {
        Some(col(weight, 2, "weight")?)
    } else {
        None
    };
    let reader = builder.with_batch_size(BATCH).build().map_err(pq)?;
    let mut row = 1u64;
    for batch in reader {
        let batch = batch.map_err(|e| input_err(path, row, format!("parquet: {e}")))?;
        let sv = ids(batch.column(s).as_ref(), path, row, schema.field(s).name())?;
        let dv = ids(batch.column(d).as_ref(), path, row, schema.field(d).name())?;
        let wv = match w {
            Some(w) => Some(weights(
                batch.column(w).as_ref(),
                path,
                row,
                schema.field(w).name(),
            )?),
            None => None,
        };
        for i in 0..sv.len() {
            let weight = wv.as_ref().map_or(0.0, |w| w[i]);
            sink.edge(sv[i], dv[i], weight, path, row + i as u64)?;
        }
        row += sv.len() as u64;
        sink.lines += sv.len() as u64;
    }
    sink.bytes_read += file_len;
    Ok(())
}
