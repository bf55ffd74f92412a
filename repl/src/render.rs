//! Printing a RUN's result on the terminal or for scripts.
//!
//! * `table` (the REPL's default): an aligned table of the first rows — never the whole of a
//!   100 M-row result by accident — then "… N more rows" with a hint, then "N rows in T s".
//! * `csv` and `json` (`--format csv|json`, for scripts): **every** row, streamed batch by batch
//!   to the writer, with no footer, so the output can be piped straight into another tool.
//!
//! Floats are printed with the shortest text that reads back to the same value. Null is `NULL`
//! in the table, an empty field in CSV and `null` in JSON.

use std::io::{self, Write};
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Schema};
use exec::ResultTable;

use crate::session::OutputStyle;

/// Rows the table view shows before summarising the rest.
pub const DEFAULT_TABLE_ROWS: usize = 20;

/// Widest a table cell may be before it is cut with "…" (long strings would wreck alignment).
const MAX_CELL_CHARS: usize = 48;

/// Prints `table` in `style`: the table view with its footer, or every row as CSV / JSON lines.
/// `elapsed` is the statement's wall time, shown in the table view's footer.
pub fn render_result(
    out: &mut dyn Write,
    table: &ResultTable,
    style: OutputStyle,
    elapsed: Duration,
) -> io::Result<()> {
    match style {
        OutputStyle::Table => write_table(out, table, DEFAULT_TABLE_ROWS, elapsed),
        OutputStyle::Csv => write_csv(out, table),
        OutputStyle::Json => write_json_lines(out, table),
    }
}

/// [`render_result`] with the argument order the statement runner uses.
pub fn render(
    table: &ResultTable,
    style: OutputStyle,
    elapsed: Duration,
    out: &mut dyn Write,
) -> io::Result<()> {
    render_result(out, table, style, elapsed)
}

/// "N rows in T s" (one row: "1 row").
pub fn footer(rows: usize, elapsed: Duration) -> String {
    let noun = if rows == 1 { "row" } else { "rows" };
    format!("{rows} {noun} in {:.3} s", elapsed.as_secs_f64())
}

/// The aligned table of at most `max_rows` rows, the "… N more rows" line when some are left
/// out, and the footer. Reads only the rows it shows.
pub fn write_table(
    out: &mut dyn Write,
    table: &ResultTable,
    max_rows: usize,
    elapsed: Duration,
) -> io::Result<()> {
    let total = table.num_rows();
    let schema = &table.schema;
    let ncols = schema.fields().len();
    if ncols > 0 {
        let header: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let right: Vec<bool> = schema
            .fields()
            .iter()
            .map(|f| is_numeric(f.data_type()))
            .collect();
        let mut rows: Vec<Vec<String>> = Vec::new();
        'outer: for batch in &table.batches {
            for r in 0..batch.num_rows() {
                if rows.len() >= max_rows {
                    break 'outer;
                }
                rows.push(
                    batch
                        .columns()
                        .iter()
                        .map(|c| {
                            truncate(cell_text(c.as_ref(), r).unwrap_or_else(|| "NULL".into()))
                        })
                        .collect(),
                );
            }
        }
        let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for row in &rows {
            for (w, c) in width.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[String]| -> String {
            let parts: Vec<String> = (0..ncols)
                .map(|i| {
                    let c = cells.get(i).map(String::as_str).unwrap_or("");
                    if right[i] {
                        format!("{c:>w$}", w = width[i])
                    } else {
                        format!("{c:<w$}", w = width[i])
                    }
                })
                .collect();
            parts.join(" │ ").trim_end().to_string()
        };
        writeln!(out, "{}", line(&header))?;
        let rule: Vec<String> = width.iter().map(|w| "─".repeat(*w)).collect();
        writeln!(out, "{}", rule.join("─┼─"))?;
        for row in &rows {
            writeln!(out, "{}", line(row))?;
        }
        if total > rows.len() {
            writeln!(
                out,
                "… {} more rows (add ORDER BY column DESC LIMIT n for the top rows, or INTO 'file.parquet' to keep them all)",
                total - rows.len()
            )?;
        }
    }
    writeln!(out, "{}", footer(total, elapsed))
}

/// Every row as CSV with a header line.
pub fn write_csv(out: &mut dyn Write, table: &ResultTable) -> io::Result<()> {
    write_csv_header(out, &table.schema)?;
    for b in &table.batches {
        write_csv_batch(out, b)?;
    }
    Ok(())
}

/// The CSV header line; with [`write_csv_batch`], lets a caller stream batches as they come.
pub fn write_csv_header(out: &mut dyn Write, schema: &Schema) -> io::Result<()> {
    let names: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| csv_field(f.name()))
        .collect();
    writeln!(out, "{}", names.join(","))
}

