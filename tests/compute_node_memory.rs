//! A compute node's memory, through the real binary: the peak RSS a worker reports for its part
//! of a split run stays within its `cn_cache` plus the constant docs/DM.md states ("The
//! bound"). On a directed ring with many vertices and one edge each, anything a worker held per
//! vertex — of the whole graph or of its owned range — would show: PageRank's growth from a
//! tiny ring to the 2^20 ring must stay within `cn_cache` plus a constant that does not grow
//! with |V| (the growth check, which the debug binary's code pages do not blur). On an
//! edge-heavy R-MAT graph the constant dominates, and a worker whose allocator kept what
//! earlier rounds and jobs freed would exceed it.

mod common;

use std::process::{Command, Stdio};

use common::compute::ComputeNode;
use common::memnode::pool;
use common::BIN;

/// The bound's constant C for a debug build with one thread (docs/DM.md, "The bound") is the
/// worker's resident code pages (`ComputeNode::file_rss`, which vary between builds) plus
/// this: thread stacks, the buffers' floors and what the allocator keeps (up to 7 MiB
/// measured). Holding the edge-heavy graph's arcs (8 MiB) on top would exceed it.
const ANON_CONSTANT: u64 = 12 << 20;

/// `cn_cache` + C for `worker`, read after its jobs ran (code pages only accumulate).
fn bound(cn_cache: u64, worker: &ComputeNode) -> u64 {
    cn_cache + worker.file_rss() + ANON_CONSTANT
}
/// What a job may add over the same job on a tiny graph besides `cn_cache`, whatever |V|: the
/// floors of the buffers a round sizes from `cn_cache` (docs/DM.md, "The bound"). A worker
/// that listed its owned vertices (4 B each, 2 MiB on half the 2^20 ring) exceeds it.
const GROWTH_CONSTANT: u64 = 3 << 20;
/// What a collaborative min-update round may add besides: the piece being applied
/// (`collab::round::apply`; a piece spans at least 2^16 vertices): its accumulator (8 B a
/// vertex, 512 KiB) and change flags (64 KiB), the mail pulled at a time (256 KiB) and its
/// changes handed on (16 B a change, 1 MiB): 1.8 MiB, whatever |V|.
const PIECE_CHANGES: u64 = 2 << 20;

/// The owned range's size on a PROFILE line for a worker ("vertices A..B").
fn owned(line: &str) -> u64 {
    let range = line
        .split("vertices ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no owned range in {line}"));
    let (a, b) = range
        .split_once("..")
        .unwrap_or_else(|| panic!("no owned range in {line}"));
    b.parse::<u64>().unwrap() - a.parse::<u64>().unwrap()
}

/// One session against the pool `set` names: graphs `small` and `big` created from the two
/// files (`how`: the CREATE clause's format and shape) on DM, `cn_cache` set, then `runs`.
/// Returns its standard output, and that with its standard error (asserting it succeeded).
fn small_then_big(
    work: &std::path::Path,
    set: &str,
    small: &std::path::Path,
    big: &std::path::Path,
    how: &str,
    cn_cache: u64,
    runs: &str,
) -> (String, String) {
    let o = Command::new(BIN)
        .arg("--data")
        .arg(work.join("data"))
        .args(["--format", "csv", "-c"])
        .arg(format!(
            "{set} SET threads = 1; \
             CREATE GRAPH small FROM '{}' {how} STORAGE dm; \
             CREATE GRAPH big FROM '{}' {how} STORAGE dm; \
             SET cn_cache = '{cn_cache}B'; {runs}",
            small.display(),
            big.display(),
        ))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = common::text(&o.stdout);
    let all = format!("{stdout}{}", common::text(&o.stderr));
    assert!(o.status.success(), "{all}");
    (stdout, all)
}

