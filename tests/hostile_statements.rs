//! Statements and files built to exhaust the process, through the real binary: expressions
//! nested past the limit, chains of tens of thousands of terms, sizes a file only declares,
//! megabyte-long keys and names. Each must end with an error that names the position (or run
//! correctly), never a stack overflow, an abort or an unbounded wait.

use std::path::Path;
use std::process::Output;

mod common;

use common::text;

/// Runs the script in `file` (written first): long statements do not fit in an argument.
fn script(data: &Path, dir: &Path, name: &str, statements: &str) -> Output {
    let file = dir.join(name);
    std::fs::write(&file, statements).unwrap();
    common::run(data, &["--format", "csv", file.to_str().unwrap()])
}

fn graph(dir: &Path) -> (std::path::PathBuf, String) {
    let edges = dir.join("g.el");
    std::fs::write(&edges, "0 1\n1 2\n2 3\n3 4\n4 5\n").unwrap();
    let data = dir.join("data");
    let create = format!("CREATE GRAPH g FROM '{}' UNDIRECTED;\n", edges.display());
    (data, create)
}

fn assert_refused(out: &Output, wanted: &str) -> String {
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stderr: {}",
        &err[..err.len().min(2000)]
    );
    assert!(
        !err.contains("overflow") && !err.contains("panicked"),
        "{err:.2000}"
    );
    assert!(err.contains(wanted), "wanted `{wanted}` in {err:.2000}");
    err
}

#[test]
fn nesting_past_the_limit_is_a_syntax_error_with_a_position() {
    let d = tempfile::tempdir().unwrap();
    let (data, create) = graph(d.path());
    let n = 10 * grammar::MAX_EXPR_DEPTH;
    let cases = [
        format!("{}vertex = 1{}", "(".repeat(n), ")".repeat(n)),
        format!("{}vertex = 1", "NOT ".repeat(n)),
        format!("{}vertex > 1", "- ".repeat(n)),
        format!("vertex{} > 1", " + 0".repeat(10 * n)),
    ];
    for (i, condition) in cases.iter().enumerate() {
        // The script's first statement would create a graph: a syntax error anywhere runs nothing.
        let out = script(
            &data,
            d.path(),
            &format!("deep{i}.fq"),
            &format!("{create}RUN degree ON g WHERE {condition};\n"),
        );
        let err = assert_refused(&out, "nests more than 1000 levels");
        assert!(
            err.starts_with(&format!(
                "error: {}:2:",
                d.path().join(format!("deep{i}.fq")).display()
            )),
            "{err:.300}"
        );
        assert!(err.len() < 2000, "the error is short: {} bytes", err.len());
        // Nothing ran: the graph of the first statement does not exist.
        let describe = common::run(&data, &["-c", "DESCRIBE GRAPH g;"]);
        assert_eq!(
            describe.status.code(),
            Some(1),
            "{}",
            text(&describe.stdout)
        );
    }
    // Within the limit, the same expression runs.
    let ok = format!(
        "{create}RUN degree ON g WHERE {}vertex = 1{} YIELD vertex;\n",
        "(".repeat(900),
        ")".repeat(900)
    );
    let out = script(&data, d.path(), "ok.fq", &ok);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "vertex\n1\n");
}

#[test]
fn long_chains_run_and_give_the_right_rows() {
    let d = tempfile::tempdir().unwrap();
    let (data, create) = graph(d.path());
    let terms = 30_000;
    // vertex = 1 OR vertex = 3 OR vertex = 1000 OR vertex = 1001 ...: two vertices of the graph.
    let or_chain = std::iter::once("vertex = 1".to_string())
        .chain(std::iter::once("vertex = 3".to_string()))
        .chain((1000..1000 + terms).map(|i| format!("vertex = {i}")))
        .collect::<Vec<_>>()
        .join(" OR ");
    let and_chain = (0..terms)
        .map(|_| "vertex < 3")
        .collect::<Vec<_>>()
        .join(" AND ");
    let in_list = (100..100 + 10 * terms)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let text_in = format!(
        "{create}RUN degree ON g WHERE {or_chain} ORDER BY vertex RETURN vertex;\n\
         RUN degree ON g WHERE {and_chain} ORDER BY vertex RETURN vertex;\n\
         RUN degree ON g WHERE vertex IN ({in_list}, 4) YIELD vertex;\n"
    );
    let out = script(&data, d.path(), "chains.fq", &text_in);
    assert!(out.status.success(), "{:.2000}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "vertex\n1\n3\nvertex\n0\n1\n2\nvertex\n4\n"
    );
}

