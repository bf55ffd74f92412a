//! Louvain and Leiden through the real binary against networkx on graphs with planted communities
//! (directed with opposite arcs and self-loops, undirected with and without self-loops,
//! weighted, with isolated vertices),
//! in memory, out of core and on DM with the state in the memory nodes: the modularity frontier
//! reports is what networkx computes for frontier's partition (the same undirected view), it is
//! within a few percent of networkx's own Louvain, and the partition is the same on every store.
//! Leiden's communities are each connected (networkx checks) and its modularity is no worse than
//! frontier's Louvain's with the same seed (networkx 3.6 has no Leiden of its own).
//! The reported summaries also reach Parquet and Arrow IPC metadata, read back with pyarrow.
//! Needs `python3` with `networkx` and `pyarrow` (`scripts/test.sh` installs them).

use std::path::Path;

mod common;

use common::memnode::pool;
use common::small_graphs::{Graph, Rng};
use common::{python, text};

/// Given the edges, the vertices, the resolution and frontier's `vertex,community` rows:
/// prints the modularity of frontier's partition, the mean over five seeds of networkx's
/// Louvain modularity, both on the undirected view frontier optimises (the weights of arcs
/// between the same two vertices added up, self-loops kept), and whether every community of
/// frontier's is connected.
const NETWORKX: &str = r#"
import sys, networkx as nx
edges, vertices, resolution, rows = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
G = nx.Graph()
for line in open(vertices):
    G.add_node(int(line))
for line in open(edges):
    p = line.split()
    u, v, w = int(p[0]), int(p[1]), float(p[2]) if len(p) > 2 else 1.0
    G.add_edge(u, v, weight=G[u][v]["weight"] + w if G.has_edge(u, v) else w)
parts = {}
for line in open(rows):
    v, c = line.split(",")
    parts.setdefault(int(c), set()).add(int(v))
assert set().union(*parts.values()) == set(G.nodes)
mine = nx.community.modularity(G, parts.values(), weight="weight", resolution=resolution)
theirs = [
    nx.community.modularity(G, nx.community.louvain_communities(G, weight="weight", resolution=resolution, seed=s), weight="weight", resolution=resolution)
    for s in range(5)
]
connected = all(nx.is_connected(G.subgraph(c)) for c in parts.values())
print(repr(mine), repr(sum(theirs) / len(theirs)), connected)
"#;

/// `groups` groups of 8 vertices, each arc inside a group with probability 1/2, `cross` arcs
/// between random vertices, and 3 isolated vertices; ids gapped.
fn planted(
    name: &'static str,
    seed: u64,
    groups: u64,
    cross: u64,
    weighted: bool,
    options: &'static str,
) -> Graph {
    let directed = !options.contains("UNDIRECTED");
    let mut rng = Rng(seed);
    let id = |v: u64| 5 * v + 3;
    let linked = groups * 8;
    let mut seen = std::collections::BTreeSet::new();
    let mut edges = String::new();
    let mut arc = |u: u64, v: u64, rng: &mut Rng| {
        let key = if directed {
            (u, v)
        } else {
            (u.min(v), u.max(v))
        };
        if seen.insert(key) {
            let w = if weighted {
                format!(" {}", 1 + rng.below(8))
            } else {
                String::new()
            };
            edges.push_str(&format!("{} {}{w}\n", id(key.0), id(key.1)));
        }
    };
    for g in 0..groups {
        for u in 0..8 {
            for v in 0..8 {
                if u != v && rng.below(2) == 0 {
                    arc(g * 8 + u, g * 8 + v, &mut rng);
                }
            }
        }
    }
    for _ in 0..cross {
        let (u, v) = (rng.below(linked), rng.below(linked));
        if u != v {
            arc(u, v, &mut rng);
        }
    }
    let vertices = (0..linked + 3).map(|v| format!("{}\n", id(v))).collect();
    Graph {
        name,
        edges,
        vertices,
        options,
    }
}

fn graphs() -> Vec<Graph> {
    let mut loops = planted("loops", 5, 5, 30, false, "DIRECTED");
    loops.edges.push_str("3 3\n48 48\n");
    let mut undirected_loops = planted("uloops", 6, 4, 20, true, "UNDIRECTED WEIGHTED");
    undirected_loops.edges.push_str("8 8 3\n23 23 5\n");
    vec![
        planted("arcs", 1, 6, 40, false, "DIRECTED"),
        planted("edges", 2, 7, 30, false, "UNDIRECTED"),
        planted("weights", 3, 6, 40, true, "DIRECTED WEIGHTED"),
        planted("uweights", 4, 5, 25, true, "UNDIRECTED WEIGHTED"),
        loops,
        undirected_loops,
    ]
}

