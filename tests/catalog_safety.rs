//! Catalog safety through the real binary: a damaged or missing catalog is rebuilt from the
//! self-describing graph files and never costs a graph; unlisted graph files are moved aside,
//! never deleted; another graph's file copied over a graph's is refused; `REPAIR CATALOG`
//! reports what it found; and while one process holds a data directory, others read it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

mod common;

use common::{text, BIN};

fn frontier(data: &Path, statements: &str) -> Output {
    common::csv(data, statements)
}

fn ok(data: &Path, statements: &str) -> Output {
    let out = frontier(data, statements);
    assert!(
        out.status.success(),
        "{statements}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// A data directory holding a directed graph `g` and an undirected weighted graph `h`.
fn setup(dir: &Path) -> PathBuf {
    let g = dir.join("g.txt");
    let mut s = String::new();
    for v in 0..500u64 {
        for k in 1..=3 {
            s.push_str(&format!("{v} {}\n", (v * 7 + k * 13) % 500));
        }
    }
    std::fs::write(&g, s).unwrap();
    let h = dir.join("h.txt");
    std::fs::write(&h, "1 2 0.5\n2 3 1.5\n3 1 2.0\n3 4 1.0\n").unwrap();
    let data = dir.join("data");
    ok(
        &data,
        &format!(
            "CREATE GRAPH g FROM '{}'; CREATE GRAPH h FROM '{}' UNDIRECTED WEIGHTED;",
            g.display(),
            h.display()
        ),
    );
    data
}

/// The sorted file names in `dir` (empty when it does not exist).
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Graph names per `SHOW GRAPHS`, and what the command said on stderr.
fn show(data: &Path) -> (Vec<String>, String) {
    let out = ok(data, "SHOW GRAPHS;");
    let names = text(&out.stdout)
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    (names, text(&out.stderr))
}

/// The rows of `RUN degree ON name`, as CSV.
fn degrees(data: &Path, name: &str) -> String {
    text(&ok(data, &format!("RUN degree ON {name};")).stdout)
}

/// Damages the catalog with `damage`, then checks the next command rebuilds it, says so with
/// `said`, and that both graphs are listed and give the same answers as before.
fn rebuilt_after(damage: impl Fn(&Path), said: &str) {
    let dir = tempfile::tempdir().unwrap();
    let data = setup(dir.path());
    let graph_files = files(&data.join("graphs"));
    assert_eq!(graph_files.len(), 2);
    let (g, h) = (degrees(&data, "g"), degrees(&data, "h"));

    damage(&data.join("catalog"));
    let (names, stderr) = show(&data);
    assert_eq!(files(&data.join("graphs")), graph_files, "graph files kept");
    assert_eq!(names, ["g", "h"], "{stderr}");
    assert!(stderr.contains(said), "{stderr}");
    assert!(
        stderr.contains("rebuilt it from the graph files"),
        "{stderr}"
    );
    assert!(stderr.contains("found 2 graphs (g, h)"), "{stderr}");
    assert_eq!(degrees(&data, "g"), g);
    assert_eq!(degrees(&data, "h"), h);
    let (_, stderr) = show(&data);
    assert!(stderr.is_empty(), "rebuilt once, quiet after: {stderr}");
}

/// Applies `f` to every regular file of the catalog folder.
fn each_catalog_file(catalog: &Path, f: impl Fn(&Path, Vec<u8>) -> Vec<u8>) {
    for entry in std::fs::read_dir(catalog).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            std::fs::write(&path, f(&path, bytes)).unwrap();
        }
    }
}

#[test]
fn a_truncated_catalog_is_rebuilt_from_the_graph_files() {
    rebuilt_after(
        |catalog| each_catalog_file(catalog, |_, b| b[..b.len() / 2].to_vec()),
        "is damaged",
    );
}

#[test]
fn a_bit_flipped_catalog_is_rebuilt_from_the_graph_files() {
    rebuilt_after(
        |catalog| {
            each_catalog_file(catalog, |_, mut b| {
                let middle = b.len() / 2;
                b[middle] ^= 0x08;
                b
            })
        },
        "is damaged",
    );
}

