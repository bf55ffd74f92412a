//! The nesting limit of expressions, checked on tokens before the parser runs.
//!
//! The parser and everything after it (the builder, the planner's checks, the evaluator) recurse
//! once per level of parentheses and prefix operators, so an expression nested tens of thousands
//! of levels deep would overflow the stack. Like SQLite's and DuckDB's expression depth limit,
//! frontier refuses an expression nested more than [`MAX_EXPR_DEPTH`] levels, with the position
//! of the token that goes past it. Long flat chains (`a OR b OR ...`, `x + 0 + 0 ...`) are not
//! nesting here; the builder keeps their trees shallow or counts them (`builder`).

use crate::scan::{Tok, TokKind};

/// The deepest an expression may nest: parentheses, `NOT`, unary minus, and chains of
/// arithmetic operators (each of which makes its tree one level deeper).
pub const MAX_EXPR_DEPTH: usize = 1000;

/// Nesting up to which the parser runs on the caller's stack: pest takes about 10 KiB of stack
/// a level in a release build and four times that in a debug one, and a thread may have 2 MiB.
pub(crate) const SHALLOW: usize = 32;

/// The stack of the thread that parses text nested deeper than [`SHALLOW`]: room for
/// [`MAX_EXPR_DEPTH`] levels in a debug build, with a margin. Only the pages used are touched.
pub(crate) const DEEP_PARSE_STACK: usize = 256 << 20;

/// How deep parentheses and prefix operators nest in `text`, or the byte offset of the first
/// token at which they nest deeper than [`MAX_EXPR_DEPTH`]. Linear in the number of tokens.
pub(crate) fn deepest(text: &str, tokens: &[Tok]) -> Result<usize, usize> {
    let mut deepest = 0;
    // Prefix operators seen in a row before each open parenthesis, and in a row now.
    let mut open: Vec<usize> = Vec::new();
    let mut base = 0usize;
    let mut run = 0usize;
    let mut after_operand = false;
    for tok in tokens {
        let word = tok.text(text);
        match tok.kind {
            TokKind::Punct if word == "(" => {
                open.push(run);
                base += run + 1;
                run = 0;
                after_operand = false;
            }
            TokKind::Punct if word == ")" => {
                if let Some(r) = open.pop() {
                    base -= r + 1;
                }
                run = 0;
                after_operand = true;
            }
            TokKind::Punct if word == ";" => {
                open.clear();
                (base, run, after_operand) = (0, 0, false);
            }
            TokKind::Punct if word == "-" && !after_operand => run += 1,
            TokKind::Punct => {
                run = 0;
                after_operand = false;
            }
            TokKind::Word if word.eq_ignore_ascii_case("not") => {
                run += 1;
                after_operand = false;
            }
            TokKind::Word if is_operator_word(word) => {
                run = 0;
                after_operand = false;
            }
            TokKind::Word | TokKind::Number | TokKind::Str { .. } => {
                run = 0;
                after_operand = true;
            }
        }
        deepest = deepest.max(base + run);
        if deepest > MAX_EXPR_DEPTH {
            return Err(tok.start);
        }
    }
    Ok(deepest)
}

/// Words after which a `-` is unary.
fn is_operator_word(word: &str) -> bool {
    ["and", "or", "where", "in", "by", "yield", "return", "is"]
        .iter()
        .any(|w| word.eq_ignore_ascii_case(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;

    fn deepest(text: &str) -> Option<usize> {
        super::deepest(text, &scan(text)).err()
    }

    #[test]
    fn parentheses_and_prefix_operators_count() {
        let ok = format!(
            "{}x{}",
            "(".repeat(MAX_EXPR_DEPTH),
            ")".repeat(MAX_EXPR_DEPTH)
        );
        assert_eq!(deepest(&ok), None);
        let deep = format!("({ok})");
        assert_eq!(deepest(&deep), Some(MAX_EXPR_DEPTH));
        let nots = "NOT ".repeat(MAX_EXPR_DEPTH + 1) + "x = 1";
        assert_eq!(deepest(&nots), Some(MAX_EXPR_DEPTH * 4));
        let minus = "- ".repeat(MAX_EXPR_DEPTH + 1) + "x";
        assert_eq!(deepest(&minus), Some(MAX_EXPR_DEPTH * 2));
        // Mixed: NOT ( NOT ( ... counts both.
        let mixed = "NOT (".repeat(MAX_EXPR_DEPTH / 2 + 1);
        assert!(deepest(&mixed).is_some());
    }

    #[test]
    fn flat_chains_and_separate_statements_do_not() {
        let chain = "x - 1 ".repeat(10 * MAX_EXPR_DEPTH);
        assert_eq!(deepest(&chain), None);
        let half = format!("{};", "(".repeat(MAX_EXPR_DEPTH / 2 + 1));
        assert_eq!(deepest(&half.repeat(3)), None);
        let sequential = "(x) AND ".repeat(10 * MAX_EXPR_DEPTH) + "y";
        assert_eq!(deepest(&sequential), None);
    }
}
