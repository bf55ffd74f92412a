//! `RUN ... INTO 'path'` through the real binary: special files are streamed into or refused,
//! never replaced; nothing inside the data directory is ever written; temporary files of killed
//! runs are removed.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;

use common::text;

/// A data directory with graph `g` (a directed 4-cycle plus a chord) and a scratch folder.
struct Setup {
    _dir: tempfile::TempDir,
    data: PathBuf,
    scratch: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let edges = dir.path().join("edges.txt");
    std::fs::write(&edges, "1 2\n2 3\n3 4\n4 1\n1 3\n").unwrap();
    let out = common::run(
        &data,
        &[
            "-c",
            &format!(
                "CREATE GRAPH g FROM '{}' FORMAT edgelist DIRECTED;",
                edges.display()
            ),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    Setup {
        _dir: dir,
        data,
        scratch,
    }
}

/// `RUN degree ON g INTO 'path' FORMAT csv`.
fn into(data: &Path, path: &Path) -> Output {
    common::run(
        data,
        &[
            "-c",
            &format!("RUN degree ON g INTO '{}' FORMAT csv;", path.display()),
        ],
    )
}

fn assert_refused(out: &Output, wanted: &[&str]) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in wanted {
        assert!(err.contains(w), "wanted `{w}` in\n{err}");
    }
}

/// Every path under `dir`, sorted.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p.clone());
            }
            all.push(p);
        }
    }
    all.sort();
    all
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success());
}

#[test]
fn a_fifo_with_a_reader_is_streamed_into_and_stays_a_fifo() {
    let s = setup();
    let fifo = s.scratch.join("rows.csv");
    mkfifo(&fifo);
    // The reader opens first (non-blocking, so it need not wait for a writer); the result is a
    // few lines, well within the pipe's buffer, so the run completes before we read.
    let mut reader = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let out = into(&s.data, &fifo);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut got = String::new();
    reader.read_to_string(&mut got).unwrap();
    let mut lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines.first().copied(), Some("vertex,out_degree,in_degree"));
    lines.remove(0);
    lines.sort_unstable();
    assert_eq!(lines, ["1,2,1", "2,1,1", "3,1,2", "4,1,1"]);
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced: {kind:?}");
}

#[test]
fn a_fifo_nobody_reads_is_refused_at_once_and_kept() {
    let s = setup();
    let fifo = s.scratch.join("rows.csv");
    mkfifo(&fifo);
    let out = into(&s.data, &fifo);
    assert_refused(
        &out,
        &[&fifo.display().to_string(), "no process is reading"],
    );
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn an_open_descriptor_name_is_written_in_place() {
    let s = setup();
    // /proc/self/fd/1 is the binary's own stdout, a pipe to this test.
    let out = into(&s.data, Path::new("/proc/self/fd/1"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("vertex,out_degree,in_degree\n"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn sockets_and_directories_are_refused_and_kept() {
    let s = setup();
    let sock = s.scratch.join("rows.csv");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let out = into(&s.data, &sock);
    assert_refused(&out, &["is a socket", "regular file", "FIFO"]);
    assert!(std::fs::symlink_metadata(&sock)
        .unwrap()
        .file_type()
        .is_socket());

    let dir = s.scratch.join("dir.csv");
    std::fs::create_dir(&dir).unwrap();
    let out = into(&s.data, &dir);
    assert_refused(&out, &["is a directory"]);
    assert!(dir.is_dir());
}

#[test]
fn a_symbolic_link_is_followed_and_kept() {
    let s = setup();
    let real = s.scratch.join("real.csv");
    std::fs::write(&real, "old\n").unwrap();
    let link = s.scratch.join("link.csv");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = into(&s.data, &link);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let rows = std::fs::read_to_string(&real).unwrap();
    assert!(rows.starts_with("vertex,"), "{rows}");
}

#[test]
fn nothing_inside_the_data_directory_is_written() {
    let s = setup();
    let graph_file = tree(&s.data)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "fgraph"))
        .expect("the graph has a block file");
    let graph_bytes = std::fs::read(&graph_file).unwrap();
    let conf = s.data.join("catalog").join("catalog.json");
    let db = s.data.join("lock");
    // A rename over a file gives its path a new inode.
    let inodes = |paths: &[&Path]| -> Vec<u64> {
        paths
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().ino())
            .collect()
    };
    let kept = [graph_file.as_path(), conf.as_path(), db.as_path()];
    let before = inodes(&kept);
    let link = s.scratch.join("into-data");
    std::os::unix::fs::symlink(&s.data, &link).unwrap();
    let targets = [
        graph_file.clone(),
        conf.clone(),
        s.data.join("new.csv"),
        s.scratch
            .join("..")
            .join("data")
            .join("graphs")
            .join("x.csv"),
        link.join("lock"),
        link.join("y.csv"),
    ];
    for target in &targets {
        let out = into(&s.data, target);
        assert_refused(
            &out,
            &[
                &target.display().to_string(),
                "inside the data directory",
                "somewhere else",
            ],
        );
    }
    // A data directory given through a symbolic link protects the directory it leads to.
    let out = into(&link, &s.data.join("z.csv"));
    assert_refused(&out, &["inside the data directory"]);

    assert_eq!(
        inodes(&kept),
        before,
        "a file of the data directory was replaced"
    );
    assert_eq!(std::fs::read(&graph_file).unwrap(), graph_bytes);
    let written: Vec<PathBuf> = tree(&s.data)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".csv") || name.contains("frontier-tmp")
        })
        .collect();
    assert!(
        written.is_empty(),
        "written into the data directory: {written:?}"
    );
    let out = common::csv(&s.data, "RUN degree ON g;");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn temporary_files_of_dead_processes_are_removed_and_nothing_else() {
    let s = setup();
    // A process that has exited and been reaped: its id names no process.
    let mut child = Command::new("true").stdout(Stdio::null()).spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = s.scratch.join(format!(".out.csv.frontier-tmp-{dead}-0"));
    let live = s
        .scratch
        .join(format!(".out.csv.frontier-tmp-{}-3", std::process::id()));
    let lookalike = s
        .scratch
        .join(format!(".out.csv.frontier-tmp-{dead}-0.keep"));
    let stale_dir = s.scratch.join(format!(".d.frontier-tmp-{dead}-1"));
    for f in [&stale, &live, &lookalike] {
        std::fs::write(f, "partial").unwrap();
    }
    std::fs::create_dir(&stale_dir).unwrap();

    let out = into(&s.data, &s.scratch.join("out.csv"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!stale.exists(), "the dead process's temporary file is left");
    assert!(
        live.exists(),
        "a running process's temporary file was removed"
    );
    assert!(lookalike.exists() && stale_dir.exists());
    assert!(s.scratch.join("out.csv").exists());
}
