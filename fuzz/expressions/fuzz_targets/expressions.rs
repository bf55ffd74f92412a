//! WHERE expressions of any nesting and length, built from the input bytes, through
//! `grammar::parse`: each byte picks the next piece (an open parenthesis, `NOT`, a unary minus,
//! an operator and operand, a close parenthesis, an IN list item), and the last two bytes of the
//! input repeat a piece thousands of times, so that deep nesting and long chains are reached
//! without a long input. The parse must return (a statement or an error with a position inside
//! the text), never overflow the stack; an accepted expression is no deeper than the limit
//! allows for its chains.
#![no_main]

use grammar::{parse, StatementKind, MAX_EXPR_DEPTH};
use libfuzzer_sys::fuzz_target;

const PIECES: &[&str] = &[
    "(",
    "(",
    "NOT ",
    "- ",
    "vertex",
    "1",
    "rank",
    ")",
    ")",
    " = ",
    " <> ",
    " < ",
    " + ",
    " - ",
    " * ",
    " / ",
    " AND ",
    " OR ",
    " IS NULL",
    " IS NOT NULL",
    " IN (1, 2",
    ", 3",
    "NULL",
    "'s'",
    "2.5",
    " ",
];

fuzz_target!(|data: &[u8]| {
    let (body, repeat) = match data.len() {
        0..=2 => (data, None),
        n => (&data[..n - 2], Some((data[n - 2], data[n - 1]))),
    };
    let mut condition = String::new();
    for &b in body {
        condition.push_str(PIECES[b as usize % PIECES.len()]);
    }
    if let Some((piece, times)) = repeat {
        let piece = PIECES[piece as usize % PIECES.len()];
        condition.push_str(&piece.repeat(times as usize * 64));
    }
    let text = format!("RUN degree ON g WHERE {condition};");
    match parse(&text) {
        Ok(stmts) => {
            for s in &stmts {
                if let StatementKind::Run { run, .. } = &s.kind {
                    if let Some(filter) = &run.filter {
                        // AND/OR chains are balanced, so nothing accepted is much deeper than
                        // the limit; the recursion here is itself the check that it is not.
                        assert!(filter.depth() <= 2 * MAX_EXPR_DEPTH + 64, "{text:.200}");
                    }
                }
            }
        }
        Err(e) => {
            assert!(e.line == 1 && e.col >= 1 && e.col <= text.chars().count() + 1);
            assert!(
                e.snippet.len() < 4 * grammar::SNIPPET_CHARS + 64,
                "{}",
                e.snippet.len()
            );
        }
    }
});