/// The rows of one batch as CSV lines (null is an empty field).
pub fn write_csv_batch(out: &mut dyn Write, batch: &RecordBatch) -> io::Result<()> {
    let mut line = String::with_capacity(64);
    for r in 0..batch.num_rows() {
        line.clear();
        for (i, c) in batch.columns().iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            if let Some(text) = cell_text(c.as_ref(), r) {
                if matches!(c.data_type(), DataType::Utf8 | DataType::LargeUtf8) {
                    line.push_str(&csv_field(&text));
                } else {
                    line.push_str(&text);
                }
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// Every row as one JSON object per line.
pub fn write_json_lines(out: &mut dyn Write, table: &ResultTable) -> io::Result<()> {
    for b in &table.batches {
        write_json_batch(out, b)?;
    }
    Ok(())
}

/// The rows of one batch as JSON lines, `{"vertex":1,"rank":0.25}`; null (and a non-finite
/// float, which JSON cannot spell) is `null`.
pub fn write_json_batch(out: &mut dyn Write, batch: &RecordBatch) -> io::Result<()> {
    let schema = batch.schema();
    let keys: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| json_string(f.name()))
        .collect();
    let mut line = String::with_capacity(64);
    for r in 0..batch.num_rows() {
        line.clear();
        line.push('{');
        for (i, c) in batch.columns().iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            line.push_str(&keys[i]);
            line.push(':');
            match cell_text(c.as_ref(), r) {
                None => line.push_str("null"),
                Some(text) => match c.data_type() {
                    DataType::Utf8 | DataType::LargeUtf8 => line.push_str(&json_string(&text)),
                    DataType::Float32 | DataType::Float64 => {
                        if text.parse::<f64>().is_ok_and(f64::is_finite) {
                            line.push_str(&text);
                        } else {
                            line.push_str("null");
                        }
                    }
                    t if is_numeric(t) || *t == DataType::Boolean => line.push_str(&text),
                    _ => line.push_str(&json_string(&text)),
                },
            }
        }
        line.push_str("}\n");
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// Shortest text that parses back to `x`: plain decimals for everyday magnitudes, scientific
/// notation for very small or very large ones (so 1e-300 is not 300 zeros).
pub fn format_float(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || !x.is_finite() || (1e-7..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// The text of one cell, `None` for null. Types results do not use print as `<type>`.
pub fn cell_text(a: &dyn Array, row: usize) -> Option<String> {
    if a.is_null(row) {
        return None;
    }
    let s = match a.data_type() {
        DataType::UInt8 => a.as_primitive::<UInt8Type>().value(row).to_string(),
        DataType::UInt16 => a.as_primitive::<UInt16Type>().value(row).to_string(),
        DataType::UInt32 => a.as_primitive::<UInt32Type>().value(row).to_string(),
        DataType::UInt64 => a.as_primitive::<UInt64Type>().value(row).to_string(),
        DataType::Int8 => a.as_primitive::<Int8Type>().value(row).to_string(),
        DataType::Int16 => a.as_primitive::<Int16Type>().value(row).to_string(),
        DataType::Int32 => a.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => a.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::Float64 => format_float(a.as_primitive::<Float64Type>().value(row)),
        DataType::Float32 => {
            let x = a.as_primitive::<Float32Type>().value(row);
            let m = x.abs();
            if x == 0.0 || !x.is_finite() || (1e-7..1e16).contains(&m) {
                format!("{x}")
            } else {
                format!("{x:e}")
            }
        }
        DataType::Boolean => a.as_boolean().value(row).to_string(),
        DataType::Utf8 => a.as_string::<i32>().value(row).to_string(),
        DataType::LargeUtf8 => a.as_string::<i64>().value(row).to_string(),
        t => format!("<{t}>"),
    };
    Some(s)
}

fn is_numeric(t: &DataType) -> bool {
    matches!(
        t,
        DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Float32
            | DataType::Float64
    )
}

fn truncate(s: String) -> String {
    if s.chars().count() <= MAX_CELL_CHARS {
        return s;
    }
    let mut t: String = s.chars().take(MAX_CELL_CHARS - 1).collect();
    t.push('…');
    t
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, StringArray, UInt64Array};
    use arrow_schema::Field;
    use std::sync::Arc;

    fn pagerank_like(n: u64, batch: u64) -> ResultTable {
        let schema = Arc::new(Schema::new(vec![
            Field::new("vertex", DataType::UInt64, false),
            Field::new("rank", DataType::Float64, true),
        ]));
        let mut t = ResultTable::empty(schema.clone());
        let mut start = 0;
        while start < n {
            let end = (start + batch).min(n);
            let ids: Vec<u64> = (start..end).collect();
            let ranks: Vec<Option<f64>> = ids
                .iter()
                .map(|&i| {
                    if i % 3 == 2 {
                        None
                    } else {
                        Some(1.0 / (i as f64 + 3.0))
                    }
                })
                .collect();
            t.batches.push(
                RecordBatch::try_new(
                    schema.clone(),
                    vec![
                        Arc::new(UInt64Array::from(ids)),
                        Arc::new(Float64Array::from(ranks)),
                    ],
                )
                .unwrap(),
            );
            start = end;
        }
        t
    }

    fn text(f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> String {
        let mut buf = Vec::new();
        f(&mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn table_is_aligned_with_nulls_and_footer() {
        let t = pagerank_like(3, 2);
        let s = text(|o| write_table(o, &t, 20, Duration::from_millis(1234)));
        let want = [
            "vertex │               rank",
            "───────┼───────────────────",
            "     0 │ 0.3333333333333333",
            "     1 │               0.25",
            "     2 │               NULL",
            "3 rows in 1.234 s",
        ];
        assert_eq!(s.lines().collect::<Vec<_>>(), want, "{s}");
    }

    #[test]
    fn large_results_are_summarised() {
        let t = pagerank_like(100_000, 4096);
        let s = text(|o| render_result(o, &t, OutputStyle::Table, Duration::from_secs(2)));
        let lines: Vec<&str> = s.lines().collect();
        // header, rule, 20 rows, "… more", footer
        assert_eq!(lines.len(), 2 + DEFAULT_TABLE_ROWS + 2, "{s}");
        assert!(lines[22].starts_with("… 99980 more rows"), "{}", lines[22]);
        assert!(lines[22].contains("LIMIT"));
        assert!(lines[22].contains("INTO"));
        assert_eq!(lines[23], "100000 rows in 2.000 s");
        assert_eq!(footer(1, Duration::ZERO), "1 row in 0.000 s");
    }

    #[test]
    fn empty_result_prints_header_and_zero_rows() {
        let t = pagerank_like(0, 10);
        let s = text(|o| write_table(o, &t, 20, Duration::ZERO));
        assert!(s.ends_with("0 rows in 0.000 s\n"), "{s}");
        assert!(s.starts_with("vertex │ rank\n"), "{s}");
        assert_eq!(text(|o| write_csv(o, &t)), "vertex,rank\n");
        assert_eq!(text(|o| write_json_lines(o, &t)), "");
    }

    #[test]
    fn csv_prints_every_row_and_round_trips_floats() {
        let t = pagerank_like(10_000, 777);
        let s = text(|o| render_result(o, &t, OutputStyle::Csv, Duration::ZERO));
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "vertex,rank");
        assert_eq!(lines.len(), 10_001);
        assert_eq!(lines[3], "2,");
        for (i, l) in lines[1..].iter().enumerate() {
            let (v, r) = l.split_once(',').unwrap();
            assert_eq!(v.parse::<u64>().unwrap(), i as u64);
            if i % 3 == 2 {
                assert_eq!(r, "");
            } else {
                assert_eq!(r.parse::<f64>().unwrap(), 1.0 / (i as f64 + 3.0));
            }
        }
    }

    #[test]
    fn json_lines_one_object_per_row() {
        let t = pagerank_like(5, 2);
        let s = text(|o| render_result(o, &t, OutputStyle::Json, Duration::ZERO));
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0], r#"{"vertex":0,"rank":0.3333333333333333}"#);
        assert_eq!(lines[2], r#"{"vertex":2,"rank":null}"#);
        for l in lines {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v.get("vertex").unwrap().is_u64());
        }
    }

    #[test]
    fn floats_strings_and_odd_values() {
        assert_eq!(format_float(0.1), "0.1");
        assert_eq!(format_float(1e-300), "1e-300");
        assert_eq!(format_float(2.5e20), "2.5e20");
        assert_eq!(format_float(f64::INFINITY), "inf");
        for x in [1.0 / 3.0, 1e-7, 9.99e15, 1e16, 5e-324, f64::MAX, -0.0] {
            assert_eq!(
                format_float(x).parse::<f64>().unwrap().to_bits(),
                x.to_bits()
            );
        }

        let schema = Arc::new(Schema::new(vec![
            Field::new("name", DataType::Utf8, true),
            Field::new("x", DataType::Float64, true),
        ]));
        let long = "x".repeat(100);
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(vec![
                    Some("a,\"b\""),
                    None,
                    Some(long.as_str()),
                ])),
                Arc::new(Float64Array::from(vec![f64::NAN, f64::INFINITY, 1.5])),
            ],
        )
        .unwrap();
        let mut t = ResultTable::empty(schema);
        t.batches.push(batch);
        let csv = text(|o| write_csv(o, &t));
        assert_eq!(csv.lines().nth(1), Some("\"a,\"\"b\"\"\",NaN"));
        assert_eq!(csv.lines().nth(2), Some(",inf"));
        let json = text(|o| write_json_lines(o, &t));
        let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
        assert_eq!(first["name"], "a,\"b\"");
        assert!(first["x"].is_null());
        let table = text(|o| write_table(o, &t, 20, Duration::ZERO));
        assert!(table.contains('…'), "{table}");
        assert!(!table.contains(&long), "{table}");
        assert!(table.lines().all(|l| l.chars().count() < 80), "{table}");
    }
}
