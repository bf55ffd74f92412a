//! RUN over several compute nodes, through the real binary: two `frontier memnode` processes
//! and two `frontier compute` workers on loopback. The Graphalytics references pass on 1, 2 and
//! 3 compute nodes with a large and a tiny `cn_cache`; a worker killed mid-query fails the query
//! naming it while the session and the memory nodes go on; an unreachable worker, a graph
//! without a descriptor and a wrong token are refused with errors naming what to fix.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::compute::ComputeNode;
use common::memnode::pool;
use common::BIN;

use rexpect::session::spawn_command;

/// Two memory nodes, two workers (sharing the memory nodes' token), and the SET statements.
struct Cluster {
    _a: common::memnode::Memnode,
    _b: common::memnode::Memnode,
    workers: Vec<ComputeNode>,
    set: String,
}

fn cluster(dir: &Path) -> Cluster {
    let (a, b, set) = pool(dir);
    let token = dir.join("token");
    let workers = vec![ComputeNode::start(&token), ComputeNode::start(&token)];
    Cluster {
        _a: a,
        _b: b,
        workers,
        set,
    }
}

fn compute_nodes(c: &Cluster, n: usize) -> String {
    let addrs: Vec<&str> = c.workers[..n].iter().map(|w| w.addr.as_str()).collect();
    format!("SET compute_nodes = '{}';", addrs.join(","))
}

fn suite_on(workers: usize, settings: &str) {
    let work = tempfile::tempdir().unwrap();
    let c = cluster(work.path());
    let prelude = format!("{} {} {settings}", c.set, compute_nodes(&c, workers));
    let checked = common::graphalytics::run_suite(&prelude, "STORAGE dm", |name, stdout| {
        assert!(
            stdout.contains("memory nodes"),
            "{name}: not loaded into the pool"
        );
    });
    assert_eq!(checked, 24, "{prelude}");
}

#[test]
fn graphalytics_passes_on_one_two_and_three_compute_nodes() {
    for workers in [0, 1, 2] {
        suite_on(workers, "SET cn_cache = '1GB';");
        suite_on(workers, "SET cn_cache = '16B'; SET threads = 2;");
    }
}

fn gen_graph(dir: &Path, scale: u32) -> std::path::PathBuf {
    let edges = dir.join("g.txt");
    let status = Command::new(BIN)
        .args([
            "gen",
            "rmat",
            "--scale",
            &scale.to_string(),
            "--seed",
            "5",
            "-o",
        ])
        .arg(&edges)
        .status()
        .unwrap();
    assert!(status.success());
    edges
}