/// frontier's rows and reported modularity for `run`, one call of `algorithm`: `(rows as
/// "vertex,community" lines, modularity)`.
fn communities(
    data: &Path,
    settings: &str,
    create: &str,
    run: &str,
    algorithm: &str,
) -> (String, f64) {
    let out = common::csv(data, &format!("{settings} {create} {run}"));
    assert!(out.status.success(), "{run}: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let rows: String = stdout
        .lines()
        .filter(|l| *l != "vertex,community")
        .map(|l| format!("{l}\n"))
        .collect();
    let stderr = text(&out.stderr);
    let prefix = format!("{algorithm}: modularity ");
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no summary line: {stderr}"));
    let q = line.split(',').next().unwrap().parse().unwrap();
    (rows, q)
}

/// What networkx says of frontier's `rows` on the graph of `edges` and `vertices`: the
/// modularity of the rows, the mean modularity of networkx's Louvain, and whether every
/// community of the rows is connected.
fn networkx(
    work: &Path,
    edges: &Path,
    vertices: &Path,
    resolution: f64,
    rows: &str,
) -> (f64, f64, bool) {
    let rows_file = work.join("rows.csv");
    std::fs::write(&rows_file, rows).unwrap();
    let resolution = resolution.to_string();
    let answer = python(
        NETWORKX,
        [
            edges.as_os_str(),
            vertices.as_os_str(),
            resolution.as_ref(),
            rows_file.as_os_str(),
        ],
    );
    let words: Vec<&str> = answer.split_whitespace().collect();
    let [mine, theirs, connected] = words[..] else {
        panic!("networkx said {answer}");
    };
    (
        mine.parse().unwrap(),
        theirs.parse().unwrap(),
        connected == "True",
    )
}

/// Checks every graph in memory, out of core and on DM (`dm` the memory-node settings), with
/// Louvain then Leiden.
fn check_all(dm: &str, work: &Path) {
    let data = work.join("data");
    for g in graphs() {
        let edges = work.join(format!("{}.el", g.name));
        let vertices = work.join(format!("{}.v", g.name));
        std::fs::write(&edges, &g.edges).unwrap();
        std::fs::write(&vertices, &g.vertices).unwrap();
        for (seed, resolution) in [(0, 1.0), (9, 0.5), (4, 2.0)] {
            let mut louvain = None;
            for algorithm in ["louvain", "leiden"] {
                let run = format!(
                    "RUN {algorithm} SEED {seed} RESOLUTION {resolution} ON {};",
                    g.name
                );
                let mut partitions = Vec::new();
                for (settings, storage) in [
                    ("SET cache = '1GB';", ""),
                    ("SET cache = '8KB'; SET threads = 2; SET mode = block;", ""),
                    (dm, "STORAGE dm"),
                ] {
                    let create = format!(
                        "CREATE OR REPLACE GRAPH {} FROM '{}' FORMAT edgelist {} VERTICES '{}' {storage};",
                        g.name,
                        edges.display(),
                        g.options,
                        vertices.display()
                    );
                    let (rows, q) = communities(&data, settings, &create, &run, algorithm);
                    let (mine, theirs, connected) =
                        networkx(work, &edges, &vertices, resolution, &rows);
                    let at = format!(
                        "{algorithm} on {} SEED {seed} RESOLUTION {resolution} ({settings} {storage})",
                        g.name
                    );
                    assert!(
                        (mine - q).abs() < 1e-9,
                        "{at}: reported {q}, networkx computes {mine}"
                    );
                    assert!(
                        q >= theirs - 0.03 * theirs.abs(),
                        "{at}: modularity {q}, networkx's Louvain {theirs}"
                    );
                    assert!(
                        connected || algorithm == "louvain",
                        "{at}: a community in pieces"
                    );
                    partitions.push((rows, q));
                }
                assert!(
                    partitions.windows(2).all(|w| w[0] == w[1]),
                    "{algorithm} on {}: the partition differs between stores",
                    g.name
                );
                let q = partitions[0].1;
                match louvain {
                    None => louvain = Some(q),
                    Some(louvain) => assert!(
                        q >= louvain - 0.01 * f64::abs(louvain),
                        "{} SEED {seed} RESOLUTION {resolution}: leiden {q}, louvain {louvain}",
                        g.name
                    ),
                }
            }
        }
    }
}

#[test]
fn louvain_equals_networkx_in_memory_out_of_core_and_on_dm() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    check_all(
        &format!("{set} SET cn_cache = '16B'; SET threads = 2; SET mode = push;"),
        work.path(),
    );
}

