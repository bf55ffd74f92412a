//! The front end's session: the engine's session plus how its outputs are printed (style,
//! where status lines go, progress bars).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use engine::{Output, StatementError};
use grammar::{Statement, StatementKind};

use crate::table::print_table;

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

/// One user's session over one data directory, as the REPL and batch runner print it.
pub struct Session {
    pub engine: engine::Session,
    pub style: OutputStyle,
    /// Whether progress bars are drawn (stderr is a terminal).
    pub show_progress: bool,
    /// Where status lines ("created graph ...", "wrote N rows ...") go when they must not mix
    /// with result rows (CSV and JSON output); `None` prints them with the results.
    pub status_sink: Option<Box<dyn Write + Send>>,
}

impl Session {
    /// Opens the data directory `dir` (read-only when asked or when another process holds it),
    /// printing on stderr what opening it found.
    pub fn open(dir: &Path, style: OutputStyle, read_only: bool) -> Result<Session, String> {
        let mut engine = engine::Session::open(dir, read_only)?;
        for notice in engine.notices.drain(..) {
            eprintln!("{notice}");
        }
        Ok(Session {
            engine,
            style,
            show_progress: false,
            status_sink: match style {
                OutputStyle::Table => None,
                OutputStyle::Csv | OutputStyle::Json => Some(Box::new(std::io::stderr())),
            },
        })
    }

    /// Draws progress bars on stderr for imports and runs from now on (or stops drawing).
    pub fn set_progress(&mut self, on: bool) {
        self.show_progress = on;
        self.engine.watcher =
            on.then(|| Arc::new(crate::progress::Bars::default()) as Arc<dyn engine::Watcher>);
    }

    /// Runs one statement, printing its output to `out`.
    pub fn execute(&mut self, stmt: &Statement, out: &mut dyn Write) -> Result<(), StatementError> {
        let started = std::time::Instant::now();
        let outputs = self.engine.execute(stmt)?;
        for o in &outputs {
            self.print(o, out)
                .map_err(|e| StatementError::output(stmt.pos, &e))?;
        }
        if self.style == OutputStyle::Table && self.show_progress {
            let elapsed = started.elapsed();
            if elapsed.as_millis() >= 1 && !matches!(stmt.kind, StatementKind::Help { .. }) {
                writeln!(out, "({:.3} s)", elapsed.as_secs_f64())
                    .map_err(|e| StatementError::output(stmt.pos, &e))?;
            }
        }
        Ok(())
    }

    fn print(&mut self, output: &Output, out: &mut dyn Write) -> std::io::Result<()> {
        let people = self.style == OutputStyle::Table;
        match output {
            Output::Status(line) => match &mut self.status_sink {
                Some(sink) => writeln!(sink, "{line}"),
                None => writeln!(out, "{line}"),
            },
            Output::Rows { table, elapsed } => {
                crate::render::render(table, self.style, *elapsed, out)
            }
            Output::Table(t) => print_table(t, self.style, out),
            Output::Caption(c) if people => writeln!(out, "\n{c}:"),
            Output::Hint(h) if people => writeln!(out, "{h}"),
            Output::Caption(_) | Output::Hint(_) => Ok(()),
            Output::Text(text) => write!(out, "{text}"),
        }
    }
}
