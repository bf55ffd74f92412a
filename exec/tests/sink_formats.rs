//! Each output format read back with the Rust readers: column names, types (vertex UInt64,
//! nullable value columns), null for unreachable vertices, metadata, and the Graphalytics text.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt64Type};
use arrow_array::{Float64Array, Int64Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use exec::sink::{write_result, Destination, ResultMeta, ResultSink, SinkError};
use exec::ResultTable;
use grammar::ast::OutputFormat;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Checks `path` (no data directory to protect) and writes `table` there.
fn write(
    table: &ResultTable,
    path: &std::path::Path,
    format: Option<OutputFormat>,
    meta: &ResultMeta,
) -> Result<exec::sink::WriteSummary, SinkError> {
    write_result(table, &Destination::resolve(path, None)?, format, meta)
}

fn schema(value: &str, t: DataType) -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("vertex", DataType::UInt64, false),
        Field::new(value, t, true),
    ]))
}

/// A BFS-shaped result: depth Int64, null = unreachable. Vertices 9 and 10 are unreachable.
fn bfs() -> ResultTable {
    let s = schema("depth", DataType::Int64);
    let mut t = ResultTable::empty(s.clone());
    let depth = [
        Some(0),
        Some(1),
        Some(1),
        Some(2),
        Some(2),
        Some(2),
        Some(3),
        Some(3),
        None,
        None,
    ];
    for (lo, hi) in [(0usize, 4usize), (4, 10)] {
        t.batches.push(
            RecordBatch::try_new(
                s.clone(),
                vec![
                    Arc::new(UInt64Array::from_iter_values((lo as u64 + 1)..=(hi as u64))),
                    Arc::new(Int64Array::from(depth[lo..hi].to_vec())),
                ],
            )
            .unwrap(),
        );
    }
    t
}

/// An SSSP-shaped result: distance Float64, null = unreachable.
fn sssp() -> ResultTable {
    let s = schema("distance", DataType::Float64);
    let mut t = ResultTable::empty(s.clone());
    t.batches.push(
        RecordBatch::try_new(
            s,
            vec![
                Arc::new(UInt64Array::from(vec![1, 2, 3, 4, u64::MAX])),
                Arc::new(Float64Array::from(vec![
                    Some(0.0),
                    Some(0.1477629166666667),
                    None,
                    Some(1e-300),
                    Some(12345.5),
                ])),
            ],
        )
        .unwrap(),
    );
    t
}

/// A PageRank-shaped result of `n` rows in batches of `batch` rows.
fn pagerank(n: u64, batch: u64) -> ResultTable {
    let s = schema("rank", DataType::Float64);
    let mut t = ResultTable::empty(s.clone());
    let mut lo = 0;
    while lo < n {
        let hi = (lo + batch).min(n);
        t.batches.push(
            RecordBatch::try_new(
                s.clone(),
                vec![
                    Arc::new(UInt64Array::from_iter_values(lo..hi)),
                    Arc::new(Float64Array::from_iter_values(
                        (lo..hi).map(|i| 1.0 / (i as f64 + 2.0)),
                    )),
                ],
            )
            .unwrap(),
        );
        lo = hi;
    }
    t
}

fn meta() -> ResultMeta {
    ResultMeta {
        algorithm: "bfs".into(),
        parameters: vec![
            ("source".into(), "1".into()),
            ("note".into(), "a \"q\"".into()),
        ],
        graph: "test-bfs-directed".into(),
        vertices: 10,
        edges: 17,
        elapsed: Duration::from_millis(1500),
        summaries: Vec::new(),
    }
}

fn check_schema(s: &Schema, value: &str, t: &DataType) {
    assert_eq!(s.fields().len(), 2);
    assert_eq!(s.field(0).name(), "vertex");
    assert_eq!(s.field(0).data_type(), &DataType::UInt64);
    assert_eq!(s.field(1).name(), value);
    assert_eq!(s.field(1).data_type(), t);
    assert!(s.field(1).is_nullable());
}

fn column<T: arrow_array::ArrowPrimitiveType>(
    batches: &[RecordBatch],
    i: usize,
) -> Vec<Option<T::Native>> {
    batches
        .iter()
        .flat_map(|b| b.column(i).as_primitive::<T>().iter().collect::<Vec<_>>())
        .collect()
}

fn read_parquet(path: &Path) -> (SchemaRef, Vec<RecordBatch>, Vec<(String, String)>, usize) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let kv = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kvs| {
            kvs.iter()
                .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let groups = builder.metadata().num_row_groups();
    let schema = builder.schema().clone();
    let batches = builder
        .build()
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (schema, batches, kv, groups)
}

