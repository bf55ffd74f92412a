//! `frontier memnode` child processes for end-to-end tests over `STORAGE dm`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::BIN;

/// A `frontier memnode` child process, killed when dropped.
pub struct Memnode {
    pub child: Child,
    pub addr: String,
}

impl Memnode {
    pub fn start(token_file: &Path, id: u16) -> Memnode {
        Memnode::start_on(token_file, id, "127.0.0.1:0")
    }

    /// A memory node listening on `listen` (a restarted node takes its old address again).
    pub fn start_on(token_file: &Path, id: u16, listen: &str) -> Memnode {
        let mut child = Command::new(BIN)
            .args(["memnode", "--listen", listen, "--capacity", "512MiB"])
            .arg("--token-file")
            .arg(token_file)
            .args(["--node-id", &id.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The first line says where it listens: "memnode N listening on ADDR, capacity ...".
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        let mut r = BufReader::new(stdout);
        r.read_line(&mut line).unwrap();
        let addr = line
            .split_whitespace()
            .skip_while(|w| *w != "on")
            .nth(1)
            .unwrap_or_else(|| panic!("memnode said {line:?}"))
            .trim_end_matches(',')
            .to_string();
        // Keep draining its output so it never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            while r.read_line(&mut sink).map(|n| n > 0).unwrap_or(false) {
                sink.clear();
            }
        });
        Memnode { child, addr }
    }
}

impl Drop for Memnode {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two memory nodes and the statements that point a session at them.
pub fn pool(dir: &Path) -> (Memnode, Memnode, String) {
    let token = dir.join("token");
    std::fs::write(&token, "dm-graphalytics-token\n").unwrap();
    let a = Memnode::start(&token, 1);
    let b = Memnode::start(&token, 2);
    let set = format!(
        "SET memory_nodes = '{},{}'; SET memory_token_file = '{}';",
        a.addr,
        b.addr,
        token.display()
    );
    (a, b, set)
}
