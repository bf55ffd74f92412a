//! Algorithms against networkx, through the real binary: `scc`, `kcore`, `triangles`,
//! `closeness`, `harmonic`, `betweenness` (exact: SAMPLES above |V|) and PageRank's options (weights, personalised, tolerance) on small generated graphs (directed
//! with opposite arcs and self-loops, undirected, weighted, with isolated vertices), in memory,
//! out of core and on DM with the state in the memory nodes. Needs `python3` with `networkx`
//! and `scipy` (`scripts/test.sh` installs them).

use std::collections::BTreeMap;
use std::path::Path;

mod common;

use common::memnode::pool;
use common::small_graphs::{Graph, Rng};
use common::{python, text};

/// networkx's answers: one line of `vertex` and the [`COLUMNS`] per vertex. Self-loops are
/// removed first (networkx's `core_number` refuses them; frontier ignores them); triangles of
/// a directed graph are those of its undirected view.
const NETWORKX: &str = r#"
import sys, networkx as nx
edges, vertices, kind = sys.argv[1], sys.argv[2], sys.argv[3]
directed = kind == "directed"
G = nx.DiGraph() if directed else nx.Graph()
for line in open(vertices):
    G.add_node(int(line))
for line in open(edges):
    p = line.split()
    G.add_edge(int(p[0]), int(p[1]))
G.remove_edges_from(list(nx.selfloop_edges(G)))
comps = nx.strongly_connected_components(G) if directed else nx.connected_components(G)
component = {v: min(c) for c in comps for v in c}
core = nx.core_number(G)
triangles = nx.triangles(G.to_undirected() if directed else G)
closeness = nx.closeness_centrality(G)
harmonic = nx.harmonic_centrality(G)
betweenness = nx.betweenness_centrality(G)
for v in sorted(G.nodes):
    print(f"{v},{component[v]},{core[v]},{triangles[v]},{closeness[v]!r},{harmonic[v]!r},{betweenness[v]!r}")
"#;

/// networkx's PageRank, converged: `vertex,rank` lines for plain, weighted and personalised
/// (to `source`) PageRank, each block after a line naming it.
const NETWORKX_PAGERANK: &str = r#"
import sys, networkx as nx
edges, vertices, kind, source = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
G = nx.DiGraph() if kind == "directed" else nx.Graph()
for line in open(vertices):
    G.add_node(int(line))
for line in open(edges):
    p = line.split()
    G.add_edge(int(p[0]), int(p[1]), weight=float(p[2]) if len(p) > 2 else 1.0)
runs = {
    "plain": nx.pagerank(G, alpha=0.85, weight=None, tol=1e-13, max_iter=10000),
    "weights": nx.pagerank(G, alpha=0.85, weight="weight", tol=1e-13, max_iter=10000),
    "personalised": nx.pagerank(G, alpha=0.85, weight=None, personalization={source: 1}, tol=1e-13, max_iter=10000),
}
for name, ranks in runs.items():
    print(name)
    for v in sorted(ranks):
        print(f"{v},{ranks[v]!r}")
"#;

/// `n` vertices with gapped ids (the last few isolated), `m` random arcs among the others,
/// with a dense clump so that cores and triangles are not all small.
fn generate(
    name: &'static str,
    seed: u64,
    n: u64,
    m: u64,
    weighted: bool,
    options: &'static str,
) -> Graph {
    let mut rng = Rng(seed);
    let id = |v: u64| 3 * v + 10;
    let linked = n - 4;
    let mut seen = std::collections::BTreeSet::new();
    let mut edges = String::new();
    let mut arc = |u: u64, v: u64, rng: &mut Rng| {
        if seen.insert((u, v)) {
            let w = if weighted {
                format!(" {}", rng.below(9) as f64 / 2.0)
            } else {
                String::new()
            };
            edges.push_str(&format!("{} {}{w}\n", id(u), id(v)));
        }
    };
    for _ in 0..m {
        let (u, v) = (rng.below(linked), rng.below(linked));
        arc(u, v, &mut rng);
    }
    // A clump of 6 with most arcs, some both ways.
    for u in 0..6 {
        for v in 0..6 {
            if u != v && rng.below(3) > 0 {
                arc(u, v, &mut rng);
            }
        }
    }
    let vertices = (0..n).map(|v| format!("{}\n", id(v))).collect();
    Graph {
        name,
        edges,
        vertices,
        options,
    }
}

