//! Output that pipes cleanly: with `--format csv|json` stdout holds result rows only, JSON keeps
//! types, a reader that goes away (`| head`) ends frontier quietly, and `-c` takes a lone
//! statement without its `;`.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::{run, text, BIN};

fn edges(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("g.txt");
    let mut s = String::new();
    for v in 0..30_000u32 {
        s.push_str(&format!("{v} {}\n", (v * 7 + 1) % 30_000));
    }
    std::fs::write(&path, s).unwrap();
    path
}

#[test]
fn status_lines_go_to_stderr_with_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let e = edges(dir.path());
    let into = dir.path().join("d.csv");
    for format in ["csv", "json"] {
        let out = run(
            &data,
            &[
                "--format",
                format,
                "-c",
                &format!(
                    "CREATE OR REPLACE GRAPH g FROM '{}'; RUN degree ON g INTO '{}'; \
                     VERIFY GRAPH g; DROP GRAPH g;",
                    e.display(),
                    into.display()
                ),
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "", "stdout holds result rows only");
        let err = text(&out.stderr);
        for status in [
            "created graph g",
            "wrote 30000 rows",
            "is intact",
            "dropped graph g",
        ] {
            assert!(err.contains(status), "{status:?} on stderr: {err}");
        }
    }
}

#[test]
fn json_keeps_numbers_and_booleans() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let e = edges(dir.path());
    let out = run(
        &data,
        &[
            "--format",
            "json",
            "-c",
            &format!(
                "CREATE GRAPH g FROM '{}' DIRECTED; SHOW GRAPHS;",
                e.display()
            ),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(v["name"], "g");
    assert_eq!(v["vertices"], 30_000);
    assert_eq!(v["edges"], 30_000);
    assert_eq!(v["directed"], true);
    assert_eq!(v["weighted"], false);
}

#[test]
fn a_reader_that_goes_away_ends_frontier_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let e = edges(dir.path());
    let out = run(
        &data,
        &["-c", &format!("CREATE GRAPH g FROM '{}';", e.display())],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));

    // `frontier --format csv -c 'RUN pagerank ON g;' | head -2`
    let mut child = Command::new(BIN)
        .arg("--data")
        .arg(&data)
        .args(["--format", "csv", "-c", "RUN pagerank ON g;"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "vertex,rank");
    assert!(lines.next().is_some());
    drop(lines);
    let out = child.wait_with_output().unwrap();
    assert_eq!(text(&out.stderr), "", "no 'Broken pipe' error");
    assert!(
        matches!(out.status.code(), Some(0) | Some(141)),
        "{:?}",
        out.status
    );
}

#[test]
fn dash_c_takes_a_statement_without_its_semicolon() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    for statement in [
        "SHOW GRAPHS",
        "SHOW SETTINGS -- a comment",
        "SET threads = 1; SHOW GRAPHS",
    ] {
        let out = run(&data, &["--format", "csv", "-c", statement]);
        assert!(out.status.success(), "{statement}: {}", text(&out.stderr));
        assert!(text(&out.stdout).starts_with("name,"), "{statement}");
    }
    // A real syntax error is still reported where it is.
    let out = run(&data, &["-c", "SHOW GRAPHZ"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("-c:1:6"),
        "{}",
        text(&out.stderr)
    );
}
