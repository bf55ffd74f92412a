//! Printing the engine's small tables in the session's style: aligned for people, CSV or
//! typed JSON lines for scripts.

use std::io::{self, Write};

use engine::{CellKind, TextTable};

use crate::session::OutputStyle;

/// Prints `t` in `style`.
pub fn print_table(t: &TextTable, style: OutputStyle, out: &mut dyn Write) -> io::Result<()> {
    match style {
        OutputStyle::Table => print_aligned(t, out),
        OutputStyle::Csv => {
            writeln!(
                out,
                "{}",
                t.header()
                    .iter()
                    .map(|c| csv_cell(c))
                    .collect::<Vec<_>>()
                    .join(",")
            )?;
            for r in t.rows() {
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
            for r in t.rows() {
                let fields: Vec<String> = t
                    .header()
                    .iter()
                    .enumerate()
                    .map(|(i, h)| {
                        let cell = r.get(i).map(String::as_str).unwrap_or_default();
                        format!(
                            "{}:{}",
                            serde_json::Value::from(h.as_str()),
                            json_value(cell, t.column_kinds()[i])
                        )
                    })
                    .collect();
                writeln!(out, "{{{}}}", fields.join(","))?;
            }
            Ok(())
        }
    }
}

fn print_aligned(t: &TextTable, out: &mut dyn Write) -> io::Result<()> {
    let cols = t.header().len();
    let mut width: Vec<usize> = t.header().iter().map(|h| h.chars().count()).collect();
    for r in t.rows() {
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
    writeln!(out, "{}", line(t.header()))?;
    writeln!(
        out,
        "{}",
        width
            .iter()
            .map(|w| "─".repeat(*w))
            .collect::<Vec<_>>()
            .join("─┼─")
    )?;
    for r in t.rows() {
        writeln!(out, "{}", line(r))?;
    }
    Ok(())
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
        print_table(&t, OutputStyle::Table, &mut s).unwrap();
        assert_eq!(
            String::from_utf8(s).unwrap(),
            "name │ value\n─────┼──────\na    │ 1,2\n"
        );
        let mut s = Vec::new();
        print_table(&t, OutputStyle::Csv, &mut s).unwrap();
        assert_eq!(String::from_utf8(s).unwrap(), "name,value\na,\"1,2\"\n");
        let mut s = Vec::new();
        print_table(&t, OutputStyle::Json, &mut s).unwrap();
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
        print_table(&t, OutputStyle::Json, &mut s).unwrap();
        assert_eq!(
            String::from_utf8(s).unwrap(),
            "{\"name\":\"7\",\"n\":18446744073709551615,\"x\":0.5,\"flag\":true,\"missing\":null}\n"
        );
    }
}
