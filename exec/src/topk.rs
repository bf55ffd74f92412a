//! `ORDER BY key [ASC|DESC], ... [LIMIT n] [OFFSET m]` over a [`ResultTable`]; a key is a
//! column or a value computed per batch (an expression such as `rank * degree`).
//!
//! With a LIMIT, the k best rows are kept in a bounded heap: O(rows · log k) time and O(k)
//! memory, so `ORDER BY rank DESC LIMIT 10` over 100 M PageRank rows never sorts them all.
//! Without a LIMIT every row is sorted. Order is total and deterministic: nulls come last in
//! both directions, NaN sorts above every number (as in PostgreSQL), and ties keep the rows'
//! original order (the sort is stable). One key is read in its own type; several keys are read
//! into one comparable tuple per row (`multi_key`), built only for rows that enter the heap. A
//! computed key is evaluated one batch at a time just before that batch's rows meet the heap, so
//! it costs O(batch) memory, not a column of |V| values.
//! OFFSET m widens the heap to k + m rows and drops the first m.
//!
//! Over rows still being built ([`order_and_limit_rows`]), LIMIT without ORDER BY pulls batches
//! only until it has its rows, and a limited ORDER BY keeps the best k rows so far and takes
//! the next batches in windows of max(k, [`BATCH_ROWS`]) rows, so it holds about 2k rows plus a
//! batch instead of every row.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, RecordBatch};
use arrow_schema::{ArrowError, DataType};

use crate::error::ExecError;
use crate::result::{ResultTable, RowStream, BATCH_ROWS};

/// Why ORDER BY / LIMIT could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum TopKError {
    #[error("ORDER BY: the result has no column `{column}`{}; its columns are {}",
        suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default(),
        columns.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "))]
    UnknownColumn {
        column: String,
        suggestion: Option<String>,
        columns: Vec<String>,
    },
    #[error("ORDER BY: column `{column}` has type {data_type}, which cannot be ordered")]
    Unorderable { column: String, data_type: DataType },
    #[error("ORDER BY: {0}")]
    Arrow(#[from] ArrowError),
    /// A computed key failed (its message names the clause).
    #[error("{0}")]
    Key(String),
}

/// Computes one key's values for a batch of the table.
pub type ComputeKey<'a> = &'a dyn Fn(&RecordBatch) -> Result<ArrayRef, TopKError>;

