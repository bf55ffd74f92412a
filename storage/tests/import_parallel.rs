//! Text inputs parsed in chunks on several threads import as a line-by-line read would: errors
//! name the right line however deep in the file, skipped lines are counted and the first ones
//! quoted in input order, and a key that is not an integer far into the file still turns the
//! import to string keys. The inputs span many chunks.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use common::*;
use storage::import::{ImportRequest, InputFormat};

/// Lines of filler edges: enough bytes for many parse chunks.
const LINES: u64 = 400_000;

/// An input of `LINES` lines, `bad(line)` giving the lines to replace (1-based).
fn input(format: InputFormat, bad: impl Fn(u64) -> Option<&'static str>) -> String {
    let mut s = String::new();
    if format == InputFormat::Csv {
        s.push_str("src,dst\n");
    }
    let first = if format == InputFormat::Csv { 2 } else { 1 };
    for line in first..=LINES {
        match bad(line) {
            Some(b) => s.push_str(b),
            // A comment (CSV: a blank line) with a CRLF break.
            None if line % 1000 == 0 && format == InputFormat::Csv => s.push_str(" \r"),
            None if line % 1000 == 0 => s.push_str("# a comment\r"),
            None if format == InputFormat::Csv => {
                write!(s, "{},{}", line % 977, line % 1009).unwrap()
            }
            None => write!(s, "{} {}", line % 977, line % 1009).unwrap(),
        }
        s.push('\n');
    }
    s
}

fn req(dir: &Path, format: InputFormat, text: &str, options: &[(&str, &str)]) -> ImportRequest {
    let src = dir.join(if format == InputFormat::Csv {
        "e.csv"
    } else {
        "e.el"
    });
    std::fs::write(&src, text).unwrap();
    let mut r = request(&src, format, &dir.join("g"), &dir.join("tmp"));
    r.options = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    r
}

#[test]
fn a_bad_line_deep_in_the_file_is_named_by_its_number() {
    for format in [InputFormat::Edgelist, InputFormat::Csv] {
        let dir = tempfile::tempdir().unwrap();
        let text = input(format, |l| (l == 345_678 || l == 399_000).then_some("7 x"));
        let r = req(dir.path(), format, &text, &[("keys", "integer")]);
        let e = run(&r).unwrap_err().to_string();
        assert!(e.contains(":345678:"), "{format:?}: {e}");
    }
}

#[test]
fn skipped_lines_are_counted_and_the_first_quoted_in_order() {
    let bad_lines = [3, 70_001, 150_002, 150_003, 260_000 + 1, 333_333, 399_999];
    for format in [InputFormat::Edgelist, InputFormat::Csv] {
        let dir = tempfile::tempdir().unwrap();
        let text = input(format, |l| bad_lines.contains(&l).then_some("1 -2"));
        let r = req(
            dir.path(),
            format,
            &text,
            &[("keys", "integer"), ("on_error", "skip")],
        );
        let s = run(&r).unwrap();
        assert_eq!(s.report.lines_read, LINES, "{format:?}");
        assert_eq!(s.report.lines_skipped, bad_lines.len() as u64, "{format:?}");
        let quoted: Vec<String> = bad_lines[..5].iter().map(|l| format!(":{l}:")).collect();
        assert_eq!(s.report.skipped_examples.len(), 5, "{format:?}");
        for (example, want) in s.report.skipped_examples.iter().zip(&quoted) {
            assert!(
                example.contains(want),
                "{format:?}: {example} is not line {want}"
            );
        }
        let comments = LINES / 1000;
        let header = u64::from(format == InputFormat::Csv);
        assert_eq!(
            s.report.edges_kept + s.duplicates_dropped,
            LINES - header - comments - bad_lines.len() as u64,
            "{format:?}"
        );
    }
}

