//! The Graphalytics datasets in tests/data: where they are, their parameters, and the RUN each
//! reference output is checked against.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use exec::verify::Kernel;

/// Where the copied LDBC Graphalytics datasets are.
pub fn data_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphalytics")
}

/// `graph.<name>.<key>` values of a .properties file.
pub fn properties(path: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .filter_map(|(k, v)| {
            let k = k.trim();
            let key = k.strip_prefix("graph.")?.split_once('.')?.1;
            Some((key.to_string(), v.trim().to_string()))
        })
        .collect()
}

/// The RUN clause and the kernel for a reference output suffix.
pub fn run_clause(suffix: &str, p: &HashMap<String, String>) -> (String, Kernel) {
    match suffix {
        "BFS" => (
            format!("bfs ON g FROM {}", p["bfs.source-vertex"]),
            Kernel::Bfs,
        ),
        "SSSP" => (
            format!("sssp ON g FROM {}", p["sssp.source-vertex"]),
            Kernel::Sssp,
        ),
        "PR" => (
            format!(
                "pagerank ON g ITER {} damping {}",
                p["pr.num-iterations"], p["pr.damping-factor"]
            ),
            Kernel::PageRank,
        ),
        "CDLP" => (
            format!("cdlp ON g ITER {}", p["cdlp.max-iterations"]),
            Kernel::Cdlp,
        ),
        "WCC" => ("wcc ON g".to_string(), Kernel::Wcc),
        "LCC" => ("lcc ON g".to_string(), Kernel::Lcc),
        other => panic!("unknown reference suffix {other}"),
    }
}
