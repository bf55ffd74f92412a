//! A connection: one `engine::Session` over a data directory, the same directory the command
//! line uses, with its rules: one process writes it, others open it read-only.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, TryLockError};
use std::time::Duration;

use engine::{Output, Session, StatementError};
use grammar::{CreateGraph, Ident, Literal, Param, Pos, Statement, StatementKind, Value};
use pyo3::prelude::*;

use crate::errors::{error, statement_error};
use crate::frame::record_batches;
use crate::progress::{ProgressDisplay, ProgressWatch};
use crate::result::QueryResult;
use crate::waiting::run_cancellable;

/// How long a statement runs before its progress shows, unless the connection says otherwise.
const DEFAULT_PROGRESS_DELAY: Duration = Duration::from_secs(1);

/// A session over a frontier data directory.
#[pyclass(module = "frontier._frontier", subclass)]
pub struct Connection {
    session: Mutex<Option<Session>>,
    watch: Arc<ProgressWatch>,
    /// How long a statement runs before its progress shows; `None` shows none.
    progress_delay: Mutex<Option<Duration>>,
    path: PathBuf,
    read_only: bool,
    notices: Vec<String>,
}

impl Connection {
    /// Runs `work` on the session with the GIL released, cancellable by Ctrl-C, with progress.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&mut Session) -> Result<T, StatementError> + Send,
    ) -> PyResult<T> {
        let mut guard = match self.session.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => {
                return Err(error(
                    "this connection is running a statement in another thread; \
                     open a connection per thread",
                ))
            }
        };
        let session = guard
            .as_mut()
            .ok_or_else(|| error("the connection is closed"))?;
        let display = self
            .progress_delay
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map(|delay| ProgressDisplay::new(self.watch.clone(), delay));
        run_cancellable(py, session, display.as_ref(), work)?.map_err(|e| statement_error(py, &e))
    }

    fn result(&self, outputs: Vec<Output>) -> PyResult<QueryResult> {
        QueryResult::from_outputs(outputs)
            .map_err(|e| error(format!("cannot build the result table: {e}")))
    }
}

/// Reads `connect(progress=...)`: `True` (or `None`, the default) shows progress after a
/// second, `False` never, a number after that many seconds.
fn progress_delay(progress: &Bound<'_, PyAny>) -> PyResult<Option<Duration>> {
    if progress.is_none() {
        return Ok(Some(DEFAULT_PROGRESS_DELAY));
    }
    if let Ok(on) = progress.extract::<bool>() {
        return Ok(on.then_some(DEFAULT_PROGRESS_DELAY));
    }
    let secs = progress.extract::<f64>().ok();
    match secs.and_then(|s| Duration::try_from_secs_f64(s).ok()) {
        Some(delay) => Ok(Some(delay)),
        None => Err(error(format!(
            "progress must be True, False or a number of seconds (>= 0), got {}",
            progress.repr()?
        ))),
    }
}

/// Whether `name` can be written as a graph name in a statement.
fn is_graph_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !grammar::KEYWORDS
            .iter()
            .any(|k| k.eq_ignore_ascii_case(name))
}

#[pymethods]
impl Connection {
    #[new]
    #[pyo3(signature = (path, *, read_only = false, threads = None, progress = None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        read_only: bool,
        threads: Option<u32>,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Connection> {
        let delay = match &progress {
            Some(p) => progress_delay(p)?,
            None => Some(DEFAULT_PROGRESS_DELAY),
        };
        let dir = path.clone();
        let mut session = py
            .detach(move || Session::open(&dir, read_only))
            .map_err(crate::errors::StorageError::new_err)?;
        let watch = Arc::new(ProgressWatch::default());
        session.watcher = Some(watch.clone());
        let notices = std::mem::take(&mut session.notices);
        let read_only = session.catalog.read_only().is_some();
        let conn = Connection {
            session: Mutex::new(Some(session)),
            watch,
            progress_delay: Mutex::new(delay),
            path,
            read_only,
            notices,
        };
        if let Some(n) = threads {
            conn.run(py, move |s| s.execute_text(&format!("SET threads = {n};")))?;
        }
        Ok(conn)
    }

    /// Runs one or more statements (`;` between them; the last may omit it) and returns the
    /// result: the rows of the last RUN (or the last table), the status lines and the text.
    fn execute(&self, py: Python<'_>, sql: &str) -> PyResult<QueryResult> {
        let text = with_final_semicolon(sql);
        let outputs = self.run(py, move |s| s.execute_text(&text))?;
        self.result(outputs)
    }

