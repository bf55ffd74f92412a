//! The `frontier` front end: the REPL, the batch runner, result rendering and progress bars,
//! over the engine's session. Contains no engine logic.

pub mod batch;
pub mod complete;
pub mod interactive;
pub mod progress;
pub mod render;
pub mod session;
pub mod table;

pub use batch::{run_script, BatchOutcome};
pub use engine::StatementError;
pub use session::{OutputStyle, Session};