#[test]
fn parquet_reads_back_with_types_nulls_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bfs.parquet");
    let summary = write(&bfs(), &path, None, &meta()).unwrap();
    assert_eq!(summary.format, OutputFormat::Parquet);
    assert_eq!(summary.rows, 10);
    assert_eq!(summary.bytes, std::fs::metadata(&path).unwrap().len());

    let (schema, batches, kv, _) = read_parquet(&path);
    check_schema(&schema, "depth", &DataType::Int64);
    assert_eq!(
        column::<UInt64Type>(&batches, 0),
        (1..=10).map(Some).collect::<Vec<_>>()
    );
    let depth = column::<Int64Type>(&batches, 1);
    assert_eq!(depth[0], Some(0));
    assert_eq!(depth[8], None);
    assert_eq!(depth[9], None);

    let get = |k: &str| kv.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    assert_eq!(get("frontier.algorithm").as_deref(), Some("bfs"));
    assert_eq!(get("frontier.graph").as_deref(), Some("test-bfs-directed"));
    assert_eq!(get("frontier.vertices").as_deref(), Some("10"));
    assert_eq!(get("frontier.edges").as_deref(), Some("17"));
    assert_eq!(
        get("frontier.version").as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(get("frontier.elapsed_seconds").as_deref(), Some("1.500000"));
    assert_eq!(
        get("frontier.parameters").as_deref(),
        Some(r#"{"source": "1", "note": "a \"q\""}"#)
    );

    // zstd was used for every column chunk.
    let reader =
        parquet::file::reader::SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
    use parquet::file::reader::FileReader;
    for rg in reader.metadata().row_groups() {
        for c in rg.columns() {
            assert!(
                matches!(c.compression(), parquet::basic::Compression::ZSTD(_)),
                "{:?}",
                c.compression()
            );
        }
    }
}

#[test]
fn parquet_cuts_row_groups_of_about_a_million_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pr.parquet");
    let n = (1 << 20) + 5000;
    let table = pagerank(n, exec::BATCH_ROWS as u64);
    let mut m = meta();
    m.algorithm = "pagerank".into();
    let summary = write(&table, &path, Some(OutputFormat::Parquet), &m).unwrap();
    assert_eq!(summary.rows, n);
    let (schema, batches, _, groups) = read_parquet(&path);
    check_schema(&schema, "rank", &DataType::Float64);
    assert_eq!(groups, 2);
    let ranks = column::<Float64Type>(&batches, 1);
    assert_eq!(ranks.len() as u64, n);
    assert_eq!(ranks[12345], Some(1.0 / 12347.0));
}

#[test]
fn arrow_ipc_reads_back_with_types_nulls_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sssp.arrow");
    write(&sssp(), &path, None, &meta()).unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(File::open(&path).unwrap(), None).unwrap();
    check_schema(&reader.schema(), "distance", &DataType::Float64);
    assert_eq!(
        reader
            .custom_metadata()
            .get("frontier.algorithm")
            .map(String::as_str),
        Some("bfs")
    );
    let batches = reader.collect::<Result<Vec<_>, _>>().unwrap();
    assert_eq!(
        column::<UInt64Type>(&batches, 0),
        vec![Some(1), Some(2), Some(3), Some(4), Some(u64::MAX)]
    );
    let d = column::<Float64Type>(&batches, 1);
    assert_eq!(
        d,
        vec![
            Some(0.0),
            Some(0.1477629166666667),
            None,
            Some(1e-300),
            Some(12345.5)
        ]
    );
}

#[test]
fn csv_reads_back_with_header_nulls_and_exact_floats() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sssp.CSV");
    write(&sssp(), &path, None, &meta()).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("vertex,distance\n"), "{text}");
    assert!(text.contains("\n3,\n"), "{text}");

    let s = sssp().schema;
    let reader = arrow_csv::ReaderBuilder::new(s.clone())
        .with_header(true)
        .build(File::open(&path).unwrap())
        .unwrap();
    let batches = reader.collect::<Result<Vec<_>, _>>().unwrap();
    check_schema(&batches[0].schema(), "distance", &DataType::Float64);
    assert_eq!(
        column::<Float64Type>(&batches, 1),
        vec![
            Some(0.0),
            Some(0.1477629166666667),
            None,
            Some(1e-300),
            Some(12345.5)
        ]
    );
    assert_eq!(column::<UInt64Type>(&batches, 0)[4], Some(u64::MAX));

    // An empty result still has its header.
    let empty = dir.path().join("empty.csv");
    write(&ResultTable::empty(s), &empty, None, &meta()).unwrap();
    assert_eq!(
        std::fs::read_to_string(&empty).unwrap(),
        "vertex,distance\n"
    );
}

