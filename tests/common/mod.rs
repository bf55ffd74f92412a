//! Helpers shared by the end-to-end tests: run the real binary against a data directory.
#![allow(dead_code)]

pub mod compute;
pub mod graphalytics;
pub mod memnode;

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
