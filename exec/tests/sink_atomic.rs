//! Files appear whole or not at all; bad paths are errors that name the path.

use std::sync::Arc;

use arrow_array::{Float64Array, RecordBatch, StringArray, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use exec::sink::{
    infer_format, write_result, AtomicFile, Destination, ResultMeta, ResultSink, SinkError,
};
use exec::ResultTable;
use grammar::ast::OutputFormat;
use std::io::Write;

/// Checks `path` (no data directory to protect) and writes `table` there.
fn write(
    table: &ResultTable,
    path: &std::path::Path,
    format: Option<OutputFormat>,
    meta: &ResultMeta,
) -> Result<exec::sink::WriteSummary, SinkError> {
    write_result(table, &Destination::resolve(path, None)?, format, meta)
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("vertex", DataType::UInt64, false),
        Field::new("rank", DataType::Float64, true),
    ]))
}

fn table() -> ResultTable {
    let mut t = ResultTable::empty(schema());
    t.batches.push(
        RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(UInt64Array::from(vec![1, 2])),
                Arc::new(Float64Array::from(vec![Some(0.5), None])),
            ],
        )
        .unwrap(),
    );
    t
}

fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn format_follows_the_extension_or_is_refused_with_the_choices() {
    use std::path::Path;
    assert_eq!(
        infer_format(Path::new("a/b.parquet")).unwrap(),
        OutputFormat::Parquet
    );
    assert_eq!(
        infer_format(Path::new("b.PARQUET")).unwrap(),
        OutputFormat::Parquet
    );
    assert_eq!(
        infer_format(Path::new("b.arrow")).unwrap(),
        OutputFormat::Arrow
    );
    assert_eq!(infer_format(Path::new("b.csv")).unwrap(), OutputFormat::Csv);
    for bad in ["out.txt", "out", "dir.parquet/"] {
        if bad.ends_with('/') {
            continue;
        }
        let err = infer_format(Path::new(bad)).unwrap_err().to_string();
        assert!(err.contains(bad), "{err}");
        assert!(
            err.contains(".parquet") && err.contains("graphalytics"),
            "{err}"
        );
    }
}

#[test]
fn unknown_extension_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.txt");
    let err = write(&table(), &path, None, &ResultMeta::default()).unwrap_err();
    assert!(matches!(err, SinkError::UnknownFormat { .. }));
    assert!(entries(dir.path()).is_empty());
    // An explicit FORMAT accepts any extension.
    write(
        &table(),
        &path,
        Some(OutputFormat::Csv),
        &ResultMeta::default(),
    )
    .unwrap();
    assert_eq!(entries(dir.path()), vec!["out.txt"]);
}

#[test]
fn missing_directory_and_directory_paths_are_errors_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/out.parquet");
    let err = write(&table(), &missing, None, &ResultMeta::default()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains(&missing.display().to_string()), "{msg}");
    assert!(msg.contains("does not exist"), "{msg}");

    let sub = dir.path().join("sub.parquet");
    std::fs::create_dir(&sub).unwrap();
    let err = write(&table(), &sub, None, &ResultMeta::default()).unwrap_err();
    assert!(err.to_string().contains("is a directory"), "{err}");

    // A regular file used as a directory.
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let under = file.join("out.csv");
    let err = write(&table(), &under, None, &ResultMeta::default()).unwrap_err();
    assert!(
        err.to_string().contains(&under.display().to_string()),
        "{err}"
    );
    assert_eq!(entries(dir.path()), vec!["plain", "sub.parquet"]);
}

#[test]
fn dropping_an_unfinished_sink_leaves_no_file_and_keeps_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.parquet", "a.arrow", "a.csv"] {
        let path = dir.path().join(name);
        std::fs::write(&path, b"previous result").unwrap();
        let mut sink =
            ResultSink::create(&Destination::resolve(&path, None).unwrap(), None, schema())
                .unwrap();
        sink.write(&table().batches[0]).unwrap();
        drop(sink);
        assert_eq!(std::fs::read(&path).unwrap(), b"previous result", "{name}");
        std::fs::remove_file(&path).unwrap();
    }
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[test]
fn a_failing_write_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let other = Arc::new(Schema::new(vec![Field::new("name", DataType::Utf8, true)]));
    let wrong = RecordBatch::try_new(other, vec![Arc::new(StringArray::from(vec!["x"]))]).unwrap();
    for name in ["f.parquet", "f.arrow", "f.csv"] {
        let path = dir.path().join(name);
        let mut sink =
            ResultSink::create(&Destination::resolve(&path, None).unwrap(), None, schema())
                .unwrap();
        sink.write(&table().batches[0]).unwrap();
        // A batch that does not match the schema fails (the run would stop here) ...
        let failed = sink
            .write(&wrong)
            .and_then(|_| sink.finish(&ResultMeta::default()));
        if let Err(e) = &failed {
            assert!(e.to_string().contains(name), "{e}");
        }
        // ... and whatever happened, no temporary file is left behind.
        let left: Vec<String> = entries(dir.path())
            .into_iter()
            .filter(|n| n.contains("tmp"))
            .collect();
        assert!(left.is_empty(), "{name}: {left:?}");
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn atomic_file_commit_renames_and_drop_removes() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("x.bin");
    let mut f = AtomicFile::create(&dest).unwrap();
    let temp = f.temp_path().to_path_buf();
    f.write_all(b"hello").unwrap();
    assert!(temp.exists() && !dest.exists());
    assert_eq!(f.commit().unwrap(), 5);
    assert!(!temp.exists());
    assert_eq!(std::fs::read(&dest).unwrap(), b"hello");

    let mut g = AtomicFile::create(&dest).unwrap();
    let temp = g.temp_path().to_path_buf();
    g.write_all(b"half").unwrap();
    drop(g);
    assert!(!temp.exists());
    assert_eq!(std::fs::read(&dest).unwrap(), b"hello");

    // Two sinks to the same path at once do not collide; the last to finish wins.
    let a = AtomicFile::create(&dest).unwrap();
    let mut b = AtomicFile::create(&dest).unwrap();
    assert_ne!(a.temp_path(), b.temp_path());
    b.write_all(b"b").unwrap();
    b.commit().unwrap();
    drop(a);
    assert_eq!(std::fs::read(&dest).unwrap(), b"b");
    assert_eq!(entries(dir.path()), vec!["x.bin"]);
}