    /// The plan of a RUN statement (`EXPLAIN` is added when missing), as text.
    fn explain(&self, py: Python<'_>, sql: &str) -> PyResult<String> {
        let trimmed = sql.trim_start();
        let has_explain = trimmed
            .get(..7)
            .is_some_and(|w| w.eq_ignore_ascii_case("explain"));
        let text = if has_explain {
            with_final_semicolon(sql)
        } else {
            with_final_semicolon(&format!("EXPLAIN {sql}"))
        };
        let outputs = self.run(py, move |s| s.execute_text(&text))?;
        Ok(self.result(outputs)?.text())
    }

    /// Creates graph `name` from `edges` (an object with `__arrow_c_stream__`), read batch by
    /// batch; `source` names it in messages; `vertices` is a vertex file (one key per line)
    /// defining the vertex set, isolated vertices included. The Python `create_graph`
    /// prepares the frame.
    #[pyo3(signature = (name, edges, source, *, src = None, dst = None, weight = None, directed = true, replace = false, vertices = None))]
    #[allow(clippy::too_many_arguments)]
    fn _create_graph(
        &self,
        py: Python<'_>,
        name: &str,
        edges: &Bound<'_, PyAny>,
        source: &str,
        src: Option<String>,
        dst: Option<String>,
        weight: Option<String>,
        directed: bool,
        replace: bool,
        vertices: Option<PathBuf>,
    ) -> PyResult<QueryResult> {
        if !is_graph_name(name) {
            return Err(crate::errors::PlanError::new_err(format!(
                "`{name}` cannot name a graph: use letters, digits and `_`, not starting with a \
                 digit, and no keyword of the language"
            )));
        }
        let mut reader = record_batches(edges)?;
        let pos = Pos { line: 1, col: 1 };
        let option = |key: &str, column: Option<String>| {
            column.map(|c| Param {
                key: Ident {
                    name: key.into(),
                    pos,
                },
                value: Literal {
                    value: Value::Str(c),
                    pos,
                },
            })
        };
        let weighted = weight.is_some();
        let options = [
            option("src", src),
            option("dst", dst),
            option("weight", weight),
        ]
        .into_iter()
        .flatten()
        .collect();
        let stmt = Statement {
            kind: StatementKind::CreateGraph(CreateGraph {
                or_replace: replace,
                name: Ident {
                    name: name.into(),
                    pos,
                },
                source: source.into(),
                source_pos: pos,
                format: None,
                directed: Some(directed),
                weighted,
                vertices: vertices.map(|p| p.to_string_lossy().into_owned()),
                storage: None,
                options,
            }),
            pos,
        };
        let outputs = self.run(py, move |s| s.create_graph_from_batches(&stmt, &mut reader))?;
        self.result(outputs)
    }

    /// Closes the connection: the data directory is released for other processes. Further
    /// statements raise `frontier.Error`.
    fn close(&self) {
        let mut guard = self.session.lock().unwrap_or_else(|e| e.into_inner());
        *guard = None;
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    /// The data directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Whether this connection may only read (asked for, or another process holds the data
    /// directory); `notices` says why.
    #[getter]
    fn read_only(&self) -> bool {
        self.read_only
    }

    /// What opening the directory found and did (a catalog rebuilt, a read-only fallback).
    #[getter]
    fn notices(&self) -> Vec<String> {
        self.notices.clone()
    }

    /// Seconds a statement runs before its progress shows; `None` for never.
    #[getter]
    fn get_progress(&self) -> Option<f64> {
        self.progress_delay
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map(|d| d.as_secs_f64())
    }

    #[setter]
    fn set_progress(&self, progress: &Bound<'_, PyAny>) -> PyResult<()> {
        *self
            .progress_delay
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = progress_delay(progress)?;
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "<frontier.Connection {}{}>",
            self.path.display(),
            if self.read_only { " (read-only)" } else { "" }
        )
    }
}

/// `sql` ending in `;`: like the command line's `-c`, `execute` takes a lone statement without
/// one. The `;` goes on the last line, so that an error about the statement's end points there,
/// unless that line may end in a `--` comment.
fn with_final_semicolon(sql: &str) -> String {
    if !grammar::missing_final_semicolon(sql) {
        return sql.to_string();
    }
    let sql = sql.trim_end();
    let last_line = sql.rsplit('\n').next().unwrap_or("");
    if last_line.contains("--") {
        format!("{sql}\n;")
    } else {
        format!("{sql} ;")
    }
}
