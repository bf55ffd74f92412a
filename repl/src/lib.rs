//! The `frontier` front end: the session (settings, catalog handle), the REPL, the batch
//! runner, result rendering and progress bars. Contains no engine logic.

pub mod batch;
pub mod error;
pub mod graphs;
pub mod help;
pub mod interactive;
pub mod progress;
pub mod render;
pub mod run;
pub mod session;
pub mod table;

pub use batch::{run_script, BatchOutcome};
pub use error::StatementError;
pub use session::{OutputStyle, Session};
