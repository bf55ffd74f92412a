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
    /// The reader of the output went away (`frontier ... | head`); nothing was printed.
    BrokenPipe,
}

impl BatchOutcome {
    /// The process exit code for this outcome.
    pub fn exit_code(self) -> i32 {
        match self {
            BatchOutcome::Ok => 0,
            BatchOutcome::Failed => 1,
            BatchOutcome::Cancelled => 130,
            // What a shell reports for a process ended by SIGPIPE (128 + 13).
            BatchOutcome::BrokenPipe => 141,
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
            let _ = writeln!(err, "{}", engine::StatementError::from(e).render(source));
            return BatchOutcome::Failed;
        }
    };
    for stmt in &statements {
        // A Ctrl-C that came between two statements stops the batch too.
        if session
            .engine
            .cancel
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            let _ = writeln!(
                err,
                "cancelled before {source}:{}:{}",
                stmt.pos.line, stmt.pos.col
            );
            return BatchOutcome::Cancelled;
        }
        if let Err(e) = session.execute(stmt, out) {
            if e.broken_pipe || is_broken_pipe(out.flush()) {
                return BatchOutcome::BrokenPipe;
            }
            let _ = writeln!(err, "{}", e.render(source));
            return if e.cancelled {
                BatchOutcome::Cancelled
            } else {
                BatchOutcome::Failed
            };
        }
    }
    if is_broken_pipe(out.flush()) {
        return BatchOutcome::BrokenPipe;
    }
    BatchOutcome::Ok
}

fn is_broken_pipe(r: std::io::Result<()>) -> bool {
    r.is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}