/// A directed ring of `n` vertices, as an edge list in `dir`.
fn ring(dir: &std::path::Path, n: u64) -> std::path::PathBuf {
    let path = dir.join(format!("ring{n}.txt"));
    let text: String = (0..n).map(|v| format!("{v} {}\n", (v + 1) % n)).collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// On a ring with many vertices and one edge each the per-vertex terms dominate: a worker that
/// held the whole graph's degrees or a list of its owned vertices would exceed the bound. The
/// jobs of each update strategy run on their own worker, on a tiny ring (twice: the first job
/// pages the code in) and then on the 2^20 ring, so the same code pages are resident in both
/// measured jobs and the difference of the peaks is what the big graph adds; it must stay
/// within `cn_cache` plus a constant. Direct and collaborative update (`auto` picks ValRD).
#[test]
fn a_workers_peak_rss_stays_within_cn_cache_plus_a_constant() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    let n: u64 = 1 << 20;
    let small = ring(work.path(), 1 << 10);
    let big = ring(work.path(), n);
    let cn_cache: u64 = 16;
    let updates = ["direct", "auto"];
    // One worker per strategy, so every job on a worker runs the same code: a job's peak counts
    // the code pages earlier jobs on its worker mapped. Its first job pages that code in.
    let workers: Vec<ComputeNode> = updates
        .iter()
        .map(|_| ComputeNode::start(&work.path().join("token")))
        .collect();
    let mut runs = String::new();
    for (update, worker) in updates.iter().zip(&workers) {
        runs += &format!(
            "SET compute_nodes = '{}'; SET dm_update = '{update}'; ",
            worker.addr
        );
        for graph in ["small", "small", "big"] {
            runs += &format!("PROFILE RUN pagerank ON {graph} ITER 1 LIMIT 1; ");
        }
    }
    let (_, all) = small_then_big(
        work.path(),
        &set,
        &small,
        &big,
        "FORMAT edgelist",
        cn_cache,
        &runs,
    );
    assert!(
        all.contains("remote valrd"),
        "auto no longer picks collaborative update on the ring: {all}"
    );
    let mut measured = Vec::new();
    for (update, worker) in updates.iter().zip(&workers) {
        let peaks = worker_peaks(&all, &worker.addr);
        assert_eq!(peaks.len(), 3, "{all}");
        let (small_peak, (line, peak)) = (peaks[1].1, peaks[2].clone());
        eprintln!("{update}: tiny ring {small_peak} B, 2^20 ring {peak} B: {line}");
        measured.push((update, small_peak, line, peak));
    }
    for ((update, small_peak, line, peak), worker) in measured.into_iter().zip(&workers) {
        assert!(small_peak > 0 && peak > 0, "{line}");
        assert!(
            owned(&line) >= n / 4,
            "{update}: the worker owns too little of the ring for the check to mean anything: \
             {line}"
        );
        let bound = bound(cn_cache, worker);
        assert!(
            peak <= bound,
            "{update}: peak RSS {peak} B over cn_cache + code pages + {ANON_CONSTANT} B = \
             {bound} B: {line}"
        );
        let growth = peak.saturating_sub(small_peak);
        let allowed = cn_cache + GROWTH_CONSTANT;
        assert!(
            growth <= allowed,
            "{update}: the 2^20 ring's job peaks {growth} B above the tiny ring's, over \
             cn_cache + {GROWTH_CONSTANT} B = {allowed} B: {line}"
        );
    }
}

/// The peak RSS PROFILE's line for `worker` reports, in bytes, for every PROFILE in `out`.
fn worker_peaks(out: &str, worker: &str) -> Vec<(String, u64)> {
    out.lines()
        .filter(|l| l.contains(&format!("compute node {worker}")))
        .map(|line| {
            let size = line
                .split("peak RSS ")
                .nth(1)
                .and_then(|rest| rest.split(" (").next())
                .unwrap_or_else(|| panic!("no peak RSS in {line}"));
            let peak = base::parse_size(size).unwrap_or_else(|e| panic!("{size}: {e:?}"));
            (line.to_string(), peak)
        })
        .collect()
}

