//! Helpers shared by the engine's integration tests.

use engine::{Output, TextTable};

/// PROFILE's iteration table in `out` (the table with a `strategy` column).
pub fn profile_table(out: &[Output]) -> &TextTable {
    out.iter()
        .find_map(|o| match o {
            Output::Table(t) if t.header().iter().any(|h| h == "strategy") => Some(t),
            _ => None,
        })
        .expect("PROFILE's iteration table")
}

/// The index of `name` among `table`'s columns.
pub fn column(table: &TextTable, name: &str) -> usize {
    table
        .header()
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}
