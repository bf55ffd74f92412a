//! A string-keyed copy of every Graphalytics validation graph (vertex `17` becomes `v00017`)
//! gives the same answers as the integer graph, keyed by the strings: each output, its keys
//! mapped back to integers, passes the official validation against the reference output. On
//! every store: in memory, out of core with a small cache, and on memory nodes.

mod common;

use std::path::{Path, PathBuf};

use common::graphalytics::{data_root, properties, run_clause};
use common::memnode::pool;
use common::{csv, text};
use exec::verify::{read_reference, validate};

/// Digits of a key: every test graph's ids fit, so keys sort as their ids do.
const WIDTH: usize = 5;

fn key(id: &str) -> String {
    let n: u64 = id.parse().unwrap_or_else(|_| panic!("vertex id {id}"));
    format!("v{n:0WIDTH$}")
}

/// Copies dataset `dir` into `to` with every vertex id (vertex file, first two columns of the
/// edge file, source vertices in the properties) written as a key; returns the properties file.
fn keyed_copy(dir: &Path, to: &Path) -> PathBuf {
    let name = dir.file_name().unwrap().to_str().unwrap();
    let out = to.join(name);
    std::fs::create_dir_all(&out).unwrap();
    let v = std::fs::read_to_string(dir.join(format!("{name}.v"))).unwrap();
    let keyed: String = v
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("{}\n", key(l.split_whitespace().next().unwrap())))
        .collect();
    std::fs::write(out.join(format!("{name}.v")), keyed).unwrap();
    let e = std::fs::read_to_string(dir.join(format!("{name}.e"))).unwrap();
    let keyed: String = e
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut cols: Vec<String> = l.split_whitespace().map(str::to_string).collect();
            cols[0] = key(&cols[0]);
            cols[1] = key(&cols[1]);
            format!("{}\n", cols.join(" "))
        })
        .collect();
    std::fs::write(out.join(format!("{name}.e")), keyed).unwrap();
    let p = std::fs::read_to_string(dir.join(format!("{name}.properties"))).unwrap();
    let keyed: String = p
        .lines()
        .map(|l| match l.split_once('=') {
            Some((k, v)) if k.trim_end().ends_with("source-vertex") => {
                format!("{k}= {}\n", key(v.trim()))
            }
            _ => format!("{l}\n"),
        })
        .collect();
    let props = out.join(format!("{name}.properties"));
    std::fs::write(&props, keyed).unwrap();
    props
}

/// An output of `key value` lines with the keys (and key values) turned back into ids.
fn unkeyed(path: &Path) -> PathBuf {
    let t = std::fs::read_to_string(path).unwrap();
    let back = |tok: &str| match tok.strip_prefix('v') {
        Some(n) if n.len() == WIDTH && n.bytes().all(|b| b.is_ascii_digit()) => {
            n.parse::<u64>().unwrap().to_string()
        }
        _ => tok.to_string(),
    };
    let mapped: String = t
        .lines()
        .map(|l| {
            let toks: Vec<String> = l.split_whitespace().map(back).collect();
            assert!(
                l.starts_with('v'),
                "{}: a row not keyed: {l}",
                path.display()
            );
            format!("{}\n", toks.join(" "))
        })
        .collect();
    let out = path.with_extension("ids");
    std::fs::write(&out, mapped).unwrap();
    out
}

/// Runs every reference output of every dataset on the string-keyed copy; returns how many
/// passed.
fn suite(prelude: &str, create_suffix: &str) -> usize {
    let work = tempfile::tempdir().unwrap();
    let mut datasets: Vec<PathBuf> = std::fs::read_dir(data_root())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    datasets.sort();
    let mut checked = 0;
    for dir in datasets {
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        let props_path = keyed_copy(&dir, work.path());
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
            // FROM takes the key as a bare word (`FROM v00001`).
            let (clause, kernel) = run_clause(suffix, &props);
            let out = work.path().join(format!("{name}-{suffix}.out"));
            script.push_str(&format!(
                "RUN {clause} INTO '{}' FORMAT graphalytics;\n",
                out.display()
            ));
            expected.push((reference, out, kernel));
        }
        let output = csv(&work.path().join("data"), &script);
        assert!(
            output.status.success(),
            "{name} ({prelude}): {}",
            text(&output.stderr)
        );
        assert!(
            text(&output.stderr).contains("string keys"),
            "{name}: {}",
            text(&output.stderr)
        );
        for (reference, out, kernel) in expected {
            let want = read_reference(&reference).unwrap();
            let got = read_reference(&unkeyed(&out)).unwrap();
            if let Err(e) = validate(kernel.rule(), &want, &got) {
                panic!("{} keyed ({prelude}): {e}", reference.display());
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn string_keyed_copies_pass_in_memory() {
    assert_eq!(suite("SET cache = '1GB';", ""), 24);
}

#[test]
fn string_keyed_copies_pass_out_of_core() {
    assert_eq!(suite("SET cache = '8KB'; SET io_depth = 8;", ""), 24);
}

#[test]
fn string_keyed_copies_pass_over_dm() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    assert_eq!(
        suite(&format!("{set} SET cn_cache = '1GB';"), "STORAGE dm"),
        24
    );
    assert_eq!(
        suite(
            &format!("{set} SET cn_cache = '16B'; SET threads = 2;"),
            "STORAGE dm"
        ),
        24
    );
}

#[test]
fn string_keyed_copies_in_degree_order_pass_in_memory_and_out_of_core() {
    for prelude in ["SET cache = '1GB';", "SET cache = '8KB'; SET io_depth = 8;"] {
        assert_eq!(suite(prelude, "LAYOUT degree"), 24, "{prelude}");
    }
}
