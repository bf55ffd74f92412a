//! Corruption detection through the real binary: a flipped byte in the superblock or section
//! table, or a truncated file, is refused when the graph is opened; a flipped edge-block byte is
//! named by VERIFY GRAPH and stops a run instead of giving wrong results.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

use common::text;

fn frontier(data: &Path, statements: &str) -> Output {
    common::csv(data, statements)
}

/// Imports a small graph and returns the data directory and the graph's file.
fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let edges = dir.join("e.txt");
    let mut s = String::new();
    for v in 0..3000u64 {
        for k in 1..=3 {
            s.push_str(&format!("{v} {}\n", (v * 7 + k * 13) % 3000));
        }
    }
    std::fs::write(&edges, s).unwrap();
    let data = dir.join("data");
    let out = frontier(
        &data,
        &format!("CREATE GRAPH g FROM '{}';", edges.display()),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file = std::fs::read_dir(data.join("graphs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    (data, file)
}

fn flip(file: &Path, offset: usize) -> Vec<u8> {
    let original = std::fs::read(file).unwrap();
    let mut bytes = original.clone();
    bytes[offset] ^= 0x10;
    std::fs::write(file, &bytes).unwrap();
    original
}

#[test]
fn flipped_superblock_and_section_table_bytes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (data, file) = setup(dir.path());
    // Magic, version, flags, counts, every byte of the section table, and the checksum.
    let offsets: Vec<usize> = (0..48)
        .step_by(5)
        .chain((48..48 + 8 * 32).step_by(7))
        .chain([4092, 4095])
        .collect();
    for offset in offsets {
        let original = flip(&file, offset);
        for stmt in [
            "RUN degree ON g;",
            "SET cache = '64KB'; RUN bfs ON g FROM 0;",
            "DESCRIBE GRAPH g;",
        ] {
            let out = frontier(&data, stmt);
            let err = text(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(1),
                "byte {offset}, {stmt}: accepted"
            );
            assert!(err.contains("corrupt graph file"), "byte {offset}: {err}");
            assert!(
                err.contains(&file.display().to_string()),
                "byte {offset}: {err}"
            );
        }
        std::fs::write(&file, original).unwrap();
    }
    assert!(frontier(&data, "RUN degree ON g;").status.success());
}

#[test]
fn a_truncated_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (data, file) = setup(dir.path());
    let len = std::fs::metadata(&file).unwrap().len();
    for cut in [len - 1, len - 4096, len / 2, 100] {
        let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        f.set_len(cut).unwrap();
        let out = frontier(&data, "RUN degree ON g;");
        assert_eq!(out.status.code(), Some(1), "cut at {cut}: accepted");
        assert!(
            text(&out.stderr).contains("corrupt graph file"),
            "{}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_flipped_edge_block_is_named_and_never_computed_from() {
    let dir = tempfile::tempdir().unwrap();
    let (data, file) = setup(dir.path());
    // Find the out-edge section (kind 3) in the section table and flip a byte in its middle.
    let bytes = std::fs::read(&file).unwrap();
    let count = u32::from_le_bytes(bytes[40..44].try_into().unwrap()) as usize;
    let (offset, length) = (0..count)
        .map(|i| 48 + i * 32)
        .find(|&e| u32::from_le_bytes(bytes[e..e + 4].try_into().unwrap()) == 3)
        .map(|e| {
            let off = u64::from_le_bytes(bytes[e + 8..e + 16].try_into().unwrap()) as usize;
            let len = u64::from_le_bytes(bytes[e + 16..e + 24].try_into().unwrap()) as usize;
            (off, len)
        })
        .expect("an out-edge section");
    let block = (offset + length / 2) / 4096;
    flip(&file, block * 4096 + 100);
    let out = frontier(&data, "VERIFY GRAPH g;");
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("block {block}")), "{err}");
    for stmt in ["RUN wcc ON g;", "SET cache = '64KB'; RUN wcc ON g;"] {
        let out = frontier(&data, stmt);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{stmt} computed from a corrupt block"
        );
        assert!(
            text(&out.stderr).contains("corrupt"),
            "{}",
            text(&out.stderr)
        );
    }
}
