//! The engine behind every front end: open a data directory, execute statements, get typed
//! results back. Owns the catalog statements (import, load, register, roll back), the cache of
//! opened stores, the memory-node pool setup and the RUN pipeline (plan, execute, order, limit,
//! write INTO files). Prints nothing: the REPL and batch runner in `repl` render its [`Output`]s.

pub mod compute_node;
pub mod compute_run;
pub mod error;
pub mod graphs;
pub mod help;
pub mod job_memory;
pub mod output;
pub mod run;
pub mod session;
pub mod table;

pub use error::{ErrorKind, StatementError};
pub use output::{Output, RunProgress, Watcher};
pub use session::Session;
pub use table::{CellKind, TextTable};