#[test]
fn a_deleted_catalog_folder_is_rebuilt_from_the_graph_files() {
    rebuilt_after(
        |catalog| std::fs::remove_dir_all(catalog).unwrap(),
        "is missing",
    );
}

#[test]
fn a_leftover_snapshot_file_does_not_break_commands() {
    let dir = tempfile::tempdir().unwrap();
    let data = setup(dir.path());
    // What a full disk left behind with the embedded database the catalog once was.
    std::fs::write(
        data.join("catalog/snap.0000000000001a2b.generating"),
        vec![0xa5u8; 3000],
    )
    .unwrap();
    let (names, stderr) = show(&data);
    assert_eq!(names, ["g", "h"], "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    ok(&data, "RUN degree ON g LIMIT 3;");
}

#[test]
fn unlisted_graph_files_are_moved_aside_never_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let data = setup(dir.path());
    let g_file = data.join("graphs").join(&files(&data.join("graphs"))[0]);
    std::fs::copy(&g_file, data.join("graphs/copy-77.fgraph")).unwrap();
    std::fs::write(data.join("graphs/junk-5.fgraph"), b"not a graph").unwrap();
    std::fs::write(data.join("graphs/notes.txt"), b"the user's").unwrap();
    std::fs::write(data.join("graphs/g-9.fgraph.tmp-12345"), b"scratch").unwrap();

    let (names, stderr) = show(&data);
    assert_eq!(names, ["g", "h"], "{stderr}");
    let lost = data.join("lost+found");
    assert_eq!(files(&lost), ["copy-77.fgraph", "junk-5.fgraph"]);
    for moved in ["copy-77.fgraph", "junk-5.fgraph"] {
        assert!(
            stderr.contains(&lost.join(moved).display().to_string()),
            "{stderr}"
        );
    }
    let left = files(&data.join("graphs"));
    assert!(left.contains(&"notes.txt".to_string()), "{left:?}");
    assert!(!left.iter().any(|f| f.contains(".tmp-")), "scratch removed");
}

#[test]
fn repair_catalog_reports_what_it_found_and_takes_back_lost_graphs() {
    let dir = tempfile::tempdir().unwrap();
    let data = setup(dir.path());
    let h = degrees(&data, "h");
    // h's file leaves the catalog's view (as a crash between the catalog and the file could
    // leave it), g's file is lost.
    let graphs = files(&data.join("graphs"));
    let (g_file, h_file) = (data.join("graphs").join(&graphs[0]), &graphs[1]);
    std::fs::create_dir_all(dir.path().join("aside")).unwrap();
    let aside = dir.path().join("aside").join(h_file);
    std::fs::copy(data.join("graphs").join(h_file), &aside).unwrap();
    ok(&data, "DROP GRAPH h;");
    std::fs::copy(&aside, data.join("graphs").join(h_file)).unwrap();
    std::fs::remove_file(&g_file).unwrap();

    // The next open moves h's file aside; REPAIR CATALOG takes it back and forgets g.
    let out = ok(&data, "REPAIR CATALOG;");
    let report = text(&out.stdout);
    assert!(report.starts_with("graph,file,found"), "{report}");
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("g,") && l.contains("removed from the catalog")),
        "{report}"
    );
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("h,") && l.contains("recovered from the file")),
        "{report}"
    );
    let (names, _) = show(&data);
    assert_eq!(names, ["h"]);
    assert_eq!(degrees(&data, "h"), h);
    assert!(files(&data.join("lost+found")).is_empty());
}