fn graphs() -> Vec<Graph> {
    let mut with_loops = generate("loops", 7, 30, 60, false, "DIRECTED");
    with_loops.edges.push_str("10 10\n19 19\n");
    vec![
        generate("arcs", 1, 40, 90, false, "DIRECTED"),
        generate("sparse", 2, 50, 55, false, "DIRECTED"),
        generate("edges", 3, 40, 80, false, "UNDIRECTED"),
        generate("weights", 4, 35, 80, true, "DIRECTED WEIGHTED"),
        with_loops,
    ]
}

/// The columns compared, in the order networkx's lines give them.
const COLUMNS: [&str; 6] = [
    "component",
    "core",
    "triangles",
    "closeness",
    "harmonic",
    "betweenness",
];

/// Per vertex: the [`COLUMNS`], as networkx computes them.
fn networkx(edges: &Path, vertices: &Path, directed: bool) -> BTreeMap<u64, [f64; 6]> {
    let kind = if directed { "directed" } else { "undirected" };
    python(
        NETWORKX,
        [edges.as_os_str(), vertices.as_os_str(), kind.as_ref()],
    )
    .lines()
    .map(|l| {
        let f: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
        (f[0] as u64, [f[1], f[2], f[3], f[4], f[5], f[6]])
    })
    .collect()
}

/// Per vertex: the [`COLUMNS`], as frontier computes them after `settings`.
fn frontier(data: &Path, settings: &str, create: &str, graph: &str) -> BTreeMap<u64, [f64; 6]> {
    let statements = format!(
        "{settings} {create} RUN scc ON {graph}; RUN kcore ON {graph}; RUN triangles ON {graph}; \
         RUN closeness ON {graph} SAMPLES 1000; RUN harmonic ON {graph} SAMPLES 1000 SEED 5; \
         RUN betweenness ON {graph} SAMPLES 1000;"
    );
    let out = common::csv(data, &statements);
    assert!(out.status.success(), "{statements}: {}", text(&out.stderr));
    let mut got: BTreeMap<u64, [f64; 6]> = BTreeMap::new();
    let mut column = None;
    for line in text(&out.stdout).lines() {
        match line.strip_prefix("vertex,") {
            Some(name) if COLUMNS.contains(&name) => {
                column = COLUMNS.iter().position(|&c| c == name);
            }
            _ => {
                let (Some(c), Some((v, x))) = (column, line.split_once(',')) else {
                    continue;
                };
                got.entry(v.parse().unwrap()).or_default()[c] = x.parse().unwrap();
            }
        }
    }
    got
}

/// Checks every test graph under `settings`, created with `storage`.
fn check_all(settings: &str, storage: &str, data: &Path, work: &Path) {
    for g in graphs() {
        let edges = work.join(format!("{}.el", g.name));
        let vertices = work.join(format!("{}.v", g.name));
        std::fs::write(&edges, &g.edges).unwrap();
        std::fs::write(&vertices, &g.vertices).unwrap();
        let want = networkx(&edges, &vertices, !g.options.contains("UNDIRECTED"));
        let create = format!(
            "CREATE OR REPLACE GRAPH {} FROM '{}' FORMAT edgelist {} VERTICES '{}' {storage};",
            g.name,
            edges.display(),
            g.options,
            vertices.display()
        );
        // The graphs are meant to have several non-trivial components, cores above 1 and
        // triangles, so that a wrong kernel cannot pass by luck.
        let distinct = |i: usize| {
            want.values()
                .map(|w| w[i] as u64)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        };
        assert!(
            distinct(0) > 4 && distinct(0) < want.len() - 4,
            "{}",
            g.name
        );
        assert!(distinct(1) > 2, "{}", g.name);
        assert!(want.values().any(|w| w[2] > 2.0), "{}", g.name);
        let got = frontier(data, settings, &create, g.name);
        assert_eq!(got.len(), want.len(), "{}: vertices", g.name);
        for (v, w) in &want {
            let r = got
                .get(v)
                .unwrap_or_else(|| panic!("{}: no vertex {v}", g.name));
            for (i, name) in COLUMNS.iter().enumerate() {
                assert!(
                    (w[i] - r[i]).abs() <= 1e-12 * w[i].abs().max(1e-3),
                    "{} ({settings} {storage}): vertex {v}: {name}: networkx {}, frontier {}",
                    g.name,
                    w[i],
                    r[i]
                );
            }
        }
    }
}

