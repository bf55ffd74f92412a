//! What a statement gives back, and the hooks a front end supplies to show progress.

use std::sync::Arc;
use std::time::Duration;

use exec::ResultTable;
use planner::RunPlan;
use storage::import::ImportProgress;

use crate::table::TextTable;

/// One piece of a statement's output, in the order it should be shown.
pub enum Output {
    /// What the statement did ("created graph g: ...", "wrote 10 rows ..."): a front end that
    /// prints rows for scripts keeps these apart from the rows.
    Status(String),
    /// A RUN's result rows, and the statement's wall time up to the rows.
    Rows {
        table: ResultTable,
        elapsed: Duration,
    },
    /// A small table (SHOW GRAPHS, DESCRIBE, SHOW SETTINGS, PROFILE).
    Table(TextTable),
    /// A caption for the next table, for people ("profile (memory; algorithm 0.1 s)").
    Caption(String),
    /// A hint for people, not data ("(no graphs yet: ...)").
    Hint(String),
    /// Text shown as it is (EXPLAIN, HELP).
    Text(String),
}

/// A run's progress callback, as `exec` calls it.
pub type RunProgress = Arc<dyn Fn(exec::Progress) + Send + Sync>;

/// Told about long work while a statement runs, so a front end can draw progress.
pub trait Watcher: Send + Sync {
    /// An import of `source` reports its counts (called repeatedly).
    fn import_progress(&self, source: &str, progress: &ImportProgress);
    /// The import ended (successfully or not).
    fn import_done(&self);
    /// A run of `plan` starts: the callback to report its iterations to, if any.
    fn run_started(&self, plan: &RunPlan) -> Option<RunProgress>;
    /// The run ended.
    fn run_done(&self);
}
