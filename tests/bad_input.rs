//! Bad input everywhere, through the real binary: malformed statements, bad settings, bad
//! parameters and bad files. Each must exit non-zero with an error naming the fault — the line
//! and column, the setting, the parameter, or the file and line — and never panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::{text, BIN};

fn frontier(data: &Path, statements: &str) -> Output {
    common::run(data, &["-c", statements])
}

fn assert_fails(data: &Path, statements: &str, wanted: &[&str]) {
    let out = frontier(data, statements);
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{statements}: exit {:?}, stderr {err}",
        out.status
    );
    assert!(!err.contains("panicked"), "{statements}: {err}");
    assert!(err.starts_with("error: "), "{statements}: {err}");
    for w in wanted {
        assert!(err.contains(w), "{statements}: wanted `{w}` in\n{err}");
    }
}

#[test]
fn malformed_statements_name_line_and_column() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    // (statements, the error's `-c:LINE:COL:` and a piece of its message)
    let table: &[(&str, &str, &str)] = &[
        ("RUN pagerank web;", "-c:1:14:", "expected ON"),
        ("RUN pagerank ON;", "-c:1:16:", "graph name"),
        ("RUN bfs ON g FROM;", "-c:1:18:", "vertex"),
        ("RUN pagerank ON g ITER x1;", "-c:1:24:", "number"),
        (
            "RUN pagerank ON g ITER 99999999999999999999;",
            "-c:1:24:",
            "out of range",
        ),
        (
            "CREATE GRAPH g FROM 'edges.txt;",
            "-c:1:21:",
            "unterminated string",
        ),
        ("CREATE GRAPH g FROM edges.txt;", "-c:1:21:", "quoted path"),
        ("FROBNICATE GRAPH g;", "-c:1:1:", "unknown statement"),
        ("SHOW GRAPHS extra;", "-c:1:13:", "`;`"),
        ("RUN pagerank ON g damping;", "-c:1:26:", "value"),
        ("SET threads 4;", "-c:1:13:", "="),
        ("SET = 4;", "-c:1:5:", "setting name"),
        ("RUN ON g;", "-c:1:5:", "algorithm"),
        ("DROP g;", "-c:1:6:", "GRAPH"),
        ("DROP GRAPH IF g;", "-c:1:15:", "EXISTS"),
        ("DESCRIBE GRAPH;", "-c:1:15:", "graph name"),
        ("RUN pagerank ON g ORDER rank;", "-c:1:25:", "BY"),
        ("RUN pagerank ON g ORDER BY;", "-c:1:27:", "column"),
        ("RUN pagerank ON g LIMIT;", "-c:1:24:", "number"),
        ("RUN pagerank ON g INTO;", "-c:1:23:", "path"),
        (
            "RUN pagerank ON g INTO 'x.parquet' FORMAT xlsx;",
            "-c:1:43:",
            "parquet",
        ),
        (
            "CREATE GRAPH g FROM 'x' FORMAT docx;",
            "-c:1:32:",
            "edgelist",
        ),
        (
            "CREATE GRAPH g FROM 'x' STORAGE cloud;",
            "-c:1:33:",
            "blockfile",
        ),
        (
            "SHOW GRAPHS;\nRUN pagerank ON g ITER 1.5;",
            "-c:2:24:",
            "whole number",
        ),
        ("SHOW GRAPHS\nSHOW SETTINGS;", "-c:1:12:", "`;`"),
        ("RUN pagerank ON FROM;", "-c:1:17:", "keyword"),
        (
            "CREATE GRAPH g FROM 'a' DIRECTED UNDIRECTED;",
            "-c:1:34:",
            "twice",
        ),
        ("RUN bfs ON g FROM 1 FROM 2;", "-c:1:21:", "twice"),
        (";", "-c:1:1:", "empty statement"),
        ("RUN pagerank ON g ) ;", "-c:1:19:", "`)`"),
    ];
    for (statements, location, message) in table {
        assert_fails(&data, statements, &[location, message]);
    }
}

