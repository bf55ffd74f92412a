//! What the memory nodes hold is checked, through the real binary: the low byte of 20
//! neighbour ids (out- and in-lists, in place and out of place) flipped in the memory nodes, as
//! a peer holding the token could, makes BFS and PageRank fail with an error naming the graph,
//! node and region and saying to re-create the graph, instead of answering differently with
//! exit 0; `VERIFY GRAPH` reads the remote copy and says the same. And a query killed with
//! SIGKILL leaves no remote attribute arrays allocated.

mod common;

use std::path::Path;

use common::memnode::pool;
use common::{csv, text};
use storage::catalog::Catalog;
use storage::dm::layout::{self, Entry, LIST_HEADER};
use storage::dm::{DmLayout, GlobalAddr, TcpOptions, TcpTransport, Transport};
use storage::Direction;

/// A graph with a hub and sinks (out-of-place lists) and a ring (in-place lists), as an edge
/// list.
fn write_graph(path: &Path) {
    let n = 400u64;
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("{} {}\n", i + 1, (i + 1) % n + 1));
        s.push_str(&format!("{} {}\n", i + 1, (i * 7 + 3) % n + 1));
    }
    for t in 0..60 {
        s.push_str(&format!("1 {}\n", t * 5 % n + 1));
    }
    // Eight sinks with 10 more in-edges each and eight sources with 10 more out-edges each.
    for t in 0..80 {
        s.push_str(&format!("{} {}\n", t + 10, (t % 8) * 40 + 5));
        s.push_str(&format!("{} {}\n", (t % 8) * 40 + 7, t + 100));
    }
    std::fs::write(path, s).unwrap();
}

/// Flips the low byte of the first neighbour id of 5 in-place and 5 out-of-place lists per
/// direction (push kernels read out-lists, pull kernels in-lists): 20 neighbour ids.
fn flip_neighbour_ids(data: &Path, token: &str) {
    let (catalog, _) = Catalog::open(data).unwrap();
    let meta = catalog.get("g").unwrap().unwrap();
    let layout = DmLayout::from_json(meta.extra.as_ref().unwrap()).unwrap();
    drop(catalog);
    assert!(layout.directed, "both directions are stored");
    let conns: Vec<TcpTransport> = layout
        .nodes
        .iter()
        .map(|n| TcpTransport::connect(n.addr.as_str(), token, TcpOptions::default()).unwrap())
        .collect();
    let conn = |a: GlobalAddr| conns.iter().find(|c| c.node_id() == a.node()).unwrap();
    let flip = |a: GlobalAddr| {
        let mut b = conn(a).read(a, 1).unwrap();
        b[0] ^= 1;
        conn(a).write(a, &b).unwrap();
    };
    for dir in [Direction::Out, Direction::In] {
        let (mut in_place, mut out_of_place) = (0, 0);
        for v in 0..layout.vertices {
            let at = layout.entry_addr(dir, v).unwrap();
            let raw = conn(at).read(at, 32).unwrap();
            match layout::decode(&raw, layout.weighted).unwrap() {
                Entry::InPlace { targets, .. } if !targets.is_empty() && in_place < 5 => {
                    flip(at.checked_add(4).unwrap());
                    in_place += 1;
                }
                Entry::OutOfPlace { addr, .. } if out_of_place < 5 => {
                    flip(addr.checked_add(LIST_HEADER).unwrap());
                    out_of_place += 1;
                }
                _ => {}
            }
        }
        assert_eq!((in_place, out_of_place), (5, 5), "{dir:?}");
    }
}

fn assert_damage_reported(what: &str, out: &std::process::Output) {
    let err = text(&out.stderr);
    assert!(
        !out.status.success(),
        "{what} exited 0: {}",
        text(&out.stdout)
    );
    for want in [
        "graph `g`",
        "region ",
        "fails its checksum",
        "CREATE OR REPLACE GRAPH g",
        "STORAGE dm",
    ] {
        assert!(err.contains(want), "{what}: `{want}` missing from: {err}");
    }
}

