//! Crash safety: CREATE GRAPH, CREATE OR REPLACE GRAPH and DROP GRAPH are killed with SIGKILL
//! at many points; after each kill a new process must find a consistent catalog — the graph
//! absent or complete and readable, the old graph of a killed replace intact — and no leftover
//! temporary files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{text, BIN};
const KILLS_PER_KIND: usize = 20;

fn frontier(data: &Path, statements: &str) -> Output {
    common::csv(data, statements)
}

/// `(vertices, edges)` of `name` per SHOW GRAPHS, if the catalog has it.
fn graph_size(data: &Path, name: &str) -> Option<(u64, u64)> {
    let out = frontier(data, "SHOW GRAPHS;");
    assert!(
        out.status.success(),
        "catalog unreadable: {}",
        text(&out.stderr)
    );
    text(&out.stdout).lines().skip(1).find_map(|l| {
        let cells: Vec<&str> = l.split(',').collect();
        (cells[0] == name).then(|| (cells[1].parse().unwrap(), cells[2].parse().unwrap()))
    })
}

/// The graph can be read whole: degrees of every vertex sum to its arcs.
fn assert_readable(data: &Path, name: &str, vertices: u64) {
    let out = frontier(data, &format!("VERIFY GRAPH {name}; RUN degree ON {name};"));
    assert!(
        out.status.success(),
        "graph {name} unreadable: {}",
        text(&out.stderr)
    );
    let rows = text(&out.stdout)
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .count();
    assert_eq!(rows as u64, vertices, "{name}: one degree row per vertex");
}

/// Every file under `graphs/` is one the catalog refers to, and `tmp/` is empty.
fn assert_no_leftovers(data: &Path, expected_files: usize) {
    let graphs: Vec<PathBuf> = std::fs::read_dir(data.join("graphs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(graphs.len(), expected_files, "graph files: {graphs:?}");
    assert_eq!(std::fs::read_dir(data.join("tmp")).unwrap().count(), 0);
}

/// Runs `statements` in a child and kills it with SIGKILL after `delay`.
fn run_and_kill(data: &Path, statements: &str, delay: Duration) {
    let mut child = Command::new(BIN)
        .arg("--data")
        .arg(data)
        .args(["-c", statements])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
}

/// A small deterministic generator for the kill delays.
struct Lcg(u64);
impl Lcg {
    fn next_below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

fn make_edges(dir: &Path, name: &str, vertices: u64, edges: u64, seed: u64) -> PathBuf {
    let path = dir.join(name);
    let out = Command::new(BIN)
        .args([
            "gen",
            "uniform",
            "--vertices",
            &vertices.to_string(),
            "--edges",
            &edges.to_string(),
        ])
        .args(["--seed", &seed.to_string(), "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    path
}

#[test]
fn killed_statements_leave_a_consistent_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let old_edges = make_edges(dir.path(), "old.txt", 3_000, 20_000, 1);
    let new_edges = make_edges(dir.path(), "new.txt", 50_000, 300_000, 2);

    // Reference sizes and the length of an uninterrupted import, to spread the kills over it.
    let reference = dir.path().join("reference");
    let create_new = format!("CREATE OR REPLACE GRAPH g FROM '{}';", new_edges.display());
    let create_old = format!("CREATE OR REPLACE GRAPH g FROM '{}';", old_edges.display());
    let started = Instant::now();
    assert!(frontier(&reference, &create_new).status.success());
    let span = started.elapsed().as_millis() as u64 + 50;
    let new_size = graph_size(&reference, "g").unwrap();
    assert!(frontier(&reference, &create_old).status.success());
    let old_size = graph_size(&reference, "g").unwrap();

    let mut rng = Lcg(42);
    for i in 0..KILLS_PER_KIND {
        // CREATE GRAPH into an empty catalog: afterwards absent, or complete.
        let data = dir.path().join(format!("create-{i}"));
        let delay = Duration::from_millis(rng.next_below(span));
        run_and_kill(&data, &create_new.replace("OR REPLACE ", ""), delay);
        match graph_size(&data, "g") {
            None => assert_no_leftovers(&data, 0),
            Some(size) => {
                assert_eq!(size, new_size, "kill after {delay:?}");
                assert_readable(&data, "g", size.0);
                assert_no_leftovers(&data, 1);
            }
        }

        // CREATE OR REPLACE over an existing graph: the old graph or the new one, never neither.
        let data = dir.path().join(format!("replace-{i}"));
        assert!(frontier(&data, &create_old).status.success());
        let delay = Duration::from_millis(rng.next_below(span));
        run_and_kill(&data, &create_new, delay);
        let size = graph_size(&data, "g").expect("a killed replace lost the old graph");
        assert!(
            size == old_size || size == new_size,
            "kill after {delay:?}: {size:?}"
        );
        assert_readable(&data, "g", size.0);
        assert_no_leftovers(&data, 1);

        // DROP GRAPH: the graph present and readable, or gone with its file.
        let data = dir.path().join(format!("drop-{i}"));
        assert!(frontier(&data, &create_old).status.success());
        let delay = Duration::from_millis(rng.next_below(200));
        run_and_kill(&data, "DROP GRAPH g;", delay);
        match graph_size(&data, "g") {
            None => assert_no_leftovers(&data, 0),
            Some(size) => {
                assert_eq!(size, old_size);
                assert_readable(&data, "g", size.0);
                assert_no_leftovers(&data, 1);
            }
        }
    }
}