fn batch(dir: &Path, statements: &str) -> std::process::Output {
    Command::new(BIN)
        .arg("--data")
        .arg(dir.join("data"))
        .args(["--format", "csv", "-c", statements])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn explain_and_profile_show_every_member() {
    let work = tempfile::tempdir().unwrap();
    let c = cluster(work.path());
    let edges = gen_graph(work.path(), 10);
    let o = batch(
        work.path(),
        &format!(
            "{} CREATE GRAPH g FROM '{}' FORMAT edgelist STORAGE dm; {} EXPLAIN RUN bfs ON g FROM 0; PROFILE RUN bfs ON g FROM 0 LIMIT 1;",
            c.set,
            edges.display(),
            compute_nodes(&c, 2)
        ),
    );
    let out = common::text(&o.stdout);
    let err = common::text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let all = format!("{out}{err}");
    assert!(
        all.contains("compute:   3 members: this process 0.."),
        "{all}"
    );
    // However small, the state is remote: the members share it.
    assert!(all.contains("shared by the 3 compute nodes"), "{all}");
    for w in &c.workers {
        let line = all
            .lines()
            .find(|l| l.starts_with(&format!("compute node {}: vertices", w.addr)))
            .unwrap_or_else(|| panic!("no line for {}: {all}", w.addr));
        // Each worker reports its own remote work: BFS reads lists, so it made round trips.
        let trips: u64 = line
            .split(" round trips")
            .next()
            .and_then(|head| head.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no round trips in: {line}"));
        assert!(trips > 0, "{line}");
        assert!(line.contains("RDMA estimate"), "{line}");
    }
    assert!(all.contains("RDMA estimate of the split run: "), "{all}");
}

/// Two hubs adjacent to each other and to every other vertex: the owner of both is the
/// straggler of BFS's first level, and PROFILE marks the next level, which deals hub 1 out.
#[test]
fn profile_marks_the_iterations_that_deal_hubs_out() {
    let work = tempfile::tempdir().unwrap();
    let c = cluster(work.path());
    let edges = work.path().join("hubs.txt");
    let mut text = String::from("0 1\n");
    for v in 2..3000 {
        text.push_str(&format!("0 {v}\n1 {v}\n"));
    }
    std::fs::write(&edges, text).unwrap();
    let o = batch(
        work.path(),
        &format!(
            "{} CREATE GRAPH g FROM '{}' FORMAT edgelist UNDIRECTED STORAGE dm; {} PROFILE RUN bfs ON g FROM 0 LIMIT 1;",
            c.set,
            edges.display(),
            compute_nodes(&c, 1)
        ),
    );
    let out = common::text(&o.stdout);
    let err = common::text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let all = format!("{out}{err}");
    assert!(all.contains("rescheduled"), "{all}");
    let marked = all
        .lines()
        .flat_map(|line| line.split([',', '|']))
        .any(|cell| cell.trim() == "1 hub");
    assert!(marked, "no iteration dealt hub 1 out: {all}");
}

#[test]
fn a_killed_compute_node_fails_the_query_and_the_session_goes_on() {
    let work = tempfile::tempdir().unwrap();
    let mut c = cluster(work.path());
    let edges = gen_graph(work.path(), 12);
    let mut cmd = Command::new(BIN);
    cmd.arg("--data").arg(work.path().join("data"));
    cmd.env("TERM", "xterm");
    // A bound that only catches a hang: every expectation below normally takes well under it.
    let mut p = spawn_command(cmd, Some(60_000)).unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_line(&c.set).unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_line(&format!(
        "CREATE GRAPH g FROM '{}' FORMAT edgelist STORAGE dm;",
        edges.display()
    ))
    .unwrap();
    p.exp_string("created graph g").unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_line(&compute_nodes(&c, 2)).unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_line("RUN pagerank ON g ITER 1000000;").unwrap();
    // The progress line shows an iteration once every member is at work on the query.
    p.exp_string("iteration ").unwrap();
    let victim = &mut c.workers[1];
    let _ = victim.child.kill();
    let _ = victim.child.wait();
    // The dead worker is the error's cause, named first: not a survivor's consequent failure
    // ("compute node B failed: the run was aborted: ..." or reading freed state).
    let dead = format!(r"\d: compute node {} died", regex_escape(&victim.addr));
    p.exp_regex(&dead).unwrap();
    p.exp_string("frontier> ").unwrap();
    // Without the dead worker the next query runs, on the same memory nodes.
    let alive = c.workers[0].addr.clone();
    p.send_line(&format!(
        "SET compute_nodes = '{alive}'; RUN bfs ON g FROM 0 ORDER BY vertex LIMIT 2;"
    ))
    .unwrap();
    p.exp_string("2 rows").unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_line("SET compute_nodes = ''; RUN wcc ON g LIMIT 1;")
        .unwrap();
    p.exp_string("1 row").unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn unreachable_workers_missing_descriptors_and_wrong_tokens_are_named() {
    let work = tempfile::tempdir().unwrap();
    let c = cluster(work.path());
    let edges = gen_graph(work.path(), 8);
    let create = format!(
        "{} CREATE GRAPH g FROM '{}' FORMAT edgelist STORAGE dm;",
        c.set,
        edges.display()
    );
    assert!(batch(work.path(), &create).status.success());
    // A port nothing listens on: bind one, then let it go.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let gone = free.local_addr().unwrap().to_string();
    drop(free);
    let o = batch(
        work.path(),
        &format!(
            "{} SET compute_nodes = '{gone}'; RUN bfs ON g FROM 0;",
            c.set
        ),
    );
    let err = common::text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains(&gone) && err.contains("compute_nodes"),
        "{err}"
    );

    let wrong = work.path().join("wrong");
    std::fs::write(&wrong, "not-the-token").unwrap();
    let o = batch(
        work.path(),
        &format!(
            "{} {} SET compute_token_file = '{}'; RUN bfs ON g FROM 0;",
            c.set,
            compute_nodes(&c, 1),
            wrong.display()
        ),
    );
    let err = common::text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("unauthorized") && err.contains(&c.workers[0].addr),
        "{err}"
    );

    // A graph whose catalog layout has no descriptor (loaded before descriptors existed).
    let catalog = work.path().join("data/catalog/catalog.json");
    let text = std::fs::read_to_string(&catalog).unwrap();
    let (_, body) = text.split_once('\n').unwrap();
    let mut v: serde_json::Value = serde_json::from_str(body).unwrap();
    strip_descriptors(&mut v);
    let body = serde_json::to_vec_pretty(&v).unwrap();
    let mut file =
        format!("frontier-catalog 1 crc32={:08x}\n", crc32fast::hash(&body)).into_bytes();
    file.extend_from_slice(&body);
    file.push(b'\n');
    std::fs::write(&catalog, file).unwrap();
    let o = batch(
        work.path(),
        &format!("{} {} RUN bfs ON g FROM 0;", c.set, compute_nodes(&c, 1)),
    );
    let err = common::text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("CREATE OR REPLACE GRAPH g ... STORAGE dm to run it on compute nodes"),
        "{err}"
    );
    // Without compute nodes it still runs here.
    let o = batch(
        work.path(),
        &format!("{} RUN bfs ON g FROM 0 LIMIT 1;", c.set),
    );
    assert!(o.status.success(), "{}", common::text(&o.stderr));
}

fn strip_descriptors(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("descriptor");
            m.values_mut().for_each(strip_descriptors);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_descriptors),
        _ => {}
    }
}

/// `text` with regex metacharacters escaped (addresses hold dots).
fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escape = "\\.+*?()|[]{}^$".contains(c);
            escape.then_some('\\').into_iter().chain([c])
        })
        .collect()
}
