//! Batch mode (query files, `-c`, piped stdin) with stderr on a pseudo-terminal, as when a person
//! types the README's first command: progress bars are drawn, and the batch must still finish
//! with the right exit code, and end on Ctrl-C.

use std::path::Path;
use std::process::Command;

use rexpect::process::WaitStatus;
use rexpect::session::{spawn_command, PtySession};

const BIN: &str = env!("CARGO_BIN_EXE_frontier");

/// Generous: a hang fails the test after this long instead of blocking the suite.
const TIMEOUT_MS: u64 = 120_000;

/// A graph big enough that a PageRank iteration and the progress bar's timer overlap.
fn graph(dir: &Path) -> std::path::PathBuf {
    let edges = dir.join("g.txt");
    let status = Command::new(BIN)
        .args([
            "gen",
            "uniform",
            "--vertices",
            "20000",
            "--edges",
            "200000",
            "--seed",
            "5",
            "-o",
        ])
        .arg(&edges)
        .status()
        .unwrap();
    assert!(status.success());
    edges
}

fn spawn(cmd: Command) -> PtySession {
    let mut cmd = cmd;
    cmd.env("TERM", "xterm");
    spawn_command(cmd, Some(TIMEOUT_MS)).unwrap()
}

/// Waits for the end of output and returns the exit code.
fn exit_code(mut p: PtySession) -> i32 {
    let rest = p.exp_eof().unwrap();
    match p.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => code,
        other => panic!("frontier did not exit normally: {other:?}; output: {rest}"),
    }
}

#[test]
fn batch_file_dash_c_and_stdin_finish_under_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let edges = graph(dir.path());
    let data = dir.path().join("data");
    let script = dir.path().join("q.fq");
    std::fs::write(
        &script,
        format!(
            "CREATE OR REPLACE GRAPH g FROM '{}' FORMAT edgelist;\n\
             RUN bfs ON g FROM 0 LIMIT 2;\n\
             RUN pagerank ON g ITER 30 ORDER BY rank DESC LIMIT 2;\n",
            edges.display()
        ),
    )
    .unwrap();

    let mut cmd = Command::new(BIN);
    cmd.arg("--data").arg(&data).arg(&script);
    let mut p = spawn(cmd);
    p.exp_string("created graph g").unwrap();
    p.exp_string("2 rows").unwrap();
    assert_eq!(exit_code(p), 0);

    let mut cmd = Command::new(BIN);
    cmd.arg("--data")
        .arg(&data)
        .args(["-c", "RUN degree ON g LIMIT 1;"]);
    let mut p = spawn(cmd);
    p.exp_string("1 row").unwrap();
    assert_eq!(exit_code(p), 0);

    // A failing statement in a batch still exits 1 under a terminal.
    let mut cmd = Command::new(BIN);
    cmd.arg("--data")
        .arg(&data)
        .args(["-c", "RUN pagerank ON g ITER 20; RUN bfs ON nosuch FROM 1;"]);
    let mut p = spawn(cmd);
    p.exp_string("nosuch").unwrap();
    assert_eq!(exit_code(p), 1);

    // Piped stdin, stderr still the terminal.
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(format!(
        "printf 'RUN wcc ON g LIMIT 3;\\nRUN pagerank ON g ITER 20 LIMIT 1;\\n' | '{BIN}' --data '{}'",
        data.display()
    ));
    let mut p = spawn(cmd);
    p.exp_string("1 row").unwrap();
    assert_eq!(exit_code(p), 0);
}

#[test]
fn ctrl_c_ends_a_batch_with_130() {
    let dir = tempfile::tempdir().unwrap();
    let edges = graph(dir.path());
    let data = dir.path().join("data");
    let out = Command::new(BIN)
        .arg("--data")
        .arg(&data)
        .arg("-c")
        .arg(format!(
            "CREATE GRAPH g FROM '{}' FORMAT edgelist;",
            edges.display()
        ))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    let mut cmd = Command::new(BIN);
    cmd.arg("--data")
        .arg(&data)
        .args(["-c", "RUN pagerank ON g ITER 1000000; SHOW GRAPHS;"]);
    let mut p = spawn(cmd);
    // The bar is drawn once the run is under way.
    p.exp_string("pagerank").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1000));
    p.send_control('c').unwrap();
    p.exp_string("cancelled").unwrap();
    assert_eq!(exit_code(p), 130);
}
