//! Imports through the real binary: memory stays bounded whatever the input (a line is capped)
//! and an import waiting for bytes that never come ends on Ctrl-C.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{text, BIN};

/// Runs `statements` and expects exit 1 with every piece of `wanted` in the error.
fn assert_import_fails(data: &Path, statements: &str, wanted: &[&str]) {
    let out = common::run(data, &["-c", statements]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{statements}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in wanted {
        assert!(err.contains(w), "wanted `{w}` in\n{err}");
    }
}

#[test]
fn an_overlong_line_stops_the_import_naming_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let path = d.path().join("noline.txt");
    let mut bytes = b"1 2\n2 3\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'7', 3 << 20));
    std::fs::write(&path, bytes).unwrap();
    let shown = format!("{}:3: line longer than 1 MiB", path.display());
    assert_import_fails(
        &data,
        &format!("CREATE GRAPH g FROM '{}';", path.display()),
        &[&shown],
    );
}

#[test]
fn an_endless_stream_without_newlines_stops_at_the_line_cap() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    assert_import_fails(
        &data,
        "CREATE GRAPH g FROM '/dev/zero' FORMAT edgelist;",
        &["/dev/zero:1: line longer than 1 MiB"],
    );
}

/// True when process `pid` has `path` open (its input is being read).
fn has_open(pid: u32, path: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == path))
}

#[test]
fn a_fifo_with_no_writer_is_cancelled_by_sigint() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let fifo = d.path().join("edges.fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut child = Command::new(BIN)
        .arg("--data")
        .arg(&data)
        .args(["-c", &format!("CREATE GRAPH g FROM '{}';", fifo.display())])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Generous bounds: the test fails only if the import never opens the FIFO or never ends.
    let limit = Instant::now() + Duration::from_secs(20);
    while !has_open(pid, &fifo) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "frontier ended before reading the FIFO"
        );
        assert!(Instant::now() < limit, "frontier never opened the FIFO");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGINT) }, 0);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("frontier still waits on the FIFO after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("cancelled"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_fifo_with_a_writer_imports_what_it_sends() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let fifo = d.path().join("edges.fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let writer = {
        let fifo = fifo.clone();
        // Opening for writing blocks until the import opens the FIFO for reading.
        std::thread::spawn(move || std::fs::write(fifo, "1 2\n2 3\n3 1\n4 1\n").unwrap())
    };
    let mut child = Command::new(BIN)
        .arg("--data")
        .arg(&data)
        .args(["-c", &format!("CREATE GRAPH g FROM '{}';", fifo.display())])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A generous bound so that a lost writer fails the test instead of hanging it.
    let limit = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the import of a FIFO with a writer never ended");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    // Checked before joining the writer, which would wait forever for a reader that failed.
    assert!(out.status.success(), "{all}");
    writer.join().unwrap();
    assert!(all.contains("4 vertices, 4 edges"), "{all}");
}
