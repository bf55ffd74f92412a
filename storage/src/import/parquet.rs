//! Parquet edge files via the arrow reader: `src`/`dst` key columns, integer (any signed or
//! unsigned width) or string (Utf8, LargeUtf8, Binary and their views: string keys), plain or
//! dictionary-encoded (pandas categoricals), and an
//! optional float weight column. Columns are chosen by name, defaulting to the first two (and
//! third). A negative or null key or a bad weight is an error naming the row, or with
//! `ON ERROR skip` a skipped row.

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

/// The keys of one key column of a batch.
enum KeyColumn<'a> {
    /// An integer column, widened (signed and unsigned alike); `None` is a null.
    Integers(Vec<Option<i128>>),
    /// A string or binary column.
    Strings(Box<dyn Fn(usize) -> Option<&'a [u8]> + 'a>),
}

/// Whether a column of type `t` holds string keys (`Some(true)`), integer keys
/// (`Some(false)`) or cannot hold keys (`None`).
fn holds_strings(t: &DataType) -> Option<bool> {
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

fn key_column<'a>(col: &'a dyn Array) -> KeyColumn<'a> {
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
fn key_at(
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
fn weights(col: &dyn Array, path: &Path, what: &str) -> Result<Vec<Option<f64>>> {
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
    // The key columns' types decide the keys: strings when either holds strings.
    let mut strings = false;
    for c in [s, d] {
        let f = schema.field(c);
        match holds_strings(f.data_type()) {
            None => {
                return Err(input_err(
                    path,
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
                    path,
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
    let reader = builder.with_batch_size(BATCH).build().map_err(pq)?;
    let mut row = 1u64;
    for batch in reader {
        let batch = batch.map_err(|e| input_err(path, row, format!("parquet: {e}")))?;
        let sv = key_column(batch.column(s).as_ref());
        let dv = key_column(batch.column(d).as_ref());
        let wv = match w {
            Some(w) => Some(weights(
                batch.column(w).as_ref(),
                path,
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
                        None => return Err(input_err(path, r, format!("row {r}: weight is null"))),
                        Some(x) => check_weight(x, &|| format!("{x} (row {r})"), path, r)?,
                    },
                };
                let a = key_at(&sv, i, r, schema.field(s).name(), path, sink)?;
                let b = key_at(&dv, i, r, schema.field(d).name(), path, sink)?;
                sink.edge(a, b, weight, path, r)
            })();
            sink.line_outcome(outcome)?;
        }
        row += batch.num_rows() as u64;
    }
    sink.bytes_read += file_len;
    Ok(())
}
