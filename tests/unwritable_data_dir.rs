//! A data directory this process may only read (another user's, a read-only mount) opens
//! read-only by itself: reads work, changes fail saying why and what to do.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{csv, text, BIN};

/// Runs `statements` on `data` as a process that cannot write there: as user `nobody` when the
/// tests run as root (root writes anywhere), else after taking the write bits away.
fn run_without_write_access(data: &Path, statements: &str) -> Output {
    // SAFETY: geteuid is always safe to call.
    let root = unsafe { libc::geteuid() } == 0;
    // `nobody` may not be able to reach the build directory (under a private home, say): it
    // runs a copy of the binary next to the data.
    let bin = if root {
        let copy = data.parent().unwrap().join("frontier-copy");
        if !copy.exists() {
            std::fs::hard_link(BIN, &copy)
                .or_else(|_| std::fs::copy(BIN, &copy).map(|_| ()))
                .unwrap();
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        copy
    } else {
        Path::new(BIN).to_path_buf()
    };
    let mut cmd = Command::new(bin);
    cmd.arg("--data")
        .arg(data)
        .args(["--format", "csv", "-c", statements])
        .stdin(Stdio::null());
    if root {
        // SAFETY: setgid/setuid are async-signal-safe and only change this child's ids.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    cmd.output().expect("the frontier binary runs")
}

fn set_mode_all(path: &Path, dir_mode: u32, file_mode: u32) {
    let mode = if path.is_dir() { dir_mode } else { file_mode };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            set_mode_all(&e.unwrap().path(), dir_mode, file_mode);
        }
    }
}

#[test]
fn a_directory_without_write_access_is_read_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("g.txt");
    std::fs::write(&edges, "1 2\n2 3\n3 1\n").unwrap();
    let data = dir.path().join("data");
    let out = csv(
        &data,
        &format!("CREATE GRAPH g FROM '{}' DIRECTED;", edges.display()),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));

    // Readable and traversable by everyone, writable by no one but root.
    set_mode_all(dir.path(), 0o755, 0o644);
    set_mode_all(&data, 0o555, 0o444);

    let out = run_without_write_access(&data, "SHOW GRAPHS; RUN bfs ON g FROM 1;");
    let err = text(&out.stderr);
    set_mode_all(&data, 0o755, 0o644);
    assert!(out.status.success(), "reads work: {err}");
    assert!(
        err.contains("read-only") && err.contains("cannot write"),
        "{err}"
    );
    let rows = text(&out.stdout);
    assert!(rows.contains("g,3,3,true"), "{rows}");
    assert!(rows.contains("vertex,depth"), "{rows}");

    set_mode_all(&data, 0o555, 0o444);
    let out = run_without_write_access(&data, "DROP GRAPH g;");
    let err = text(&out.stderr);
    set_mode_all(&data, 0o755, 0o644);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("DROP GRAPH needs to change") && err.contains("give it write access"),
        "{err}"
    );
    let out = csv(&data, "SHOW GRAPHS;");
    assert!(
        text(&out.stdout).contains("g,3,3"),
        "the graph is still there"
    );
}
