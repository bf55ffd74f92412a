//! Matrix Market coordinate files (the SuiteSparse collection's format): a
//! `%%MatrixMarket matrix coordinate <field> <symmetry>` banner, `%` comments, a size line
//! `rows cols entries` (not an edge) and one `row col [value]` entry per line, 1-based.
//!
//! Row and column numbers are the vertex ids, and every vertex `1..=max(rows, cols)` exists
//! (empty rows are isolated vertices). A `symmetric` matrix stores one triangle: it imports
//! as an undirected graph unless DIRECTED is asked for, which adds the mirrored arcs.

use std::path::Path;

use super::edgelist::{input_err, parse_id, parse_weight};
use super::input::for_each_line;
use super::{check_cancel, EdgeSink};
use crate::error::Result;

/// The value each entry carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Pattern,
    Valued,
}

/// What the banner says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Banner {
    field: Field,
    symmetric: bool,
}

/// True when `head` (the file's first bytes or line) starts with a Matrix Market banner.
pub(crate) fn has_banner(head: &[u8]) -> bool {
    head.len() >= 14 && head[..14].eq_ignore_ascii_case(b"%%MatrixMarket")
}

fn parse_banner(l: &[u8], path: &Path) -> Result<Banner> {
    let text = String::from_utf8_lossy(l).to_ascii_lowercase();
    let words: Vec<&str> = text.split_ascii_whitespace().collect();
    let bad = |m: String| input_err(path, 1, m);
    if !has_banner(l) {
        return Err(bad(
            "expected the banner `%%MatrixMarket matrix coordinate <field> <symmetry>`".into(),
        ));
    }
    match words.as_slice() {
        [_, "matrix", "coordinate", field, symmetry] => {
            let field = match *field {
                "pattern" => Field::Pattern,
                "integer" | "real" => Field::Valued,
                f => {
                    return Err(bad(format!(
                        "field `{f}` is not supported (pattern, integer or real)"
                    )))
                }
            };
            let symmetric = match *symmetry {
                "general" => false,
                "symmetric" => true,
                s => {
                    return Err(bad(format!(
                        "symmetry `{s}` is not supported (general or symmetric)"
                    )))
                }
            };
            Ok(Banner { field, symmetric })
        }
        [_, "matrix", "array", ..] => Err(bad(
            "a dense `array` matrix is not a graph; convert it to `coordinate` form".into(),
        )),
        _ => Err(bad(format!(
            "expected `%%MatrixMarket matrix coordinate <field> <symmetry>`, found `{}`",
            text.trim()
        ))),
    }
}

/// Where the reader is in the file.
enum State {
    Banner,
    Size,
    Entries {
        rows: u64,
        cols: u64,
        announced: u64,
        seen: u64,
    },
}

/// Reads a Matrix Market file into the sink. `directed` is what the statement asked for
/// (`None`: undirected for a symmetric matrix, directed otherwise); the sink's direction is
/// set from it once the banner is read.
pub(crate) fn read_mtx(
    path: &Path,
    directed: Option<bool>,
    weighted: bool,
    sink: &mut EdgeSink<'_>,
) -> Result<()> {
    let cancel = sink.cancel;
    let mut banner = Banner {
        field: Field::Pattern,
        symmetric: false,
    };
    let mut state = State::Banner;
    for_each_line(path, cancel, |line, l, n| {
        sink.bytes_read += n as u64;
        sink.lines += 1;
        if let State::Banner = state {
            banner = parse_banner(l, path)?;
            if weighted && banner.field == Field::Pattern {
                return Err(input_err(
                    path,
                    line,
                    "a `pattern` matrix has no values; drop WEIGHTED",
                ));
            }
            sink.directed = directed.unwrap_or(!banner.symmetric);
            state = State::Size;
            return Ok(());
        }
        let start = l.iter().position(|c| !c.is_ascii_whitespace());
        let Some(start) = start else {
            return Ok(());
        };
        let l = &l[start..];
        if l[0] == b'%' {
            return Ok(());
        }
        let toks: Vec<&[u8]> = l
            .split(|c| c.is_ascii_whitespace())
            .filter(|t| !t.is_empty())
            .take(5)
            .collect();
        match &mut state {
            State::Banner => unreachable!("handled above"),
            State::Size => {
                let [r, c, e] = toks[..] else {
                    return Err(input_err(
                        path,
                        line,
                        "expected the size line `rows cols entries`",
                    ));
                };
                let rows = parse_id(r, path, line)?;
                let cols = parse_id(c, path, line)?;
                let announced = parse_id(e, path, line)?;
                let n = rows.max(cols);
                if n > u32::MAX as u64 {
                    return Err(input_err(
                        path,
                        line,
                        format!(
                            "the size line declares {n} rows or columns; frontier supports at \
                             most 2^32-1 (4294967295) vertices"
                        ),
                    ));
                }
                sink.check_declared_vertices(n, path, line, "the size line")?;
                for v in 1..=n {
                    sink.vertex(v);
                    if v % (1 << 20) == 0 {
                        check_cancel(sink.cancel)?;
                    }
                }
                state = State::Entries {
                    rows,
                    cols,
                    announced,
                    seen: 0,
                };
                Ok(())
            }
            State::Entries {
                rows,
                cols,
                announced,
                seen,
            } => {
                *seen += 1;
                if *seen > *announced {
                    return Err(input_err(
                        path,
                        line,
                        format!("more entries than the {announced} the size line announced"),
                    ));
                }
                let outcome = entry(path, line, &toks, banner, (*rows, *cols), weighted, sink);
                sink.line_outcome(outcome)
            }
        }
    })?;
    match state {
        State::Banner => Err(input_err(path, 0, "empty file: no Matrix Market banner")),
        State::Size => Err(input_err(path, 0, "no size line `rows cols entries`")),
        State::Entries {
            announced, seen, ..
        } if seen < announced => Err(input_err(
            path,
            0,
            format!("the size line announced {announced} entries, the file has {seen}"),
        )),
        State::Entries { .. } => Ok(()),
    }
}

/// One `row col [value]` entry into the sink (and its mirror for DIRECTED symmetric).
fn entry(
    path: &Path,
    line: u64,
    toks: &[&[u8]],
    banner: Banner,
    (rows, cols): (u64, u64),
    weighted: bool,
    sink: &mut EdgeSink<'_>,
) -> Result<()> {
    let want = if banner.field == Field::Pattern { 2 } else { 3 };
    if toks.len() != want {
        return Err(input_err(
            path,
            line,
            format!(
                "expected {} per entry, found {} columns",
                if want == 2 {
                    "`row col`"
                } else {
                    "`row col value`"
                },
                toks.len()
            ),
        ));
    }
    let i = parse_id(toks[0], path, line)?;
    let j = parse_id(toks[1], path, line)?;
    for (what, v, max) in [("row", i, rows), ("column", j, cols)] {
        if v == 0 || v > max {
            return Err(input_err(
                path,
                line,
                format!("{what} {v} is outside 1..={max} (the size line)"),
            ));
        }
    }
    let w = if weighted {
        parse_weight(toks[2], path, line)?
    } else {
        0.0
    };
    sink.edge(i, j, w, path, line)?;
    if banner.symmetric && sink.directed && i != j {
        sink.edge(j, i, w, path, line)?;
    }
    Ok(())
}
