//! A Parquet file written by frontier, read by pyarrow — the reader behind pandas and many
//! other tools. Needs `python3` with `pyarrow`: `scripts/test.sh` installs it (`pip install
//! pyarrow`), and a missing pyarrow is a failure, not a skip.

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{Float64Array, Int64Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use exec::sink::{write_result, Destination, ResultMeta};
use exec::ResultTable;

fn pyarrow_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import pyarrow.parquet"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "python3 with pyarrow not found: run `pip install pyarrow` (scripts/test.sh does)"
    );
    ok
}

const SCRIPT: &str = r#"
import json, sys
import pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1])
t = f.read()
meta = {k.decode(): v.decode() for k, v in (f.schema_arrow.metadata or {}).items()}
kv = f.metadata.metadata or {}
out = {
    "names": t.column_names,
    "types": [str(x.type) for x in t.schema],
    "nullable": [x.nullable for x in t.schema],
    "rows": t.num_rows,
    "vertex": t.column(0).to_pylist()[:3] + t.column(0).to_pylist()[-1:],
    "depth_nulls": t.column(1).null_count,
    "depth_last": t.column(1).to_pylist()[-3:],
    "rank": t.column(2).to_pylist()[:2],
    "algorithm": kv.get(b"frontier.algorithm", b"").decode(),
    "graph": kv.get(b"frontier.graph", b"").decode(),
    "params": json.loads(kv.get(b"frontier.parameters", b"{}").decode()),
    "compression": f.metadata.row_group(0).column(0).compression,
}
print(json.dumps(out))
"#;

#[test]
fn pyarrow_reads_a_frontier_parquet_file() {
    if !pyarrow_available() {
        return;
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("vertex", DataType::UInt64, false),
        Field::new("depth", DataType::Int64, true),
        Field::new("rank", DataType::Float64, true),
    ]));
    let n = 70_000u64; // more than one batch
    let mut t = ResultTable::empty(schema.clone());
    let mut lo = 0;
    while lo < n {
        let hi = (lo + exec::BATCH_ROWS as u64).min(n);
        t.batches.push(
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(UInt64Array::from_iter_values(
                        (lo..hi).map(|i| i * 10 + u64::MAX / 2),
                    )),
                    Arc::new(Int64Array::from_iter(
                        (lo..hi).map(|i| (i % 7 != 0).then_some(i as i64 % 5)),
                    )),
                    Arc::new(Float64Array::from_iter_values(
                        (lo..hi).map(|i| 0.25 + i as f64),
                    )),
                ],
            )
            .unwrap(),
        );
        lo = hi;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("result.parquet");
    let meta = ResultMeta {
        algorithm: "bfs".into(),
        parameters: vec![("source".into(), "42".into())],
        graph: "web".into(),
        vertices: n,
        edges: 3 * n,
        elapsed: Duration::from_millis(20),
        summaries: Vec::new(),
    };
    write_result(&t, &Destination::resolve(&path, None).unwrap(), None, &meta).unwrap();

    let out = Command::new("python3")
        .arg("-c")
        .arg(SCRIPT)
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().unwrap_or("");
    let v: serde_like::Value = serde_like::parse(line);
    v.expect("names", r#"["vertex", "depth", "rank"]"#);
    v.expect("types", r#"["uint64", "int64", "double"]"#);
    v.expect("nullable", "[false, true, true]");
    v.expect("rows", &n.to_string());
    let base = u64::MAX / 2;
    v.expect(
        "vertex",
        &format!(
            "[{}, {}, {}, {}]",
            base,
            base + 10,
            base + 20,
            base + (n - 1) * 10
        ),
    );
    // Every 7th row is null: rows 0, 7, ..., 69993.
    v.expect("depth_nulls", &n.div_ceil(7).to_string());
    v.expect("depth_last", "[2, 3, 4]");
    v.expect("rank", "[0.25, 1.25]");
    v.expect("algorithm", "\"bfs\"");
    v.expect("graph", "\"web\"");
    v.expect("params", r#"{"source": "42"}"#);
    v.expect("compression", "\"ZSTD\"");
}

/// Just enough of a JSON reader for the script's one-line output: top-level keys mapped to
/// their raw text (exec has no JSON dependency, and this keeps it that way).
mod serde_like {
    pub struct Value(Vec<(String, String)>);

    pub fn parse(line: &str) -> Value {
        let inner = line.trim().trim_start_matches('{').trim_end_matches('}');
        let mut out = Vec::new();
        let (mut depth, mut in_str, mut start) = (0i32, false, 0usize);
        let bytes = inner.as_bytes();
        let mut parts = Vec::new();
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'"' if i == 0 || bytes[i - 1] != b'\\' => in_str = !in_str,
                b'[' | b'{' if !in_str => depth += 1,
                b']' | b'}' if !in_str => depth -= 1,
                b',' if !in_str && depth == 0 => {
                    parts.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&inner[start..]);
        for p in parts {
            if let Some((k, v)) = p.split_once(": ") {
                out.push((k.trim().trim_matches('"').to_string(), v.trim().to_string()));
            }
        }
        Value(out)
    }

    impl Value {
        pub fn expect(&self, key: &str, want: &str) {
            let got = self
                .0
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str());
            assert_eq!(got, Some(want), "key {key}");
        }
    }
}