#[test]
fn graphalytics_text_uses_the_reference_markers_for_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("test-bfs-directed-BFS");
    write(&bfs(), &path, Some(OutputFormat::Graphalytics), &meta()).unwrap();
    // The reference output of LDBC Graphalytics' test-bfs-directed (source 1).
    let expected =
        "1 0\n2 1\n3 1\n4 2\n5 2\n6 2\n7 3\n8 3\n9 9223372036854775807\n10 9223372036854775807\n";
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);

    let path = dir.path().join("out-SSSP.txt");
    write(&sssp(), &path, Some(OutputFormat::Graphalytics), &meta()).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        vec![
            "1 0e+00",
            "2 1.477629166666667e-01",
            "3 Infinity",
            "4 1e-300",
            "18446744073709551615 1.23455e+04"
        ]
    );
    // Every value reads back exactly, as a validator would parse it.
    let d = column::<Float64Type>(&sssp().batches, 1);
    for (line, want) in lines.iter().zip(d) {
        let got: f64 = line.split_once(' ').unwrap().1.parse().unwrap();
        assert_eq!(got, want.unwrap_or(f64::INFINITY));
    }
}

#[test]
fn graphalytics_refuses_results_it_cannot_express() {
    let dir = tempfile::tempdir().unwrap();
    let one = Arc::new(Schema::new(vec![Field::new(
        "vertex",
        DataType::UInt64,
        false,
    )]));
    let path = dir.path().join("x");
    let err = write(
        &ResultTable::empty(one),
        &path,
        Some(OutputFormat::Graphalytics),
        &meta(),
    )
    .unwrap_err();
    assert!(matches!(err, SinkError::Unsupported { .. }), "{err}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
    assert!(!path.exists());

    // Utf8 values are a string-keyed graph's vertex keys; other types are refused.
    let strings = Arc::new(Schema::new(vec![
        Field::new("vertex", DataType::UInt64, false),
        Field::new("label", DataType::Boolean, true),
    ]));
    let err = ResultSink::create(
        &Destination::resolve(&path, None).unwrap(),
        Some(OutputFormat::Graphalytics),
        strings,
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("`label`"), "{err}");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "no file may be left"
    );
}

#[test]
fn sink_streams_batches_as_they_come() {
    let dir = tempfile::tempdir().unwrap();
    for (name, format) in [
        ("s.parquet", OutputFormat::Parquet),
        ("s.arrow", OutputFormat::Arrow),
        ("s.csv", OutputFormat::Csv),
        ("s-PR", OutputFormat::Graphalytics),
    ] {
        let path = dir.path().join(name);
        let table = pagerank(1000, 300);
        let explicit = (format == OutputFormat::Graphalytics).then_some(format);
        let mut sink = ResultSink::create(
            &Destination::resolve(&path, None).unwrap(),
            explicit,
            table.schema.clone(),
        )
        .unwrap();
        assert_eq!(sink.format(), format);
        for b in &table.batches {
            sink.write(b).unwrap();
            assert!(!path.exists(), "{name}: visible before finish");
        }
        let summary = sink.finish(&meta()).unwrap();
        assert_eq!(summary.rows, 1000);
        assert!(path.exists());
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 4, "temporary files left: {names:?}");
}

#[test]
fn graphalytics_text_carries_vertex_keys_without_whitespace() {
    use arrow_array::StringArray;
    let dir = tempfile::tempdir().unwrap();
    let keyed = Arc::new(Schema::new(vec![
        Field::new("vertex", DataType::Utf8, false),
        Field::new("component", DataType::Utf8, false),
    ]));
    let table = |keys: Vec<&str>| {
        let batch = RecordBatch::try_new(
            keyed.clone(),
            vec![
                Arc::new(StringArray::from(keys.clone())),
                Arc::new(StringArray::from(vec![keys[0]; keys.len()])),
            ],
        )
        .unwrap();
        ResultTable {
            batches: vec![batch],
            ..ResultTable::empty(keyed.clone())
        }
    };
    let path = dir.path().join("g-WCC");
    write(
        &table(vec!["00017", "alice"]),
        &path,
        Some(OutputFormat::Graphalytics),
        &meta(),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "00017 00017\nalice 00017\n"
    );
    let spaced = dir.path().join("s-WCC");
    let err = write(
        &table(vec!["a b", "c"]),
        &spaced,
        Some(OutputFormat::Graphalytics),
        &meta(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("whitespace"), "{err}");
    assert!(!spaced.exists());
}
