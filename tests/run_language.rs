//! The RUN statement analysts need, through the real binary: several algorithms joined by vertex,
//! WHERE, several ORDER BY keys, OFFSET, YIELD, and the errors of each clause. The analyst's
//! question ("the top 10 vertices by PageRank in the largest component, with their degree") is
//! one statement whose answer must equal DuckDB's join of the three single-algorithm files.
//! Needs `python3` with `duckdb` (`scripts/test.sh` installs it); a missing module is a failure.

mod common;

use std::path::Path;

use common::{csv, text};

/// A directed graph of three components of different sizes plus isolated vertices, with
/// irregular degrees from a fixed linear congruential sequence.
fn graph_file(dir: &Path) -> std::path::PathBuf {
    let mut lines = String::new();
    let mut x: u64 = 12345;
    let mut next = |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    for (first, size, edges) in [(0u64, 60u64, 200), (100, 25, 60), (200, 8, 12)] {
        // A path keeps each block connected; random arcs make the ranks differ.
        for v in first..first + size - 1 {
            lines.push_str(&format!("{v} {}\n", v + 1));
        }
        for _ in 0..edges {
            lines.push_str(&format!("{} {}\n", first + next(size), first + next(size)));
        }
    }
    let path = dir.join("g.el");
    std::fs::write(&path, lines).unwrap();
    path
}

