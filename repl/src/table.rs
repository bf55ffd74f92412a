//! Small text tables for catalog and settings output (SHOW GRAPHS, DESCRIBE, SHOW SETTINGS,
//! PROFILE), printed in the session's style so scripts can read them as CSV or JSON too.

use std::io::{self, Write};

use crate::session::OutputStyle;

/// A table of text cells with a header.
#[derive(Debug, Clone, Default)]
pub struct TextTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> TextTable {
        TextTable {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
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
                for r in &self.rows {
                    let mut obj = serde_json::Map::new();
                    for (i, h) in self.header.iter().enumerate() {
                        let cell = r.get(i).cloned().unwrap_or_default();
                        obj.insert(h.clone(), serde_json::Value::String(cell));
                    }
                    writeln!(out, "{}", serde_json::Value::Object(obj))?;
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
}
