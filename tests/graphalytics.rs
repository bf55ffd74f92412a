//! The LDBC Graphalytics validation suite through the real binary: every reference output in
//! tests/data/graphalytics must pass the official validation rules (exact, epsilon 1e-4
//! relative, equivalence), from memory and out of core (`SET cache = '8KB'`:
//! the small graphs' files are larger than that).

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::graphalytics::{data_root, properties, run_clause};
use common::BIN;
use exec::verify::{read_reference, validate};

fn run_suite(settings: &str) -> usize {
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
            "{settings}\nCREATE OR REPLACE GRAPH g FROM '{}' FORMAT graphalytics;\n",
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
        for (reference, out, kernel) in expected {
            let want = read_reference(&reference).unwrap();
            let got = read_reference(&out).unwrap();
            if let Err(e) = validate(kernel.rule(), &want, &got) {
                panic!("{} ({settings}): {e}", reference.display());
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn all_reference_outputs_pass_from_memory() {
    assert_eq!(run_suite("SET cache = '1GB';"), 24);
}

#[test]
fn all_reference_outputs_pass_out_of_core() {
    assert_eq!(run_suite("SET cache = '8KB'; SET io_depth = 8;"), 24);
}

#[test]
fn results_do_not_depend_on_threads_or_mode() {
    for settings in [
        "SET threads = 1; SET mode = push;",
        "SET threads = 2; SET mode = block; SET cache = '8KB';",
        "SET threads = 2; SET mode = pull;",
    ] {
        assert_eq!(run_suite(settings), 24, "{settings}");
    }
}