/// Reads `key` of the schema metadata of a Parquet or Arrow IPC file with pyarrow.
fn metadata(path: &Path, key: &str) -> String {
    let script = r#"
import sys, pyarrow.parquet as pq, pyarrow.ipc as ipc
path, key = sys.argv[1], sys.argv[2]
schema = pq.read_schema(path) if path.endswith(".parquet") else ipc.open_file(path).schema
print(schema.metadata[key.encode()].decode())
"#;
    python(script, [path.as_os_str(), key.as_ref()])
        .trim()
        .to_string()
}

#[test]
fn summaries_reach_parquet_and_arrow_metadata() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let edges = work.path().join("g.el");
    // Two triangles joined by one edge, and a third triangle apart.
    std::fs::write(&edges, "1 2\n2 3\n1 3\n4 5\n5 6\n4 6\n3 4\n7 8\n8 9\n7 9\n").unwrap();
    let pq = work.path().join("l.parquet");
    let arrow = work.path().join("j.arrow");
    let statements = format!(
        "CREATE GRAPH g FROM '{}' UNDIRECTED; RUN louvain ON g INTO '{}'; \
         RUN louvain AS c, triangles ON g INTO '{}';",
        edges.display(),
        pq.display(),
        arrow.display()
    );
    let out = common::csv(&data, &statements);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let reported = stderr
        .lines()
        .find_map(|l| l.strip_prefix("louvain: modularity "))
        .unwrap_or_else(|| panic!("no summary line: {stderr}"));
    let q = reported.split(',').next().unwrap();
    assert_eq!(metadata(&pq, "frontier.louvain.modularity"), q);
    assert_eq!(metadata(&pq, "frontier.louvain.communities"), "3");
    // Several algorithms: each summary under its call's name.
    assert_eq!(metadata(&arrow, "frontier.c.modularity"), q);
    assert_eq!(metadata(&arrow, "frontier.triangles.total"), "3");
    assert!(stderr.contains("triangles: total 3"), "{stderr}");
}

/// A graph large enough that chunks of the seeded order are moved with parallel proposals
/// (hundreds of vertices): Louvain's and Leiden's partitions are the same on 1, 2 and 3
/// threads, in memory, out of core and on DM, and as good as networkx's Louvain; Leiden's
/// communities are connected and its modularity no worse than Louvain's.
#[test]
fn the_partition_depends_on_the_seed_not_on_threads_or_store() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    let data = work.path().join("data");
    let g = planted("big", 7, 150, 900, true, "DIRECTED WEIGHTED");
    let edges = work.path().join("big.el");
    let vertices = work.path().join("big.v");
    std::fs::write(&edges, &g.edges).unwrap();
    std::fs::write(&vertices, &g.vertices).unwrap();
    let mut louvain = None;
    for algorithm in ["louvain", "leiden"] {
        let run = format!("RUN {algorithm} SEED 3 ON big;");
        let mut partitions = Vec::new();
        for (settings, storage) in [
            ("SET cache = '1GB'; SET threads = 1;".to_string(), ""),
            ("SET cache = '1GB'; SET threads = 2;".to_string(), ""),
            ("SET cache = '1GB'; SET threads = 3;".to_string(), ""),
            ("SET cache = '8KB'; SET threads = 3;".to_string(), ""),
            (
                format!("{set} SET cn_cache = '16B'; SET threads = 2;"),
                "STORAGE dm",
            ),
        ] {
            let create = format!(
                "CREATE OR REPLACE GRAPH big FROM '{}' FORMAT edgelist {} VERTICES '{}' {storage};",
                edges.display(),
                g.options,
                vertices.display()
            );
            let (rows, q) = communities(&data, &settings, &create, &run, algorithm);
            partitions.push((rows, q, settings));
        }
        let (first, q) = (&partitions[0].0, partitions[0].1);
        for (rows, other, settings) in &partitions[1..] {
            assert!(
                rows == first && *other == q,
                "{algorithm}, {settings}: another partition"
            );
        }
        let (mine, theirs, connected) = networkx(work.path(), &edges, &vertices, 1.0, first);
        assert!(
            (mine - q).abs() < 1e-9,
            "{algorithm}: reported {q}, networkx computes {mine}"
        );
        assert!(
            q >= theirs - 0.03 * theirs.abs(),
            "{algorithm}: modularity {q}, networkx's {theirs}"
        );
        match louvain {
            None => louvain = Some(q),
            Some(louvain) => {
                assert!(connected, "leiden: a community in pieces");
                assert!(
                    q >= louvain - 0.01 * f64::abs(louvain),
                    "leiden {q}, louvain {louvain}"
                );
            }
        }
    }
}
