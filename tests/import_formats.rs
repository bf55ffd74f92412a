//! Files as the tools analysts use write them, imported through the real binary: Parquet
//! with every compression from pyarrow and DuckDB. Needs `python3` with `pyarrow` and
//! `duckdb` (`scripts/test.sh` installs them); a missing module is a failure, not a skip.

use std::path::Path;

mod common;

use common::text;

/// A small directed graph, written as `src dst weight` lines: (vertices, edges, text).
fn sample_graph() -> (u64, u64, String) {
    let n = 300u64;
    let mut lines = String::new();
    let mut edges = 0;
    for v in 0..n {
        for step in [1, 7, 31] {
            if v % 3 == 0 && step == 31 {
                continue;
            }
            lines.push_str(&format!("{v} {} {}.5\n", (v + step) % n, v % 5));
            edges += 1;
        }
    }
    (n, edges, lines)
}

/// Runs a Python script with arguments; panics with its stderr when it fails.
fn python(script: &str, args: &[&Path]) {
    common::python(script, args);
}

/// Imports `file` as graph `g` (WEIGHTED) and checks the counts the binary reports.
fn assert_imports(data: &Path, file: &Path, vertices: u64, edges: u64) {
    let out = common::run(
        data,
        &[
            "-c",
            &format!(
                "CREATE OR REPLACE GRAPH g FROM '{}' WEIGHTED;",
                file.display()
            ),
        ],
    );
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{}: {all}", file.display());
    let wanted = format!("{vertices} vertices, {edges} edges");
    assert!(
        all.contains(&wanted),
        "{}: wanted `{wanted}` in {all}",
        file.display()
    );
}

const CODECS: &[&str] = &["none", "snappy", "gzip", "lz4", "brotli", "zstd"];

/// Writes `argv[2]/pyarrow-<codec>.parquet` for each codec from the edge list `argv[1]`,
/// checking that the file really uses the codec.
const PYARROW: &str = r#"
import sys, pyarrow as pa, pyarrow.parquet as pq
src, dst, w = [], [], []
for line in open(sys.argv[1]):
    a, b, c = line.split()
    src.append(int(a)); dst.append(int(b)); w.append(float(c))
t = pa.table({"src": pa.array(src, pa.int64()), "dst": pa.array(dst, pa.int64()), "weight": w})
for codec in sys.argv[3].split(","):
    path = f"{sys.argv[2]}/pyarrow-{codec}.parquet"
    pq.write_table(t, path, compression=codec, row_group_size=200)
    got = pq.ParquetFile(path).metadata.row_group(0).column(0).compression
    want = {"none": "UNCOMPRESSED", "lz4": "LZ4"}.get(codec, codec.upper())
    assert got.startswith(want), (codec, got)
"#;

/// The same with DuckDB's `COPY ... (FORMAT parquet, COMPRESSION c)`.
const DUCKDB: &str = r#"
import sys, duckdb
con = duckdb.connect()
con.execute(f"CREATE TABLE e AS SELECT column0::UBIGINT AS src, column1::UBIGINT AS dst, column2::DOUBLE AS weight FROM read_csv('{sys.argv[1]}', delim=' ', header=false)")
for codec in sys.argv[3].split(","):
    c = "uncompressed" if codec == "none" else codec
    path = f"{sys.argv[2]}/duckdb-{codec}.parquet"
    con.execute(f"COPY e TO '{path}' (FORMAT parquet, COMPRESSION {c}, ROW_GROUP_SIZE 200)")
    got = con.execute(f"SELECT compression FROM parquet_metadata('{path}') LIMIT 1").fetchone()[0]
    assert got.upper().startswith(c.upper()), (codec, got)
"#;

