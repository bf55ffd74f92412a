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
