//! The executor's error type: what a run can end with besides a result.

use storage::StoreError;

/// Why a run produced no result.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The run's cancel flag was raised (Ctrl-C); partial work is discarded.
    #[error("cancelled")]
    Cancelled,
    /// The store failed to deliver adjacency (I/O, checksum, a remote node gone).
    #[error(transparent)]
    Store(StoreError),
    /// Anything else (a thread pool that could not start, an Arrow error), with a message that
    /// names what is at fault.
    #[error("{0}")]
    Other(String),
}

impl From<StoreError> for ExecError {
    /// A store that noticed the cancellation itself reports it as our own `Cancelled`, so callers
    /// have one variant to match on.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Cancelled => ExecError::Cancelled,
            other => ExecError::Store(other),
        }
    }
}

impl From<arrow_schema::ArrowError> for ExecError {
    fn from(e: arrow_schema::ArrowError) -> Self {
        ExecError::Other(format!("building the result: {e}"))
    }
}