fn write(dir: &Path, name: &str, content: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

#[test]
fn bad_settings_parameters_and_files_name_the_fault() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let good = write(d.path(), "good.txt", b"1 2\n2 3\n3 1\n4 1\n");
    let out = frontier(&data, &format!("CREATE GRAPH g FROM '{}';", good.display()));
    assert!(out.status.success(), "{}", text(&out.stderr));

    let f = |name: &str, content: &[u8]| write(d.path(), name, content).display().to_string();
    let non_numeric = f("nonnum.txt", b"1 2\n2 x3\n");
    let negative = f("neg.txt", b"# comment\n1 2\n-5 3\n");
    let overflow = f("over.txt", b"1 2\n18446744073709551616 3\n");
    let nan = f("nan.txt", b"1 2 0.5\n2 3 NaN\n");
    let missing_weight = f("miss.txt", b"1 2 0.5\n2 3\n");
    let nan_weight = f("nanw.txt", b"1 2 0.5\n2 3 NaN\n");
    let garbage = f("garbage.txt", b"1 2\n\xff\xfe\x00\x01garbage\n");
    let props = f("bad.properties", b"graph.bad.directed = true\n");
    let csv = f("bad.csv", b"from,to\n1,2\n");
    let table: Vec<(String, Vec<String>)> = vec![
        // statements and parameters
        (
            "RUN pagerank ON nosuch;".into(),
            vec!["-c:1:17:".into(), "graph `nosuch` does not exist".into()],
        ),
        (
            "RUN pagerank ON gg;".into(),
            vec!["did you mean `g`?".into()],
        ),
        (
            "RUN pagernk ON g;".into(),
            vec!["-c:1:5:".into(), "did you mean `pagerank`?".into()],
        ),
        (
            "RUN bfs ON g;".into(),
            vec!["bfs needs a source vertex".into()],
        ),
        (
            "RUN bfs ON g FROM 999;".into(),
            vec![
                "-c:1:19:".into(),
                "vertex 999 is not a vertex of graph `g`".into(),
            ],
        ),
        (
            "RUN wcc ON g FROM 1;".into(),
            vec!["wcc takes no FROM".into()],
        ),
        (
            "RUN pagerank ON g dampign 0.5;".into(),
            vec![
                "-c:1:19:".into(),
                "unknown parameter `dampign`".into(),
                "`damping`".into(),
            ],
        ),
        (
            "RUN pagerank ON g damping 2;".into(),
            vec!["parameter `damping` must be in".into()],
        ),
        (
            "RUN pagerank ON g ITER 0;".into(),
            vec!["parameter `iter` must be in".into()],
        ),
        (
            "RUN cdlp ON g ITER -3;".into(),
            vec!["parameter `iter`".into()],
        ),
        (
            "RUN randomwalk ON g WALKS 0;".into(),
            vec!["parameter `walks`".into()],
        ),
        (
            "RUN pagerank ON g ORDER BY rnak;".into(),
            vec!["no column `rnak`".into(), "`rank`".into()],
        ),
        ("RUN pagerank ON g LIMIT -1;".into(), vec!["LIMIT".into()]),
        (
            "RUN pagerank ON g INTO 'out.xlsx';".into(),
            vec!["'out.xlsx'".into(), ".parquet".into()],
        ),
        (
            format!(
                "RUN pagerank ON g INTO '{}/no/such/dir/x.parquet';",
                d.path().display()
            ),
            vec!["no/such/dir".into()],
        ),
        (
            "RUN randomwalk ON g WALKS 1000000000 LENGTH 1000000;".into(),
            vec!["memory_limit".into()],
        ),
        (
            "DROP GRAPH nosuch;".into(),
            vec!["graph `nosuch` does not exist".into()],
        ),
        (
            "DESCRIBE GRAPH nosuch;".into(),
            vec!["graph `nosuch` does not exist".into()],
        ),
        (
            format!("CREATE GRAPH g FROM '{}';", good.display()),
            vec!["graph `g` already exists".into()],
        ),
        // settings
        (
            "SET thraeds = 2;".into(),
            vec!["unknown setting `thraeds`".into(), "`threads`".into()],
        ),
        ("SET threads = 0;".into(), vec!["setting `threads`".into()]),
        ("SET cache = 'lots';".into(), vec!["setting `cache`".into()]),
        (
            "SET mode = fast;".into(),
            vec!["setting `mode`".into(), "auto, push, block or pull".into()],
        ),
        (
            "SET io_depth = 100000;".into(),
            vec!["setting `io_depth`".into()],
        ),
        (
            "SET memory_nodes = 'nohost';".into(),
            vec!["setting `memory_nodes`".into(), "host:port".into()],
        ),
        (
            "SET import_memory = '1KB';".into(),
            vec!["setting `import_memory`".into(), "minimum".into()],
        ),
        // files
        (
            // Keys that are not integers import as strings unless KEYS integer says otherwise.
            format!("CREATE GRAPH h FROM '{non_numeric}' KEYS integer;"),
            vec![format!("{non_numeric}:2:"), "KEYS integer".into()],
        ),
        (
            // Keys that are not integers import as strings unless KEYS integer says otherwise.
            format!("CREATE GRAPH h FROM '{negative}' KEYS integer;"),
            vec![format!("{negative}:3:"), "KEYS integer".into()],
        ),
        (
            // Keys that are not integers import as strings unless KEYS integer says otherwise.
            format!("CREATE GRAPH h FROM '{overflow}' KEYS integer;"),
            vec![format!("{overflow}:2:"), "KEYS integer".into()],
        ),
        (
            format!("CREATE GRAPH h FROM '{nan}' WEIGHTED;"),
            vec![format!("{nan}:2:")],
        ),
        (
            format!("CREATE GRAPH h FROM '{missing_weight}' WEIGHTED;"),
            vec![format!("{missing_weight}:2:")],
        ),
        (
            format!("CREATE GRAPH h FROM '{nan_weight}' WEIGHTED;"),
            vec![format!("{nan_weight}:2:")],
        ),
        (
            format!("CREATE GRAPH h FROM '{garbage}';"),
            vec![format!("{garbage}:2:")],
        ),
        (
            format!("CREATE GRAPH h FROM '{}/missing.txt';", d.path().display()),
            vec!["missing.txt".into()],
        ),
        (
            format!("CREATE GRAPH h FROM '{props}' FORMAT graphalytics;"),
            vec![props.clone()],
        ),
        (
            format!("CREATE GRAPH h FROM '{csv}' FORMAT csv src 'a' dst 'b';"),
            vec![csv.clone()],
        ),
        (
            format!(
                "CREATE GRAPH h FROM '{}' VERTICES '{}/nov.txt';",
                good.display(),
                d.path().display()
            ),
            vec!["nov.txt".into()],
        ),
        // a bad file in CREATE OR REPLACE keeps the old graph (checked below)
        (
            format!("CREATE OR REPLACE GRAPH g FROM '{nan}' WEIGHTED;"),
            vec![format!("{nan}:2:")],
        ),
    ];
    assert!(table.len() >= 30);
    for (statements, wanted) in &table {
        let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
        assert_fails(&data, statements, &wanted);
    }
    // Nothing above changed the catalog: g is the good graph, h never appeared.
    let out = Command::new(BIN)
        .arg("--data")
        .arg(&data)
        .args(["--format", "csv", "-c", "SHOW GRAPHS; RUN degree ON g;"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("g,4,4,true,false,"), "{stdout}");
    assert!(!stdout.contains("\nh,"), "{stdout}");
}
