//! Telling an input's format when the statement does not name it: by the file's first bytes
//! where they are unambiguous (Parquet's `PAR1`, the `%%MatrixMarket` banner, also inside
//! gzip or zstd), otherwise by its name with any `.gz`/`.zst` suffix removed.

use std::io::Read;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::input::{open_input, open_text};
use super::mtx::has_banner;
use super::InputFormat;

/// The format of `path`: sniffed from a regular file's content, else guessed from its name.
/// Never fails: an unreadable file is reported by the import itself.
pub fn detect_format(path: &Path) -> InputFormat {
    sniff(path).unwrap_or_else(|| by_name(path))
}

/// The name without a compression suffix, lower case.
fn plain_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    for suffix in [".gz", ".gzip", ".zst", ".zstd"] {
        if let Some(stem) = name.strip_suffix(suffix) {
            return stem.to_string();
        }
    }
    name
}

/// True when the name says tab-separated (`.tsv`, `.tab`, also compressed).
pub(crate) fn is_tab_separated_name(path: &Path) -> bool {
    let name = plain_name(path);
    name.ends_with(".tsv") || name.ends_with(".tab")
}

fn by_name(path: &Path) -> InputFormat {
    let name = plain_name(path);
    if name.ends_with(".properties") || path.is_dir() {
        InputFormat::Graphalytics
    } else if name.ends_with(".csv") || is_tab_separated_name(path) {
        InputFormat::Csv
    } else if name.ends_with(".parquet") || name.ends_with(".pq") {
        InputFormat::Parquet
    } else if name.ends_with(".mtx") {
        InputFormat::MatrixMarket
    } else {
        InputFormat::Edgelist
    }
}

/// The format the first bytes of a regular file prove, if any. Streams (FIFOs) are not
/// sniffed: what is read from them is gone.
fn sniff(path: &Path) -> Option<InputFormat> {
    // stat, not open: opening a FIFO's read end would let its writer start, and closing it
    // again would break the writer's pipe.
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let never = AtomicBool::new(false);
    let mut raw = open_input(path, &never).ok()?;
    let mut magic = [0u8; 4];
    if raw.read_exact(&mut magic).is_ok() && &magic == b"PAR1" {
        return Some(InputFormat::Parquet);
    }
    let mut head = Vec::with_capacity(64);
    open_text(path, &never)
        .ok()?
        .take(64)
        .read_to_end(&mut head)
        .ok()?;
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    has_banner(head).then_some(InputFormat::MatrixMarket)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_without_compression_suffixes_decide() {
        for (name, f) in [
            ("a.csv", InputFormat::Csv),
            ("a.CSV.gz", InputFormat::Csv),
            ("a.tsv.zst", InputFormat::Csv),
            ("a.parquet", InputFormat::Parquet),
            ("a.mtx.gz", InputFormat::MatrixMarket),
            ("a.properties", InputFormat::Graphalytics),
            ("a.txt.gz", InputFormat::Edgelist),
            ("edges", InputFormat::Edgelist),
        ] {
            assert_eq!(by_name(Path::new(name)), f, "{name}");
        }
    }

    #[test]
    fn content_beats_the_name() {
        let d = tempfile::tempdir().unwrap();
        let m = d.path().join("graph.txt");
        std::fs::write(
            &m,
            "\u{feff}%%MatrixMarket matrix coordinate pattern general\n",
        )
        .unwrap();
        assert_eq!(detect_format(&m), InputFormat::MatrixMarket);
        let p = d.path().join("graph.csv");
        std::fs::write(&p, b"PAR1....").unwrap();
        assert_eq!(detect_format(&p), InputFormat::Parquet);
    }
}
