//! The batch runner: query files, `-c` text and piped stdin. The whole script is parsed first
//! (a syntax error anywhere runs nothing); statements then run in order and the batch stops at
//! the first that fails.

use std::io::Write;

use crate::session::Session;

/// How a batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOutcome {
    /// Every statement succeeded.
    Ok,
    /// A statement failed; the error was printed.
    Failed,
    /// The user pressed Ctrl-C.
    Cancelled,
}

impl BatchOutcome {
    /// The process exit code for this outcome.
    pub fn exit_code(self) -> i32 {
        match self {
            BatchOutcome::Ok => 0,
            BatchOutcome::Failed => 1,
            BatchOutcome::Cancelled => 130,
        }
    }
}

/// Parses and runs `text`, naming `source` in errors (`error: SOURCE:LINE:COL: message`).
pub fn run_script(
    session: &mut Session,
    text: &str,
    source: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> BatchOutcome {
    let statements = match grammar::parse(text) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(
                err,
                "{}",
                crate::error::StatementError::from(e).render(source)
            );
            return BatchOutcome::Failed;
        }
    };
    for stmt in &statements {
        if let Err(e) = session.execute(stmt, out) {
            let _ = out.flush();
            let _ = writeln!(err, "{}", e.render(source));
            return if e.cancelled {
                BatchOutcome::Cancelled
            } else {
                BatchOutcome::Failed
            };
        }
    }
    let _ = out.flush();
    BatchOutcome::Ok
}
