//! String vertex keys through the real binary: keys chosen automatically or with `KEYS`, kept
//! exactly as written (`00017`, UUIDs, Parquet strings), accepted by FROM, carried by every
//! result column that names a vertex, on every store (in memory, out of core with a small
//! cache, and on memory nodes).

use std::collections::BTreeMap;
use std::path::Path;

mod common;

use common::memnode::{pool, Memnode};
use common::{csv, text};

/// Runs `statements`, asserts success, and returns the CSV rows of stdout (header dropped).
fn rows(data: &Path, statements: &str) -> Vec<Vec<String>> {
    let out = csv(data, statements);
    assert!(
        out.status.success(),
        "{statements}\nstderr: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// Runs `statements`, asserts failure, and returns stderr.
fn fails(data: &Path, statements: &str) -> String {
    let out = csv(data, statements);
    assert!(!out.status.success(), "{statements} succeeded");
    text(&out.stderr)
}

/// The stores a test runs on: a label and the statements that precede each RUN (the memory
/// nodes live as long as the returned pair).
fn stores(work: &Path) -> (Vec<(String, String)>, (Memnode, Memnode)) {
    let (a, b, set) = pool(work);
    let stores = vec![
        ("memory".to_string(), String::new()),
        (
            "out of core".to_string(),
            "SET cache = '16KiB';".to_string(),
        ),
        ("dm".to_string(), set),
    ];
    (stores, (a, b))
}

const PEOPLE: &str = "alice,bob\nbob,carol\ncarol,alice\ndave,alice\nerin,frank\n";

#[test]
fn csv_string_keys_name_every_vertex_column_on_every_store() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("people.csv");
    std::fs::write(&file, PEOPLE).unwrap();
    let (stores, _nodes) = stores(work.path());
    for (label, set) in &stores {
        let data = work
            .path()
            .join(format!("data-{}", label.replace(' ', "-")));
        let storage = if label == "dm" { "STORAGE dm" } else { "" };
        let created = csv(
            &data,
            &format!("{set} CREATE GRAPH p FROM '{}' {storage};", file.display()),
        );
        assert!(
            created.status.success(),
            "{label}: {}",
            text(&created.stderr)
        );
        assert!(
            text(&created.stderr).contains("6 vertices, 5 edges, directed, string keys"),
            "{label}: {}",
            text(&created.stderr)
        );
        let bfs = rows(&data, &format!("{set} RUN bfs ON p FROM 'alice';"));
        let depth: BTreeMap<String, String> = bfs
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect();
        let want: BTreeMap<String, String> = [
            ("alice", "0"),
            ("bob", "1"),
            ("carol", "2"),
            ("dave", ""),
            ("erin", ""),
            ("frank", ""),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(depth, want, "{label}");

        // Components are named by their smallest key.
        let wcc = rows(&data, &format!("{set} RUN wcc ON p ORDER BY vertex;"));
        let comp: Vec<(String, String)> = wcc
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone()))
            .collect();
        assert_eq!(
            comp,
            [
                ("alice", "alice"),
                ("bob", "alice"),
                ("carol", "alice"),
                ("dave", "alice"),
                ("erin", "erin"),
                ("frank", "erin")
            ]
            .map(|(a, b)| (a.to_string(), b.to_string())),
            "{label}"
        );

        // DFS parents and random-walk vertices are keys too.
        let dfs = rows(
            &data,
            &format!("{set} RUN dfs ON p FROM 'bob' ORDER BY discovered;"),
        );
        let order: Vec<(&str, &str)> = dfs
            .iter()
            .filter(|r| !r[1].is_empty())
            .map(|r| (r[0].as_str(), r[2].as_str()))
            .collect();
        assert_eq!(
            order,
            [("bob", ""), ("carol", "bob"), ("alice", "carol")],
            "{label}"
        );
        let walk = rows(
            &data,
            &format!("{set} RUN randomwalk ON p FROM 'dave' walks 1 length 3;"),
        );
        let path: Vec<&str> = walk.iter().map(|r| r[2].as_str()).collect();
        assert_eq!(path, ["dave", "alice", "bob", "carol"], "{label}");

        // A misspelt key is named, with the nearest key.
        let err = fails(&data, &format!("{set} RUN bfs ON p FROM 'alcie';"));
        assert!(
            err.contains("vertex 'alcie' is not a vertex of graph `p`")
                && err.contains("did you mean 'alice'?"),
            "{label}: {err}"
        );
    }
}

