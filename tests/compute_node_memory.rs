//! A compute node's memory, through the real binary: the peak RSS a worker reports for its part
//! of a split PageRank stays within its `cn_cache` plus the bound docs/DM.md states ("Memory
//! per compute node"). The graph is a directed ring with many vertices and few edges, so the
//! per-vertex terms dominate and a worker that materialised the whole result would exceed it.

mod common;

use std::process::{Command, Stdio};

use common::compute::ComputeNode;
use common::memnode::pool;
use common::BIN;

/// The bound's constant for a debug build with one thread, on a graph with about as many
/// edges as vertices, under direct update (docs/DM.md: the part that grows with the edges,
/// and collaborative update's combine buffers, are not bounded yet).
const CONSTANT: u64 = 36 << 20;
/// Per vertex of the graph beyond its degrees and input ids (docs/DM.md).
const PER_VERTEX: u64 = 4;

#[test]
fn a_workers_peak_rss_stays_within_cn_cache_plus_the_documented_bound() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    let worker = ComputeNode::start(&work.path().join("token"));
    let n: u64 = 1 << 20;
    let edges = work.path().join("ring.txt");
    let text: String = (0..n).map(|v| format!("{v} {}\n", (v + 1) % n)).collect();
    std::fs::write(&edges, text).unwrap();
    let cn_cache: u64 = 16;
    let o = Command::new(BIN)
        .arg("--data")
        .arg(work.path().join("data"))
        .args(["--format", "csv", "-c"])
        .arg(format!(
            "{set} SET threads = 1; CREATE GRAPH g FROM '{}' FORMAT edgelist STORAGE dm; \
             SET cn_cache = '{cn_cache}B'; SET compute_nodes = '{}'; SET dm_update = 'direct'; \
             PROFILE RUN pagerank ON g ITER 1 LIMIT 1;",
            edges.display(),
            worker.addr
        ))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let all = format!("{}{}", common::text(&o.stdout), common::text(&o.stderr));
    assert!(o.status.success(), "{all}");
    let line = all
        .lines()
        .find(|l| l.contains(&format!("compute node {}", worker.addr)))
        .unwrap_or_else(|| panic!("no line for the worker: {all}"));
    let size = line
        .split("peak RSS ")
        .nth(1)
        .and_then(|rest| rest.split(" (").next())
        .unwrap_or_else(|| panic!("no peak RSS in {line}"));
    let peak = base::parse_size(size).unwrap_or_else(|e| panic!("{size}: {e:?}"));
    // Directed, ids equal to the internal ids: degrees of both directions, no input ids.
    let degrees = 2 * 4 * n;
    let bound = cn_cache + CONSTANT + degrees + PER_VERTEX * n;
    assert!(peak > 0, "{line}");
    assert!(
        peak <= bound,
        "peak RSS {peak} B over cn_cache + bound {bound} B: {line}"
    );
}
