//! Small text tables for catalog and settings output (SHOW GRAPHS, DESCRIBE, SHOW SETTINGS,
//! PROFILE), printed in the session's style so scripts can read them as CSV or JSON too.

use std::io::{self, Write};

use crate::session::OutputStyle;

/// What a column holds, so that JSON output keeps its type (text cells are formatted for people,
/// JSON readers want numbers as numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CellKind {
    #[default]
    Text,
    /// An integer or decimal; an empty cell or `-` is null.
    Number,
    /// `true` or `false`.
    Bool,
}

/// A table of text cells with a header.
#[derive(Debug, Clone, Default)]
pub struct TextTable {
    header: Vec<String>,
    kinds: Vec<CellKind>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> TextTable {
        TextTable {
            header: header.iter().map(|s| s.to_string()).collect(),
            kinds: vec![CellKind::Text; header.len()],
            rows: Vec::new(),
        }
    }

    /// Declares the kind of the named columns (for JSON output).
    pub fn kinds(mut self, columns: &[&str], kind: CellKind) -> TextTable {
        for (h, k) in self.header.iter().zip(self.kinds.iter_mut()) {
            if columns.contains(&h.as_str()) {
                *k = kind;
            }
        }
        self
    }

    /// Appends a row (missing cells print empty).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Prints in `style`.
    pub fn print(&self, style: OutputStyle, out: &mut dyn Write) -> io::Result<()> {
        match style {
            OutputStyle::Table => self.print_aligned(out),
            OutputStyle::Csv => {
                writeln!(
                    out,
                    "{}",
                    self.header
                        .iter()
                        .map(|c| csv_cell(c))
                        .collect::<Vec<_>>()
                        .join(",")
                )?;
                for r in &self.rows {
                    writeln!(
                        out,
                        "{}",
                        r.iter().map(|c| csv_cell(c)).collect::<Vec<_>>().join(",")
                    )?;
                }
                Ok(())
            }
            OutputStyle::Json => {
                // Built by hand so the keys keep the column order.
                for r in &self.rows {
                    let fields: Vec<String> = self
                        .header
                        .iter()
                        .enumerate()
                        .map(|(i, h)| {
                            let cell = r.get(i).map(String::as_str).unwrap_or_default();
                            format!(
                                "{}:{}",
                                serde_json::Value::from(h.as_str()),
                                json_value(cell, self.kinds[i])
                            )
                        })
                        .collect();
                    writeln!(out, "{{{}}}", fields.join(","))?;
                }
                Ok(())
            }
        }
    }

    fn print_aligned(&self, out: &mut dyn Write) -> io::Result<()> {
        let cols = self.header.len();
        let mut width: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(cols) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let line = |cells: &[String]| -> String {
            (0..cols)
                .map(|i| {
                    let c = cells.get(i).map(String::as_str).unwrap_or("");
                    format!("{c:<w$}", w = width[i])
                })
                .collect::<Vec<_>>()
                .join(" │ ")
                .trim_end()
                .to_string()
        };
        writeln!(out, "{}", line(&self.header))?;
        writeln!(
            out,
            "{}",
            width
                .iter()
                .map(|w| "─".repeat(*w))
                .collect::<Vec<_>>()
                .join("─┼─")
        )?;
        for r in &self.rows {
            writeln!(out, "{}", line(r))?;
        }
        Ok(())
    }
}

/// A cell as a JSON value of its column's kind; a cell that does not read as its kind stays text.
fn json_value(cell: &str, kind: CellKind) -> serde_json::Value {
    use serde_json::Value;
    match kind {
        CellKind::Number if cell.is_empty() || cell == "-" => Value::Null,
        CellKind::Number => {
            if let Ok(i) = cell.parse::<i64>() {
                Value::from(i)
            } else if let Ok(u) = cell.parse::<u64>() {
                Value::from(u)
            } else {
                match cell
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                {
                    Some(n) => Value::Number(n),
                    None => Value::String(cell.to_string()),
                }
            }
        }
        CellKind::Bool => match cell {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "" => Value::Null,
            _ => Value::String(cell.to_string()),
        },
        CellKind::Text => Value::String(cell.to_string()),
    }
}

fn csv_cell(c: &str) -> String {
    if c.contains([',', '"', '\n']) {
        format!("\"{}\"", c.replace('"', "\"\""))
    } else {
        c.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_all_styles() {
        let mut t = TextTable::new(&["name", "value"]);
        t.row(vec!["a".into(), "1,2".into()]);
        let mut s = Vec::new();
        t.print(OutputStyle::Table, &mut s).unwrap();
        assert_eq!(
            String::from_utf8(s).unwrap(),
            "name │ value\n─────┼──────\na    │ 1,2\n"
        );
        let mut s = Vec::new();
        t.print(OutputStyle::Csv, &mut s).unwrap();
        assert_eq!(String::from_utf8(s).unwrap(), "name,value\na,\"1,2\"\n");
        let mut s = Vec::new();
        t.print(OutputStyle::Json, &mut s).unwrap();
        assert_eq!(
            String::from_utf8(s).unwrap(),
            "{\"name\":\"a\",\"value\":\"1,2\"}\n"
        );
    }

    #[test]
    fn json_keeps_declared_kinds() {
        let mut t = TextTable::new(&["name", "n", "x", "flag", "missing"])
            .kinds(&["n", "x", "missing"], CellKind::Number)
            .kinds(&["flag"], CellKind::Bool);
        t.row(vec![
            "7".into(),
            "18446744073709551615".into(),
            "0.5".into(),
            "true".into(),
            "".into(),
        ]);
        let mut s = Vec::new();
        t.print(OutputStyle::Json, &mut s).unwrap();
        assert_eq!(
            String::from_utf8(s).unwrap(),
            "{\"name\":\"7\",\"n\":18446744073709551615,\"x\":0.5,\"flag\":true,\"missing\":null}\n"
        );
    }
}