fn created(dir: &Path) -> std::path::PathBuf {
    let data = dir.join("data");
    let file = graph_file(dir);
    let out = csv(
        &data,
        &format!("CREATE GRAPH g FROM '{}' DIRECTED;", file.display()),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    data
}

/// Runs a Python script; its stdout, or a panic with its stderr.
fn python(script: &str, args: &[&Path]) -> String {
    common::python(script, args)
}

/// The analyst's question over the three files, as DuckDB answers it: the largest component's
/// id on the first line, then the rows as CSV with a header.
const DUCKDB_JOIN: &str = r#"
import sys, duckdb
d = sys.argv[1]
con = duckdb.connect()
largest = con.execute(f"""
    SELECT component FROM '{d}/cc.parquet' GROUP BY component
    ORDER BY count(*) DESC, component LIMIT 1""").fetchone()[0]
print(largest)
rows = con.execute(f"""
    SELECT p.vertex, p.rank, c.component, g.out_degree, g.in_degree
    FROM '{d}/pr.parquet' p JOIN '{d}/cc.parquet' c USING (vertex) JOIN '{d}/deg.parquet' g USING (vertex)
    WHERE c.component = {largest}
    ORDER BY p.rank DESC, p.vertex LIMIT 10""").fetchall()
print("vertex,rank,component,out_degree,in_degree")
for r in rows:
    print(",".join(repr(v) if isinstance(v, float) else str(v) for v in r))
"#;

#[test]
fn the_analysts_question_is_one_statement_equal_to_the_duckdb_join() {
    let d = tempfile::tempdir().unwrap();
    let data = created(d.path());
    let out_dir = d.path().display();
    let out = csv(
        &data,
        &format!(
            "RUN pagerank ITER 20 ON g INTO '{out_dir}/pr.parquet';
             RUN wcc ON g INTO '{out_dir}/cc.parquet';
             RUN degree ON g INTO '{out_dir}/deg.parquet';"
        ),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let answer = python(DUCKDB_JOIN, &[d.path()]);
    let (largest, want) = answer.split_once('\n').unwrap();
    assert_eq!(want.lines().count(), 11, "{answer}");

    let out = csv(
        &data,
        &format!(
            "RUN pagerank ITER 20, wcc, degree ON g WHERE component = {largest} \
             ORDER BY rank DESC, vertex LIMIT 10;"
        ),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), want);
}

/// Rows of a CSV result as (header, rows of fields).
fn table(stdout: &[u8]) -> (String, Vec<Vec<String>>) {
    let s = text(stdout);
    let mut lines = s.lines();
    let header = lines.next().unwrap_or("").to_string();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

#[test]
fn where_order_offset_and_yield_equal_the_same_steps_done_by_hand() {
    let d = tempfile::tempdir().unwrap();
    let data = created(d.path());
    let all = csv(&data, "RUN pagerank ITER 5, degree ON g;");
    assert!(all.status.success(), "{}", text(&all.stderr));
    let (header, rows) = table(&all.stdout);
    assert_eq!(header, "vertex,rank,out_degree,in_degree");
    let num = |r: &Vec<String>, i: usize| r[i].parse::<f64>().unwrap();
    // WHERE out_degree * 2 - in_degree > 3 OR rank >= 0.01 AND NOT vertex IN (3, 5)
    let mut want: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| {
            num(r, 2) * 2.0 - num(r, 3) > 3.0
                || (num(r, 1) >= 0.01 && ![3.0, 5.0].contains(&num(r, 0)))
        })
        .collect();
    // ORDER BY out_degree DESC, rank, vertex DESC, then OFFSET 4 LIMIT 7, YIELD rank, vertex
    want.sort_by(|a, b| {
        num(b, 2)
            .total_cmp(&num(a, 2))
            .then(num(a, 1).total_cmp(&num(b, 1)))
            .then(num(b, 0).total_cmp(&num(a, 0)))
    });
    let want: String = want
        .iter()
        .skip(4)
        .take(7)
        .map(|r| format!("{},{}\n", r[1], r[0]))
        .collect();
    let out = csv(
        &data,
        "RUN pagerank ITER 5, degree ON g \
         WHERE out_degree * 2 - in_degree > 3 OR rank >= 0.01 AND NOT vertex IN (3, 5) \
         ORDER BY out_degree DESC, rank, vertex DESC LIMIT 7 OFFSET 4 YIELD rank, vertex;",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("rank,vertex\n{want}"));
}

#[test]
fn each_clause_names_its_fault() {
    let d = tempfile::tempdir().unwrap();
    let data = created(d.path());
    for (statement, wanted) in [
        (
            "RUN wcc, randomwalk ON g;",
            vec!["-c:1:10:", "cannot be joined"],
        ),
        (
            "RUN pagerank, pagerank ON g;",
            vec!["-c:1:15:", "appears twice", "AS"],
        ),
        (
            "RUN pagerank AS a, pagerank AS b ON g ORDER BY rank;",
            vec!["-c:1:48:", "ambiguous: write a.rank or b.rank"],
        ),
        (
            "RUN pagerank, wcc ON g ITER 3;",
            vec!["-c:1:24:", "after its name"],
        ),
        (
            "RUN pagerank ON g WHERE rnak > 1;",
            vec!["-c:1:25:", "did you mean `rank`"],
        ),
        (
            "RUN pagerank ON g\nWHERE rank > 'high';",
            vec!["-c:2:14:", "not one"],
        ),
        (
            "RUN pagerank ON g WHERE rank AND vertex = 1;",
            vec!["-c:1:25:", "`AND` needs conditions"],
        ),
        (
            "RUN pagerank ON g WHERE rank + 1;",
            vec!["-c:1:25:", "WHERE needs a condition"],
        ),
        (
            "RUN pagerank ON g WHERE rank > ;",
            vec!["-c:1:32:", "a column, number or string"],
        ),
        (
            "RUN pagerank ON g YIELD vertex YIELD rank;",
            vec!["-c:1:32:", "given twice"],
        ),
        (
            "RUN pagerank ON g YIELD score;",
            vec!["-c:1:25:", "no column `score`"],
        ),
        (
            "RUN pagerank ON g ORDER BY rank, rank;",
            vec!["-c:1:34:", "given twice"],
        ),
        ("RUN pagerank ON g OFFSET -1;", vec!["-c:1:26:", "OFFSET"]),
        (
            "RUN pagerank ON g ODER BY rank;",
            vec!["-c:1:19:", "did you mean ORDER?"],
        ),
        (
            "RUN pagerank ON g LIMT 5;",
            vec!["-c:1:19:", "did you mean the clause LIMIT?"],
        ),
        (
            "DESCRIEB GRAPH g;",
            vec!["-c:1:1:", "did you mean DESCRIBE?"],
        ),
        ("HELP pagernak;", vec!["-c:1:6:", "did you mean `pagerank`"]),
        (
            "SET cache = 4KB;",
            vec!["-c:1:13:", "'4KiB' is 4096 bytes", "write at least 4KiB"],
        ),
    ] {
        let out = csv(&data, statement);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{statement}: {err}");
        for w in wanted {
            assert!(err.contains(w), "{statement}: wanted {w} in\n{err}");
        }
    }
}

#[test]
fn help_explains_an_algorithm_from_its_declaration() {
    let d = tempfile::tempdir().unwrap();
    let out = csv(&d.path().join("data"), "HELP pagerank; HELP lcc; HELP SET;");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let help = text(&out.stdout);
    for piece in [
        "pagerank [FROM vertex] [ITER n=20] [damping d=0.85]",
        "damping    default 0.85, range 0..=1",
        "rank         Float64",
        "dangling mass is spread over all vertices",
        "edge weights are ignored",
        "Example:\n  RUN pagerank ITER 20 ON g",
        "in ∪ out",
        "memory_limit",
        "cn_cache",
    ] {
        assert!(help.contains(piece), "{piece} in\n{help}");
    }
}

#[test]
fn help_names_column_types_as_the_result_carries_them() {
    let d = tempfile::tempdir().unwrap();
    let out = csv(&d.path().join("data"), "HELP dfs; HELP RUN;");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let help = text(&out.stdout);
    assert!(!help.contains("vertex key"), "{help}");
    for piece in [
        "vertex       UInt64 (Utf8 on graphs with string keys)",
        "parent       UInt64 (Utf8 on graphs with string keys), null when not reached",
        "discovered   UInt64, null when not reached",
        "[ORDER BY expr [ASC|DESC], ...]",
        "YIELD vertex, rank * 1000 AS score",
    ] {
        assert!(help.contains(piece), "{piece} in\n{help}");
    }
}
