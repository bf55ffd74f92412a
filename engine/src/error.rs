//! A failed statement, located either in the statement text or in a data file.

use grammar::{ParseError, Pos};
use planner::PlanError;
use storage::StoreError;

/// What kind of fault failed a statement, for front ends that tell them apart (a binding's
/// exception classes): what the user does about it differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text does not parse.
    Syntax,
    /// The statement parses but asks for what does not exist or is not allowed: an unknown
    /// graph, algorithm, parameter or setting, a bad value, a refused INTO path.
    Plan,
    /// An input file (or frame) being imported is at fault; the message names it and its line.
    Input,
    /// The data directory is read-only for this session (another process holds it, or it was
    /// opened so); the message says why.
    ReadOnly,
    /// Stored data or its I/O failed: a file, the catalog, a memory node.
    Storage,
    /// The user cancelled the statement.
    Cancelled,
    /// Writing the output, or anything else.
    Other,
}

/// Why a statement failed, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct StatementError {
    /// Position in the statement text (the statement's start when nothing more precise).
    pub pos: Pos,
    pub message: String,
    pub kind: ErrorKind,
    /// The source line with a caret, for parse errors.
    pub snippet: Option<String>,
    /// The message already starts with `PATH:LINE:` of the data file at fault (an importer
    /// error), so the statement position is secondary.
    pub in_data_file: bool,
    /// The statement was cancelled by the user (Ctrl-C).
    pub cancelled: bool,
    /// Writing the output failed because its reader went away (`| head`): the batch stops
    /// quietly, as Unix tools do.
    pub broken_pipe: bool,
}

impl StatementError {
    /// An error at `pos` of the statement.
    pub fn at(pos: Pos, message: impl Into<String>) -> StatementError {
        StatementError {
            pos,
            message: clipped(message.into()),
            kind: ErrorKind::Plan,
            snippet: None,
            in_data_file: false,
            cancelled: false,
            broken_pipe: false,
        }
    }

    /// Writing the statement's output (to the screen, a pipe or a file) failed.
    pub fn output(pos: Pos, e: &std::io::Error) -> StatementError {
        StatementError {
            broken_pipe: e.kind() == std::io::ErrorKind::BrokenPipe,
            kind: ErrorKind::Other,
            ..StatementError::at(pos, format!("cannot write output: {e}"))
        }
    }

    /// A storage error raised while running the statement at `pos`.
    pub fn store(pos: Pos, e: StoreError) -> StatementError {
        let cancelled = matches!(e, StoreError::Cancelled);
        let in_data_file = matches!(e, StoreError::Input { .. });
        let kind = match e {
            StoreError::Input { .. } => ErrorKind::Input,
            StoreError::Cancelled => ErrorKind::Cancelled,
            StoreError::Locked { .. } | StoreError::ReadOnly { .. } => ErrorKind::ReadOnly,
            StoreError::NoSuchGraph(_) | StoreError::GraphExists(_) => ErrorKind::Plan,
            _ => ErrorKind::Storage,
        };
        StatementError {
            pos,
            message: clipped(e.to_string()),
            kind,
            snippet: None,
            in_data_file,
            cancelled,
            broken_pipe: false,
        }
    }

    /// `error: SOURCE:LINE:COL: message` (or `error: PATH:LINE: message` for data-file errors,
    /// followed by the statement's location), with the caret snippet when there is one.
    pub fn render(&self, source: &str) -> String {
        let mut s = if self.in_data_file {
            format!(
                "error: {}\n  (in the statement at {source}:{}:{})",
                self.message, self.pos.line, self.pos.col
            )
        } else {
            format!(
                "error: {source}:{}:{}: {}",
                self.pos.line, self.pos.col, self.message
            )
        };
        if let Some(snippet) = &self.snippet {
            s.push('\n');
            s.push_str(snippet.trim_end());
        }
        s
    }
}

impl From<ParseError> for StatementError {
    fn from(e: ParseError) -> StatementError {
        StatementError {
            pos: Pos {
                line: e.line,
                col: e.col,
            },
            message: clipped(e.message),
            kind: ErrorKind::Syntax,
            snippet: Some(e.snippet).filter(|s| !s.is_empty()),
            in_data_file: false,
            cancelled: false,
            broken_pipe: false,
        }
    }
}

impl From<PlanError> for StatementError {
    fn from(e: PlanError) -> StatementError {
        StatementError::at(e.pos, e.message)
    }
}

/// `message` with the user-supplied words it echoes cut to a readable length
/// (`base::clip`): a 1 MB key or path is shown by its ends and its length.
fn clipped(message: String) -> String {
    match base::clip::clip_long_words(&message) {
        std::borrow::Cow::Borrowed(_) => message,
        std::borrow::Cow::Owned(short) => short,
    }
}
