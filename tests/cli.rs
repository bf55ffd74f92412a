//! The command line as scripts use it: exit codes, error locations, `-c`, files and stdin.

use std::io::Write;
use std::process::{Command, Output, Stdio};

mod common;

use common::{text, BIN};

fn frontier(data: &std::path::Path, args: &[&str]) -> Output {
    common::run(data, args)
}

#[test]
fn show_graphs_on_an_empty_data_directory_exits_zero() {
    let d = tempfile::tempdir().unwrap();
    let out = frontier(&d.path().join("data"), &["-c", "SHOW GRAPHS;"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("name"), "{}", text(&out.stdout));
}

#[test]
fn a_query_file_stops_at_the_first_failing_statement() {
    let d = tempfile::tempdir().unwrap();
    let q = d.path().join("q.fq");
    std::fs::write(
        &q,
        "SET threads = 1;\nSHOW SETTINGS;\n  DROP GRAPH nosuch;\nSHOW GRAPHS;\n",
    )
    .unwrap();
    let out = frontier(&d.path().join("data"), &[q.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "error: {}:3:14: graph `nosuch` does not exist",
            q.display()
        )),
        "{err}"
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("threads"),
        "the statements before ran: {stdout}"
    );
    assert!(
        !stdout.contains("storage"),
        "SHOW GRAPHS after the failure did not run: {stdout}"
    );
}

#[test]
fn statements_on_piped_stdin_run() {
    let d = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .arg("--data")
        .arg(d.path().join("data"))
        .args(["--format", "csv"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"SET mode = block;\nSHOW SETTINGS;\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("mode,block,"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_bad_setting_suggests_the_nearest_name() {
    let d = tempfile::tempdir().unwrap();
    let out = frontier(&d.path().join("data"), &["-c", "SET thraeds = 2;"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("-c:1:5: unknown setting `thraeds` (did you mean `threads`?)"),
        "{err}"
    );
}

#[test]
fn a_data_directory_held_by_another_process_is_named_not_waited_for() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    // A batch reading statements from a pipe that stays open holds the data directory.
    let mut holder = Command::new(BIN)
        .arg("--data")
        .arg(&data)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait (bounded) until the holder has written its pid into the lock file it holds.
    let pid = holder.id().to_string();
    for _ in 0..3000 {
        if std::fs::read_to_string(data.join("lock")).is_ok_and(|t| t.trim() == pid) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Reading works (read-only); a change fails at once, naming the lock and its holder.
    let out = frontier(&data, &["-c", "SHOW GRAPHS;"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = frontier(&data, &["-c", "DROP GRAPH IF EXISTS g;"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("read-only"), "{err}");
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    assert!(
        err.contains(&data.join("lock").display().to_string()),
        "{err}"
    );
    drop(holder.stdin.take());
    holder.wait().unwrap();
}

/// EXPLAIN tells a user what a run will read and hold before it runs: out of core, the reads
/// per iteration and a memory estimate split into the cache and the per-vertex arrays.
#[test]
fn explain_shows_reads_and_the_memory_estimate() {
    let d = tempfile::tempdir().unwrap();
    let props = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/data/example-directed/example-directed.properties");
    let stmt = format!(
        "CREATE GRAPH g FROM '{}' FORMAT graphalytics; SET cache = '8KB'; EXPLAIN RUN pagerank ON g ITER 3;",
        props.display()
    );
    let out = frontier(&d.path().join("data"), &["-c", &stmt]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("reader:    out of core"), "{s}");
    assert!(s.contains("reads:     about"), "{s}");
    // 10 vertices x (24 bytes of PageRank state + a 16-byte result row), plus the 8 KB
    // (7.8 KiB) cache, which out of core also holds the compact id map and vertex index.
    assert!(
        s.contains(
            "memory:    about 8.2 KiB: cache (vertex index and ids included) 7.8 KiB + \
             per-vertex arrays 400 B (40 B x 10 vertices)"
        ),
        "{s}"
    );
}

/// EXPLAIN describes WCC's passes as union-find (and its remote-state rounds), not as the
/// EdgeMap pull rule that does not apply to it.
#[test]
fn explain_describes_wcc_as_union_find_passes() {
    let d = tempfile::tempdir().unwrap();
    let props = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/data/example-directed/example-directed.properties");
    let stmt = format!(
        "CREATE GRAPH g FROM '{}' FORMAT graphalytics; EXPLAIN RUN wcc ON g;",
        props.display()
    );
    let out = frontier(&d.path().join("data"), &["-c", &stmt]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("strategy:  union-find passes"), "{s}");
    assert!(!s.contains("DensePull"), "{s}");
}
