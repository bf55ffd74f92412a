//! Parquet edge files via the arrow reader: integer `src`/`dst` columns (any signed or
//! unsigned width; a negative or null id is an error naming the row) and an optional float
//! weight column. The decoded batches go through [`super::arrow_batches`], which chooses the
//! columns.

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

pub(super) fn ids(col: &dyn Array, path: &Path, first_row: u64, what: &str) -> Result<Vec<u64>> {
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

pub(super) fn weights(
    col: &dyn Array,
    path: &Path,
    first_row: u64,
    what: &str,
) -> Result<Vec<f64>> {
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
    let mut reader = builder.with_batch_size(BATCH).build().map_err(pq)?;
    super::arrow_batches::read_batches(
        &schema,
        &mut reader,
        path,
        src,
        dst,
        weight,
        weighted,
        sink,
    )?;
    sink.bytes_read += file_len;
    Ok(())
}
