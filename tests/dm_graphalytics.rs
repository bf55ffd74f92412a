//! The LDBC Graphalytics validation suite over `STORAGE dm`, through the real binary: two
//! `frontier memnode` processes on loopback, a token file, and every reference output in
//! tests/data/graphalytics checked with the official rules, with a large and a tiny `cn_cache`.
//! Then a memory node killed in the middle of a query: the query fails naming the node, and the
//! session goes on.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::graphalytics::data_root;
use common::memnode::pool;
use common::BIN;

use rexpect::session::spawn_command;

fn run_suite(settings: &str) -> usize {
    run_suite_created(settings, "STORAGE dm")
}

fn run_suite_created(settings: &str, create_suffix: &str) -> usize {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    common::graphalytics::run_suite(
        &format!("{set} {settings}"),
        create_suffix,
        |name, stdout| {
            assert!(
                stdout.contains("memory nodes"),
                "{name}: not loaded into the pool"
            );
        },
    )
}

#[test]
fn all_reference_outputs_pass_over_dm_with_a_large_cn_cache() {
    assert_eq!(run_suite("SET cn_cache = '1GB';"), 24);
}

/// A budget below every test graph's per-vertex state (4 B per vertex for BFS and more for the
/// others): the kernels keep their state in the memory nodes (see
/// `tiny_cn_cache_keeps_converted_kernels_state_remote`).
const TINY: &str = "SET cn_cache = '16B'; SET threads = 2; SET mode = push;";

#[test]
fn all_reference_outputs_pass_over_dm_with_a_tiny_cn_cache() {
    assert_eq!(run_suite(TINY), 24);
    for strategy in ["direct", "valrd", "refrd"] {
        let forced = format!("{TINY} SET dm_update = {strategy};");
        assert_eq!(run_suite(&forced), 24, "dm_update = {strategy}");
    }
}

#[test]
fn graphs_in_degree_order_pass_over_dm_with_state_local_and_remote() {
    for settings in ["SET cn_cache = '1GB';", TINY] {
        assert_eq!(
            run_suite_created(settings, "STORAGE dm LAYOUT degree"),
            24,
            "{settings}"
        );
    }
}

/// Runs `statements` after pointing the session at the pool, output as JSON lines; returns the
/// parsed objects (result rows, PROFILE rows, remote totals alike).
fn json_lines(work: &Path, set: &str, statements: &str) -> Vec<serde_json::Value> {
    let o = Command::new(BIN)
        .arg("--data")
        .arg(work.join("data"))
        .args(["--format", "json", "-c", &format!("{set} {statements}")])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{statements}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// PROFILE rows of a DM run: one object per iteration.
fn profile_rows(lines: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    lines
        .iter()
        .filter(|l| l.get("iteration").is_some() && l.get("round trips").is_some())
        .collect()
}

/// The sum of PROFILE remote totals named by `keys` (`|`-separated).
fn remote_total(lines: &[serde_json::Value], keys: &str) -> u64 {
    keys.split('|').map(|key| remote_total_of(lines, key)).sum()
}

/// The PROFILE total of one remote counter.
fn remote_total_of(lines: &[serde_json::Value], key: &str) -> u64 {
    lines
        .iter()
        .find(|l| l["remote"] == key)
        .and_then(|l| l["value"].as_str())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no remote total `{key}` in {lines:?}"))
}

fn cell(row: &serde_json::Value, key: &str) -> u64 {
    row[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no number `{key}` in {row}"))
}

fn create_example(work: &Path, set: &str, name: &str) {
    let props = data_root().join(format!("{name}/{name}.properties"));
    json_lines(
        work,
        set,
        &format!(
            "CREATE GRAPH g FROM '{}' FORMAT graphalytics STORAGE dm;",
            props.display()
        ),
    );
}

#[test]
fn profile_over_dm_shows_remote_work_per_iteration() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    create_example(work.path(), &set, "example-directed");
    let lines = json_lines(
        work.path(),
        &set,
        "SET cn_cache = '1GB'; PROFILE RUN bfs ON g FROM 1;",
    );
    let rows = profile_rows(&lines);
    assert!(rows.len() >= 2, "one row per BFS level: {lines:?}");
    for r in &rows {
        assert!(cell(r, "active") > 0, "{r}");
        assert!(cell(r, "round trips") > 0, "every level reads lists: {r}");
        assert!(cell(r, "remote ops") >= cell(r, "round trips"), "{r}");
        assert!(r.get("bytes sent").is_some(), "{r}");
    }
    let per_iteration: u64 = rows.iter().map(|r| cell(r, "round trips")).sum();
    assert!(per_iteration <= remote_total(&lines, "round trips"));
}

/// The tiny suite's runs take the remote-state path: EXPLAIN says so, and their PROFILE shows
/// remote updates (CAS for BFS's claims, mailbox pushes for PageRank's collaborative sums,
/// CAS or mailbox pushes for SSSP and WCC as the cost rule picks per round, writes for CDLP's
/// and LCC's results, claims for DFS)
/// and, for the frontier and reduce kernels, remote push rounds; with a large budget the same
/// runs keep their state local and send no updates.
#[test]
fn tiny_cn_cache_keeps_converted_kernels_state_remote() {
    for (dataset, clause, remote_op, remote_rounds) in [
        ("test-bfs-directed", "bfs ON g FROM 1", "remote CAS", true),
        (
            "test-sssp-undirected",
            "sssp ON g FROM 1",
            "remote CAS|mailbox pushes",
            true,
        ),
        (
            "test-pr-directed",
            "pagerank ON g ITER 3",
            "mailbox pushes",
            true,
        ),
        (
            "test-wcc-directed",
            "wcc ON g",
            "remote CAS|mailbox pushes",
            true,
        ),
        (
            "test-cdlp-directed",
            "cdlp ON g ITER 2",
            "remote writes",
            true,
        ),
        ("test-lcc-undirected", "lcc ON g", "remote writes", false),
        ("test-bfs-directed", "dfs ON g FROM 1", "remote CAS", false),
    ] {
        let work = tempfile::tempdir().unwrap();
        let (_a, _b, set) = pool(work.path());
        create_example(work.path(), &set, dataset);
        let explain = Command::new(BIN)
            .arg("--data")
            .arg(work.path().join("data"))
            .args(["-c", &format!("{set} {TINY} EXPLAIN RUN {clause};")])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&explain.stdout);
        assert!(text.contains("state:     remote ("), "{dataset}: {text}");

        let lines = json_lines(work.path(), &set, &format!("{TINY} PROFILE RUN {clause};"));
        let rows = profile_rows(&lines);
        assert!(!rows.is_empty(), "{dataset}: {lines:?}");
        for r in rows.iter().filter(|_| remote_rounds) {
            let strategy = r["strategy"].as_str().unwrap_or_default();
            assert!(strategy.starts_with("remote "), "{dataset}: {r}");
            assert!(cell(r, "round trips") > 0, "{dataset}: {r}");
        }
        assert!(remote_total(&lines, remote_op) > 0, "{dataset}: {lines:?}");
        if clause.starts_with("bfs") {
            // The local claim filter: one CAS per vertex reached besides the source, however
            // many edges lead to it.
            let reached: u64 = rows.iter().map(|r| cell(r, "active")).sum();
            assert_eq!(remote_total(&lines, remote_op), reached - 1, "{lines:?}");
        }

        let big = "SET cn_cache = '1GB'; SET threads = 2; SET mode = push;";
        let lines = json_lines(work.path(), &set, &format!("{big} PROFILE RUN {clause};"));
        assert_eq!(remote_total(&lines, remote_op), 0, "{dataset}: state local");
        assert!(profile_rows(&lines).iter().all(|r| !r["strategy"]
            .as_str()
            .unwrap_or_default()
            .starts_with("remote ")));
    }
}

