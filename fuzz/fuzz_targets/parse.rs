//! `grammar::parse` (and `statement_complete`, `ParseError::render`) over arbitrary UTF-8 text.
//!
//! Beyond "never panics", it checks the contracts `grammar/tests/never_panics.rs` states: a script
//! that parsed into statements ends with `;` (so `statement_complete` agrees), statement and
//! error positions are 1-based and inside the text, and the error snippet is the offending line
//! (a window of it when long) plus a caret.
#![no_main]

use grammar::{parse, statement_complete};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let complete = statement_complete(text);
    match parse(text) {
        Ok(stmts) => {
            assert_eq!(complete, !stmts.is_empty(), "{text:?}");
            for s in &stmts {
                assert!(s.pos.line >= 1 && s.pos.col >= 1, "{text:?}: {s:?}");
            }
        }
        Err(e) => {
            let lines = text.split('\n').count();
            assert!(e.line >= 1 && e.line <= lines, "{text:?}: {e:?}");
            assert!(e.col >= 1, "{text:?}: {e:?}");
            assert!(!e.message.is_empty(), "{text:?}: {e:?}");
            let (source, caret) = e.snippet.split_once('\n').expect("two-line snippet");
            assert!(caret.ends_with('^'), "{text:?}: {e:?}");
            let line = text.split('\n').nth(e.line - 1).unwrap_or("");
            let line: Vec<char> = line.trim_end_matches('\r').chars().collect();
            let shown: Vec<char> = source.chars().collect();
            // A long line is shown as a window around the column.
            if line.len() <= grammar::SNIPPET_CHARS {
                assert_eq!(shown.len(), line.len(), "{text:?}: {e:?}");
                assert_eq!(caret.chars().count(), e.col, "{text:?}: {e:?}");
            } else {
                assert!(shown.len() <= grammar::SNIPPET_CHARS + 2, "{text:?}: {e:?}");
            }
            let rendered = e.render("f.fq");
            assert!(rendered.starts_with(&format!("f.fq:{}:{}: ", e.line, e.col)));
        }
    }
});
