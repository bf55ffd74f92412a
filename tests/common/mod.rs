//! Helpers shared by the end-to-end tests: run the real binary against a data directory.
#![allow(dead_code)]

pub mod compute;
pub mod graphalytics;
pub mod memnode;
pub mod small_graphs;

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The `frontier` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_frontier");

/// Runs `frontier --data DATA ARGS...` with no stdin.
pub fn run(data: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("--data")
        .arg(data)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the frontier binary runs")
}

/// Runs `statements` with `-c`, results as CSV so tests can read them.
pub fn csv(data: &Path, statements: &str) -> Output {
    run(data, &["--format", "csv", "-c", statements])
}

/// Output bytes as text, for messages and assertions.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `python3 -c script args...` and returns its stdout; panics with its stderr when it
/// fails (scripts/test.sh installs the modules the tests import).
pub fn python<I, S>(script: &str, args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 failed (scripts/test.sh installs networkx, scipy, pyarrow, pandas and duckdb):\n{}",
        text(&out.stderr)
    );
    text(&out.stdout)
}
