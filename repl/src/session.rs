//! A session: the catalog handle, the settings, the output style, and the statement dispatcher
//! shared by the REPL and the batch runner.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use grammar::{Statement, StatementKind};
use planner::Settings;
use storage::catalog::{Catalog, ReadOnlyReason};
use storage::StoreError;

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
    pub(crate) stores: crate::run::StoreCache,
}

impl Session {
    /// Opens the data directory `dir` with default settings: for writing (creating it), or
    /// read-only when `read_only` is set or another process holds the directory. Warnings about
    /// a repaired catalog, files moved aside or the read-only fallback go to stderr.
    pub fn open(dir: &Path, style: OutputStyle, read_only: bool) -> Result<Session, String> {
        let opened = if read_only {
            Catalog::open_read_only(dir, ReadOnlyReason::Requested)
        } else {
            match Catalog::open(dir) {
                Err(StoreError::Locked { lock, holder }) => {
                    let why = ReadOnlyReason::Locked { lock, holder };
                    eprintln!(
                        "note: opened {} read-only: {why}; RUN, SHOW, DESCRIBE, EXPLAIN and \
                         VERIFY work, CREATE and DROP do not",
                        dir.display()
                    );
                    Catalog::open_read_only(dir, why)
                }
                other => other,
            }
        };
        let (catalog, warnings) = opened.map_err(|e| e.to_string())?;
        for w in warnings {
            eprintln!("warning: {w}");
        }
        let probed = read_probed_io_depth(dir);
        Ok(Session {
            catalog,
            settings: Settings::defaults(probed),
            style,
            cancel: Arc::new(AtomicBool::new(false)),
            show_progress: false,
            stores: Default::default(),
        })
    }

    /// The data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.catalog.dir().to_path_buf()
    }

    /// Runs one statement, writing its output to `out`.
    pub fn execute(&mut self, stmt: &Statement, out: &mut dyn Write) -> Result<(), StatementError> {
        self.cancel.store(false, Ordering::SeqCst);
        if let Some(what) = change_made_by(&stmt.kind) {
            if let Some(e) = self.catalog.read_only_error(what) {
                return Err(StatementError::store(stmt.pos, e));
            }
        }
        let started = std::time::Instant::now();
        let result = match &stmt.kind {
            StatementKind::CreateGraph(c) => crate::graphs::create(self, stmt.pos, c, out),
            StatementKind::DropGraph { name, if_exists } => {
                crate::graphs::drop(self, name, *if_exists, out)
            }
            StatementKind::ShowGraphs => crate::graphs::show(self, out),
            StatementKind::RepairCatalog => crate::graphs::repair(self, stmt.pos, out),
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

/// The change a statement makes to the data directory, named for read-only errors; `None` for
/// statements that only read (RUN ... INTO writes outside the data directory).
fn change_made_by(kind: &StatementKind) -> Option<&'static str> {
    match kind {
        StatementKind::CreateGraph(_) => Some("CREATE GRAPH"),
        StatementKind::DropGraph { .. } => Some("DROP GRAPH"),
        StatementKind::RepairCatalog => Some("REPAIR CATALOG"),
        _ => None,
    }
}

fn io_err(stmt: &Statement, e: std::io::Error) -> StatementError {
    StatementError::at(stmt.pos, format!("cannot write output: {e}"))
}

/// The device's probed concurrency, if `frontier calibrate` stored one in the data directory.
pub fn read_probed_io_depth(dir: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(dir.join("device.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("io_depth")?.as_u64().map(|d| d.clamp(1, 4096) as u32)
}