/// Rank blocks by name: each a map vertex → rank, read from `name` lines followed by
/// `vertex,rank` lines (frontier's header lines are skipped).
fn rank_blocks(text: &str, names: &[&str]) -> BTreeMap<String, BTreeMap<u64, f64>> {
    let mut blocks: BTreeMap<String, BTreeMap<u64, f64>> = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines() {
        if names.contains(&line) {
            current = line.to_string();
        } else if let Some((v, r)) = line.split_once(',') {
            if let (Ok(v), Ok(r)) = (v.parse(), r.parse()) {
                blocks.entry(current.clone()).or_default().insert(v, r);
            }
        }
    }
    blocks
}

/// PageRank run to convergence with each option equals networkx's on every test graph.
fn check_pagerank(settings: &str, storage: &str, data: &Path, work: &Path) {
    const NAMES: [&str; 3] = ["plain", "weights", "personalised"];
    for g in graphs() {
        let edges = work.join(format!("{}.el", g.name));
        let vertices = work.join(format!("{}.v", g.name));
        std::fs::write(&edges, &g.edges).unwrap();
        std::fs::write(&vertices, &g.vertices).unwrap();
        // The first vertex of the clump, which reaches much of the graph.
        let source = 10;
        let kind = if g.options.contains("UNDIRECTED") {
            "undirected"
        } else {
            "directed"
        };
        let source = source.to_string();
        let answer = python(
            NETWORKX_PAGERANK,
            [
                edges.as_os_str(),
                vertices.as_os_str(),
                kind.as_ref(),
                source.as_ref(),
            ],
        );
        let want = rank_blocks(&answer, &NAMES);
        let run = "ITER 100000 tolerance 1e-13";
        let statements = format!(
            "{settings} CREATE OR REPLACE GRAPH {name} FROM '{}' FORMAT edgelist {} VERTICES '{}' {storage}; \
             RUN pagerank ON {name} {run}; RUN pagerank ON {name} {run} weights 1; \
             RUN pagerank ON {name} FROM {source} {run};",
            edges.display(),
            g.options,
            vertices.display(),
            name = g.name,
        );
        let out = common::csv(data, &statements);
        assert!(out.status.success(), "{statements}: {}", text(&out.stderr));
        // Label frontier's three tables in order.
        let mut labelled = String::new();
        let mut tables = NAMES.iter();
        for line in text(&out.stdout).lines() {
            if line == "vertex,rank" {
                labelled.push_str(tables.next().unwrap());
                labelled.push('\n');
            } else {
                labelled.push_str(line);
                labelled.push('\n');
            }
        }
        let got = rank_blocks(&labelled, &NAMES);
        for name in NAMES {
            let (w, r) = (&want[name], &got[name]);
            assert_eq!(w.len(), r.len(), "{} {name}: vertices", g.name);
            for (v, x) in w {
                let y = r[v];
                assert!(
                    (x - y).abs() <= 1e-7 * x.abs().max(1e-9),
                    "{} {name} ({settings} {storage}): vertex {v}: networkx {x}, frontier {y}",
                    g.name
                );
            }
        }
    }
}

#[test]
fn structural_algorithms_equal_networkx_in_memory_and_out_of_core() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    check_all("SET cache = '1GB';", "", &data, work.path());
    check_all(
        "SET cache = '8KB'; SET threads = 2; SET mode = block;",
        "",
        &data,
        work.path(),
    );
}

#[test]
fn pagerank_options_equal_networkx_in_memory_and_out_of_core() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    check_pagerank("SET cache = '1GB';", "", &data, work.path());
    check_pagerank(
        "SET cache = '8KB'; SET threads = 2; SET mode = push;",
        "",
        &data,
        work.path(),
    );
}

#[test]
fn pagerank_options_equal_networkx_on_dm_with_remote_state() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    let data = work.path().join("data");
    check_pagerank(
        &format!("{set} SET cn_cache = '16B'; SET threads = 2;"),
        "STORAGE dm",
        &data,
        work.path(),
    );
}

#[test]
fn structural_algorithms_equal_networkx_on_dm_with_remote_state() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    let data = work.path().join("data");
    check_all(
        &format!("{set} SET cn_cache = '16B'; SET threads = 2; SET mode = push;"),
        "STORAGE dm",
        &data,
        work.path(),
    );
}

#[test]
fn graphs_in_degree_order_equal_networkx_in_memory_and_out_of_core() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    for settings in [
        "SET cache = '1GB';",
        "SET cache = '8KB'; SET threads = 2; SET mode = block;",
    ] {
        check_all(settings, "LAYOUT degree", &data, work.path());
        check_pagerank(settings, "LAYOUT degree", &data, work.path());
    }
}
