//! Imports say what they did (after CREATE and in DESCRIBE) and follow the policies the user
//! chose: DUPLICATES first|min|max|sum, SELF LOOPS keep|drop, ON ERROR skip, and negative
//! weights that import but make SSSP refuse the graph at RUN.

use std::path::Path;

mod common;

use common::text;

fn ok(data: &Path, statements: &str) -> String {
    let out = common::csv(data, statements);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{statements}: {all}");
    all
}

fn fails(data: &Path, statements: &str, wanted: &[&str]) {
    let out = common::run(data, &["-c", statements]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{statements}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in wanted {
        assert!(err.contains(w), "wanted `{w}` in\n{err}");
    }
}

fn has(all: &str, wanted: &[&str]) {
    for w in wanted {
        assert!(all.contains(w), "wanted `{w}` in\n{all}");
    }
}

#[test]
fn duplicates_are_counted_and_merged_by_the_chosen_policy() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let f = d.path().join("e.txt");
    // 1->2 three times (weights 3, 4, 2), a self-loop, a comment.
    std::fs::write(&f, "# c\n1 2 3\n1 2 4\n2 3 1\n1 2 2\n3 3 5\n").unwrap();
    let all = ok(
        &data,
        &format!(
            "CREATE GRAPH g FROM '{}' WEIGHTED; DESCRIBE GRAPH g;",
            f.display()
        ),
    );
    has(
        &all,
        &[
            "3 vertices, 3 edges",
            "lines read 6",
            "duplicates merged 2 (DUPLICATES first)",
            "self-loops kept 1",
            "lines skipped 0",
            // DESCRIBE keeps the report.
            "duplicates merged,2 (DUPLICATES first)",
        ],
    );
    for (policy, distance) in [("first", "3"), ("min", "2"), ("max", "4"), ("sum", "9")] {
        let all = ok(
            &data,
            &format!(
                "CREATE OR REPLACE GRAPH g FROM '{}' WEIGHTED DUPLICATES {policy}; \
                 RUN sssp ON g FROM 1;",
                f.display()
            ),
        );
        has(&all, &[&format!("\n2,{distance}\n")]);
    }
    let all = ok(
        &data,
        &format!(
            "CREATE OR REPLACE GRAPH g FROM '{}' SELF LOOPS drop;",
            f.display()
        ),
    );
    has(&all, &["3 vertices, 2 edges", "self-loops dropped 1"]);
    fails(
        &data,
        &format!(
            "CREATE OR REPLACE GRAPH g FROM '{}' DUPLICATES avg;",
            f.display()
        ),
        &["DUPLICATES must be first, min, max or sum"],
    );
}

#[test]
fn on_error_skip_counts_and_quotes_bad_lines() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let f = d.path().join("bad.txt");
    // `x` is a bad key only under KEYS integer (else the keys are strings).
    std::fs::write(&f, "1 2\nx 3\n2 3\n4\n3 1\n").unwrap();
    fails(
        &data,
        &format!("CREATE GRAPH g FROM '{}' KEYS integer;", f.display()),
        &["bad.txt:2:"],
    );
    let all = ok(
        &data,
        &format!(
            "CREATE GRAPH g FROM '{}' ON ERROR skip KEYS integer; DESCRIBE GRAPH g;",
            f.display()
        ),
    );
    has(
        &all,
        &[
            "3 vertices, 3 edges",
            "lines skipped 2",
            "skipped: ",
            "bad.txt:2:",
            "bad.txt:4:",
            "lines skipped,2",
        ],
    );
    let csv = d.path().join("bad.csv");
    std::fs::write(&csv, "src,dst\n1,2\n\"2,3\n2,x\n3,1\n").unwrap();
    let all = ok(
        &data,
        &format!(
            "CREATE GRAPH c FROM '{}' ON ERROR skip KEYS integer;",
            csv.display()
        ),
    );
    has(
        &all,
        &[
            "3 vertices, 2 edges",
            "lines skipped 2",
            "bad.csv:3: unterminated quoted field",
            "bad.csv:4:",
        ],
    );
}

#[test]
fn negative_weights_import_and_only_sssp_refuses_them() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let f = d.path().join("neg.txt");
    std::fs::write(&f, "1 2 -1.5\n2 3 2\n").unwrap();
    let all = ok(
        &data,
        &format!(
            "CREATE GRAPH g FROM '{}' WEIGHTED; RUN bfs ON g FROM 1;",
            f.display()
        ),
    );
    has(
        &all,
        &["3 vertices, 2 edges", "negative weights 1", "\n3,2\n"],
    );
    fails(
        &data,
        "RUN sssp ON g FROM 1;",
        &[
            "sssp needs non-negative weights",
            "1 edges with a negative weight",
        ],
    );
}
