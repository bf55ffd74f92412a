//! Sizes read the same everywhere: `frontier memnode --capacity` accepts what `SET cache`
//! accepts (`1.5GiB`, `512KB`, `64k`, plain bytes), and refuses the same with a message that
//! names the flag and shows how to write a size.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::BIN;

/// A `frontier memnode` child on a free loopback port, killed when dropped.
struct Memnode(Child);

impl Memnode {
    /// Starts a memory node with `capacity` and returns it with its first stdout line.
    fn start(capacity: &str) -> (Memnode, String) {
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, "sizes-test-token\n").unwrap();
        let mut child = Command::new(BIN)
            .args(["memnode", "--listen", "127.0.0.1:0", "--capacity", capacity])
            .arg("--token-file")
            .arg(&token)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        (Memnode(child), line)
    }
}

impl Drop for Memnode {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The capacity a memory node announces: "memnode N listening on ADDR, capacity C bytes".
fn announced_capacity(line: &str) -> u64 {
    line.split_whitespace()
        .skip_while(|w| *w != "capacity")
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("memnode said {line:?}"))
}

#[test]
fn memnode_capacity_reads_fractional_and_short_units() {
    for (written, bytes) in [
        ("1.5GiB", 3u64 << 29),
        ("0.5 MiB", 1 << 19),
        ("512KB", 512_000),
        ("64k", 64 << 10),
        ("1048576", 1 << 20),
    ] {
        let (_node, line) = Memnode::start(written);
        assert_eq!(announced_capacity(&line), bytes, "--capacity {written}");
    }
}

#[test]
fn memnode_capacity_refuses_what_is_not_a_size() {
    for bad in ["lots", "1.5XB", "99999999999TiB", ""] {
        let out = Command::new(BIN)
            .args(["memnode", "--listen", "127.0.0.1:0", "--capacity", bad])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = common::text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--capacity {bad:?}: {stderr}");
        assert!(
            stderr.contains(&format!("--capacity '{bad}'")),
            "the flag and value are named: {stderr}"
        );
        assert!(
            stderr.contains("1.5GiB") || stderr.contains("64 bits"),
            "says how to write a size: {stderr}"
        );
    }
}

/// The same text is the same size in a session setting and on the command line.
#[test]
fn set_cache_and_memnode_capacity_agree() {
    let data = tempfile::tempdir().unwrap();
    let out = common::csv(data.path(), "SET cache = '1.5GiB'; SHOW SETTINGS;");
    let stdout = common::text(&out.stdout);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("cache,") && l.contains("1.5 GiB")),
        "{stdout}"
    );
    let (_node, line) = Memnode::start("1.5GiB");
    assert_eq!(announced_capacity(&line), 3 << 29);
}
