//! The frontier query language: a pest grammar (`frontier.pest`), a typed AST and parse errors
//! that carry line, column, what was expected in words, and a caret snippet.

pub mod ast;

pub use ast::*;

/// A parse error: where, what was expected, and the offending line with a caret under it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{line}:{col}: {message}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// What was expected, in words: "expected a graph name after ON".
    pub message: String,
    /// The offending source line and a caret line under the column.
    pub snippet: String,
}

/// Parses a script of `;`-terminated statements.
pub fn parse(_text: &str) -> Result<Vec<Statement>, ParseError> {
    Err(ParseError {
        line: 1,
        col: 1,
        message: "the parser is not built yet".into(),
        snippet: String::new(),
    })
}
