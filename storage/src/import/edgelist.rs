//! Plain edge lists (`src dst [weight]`, whitespace separated, `#`/`%` comments, blank lines,
//! CRLF) and vertex files (one id per line), plus the token parsers every text format shares.
//! Every error names `path:line`.

use std::path::Path;

use super::chunks::LineChunks;
use super::input::for_each_line;
use super::keys::integer_key;
use super::parallel::{read_parallel, Failure, LineResult, CHUNK_BYTES};
use super::EdgeSink;
use crate::error::{Result, StoreError};

pub(crate) fn input_err(path: &Path, line: u64, message: impl Into<String>) -> StoreError {
    StoreError::Input {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

pub(crate) fn show(tok: &[u8]) -> String {
    match std::str::from_utf8(tok) {
        Ok(s) if s.chars().count() > 40 => format!("`{}…`", s.chars().take(40).collect::<String>()),
        Ok(s) => format!("`{s}`"),
        Err(_) => "binary data (not UTF-8 text)".into(),
    }
}

/// Parses an unsigned 64-bit vertex id.
#[inline]
pub(crate) fn parse_id(tok: &[u8], path: &Path, line: u64) -> Result<u64> {
    let mut v: u64 = 0;
    if tok.is_empty() {
        return Err(input_err(path, line, "empty vertex id"));
    }
    for &c in tok {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return Err(
                if tok[0] == b'-' && tok.len() > 1 && tok[1..].iter().all(u8::is_ascii_digit) {
                    input_err(path, line, format!("negative vertex id {}", show(tok)))
                } else {
                    input_err(
                        path,
                        line,
                        format!("{} is not an unsigned integer vertex id", show(tok)),
                    )
                },
            );
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(d as u64))
            .ok_or_else(|| {
                input_err(
                    path,
                    line,
                    format!("vertex id {} is larger than 2^64-1", show(tok)),
                )
            })?;
    }
    Ok(v)
}

/// Checks a weight: finite (negative weights import; the algorithms that need non-negative
/// ones refuse the graph when run).
pub(crate) fn check_weight(
    w: f64,
    shown: &dyn Fn() -> String,
    path: &Path,
    line: u64,
) -> Result<f64> {
    if w.is_nan() {
        return Err(input_err(path, line, format!("weight {} is NaN", shown())));
    }
    if w.is_infinite() {
        return Err(input_err(
            path,
            line,
            format!("weight {} is infinite", shown()),
        ));
    }
    Ok(w)
}

/// Parses an `f64` weight.
#[inline]
pub(crate) fn parse_weight(tok: &[u8], path: &Path, line: u64) -> Result<f64> {
    let s = std::str::from_utf8(tok).map_err(|_| {
        input_err(
            path,
            line,
            "binary data (not UTF-8 text) where a weight belongs",
        )
    })?;
    let w: f64 = s.parse().map_err(|_| {
        input_err(
            path,
            line,
            format!("{} is not a number (weight)", show(tok)),
        )
    })?;
    check_weight(w, &|| show(tok), path, line)
}

/// The line without leading whitespace, or `None` for a blank or comment line.
#[inline]
pub(crate) fn content(l: &[u8]) -> Option<&[u8]> {
    let start = l.iter().position(|c| !c.is_ascii_whitespace())?;
    let l = &l[start..];
    (l[0] != b'#' && l[0] != b'%').then_some(l)
}

/// The most columns a text edge line may have.
pub(crate) const MAX_COLS: usize = 16;

/// Reads an edge list into the sink: lines of `src dst` followed by up to `max_cols - 2` more
/// columns; the weight (when `weight_col` is given) is column `weight_col` (0-based). Integer
/// keys are parsed in chunks on the import's threads; string keys, whose interner gives ids in
/// first-seen order, line by line.
pub(crate) fn read_edgelist(
    path: &Path,
    weight_col: Option<usize>,
    max_cols: usize,
    sink: &mut EdgeSink<'_>,
) -> Result<()> {
    if let Some(explicit) = sink.integer_keys() {
        let parse = |line: u64, l: &[u8]| -> LineResult {
            let mut not_integer = false;
            let key = |tok: &[u8], column: &dyn Fn() -> String| match integer_key(
                explicit, tok, path, line, column,
            )? {
                Some(v) => Ok(v),
                None => {
                    not_integer = true;
                    Err(StoreError::Cancelled)
                }
            };
            edge_fields(path, line, l, weight_col, max_cols, key).map_err(|e| {
                if not_integer {
                    Failure::NotInteger
                } else {
                    Failure::Line(e)
                }
            })
        };
        let chunks = LineChunks::open(path, sink.cancel, CHUNK_BYTES)?;
        return read_parallel(chunks, None, path, sink, &parse, &|e| e);
    }
    let cancel = sink.cancel;
    for_each_line(path, cancel, |line, l, n| {
        sink.bytes_read += n as u64;
        sink.lines += 1;
        let outcome = match edge_fields(path, line, l, weight_col, max_cols, |tok, column| {
            sink.key(tok, path, line, column)
        }) {
            Ok(Some((src, dst, weight))) => sink.edge(src, dst, weight, path, line),
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        sink.line_outcome(outcome)
    })
}

/// Parses one edge-list line: `(src, dst, weight)`, or `None` for a blank or comment line.
/// `key` reads a vertex key (given the column's name for errors).
#[inline]
fn edge_fields(
    path: &Path,
    line: u64,
    l: &[u8],
    weight_col: Option<usize>,
    max_cols: usize,
    mut key: impl FnMut(&[u8], &dyn Fn() -> String) -> Result<u64>,
) -> Result<Option<(u64, u64, f64)>> {
    let Some(l) = content(l) else {
        return Ok(None);
    };
    let mut arr: [&[u8]; MAX_COLS] = [&[]; MAX_COLS];
    let mut count = 0usize;
    for t in l
        .split(|c| c.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
    {
        if count < MAX_COLS {
            arr[count] = t;
        }
        count += 1;
    }
    let local = &arr[..count.min(MAX_COLS)];
    if count < 2 || count > max_cols {
        let expected = if max_cols == 3 {
            "`src dst` or `src dst weight`".to_string()
        } else {
            format!("2 to {max_cols} columns")
        };
        let found = count;
        return Err(input_err(
            path,
            line,
            format!("expected {expected}, found {found} columns"),
        ));
    }
    let src = key(local[0], &|| "column 1 (src)".into())?;
    let dst = key(local[1], &|| "column 2 (dst)".into())?;
    let weight = match weight_col {
        Some(c) => match local.get(c) {
            Some(w) => parse_weight(w, path, line)?,
            None => {
                return Err(input_err(
                    path,
                    line,
                    "the graph is WEIGHTED but this line has no weight column",
                ))
            }
        },
        None => 0.0,
    };
    Ok(Some((src, dst, weight)))
}

/// Reads a vertex file into the sink: one key per line (the first column; more columns are
/// vertex properties and ignored). With integer keys returns the ids ascending and distinct;
/// with string keys the sink's interner holds them.
pub(crate) fn read_vertex_file(path: &Path, sink: &mut EdgeSink<'_>) -> Result<Option<Vec<u64>>> {
    let mut ids = Vec::new();
    let mut sorted = true;
    let strings = sink.string_keys();
    let cancel = sink.cancel;
    for_each_line(path, cancel, |line, l, n| {
        sink.bytes_read += n as u64;
        let Some(l) = content(l) else {
            return Ok(());
        };
        let tok = l
            .split(|c| c.is_ascii_whitespace())
            .find(|t| !t.is_empty())
            .unwrap_or(l);
        let id = sink.key(tok, path, line, &|| "column 1 (vertex)".into())?;
        if !strings {
            if ids.last().is_some_and(|&p| p >= id) {
                sorted = false;
            }
            ids.push(id);
        }
        Ok(())
    })?;
    if strings {
        return Ok(None);
    }
    if !sorted {
        ids.sort_unstable();
        ids.dedup();
    }
    Ok(Some(ids))
}
