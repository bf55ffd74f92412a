//! The frontier query language: a pest grammar (`frontier.pest`), a typed AST and parse errors
//! that carry line, column, what was expected in words, and a caret snippet.
//!
//! ```
//! let stmts = grammar::parse("RUN pagerank ON web ITER 10 damping 0.85;").unwrap();
//! assert_eq!(stmts.len(), 1);
//!
//! let err = grammar::parse("RUN pagerank ON ;").unwrap_err();
//! assert_eq!((err.line, err.col), (1, 17));
//! assert!(err.message.starts_with("expected a graph name after ON"));
//! ```
//!
//! Modules: `frontier.pest` is the language; `parser` is the generated pest parser; `builder`
//! turns pest pairs into [`ast`] nodes; `wording` turns pest failures into sentences; `scan` is a
//! forgiving tokenizer used for error context and [`statement_complete`]; `nesting` refuses
//! expressions nested deeper than [`MAX_EXPR_DEPTH`]; `location` maps byte offsets to
//! line:column and draws the caret snippet.

pub mod ast;
mod builder;
mod location;
mod nesting;
mod parser;
mod scan;
mod wording;

pub use ast::*;
pub use location::SNIPPET_CHARS;
pub use nesting::MAX_EXPR_DEPTH;

use pest::Parser as _;

use location::LineIndex;
use parser::{FrontierParser, Rule};

/// The reserved keywords of the language, upper-case (for tab completion). None of them can be
/// used as a graph, algorithm, parameter, setting or column name, nor as a bare-word value.
pub const KEYWORDS: &[&str] = &[
    "ASC",
    "BY",
    "CREATE",
    "DESC",
    "DESCRIBE",
    "DIRECTED",
    "DROP",
    "EXISTS",
    "EXPLAIN",
    "FORMAT",
    "FROM",
    "GRAPH",
    "GRAPHS",
    "HELP",
    "IF",
    "INTO",
    "ITER",
    "LIMIT",
    "ON",
    "OR",
    "ORDER",
    "PROFILE",
    "REPLACE",
    "RUN",
    "SET",
    "SETTINGS",
    "SHOW",
    "STORAGE",
    "UNDIRECTED",
    "VERIFY",
    "VERTICES",
    "WEIGHTED",
];

/// The words `CREATE GRAPH ... FORMAT` accepts (not reserved: only meaningful after FORMAT).
pub const INPUT_FORMATS: &[&str] = &["edgelist", "graphalytics", "csv", "parquet", "mtx"];

/// The words `RUN ... INTO 'path' FORMAT` accepts.
pub const OUTPUT_FORMATS: &[&str] = &["parquet", "arrow", "csv", "graphalytics"];

/// The words `CREATE GRAPH ... STORAGE` accepts.
pub const STORAGE_KINDS: &[&str] = &["blockfile", "memory", "dm"];

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

impl ParseError {
    fn at(lines: &LineIndex<'_>, offset: usize, message: String) -> Self {
        let pos = lines.pos(offset);
        ParseError {
            line: pos.line,
            col: pos.col,
            message,
            snippet: lines.snippet(pos),
        }
    }

    /// The error as a batch run prints it: `SOURCE:LINE:COL: message`, a newline, then the
    /// offending line and the caret line. `source_name` is a file name, or e.g. `<stdin>`.
    pub fn render(&self, source_name: &str) -> String {
        format!(
            "{source_name}:{}:{}: {}\n{}",
            self.line, self.col, self.message, self.snippet
        )
    }
}

/// Parses a script of `;`-terminated statements.
///
/// Returns the statements in order, or the first error in the text. Empty text and text of only
/// whitespace and comments give no statements. Never panics.
pub fn parse(text: &str) -> Result<Vec<Statement>, ParseError> {
    // The parser recurses once per level of nesting, with large frames: refuse what is nested
    // past the limit, and parse what is nested deeply on a thread whose stack holds the limit.
    let nesting = nesting::deepest(text, &scan::scan(text));
    if let Err(at) = nesting {
        return Err(ParseError::at(
            &LineIndex::new(text),
            at,
            builder::too_deep_message(),
        ));
    }
    if nesting.is_ok_and(|depth| depth > nesting::SHALLOW) {
        return std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("frontier-parse".into())
                .stack_size(nesting::DEEP_PARSE_STACK)
                .spawn_scoped(scope, || parse_nested(text))
                .map_err(|e| ParseError {
                    line: 1,
                    col: 1,
                    message: format!("cannot start the parser's thread: {e}"),
                    snippet: String::new(),
                })?
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
    }
    parse_nested(text)
}

/// [`parse`] once the nesting is known to be within the limit.
fn parse_nested(text: &str) -> Result<Vec<Statement>, ParseError> {
    let lines = LineIndex::new(text);
    let built = |source: &str| -> Option<Result<Vec<Statement>, ParseError>> {
        let pair = FrontierParser::parse(Rule::script, source).ok()?.next()?;
        Some(builder::script(pair, &lines).map_err(|e| ParseError::at(&lines, e.offset, e.message)))
    };
    match FrontierParser::parse(Rule::script, text) {
        Ok(mut pairs) => match pairs.next() {
            Some(pair) => builder::script(pair, &lines)
                .map_err(|e| ParseError::at(&lines, e.offset, e.message)),
            None => Ok(Vec::new()),
        },
        Err(failure) => {
            let at = match failure.location {
                pest::error::InputLocation::Pos(p) => p,
                pest::error::InputLocation::Span((p, _)) => p,
            };
            let positives = match &failure.variant {
                pest::error::ErrorVariant::ParsingError { positives, .. } => positives.clone(),
                pest::error::ErrorVariant::CustomError { .. } => Vec::new(),
            };
            let tokens = scan::scan(text);
            // The statements before the failing one parsed; an error the builder finds in them
            // (an out-of-range number, say) comes first in the text, so it is the one to report.
            if let Some(semi) = tokens.iter().rev().find(|t| t.end <= at && t.is_semi(text)) {
                if let Some(Err(earlier)) = built(&text[..semi.end]) {
                    return Err(earlier);
                }
            }
            let worded = wording::syntax_error(text, &tokens, at, &positives);
            Err(ParseError::at(&lines, worded.offset, worded.message))
        }
    }
}

/// Whether a REPL entry is finished: `text` holds at least one `;` outside strings and comments,
/// and nothing but whitespace and comments after the last one.
///
/// This is deliberately not "does it parse": an entry with a syntax error but a final `;` is
/// complete (and then reported), while an entry inside an open string is not.
pub fn statement_complete(text: &str) -> bool {
    scan::scan(text).last().is_some_and(|t| t.is_semi(text))
}

/// Whether `text` has a statement after its last `;` (or none at all): what `-c 'SHOW GRAPHS'`
/// leaves off. Text of only whitespace and comments has nothing missing.
pub fn missing_final_semicolon(text: &str) -> bool {
    scan::scan(text).last().is_some_and(|t| !t.is_semi(text))
}
