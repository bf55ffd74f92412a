//! Parquet edge files via the arrow reader: `src`/`dst` key columns, integer (any signed or
//! unsigned width) or string (Utf8, LargeUtf8, Binary and their views: string keys), plain or
//! dictionary-encoded (pandas categoricals), and an optional float weight column. A negative or
//! null key or a bad weight is an error naming the row, or with `ON ERROR skip` a skipped row.
//! The decoded batches go through [`super::arrow_batches`], which chooses the columns and reads
//! the rows.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::Array;
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::edgelist::input_err;
use super::input::open_input;
use super::EdgeSink;
use crate::error::{Result, StoreError};

/// Rows per decoded batch.
const BATCH: usize = 64 * 1024;

/// The keys of one key column of a batch.
pub(super) enum KeyColumn<'a> {
    /// An integer column, widened (signed and unsigned alike); `None` is a null.
    Integers(Vec<Option<i128>>),
    /// A string or binary column.
    Strings(Box<dyn Fn(usize) -> Option<&'a [u8]> + 'a>),
}

/// Whether a column of type `t` holds string keys (`Some(true)`), integer keys
/// (`Some(false)`) or cannot hold keys (`None`).
pub(super) fn holds_strings(t: &DataType) -> Option<bool> {
    match t {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => Some(false),
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => Some(true),
        // Dictionary-encoded (pandas categoricals): what the dictionary holds.
        DataType::Dictionary(_, values) => holds_strings(values),
        _ => None,
    }
}

pub(super) fn key_column<'a>(col: &'a dyn Array) -> KeyColumn<'a> {
    macro_rules! ints {
        ($t:ty) => {{
            let a = col.as_primitive::<$t>();
            KeyColumn::Integers(
                (0..a.len())
                    .map(|i| (!a.is_null(i)).then(|| a.value(i) as i128))
                    .collect(),
            )
        }};
    }
    macro_rules! bytes {
        ($a:expr) => {{
            let a = $a;
            KeyColumn::Strings(Box::new(move |i| {
                (!a.is_null(i)).then(|| AsRef::<[u8]>::as_ref(a.value(i)))
            }))
        }};
    }
    match col.data_type() {
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        DataType::Utf8 => bytes!(col.as_string::<i32>()),
        DataType::LargeUtf8 => bytes!(col.as_string::<i64>()),
        DataType::Utf8View => bytes!(col.as_string_view()),
        DataType::Binary => bytes!(col.as_binary::<i32>()),
        DataType::LargeBinary => bytes!(col.as_binary::<i64>()),
        DataType::BinaryView => bytes!(col.as_binary_view()),
        DataType::Dictionary(_, _) => {
            let dict = col.as_any_dictionary();
            let index = dict.normalized_keys();
            let valid = move |i: usize| !col.is_null(i);
            match key_column(dict.values().as_ref()) {
                KeyColumn::Strings(get) => {
                    KeyColumn::Strings(Box::new(move |i| valid(i).then(|| get(index[i])).flatten()))
                }
                KeyColumn::Integers(v) => KeyColumn::Integers(
                    (0..col.len())
                        .map(|i| valid(i).then(|| v[index[i]]).flatten())
                        .collect(),
                ),
            }
        }
        // Refused by the schema check before any batch is read.
        _ => KeyColumn::Integers(vec![None; col.len()]),
    }
}

/// The id of row `row`'s key in `col` (index `i` in the batch), through the sink.
pub(super) fn key_at(
    col: &KeyColumn<'_>,
    i: usize,
    row: u64,
    what: &str,
    path: &Path,
    sink: &mut EdgeSink<'_>,
) -> Result<u64> {
    let column = || format!("row {row}, column `{what}`");
    match col {
        KeyColumn::Integers(v) => match v[i] {
            None => Err(input_err(
                path,
                row,
                format!("{}: the key is null", column()),
            )),
            Some(x) if x < 0 => Err(input_err(
                path,
                row,
                format!("{}: negative vertex id {x}", column()),
            )),
            Some(x) if sink.string_keys() => sink.key(x.to_string().as_bytes(), path, row, &column),
            Some(x) => Ok(x as u64),
        },
        KeyColumn::Strings(get) => match get(i) {
            None => Err(input_err(
                path,
                row,
                format!("{}: the key is null", column()),
            )),
            Some(b) => sink.key(b, path, row, &column),
        },
    }
}

/// The weights of a batch; `None` for a null.
pub(super) fn weights(col: &dyn Array, path: &Path, what: &str) -> Result<Vec<Option<f64>>> {
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
    Ok((0..col.len())
        .map(|i| (!col.is_null(i)).then(|| vals(i)))
        .collect())
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
