//! The exception classes, one per kind of fault the engine reports, and the conversion of an
//! engine error into one. Every exception carries the engine's message and the statement
//! position (`line`, `column`, 1-based) as attributes.

use engine::{ErrorKind, StatementError};
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;

pyo3::create_exception!(
    _frontier,
    Error,
    PyException,
    "Any error frontier reports; `message`, `line` and `column` (1-based, in the statement text) say what and where."
);
pyo3::create_exception!(
    _frontier,
    ParseError,
    Error,
    "The statement text does not parse; `snippet` shows the line with a caret."
);
pyo3::create_exception!(
    _frontier,
    PlanError,
    Error,
    "The statement asks for what does not exist or is not allowed: an unknown graph, algorithm, parameter or setting, a bad value."
);
pyo3::create_exception!(
    _frontier,
    InputError,
    Error,
    "An input being imported (a file or a data frame) is at fault; the message names it and its line or row."
);
pyo3::create_exception!(
    _frontier,
    ReadOnlyError,
    Error,
    "A change was asked of a read-only connection (another process holds the data directory, or read_only=True)."
);
pyo3::create_exception!(
    _frontier,
    StorageError,
    Error,
    "Stored data or its I/O failed: a graph file, the catalog, a memory node."
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("PlanError", py.get_type::<PlanError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("ReadOnlyError", py.get_type::<ReadOnlyError>())?;
    m.add("StorageError", py.get_type::<StorageError>())?;
    Ok(())
}

/// The exception for a failed statement: its class from the error's kind, the message as the
/// command line shows it (position first, the caret snippet after), and the parts as attributes.
pub fn statement_error(py: Python<'_>, e: &StatementError) -> PyErr {
    let shown = if e.in_data_file {
        format!(
            "{}\n  (in the statement at line {}, column {})",
            e.message, e.pos.line, e.pos.col
        )
    } else {
        format!("{}:{}: {}", e.pos.line, e.pos.col, e.message)
    };
    let shown = match &e.snippet {
        Some(snippet) => format!("{shown}\n{}", snippet.trim_end()),
        None => shown,
    };
    let err = match e.kind {
        ErrorKind::Syntax => ParseError::new_err(shown),
        ErrorKind::Plan => PlanError::new_err(shown),
        ErrorKind::Input => InputError::new_err(shown),
        ErrorKind::ReadOnly => ReadOnlyError::new_err(shown),
        ErrorKind::Storage => StorageError::new_err(shown),
        ErrorKind::Cancelled => PyKeyboardInterrupt::new_err("statement cancelled"),
        ErrorKind::Other => Error::new_err(shown),
    };
    let value = err.value(py);
    let attrs = (|| -> PyResult<()> {
        value.setattr("message", &e.message)?;
        value.setattr("line", e.pos.line)?;
        value.setattr("column", e.pos.col)?;
        value.setattr("snippet", e.snippet.as_deref())?;
        Ok(())
    })();
    match attrs {
        Ok(()) => err,
        Err(failed) => failed,
    }
}

/// An error of the binding itself (never of the engine): a bad argument, a closed connection.
pub fn error(message: impl Into<String>) -> PyErr {
    Error::new_err(message.into())
}