/// One ORDER BY key: a column of the table, or values computed from each batch.
#[derive(Clone, Copy)]
pub enum SortKey<'a> {
    Column(&'a str),
    Computed(ComputeKey<'a>),
}

/// The rows of `table` ordered by `column` (descending when `descending`), at most `limit` of
/// them; `column` is matched exactly, else case-insensitively. Statistics are carried over.
pub fn order_by(
    table: &ResultTable,
    column: &str,
    descending: bool,
    limit: Option<usize>,
) -> Result<ResultTable, TopKError> {
    let col = find_column(table, column)?;
    let data_type = table.schema.field(col).data_type().clone();
    let arrays: Vec<&dyn Array> = table
        .batches
        .iter()
        .map(|b| b.column(col).as_ref())
        .collect();
    let rows = match &data_type {
        DataType::UInt8 => select_primitive::<UInt8Type, _>(&arrays, descending, limit, u64::from),
        DataType::UInt16 => {
            select_primitive::<UInt16Type, _>(&arrays, descending, limit, u64::from)
        }
        DataType::UInt32 => {
            select_primitive::<UInt32Type, _>(&arrays, descending, limit, u64::from)
        }
        DataType::UInt64 => select_primitive::<UInt64Type, _>(&arrays, descending, limit, |v| v),
        DataType::Int8 => select_primitive::<Int8Type, _>(&arrays, descending, limit, i64::from),
        DataType::Int16 => select_primitive::<Int16Type, _>(&arrays, descending, limit, i64::from),
        DataType::Int32 => select_primitive::<Int32Type, _>(&arrays, descending, limit, i64::from),
        DataType::Int64 => select_primitive::<Int64Type, _>(&arrays, descending, limit, |v| v),
        DataType::Float32 => select_primitive::<Float32Type, _>(&arrays, descending, limit, |v| {
            float_key(f64::from(v))
        }),
        DataType::Float64 => {
            select_primitive::<Float64Type, _>(&arrays, descending, limit, float_key)
        }
        DataType::Boolean => {
            let keys = arrays.iter().map(|a| {
                let a = a.as_boolean();
                (0..a.len()).map(move |i| (!a.is_null(i)).then(|| a.value(i)))
            });
            select(keys, descending, limit)
        }
        DataType::Utf8 => {
            let keys = arrays.iter().map(|a| {
                let a = a.as_string::<i32>();
                (0..a.len()).map(move |i| (!a.is_null(i)).then(|| a.value(i)))
            });
            select(keys, descending, limit)
        }
        DataType::LargeUtf8 => {
            let keys = arrays.iter().map(|a| {
                let a = a.as_string::<i64>();
                (0..a.len()).map(move |i| (!a.is_null(i)).then(|| a.value(i)))
            });
            select(keys, descending, limit)
        }
        _ => {
            return Err(TopKError::Unorderable {
                column: table.schema.field(col).name().clone(),
                data_type,
            })
        }
    };
    gather(table, &rows)
}

/// Applies a RUN's `ORDER BY` keys (column, descending), `LIMIT` and `OFFSET`, any of which
/// may be absent; a table with none is returned as it is.
pub fn order_and_limit(
    table: ResultTable,
    keys: &[(&str, bool)],
    limit_rows: Option<u64>,
    offset_rows: Option<u64>,
) -> Result<ResultTable, TopKError> {
    let keys: Vec<(SortKey<'_>, bool)> =
        keys.iter().map(|&(c, d)| (SortKey::Column(c), d)).collect();
    order_and_limit_by(table, &keys, limit_rows, offset_rows)
}

/// [`order_and_limit`] with keys that may be computed.
pub fn order_and_limit_by(
    table: ResultTable,
    keys: &[(SortKey<'_>, bool)],
    limit_rows: Option<u64>,
    offset_rows: Option<u64>,
) -> Result<ResultTable, TopKError> {
    let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let skip = offset_rows.map_or(0, to_usize);
    // The rows up to the end of the window: OFFSET's rows are ordered too, then dropped.
    let k = limit_rows.map(|n| to_usize(n).saturating_add(skip));
    let ordered = match (keys, k) {
        ([], k) => match k {
            Some(k) if k < table.num_rows() => limit(&table, k),
            _ => table,
        },
        ([(SortKey::Column(column), descending)], k) => order_by(&table, column, *descending, k)?,
        (keys, k) => order_by_keys(&table, keys, k)?,
    };
    Ok(if skip > 0 {
        offset(&ordered, skip)
    } else {
        ordered
    })
}

/// [`order_and_limit_by`] over rows as they are built. Without keys, LIMIT and OFFSET slice
/// the batches as they come and stop pulling once the limit is reached; with keys and a limit,
/// the best rows so far are kept and merged with each window of new batches
/// ([`top_rows`]); with keys and no limit every row is gathered and sorted. The rows, their
/// order and their batches are those of [`order_and_limit_by`] over the whole table.
pub fn order_and_limit_rows<'a>(
    rows: RowStream<'a>,
    keys: &[(SortKey<'_>, bool)],
    limit_rows: Option<u64>,
    offset_rows: Option<u64>,
) -> Result<RowStream<'a>, ExecError> {
    ordered_rows(rows, keys, limit_rows, offset_rows, BATCH_ROWS)
}

/// [`order_and_limit_rows`] whose windows of new rows hold at least `min_window` rows (and at
/// least k).
fn ordered_rows<'a>(
    rows: RowStream<'a>,
    keys: &[(SortKey<'_>, bool)],
    limit_rows: Option<u64>,
    offset_rows: Option<u64>,
    min_window: usize,
) -> Result<RowStream<'a>, ExecError> {
    let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let skip = offset_rows.map_or(0, to_usize);
    let k = limit_rows.map(|n| to_usize(n).saturating_add(skip));
    let ordered = match (keys, k) {
        ([], k) => return Ok(limit_and_offset(rows, k, skip)),
        (keys, None) => {
            let table = ResultTable {
                batches: rows.batches.collect::<Result<_, _>>()?,
                ..ResultTable::empty(rows.schema)
            };
            order_and_limit_by(table, keys, None, None).map_err(key_error)?
        }
        (keys, Some(k)) => top_rows(rows, keys, k, k.max(min_window))?,
    };
    let ordered = if skip > 0 {
        offset(&ordered, skip)
    } else {
        ordered
    };
    Ok(RowStream::from_batches(ordered.schema, ordered.batches))
}

/// An ORDER BY failure as the run reports it.
fn key_error(e: TopKError) -> ExecError {
    ExecError::Other(e.to_string())
}

/// The first `k` rows (all when `None`) without the first `skip`, as [`limit`] then [`offset`]
/// slice them; batches are pulled only until `k` rows were seen.
fn limit_and_offset(rows: RowStream<'_>, k: Option<usize>, skip: usize) -> RowStream<'_> {
    if k.is_none() && skip == 0 {
        return rows;
    }
    let RowStream {
        schema,
        mut batches,
    } = rows;
    let (mut left, mut to_skip) = (k, skip);
    let sliced = std::iter::from_fn(move || loop {
        if left == Some(0) {
            return None;
        }
        let batch = match batches.next()? {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        let batch = match &mut left {
            Some(left) => {
                let take = (*left).min(batch.num_rows());
                *left -= take;
                if take < batch.num_rows() {
                    batch.slice(0, take)
                } else {
                    batch
                }
            }
            None => batch,
        };
        if skip == 0 {
            return Some(Ok(batch));
        }
        // As `offset`: batches wholly within the skipped rows (and empty ones) are dropped.
        if to_skip >= batch.num_rows() {
            to_skip -= batch.num_rows();
            continue;
        }
        let kept = batch.slice(to_skip, batch.num_rows() - to_skip);
        to_skip = 0;
        return Some(Ok(kept));
    });
    RowStream {
        schema,
        batches: Box::new(sliced),
    }
}

/// The best `k` rows of `rows` by `keys`, in order, batched as [`order_by`] /
/// [`order_by_keys`] batch them. The rows kept so far come first and stay ordered by key
/// and, among equal keys, by their place in the input; every new row comes after them in the
/// input. So ordering the kept rows followed by a window of new batches keeps, and orders,
/// exactly the rows that ordering the whole input would. A window is ordered once it holds at
/// least `window` new rows.
fn top_rows(
    rows: RowStream<'_>,
    keys: &[(SortKey<'_>, bool)],
    k: usize,
    window: usize,
) -> Result<ResultTable, ExecError> {
    let schema = rows.schema;
    let best = |batches: Vec<RecordBatch>| -> Result<ResultTable, ExecError> {
        let table = ResultTable {
            batches,
            ..ResultTable::empty(schema.clone())
        };
        match keys {
            [(SortKey::Column(column), descending)] => {
                order_by(&table, column, *descending, Some(k))
            }
            keys => order_by_keys(&table, keys, Some(k)),
        }
        .map_err(key_error)
    };
    // The kept rows' batches, then the window's.
    let mut batches = Vec::new();
    let mut window_rows = 0;
    for batch in rows.batches {
        let batch = batch?;
        window_rows += batch.num_rows();
        batches.push(batch);
        if window_rows >= window {
            batches = best(std::mem::take(&mut batches))?.batches;
            window_rows = 0;
        }
    }
    best(batches)
}

/// `table` without its first `n` rows, without copying any data.
pub fn offset(table: &ResultTable, n: usize) -> ResultTable {
    let mut left = n;
    let mut batches = Vec::new();
    for b in &table.batches {
        if left >= b.num_rows() {
            left -= b.num_rows();
            continue;
        }
        batches.push(b.slice(left, b.num_rows() - left));
        left = 0;
    }
    ResultTable {
        schema: table.schema.clone(),
        batches,
        iterations: table.iterations.clone(),
        algorithm_time: table.algorithm_time,
        operators: table.operators.clone(),
        summaries: table.summaries.clone(),
    }
}

/// The rows of `table` ordered by several `keys` (or one computed key), at most `limit` of
/// them. Keys must be numeric (every algorithm's columns and every expression are).
pub fn order_by_keys(
    table: &ResultTable,
    keys: &[(SortKey<'_>, bool)],
    limit: Option<usize>,
) -> Result<ResultTable, TopKError> {
    /// Where one key's values come from.
    enum Source<'k> {
        Column(usize),
        Computed(ComputeKey<'k>),
    }
    let mut sources = Vec::with_capacity(keys.len());
    let mut descending = Vec::with_capacity(keys.len());
    for (key, desc) in keys {
        sources.push(match key {
            SortKey::Column(name) => {
                let col = find_column(table, name)?;
                let field = table.schema.field(col);
                if !field.data_type().is_numeric() {
                    return Err(TopKError::Unorderable {
                        column: field.name().clone(),
                        data_type: field.data_type().clone(),
                    });
                }
                Source::Column(col)
            }
            SortKey::Computed(compute) => Source::Computed(*compute),
        });
        descending.push(*desc);
    }
    let mut kept: Vec<MultiEntry<'_>> = Vec::new();
    let mut heap: BinaryHeap<MultiEntry<'_>> = BinaryHeap::new();
    let mut row_key: Vec<Option<i128>> = vec![None; keys.len()];
    for (b, batch) in table.batches.iter().enumerate() {
        let values: Vec<Vec<Option<i128>>> = sources
            .iter()
            .map(|source| match source {
                Source::Column(c) => multi_key(batch.column(*c).as_ref()),
                Source::Computed(compute) => multi_key(compute(batch)?.as_ref()),
            })
            .collect::<Result<_, _>>()?;
        for row in 0..batch.num_rows() {
            for (slot, column) in row_key.iter_mut().zip(&values) {
                *slot = column[row];
            }
            let entry = |key: &[Option<i128>]| MultiEntry {
                key: key.into(),
                pos: (b, row),
                descending: &descending,
            };
            match limit {
                None => kept.push(entry(&row_key)),
                Some(0) => {}
                Some(k) if heap.len() < k => heap.push(entry(&row_key)),
                Some(_) => {
                    if let Some(mut top) = heap.peek_mut() {
                        // Later rows lose ties, so only a strictly better key enters.
                        if compare_keys(&row_key, &top.key, &descending) == Ordering::Less {
                            *top = entry(&row_key);
                        }
                    }
                }
            }
        }
    }
    let sorted = match limit {
        None => {
            kept.sort_unstable();
            kept
        }
        Some(_) => heap.into_sorted_vec(),
    };
    let positions: Vec<(usize, usize)> = sorted.into_iter().map(|e| e.pos).collect();
    gather(table, &positions)
}

/// A numeric column's values as one comparable integer type: integers as they are, floats
/// through [`float_key`]; nulls as `None`.
fn multi_key(array: &dyn Array) -> Result<Vec<Option<i128>>, TopKError> {
    fn read<T: ArrowPrimitiveType>(
        array: &dyn Array,
        key: impl Fn(T::Native) -> i128,
    ) -> Vec<Option<i128>> {
        let a = array.as_primitive::<T>();
        (0..a.len())
            .map(|i| (!a.is_null(i)).then(|| key(a.value(i))))
            .collect()
    }
    Ok(match array.data_type() {
        DataType::UInt8 => read::<UInt8Type>(array, i128::from),
        DataType::UInt16 => read::<UInt16Type>(array, i128::from),
        DataType::UInt32 => read::<UInt32Type>(array, i128::from),
        DataType::UInt64 => read::<UInt64Type>(array, i128::from),
        DataType::Int8 => read::<Int8Type>(array, i128::from),
        DataType::Int16 => read::<Int16Type>(array, i128::from),
        DataType::Int32 => read::<Int32Type>(array, i128::from),
        DataType::Int64 => read::<Int64Type>(array, i128::from),
        DataType::Float32 => read::<Float32Type>(array, |v| i128::from(float_key(f64::from(v)))),
        DataType::Float64 => read::<Float64Type>(array, |v| i128::from(float_key(v))),
        other => {
            return Err(TopKError::Arrow(ArrowError::InvalidArgumentError(format!(
                "cannot order by a column of type {other}"
            ))))
        }
    })
}

/// Compares two rows' keys: per key nulls last, descending keys reversed.
fn compare_keys(a: &[Option<i128>], b: &[Option<i128>], descending: &[bool]) -> Ordering {
    for ((x, y), desc) in a.iter().zip(b).zip(descending) {
        let order = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(x), Some(y)) if *desc => y.cmp(x),
            (Some(x), Some(y)) => x.cmp(y),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

/// One candidate row of a several-key ORDER BY: its keys and position (batch, row).
struct MultiEntry<'a> {
    key: Box<[Option<i128>]>,
    pos: (usize, usize),
    descending: &'a [bool],
}

impl Ord for MultiEntry<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_keys(&self.key, &other.key, self.descending).then(self.pos.cmp(&other.pos))
    }
}

impl PartialOrd for MultiEntry<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for MultiEntry<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for MultiEntry<'_> {}

/// The first `n` rows of `table` (LIMIT without ORDER BY), without copying any data.
pub fn limit(table: &ResultTable, n: usize) -> ResultTable {
    let mut left = n;
    let mut batches = Vec::new();
    for b in &table.batches {
        if left == 0 {
            break;
        }
        let take = left.min(b.num_rows());
        batches.push(b.slice(0, take));
        left -= take;
    }
    ResultTable {
        schema: table.schema.clone(),
        batches,
        iterations: table.iterations.clone(),
        algorithm_time: table.algorithm_time,
        operators: table.operators.clone(),
        summaries: table.summaries.clone(),
    }
}

/// The index of `column` in the table, or an error suggesting the nearest name.
pub fn find_column(table: &ResultTable, column: &str) -> Result<usize, TopKError> {
    let names: Vec<&String> = table.schema.fields().iter().map(|f| f.name()).collect();
    if let Some(i) = names.iter().position(|n| n.as_str() == column) {
        return Ok(i);
    }
    let folded: Vec<usize> = (0..names.len())
        .filter(|&i| names[i].eq_ignore_ascii_case(column))
        .collect();
    if let [i] = folded[..] {
        return Ok(i);
    }
    let lower = column.to_lowercase();
    let suggestion = names
        .iter()
        .map(|n| (edit_distance(&lower, &n.to_lowercase()), *n))
        .filter(|(d, n)| *d <= 2.max(n.chars().count() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.clone());
    Err(TopKError::UnknownColumn {
        column: column.to_string(),
        suggestion,
        columns: names.into_iter().cloned().collect(),
    })
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Maps an f64 to an integer with the same total order: -inf < … < -0 = 0 < … < inf < NaN.
fn float_key(x: f64) -> i64 {
    if x.is_nan() {
        return i64::MAX;
    }
    // -0.0 and 0.0 compare equal.
    let x = if x == 0.0 { 0.0 } else { x };
    let bits = x.to_bits() as i64;
    // Negative floats: flip the magnitude bits so larger magnitudes sort lower.
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// One candidate row: its key (None = null) and position (batch, row in batch).
struct Entry<K> {
    key: Option<K>,
    pos: (usize, usize),
    descending: bool,
}

impl<K: Ord> Ord for Entry<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        let by_key = match (&self.key, &other.key) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(a), Some(b)) if self.descending => b.cmp(a),
            (Some(a), Some(b)) => a.cmp(b),
        };
        by_key.then(self.pos.cmp(&other.pos))
    }
}

impl<K: Ord> PartialOrd for Entry<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K: Ord> PartialEq for Entry<K> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<K: Ord> Eq for Entry<K> {}

fn select_primitive<T, K>(
    arrays: &[&dyn Array],
    descending: bool,
    limit: Option<usize>,
    key: impl Fn(T::Native) -> K + Copy,
) -> Vec<(usize, usize)>
where
    T: ArrowPrimitiveType,
    K: Ord,
{
    let keys = arrays.iter().map(|a| {
        let a = a.as_primitive::<T>();
        let values = a.values();
        (0..a.len()).map(move |i| (!a.is_null(i)).then(|| key(values[i])))
    });
    select(keys, descending, limit)
}

/// Positions of the selected rows, in output order. `batches` yields, per batch, each row's key.
fn select<K, B, R>(batches: B, descending: bool, limit: Option<usize>) -> Vec<(usize, usize)>
where
    K: Ord,
    B: Iterator<Item = R>,
    R: Iterator<Item = Option<K>>,
{
    let entries = batches.enumerate().flat_map(|(b, rows)| {
        rows.enumerate().map(move |(i, key)| Entry {
            key,
            pos: (b, i),
            descending,
        })
    });
    let sorted: Vec<Entry<K>> = match limit {
        None => {
            let mut all: Vec<Entry<K>> = entries.collect();
            // Positions are unique, so an unstable sort is still deterministic and stable.
            all.sort_unstable();
            all
        }
        Some(0) => Vec::new(),
        Some(k) => {
            // A max-heap of the k best so far: its top is the worst of them.
            let mut heap: BinaryHeap<Entry<K>> = BinaryHeap::with_capacity(k.min(1 << 20) + 1);
            for e in entries {
                if heap.len() < k {
                    heap.push(e);
                } else if let Some(mut top) = heap.peek_mut() {
                    if e < *top {
                        *top = e;
                    }
                }
            }
            heap.into_sorted_vec()
        }
    };
    sorted.into_iter().map(|e| e.pos).collect()
}

/// A table of the rows at `positions`, in that order, rebatched to [`BATCH_ROWS`].
fn gather(table: &ResultTable, positions: &[(usize, usize)]) -> Result<ResultTable, TopKError> {
    let mut batches = Vec::with_capacity(positions.len().div_ceil(BATCH_ROWS));
    for chunk in positions.chunks(BATCH_ROWS) {
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(table.schema.fields().len());
        for c in 0..table.schema.fields().len() {
            let sources: Vec<&dyn Array> =
                table.batches.iter().map(|b| b.column(c).as_ref()).collect();
            columns.push(arrow_select::interleave::interleave(&sources, chunk)?);
        }
        batches.push(RecordBatch::try_new(table.schema.clone(), columns)?);
    }
    Ok(ResultTable {
        schema: table.schema.clone(),
        batches,
        iterations: table.iterations.clone(),
        algorithm_time: table.algorithm_time,
        operators: table.operators.clone(),
        summaries: table.summaries.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, StringArray, UInt64Array};
    use arrow_schema::{Field, Schema};
    use std::sync::Arc;

    fn table(batches: &[(Vec<u64>, Vec<Option<f64>>)]) -> ResultTable {
        let schema = Arc::new(Schema::new(vec![
            Field::new("vertex", DataType::UInt64, false),
            Field::new("rank", DataType::Float64, true),
        ]));
        let mut t = ResultTable::empty(schema.clone());
        for (v, r) in batches {
            t.batches.push(
                RecordBatch::try_new(
                    schema.clone(),
                    vec![
                        Arc::new(UInt64Array::from(v.clone())),
                        Arc::new(Float64Array::from(r.clone())),
                    ],
                )
                .unwrap(),
            );
        }
        t
    }

    fn rows(t: &ResultTable) -> Vec<(u64, Option<f64>)> {
        let mut out = Vec::new();
        for b in &t.batches {
            let v = b.column(0).as_primitive::<UInt64Type>();
            let r = b.column(1).as_primitive::<Float64Type>();
            for i in 0..b.num_rows() {
                out.push((v.value(i), (!r.is_null(i)).then(|| r.value(i))));
            }
        }
        out
    }

    fn sample() -> ResultTable {
        table(&[
            (vec![1, 2, 3], vec![Some(0.5), None, Some(0.25)]),
            (vec![4, 5, 6], vec![Some(0.75), Some(0.25), Some(-1.0)]),
        ])
    }

    #[test]
    fn top_k_descending_with_nulls_last_and_stable_ties() {
        let t = order_by(&sample(), "rank", true, Some(4)).unwrap();
        assert_eq!(
            rows(&t),
            vec![
                (4, Some(0.75)),
                (1, Some(0.5)),
                (3, Some(0.25)),
                (5, Some(0.25))
            ]
        );
        let all = order_by(&sample(), "rank", true, None).unwrap();
        assert_eq!(rows(&all).last(), Some(&(2, None)));
        assert_eq!(all.num_rows(), 6);
    }

    #[test]
    fn ascending_and_limit_edge_cases() {
        let t = order_by(&sample(), "rank", false, None).unwrap();
        assert_eq!(
            rows(&t),
            vec![
                (6, Some(-1.0)),
                (3, Some(0.25)),
                (5, Some(0.25)),
                (1, Some(0.5)),
                (4, Some(0.75)),
                (2, None)
            ]
        );
        assert_eq!(
            order_by(&sample(), "rank", false, Some(0))
                .unwrap()
                .num_rows(),
            0
        );
        assert_eq!(
            order_by(&sample(), "rank", false, Some(100))
                .unwrap()
                .num_rows(),
            6
        );
        let by_vertex = order_by(&sample(), "VERTEX", true, Some(2)).unwrap();
        assert_eq!(rows(&by_vertex), vec![(6, Some(-1.0)), (5, Some(0.25))]);
        let empty = table(&[]);
        assert_eq!(
            order_by(&empty, "rank", true, Some(3)).unwrap().num_rows(),
            0
        );
    }

    #[test]
    fn heap_agrees_with_full_sort() {
        // A deterministic pseudo-random table with many ties and nulls, several batches.
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut batches = Vec::new();
        let mut id = 0;
        for len in [7usize, 0, 13, 1, 29] {
            let v: Vec<u64> = (0..len)
                .map(|_| {
                    id += 1;
                    id
                })
                .collect();
            let r = (0..len)
                .map(|_| match next() % 10 {
                    0 => None,
                    1 => Some(f64::NAN),
                    n => Some((n % 5) as f64 - 2.0),
                })
                .collect();
            batches.push((v, r));
        }
        let t = table(&batches);
        for desc in [false, true] {
            let full = rows(&order_by(&t, "rank", desc, None).unwrap());
            for k in [1, 2, 5, 17, 50, 1000] {
                let top = rows(&order_by(&t, "rank", desc, Some(k)).unwrap());
                let want: Vec<_> = full.iter().take(k).collect();
                let got: Vec<_> = top.iter().collect();
                // Compare ids (NaN != NaN would defeat a value comparison).
                let ids = |v: Vec<&(u64, Option<f64>)>| v.iter().map(|r| r.0).collect::<Vec<_>>();
                assert_eq!(ids(got), ids(want), "k={k} desc={desc}");
            }
        }
    }

    #[test]
    fn float_key_is_a_total_order() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -1e-300,
            0.0,
            1e-300,
            1.0,
            1e300,
            f64::INFINITY,
            f64::NAN,
        ];
        for w in xs.windows(2) {
            assert!(float_key(w[0]) < float_key(w[1]), "{} < {}", w[0], w[1]);
        }
        assert_eq!(float_key(-0.0), float_key(0.0));
    }

    #[test]
    fn unknown_column_names_it_and_suggests() {
        let err = order_by(&sample(), "rnak", true, Some(3)).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("`rnak`"), "{msg}");
        assert!(msg.contains("did you mean `rank`"), "{msg}");
        assert!(msg.contains("`vertex`, `rank`"), "{msg}");
        let far = order_by(&sample(), "component", true, None)
            .unwrap_err()
            .to_string();
        assert!(!far.contains("did you mean"), "{far}");
    }

    #[test]
    fn strings_order_and_unorderable_types_are_refused() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("vertex", DataType::UInt64, false),
            Field::new("label", DataType::Utf8, true),
        ]));
        let mut t = ResultTable::empty(schema.clone());
        t.batches.push(
            RecordBatch::try_new(
                schema,
                vec![
                    Arc::new(UInt64Array::from(vec![1, 2, 3])),
                    Arc::new(StringArray::from(vec![Some("b"), None, Some("a")])),
                ],
            )
            .unwrap(),
        );
        let s = order_by(&t, "label", false, None).unwrap();
        let ids: Vec<u64> = s.batches[0]
            .column(0)
            .as_primitive::<UInt64Type>()
            .values()
            .to_vec();
        assert_eq!(ids, vec![3, 1, 2]);

        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Null, true)]));
        let t = ResultTable::empty(schema);
        assert!(matches!(
            order_by(&t, "n", false, None),
            Err(TopKError::Unorderable { .. })
        ));
    }

    #[test]
    fn order_and_limit_follows_the_clauses() {
        let top = order_and_limit(sample(), &[("rank", true)], Some(1), None).unwrap();
        assert_eq!(rows(&top), vec![(4, Some(0.75))]);
        assert_eq!(
            order_and_limit(sample(), &[], Some(2), None)
                .unwrap()
                .num_rows(),
            2
        );
        assert_eq!(
            order_and_limit(sample(), &[], None, None)
                .unwrap()
                .num_rows(),
            6
        );
        let huge = order_and_limit(sample(), &[("vertex", false)], Some(u64::MAX), None).unwrap();
        assert_eq!(huge.num_rows(), 6);
    }

    #[test]
    fn limit_slices_across_batches() {
        let t = limit(&sample(), 4);
        assert_eq!(t.num_rows(), 4);
        assert_eq!(rows(&t)[3], (4, Some(0.75)));
        assert_eq!(limit(&sample(), 0).num_rows(), 0);
        assert_eq!(limit(&sample(), 99).num_rows(), 6);
    }

    /// Rows as (vertex, rank), from a table with several batches, ties and nulls.
    fn keyed() -> ResultTable {
        table(&[
            (vec![1, 2, 3], vec![Some(0.5), None, Some(0.1)]),
            (vec![4, 5, 6], vec![Some(0.5), Some(f64::NAN), Some(-0.0)]),
            (vec![7], vec![Some(0.1)]),
        ])
    }

    #[test]
    fn a_computed_key_is_evaluated_batch_by_batch_and_feeds_the_heap() {
        use std::cell::RefCell;
        // The key -vertex * 2, computed from each batch as it is read.
        let seen = RefCell::new(Vec::new());
        let compute = |batch: &RecordBatch| -> Result<ArrayRef, TopKError> {
            seen.borrow_mut().push(batch.num_rows());
            let v = batch.column(0).as_primitive::<UInt64Type>();
            Ok(Arc::new(arrow_array::Int64Array::from_iter_values(
                v.values().iter().map(|&x| -(x as i64) * 2),
            )))
        };
        let keys = [(SortKey::Computed(&compute), false)];
        let top = order_and_limit_by(keyed(), &keys, Some(3), Some(1)).unwrap();
        let got: Vec<u64> = rows(&top).iter().map(|r| r.0).collect();
        assert_eq!(got, [6, 5, 4]);
        // Once per batch, never the whole column at once.
        assert_eq!(*seen.borrow(), [3, 3, 1]);
        // With a column key after it, ties of the computed key fall to the column.
        let parity = |batch: &RecordBatch| -> Result<ArrayRef, TopKError> {
            let v = batch.column(0).as_primitive::<UInt64Type>();
            Ok(Arc::new(UInt64Array::from_iter_values(
                v.values().iter().map(|&x| x % 2),
            )))
        };
        let keys = [
            (SortKey::Computed(&parity), false),
            (SortKey::Column("vertex"), true),
        ];
        let all = order_and_limit_by(keyed(), &keys, None, None).unwrap();
        let got: Vec<u64> = rows(&all).iter().map(|r| r.0).collect();
        assert_eq!(got, [6, 4, 2, 7, 5, 3, 1]);
        // A failing key is an error, not a panic.
        let failing = |_: &RecordBatch| -> Result<ArrayRef, TopKError> {
            Err(TopKError::Key("ORDER BY: overflow".into()))
        };
        let keys = [(SortKey::Computed(&failing), false)];
        let e = order_and_limit_by(keyed(), &keys, Some(1), None).unwrap_err();
        assert_eq!(e.to_string(), "ORDER BY: overflow");
    }

    #[test]
    fn several_keys_order_like_a_full_sort() {
        // rank DESC (NaN on top, nulls last), then vertex DESC among ties.
        let all =
            order_and_limit(keyed(), &[("rank", true), ("vertex", true)], None, None).unwrap();
        let got: Vec<u64> = rows(&all).iter().map(|r| r.0).collect();
        assert_eq!(got, [5, 4, 1, 7, 3, 6, 2]);
        // Every window of the bounded heap equals the same window of the full sort.
        for k in 0..8u64 {
            for skip in 0..8u64 {
                let top = order_and_limit(
                    keyed(),
                    &[("rank", true), ("vertex", true)],
                    Some(k),
                    Some(skip),
                )
                .unwrap();
                let want: Vec<u64> = got
                    .iter()
                    .copied()
                    .skip(skip as usize)
                    .take(k as usize)
                    .collect();
                let have: Vec<u64> = rows(&top).iter().map(|r| r.0).collect();
                assert_eq!(have, want, "LIMIT {k} OFFSET {skip}");
            }
        }
        // Ascending first key, descending second.
        let asc =
            order_and_limit(keyed(), &[("rank", false), ("vertex", true)], Some(3), None).unwrap();
        let got: Vec<u64> = rows(&asc).iter().map(|r| r.0).collect();
        assert_eq!(got, [6, 7, 3]);
    }

    #[test]
    fn offset_skips_across_batches_and_past_the_end() {
        let t = order_and_limit(keyed(), &[], None, Some(4)).unwrap();
        let got: Vec<u64> = rows(&t).iter().map(|r| r.0).collect();
        assert_eq!(got, [5, 6, 7]);
        assert_eq!(
            order_and_limit(keyed(), &[], Some(2), Some(2))
                .unwrap()
                .num_rows(),
            2
        );
        assert_eq!(
            order_and_limit(keyed(), &[], None, Some(99))
                .unwrap()
                .num_rows(),
            0
        );
        let t = order_and_limit(keyed(), &[("vertex", true)], Some(2), Some(1)).unwrap();
        let got: Vec<u64> = rows(&t).iter().map(|r| r.0).collect();
        assert_eq!(got, [6, 5]);
    }

    /// A table of batches of uneven sizes (some empty) with many ties, nulls and NaN.
    fn uneven(seed: u64) -> ResultTable {
        let mut rng = crate::rng::Xoshiro256::new(seed);
        let mut id = 0;
        let batches: Vec<(Vec<u64>, Vec<Option<f64>>)> = (0..12)
            .map(|_| {
                let len = (rng.next_u64() % 9) as usize;
                let v = (0..len)
                    .map(|_| {
                        id += 1;
                        id
                    })
                    .collect();
                let r = (0..len)
                    .map(|_| match rng.next_u64() % 10 {
                        0 => None,
                        1 => Some(f64::NAN),
                        2 => Some(-0.0),
                        n => Some((n % 4) as f64),
                    })
                    .collect();
                (v, r)
            })
            .collect();
        table(&batches)
    }

    fn stream(t: &ResultTable) -> RowStream<'static> {
        RowStream::from_batches(t.schema.clone(), t.batches.clone())
    }

    /// Over rows as they are built, in windows of any size, ORDER BY / LIMIT / OFFSET give the
    /// batches the whole table gives: the same rows, order and batching.
    #[test]
    fn streamed_rows_match_the_whole_table() {
        let double = |b: &RecordBatch| -> Result<ArrayRef, TopKError> {
            Ok(arrow_arith::numeric::add(b.column(1), b.column(1))?)
        };
        let key_sets: Vec<Vec<(SortKey<'_>, bool)>> = vec![
            vec![],
            vec![(SortKey::Column("rank"), false)],
            vec![(SortKey::Column("rank"), true)],
            vec![
                (SortKey::Column("rank"), true),
                (SortKey::Column("vertex"), true),
            ],
            vec![(SortKey::Computed(&double), false)],
        ];
        for seed in 0..20 {
            let t = uneven(seed);
            for keys in &key_sets {
                for limit in [None, Some(0), Some(1), Some(3), Some(10), Some(1000)] {
                    for offset in [None, Some(0), Some(2), Some(50)] {
                        let want = order_and_limit_by(t.clone(), keys, limit, offset).unwrap();
                        for window in [1, 4, 1 << 20] {
                            let got = ordered_rows(stream(&t), keys, limit, offset, window)
                                .unwrap()
                                .collect()
                                .unwrap();
                            assert_eq!(
                                got, want.batches,
                                "seed {seed} limit {limit:?} offset {offset:?} window {window}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// LIMIT without ORDER BY pulls batches only until it has its rows.
    #[test]
    fn limit_stops_pulling_batches() {
        let t = sample();
        let pulled = std::cell::Cell::new(0);
        let counted = RowStream {
            schema: t.schema.clone(),
            batches: Box::new(t.batches.clone().into_iter().map(|b| {
                pulled.set(pulled.get() + 1);
                Ok(b)
            })),
        };
        let got = order_and_limit_rows(counted, &[], Some(2), None)
            .unwrap()
            .collect()
            .unwrap();
        assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
        assert_eq!(pulled.get(), 1, "the second batch is never built");
    }

    /// An error building a row reaches the consumer.
    #[test]
    fn a_failed_batch_stops_the_rows() {
        let t = sample();
        let failing = RowStream {
            schema: t.schema.clone(),
            batches: Box::new(
                std::iter::once(Ok(t.batches[0].clone()))
                    .chain(std::iter::once(Err(ExecError::Other("no row".into())))),
            ),
        };
        let keys = [(SortKey::Column("rank"), true)];
        let err = order_and_limit_rows(failing, &keys, Some(1), None).err();
        assert_eq!(err.map(|e| e.to_string()), Some("no row".to_string()));
    }
}
