//! A session: the catalog handle, the settings, the output style, and the statement dispatcher
//! shared by the REPL and the batch runner.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use grammar::{Statement, StatementKind};
use planner::Settings;
use storage::catalog::Catalog;

use crate::error::StatementError;
use crate::table::TextTable;

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStyle {
    /// An aligned table of the first rows, then a row count and time.
    Table,
    /// Every row as CSV, for scripts.
    Csv,
    /// Every row as a JSON object per line, for scripts.
    Json,
}

/// One user's session over one data directory.
pub struct Session {
    pub catalog: Catalog,
    pub settings: Settings,
    pub style: OutputStyle,
    /// Set by Ctrl-C; cleared before each statement.
    pub cancel: Arc<AtomicBool>,
    /// Whether progress bars may be drawn (stderr is a terminal).
    pub show_progress: bool,
    /// Where status lines ("created graph ...", "wrote N rows ...") go when they must not mix
    /// with result rows (CSV and JSON output); `None` prints them with the results.
    pub status_sink: Option<Box<dyn Write + Send>>,
    pub(crate) stores: crate::run::StoreCache,
}

impl Session {
    /// Opens the data directory `dir` (creating it), with default settings.
    pub fn open(dir: &Path, style: OutputStyle) -> Result<Session, String> {
        let catalog = Catalog::open(dir).map_err(|e| e.to_string())?;
        let probed = read_probed_io_depth(dir);
        Ok(Session {
            catalog,
            settings: Settings::defaults(probed),
            style,
            cancel: Arc::new(AtomicBool::new(false)),
            show_progress: false,
            status_sink: match style {
                OutputStyle::Table => None,
                OutputStyle::Csv | OutputStyle::Json => Some(Box::new(std::io::stderr())),
            },
            stores: Default::default(),
        })
    }

    /// The data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.catalog.dir().to_path_buf()
    }

    /// Writes a status line: to `out` beside table output, else to the status sink, so that
    /// CSV and JSON on stdout hold result rows only.
    pub fn status(
        &mut self,
        out: &mut dyn Write,
        line: std::fmt::Arguments<'_>,
    ) -> std::io::Result<()> {
        match &mut self.status_sink {
            Some(sink) => writeln!(sink, "{line}"),
            None => writeln!(out, "{line}"),
        }
    }

    /// Runs one statement, writing its output to `out`.
    pub fn execute(&mut self, stmt: &Statement, out: &mut dyn Write) -> Result<(), StatementError> {
        self.cancel.store(false, Ordering::SeqCst);
        let started = std::time::Instant::now();
        let result = match &stmt.kind {
            StatementKind::CreateGraph(c) => crate::graphs::create(self, stmt.pos, c, out),
            StatementKind::DropGraph { name, if_exists } => {
                crate::graphs::drop(self, name, *if_exists, out)
            }
            StatementKind::ShowGraphs => crate::graphs::show(self, out),
            StatementKind::DescribeGraph { name } => crate::graphs::describe(self, name, out),
            StatementKind::VerifyGraph { name } => crate::graphs::verify(self, name, out),
            StatementKind::Run { mode, run } => crate::run::run(self, stmt.pos, *mode, run, out),
            StatementKind::Set { name, value } => {
                self.settings.set(name, value)?;
                self.stores.clear();
                Ok(())
            }
            StatementKind::ShowSettings => {
                let mut t = TextTable::new(&["name", "value", "meaning"]);
                for (n, v, m) in self.settings.rows() {
                    t.row(vec![n, v, m]);
                }
                t.print(self.style, out).map_err(|e| io_err(stmt, e))
            }
            StatementKind::Help => {
                write!(out, "{}", crate::help::text()).map_err(|e| io_err(stmt, e))
            }
        };
        if result.is_ok() && self.style == OutputStyle::Table && self.show_progress {
            let elapsed = started.elapsed();
            if elapsed.as_millis() >= 1 && !matches!(stmt.kind, StatementKind::Help) {
                let _ = writeln!(out, "({:.3} s)", elapsed.as_secs_f64());
            }
        }
        result
    }
}

fn io_err(stmt: &Statement, e: std::io::Error) -> StatementError {
    StatementError::output(stmt.pos, &e)
}

/// The device's probed concurrency, if `frontier calibrate` stored one in the data directory.
pub fn read_probed_io_depth(dir: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(dir.join("device.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("io_depth")?.as_u64().map(|d| d.clamp(1, 4096) as u32)
}