#[test]
fn keys_stay_as_written_uuids_and_leading_zeros() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let zeros = work.path().join("zeros.el");
    std::fs::write(&zeros, "00017 00018\n00018 17\n").unwrap();
    let got = rows(
        &data,
        &format!(
            "CREATE GRAPH z FROM '{}'; RUN bfs ON z FROM '00017' ORDER BY vertex;",
            zeros.display()
        ),
    );
    assert_eq!(
        got,
        [["00017", "0"], ["00018", "1"], ["17", "2"]].map(|r| r.map(str::to_string).to_vec())
    );
    let described = csv(&data, "DESCRIBE GRAPH z;");
    assert!(
        text(&described.stdout).contains("keys,string"),
        "{}",
        text(&described.stdout)
    );

    let uuids = work.path().join("uuids.csv");
    let a = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let b = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
    let c = "c9bf9e57-1685-4c89-bafb-ff5af830be8a";
    std::fs::write(&uuids, format!("source,target\n{a},{b}\n{b},{c}\n")).unwrap();
    let got = rows(
        &data,
        &format!(
            "CREATE GRAPH u FROM '{}' UNDIRECTED; RUN bfs ON u FROM '{c}' ORDER BY depth;",
            uuids.display()
        ),
    );
    assert_eq!(
        got,
        [[c, "0"], [b, "1"], [a, "2"]].map(|r| r.map(str::to_string).to_vec())
    );
}

#[test]
fn a_late_string_key_reads_the_file_again_and_keys_integer_refuses_it() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let mixed = work.path().join("mixed.el");
    std::fs::write(&mixed, "1 2\n2 3\n3 x\n").unwrap();
    let got = rows(
        &data,
        &format!(
            "CREATE GRAPH m FROM '{}'; RUN bfs ON m FROM '1' ORDER BY vertex;",
            mixed.display()
        ),
    );
    assert_eq!(
        got,
        [["1", "0"], ["2", "1"], ["3", "2"], ["x", "3"]].map(|r| r.map(str::to_string).to_vec())
    );
    let err = fails(
        &data,
        &format!("CREATE GRAPH n FROM '{}' KEYS integer;", mixed.display()),
    );
    assert!(
        err.contains("mixed.el:3:")
            && err.contains("column 2 (dst)")
            && err.contains("`x`")
            && err.contains("KEYS integer"),
        "{err}"
    );
    let people = work.path().join("people.csv");
    std::fs::write(&people, "src,dst\nalice,bob\n").unwrap();
    let err = fails(
        &data,
        &format!("CREATE GRAPH q FROM '{}' KEYS integer;", people.display()),
    );
    assert!(
        err.contains("people.csv:2:")
            && err.contains("column 1 (`src`)")
            && err.contains("`alice`"),
        "{err}"
    );
    // KEYS string keeps integers as text: they then sort as strings.
    let got = rows(
        &data,
        &format!(
            "CREATE GRAPH s FROM '{}' KEYS string; RUN wcc ON s ORDER BY vertex;",
            mixed.display()
        ),
    );
    assert_eq!(got[0], ["1", "1"]);
    // `keys` stays an ordinary name.
    let el = work.path().join("k.el");
    std::fs::write(&el, "1 2\n").unwrap();
    rows(
        &data,
        &format!(
            "CREATE GRAPH keys FROM '{}' KEYS integer; RUN bfs ON keys FROM 1;",
            el.display()
        ),
    );
}

#[test]
fn from_accepts_integer_ids_above_2_pow_63() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let big = (1u64 << 63) + 5;
    let el = work.path().join("big.el");
    std::fs::write(&el, format!("{big} 3\n3 {}\n", u64::MAX)).unwrap();
    let got = rows(
        &data,
        &format!(
            "CREATE GRAPH b FROM '{}'; RUN bfs ON b FROM {big} ORDER BY depth;",
            el.display()
        ),
    );
    assert_eq!(
        got,
        [
            [big.to_string(), "0".into()],
            ["3".into(), "1".into()],
            [u64::MAX.to_string(), "2".into()]
        ]
        .map(|r| r.to_vec())
    );
    let err = fails(&data, &format!("RUN bfs ON b FROM {};", big + 1));
    assert!(
        err.contains(&format!("vertex {} is not a vertex of graph `b`", big + 1)),
        "{err}"
    );
}

/// Writes `argv[1]`: Parquet with string (and large-string / binary) key columns.
const PARQUET: &str = r#"
import sys, pyarrow as pa, pyarrow.parquet as pq
src = ["alice", "bob", "carol", None, "dave", "erin"]
dst = ["bob", "carol", "alice", "bob", "alice", "frank"]
w = [1.0, 2.0, 3.0, 4.0, None, 6.0]
t = pa.table({
    "src": pa.array(src, pa.string()),
    "dst": pa.array(dst, pa.large_string()),
    "weight": pa.array(w, pa.float64()),
})
pq.write_table(t, sys.argv[1])
b = pa.table({"src": pa.array([b"x", b"y"], pa.binary()), "dst": pa.array([b"y", b"z"], pa.binary())})
pq.write_table(b, sys.argv[2])
# pandas categoricals: dictionary-encoded strings, read back as dictionaries.
c = pa.table({
    "src": pa.array(["p", "q", "p", None]).dictionary_encode(),
    "dst": pa.array(["q", "r", "r", "p"]).dictionary_encode(),
})
pq.write_table(c, sys.argv[3])
assert pa.types.is_dictionary(pq.read_table(sys.argv[3]).schema.field("src").type)
"#;