#[test]
fn a_million_strings_in_a_list_are_refused_by_position() {
    let d = tempfile::tempdir().unwrap();
    let (data, create) = graph(d.path());
    let list = (0..1_000_000)
        .map(|i| format!("'k{i}'"))
        .collect::<Vec<_>>()
        .join(",");
    let out = script(
        &data,
        d.path(),
        "strings.fq",
        &format!("{create}RUN degree ON g WHERE vertex IN ({list});\n"),
    );
    let err = assert_refused(&out, "is not one");
    assert!(err.len() < 2000, "{} bytes", err.len());
}

#[test]
fn a_declared_size_is_checked_before_anything_is_allocated() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let mtx = d.path().join("huge.mtx");
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate pattern general\n1000000000 3 1\n1 2\n",
    )
    .unwrap();
    let out = common::run(
        &data,
        &[
            "-c",
            &format!(
                "SET import_memory = '256MiB'; CREATE GRAPH m FROM '{}';",
                mtx.display()
            ),
        ],
    );
    let err = assert_refused(
        &out,
        "huge.mtx:2: the size line declares 1000000000 vertices",
    );
    assert!(err.contains("import_memory (256.0 MiB)"), "{err}");
    // Within the budget the same file imports: the declared vertices are the graph's.
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate pattern general\n1000 3 1\n1 2\n",
    )
    .unwrap();
    let out = common::run(
        &data,
        &[
            "-c",
            &format!("CREATE GRAPH m FROM '{}'; DESCRIBE GRAPH m;", mtx.display()),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn megabyte_keys_and_names_give_short_errors_quickly() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    // Keys just under the importer's 1 MiB line limit; the one asked for differs in its end.
    let long = "y".repeat((1 << 20) - 16);
    let almost = format!("{}z", "y".repeat((1 << 20) - 17));
    let edges = d.path().join("keys.el");
    std::fs::write(&edges, format!("{almost} b\nb c\n")).unwrap();
    let statements = format!(
        "CREATE GRAPH k FROM '{}' KEYS string;\nRUN bfs ON k FROM '{long}';\n",
        edges.display()
    );
    let out = script(&data, d.path(), "keys.fq", &statements);
    let err = assert_refused(&out, "(1048562 characters) is not a vertex of graph `k`");
    assert!(err.len() < 1000, "{err}");

    let name = "y".repeat(1 << 20);
    let out = script(
        &data,
        d.path(),
        "name.fq",
        &format!("RUN bfs ON {name} FROM 1;\n"),
    );
    let err = assert_refused(&out, "(1048578 characters) does not exist");
    assert!(err.len() < 1000, "{err}");
}

#[test]
fn numbers_too_large_are_called_too_large() {
    let d = tempfile::tempdir().unwrap();
    let (data, create) = graph(d.path());
    let out = script(
        &data,
        d.path(),
        "big.fq",
        &format!("{create}RUN bfs ON g FROM 0 ORDER BY vertex LIMIT 18446744073709551615;\n"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 7);
    let out = common::run(&data, &["-c", "SET threads = 18446744073709551615;"]);
    let err = assert_refused(&out, "18446744073709551615 is out of range");
    assert!(!err.contains("expected a whole number"), "{err}");
    let out = common::run(
        &data,
        &["-c", "RUN pagerank ON g ITER 18446744073709551615;"],
    );
    let err = text(&out.stderr);
    assert!(!err.contains("expects a whole number"), "{err}");
}