#[test]
fn damaged_memory_node_data_fails_queries_and_verify() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    let data = work.path().join("data");
    let edges = work.path().join("edges.txt");
    write_graph(&edges);
    let created = csv(
        &data,
        &format!(
            "{set} CREATE GRAPH g FROM '{}' DIRECTED STORAGE dm; VERIFY GRAPH g;",
            edges.display()
        ),
    );
    assert!(created.status.success(), "{}", text(&created.stderr));
    let said = text(&created.stderr);
    assert!(
        said.contains("is intact") && said.contains("2 memory nodes too"),
        "{said}"
    );
    for q in ["RUN bfs ON g FROM 1;", "RUN pagerank ON g ITER 5;"] {
        let o = csv(&data, &format!("{set} SET cn_cache = '1GB'; {q}"));
        assert!(o.status.success(), "{q}: {}", text(&o.stderr));
    }

    let token = std::fs::read_to_string(work.path().join("token")).unwrap();
    flip_neighbour_ids(&data, token.trim());

    for q in ["RUN bfs ON g FROM 1;", "RUN pagerank ON g ITER 5;"] {
        for cn_cache in ["1GB", "16B"] {
            let o = csv(&data, &format!("{set} SET cn_cache = '{cn_cache}'; {q}"));
            assert_damage_reported(&format!("{q} at cn_cache {cn_cache}"), &o);
        }
    }
    let o = csv(&data, &format!("{set} VERIFY GRAPH g;"));
    assert_damage_reported("VERIFY GRAPH", &o);
}

/// Bytes the memory nodes hold right now, summed.
fn used_bytes(addrs: &[&str], token: &str) -> u64 {
    addrs
        .iter()
        .map(|a| {
            let t = TcpTransport::connect(*a, token, TcpOptions::default()).unwrap();
            t.info().unwrap().1
        })
        .sum()
}