#[test]
fn a_string_key_far_into_the_file_turns_the_import_to_string_keys() {
    for format in [InputFormat::Edgelist, InputFormat::Csv] {
        let dir = tempfile::tempdir().unwrap();
        let alice = if format == InputFormat::Csv {
            "alice,1"
        } else {
            "alice 1"
        };
        let text = input(format, |l| (l == 388_888).then_some(alice));
        let r = req(dir.path(), format, &text, &[]);
        let s = run(&r).unwrap();
        assert!(s.string_keys, "{format:?}");
        // 0..1009 as strings, and alice.
        assert_eq!(s.vertices, 1010, "{format:?}");
    }
}

#[test]
fn compressed_inputs_are_cut_into_chunks_after_decompression() {
    use std::io::Write as _;
    let text = input(InputFormat::Edgelist, |l| (l == 2).then_some("1 2 3 4"));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(text.as_bytes(), 1).unwrap();
    for (name, bytes) in [("e.el.gz", gz), ("e.el.zst", zst)] {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join(name);
        std::fs::write(&src, &bytes).unwrap();
        let mut r = request(
            &src,
            InputFormat::Edgelist,
            &dir.path().join("g"),
            &dir.path().join("tmp"),
        );
        r.options = vec![("on_error".into(), "skip".into())];
        let s = run(&r).unwrap();
        assert_eq!(s.report.lines_read, LINES, "{name}");
        assert_eq!(s.report.lines_skipped, 1, "{name}");
        assert!(s.report.skipped_examples[0].contains(":2:"), "{name}");
        assert_eq!(s.bytes_read, text.len() as u64, "{name}");
    }
}

/// A weighted input of many duplicates (about 120 of each pair, both ways round), self-loops
/// among them, with weights whose sums depend on the order they are added in.
fn duplicated_edges() -> Vec<(u64, u64, f64)> {
    let weights = [1e16, 1.0, -1e16, 0.1, 3.0, 1e-3];
    (0..300_000u64)
        .map(|i| {
            let (a, b) = ((i * 7919) % 61, (i * 104_729) % 41);
            let (a, b) = if i % 2 == 0 { (a, b) } else { (b, a) };
            (a, b, weights[(i % 6) as usize] * (1 + i % 5) as f64)
        })
        .collect()
}

#[test]
fn a_merge_held_in_memory_imports_as_one_merged_from_disk() {
    let edges = duplicated_edges();
    for directed in [false, true] {
        for policy in ["first", "sum"] {
            let mut got = Vec::new();
            // Enough memory to sort every edge at once (the merge runs on the threads, many
            // rounds of pieces), and too little (sorted runs merged from disk, edge by edge).
            for budget in [64u64 << 20, 1 << 20] {
                let dir = tempfile::tempdir().unwrap();
                let src = dir.path().join("e.el");
                write_edgelist(&src, &edges, true);
                let mut r = request(
                    &src,
                    InputFormat::Edgelist,
                    &dir.path().join("g"),
                    &dir.path().join("tmp"),
                );
                r.directed = Some(directed);
                r.weighted = true;
                r.memory_budget = budget;
                r.options = vec![("duplicates".to_string(), policy.to_string())];
                let s = run(&r).unwrap();
                assert_eq!(s.runs_spilled > 0, budget < 64 << 20, "{budget}");
                let store = storage::blockfile::memory::MemoryStore::load(&r.dest).unwrap();
                let back = read_back(&store);
                if policy == "first" {
                    let (out, inn, n) = expected(&edges, directed, true);
                    assert_eq!(back.1, out, "directed {directed}, budget {budget}");
                    if directed {
                        assert_eq!(back.2, inn);
                    }
                    assert_eq!(s.edges, n);
                }
                got.push((
                    back,
                    s.edges,
                    s.duplicates_dropped,
                    s.report.self_loop_count,
                ));
            }
            assert!(
                got[0] == got[1],
                "directed {directed}, {policy}: in memory and from disk differ"
            );
        }
    }
}
