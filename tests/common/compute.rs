//! `frontier compute` child processes for end-to-end tests of RUN over several compute nodes.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::BIN;

/// A `frontier compute` worker, killed when dropped.
pub struct ComputeNode {
    pub child: Child,
    pub addr: String,
}

impl ComputeNode {
    pub fn start(token_file: &Path) -> ComputeNode {
        let mut child = Command::new(BIN)
            .args(["compute", "--listen", "127.0.0.1:0", "--token-file"])
            .arg(token_file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The first line says where it listens: "compute node listening on ADDR".
        let mut line = String::new();
        let mut r = BufReader::new(child.stdout.take().unwrap());
        r.read_line(&mut line).unwrap();
        let addr = line
            .trim()
            .strip_prefix("compute node listening on ")
            .unwrap_or_else(|| panic!("compute node said {line:?}"))
            .to_string();
        // Keep draining its output so it never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            while r.read_line(&mut sink).map(|n| n > 0).unwrap_or(false) {
                sink.clear();
            }
        });
        ComputeNode { child, addr }
    }

    /// The worker's resident file-backed pages now (`RssFile` in /proc), in bytes: mostly its
    /// binary's code, which jobs page in and nothing evicts on a test machine. A peak RSS
    /// bound adds it rather than guessing the binary's size, which varies between builds.
    pub fn file_rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the worker's /proc status");
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("RssFile:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("RssFile in the worker's /proc status");
        kib * 1024
    }
}

impl Drop for ComputeNode {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
