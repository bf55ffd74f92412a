//! The engine's small text tables (SHOW GRAPHS, DESCRIBE, SHOW SETTINGS, PROFILE) as Arrow
//! record batches, typed by what each column holds, and as aligned text.

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{ArrowError, Field, Schema};
use engine::{CellKind, TextTable};

/// One batch holding the table: number columns as Int64 when every cell is a whole number, else
/// Float64 (text that is no number becomes null, as an empty cell or `-` does); bool columns as
/// Boolean; the rest as text.
pub fn to_batch(t: &TextTable) -> Result<RecordBatch, ArrowError> {
    fn cell(row: &[String], i: usize) -> &str {
        row.get(i).map(String::as_str).unwrap_or("")
    }
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (i, (name, kind)) in t.header().iter().zip(t.column_kinds()).enumerate() {
        let cells: Vec<&str> = t.rows().iter().map(|r| cell(r, i).trim()).collect();
        let column: ArrayRef = match kind {
            CellKind::Number if cells.iter().all(|c| is_null(c) || c.parse::<i64>().is_ok()) => {
                Arc::new(Int64Array::from_iter(cells.iter().map(|c| c.parse().ok())))
            }
            CellKind::Number => Arc::new(Float64Array::from_iter(
                cells.iter().map(|c| c.parse::<f64>().ok()),
            )),
            CellKind::Bool => Arc::new(BooleanArray::from_iter(cells.iter().map(|c| match *c {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            }))),
            CellKind::Text => Arc::new(StringArray::from_iter_values(cells.iter())),
        };
        fields.push(Field::new(name, column.data_type().clone(), true));
        columns.push(column);
    }
    if fields.is_empty() {
        return Ok(RecordBatch::new_empty(Arc::new(Schema::empty())));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

fn is_null(cell: &str) -> bool {
    cell.is_empty() || cell == "-"
}

/// The table as aligned columns under a header, for text output.
pub fn render(t: &TextTable) -> String {
    let cell = |row: &Vec<String>, i: usize| row.get(i).cloned().unwrap_or_default();
    let widths: Vec<usize> = (0..t.header().len())
        .map(|i| {
            t.rows()
                .iter()
                .map(|r| cell(r, i).chars().count())
                .chain([t.header()[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(t.header().to_vec())];
    out.extend(
        t.rows()
            .iter()
            .map(|r| line((0..widths.len()).map(|i| cell(r, i)).collect())),
    );
    out.join("\n")
}
