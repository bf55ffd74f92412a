//! Files as the tools analysts use write them, imported through the real binary: Parquet
//! with every compression from pyarrow and DuckDB. Needs `python3` with `pyarrow` and
//! `duckdb` (`scripts/test.sh` installs them); a missing module is a failure, not a skip.

use std::path::Path;
use std::process::Command;

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
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 failed (scripts/test.sh installs pyarrow and duckdb):\n{}",
        text(&out.stderr)
    );
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