/// A query killed mid-run (`kill -9`) never frees its remote attribute arrays itself: they are
/// leased to its connections, so the memory nodes free them when the kernel closes its sockets.
#[test]
fn a_killed_query_leaves_no_attribute_arrays_behind() {
    let work = tempfile::tempdir().unwrap();
    let (a, b, set) = pool(work.path());
    let data = work.path().join("data");
    let edges = work.path().join("edges.txt");
    write_graph(&edges);
    let created = csv(
        &data,
        &format!(
            "{set} CREATE GRAPH g FROM '{}' DIRECTED STORAGE dm;",
            edges.display()
        ),
    );
    assert!(created.status.success(), "{}", text(&created.stderr));
    let token = std::fs::read_to_string(work.path().join("token")).unwrap();
    let token = token.trim();
    let addrs = [a.addr.as_str(), b.addr.as_str()];
    let graph_only = used_bytes(&addrs, token);

    // PageRank with its ranks and sums in the memory nodes, far more rounds than it will live.
    let mut query = std::process::Command::new(common::BIN)
        .arg("--data")
        .arg(&data)
        .args([
            "-c",
            &format!("{set} SET cn_cache = '16B'; RUN pagerank ON g ITER 100000;"),
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let patience = std::time::Instant::now();
    while used_bytes(&addrs, token) == graph_only
        && patience.elapsed() < std::time::Duration::from_secs(60)
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(
        used_bytes(&addrs, token) > graph_only,
        "the query never allocated its attribute arrays"
    );
    query.kill().unwrap(); // SIGKILL: no FREE is ever sent
    query.wait().unwrap();
    let patience = std::time::Instant::now();
    while used_bytes(&addrs, token) != graph_only
        && patience.elapsed() < std::time::Duration::from_secs(30)
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(used_bytes(&addrs, token), graph_only);
}

/// The bytes the catalog in `data` records for the memory-node regions of graph `name`: what
/// a node holds for it once no RUN's scratch is leased.
fn recorded_bytes(data: &Path, name: &str) -> u64 {
    let text = std::fs::read_to_string(data.join("catalog").join("catalog.json")).unwrap();
    // The first line is the catalog's header (version and checksum); the JSON follows.
    let json = &text[text.find('\n').unwrap() + 1..];
    let catalog: serde_json::Value = serde_json::from_str(json).unwrap();
    let extra = &catalog["graphs"][name]["extra"];
    let layout: serde_json::Value = match extra {
        serde_json::Value::String(s) => serde_json::from_str(s).unwrap(),
        other => other.clone(),
    };
    let sizes = layout["region_bytes"]
        .as_array()
        .expect("region sizes recorded");
    assert!(!sizes.is_empty(), "graph {name} records no regions");
    sizes.iter().map(|b| b.as_u64().unwrap()).sum()
}

/// Runs `statements` and insists it succeeds; returns its stderr (the status lines).
fn ok(data: &Path, statements: &str) -> String {
    let o = csv(data, statements);
    assert!(
        o.status.success(),
        "{statements}\nfailed: {}",
        text(&o.stderr)
    );
    text(&o.stderr)
}

/// A memory node restarted between two graphs hands out the same addresses again: dropping
/// or replacing the graph loaded before the restart must not free the one loaded after it
/// (the node checks each free's owner and epoch), and says what became of the old regions.
/// A DROP that cannot reach the node (no token) says what it left allocated, and where.
#[test]
fn a_stale_graph_never_frees_a_live_one_and_a_drop_says_what_it_left() {
    let work = tempfile::tempdir().unwrap();
    let token = work.path().join("token");
    std::fs::write(&token, "dm-restart-token\n").unwrap();
    let node = common::memnode::Memnode::start(&token, 1);
    let addr = node.addr.clone();
    let set = format!(
        "SET memory_nodes = '{addr}'; SET memory_token_file = '{}';",
        token.display()
    );
    let data = work.path().join("data");
    let edges = work.path().join("edges.txt");
    write_graph(&edges);
    let create = |name: &str, or_replace: bool| {
        format!(
            "{set} CREATE {}GRAPH {name} FROM '{}' DIRECTED STORAGE dm;",
            if or_replace { "OR REPLACE " } else { "" },
            edges.display()
        )
    };
    let bfs = |name: &str| format!("{set} RUN bfs ON {name} FROM 1 LIMIT 1;");
    let restart = |node: common::memnode::Memnode| {
        drop(node);
        common::memnode::Memnode::start_on(&token, 1, &addr)
    };

    ok(&data, &create("a", false));
    let node = restart(node);
    ok(&data, &create("b", false));
    ok(&data, &bfs("b"));
    let said = ok(&data, &format!("{set} DROP GRAPH a;"));
    assert!(
        said.contains("dropped graph a") && said.contains("restarted since graph a was loaded"),
        "{said}"
    );
    ok(&data, &bfs("b"));

    // The error's own advice after a restart: replace the graph. Freeing the old copy must
    // leave the new one whole.
    let node = restart(node);
    let said = ok(&data, &create("b", true));
    assert!(
        said.contains("restarted since graph b was loaded"),
        "{said}"
    );
    let tok = std::fs::read_to_string(&token).unwrap();
    let held = || {
        TcpTransport::connect(addr.as_str(), tok.trim(), TcpOptions::default())
            .unwrap()
            .info()
            .unwrap()
            .1
    };
    // A finished RUN's leased scratch is freed when the node sees its connection close, which
    // may come a moment after the process exits (seconds on a loaded machine): wait for the
    // node to hold what the catalog records for b, up to a minute, not for a fixed time.
    let holds_only_b = |what: &str| {
        let want = recorded_bytes(&data, "b");
        let mut now = held();
        for _ in 0..2400 {
            if now == want {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
            now = held();
        }
        assert_eq!(now, want, "{what}");
        want
    };
    // The fresh node holds the new copy of b and nothing else.
    holds_only_b("the restarted node holds b's new copy alone");
    ok(&data, &bfs("b"));

    // Replaced without a restart: the old copy's regions are freed, the new one's kept. (The
    // copies may differ by a few bytes: the descriptor carries the layout with its addresses.)
    let said = ok(&data, &create("b", true));
    assert!(!said.contains("left allocated"), "{said}");
    holds_only_b("the replaced copy was freed");
    ok(&data, &bfs("b"));
    let one_copy = holds_only_b("the RUN's scratch was freed");

    // No token: the node cannot be asked, and the DROP says what stays where.
    let said = ok(
        &data,
        &format!("SET memory_nodes = '{addr}'; DROP GRAPH b;"),
    );
    assert!(said.contains("dropped graph b"), "{said}");
    let left = said
        .lines()
        .find(|l| l.contains("left allocated"))
        .unwrap_or_else(|| panic!("no word on what was left: {said}"));
    assert!(
        left.contains(&format!("memory node {addr} (id 1)"))
            && left.contains(&format!("({one_copy} bytes)"))
            && left.contains("memory_token_file is not set"),
        "{left}"
    );
    assert_eq!(held(), one_copy, "nothing was freed without the token");
    drop(node);
}