/// `SET dm_update` forces an update strategy; PROFILE names it on every remote round, and the
/// totals show its traffic: pass-by-value adds for direct, mailbox pushes and pulls for the
/// collaborative strategies.
#[test]
fn forced_update_strategies_are_named_in_profile() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    create_example(work.path(), &set, "test-pr-directed");
    for (strategy, op) in [
        ("direct", "pass-by-value items"),
        ("valrd", "mailbox pushes"),
        ("refrd", "mailbox pulls"),
    ] {
        let lines = json_lines(
            work.path(),
            &set,
            &format!("{TINY} SET dm_update = {strategy}; PROFILE RUN pagerank ON g ITER 2;"),
        );
        let rows = profile_rows(&lines);
        assert_eq!(rows.len(), 2, "{strategy}: {lines:?}");
        for r in rows {
            assert_eq!(r["strategy"], format!("remote {strategy}"), "{r}");
        }
        assert!(remote_total(&lines, op) > 0, "{strategy}: {lines:?}");
    }
}

#[test]
fn missing_pool_settings_are_named() {
    let work = tempfile::tempdir().unwrap();
    let props = data_root().join("example-directed/example-directed.properties");
    let run = |script: &str| {
        Command::new(BIN)
            .arg("--data")
            .arg(work.path().join("data"))
            .args(["-c", script])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let create = format!(
        "CREATE GRAPH g FROM '{}' FORMAT graphalytics STORAGE dm;",
        props.display()
    );
    let o = run(&create);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("memory_nodes"));
    let o = run(&format!("SET memory_nodes = '127.0.0.1:9'; {create}"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("memory_token_file"));
}

#[test]
fn a_killed_memory_node_fails_the_query_and_the_session_goes_on() {
    let work = tempfile::tempdir().unwrap();
    let (_a, mut b, set) = pool(work.path());
    let edges = work.path().join("g.txt");
    let status = Command::new(BIN)
        .args(["gen", "rmat", "--scale", "12", "--seed", "5", "-o"])
        .arg(&edges)
        .status()
        .unwrap();
    assert!(status.success());

    let mut cmd = Command::new(BIN);
    cmd.arg("--data").arg(work.path().join("data"));
    cmd.env("TERM", "xterm");
    // A bound that only catches a hang: every expectation below normally takes well under it.
    let mut p = spawn_command(cmd, Some(60_000)).unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_line(&set).unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_line(&format!(
        "CREATE GRAPH g FROM '{}' FORMAT edgelist STORAGE dm;",
        edges.display()
    ))
    .unwrap();
    p.exp_string("created graph g").unwrap();
    p.exp_string("frontier> ").unwrap();
    // Tiny cn_cache: many small round trips, so the query is still running when the node dies.
    p.send_line("SET cn_cache = '4KiB';").unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_line("RUN pagerank ON g ITER 1000000;").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let _ = b.child.kill();
    let _ = b.child.wait();
    let dead = b.addr.clone();
    p.exp_string(&dead).unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_line("SHOW GRAPHS;").unwrap();
    p.exp_string("dm").unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}
