//! Malformed statements: each gives one error with a message in words at the right line:column.

use grammar::parse;

/// (input, expected line, expected column, substring of the message)
const CASES: &[(&str, usize, usize, &str)] = &[
    // Missing or misplaced pieces of RUN.
    ("RUN pagerank web;", 1, 14, "expected ON after the algorithm name `pagerank`"),
    ("RUN pagerank ON ;", 1, 17, "expected a graph name after ON"),
    ("RUN pagerank ON", 1, 16, "expected a graph name after ON"),
    ("RUN ON g;", 1, 5, "expected an algorithm name after RUN, found the keyword ON"),
    ("RUN;", 1, 4, "expected an algorithm name after RUN"),
    ("RUN pr ON g ITER;", 1, 17, "expected a number after ITER"),
    ("RUN pr ON g ITER x;", 1, 18, "expected a number after ITER, found `x`"),
    ("RUN pr ON g ITER 5abc;", 1, 18, "expected a number after ITER, found `5abc`"),
    ("RUN pr ON g ITER 1.5.3;", 1, 18, "expected a number after ITER, found `1.5.3`"),
    ("RUN pr ON g k 1.e5;", 1, 15, "expected a value after parameter `k`, found `1.e5`"),
    ("RUN pr ON g ITER 1.5;", 1, 18, "expected a whole number after ITER, found `1.5`"),
    ("RUN pr ON g LIMIT -;", 1, 19, "expected a number after LIMIT, found `-`"),
    ("RUN pr ON g LIMIT 99999999999999999999;", 1, 19, "number 99999999999999999999 is out of range"),
    ("RUN pr ON g FROM;", 1, 17, "expected a vertex id after FROM"),
    ("RUN pr ON g damping ;", 1, 21, "expected a value after parameter `damping`"),
    ("RUN pr ON g damping", 1, 20, "expected a value after parameter `damping`"),
    ("RUN pr ON g damping = 0.85;", 1, 21, "without `=`"),
    ("RUN pr ON g ORDER BY;", 1, 21, "expected a column, number or string after ORDER BY"),
    ("RUN pr ON g ORDER BY LIMIT 3;", 1, 22, "expected a column, number or string after ORDER BY, found the keyword LIMIT"),
    ("RUN pr ON g YIELD ;", 1, 19, "expected a column, number or string after `YIELD`"),
    ("RUN pr ON g ORDER rank;", 1, 19, "expected BY after ORDER"),
    ("RUN pr ON g INTO;", 1, 17, "expected a quoted path after INTO"),
    ("RUN pr ON g INTO out.parquet;", 1, 18, "expected a quoted path after INTO, found `out`"),
    ("RUN pr ON g INTO 'o' FORMAT json;", 1, 29, "expected a format (parquet, arrow, csv or graphalytics) after FORMAT"),
    ("RUN pr ON g LIMIT 5 ITER 3;", 1, 21, "unexpected `ITER`: expected `;` at the end of the statement (the clauses of RUN come in this order"),
    ("RUN pr ON g ITER 1 ITER 2;", 1, 20, "ITER is given twice"),
    ("RUN pr ON g seed 1 SEED 2;", 1, 20, "parameter `SEED` is given twice"),
    ("RUN pr ON g ITER 5 );", 1, 20, "unexpected `)`"),
    ("RUN pr ON g 5;", 1, 13, "unexpected `5`: expected `;` at the end of the statement"),
    ("EXPLAIN pr ON g;", 1, 9, "expected RUN after EXPLAIN, found `pr`"),
    ("PROFILE;", 1, 8, "expected RUN after PROFILE"),
    // CREATE GRAPH.
    ("CREATE GRAPH g FROM path_without_quotes;", 1, 21, "expected a quoted path after FROM, found `path_without_quotes` (paths are written in single quotes"),
    ("CREATE GRAPH g 'x';", 1, 16, "expected FROM 'path' after the graph name `g`"),
    ("CREATE GRAPH from FROM 'x';", 1, 14, "found the keyword FROM (a reserved keyword cannot be used as a name)"),
    ("CREATE GRAPH FROM 'x';", 1, 14, "expected a graph name after GRAPH, found the keyword FROM"),
    ("CREATE g FROM 'x';", 1, 8, "expected OR REPLACE or GRAPH after CREATE"),
    ("CREATE OR GRAPH g FROM 'x';", 1, 11, "expected REPLACE after OR"),
    ("CREATE GRAPH g FROM 'x' FORMAT xml;", 1, 32, "expected a format (edgelist, graphalytics, csv, parquet or mtx) after FORMAT, found `xml`"),
    ("CREATE GRAPH g FROM 'x' STORAGE ssd;", 1, 33, "expected a storage kind (blockfile, memory or dm) after STORAGE"),
    ("CREATE GRAPH g FROM 'x' VERTICES;", 1, 33, "expected a quoted path after VERTICES"),
    ("CREATE GRAPH g FROM 'x' delimiter;", 1, 34, "expected a value after parameter `delimiter`"),
    ("CREATE GRAPH g FROM 'x' FORMAT csv FORMAT csv;", 1, 36, "FORMAT is given twice"),
    ("CREATE GRAPH g FROM 'x' DIRECTED UNDIRECTED;", 1, 34, "DIRECTED or UNDIRECTED is given twice"),
    ("CREATE GRAPH g FROM 'C:\\data\\g.e';", 1, 24, "unknown escape `\\d` in string"),
    // The other statements.
    ("DROP GRAPH;", 1, 11, "expected a graph name or IF EXISTS after GRAPH"),
    ("DROP GRAPH 'g';", 1, 12, "(names are written without quotes)"),
    ("DROP GRAPH IF g;", 1, 15, "expected EXISTS after IF"),
    ("DROP g;", 1, 6, "expected GRAPH after DROP"),
    ("SHOW;", 1, 5, "expected GRAPHS or SETTINGS after SHOW"),
    ("SHOW TABLES;", 1, 6, "expected GRAPHS or SETTINGS after SHOW, found `TABLES`"),
    ("DESCRIBE g;", 1, 10, "expected GRAPH after DESCRIBE"),
    ("VERIFY GRAPH order;", 1, 14, "found the keyword ORDER (a reserved keyword cannot be used as a name)"),
    ("HELP me now;", 1, 9, "unexpected `now`: expected `;` at the end of the statement"),
    ("SET x 5;", 1, 7, "expected `=` after the setting name `x`"),
    ("SET = 4;", 1, 5, "expected a setting name after SET"),
    ("SET threads = ;", 1, 15, "expected a value after `=`"),
    ("SET mode = ORDER;", 1, 12, "quote it: 'order'"),
    ("SET x = 1e999;", 1, 9, "number 1e999 is out of range"),
    ("SET cache = '99999999TB';", 1, 13, "size '99999999TB' is out of range"),
    // Statement level.
    ("FOO;", 1, 1, "unknown statement `FOO`: expected one of CREATE, DROP, SHOW, DESCRIBE, VERIFY, REPAIR, RUN, EXPLAIN, PROFILE, SET, HELP"),
    ("SHOW GRAPHS; SELECT 1;", 1, 14, "unknown statement `SELECT`"),
    ("REPAIR;", 1, 7, "expected CATALOG after `REPAIR`, found `;`"),
    ("REPAIR CATALOG graphs;", 1, 16, "unexpected `graphs`: expected `;` at the end of the statement"),
    (")", 1, 1, "unexpected `)`: expected a statement"),
    (";", 1, 1, "empty statement"),
    ("SHOW GRAPHS", 1, 12, "expected `;` at the end of the statement"),
    ("SHOW GRAPHS  -- no semicolon\n", 1, 12, "expected `;` at the end of the statement"),
    ("SHOW GRAPHS\nSHOW SETTINGS;", 1, 12, "expected `;` at the end of the statement (before SHOW)"),
    ("SHOW GRAPHS;\nSET x = 'abc\n;", 2, 9, "unterminated string (started at line 2, column 9)"),
    ("RUN x ON g a 'it''s", 1, 14, "unterminated string (started at line 1, column 14)"),
    ("RUN x ON g a 'ends in backslash\\", 1, 14, "unterminated string"),
    ("HELP;\n\n  RUN pr\n   ON ;", 4, 7, "expected a graph name after ON"),
    ("é;", 1, 1, "unexpected `é`"),
    ("HELP;\0", 1, 6, "unexpected `\\0`"),
    ("RUN x ON g k 'v' \u{feff};", 1, 18, "unexpected `\u{feff}`"),
    // The first error wins: an out-of-range number before a syntax error.
    ("SET a = 1; SET b = 99999999999999999999; FOO;", 1, 20, "out of range"),
    ("FOO; SET b = 99999999999999999999;", 1, 1, "unknown statement `FOO`"),
];

