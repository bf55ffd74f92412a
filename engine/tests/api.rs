//! The engine API as a front end other than the REPL uses it: statements in, typed outputs out,
//! nothing printed.

use engine::{Output, Session};

#[test]
fn statements_give_typed_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("g.txt");
    std::fs::write(&edges, "1 2\n2 3\n3 1\n3 4\n").unwrap();
    let mut s = Session::open(&dir.path().join("data"), false).unwrap();

    let out = s
        .execute_text(&format!(
            "CREATE GRAPH g FROM '{}' DIRECTED; RUN bfs ON g FROM 1 ORDER BY vertex;",
            edges.display()
        ))
        .unwrap();
    let Output::Status(created) = &out[0] else {
        panic!("a status line first");
    };
    assert!(
        created.starts_with("created graph g: 4 vertices, 4 edges"),
        "{created}"
    );
    let Some(Output::Rows { table, .. }) = out.iter().find(|o| matches!(o, Output::Rows { .. }))
    else {
        panic!("then the rows");
    };
    assert_eq!(table.num_rows(), 4);
    assert_eq!(table.schema.field(0).name(), "vertex");

    let out = s
        .execute_text("SHOW GRAPHS; EXPLAIN RUN wcc ON g;")
        .unwrap();
    let Output::Table(t) = &out[0] else {
        panic!("SHOW GRAPHS is a table");
    };
    assert_eq!(t.rows()[0][0], "g");
    assert!(matches!(&out[1], Output::Text(plan) if plan.contains("wcc")));

    let Err(err) = s.execute_text("RUN bfs ON nosuch FROM 1;") else {
        panic!("an unknown graph is an error");
    };
    assert!(err.message.contains("nosuch"), "{}", err.message);
}

#[test]
fn a_graph_is_created_from_record_batches_in_memory() {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator};
    use arrow_schema::{DataType, Field, Schema};

    let dir = tempfile::tempdir().unwrap();
    let mut s = Session::open(&dir.path().join("data"), false).unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Int64, false),
    ]));
    let batch = |a: Vec<i64>, b: Vec<i64>| {
        let columns: Vec<ArrayRef> =
            vec![Arc::new(Int64Array::from(a)), Arc::new(Int64Array::from(b))];
        RecordBatch::try_new(schema.clone(), columns)
    };
    let batches = vec![batch(vec![1, 2], vec![2, 3]), batch(vec![3], vec![1])];
    let mut reader = RecordBatchIterator::new(batches, schema.clone());
    let create = &grammar::parse("CREATE GRAPH g FROM '<frame>' UNDIRECTED;").unwrap()[0];
    let out = s.create_graph_from_batches(create, &mut reader).unwrap();
    let Output::Status(created) = &out[0] else {
        panic!("a status line first");
    };
    assert!(
        created.starts_with("created graph g: 3 vertices, 3 edges, undirected"),
        "{created}"
    );
    let out = s.execute_text("RUN wcc ON g;").unwrap();
    let Some(Output::Rows { table, .. }) = out.first() else {
        panic!("wcc gives rows");
    };
    assert_eq!(table.num_rows(), 3);

    let not_create = &grammar::parse("SHOW GRAPHS;").unwrap()[0];
    let mut reader = RecordBatchIterator::new(Vec::new(), schema);
    assert!(s
        .create_graph_from_batches(not_create, &mut reader)
        .is_err());
}

#[test]
fn errors_say_what_kind_of_fault_they_are() {
    use engine::ErrorKind;

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut s = Session::open(&data, false).unwrap();
    let kind = |s: &mut Session, text: &str| match s.execute_text(text) {
        Err(e) => e.kind,
        Ok(_) => panic!("{text} should fail"),
    };
    assert_eq!(kind(&mut s, "RUN bfs ON"), ErrorKind::Syntax);
    assert_eq!(kind(&mut s, "RUN bfs ON nosuch FROM 1;"), ErrorKind::Plan);
    assert_eq!(kind(&mut s, "SET threads = 0;"), ErrorKind::Plan);
    let missing = dir.path().join("missing.txt");
    assert_eq!(
        kind(
            &mut s,
            &format!("CREATE GRAPH g FROM '{}';", missing.display())
        ),
        ErrorKind::Storage
    );
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "1 2\n3\n").unwrap();
    assert_eq!(
        kind(&mut s, &format!("CREATE GRAPH g FROM '{}';", bad.display())),
        ErrorKind::Input
    );
    let mut reader = Session::open(&data, true).unwrap();
    assert_eq!(kind(&mut reader, "DROP GRAPH g;"), ErrorKind::ReadOnly);
}
