//! The Graphalytics datasets in tests/data: where they are, their parameters, and the RUN each
//! reference output is checked against.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use exec::verify::{read_reference, validate, Kernel};

use super::BIN;

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

/// Runs every reference output through the binary and validates it with the official rules:
/// `prelude` statements first, then per dataset `CREATE OR REPLACE GRAPH g ... FORMAT
/// graphalytics {create_suffix};` and one `RUN ... INTO ... FORMAT graphalytics` per reference.
/// `check(dataset, stdout)` may assert more about each dataset's run. Returns how many outputs
/// were validated.
pub fn run_suite(prelude: &str, create_suffix: &str, check: impl Fn(&str, &str)) -> usize {
    let work = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut datasets: Vec<PathBuf> = std::fs::read_dir(data_root())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.file_name().unwrap() != "validator-selftest")
        .collect();
    datasets.sort();
    for dir in datasets {
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        let props_path = dir.join(format!("{name}.properties"));
        let props = properties(&props_path);
        let mut script = format!(
            "{prelude}\nCREATE OR REPLACE GRAPH g FROM '{}' FORMAT graphalytics {create_suffix};\n",
            props_path.display()
        );
        let mut expected = Vec::new();
        for suffix in ["BFS", "CDLP", "LCC", "PR", "SSSP", "WCC"] {
            let reference = dir.join(format!("{name}-{suffix}"));
            if !reference.exists() {
                continue;
            }
            let (clause, kernel) = run_clause(suffix, &props);
            let out = work.path().join(format!("{name}-{suffix}.out"));
            script.push_str(&format!(
                "RUN {clause} INTO '{}' FORMAT graphalytics;\n",
                out.display()
            ));
            expected.push((reference, out, kernel));
        }
        let output = Command::new(BIN)
            .arg("--data")
            .arg(work.path().join("data"))
            .args(["-c", &script])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        check(&name, &String::from_utf8_lossy(&output.stdout));
        for (reference, out, kernel) in expected {
            let want = read_reference(&reference).unwrap();
            let got = read_reference(&out).unwrap();
            if let Err(e) = validate(kernel.rule(), &want, &got) {
                panic!("{} ({prelude}): {e}", reference.display());
            }
            checked += 1;
        }
    }
    checked
}