#[test]
fn malformed_statements_give_worded_errors() {
    assert!(CASES.len() >= 30);
    let mut failures = Vec::new();
    for &(text, line, col, want) in CASES {
        match parse(text) {
            Ok(stmts) => failures.push(format!("{text:?}: parsed as {stmts:?}")),
            Err(e) => {
                if (e.line, e.col) != (line, col) || !e.message.contains(want) {
                    failures.push(format!(
                        "{text:?}\n   want {line}:{col}: …{want}…\n    got {}:{}: {}",
                        e.line, e.col, e.message
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn snippet_and_render() {
    let e = parse("SHOW GRAPHS;\nRUN pagerank ON ;\n").unwrap_err();
    assert_eq!((e.line, e.col), (2, 17));
    assert_eq!(e.snippet, "RUN pagerank ON ;\n                ^");
    assert_eq!(
        e.render("nightly.fq"),
        "nightly.fq:2:17: expected a graph name after ON, found `;`\n\
         RUN pagerank ON ;\n                ^"
    );
    assert_eq!(
        e.to_string(),
        "2:17: expected a graph name after ON, found `;`"
    );
}

#[test]
fn caret_follows_tabs_and_the_end_of_line() {
    let e = parse("\tRUN pr ON").unwrap_err();
    assert_eq!((e.line, e.col), (1, 11));
    assert_eq!(e.snippet, "\tRUN pr ON\n\t         ^");
}

#[test]
fn messages_name_no_pest_rules() {
    // No internal rule names (`kw_on`, `param_value`, ...) leak into messages.
    for &(text, ..) in CASES {
        let e = parse(text).unwrap_err();
        assert!(
            !e.message.contains("kw_")
                && !e.message.contains("_value")
                && !e.message.contains("Rule"),
            "{text:?}: {}",
            e.message
        );
    }
}

#[test]
fn misspelt_keywords_get_a_suggestion() {
    let e = grammar::parse("RUN pagerank ON g ODER BY rank;").unwrap_err();
    assert_eq!((e.line, e.col), (1, 19));
    assert!(e.message.contains("did you mean ORDER?"), "{}", e.message);
    let e = grammar::parse("DESCRIEB GRAPH g;").unwrap_err();
    assert!(
        e.message.contains("did you mean DESCRIBE?"),
        "{}",
        e.message
    );
    let e = grammar::parse("RUN pagerank ON g ORDER BY rank DESC LIMT 5;").unwrap_err();
    assert!(e.message.contains("did you mean LIMIT?"), "{}", e.message);
}

#[test]
fn where_errors_point_at_the_token() {
    let e = grammar::parse("RUN pagerank ON g WHERE rank > ;").unwrap_err();
    assert_eq!((e.line, e.col), (1, 32));
    assert!(
        e.message.contains("a column, number or string"),
        "{}",
        e.message
    );
    let e = grammar::parse("RUN pagerank ON g WHERE rank IN (1, 2;").unwrap_err();
    assert!(e.message.contains("`)`"), "{}", e.message);
}
