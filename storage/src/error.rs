//! The storage crate's errors. Every variant names the file, setting or peer at fault.

use std::path::PathBuf;

/// Errors of the catalog, importers, readers and the disaggregated store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An I/O error on a named file.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A graph file that failed its checks; never half-read.
    #[error("{path}: corrupt graph file: {why}")]
    Corrupt { path: PathBuf, why: String },
    /// Malformed input to an importer, with the line (1-based) when there is one (0 when the
    /// fault is in no line: a Parquet schema, a missing banner).
    #[error("{}{}: {message}", .path.display(), line_suffix(*.line))]
    Input {
        path: PathBuf,
        line: u64,
        message: String,
    },
    /// The catalog could not be read or written.
    #[error("catalog {path}: {message}")]
    Catalog { path: PathBuf, message: String },
    /// Another process holds the data directory's writer lock.
    #[error("the data directory is in use by another frontier process{} (lock {})", holder.map(|p| format!(" (pid {p})")).unwrap_or_default(), lock.display())]
    Locked { lock: PathBuf, holder: Option<u32> },
    /// A change asked of a read-only session.
    #[error("{what} needs to change {dir}, but this session is read-only: {why}")]
    ReadOnly {
        dir: PathBuf,
        what: String,
        why: String,
    },
    /// A graph's file is not the file its catalog entry registered.
    #[error("graph `{graph}`: {path} is not this graph's file: {found}; restore the graph's own file, or re-create the graph with CREATE OR REPLACE GRAPH")]
    WrongFile {
        graph: String,
        path: PathBuf,
        found: String,
    },
    /// No graph of that name.
    #[error("graph `{0}` does not exist")]
    NoSuchGraph(String),
    /// A graph of that name exists already (CREATE without OR REPLACE).
    #[error("graph `{0}` already exists (use CREATE OR REPLACE GRAPH to replace it)")]
    GraphExists(String),
    /// A remote memory node failed or refused.
    #[error("memory node {node}: {message}")]
    Remote { node: String, message: String },
    /// The operation was cancelled (Ctrl-C).
    #[error("cancelled")]
    Cancelled,
    /// Anything else, with a message that names what is at fault.
    #[error("{0}")]
    Other(String),
}

impl StoreError {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result of the storage crate.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// `:LINE` after an input file's name, or nothing when no line is at fault.
fn line_suffix(line: u64) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}")
    }
}
