//! Betweenness is exact by default on small graphs and samples its sources on large ones,
//! saying which on its status line and in EXPLAIN.

use engine::{Output, Session};

/// The status lines and the EXPLAIN text of `statements`.
fn outputs(s: &mut Session, statements: &str) -> (Vec<String>, String) {
    let out = s.execute_text(statements).unwrap();
    let status = out
        .iter()
        .filter_map(|o| match o {
            Output::Status(line) => Some(line.clone()),
            _ => None,
        })
        .collect();
    let plan = out
        .iter()
        .find_map(|o| match o {
            Output::Text(plan) => Some(plan.clone()),
            _ => None,
        })
        .unwrap_or_default();
    (status, plan)
}

#[test]
fn small_graphs_are_exact_and_large_ones_sampled_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.txt");
    std::fs::write(&small, "1 2\n2 3\n3 1\n3 4\n").unwrap();
    // A binary tree of 33 000 vertices: |V|·|E| just above 2^30, but shallow.
    let large = dir.path().join("large.txt");
    let tree: String = (1..33_000u32)
        .map(|v| format!("{} {v}\n", (v - 1) / 2))
        .collect();
    std::fs::write(&large, tree).unwrap();
    let mut s = Session::open(&dir.path().join("data"), false).unwrap();
    s.execute_text(&format!(
        "CREATE GRAPH small FROM '{}' DIRECTED; CREATE GRAPH large FROM '{}';",
        small.display(),
        large.display()
    ))
    .unwrap();

    let (_, plan) = outputs(&mut s, "EXPLAIN RUN betweenness ON small;");
    assert!(
        plan.contains("RUN betweenness ON small samples=4 seed=0"),
        "{plan}"
    );
    assert!(
        plan.contains("sources:   every vertex: exact (by default: |V|·|E| = 16 <= 1073741824)"),
        "{plan}"
    );
    let (status, _) = outputs(&mut s, "RUN betweenness ON small;");
    assert!(
        status
            .iter()
            .any(|l| l == "betweenness: sources 4, sampled 0"),
        "{status:?}"
    );

    let (_, plan) = outputs(&mut s, "EXPLAIN RUN betweenness ON large;");
    assert!(
        plan.contains("sources:   64 of 33000 sampled with SEED 0: an estimate (by default: |V|·|E| = 1088967000 > 1073741824; SAMPLES 33000 for the exact result)"),
        "{plan}"
    );
    let (status, _) = outputs(&mut s, "RUN betweenness ON large;");
    assert!(
        status
            .iter()
            .any(|l| l == "betweenness: sources 64, sampled 1"),
        "{status:?}"
    );

    // Given SAMPLES win either way.
    let (_, plan) = outputs(&mut s, "EXPLAIN RUN betweenness ON large SAMPLES 8 SEED 2;");
    assert!(
        plan.contains("sources:   8 of 33000 sampled with SEED 2: an estimate\n"),
        "{plan}"
    );
    let (status, _) = outputs(&mut s, "RUN betweenness ON small SAMPLES 2;");
    assert!(
        status
            .iter()
            .any(|l| l == "betweenness: sources 2, sampled 1"),
        "{status:?}"
    );
}