#[test]
fn parquet_string_columns_load_as_keys_and_bad_rows_can_be_skipped() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let file = work.path().join("people.parquet");
    let binary = work.path().join("binary.parquet");
    let categorical = work.path().join("categorical.parquet");
    common::python(PARQUET, [&file, &binary, &categorical]);
    // Row 4 has a null key and row 5 a null weight: each stops the import ...
    let err = fails(
        &data,
        &format!("CREATE GRAPH p FROM '{}' WEIGHTED;", file.display()),
    );
    assert!(
        err.contains("people.parquet:4:") && err.contains("null"),
        "{err}"
    );
    // ... or, with ON ERROR skip, is counted and named.
    let out = csv(
        &data,
        &format!(
            "CREATE GRAPH p FROM '{}' WEIGHTED ON ERROR skip; RUN sssp ON p FROM 'alice' ORDER BY vertex;",
            file.display()
        ),
    );
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("lines skipped 2"), "{said}");
    assert!(
        said.contains("people.parquet:4:") && said.contains("people.parquet:5:"),
        "{said}"
    );
    let got: Vec<String> = text(&out.stdout)
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect();
    assert_eq!(
        got,
        ["alice,0", "bob,1", "carol,3", "erin,", "frank,"],
        "{}",
        text(&out.stdout)
    );
    // Binary columns are keys too; KEYS integer refuses a string column by name.
    let got = rows(
        &data,
        &format!(
            "CREATE GRAPH b FROM '{}'; RUN bfs ON b FROM 'x' ORDER BY vertex;",
            binary.display()
        ),
    );
    assert_eq!(got.len(), 3);
    let got = rows(
        &data,
        &format!(
            "CREATE GRAPH c FROM '{}' ON ERROR skip; RUN bfs ON c FROM 'p' ORDER BY vertex;",
            categorical.display()
        ),
    );
    assert_eq!(
        got,
        [["p", "0"], ["q", "1"], ["r", "1"]].map(|r| r.map(str::to_string).to_vec())
    );
    let err = fails(
        &data,
        &format!("CREATE GRAPH i FROM '{}' KEYS integer;", file.display()),
    );
    assert!(
        err.contains("column `src` holds strings") && err.contains("KEYS integer"),
        "{err}"
    );
}

#[test]
fn parquet_integer_keys_skip_negative_and_null_rows() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let file = work.path().join("ints.parquet");
    let script = r#"
import sys, pyarrow as pa, pyarrow.parquet as pq
t = pa.table({"src": pa.array([1, -2, 3, None], pa.int64()), "dst": pa.array([2, 3, 1, 1], pa.int64())})
pq.write_table(t, sys.argv[1])
"#;
    common::python(script, [&file]);
    let err = fails(&data, &format!("CREATE GRAPH g FROM '{}';", file.display()));
    assert!(
        err.contains("ints.parquet:2:") && err.contains("negative"),
        "{err}"
    );
    let out = csv(
        &data,
        &format!("CREATE GRAPH g FROM '{}' ON ERROR skip;", file.display()),
    );
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("3 vertices, 2 edges") && said.contains("lines skipped 2"),
        "{said}"
    );
    assert!(said.contains("ints.parquet:4:"), "{said}");
}

#[test]
fn a_stream_of_string_keys_needs_keys_string_and_then_imports() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    for (keys, ok) in [("", false), ("KEYS string", true)] {
        let fifo = d.path().join(format!("edges-{ok}.fifo"));
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let writer = {
            let fifo = fifo.clone();
            // Small enough for the pipe's buffer: the write ends however the import goes.
            std::thread::spawn(move || std::fs::write(fifo, "1 2\nalice bob\n").unwrap())
        };
        let out = csv(
            &data,
            &format!("CREATE GRAPH g{ok} FROM '{}' {keys};", fifo.display()),
        );
        writer.join().unwrap();
        let said = text(&out.stderr);
        assert_eq!(out.status.success(), ok, "{said}");
        if ok {
            assert!(
                said.contains("4 vertices, 2 edges, directed, string keys"),
                "{said}"
            );
        } else {
            assert!(
                said.contains("not a regular file") && said.contains("KEYS string"),
                "{said}"
            );
        }
    }
}
