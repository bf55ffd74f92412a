//! PageRank's blocked pull (for graphs of a million vertices or more) is built by runs long
//! enough to pay for its copy and kept with the open graph between statements, so a session's
//! next PageRank, long or short, takes it instead of building it again; it gives way to a
//! statement that needs the memory, and to an import.

mod common;

use engine::{Output, Session};

/// The strategy PROFILE shows for the first iteration of the run in `out`.
fn first_strategy(out: &[Output]) -> String {
    let t = common::profile_table(out);
    t.rows()[0][common::column(t, "strategy")].clone()
}

#[test]
fn a_kept_pull_serves_the_next_pagerank_and_gives_way_when_memory_is_needed() {
    let dir = tempfile::tempdir().unwrap();
    // 2^20 + 2 vertices in pairs: just enough to block (two segments of 512 Ki sources).
    let pairs = (1u64 << 19) + 1;
    let big = dir.path().join("big.txt");
    let text: String = (0..pairs)
        .map(|i| format!("{} {}\n", 2 * i, 2 * i + 1))
        .collect();
    std::fs::write(&big, text).unwrap();
    let small = dir.path().join("small.txt");
    std::fs::write(&small, "1 2\n2 3\n").unwrap();
    let mut s = Session::open(&dir.path().join("data"), false).unwrap();
    s.execute_text(&format!(
        "SET threads = 2; CREATE GRAPH big FROM '{}' UNDIRECTED STORAGE memory; \
         CREATE GRAPH small FROM '{}' UNDIRECTED;",
        big.display(),
        small.display()
    ))
    .unwrap();
    // Room for PageRank on `big` with its 16 MiB copy (80.0 MiB in all, EXPLAIN says), but
    // not for WCC on `big` (68.0 MiB) beside a kept copy.
    s.execute_text("SET memory_limit = '82MiB';").unwrap();
    let explain = |s: &mut Session, rounds: u32| {
        let out = s
            .execute_text(&format!("EXPLAIN RUN pagerank ON big ITER {rounds};"))
            .unwrap();
        matches!(&out[0], Output::Text(t) if t.contains("blocking:"))
    };
    let long = planner::blocking::MIN_ROUNDS as u32;
    assert!(
        explain(&mut s, long),
        "a long PageRank on `big` builds the copy"
    );
    assert!(!explain(&mut s, 1), "a short one does not");
    let short = "PROFILE RUN pagerank ON big ITER 1 LIMIT 1;";
    let long = format!("PROFILE RUN pagerank ON big ITER {long} LIMIT 1;");
    let mut run = |text: &str| s.execute_text(text).unwrap();

    assert_eq!(first_strategy(&run(short)), "fused pull");
    assert_eq!(first_strategy(&run(&long)), "blocked pull");
    assert_eq!(first_strategy(&run(short)), "blocked pull, kept");
    assert_eq!(first_strategy(&run(&long)), "blocked pull, kept");
    // A small run beside it, with room to spare, leaves it be.
    run("PROFILE RUN wcc ON small;");
    assert_eq!(first_strategy(&run(short)), "blocked pull, kept");
    // A run without room for it beside its own estimate lets it go.
    run("PROFILE RUN wcc ON big;");
    assert_eq!(first_strategy(&run(short)), "fused pull");
    assert_eq!(first_strategy(&run(&long)), "blocked pull");
    assert!(explain(&mut s, 1), "a short PageRank takes the kept copy");
    let mut run = |text: &str| s.execute_text(text).unwrap();
    // So does an import.
    run(&format!(
        "CREATE GRAPH again FROM '{}' UNDIRECTED;",
        small.display()
    ));
    assert_eq!(first_strategy(&run(short)), "fused pull");
}