#[test]
fn parquet_with_every_compression_from_pyarrow_and_duckdb_imports() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let (vertices, edges, lines) = sample_graph();
    let list = d.path().join("edges.txt");
    std::fs::write(&list, lines).unwrap();
    let codecs = CODECS.join(",");
    let codecs = Path::new(&codecs);
    python(PYARROW, &[&list, d.path(), codecs]);
    python(DUCKDB, &[&list, d.path(), codecs]);
    for writer in ["pyarrow", "duckdb"] {
        for codec in CODECS {
            let file = d.path().join(format!("{writer}-{codec}.parquet"));
            assert_imports(&data, &file, vertices, edges);
        }
    }
}

/// Runs `statements` with CSV results; panics with the output when they fail.
fn ok(data: &Path, statements: &str) -> String {
    let out = common::csv(data, statements);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{statements}: {all}");
    all
}

/// Runs `statements`, expecting exit 1 with every piece of `wanted` in the error.
fn fails(data: &Path, statements: &str, wanted: &[&str]) {
    let out = common::run(data, &["-c", statements]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{statements}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in wanted {
        assert!(err.contains(w), "wanted `{w}` in\n{err}");
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn gzip_and_zstd_text_and_csv_load_told_by_their_bytes() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let (vertices, edges, lines) = sample_graph();
    let csv = format!("src,dst,weight\n{}", lines.replace(' ', ","));
    let counts = format!("{vertices} vertices, {edges} edges");
    let files: [(&str, Vec<u8>); 5] = [
        ("edges.txt.gz", gzip(lines.as_bytes())),
        (
            "edges.txt.zst",
            zstd::encode_all(lines.as_bytes(), 3).unwrap(),
        ),
        ("edges.csv.gz", gzip(csv.as_bytes())),
        (
            "edges.csv.zst",
            zstd::encode_all(csv.as_bytes(), 3).unwrap(),
        ),
        // The name says nothing of the compression: the magic bytes do.
        ("edges.txt", gzip(lines.as_bytes())),
    ];
    for (name, bytes) in files {
        let path = d.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let all = ok(
            &data,
            &format!(
                "CREATE OR REPLACE GRAPH g FROM '{}' WEIGHTED;",
                path.display()
            ),
        );
        assert!(all.contains(&counts), "{name}: wanted `{counts}` in {all}");
    }
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let txt = d.path().join("bom.txt");
    std::fs::write(&txt, "\u{feff}1 2\n2 3\n").unwrap();
    let csv = d.path().join("bom.csv");
    std::fs::write(&csv, "\u{feff}src,dst\n1,2\n2,3\n").unwrap();
    for path in [txt, csv] {
        let all = ok(
            &data,
            &format!("CREATE OR REPLACE GRAPH g FROM '{}';", path.display()),
        );
        assert!(all.contains("3 vertices, 2 edges"), "{all}");
    }
}

#[test]
fn matrix_market_files_load_with_their_size_line_and_symmetry() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    // Vertex 5 has no entries but exists (5 rows); the size line is not an edge.
    let general = d.path().join("general.mtx");
    std::fs::write(
        &general,
        "%%MatrixMarket matrix coordinate pattern general\n% a comment\n5 5 4\n1 2\n2 3\n3 1\n4 4\n",
    )
    .unwrap();
    let all = ok(
        &data,
        &format!("CREATE GRAPH g FROM '{}';", general.display()),
    );
    assert!(all.contains("5 vertices, 4 edges, directed"), "{all}");

    // Detected by the banner whatever the name; one triangle of a symmetric matrix.
    let symmetric = d.path().join("matrix.txt");
    std::fs::write(
        &symmetric,
        "%%MatrixMarket matrix coordinate integer symmetric\n4 4 3\n2 1 5\n3 1 7\n4 4 1\n",
    )
    .unwrap();
    let all = ok(
        &data,
        &format!(
            "CREATE GRAPH s FROM '{}' WEIGHTED; RUN sssp ON s FROM 1;",
            symmetric.display()
        ),
    );
    assert!(
        all.contains("4 vertices, 3 edges, undirected, weighted"),
        "{all}"
    );
    for row in ["\n1,0\n", "\n2,5\n", "\n3,7\n"] {
        assert!(all.contains(row), "wanted {row:?} in {all}");
    }
    // DIRECTED mirrors the stored triangle (the diagonal entry once).
    let all = ok(
        &data,
        &format!(
            "CREATE GRAPH sd FROM '{}' FORMAT mtx DIRECTED;",
            symmetric.display()
        ),
    );
    assert!(all.contains("4 vertices, 5 edges, directed"), "{all}");

    let short = d.path().join("short.mtx");
    std::fs::write(
        &short,
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 0.5\n",
    )
    .unwrap();
    fails(
        &data,
        &format!("CREATE GRAPH x FROM '{}';", short.display()),
        &["short.mtx: the size line announced 3 entries, the file has 1"],
    );
    fails(
        &data,
        &format!("CREATE GRAPH x FROM '{}' WEIGHTED;", general.display()),
        &["general.mtx:1:", "drop WEIGHTED"],
    );
    // A size line beyond the vertex limit is refused before anything is allocated.
    let huge = d.path().join("huge.mtx");
    std::fs::write(
        &huge,
        "%%MatrixMarket matrix coordinate pattern general\n99999999999 2 1\n1 2\n",
    )
    .unwrap();
    fails(
        &data,
        &format!("CREATE GRAPH x FROM '{}';", huge.display()),
        &["huge.mtx:2:", "at most 2^32-1"],
    );
}

#[test]
fn csv_headers_are_detected_or_given_and_the_assumption_is_named() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let bare = d.path().join("bare.csv");
    std::fs::write(&bare, "1,2\n2,3\n3,1\n").unwrap();
    let all = ok(&data, &format!("CREATE GRAPH a FROM '{}';", bare.display()));
    assert!(all.contains("3 vertices, 3 edges"), "{all}");
    let headed = d.path().join("headed.csv");
    std::fs::write(&headed, "from,to\n1,2\n2,3\n").unwrap();
    let all = ok(
        &data,
        &format!("CREATE GRAPH b FROM '{}';", headed.display()),
    );
    assert!(all.contains("3 vertices, 2 edges"), "{all}");
    // Explicit `header false` reads the first line as data.
    let all = ok(
        &data,
        &format!("CREATE GRAPH c FROM '{}' header false;", bare.display()),
    );
    assert!(all.contains("3 vertices, 3 edges"), "{all}");
    // A bad row says what was assumed about the first line (keys that are not integers are
    // bad only under KEYS integer).
    let bad = d.path().join("bad.csv");
    std::fs::write(&bad, "1,2\n2,x\n").unwrap();
    fails(
        &data,
        &format!("CREATE GRAPH e FROM '{}' KEYS integer;", bad.display()),
        &["bad.csv:2:", "no header was detected", "header true"],
    );
    std::fs::write(&bad, "a,b\nc,d\n").unwrap();
    fails(
        &data,
        &format!("CREATE GRAPH e FROM '{}' KEYS integer;", bad.display()),
        &["bad.csv:2:", "taken as a header", "header false"],
    );
    // With keys that may be strings, `a,b` is an edge; `source,target` a header.
    let all = ok(&data, &format!("CREATE GRAPH f FROM '{}';", bad.display()));
    assert!(all.contains("4 vertices, 2 edges"), "{all}");
    std::fs::write(&bad, "Source,Target\nc,d\n").unwrap();
    let all = ok(&data, &format!("CREATE GRAPH g FROM '{}';", bad.display()));
    assert!(all.contains("2 vertices, 1 edges"), "{all}");
}

#[test]
fn a_tsv_with_a_header_loads_tab_separated() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let tsv = d.path().join("edges.tsv");
    std::fs::write(&tsv, "src\tdst\n1\t2\n2\t3\n").unwrap();
    let all = ok(&data, &format!("CREATE GRAPH t FROM '{}';", tsv.display()));
    assert!(all.contains("3 vertices, 2 edges"), "{all}");
}