#[test]
fn another_graphs_file_copied_over_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = setup(dir.path());
    let graphs = files(&data.join("graphs"));
    let (g_file, h_file) = (
        data.join("graphs").join(&graphs[0]),
        data.join("graphs").join(&graphs[1]),
    );
    std::fs::copy(&h_file, &g_file).unwrap();
    for statement in [
        "RUN degree ON g;",
        "EXPLAIN RUN pagerank ON g;",
        "DESCRIBE GRAPH g;",
        "VERIFY GRAPH g;",
    ] {
        let out = frontier(&data, statement);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{statement}: {}", text(&out.stdout));
        assert!(stderr.contains("graph `g`"), "{statement}: {stderr}");
        assert!(
            stderr.contains(&g_file.display().to_string()),
            "{statement}: {stderr}"
        );
        assert!(stderr.contains("of graph `h`"), "{statement}: {stderr}");
    }
    let h = degrees(&data, "h");
    // REPAIR keeps h with its own file, not the copy, and forgets g, whose file is gone.
    let report = text(&ok(&data, "REPAIR CATALOG;").stdout);
    assert!(
        report
            .lines()
            .any(|l| l.starts_with(&format!("h,graphs/{},", graphs[1])) && l.contains("unchanged")),
        "{report}"
    );
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("g,") && l.contains("removed")),
        "{report}"
    );
    assert_eq!(show(&data).0, ["h"]);
    assert_eq!(degrees(&data, "h"), h);
    assert_eq!(files(&data.join("lost+found")), [graphs[0].clone()]);
}

/// A `frontier` reading statements from a pipe: it holds the data directory until its stdin
/// closes.
fn holder(data: &Path) -> Child {
    let mut child = Command::new(BIN)
        .arg("--data")
        .arg(data)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The holder writes its pid into the lock file once it holds the lock.
    let lock = data.join("lock");
    let pid = child.id().to_string();
    for _ in 0..3000 {
        if std::fs::read_to_string(&lock).is_ok_and(|t| t.trim() == pid) {
            return child;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the holding process never took the lock");
}

#[test]
fn a_held_directory_is_read_only_for_others() {
    let dir = tempfile::tempdir().unwrap();
    let data = setup(dir.path());
    let g = degrees(&data, "g");
    let mut repl = holder(&data);

    let out = ok(&data, "RUN degree ON g; SHOW GRAPHS;");
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with(&g), "{stdout}");
    assert!(stdout.contains("\nh,"), "{stdout}");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("read-only"), "{stderr}");
    let out = ok(
        &data,
        "DESCRIBE GRAPH h; VERIFY GRAPH h; EXPLAIN RUN bfs ON g FROM 1; SHOW SETTINGS;",
    );
    let described = text(&out.stdout);
    assert!(
        described
            .lines()
            .any(|l| l.starts_with("file id,") && l.len() == "file id,".len() + 32),
        "{described}"
    );

    let lock = data.join("lock").display().to_string();
    let source = dir.path().join("h.txt").display().to_string();
    for statement in [
        format!("CREATE GRAPH x FROM '{source}';"),
        "DROP GRAPH g;".to_string(),
        "REPAIR CATALOG;".to_string(),
    ] {
        let out = frontier(&data, &statement);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{statement}");
        assert!(stderr.contains("read-only"), "{statement}: {stderr}");
        assert!(stderr.contains(&lock), "{statement}: {stderr}");
        assert!(
            stderr.contains(&format!("pid {}", repl.id())),
            "{statement}: {stderr}"
        );
    }
    let _ = repl.stdin.take().unwrap().write_all(b"SHOW GRAPHS;\n");
    assert!(repl.wait().unwrap().success());
    let (names, _) = show(&data);
    assert_eq!(names, ["g", "h"], "nothing was changed");
}

#[test]
fn read_only_sessions_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = setup(dir.path());
    let before = files(&data.join("graphs"));
    std::fs::write(data.join("graphs/stray-3.fgraph"), b"x").unwrap();
    let read_only = |statements: &str| {
        Command::new(BIN)
            .arg("--data")
            .arg(&data)
            .args(["--read-only", "--format", "csv", "-c", statements])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = read_only("SHOW GRAPHS; RUN degree ON h;");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = read_only("DROP GRAPH g;");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--read-only"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        data.join("graphs/stray-3.fgraph").exists(),
        "nothing tidied"
    );
    std::fs::remove_file(data.join("graphs/stray-3.fgraph")).unwrap();
    assert_eq!(files(&data.join("graphs")), before);
    let out = read_only("SHOW GRAPHS;");
    assert!(text(&out.stdout).contains("\ng,"), "{}", text(&out.stdout));
    let missing = dir.path().join("nowhere");
    let out = Command::new(BIN)
        .arg("--data")
        .arg(&missing)
        .args(["--read-only", "-c", "SHOW GRAPHS;"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(!missing.exists(), "a read-only session creates nothing");
}
