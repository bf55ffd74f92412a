//! PROFILE's caption says how long threads waited for reads out of core (the run's I/O-bound
//! share) and how busy the device was, and says nothing of either in memory; its table gives a
//! cache hit rate only for iterations that asked the cache for blocks.

mod common;

use engine::{Output, Session};

/// The caption of PROFILE's iteration table in `out`.
fn profile_caption(out: &[Output]) -> String {
    out.iter()
        .find_map(|o| match o {
            Output::Caption(c) if c.starts_with("profile (") => Some(c.clone()),
            _ => None,
        })
        .expect("PROFILE's caption")
}

/// PROFILE's iteration table in `out`, as (blocks read, hit rate) per iteration.
fn blocks_and_hit_rates(out: &[Output]) -> Vec<(u64, String)> {
    let table = common::profile_table(out);
    let (blocks, rate) = (
        common::column(table, "blocks read"),
        common::column(table, "hit rate"),
    );
    table
        .rows()
        .iter()
        .map(|r| (r[blocks].parse().unwrap(), r[rate].clone()))
        .collect()
}

/// The seconds the caption gives for the waits, if it names them.
fn waited(caption: &str) -> Option<f64> {
    let rest = caption.split("threads waited for reads ").nth(1)?;
    rest.split(' ').next()?.parse().ok()
}

/// The percentage the caption gives for the device's busy time, if it names it.
fn device_busy(caption: &str) -> Option<f64> {
    let rest = caption.split("device busy ").nth(1)?;
    rest.split(' ').next()?.parse().ok()
}

/// A session in a fresh data directory holding `ring`, a cycle of `n` vertices in a block file,
/// and `held`, the same cycle kept in memory.
fn rings(n: u32) -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("ring.txt");
    let text: String = (0..n).map(|i| format!("{i} {}\n", (i + 1) % n)).collect();
    std::fs::write(&edges, text).unwrap();
    let mut s = Session::open(&dir.path().join("data"), false).unwrap();
    s.execute_text(&format!(
        "CREATE GRAPH ring FROM '{}' UNDIRECTED; CREATE GRAPH held FROM '{}' UNDIRECTED \
         STORAGE memory;",
        edges.display(),
        edges.display()
    ))
    .unwrap();
    (dir, s)
}

#[test]
fn profile_says_how_long_threads_waited_for_reads_out_of_core() {
    let (dir, mut s) = rings(20_000);

    let out = s
        .execute_text("SET cache = '8KB'; PROFILE RUN pagerank ON ring ITER 2 LIMIT 1;")
        .unwrap();
    let caption = profile_caption(&out);
    assert!(caption.contains("out of core"), "{caption}");
    assert!(waited(&caption).is_some(), "no waits named: {caption}");
    // The busy share is given when the data directory sits on a block device the kernel
    // keeps statistics for (not on tmpfs or overlay file systems), and is a percentage.
    let on_a_disk = storage::io::DeviceBusy::of(dir.path()).is_some();
    match device_busy(&caption) {
        Some(p) => assert!(on_a_disk && (0.0..=100.0).contains(&p), "{caption}"),
        None => assert!(!on_a_disk, "no busy share named: {caption}"),
    }

    let out = s
        .execute_text("PROFILE RUN pagerank ON held ITER 2 LIMIT 1;")
        .unwrap();
    let caption = profile_caption(&out);
    assert!(!caption.contains("waited"), "{caption}");
    assert!(!caption.contains("device busy"), "{caption}");
}

#[test]
fn profile_gives_no_hit_rate_for_a_pass_that_read_past_the_cache() {
    let (_dir, mut s) = rings(200_000);

    // PageRank's pull scans the in-edges in large reads that bypass the block cache.
    let out = s
        .execute_text("SET cache = '2MB'; PROFILE RUN pagerank ON ring ITER 2 LIMIT 1;")
        .unwrap();
    let rows = blocks_and_hit_rates(&out);
    assert_eq!(rows.len(), 2);
    for (blocks, rate) in &rows {
        assert!(*blocks > 0, "{rows:?}");
        assert_eq!(rate, "—", "{rows:?}");
    }

    // BFS's sparse levels fetch lists through the cache: a rate, as a percentage.
    let out = s
        .execute_text("SET mode = push; PROFILE RUN bfs ON ring FROM 0 LIMIT 1;")
        .unwrap();
    let rows = blocks_and_hit_rates(&out);
    assert!(
        rows.iter().any(|(b, r)| *b > 0 && r.ends_with(" %")),
        "{rows:?}"
    );
}
