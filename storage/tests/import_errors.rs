//! Bad input is refused with an error naming the file and line, and never leaves a graph
//! file or temporary files behind.

mod common;

use std::path::Path;
use std::sync::Arc as StdArc;

use common::*;
use storage::import::InputFormat;
use storage::StoreError;

fn refuse(content: &[u8], weighted: bool, want: &str, line: u64) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("bad.txt");
    std::fs::write(&src, content).unwrap();
    let dest = dir.path().join("g.frontier");
    let tmp = dir.path().join("tmp");
    let mut req = request(&src, InputFormat::Edgelist, &dest, &tmp);
    req.weighted = weighted;
    // Keys that are not integers would otherwise import as string keys.
    req.options = vec![("keys".into(), "integer".into())];
    let err = run(&req).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, StoreError::Input { line: l, .. } if l == line),
        "{content:?}: {msg}"
    );
    assert!(msg.contains(&format!("bad.txt:{line}:")), "{msg}");
    assert!(msg.contains(want), "{content:?}: `{msg}` lacks `{want}`");
    assert!(!dest.exists());
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
}

#[test]
fn bad_edgelists_name_path_and_line() {
    let table: &[(&[u8], bool, &str, u64)] = &[
        (b"1 2\nx 3\n", false, "not an unsigned integer", 2),
        (b"1 2\n\n# c\n1 -2\n", false, "negative vertex id", 4),
        (b"1 18446744073709551616\n", false, "larger than 2^64-1", 1),
        (
            b"1 18446744073709551615\n1 2.5\n",
            false,
            "not an unsigned integer",
            2,
        ),
        (b"1 2 0.5\n3 4\n", true, "no weight column", 2),
        (b"1 2 NaN\n", true, "NaN", 1),
        (b"1 2 inf\n", true, "infinite", 1),
        (b"1 2 heavy\n", true, "not a number", 1),
        (b"1 2\r\n1 2 3 4\r\n", false, "found 4 columns", 2),
        (b"% c\n7\n", false, "found 1 column", 2),
        (b"1 2\n\xff\xfe\x00\x01 2\n", false, "binary data", 2),
        (b"1 2 \xff\n", true, "binary data", 1),
    ];
    for (content, weighted, want, line) in table {
        refuse(content, *weighted, want, *line);
    }
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("nope.txt");
    let req = request(
        &src,
        InputFormat::Edgelist,
        &dir.path().join("g"),
        dir.path(),
    );
    let err = run(&req).unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err}");
    assert!(err.to_string().contains("nope.txt"), "{err}");
}

fn copy_dataset(name: &str, to: &Path) -> std::path::PathBuf {
    let d = to.join(name);
    std::fs::create_dir_all(&d).unwrap();
    for e in std::fs::read_dir(graphalytics_dir().join(name)).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, d.join(p.file_name().unwrap())).unwrap();
    }
    d
}

#[test]
fn graphalytics_errors_name_the_right_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = copy_dataset("test-bfs-directed", dir.path());
    let props = d.join("test-bfs-directed.properties");
    let dest = dir.path().join("g");

    // Contradicting the properties.
    let mut req = request(&props, InputFormat::Graphalytics, &dest, dir.path());
    req.directed = Some(false);
    let err = run(&req).unwrap_err().to_string();
    assert!(
        err.contains("test-bfs-directed.properties") && err.contains("UNDIRECTED"),
        "{err}"
    );
    req.directed = None;
    req.weighted = true;
    let err = run(&req).unwrap_err().to_string();
    assert!(
        err.contains(".properties") && err.contains("WEIGHTED"),
        "{err}"
    );
    req.weighted = false;

    // An edge naming a vertex the .v file lacks.
    let e = d.join("test-bfs-directed.e");
    let mut text = std::fs::read_to_string(&e).unwrap();
    text.push_str("1 77\n");
    std::fs::write(&e, &text).unwrap();
    let line = text.lines().count();
    let err = run(&req).unwrap_err().to_string();
    assert!(
        err.contains(&format!("test-bfs-directed.e:{line}:")),
        "{err}"
    );
    assert!(err.contains("vertex 77 is not in the vertex file"), "{err}");

    // meta.edges no longer matches.
    let text: String = text
        .lines()
        .take(line - 2)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&e, text).unwrap();
    let err = run(&req).unwrap_err().to_string();
    assert!(
        err.contains(".properties") && err.contains("meta.edges = 17"),
        "{err}"
    );
    assert!(!dest.exists());
}

#[test]
fn csv_errors_name_path_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("e.csv");
    let dest = dir.path().join("g");
    std::fs::write(&src, "from;to;w\n1;2;0.5\n\"3\";x;1\n").unwrap();
    let mut req = request(&src, InputFormat::Csv, &dest, dir.path());
    req.options = vec![
        ("delimiter".into(), ";".into()),
        ("keys".into(), "integer".into()),
    ];
    let err = run(&req).unwrap_err().to_string();
    assert!(
        err.contains("e.csv:3:") && err.contains("column 2 (`to`)") && err.contains("`x`"),
        "{err}"
    );
    req.options.push(("src".into(), "source".into()));
    let err = run(&req).unwrap_err().to_string();
    assert!(
        err.contains("e.csv:1:") && err.contains("no column `source`"),
        "{err}"
    );
    req.options = vec![("bogus".into(), "1".into())];
    let err = run(&req).unwrap_err().to_string();
    assert!(err.contains("unknown option `bogus`"), "{err}");
}

#[test]
fn csv_and_parquet_import() {
    use arrow_array::{Float64Array, Int32Array, RecordBatch, UInt64Array};
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("g");
    let csv = dir.path().join("e.csv");
    std::fs::write(&csv, "w,dst,src\n0.5,2,1\n1.5,\"3\",1\n\n2,1,3\n").unwrap();
    let mut req = request(&csv, InputFormat::Csv, &dest, dir.path());
    req.weighted = true;
    req.options = vec![
        ("src".into(), "src".into()),
        ("dst".into(), "dst".into()),
        ("weight".into(), "w".into()),
    ];
    let s = run(&req).unwrap();
    assert_eq!(
        (s.vertices, s.edges, s.directed, s.weighted),
        (3, 3, true, true)
    );

    // Parquet: signed and unsigned id columns, a float weight.
    let pq = dir.path().join("e.parquet");
    let write = |src: Vec<i32>| {
        let n = src.len();
        let batch = RecordBatch::try_from_iter([
            (
                "a",
                StdArc::new(Int32Array::from(src)) as arrow_array::ArrayRef,
            ),
            ("b", StdArc::new(UInt64Array::from(vec![9u64; n])) as _),
            (
                "weight",
                StdArc::new(Float64Array::from(vec![0.25; n])) as _,
            ),
        ])
        .unwrap();
        let f = std::fs::File::create(&pq).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(f, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    };
    write(vec![1, 2, 3]);
    let mut req = request(&pq, InputFormat::Parquet, &dest, dir.path());
    req.weighted = true;
    req.directed = Some(false);
    let s = run(&req).unwrap();
    assert_eq!((s.vertices, s.edges, s.arcs), (4, 3, 6));
    write(vec![1, -2, 3]);
    let err = run(&req).unwrap_err().to_string();
    assert!(
        err.contains("e.parquet:2:") && err.contains("negative vertex id -2"),
        "{err}"
    );
    req.options = vec![("dst".into(), "nope".into())];
    let err = run(&req).unwrap_err().to_string();
    assert!(err.contains("no column `nope`"), "{err}");
}
