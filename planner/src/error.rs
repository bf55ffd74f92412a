//! Planning errors: always a position in the statement and a message that names the fault.

use grammar::Pos;

/// A semantic error in a statement (unknown name, bad value, missing FROM, ...).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}:{}: {message}", pos.line, pos.col)]
pub struct PlanError {
    /// Where the offending token stood.
    pub pos: Pos,
    pub message: String,
}

impl PlanError {
    /// An error at `pos`.
    pub fn new(pos: Pos, message: impl Into<String>) -> PlanError {
        PlanError {
            pos,
            message: message.into(),
        }
    }
}
