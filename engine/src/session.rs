//! A session: one data directory's catalog, the settings, the opened stores, and the statement
//! dispatcher. Every front end (the REPL, the batch runner, tests, a future binding) executes
//! statements through it and gets typed [`Output`]s back; printing them is the front end's job.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow_array::RecordBatchReader;
use grammar::{Statement, StatementKind};
use planner::Settings;
use storage::catalog::{Catalog, ReadOnlyReason};
use storage::StoreError;

use crate::error::StatementError;
use crate::graphs::EdgeSource;
use crate::output::{Output, Watcher};
use crate::table::TextTable;

/// One user's session over one data directory.
pub struct Session {
    pub catalog: Catalog,
    pub settings: Settings,
    /// Set by Ctrl-C (or any front end's cancel); cleared before each statement.
    pub cancel: Arc<AtomicBool>,
    /// Told about long imports and runs, to draw progress; `None` draws nothing.
    pub watcher: Option<Arc<dyn Watcher>>,
    /// What opening the directory found and did (a catalog rebuilt, files moved aside, a
    /// read-only fallback), for the front end to show once.
    pub notices: Vec<String>,
    pub(crate) stores: crate::run::StoreCache,
}

impl Session {
    /// Opens the data directory `dir` with default settings: for writing (creating it), or
    /// read-only when `read_only` is set or another process holds the directory.
    pub fn open(dir: &Path, read_only: bool) -> Result<Session, String> {
        let mut notices = Vec::new();
        let opened = if read_only {
            Catalog::open_read_only(dir, ReadOnlyReason::Requested)
        } else {
            match Catalog::open(dir) {
                Err(StoreError::Locked { lock, holder }) => {
                    read_only_fallback(dir, ReadOnlyReason::Locked { lock, holder }, &mut notices)
                }
                // An existing directory this process may only read (another user's, a
                // read-only mount): reading it is still useful.
                Err(StoreError::Io { path, source })
                    if dir.is_dir()
                        && matches!(
                            source.kind(),
                            std::io::ErrorKind::PermissionDenied
                                | std::io::ErrorKind::ReadOnlyFilesystem
                        ) =>
                {
                    let why = ReadOnlyReason::Unwritable {
                        path,
                        why: source.to_string(),
                    };
                    read_only_fallback(dir, why, &mut notices)
                }
                other => other,
            }
        };
        let (catalog, warnings) = opened.map_err(|e| e.to_string())?;
        notices.extend(warnings.into_iter().map(|w| format!("warning: {w}")));
        let probed = read_probed_io_depth(dir);
        Ok(Session {
            catalog,
            settings: Settings::defaults(probed),
            cancel: Arc::new(AtomicBool::new(false)),
            watcher: None,
            notices,
            stores: Default::default(),
        })
    }

    /// The data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.catalog.dir().to_path_buf()
    }

    /// Parses `text` and runs its statements in order, stopping at the first that fails.
    pub fn execute_text(&mut self, text: &str) -> Result<Vec<Output>, StatementError> {
        let mut outputs = Vec::new();
        for stmt in grammar::parse(text)? {
            outputs.extend(self.execute(&stmt)?);
        }
        Ok(outputs)
    }

    /// Runs one statement.
    pub fn execute(&mut self, stmt: &Statement) -> Result<Vec<Output>, StatementError> {
        self.begin(stmt)?;
        match &stmt.kind {
            StatementKind::CreateGraph(c) => {
                crate::graphs::create(self, stmt.pos, c, EdgeSource::File)
            }
            StatementKind::DropGraph { name, if_exists } => {
                crate::graphs::drop(self, name, *if_exists)
            }
            StatementKind::ShowGraphs => crate::graphs::show(self),
            StatementKind::RepairCatalog => crate::graphs::repair(self, stmt.pos),
            StatementKind::DescribeGraph { name } => crate::graphs::describe(self, name),
            StatementKind::VerifyGraph { name } => crate::graphs::verify(self, name),
            StatementKind::Run { mode, run } => crate::run::run(self, stmt.pos, *mode, run),
            StatementKind::Set { name, value } => {
                self.settings.set(name, value)?;
                self.stores.clear();
                Ok(Vec::new())
            }
            StatementKind::ShowSettings => {
                let mut t = TextTable::new(&["name", "value", "meaning"]);
                for (n, v, m) in self.settings.rows() {
                    t.row(vec![n, v, m]);
                }
                Ok(vec![Output::Table(t)])
            }
            StatementKind::Help { topic: None } => Ok(vec![Output::Text(crate::help::text())]),
            StatementKind::Help { topic: Some(t) } => {
                Ok(vec![Output::Text(crate::help::topic(t, &self.settings)?)])
            }
        }
    }

    /// Runs `CREATE GRAPH` (`stmt`, whose kind must be a CREATE) with its edges taken from
    /// `batches`, Arrow record batches in memory (a data frame), instead of the file it names:
    /// its source only labels the input. Batches are read one at a time, so the import stays
    /// within `import_memory` whatever the frame's size.
    pub fn create_graph_from_batches(
        &mut self,
        stmt: &Statement,
        batches: &mut dyn RecordBatchReader,
    ) -> Result<Vec<Output>, StatementError> {
        let StatementKind::CreateGraph(c) = &stmt.kind else {
            return Err(StatementError::at(
                stmt.pos,
                "edges from record batches need a CREATE GRAPH statement",
            ));
        };
        self.begin(stmt)?;
        crate::graphs::create(self, stmt.pos, c, EdgeSource::Batches(batches))
    }

    /// Clears the cancel flag, and refuses a change to a read-only data directory.
    fn begin(&mut self, stmt: &Statement) -> Result<(), StatementError> {
        self.cancel.store(false, Ordering::SeqCst);
        if let Some(what) = change_made_by(&stmt.kind) {
            if let Some(e) = self.catalog.read_only_error(what) {
                return Err(StatementError::store(stmt.pos, e));
            }
        }
        Ok(())
    }
}

/// Opens `dir` read-only because it cannot be opened for writing, saying so.
fn read_only_fallback(
    dir: &Path,
    why: ReadOnlyReason,
    notices: &mut Vec<String>,
) -> storage::Result<(Catalog, Vec<String>)> {
    notices.push(format!(
        "note: opened {} read-only: {why}; RUN, SHOW, DESCRIBE, EXPLAIN and VERIFY work, \
         CREATE and DROP do not",
        dir.display()
    ));
    Catalog::open_read_only(dir, why)
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

/// The device's probed concurrency, if `frontier calibrate` stored one in the data directory.
pub fn read_probed_io_depth(dir: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(dir.join("device.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("io_depth")?.as_u64().map(|d| d.clamp(1, 4096) as u32)
}
