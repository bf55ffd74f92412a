//! Result files say where they came from in the place tools look: the Arrow schema metadata
//! of Parquet and Arrow IPC files (`pyarrow.parquet.read_schema(f).metadata`, what pandas and
//! polars show). Needs `python3` with `pyarrow` (`scripts/test.sh` installs it).

mod common;

use common::text;

const READ_METADATA: &str = r#"
import sys, pyarrow as pa, pyarrow.parquet as pq
path = sys.argv[1]
if path.endswith(".parquet"):
    meta = pq.read_schema(path).metadata
else:
    meta = pa.ipc.open_file(path).schema.metadata
meta = meta or {}
print(meta.get(b"frontier.algorithm", b"").decode())
print(meta.get(b"frontier.graph", b"").decode())
print(meta.get(b"frontier.parameters", b"").decode())
print(meta.get(b"frontier.version", b"").decode())
"#;

#[test]
fn parquet_and_arrow_results_carry_provenance_in_the_arrow_schema() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let edges = d.path().join("edges.txt");
    std::fs::write(&edges, "1 2\n2 3\n3 1\n").unwrap();
    let pq = d.path().join("ranks.parquet");
    let arrow = d.path().join("ranks.arrow");
    let out = common::run(
        &data,
        &[
            "-c",
            &format!(
                "CREATE GRAPH web FROM '{}'; RUN pagerank ON web ITER 7 INTO '{}'; \
                 RUN pagerank ON web ITER 7 INTO '{}';",
                edges.display(),
                pq.display(),
                arrow.display()
            ),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    for file in [pq, arrow] {
        let got = common::python(READ_METADATA, [&file]);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines.len(), 4, "{}: {got}", file.display());
        assert_eq!(lines[0], "pagerank", "{}: {got}", file.display());
        assert_eq!(lines[1], "web", "{}: {got}", file.display());
        assert!(lines[2].contains("\"7\""), "{}: {got}", file.display());
        assert!(!lines[3].is_empty(), "{}: {got}", file.display());
    }
}
