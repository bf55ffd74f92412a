//! Edges handed over as Arrow record batches in memory (a data frame) import as the same graph
//! an edge-list file of those edges gives, in several batches, with named columns and weights;
//! a bad row names the input and its row.

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, RecordBatchIterator, UInt32Array,
};
use arrow_schema::{DataType, Field, Schema};
use common::*;
use storage::blockfile::memory::MemoryStore;
use storage::import::{import_batches, ImportRequest, InputFormat};

fn frame(edges: &[(u64, u64, f64)], rows_per_batch: usize) -> (Arc<Schema>, Vec<RecordBatch>) {
    // The weight column comes first, so choosing columns by name is exercised.
    let schema = Arc::new(Schema::new(vec![
        Field::new("w", DataType::Float64, false),
        Field::new("from", DataType::UInt32, false),
        Field::new("to", DataType::Int64, false),
    ]));
    let batches = edges
        .chunks(rows_per_batch)
        .map(|chunk| {
            let columns: Vec<ArrayRef> = vec![
                Arc::new(Float64Array::from_iter_values(chunk.iter().map(|e| e.2))),
                Arc::new(UInt32Array::from_iter_values(
                    chunk.iter().map(|e| e.0 as u32),
                )),
                Arc::new(Int64Array::from_iter_values(
                    chunk.iter().map(|e| e.1 as i64),
                )),
            ];
            RecordBatch::try_new(schema.clone(), columns).unwrap()
        })
        .collect();
    (schema, batches)
}

fn frame_request(dir: &std::path::Path, directed: bool) -> ImportRequest {
    let mut req = request(
        std::path::Path::new("<test frame>"),
        InputFormat::Arrow,
        &dir.join("g.frontier"),
        dir,
    );
    req.directed = Some(directed);
    req.weighted = true;
    req.options = vec![
        ("src".into(), "from".into()),
        ("dst".into(), "to".into()),
        ("weight".into(), "w".into()),
    ];
    req
}

#[test]
fn batches_import_as_the_edges_they_hold() {
    let edges: Vec<(u64, u64, f64)> = (0..500u64)
        .map(|i| (i % 37, (i * 7 + 3) % 41, i as f64 / 4.0))
        .collect();
    for directed in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let req = frame_request(dir.path(), directed);
        let (schema, batches) = frame(&edges, 64);
        let mut reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
        let summary =
            import_batches(&req, &mut reader, &mut |_| {}, &AtomicBool::new(false)).unwrap();
        let (want_out, want_in, want_edges) = expected(&edges, directed, true);
        assert_eq!(summary.edges, want_edges);
        assert_eq!(summary.report.lines_read, edges.len() as u64);
        let store = MemoryStore::load(&req.dest).unwrap();
        let (_, out, inn) = read_back(&store);
        assert_eq!(out, want_out, "directed {directed}");
        if directed {
            assert_eq!(inn, want_in);
        }
    }
}

#[test]
fn a_negative_id_names_the_frame_and_its_row() {
    let edges = [(1, 2, 1.0), (2, 3, 1.0), (3, 4, 1.0)];
    let dir = tempfile::tempdir().unwrap();
    let req = frame_request(dir.path(), true);
    let (schema, mut batches) = frame(&edges, 2);
    // Row 3 (the second batch's first row) gets a negative destination.
    let bad: ArrayRef = Arc::new(Int64Array::from(vec![-5]));
    let b = &batches[1];
    batches[1] = RecordBatch::try_new(
        schema.clone(),
        vec![b.column(0).clone(), b.column(1).clone(), bad],
    )
    .unwrap();
    let mut reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
    let err = import_batches(&req, &mut reader, &mut |_| {}, &AtomicBool::new(false)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "<test frame>:3: row 3, column `to`: negative vertex id -5"
    );
    assert!(!req.dest.exists());
}

#[test]
fn an_unknown_column_lists_the_frame_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut req = frame_request(dir.path(), true);
    req.options[0].1 = "source".into();
    let (schema, batches) = frame(&[(1, 2, 1.0)], 1);
    let mut reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
    let err = import_batches(&req, &mut reader, &mut |_| {}, &AtomicBool::new(false)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "<test frame>: no column `source` (columns: w, from, to)"
    );
}

#[test]
fn string_keys_in_a_frame_import_as_string_keys() {
    use arrow_array::StringArray;

    let dir = tempfile::tempdir().unwrap();
    let mut req = frame_request(dir.path(), true);
    req.weighted = false;
    req.options.truncate(2);
    let schema = Arc::new(Schema::new(vec![
        Field::new("from", DataType::Utf8, false),
        Field::new("to", DataType::Utf8, false),
    ]));
    let batch = |a: Vec<&str>, b: Vec<&str>| {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(a)),
            Arc::new(StringArray::from(b)),
        ];
        RecordBatch::try_new(schema.clone(), columns).unwrap()
    };
    let batches = vec![
        batch(vec!["alice", "bob"], vec!["bob", "carol"]),
        batch(vec!["carol"], vec!["alice"]),
    ];
    // The key type comes from the schema before a batch is read, so a one-pass reader suffices.
    let mut reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
    let summary = import_batches(&req, &mut reader, &mut |_| {}, &AtomicBool::new(false)).unwrap();
    assert_eq!((summary.vertices, summary.edges), (3, 3));
}
