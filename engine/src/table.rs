//! Small tables of text cells for catalog and settings output (SHOW GRAPHS, DESCRIBE, SHOW
//! SETTINGS, PROFILE), with each column's kind so that front ends can print them for scripts
//! (CSV, typed JSON) as well as for people.

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

    /// The column names.
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// Each column's kind, in column order.
    pub fn column_kinds(&self) -> &[CellKind] {
        &self.kinds
    }

    /// The rows, each a cell per column (missing cells print empty).
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }
}
