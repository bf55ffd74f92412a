//! The benchmark entry point runs end to end on a tiny graph: `bench/run.sh --quick` with the
//! binary under test (no release build, no NetworKit). It checks that every cell ran and the
//! table and results file are written; it never looks at how long anything took.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_frontier");

#[test]
fn bench_runs_on_a_tiny_graph() {
    let work = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/run.sh");
    let out = Command::new("bash")
        .arg(script)
        .args(["--quick", "--work"])
        .arg(work.path())
        .args(["--threads", "2"])
        .env("FRONTIER_BIN", BIN)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "bench/run.sh failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );

    // The probe stored the device's concurrency where sessions read it.
    let device = std::fs::read_to_string(work.path().join("data/device.json")).unwrap();
    assert!(device.contains("\"io_depth\""), "{device}");
    assert!(device.contains("\"peak_mb_per_sec\""), "{device}");

    // 4 algorithms x 2 caches x 2 modes, every one ran and was profiled.
    let results = std::fs::read_to_string(work.path().join("results.csv")).unwrap();
    let rows: Vec<Vec<&str>> = results
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 16, "{results}");
    for r in &rows {
        assert_eq!(r[7], "ok", "a cell did not run: {r:?}\n{stderr}");
    }
    for algo in ["bfs", "pagerank", "wcc", "sssp"] {
        assert!(rows.iter().any(|r| r[3] == algo), "{algo} missing");
        assert!(stdout.contains(&format!("| 8 | {algo} |")), "{stdout}");
    }
    // Out of core (3 % of the file) reads blocks; in memory (100 %) reads none during the run.
    let blocks = |pct: &str| -> u64 {
        rows.iter()
            .filter(|r| r[4] == pct)
            .map(|r| r[11].parse::<u64>().unwrap())
            .sum()
    };
    assert!(blocks("3") > 0, "{results}");
    assert_eq!(blocks("100"), 0, "{results}");
}