/// An R-MAT graph with 64 arcs per vertex, so a worker's per-vertex arrays are small beside the
/// edges it processes; PageRank and WCC, direct and collaborative update, a tiny and a
/// few-MiB `cn_cache`, one after the other on one worker (what glibc kept from one job would
/// show in the next).
#[test]
fn on_an_edge_heavy_graph_a_workers_peak_rss_stays_within_cn_cache_plus_a_constant() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    let worker = ComputeNode::start(&work.path().join("token"));
    let edges = work.path().join("rmat.el");
    let gen = Command::new(BIN)
        .args(["gen", "rmat", "--scale", "14", "--edge-factor", "32", "-o"])
        .arg(&edges)
        .output()
        .unwrap();
    assert!(gen.status.success(), "{}", common::text(&gen.stderr));
    let text = std::fs::read_to_string(&edges).unwrap();
    let mut ids: Vec<u64> = text
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let arcs = ids.len() as u64; // two ends per edge, each edge read both ways
    ids.sort_unstable();
    ids.dedup();
    let n = ids.len() as u64;
    assert!(
        arcs >= 16 * n,
        "{arcs} arcs over {n} vertices is not edge-heavy"
    );
    let caches: [u64; 2] = [16, 4 << 20];
    let mut runs = String::new();
    for cache in caches {
        for update in ["direct", "auto"] {
            runs += &format!(
                "SET cn_cache = '{cache}B'; SET dm_update = '{update}'; \
                 PROFILE RUN pagerank ON g ITER 2 LIMIT 1; PROFILE RUN wcc ON g LIMIT 1; "
            );
        }
    }
    let o = Command::new(BIN)
        .arg("--data")
        .arg(work.path().join("data"))
        .args(["--format", "csv", "-c"])
        .arg(format!(
            "{set} SET threads = 1; CREATE GRAPH g FROM '{}' UNDIRECTED STORAGE dm; \
             SET compute_nodes = '{}'; {runs}",
            edges.display(),
            worker.addr
        ))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let all = format!("{}{}", common::text(&o.stdout), common::text(&o.stderr));
    assert!(o.status.success(), "{all}");
    let peaks = worker_peaks(&all, &worker.addr);
    assert_eq!(peaks.len(), 8, "{all}");
    let over: Vec<String> = peaks
        .iter()
        .enumerate()
        .filter_map(|(i, (line, peak))| {
            let bound = bound(caches[i / 4], &worker);
            (*peak == 0 || *peak > bound).then(|| format!("{line}: bound {bound} B"))
        })
        .collect();
    assert!(
        over.is_empty(),
        "peak RSS over cn_cache + code pages + {ANON_CONSTANT} B ({n} vertices, {arcs} arcs):\n{}\n\
         all runs:\n{}",
        over.join("\n"),
        peaks
            .iter()
            .map(|p| p.0.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A tree of `1 + fanout + ... + fanout^depth` vertices, vertex `v > 0` joined to its parent
/// `(v - 1) / fanout` with weight 1, as a weighted edge list in `dir`.
fn tree(dir: &std::path::Path, fanout: u64, depth: u32) -> std::path::PathBuf {
    let n: u64 = (0..=depth).map(|d| fanout.pow(d)).sum();
    let path = dir.join(format!("tree{fanout}_{depth}.txt"));
    let text: String = (1..n)
        .map(|v| format!("{} {v} 1\n", (v - 1) / fanout))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// The push rounds of BFS (claims), WCC and SSSP (min-updates) on a wide, shallow tree of
/// over a million vertices: its last BFS level and WCC's first rounds hold most vertices, so
/// a worker that listed its owned frontier (4 B per vertex, and 8 B per value, 16 B per
/// collaborative change: 28 B over the half million vertices a worker owns) would show.
/// As in the ring test each kind of job runs on its own worker, on a tiny tree twice and then
/// on the big one; the big job's peak may exceed the tiny one's by `cn_cache` plus the
/// constant (and, collaborative, a piece's changes): nothing per vertex, of the whole graph or
/// of the owned range (whose bits, at `cn_cache` 16 B, live in the memory nodes).
#[test]
fn claim_and_min_update_rounds_stay_within_cn_cache_plus_a_constant() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    let small = tree(work.path(), 32, 2);
    let big = tree(work.path(), 32, 4);
    let n: u64 = (0..=4).map(|d| 32u64.pow(d)).sum();
    let cn_cache: u64 = 16;
    let jobs = [
        ("bfs", "direct"),
        ("wcc", "direct"),
        ("wcc", "auto"),
        ("sssp", "direct"),
        ("sssp", "auto"),
    ];
    // Every job asks for the rows that are wrong, so the worker's rounds are checked, not
    // only measured: ids are in breadth-first order, so level L holds ids from
    // 1 + 32 + ... + 32^(L-1), and the level is the depth and the distance from 0; the one
    // component is labelled 0.
    let wrong = |column: &str| {
        let starts = [0u64, 1, 33, 1057, 33825, n];
        let levels: Vec<String> = (0..5)
            .map(|l| {
                format!(
                    "(vertex >= {} AND vertex < {} AND {column} = {l})",
                    starts[l],
                    starts[l + 1]
                )
            })
            .collect();
        format!("{column} IS NULL OR NOT ({})", levels.join(" OR "))
    };
    let clause = |algo: &str, graph: &str| match algo {
        "wcc" => format!("wcc ON {graph} WHERE component <> 0"),
        "bfs" => format!("bfs ON {graph} FROM 0 WHERE {}", wrong("depth")),
        _ => format!("sssp ON {graph} FROM 0 WHERE {}", wrong("distance")),
    };
    let workers: Vec<ComputeNode> = jobs
        .iter()
        .map(|_| ComputeNode::start(&work.path().join("token")))
        .collect();
    let mut runs = String::new();
    for ((algo, update), worker) in jobs.iter().zip(&workers) {
        runs += &format!(
            "SET compute_nodes = '{}'; SET dm_update = '{update}'; ",
            worker.addr
        );
        for graph in ["small", "small", "big"] {
            runs += &format!("PROFILE RUN {} LIMIT 1; ", clause(algo, graph));
        }
    }
    let (stdout, all) = small_then_big(
        work.path(),
        &set,
        &small,
        &big,
        "UNDIRECTED WEIGHTED",
        cn_cache,
        &runs,
    );
    // A result row is two fields, a vertex id first (PROFILE's rows have eight).
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split(',').collect();
            f.len() == 2 && f[0].parse::<u64>().is_ok()
        })
        .collect();
    assert!(rows.is_empty(), "wrong rows on the compute nodes: {rows:?}");
    assert!(
        all.contains("remote valrd") || all.contains("remote refrd"),
        "auto no longer picks collaborative update on the tree: {all}"
    );
    let mut over = Vec::new();
    for ((algo, update), worker) in jobs.iter().zip(&workers) {
        let peaks = worker_peaks(&all, &worker.addr);
        assert_eq!(peaks.len(), 3, "{all}");
        let (small_peak, (line, peak)) = (peaks[1].1, peaks[2].clone());
        eprintln!("{algo} {update}: tiny tree {small_peak} B, big tree {peak} B: {line}");
        assert!(small_peak > 0 && peak > 0, "{line}");
        assert!(
            owned(&line) >= n / 4,
            "{algo} {update}: the worker owns too little of the tree for the check to mean \
             anything: {line}"
        );
        let growth = peak.saturating_sub(small_peak);
        let pieces = if *update == "direct" {
            0
        } else {
            PIECE_CHANGES
        };
        let allowed = cn_cache + GROWTH_CONSTANT + pieces;
        let bound = bound(cn_cache, worker);
        if peak > bound || growth > allowed {
            over.push(format!(
                "{algo} {update}: the big tree's job peaks {growth} B above the tiny tree's \
                 (allowed cn_cache + {GROWTH_CONSTANT} + {pieces} B = {allowed} B), \
                 peak {peak} B (bound {bound} B): {line}"
            ));
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}
