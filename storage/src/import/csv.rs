//! CSV edge files, parsed by hand (no arrow-csv in storage): an optional header row, a
//! configurable delimiter, optional `"quoted"` fields with `""` escapes, and `src`/`dst`/
//! `weight` columns chosen by header name (or 0-based number without a header).

use std::path::Path;

use super::chunks::LineChunks;
use super::edgelist::{input_err, parse_id, parse_weight};
use super::input::for_each_line;
use super::keys::integer_key;
use super::parallel::{read_head, read_parallel, Failure, LineResult, CHUNK_BYTES};
use super::EdgeSink;
use crate::error::{Result, StoreError};

/// CSV settings from the import options.
#[derive(Debug, Clone)]
pub struct CsvOptions {
    pub delimiter: u8,
    /// `None`: detect it (a first line whose `src`/`dst` fields are not ids is a header).
    pub header: Option<bool>,
    pub src: Option<String>,
    pub dst: Option<String>,
    pub weight: Option<String>,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            delimiter: b',',
            header: None,
            src: None,
            dst: None,
            weight: None,
        }
    }
}

/// Splits one CSV line into fields (quotes removed, `""` unescaped) into `out`.
/// Returns false when a quote is left open.
fn split_fields(l: &[u8], delim: u8, out: &mut Vec<Vec<u8>>) -> bool {
    out.clear();
    let mut field = Vec::new();
    let mut i = 0;
    let mut quoted = false;
    let mut at_start = true;
    while i < l.len() {
        let c = l[i];
        if quoted {
            if c == b'"' {
                if l.get(i + 1) == Some(&b'"') {
                    field.push(b'"');
                    i += 1;
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
        } else if c == b'"' && at_start {
            quoted = true;
            at_start = false;
        } else if c == delim {
            out.push(std::mem::take(&mut field));
            at_start = true;
        } else {
            field.push(c);
            if !c.is_ascii_whitespace() {
                at_start = false;
            }
        }
        i += 1;
    }
    out.push(field);
    for f in out.iter_mut() {
        let s = f
            .iter()
            .position(|c| !c.is_ascii_whitespace())
            .unwrap_or(f.len());
        let e = f
            .iter()
            .rposition(|c| !c.is_ascii_whitespace())
            .map_or(s, |e| e + 1);
        if s > 0 || e < f.len() {
            *f = f[s..e.max(s)].to_vec();
        }
    }
    !quoted
}

/// The `src`, `dst` and (weighted) `weight` column numbers.
type Columns = (usize, usize, Option<usize>);

/// The columns chosen by 0-based number (`src 0`), for a file without a header.
fn numbered_columns(opts: &CsvOptions, weighted: bool, path: &Path, line: u64) -> Result<Columns> {
    let num = |o: &Option<String>, d: usize, what: &str| -> Result<usize> {
        match o {
            None => Ok(d),
            Some(s) => s.trim().parse().map_err(|_| {
                input_err(
                    path,
                    line,
                    format!(
                        "without a header, `{what}` must be a 0-based column number, found `{s}`"
                    ),
                )
            }),
        }
    };
    Ok((
        num(&opts.src, 0, "src")?,
        num(&opts.dst, 1, "dst")?,
        if weighted {
            Some(num(&opts.weight, 2, "weight")?)
        } else {
            None
        },
    ))
}

/// The columns chosen by header name (or position when no name is given).
fn named_columns(
    opts: &CsvOptions,
    weighted: bool,
    header: &[Vec<u8>],
    path: &Path,
    line: u64,
) -> Result<Columns> {
    let names: Vec<String> = header
        .iter()
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let find = |o: &Option<String>, d: usize, what: &str| -> Result<usize> {
        match o {
            None if d < names.len() => Ok(d),
            None => Err(input_err(
                path,
                line,
                format!(
                    "the header has {} columns, no column for `{what}`",
                    names.len()
                ),
            )),
            Some(want) => names.iter().position(|n| n == want).ok_or_else(|| {
                input_err(
                    path,
                    line,
                    format!("no column `{want}` in the header ({})", names.join(", ")),
                )
            }),
        }
    };
    Ok((
        find(&opts.src, 0, "src")?,
        find(&opts.dst, 1, "dst")?,
        if weighted {
            Some(find(&opts.weight, 2, "weight")?)
        } else {
            None
        },
    ))
}

/// Column names that say a first line is a header rather than an edge between two vertices
/// so named (compared case-insensitively).
const KEY_COLUMN_NAMES: &[&str] = &[
    "src",
    "dst",
    "source",
    "target",
    "from",
    "to",
    "u",
    "v",
    "node1",
    "node2",
    "node_1",
    "node_2",
    "src_id",
    "dst_id",
    "source_id",
    "target_id",
    "from_id",
    "to_id",
    "id1",
    "id2",
    "start",
    "end",
    "head",
    "tail",
    "vertex1",
    "vertex2",
];

/// Whether a first line is a header when the options do not say: it is when columns are
/// named, when its weight field is not a number, or when its `src`/`dst` fields are not vertex
/// ids — with keys that may be strings (`KEYS auto|string`), when they are typical column names
/// (`src`, `target`, ...), since `alice,bob` is as good an edge as a header.
fn looks_like_header(
    first: &[Vec<u8>],
    opts: &CsvOptions,
    weighted: bool,
    integer_keys: bool,
    path: &Path,
) -> bool {
    let column = |o: &Option<String>, d: usize| match o {
        None => Some(d),
        Some(s) => s.trim().parse().ok(),
    };
    let (Some(s), Some(d)) = (column(&opts.src, 0), column(&opts.dst, 1)) else {
        return true;
    };
    if weighted {
        let w = column(&opts.weight, 2);
        let number =
            |f: &Vec<u8>| std::str::from_utf8(f).is_ok_and(|t| t.trim().parse::<f64>().is_ok());
        if w.and_then(|w| first.get(w)).is_some_and(|f| !number(f)) {
            return true;
        }
    }
    if integer_keys {
        let is_id = |i: usize| first.get(i).is_some_and(|f| parse_id(f, path, 1).is_ok());
        return !(is_id(s) && is_id(d));
    }
    let is_name = |i: usize| {
        first.get(i).is_some_and(|f| {
            KEY_COLUMN_NAMES
                .iter()
                .any(|n| n.as_bytes().eq_ignore_ascii_case(f))
        })
    };
    is_name(s) && is_name(d)
}

/// How errors name a key column: by number, and by its header name when there is one.
fn column_name(names: &Option<Vec<String>>, i: usize, role: &str) -> String {
    match names.as_ref().and_then(|n| n.get(i)) {
        Some(n) => format!("column {} (`{n}`)", i + 1),
        None => format!("column {} ({role})", i + 1),
    }
}

/// Adds what was assumed about the header to an input error, so a wrong guess is plain.
fn with_assumption(e: StoreError, detected: Option<bool>) -> StoreError {
    match (e, detected) {
        (
            StoreError::Input {
                path,
                line,
                message,
            },
            Some(header),
        ) => StoreError::Input {
            path,
            line,
            message: format!(
                "{message} ({})",
                if header {
                    "the first line was taken as a header; add `header false` if it is data"
                } else {
                    "no header was detected; add `header true` if the first line is one"
                }
            ),
        },
        (e, _) => e,
    }
}

/// What the first lines said: the columns, whether the header was detected, its names.
#[derive(Default)]
struct Head {
    cols: Option<Columns>,
    /// `Some(header?)` when the header was detected rather than given.
    detected: Option<bool>,
    /// The header's column names, for errors.
    names: Option<Vec<String>>,
}

/// What one line is, as far as [`Head::step`] is concerned.
enum Step {
    /// A blank line, a skipped bad line, or the header: nothing more to do.
    Done,
    /// A data row, split into the fields.
    Data(Columns),
}

impl Head {
    /// Splits line `line` into `fields` and, on the first row, settles the header and the
    /// columns.
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        sink: &mut EdgeSink<'_>,
        opts: &CsvOptions,
        weighted: bool,
        path: &Path,
        line: u64,
        l: &[u8],
        fields: &mut Vec<Vec<u8>>,
    ) -> Result<Step> {
        if l.iter().all(|c| c.is_ascii_whitespace()) {
            return Ok(Step::Done);
        }
        if !split_fields(l, opts.delimiter, fields) {
            let e = with_assumption(
                input_err(path, line, "unterminated quoted field"),
                self.detected,
            );
            sink.line_outcome(Err(e))?;
            return Ok(Step::Done);
        }
        if let Some(c) = self.cols {
            return Ok(Step::Data(c));
        }
        let header = match opts.header {
            Some(h) => h,
            None => {
                let h =
                    looks_like_header(fields, opts, weighted, sink.integer_keys_required(), path);
                self.detected = Some(h);
                h
            }
        };
        if header {
            self.cols = Some(named_columns(opts, weighted, fields, path, line)?);
            self.names = Some(
                fields
                    .iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect(),
            );
            return Ok(Step::Done);
        }
        let c = numbered_columns(opts, weighted, path, line)?;
        self.cols = Some(c);
        Ok(Step::Data(c))
    }
}

/// The edge of a data row split into `fields`: its weight, then its keys read by `key`
/// (given the column's name for errors).
fn row_edge(
    fields: &[Vec<u8>],
    (s, d, w): Columns,
    names: &Option<Vec<String>>,
    path: &Path,
    line: u64,
    mut key: impl FnMut(&[u8], &dyn Fn() -> String) -> Result<u64>,
) -> Result<(u64, u64, f64)> {
    let need = s.max(d).max(w.unwrap_or(0)) + 1;
    if fields.len() < need {
        return Err(input_err(
            path,
            line,
            format!("expected at least {need} columns, found {}", fields.len()),
        ));
    }
    let weight = match w {
        Some(c) => parse_weight(&fields[c], path, line)?,
        None => 0.0,
    };
    let src = key(&fields[s], &|| column_name(names, s, "src"))?;
    let dst = key(&fields[d], &|| column_name(names, d, "dst"))?;
    Ok((src, dst, weight))
}

/// Reads a CSV edge file into the sink. Integer keys are parsed in chunks on the import's
/// threads once the first row has settled the columns; string keys line by line.
pub(crate) fn read_csv(
    path: &Path,
    opts: &CsvOptions,
    weighted: bool,
    sink: &mut EdgeSink<'_>,
) -> Result<()> {
    let mut head = Head::default();
    let mut fields = Vec::new();
    if let Some(explicit) = sink.integer_keys() {
        let mut chunks = LineChunks::open(path, sink.cancel, CHUNK_BYTES)?;
        let rest = read_head(&mut chunks, path, sink, |sink, line, l| {
            if head.cols.is_some() {
                return Ok(true);
            }
            let step = head.step(sink, opts, weighted, path, line, l, &mut fields)?;
            Ok(matches!(step, Step::Data(_)))
        })?;
        let (Some(rest), Some(cols)) = (rest, head.cols) else {
            return Ok(());
        };
        let Head {
            detected, names, ..
        } = head;
        let parse = |line: u64, l: &[u8]| -> LineResult {
            if l.iter().all(|c| c.is_ascii_whitespace()) {
                return Ok(None);
            }
            let mut fields = Vec::new();
            if !split_fields(l, opts.delimiter, &mut fields) {
                let e = input_err(path, line, "unterminated quoted field");
                return Err(Failure::Line(with_assumption(e, detected)));
            }
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
            row_edge(&fields, cols, &names, path, line, key)
                .map(Some)
                .map_err(|e| {
                    if not_integer {
                        Failure::NotInteger
                    } else {
                        Failure::Line(with_assumption(e, detected))
                    }
                })
        };
        let edge_error = |e| with_assumption(e, detected);
        return read_parallel(chunks, Some(rest), path, sink, &parse, &edge_error);
    }
    let cancel = sink.cancel;
    for_each_line(path, cancel, |line, l, n| {
        sink.bytes_read += n as u64;
        sink.lines += 1;
        let cols = match head.step(sink, opts, weighted, path, line, l, &mut fields)? {
            Step::Done => return Ok(()),
            Step::Data(c) => c,
        };
        let outcome = row_edge(&fields, cols, &head.names, path, line, |tok, column| {
            sink.key(tok, path, line, column)
        })
        .and_then(|(src, dst, weight)| sink.edge(src, dst, weight, path, line))
        .map_err(|e| with_assumption(e, head.detected));
        sink.line_outcome(outcome)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_split() {
        let mut out = Vec::new();
        assert!(split_fields(br#""a,b", 2 ,"x""y""#, b',', &mut out));
        assert_eq!(out, vec![b"a,b".to_vec(), b"2".to_vec(), b"x\"y".to_vec()]);
        assert!(!split_fields(br#""open"#, b',', &mut out));
    }

    #[test]
    fn a_header_is_detected_by_its_id_columns() {
        let o = CsvOptions::default();
        let p = Path::new("x.csv");
        let row = |r: &[&str]| r.iter().map(|f| f.as_bytes().to_vec()).collect::<Vec<_>>();
        for integer_keys in [false, true] {
            let header = |r: &[&str], o: &CsvOptions, weighted| {
                looks_like_header(&row(r), o, weighted, integer_keys, p)
            };
            assert!(header(&["src", "dst"], &o, false));
            assert!(header(&["Source", "Target"], &o, false));
            assert!(!header(&["1", "2", "w"], &o, false));
            assert!(header(&["a", "b", "weight"], &o, true));
            let named = CsvOptions {
                src: Some("from".into()),
                ..CsvOptions::default()
            };
            assert!(header(&["1", "2"], &named, false));
        }
        // `alice,bob` is an edge when keys may be strings, a header when they must be integers.
        assert!(!looks_like_header(
            &row(&["alice", "bob"]),
            &o,
            false,
            false,
            p
        ));
        assert!(looks_like_header(
            &row(&["alice", "bob"]),
            &o,
            false,
            true,
            p
        ));
    }
}
