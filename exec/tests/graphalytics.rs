//! Every Graphalytics kernel on every Graphalytics validation graph, checked with the verifier
//! against the reference outputs, for every EdgeMap mode, 1 and 2 threads, CSR view on and off.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use exec::algorithms::call;
use exec::testing::VecGraph;
use exec::verify::{verify_table, Kernel};
use exec::{run, RunConfig};
use planner::{AlgoCall, Mode};
use storage::GraphStore;

struct Dataset {
    name: String,
    dir: PathBuf,
    props: HashMap<String, String>,
    ids: Vec<u64>,
    edges: Vec<(u64, u64)>,
    weights: Option<Vec<f64>>,
    directed: bool,
}

fn load(dir: &Path) -> Dataset {
    let name = dir.file_name().unwrap().to_str().unwrap().to_string();
    let text = std::fs::read_to_string(dir.join(format!("{name}.properties"))).unwrap();
    let prefix = format!("graph.{name}.");
    let props: HashMap<String, String> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| {
            (
                k.trim().trim_start_matches(&prefix).to_string(),
                v.trim().to_string(),
            )
        })
        .collect();
    let ids: Vec<u64> = std::fs::read_to_string(dir.join(&props["vertex-file"]))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim().parse().unwrap())
        .collect();
    let weighted = props.contains_key("edge-properties.names");
    let mut edges = Vec::new();
    let mut weights = Vec::new();
    for line in std::fs::read_to_string(dir.join(&props["edge-file"]))
        .unwrap()
        .lines()
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 2 {
            continue;
        }
        edges.push((f[0].parse().unwrap(), f[1].parse().unwrap()));
        if weighted {
            weights.push(f[2].parse().unwrap());
        }
    }
    let directed = props["directed"] == "true";
    Dataset {
        name,
        dir: dir.to_path_buf(),
        props,
        ids,
        edges,
        weights: weighted.then_some(weights),
        directed,
    }
}

fn datasets() -> Vec<Dataset> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphalytics");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.iter().map(|d| load(d)).collect()
}

/// The calls with references for `ds`, with their kernels.
fn calls(ds: &Dataset, g: &VecGraph) -> Vec<(Kernel, AlgoCall)> {
    let p = &ds.props;
    let mut out = Vec::new();
    let source = |key: &str| g.internal_id(p[key].parse().unwrap()).unwrap();
    for kernel in [
        Kernel::Bfs,
        Kernel::Cdlp,
        Kernel::Lcc,
        Kernel::PageRank,
        Kernel::Sssp,
        Kernel::Wcc,
    ] {
        if !ds
            .dir
            .join(format!("{}-{}", ds.name, kernel.suffix()))
            .exists()
        {
            continue;
        }
        let call = match kernel {
            Kernel::Bfs => call("bfs").from(source("bfs.source-vertex")),
            Kernel::Sssp => call("sssp").from(source("sssp.source-vertex")),
            Kernel::Cdlp => {
                call("cdlp").with("iter", p["cdlp.max-iterations"].parse::<u64>().unwrap())
            }
            Kernel::PageRank => call("pagerank")
                .with("iter", p["pr.num-iterations"].parse::<u64>().unwrap())
                .with("damping", p["pr.damping-factor"].parse::<f64>().unwrap()),
            Kernel::Lcc => call("lcc"),
            Kernel::Wcc => call("wcc"),
        };
        out.push((kernel, call));
    }
    out
}

#[test]
fn all_kernels_match_the_references() {
    let mut checked = 0;
    for ds in datasets() {
        for csr in [true, false] {
            let g = VecGraph::new(
                ds.ids.clone(),
                ds.edges.clone(),
                ds.directed,
                ds.weights.clone(),
            )
            .with_csr(csr);
            for (kernel, call) in calls(&ds, &g) {
                let reference = std::fs::read_to_string(ds.dir.join(format!(
                    "{}-{}",
                    ds.name,
                    kernel.suffix()
                )))
                .unwrap();
                for mode in [Mode::Auto, Mode::Push, Mode::Block, Mode::Pull] {
                    for threads in [1, 2] {
                        let cfg = RunConfig {
                            mode,
                            ..RunConfig::with_threads(threads)
                        };
                        let table = run(&g, &call, &cfg).unwrap();
                        assert!(!table.iterations.is_empty() || ds.ids.is_empty());
                        if let Err(e) = verify_table(kernel, &table, &reference) {
                            panic!(
                                "{} {kernel:?} mode {mode:?} threads {threads} csr {csr}: {e}",
                                ds.name
                            );
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    // 24 reference outputs × 2 csr × 4 modes × 2 thread counts.
    assert_eq!(checked, 24 * 16);
}

#[test]
fn pagerank_sums_to_one_with_sinks() {
    let ds = datasets()
        .into_iter()
        .find(|d| d.name == "test-pr-directed")
        .unwrap();
    let g = VecGraph::new(ds.ids.clone(), ds.edges.clone(), true, None);
    let table = run(
        &g,
        &call("pagerank").with("iter", 14u64).with("damping", 0.85),
        &RunConfig::with_threads(2),
    )
    .unwrap();
    let values = exec::verify::table_values(&table, "rank").unwrap();
    let sum: f64 = values
        .values()
        .map(|v| match v {
            exec::verify::Value::Float(f) => *f,
            exec::verify::Value::Int(i) => *i as f64,
        })
        .sum();
    assert!((sum - 1.0).abs() < 1e-9, "rank sum {sum}");
    assert_eq!(table.iterations.len(), 14);
}
