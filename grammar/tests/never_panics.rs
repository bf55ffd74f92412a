//! `parse` and `statement_complete` never panic, and their answers stay coherent, on arbitrary
//! text and on random mutations of valid scripts.

use grammar::{parse, statement_complete, SNIPPET_CHARS};
use proptest::prelude::*;

const VALID: &[&str] = &[
    "CREATE OR REPLACE GRAPH g FROM 'e.csv' FORMAT csv DIRECTED WEIGHTED VERTICES 'v.csv' STORAGE blockfile delimiter ';' header false;",
    "DROP GRAPH IF EXISTS g;",
    "SHOW GRAPHS; SHOW SETTINGS; HELP;",
    "DESCRIBE GRAPH g; VERIFY GRAPH g;",
    "EXPLAIN RUN pagerank ON web FROM 3 ITER 10 damping 0.85 cache '64KB' ORDER BY rank DESC LIMIT 5 INTO 'o.parquet' FORMAT parquet;",
    "PROFILE RUN sssp ON roads FROM -1 eps 1e-7 name 'it''s \\'x\\'' -- comment\n LIMIT 3;",
    "SET threads = 4; SET cache = '1.5GiB'; SET mode = auto;",
];

/// Pieces that push the parser into its deeper rules when spliced in.
const PIECES: &[&str] = &[
    "RUN",
    "ON",
    "FROM",
    "ITER",
    "ORDER",
    "BY",
    "LIMIT",
    "INTO",
    "FORMAT",
    "GRAPH",
    "SET",
    "=",
    ";",
    "'",
    "''",
    "\\",
    "--",
    "\n",
    "-",
    "1e",
    "99999999999999999999",
    "1.5",
    "'2GiB'",
    "é",
    "\0",
    "\u{feff}",
    "\r\n",
    "\t",
    " ",
    "x",
    "(",
    "DESC",
];

/// Checks what must hold for any input.
fn check(text: &str) {
    let complete = statement_complete(text);
    match parse(text) {
        Ok(stmts) => {
            // A script that parsed into statements ends with `;` outside strings and comments.
            assert_eq!(complete, !stmts.is_empty(), "{text:?}");
            for s in &stmts {
                assert!(s.pos.line >= 1 && s.pos.col >= 1);
            }
        }
        Err(e) => {
            let lines = text.split('\n').count();
            assert!(e.line >= 1 && e.line <= lines, "{text:?}: {e:?}");
            assert!(e.col >= 1, "{text:?}: {e:?}");
            assert!(!e.message.is_empty());
            let (source, caret) = e.snippet.split_once('\n').expect("two-line snippet");
            assert!(caret.ends_with('^'), "{text:?}: {e:?}");
            let line = text.split('\n').nth(e.line - 1).unwrap_or("");
            let line: Vec<char> = line.trim_end_matches('\r').chars().collect();
            // A short line is shown whole; a long one as a window around the column, with `…`
            // where it was cut. Either way the caret is under the character at the column.
            let shown: Vec<char> = source.chars().collect();
            if line.len() <= SNIPPET_CHARS {
                assert_eq!(shown.len(), line.len(), "{text:?}: {e:?}");
                assert_eq!(caret.chars().count(), e.col, "{text:?}: {e:?}");
            } else {
                assert!(shown.len() <= SNIPPET_CHARS + 2, "{text:?}: {e:?}");
            }
            let caret_at = caret.chars().count() - 1;
            if let Some(&c) = line.get(e.col - 1) {
                let under = shown[caret_at];
                assert!(
                    under == c || (c.is_control() && under == '\u{fffd}'),
                    "{text:?}: {e:?}"
                );
            }
            let rendered = e.render("f.fq");
            assert!(rendered.starts_with(&format!("f.fq:{}:{}: ", e.line, e.col)));
        }
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, &'static str),
    Replace(usize, char),
    Truncate(usize),
    Duplicate(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1usize..8).prop_map(|(at, n)| Edit::Delete(at, n)),
        (any::<usize>(), prop::sample::select(PIECES)).prop_map(|(at, p)| Edit::Insert(at, p)),
        (any::<usize>(), any::<char>()).prop_map(|(at, c)| Edit::Replace(at, c)),
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), 1usize..20).prop_map(|(at, n)| Edit::Duplicate(at, n)),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        let len = chars.len().max(1);
        match *e {
            Edit::Delete(at, n) => {
                let at = at % len;
                let end = (at + n).min(chars.len());
                if at < end {
                    chars.drain(at..end);
                }
            }
            Edit::Insert(at, piece) => {
                let at = at % (chars.len() + 1);
                chars.splice(at..at, piece.chars());
            }
            Edit::Replace(at, c) => {
                if !chars.is_empty() {
                    chars[at % len] = c;
                }
            }
            Edit::Truncate(at) => chars.truncate(at % len),
            Edit::Duplicate(at, n) => {
                let at = at % len;
                let end = (at + n).min(chars.len());
                let copy: Vec<char> = chars.get(at..end).unwrap_or(&[]).to_vec();
                chars.splice(at..at, copy);
            }
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_strings(text in any::<String>()) {
        check(&text);
    }

    #[test]
    fn strings_of_language_pieces(pieces in prop::collection::vec(prop::sample::select(PIECES), 0..40)) {
        check(&pieces.concat());
    }

    #[test]
    fn mutated_valid_scripts(
        base in prop::sample::select(VALID),
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        check(&apply(base, &edits));
    }
}

#[test]
fn the_valid_scripts_are_valid() {
    for text in VALID {
        assert!(parse(text).is_ok(), "{text}: {:?}", parse(text));
        check(text);
    }
}

#[test]
fn large_inputs() {
    let many = "RUN x ON g k 1;\n".repeat(5000);
    assert_eq!(parse(&many).unwrap().len(), 5000);
    let params: String = (0..2000).map(|i| format!("k{i} {i} ")).collect();
    let stmts = parse(&format!("RUN x ON g {params};")).unwrap();
    let grammar::StatementKind::Run { run, .. } = &stmts[0].kind else {
        panic!("not a RUN")
    };
    assert_eq!(run.calls[0].params.len(), 2000);
    check(&format!("RUN x ON g {params}; --{}", "-".repeat(100_000)));
    check(&"'".repeat(10_001));
    check(&"(".repeat(100_000));
}
