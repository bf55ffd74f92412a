//! Parsing a text input on every worker of the import's pool (`SET threads`).
//!
//! The calling thread cuts the input into chunks of whole lines ([`LineChunks`]: reading and
//! decompressing stay sequential), workers parse the chunks into edges, and the calling thread
//! feeds each chunk's edges to the sink in input order. So the sink sees what a line-by-line
//! read gives it: the same edges in the same order, the same skipped lines quoted, and the
//! same first error, named by its line. Chunks in flight are bounded by a share of
//! `import_memory`, so the parse buffers stay inside the budget.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use super::chunks::{Chunk, LineChunks};
use super::input::{text_of, too_long, MAX_LINE};
use super::report::SKIPPED_EXAMPLES;
use super::EdgeSink;
use crate::error::{Result, StoreError};

/// Bytes of input per chunk: enough to make a task's overhead vanish, small enough that the
/// chunks in flight cost little memory.
pub(crate) const CHUNK_BYTES: usize = 256 << 10;

/// What a line can fail with.
pub(crate) enum Failure {
    /// A malformed line (an input error): skipped under `ON ERROR skip`.
    Line(StoreError),
    /// `KEYS auto` met a key that is not an integer: the input is read again with string keys.
    NotInteger,
    /// An error no policy skips (an overlong line).
    Fatal(StoreError),
}

/// One line's edge: `(src, dst, weight)` with integer keys, or `None` for a line without one
/// (blank, comment).
pub(crate) type LineResult = std::result::Result<Option<(u64, u64, f64)>, Failure>;

/// An edge parsed by a worker; `line` counts from the chunk's first line.
struct Parsed {
    src: u64,
    dst: u64,
    weight: f64,
    line: u32,
}

/// What a worker made of one chunk.
struct ParsedChunk {
    first_line: u64,
    bytes: u64,
    lines: u64,
    edges: Vec<Parsed>,
    /// Failed lines in input order, each with the number of edges before it in the chunk.
    /// Under `ON ERROR skip` only the first [`SKIPPED_EXAMPLES`] are kept (no report quotes
    /// more); without it parsing stops at the first.
    failures: Vec<(usize, Failure)>,
    /// Skipped lines past the quoted ones.
    unquoted: u64,
}

/// Worst-case memory of one chunk in flight: its bytes, and its edges when every line is an
/// edge of the shortest form (`1 2\n`).
const CHUNK_COST: u64 = (CHUNK_BYTES + CHUNK_BYTES / 4 * std::mem::size_of::<Parsed>()) as u64;

/// Reads the first lines of `chunks` one by one with `head` (given each line's number and
/// text) until it says the line is the first for the parallel parser (returns true; that
/// line is not consumed). Returns the rest of that chunk, or `None` at the end of the input.
pub(crate) fn read_head(
    chunks: &mut LineChunks<'_>,
    path: &Path,
    sink: &mut EdgeSink<'_>,
    mut head: impl FnMut(&mut EdgeSink<'_>, u64, &[u8]) -> Result<bool>,
) -> Result<Option<Chunk>> {
    while let Some(chunk) = chunks.next_chunk()? {
        let bytes = &chunk.bytes;
        let (mut pos, mut line) = (0, chunk.first_line);
        while pos < bytes.len() {
            let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i);
            let raw = &bytes[pos..end];
            if raw.len() > MAX_LINE + 1 {
                return Err(too_long(path, line));
            }
            if head(sink, line, text_of(line, raw))? {
                return Ok(Some(Chunk {
                    bytes: bytes[pos..].to_vec(),
                    first_line: line,
                }));
            }
            let next = (end + 1).min(bytes.len());
            sink.bytes_read += (next - pos) as u64;
            sink.lines += 1;
            pos = next;
            line += 1;
        }
    }
    Ok(None)
}

/// Parses the rest of `chunks`, after `first` (a chunk [`read_head`] left), line by line with
/// `parse_line` (called with the line's number and text, without its break) on the sink's
/// pool, feeding the edges to `sink` in input order. `edge_error` dresses the errors the sink
/// finds in an edge (a vertex missing from the vertex file) as the format dresses its own.
pub(crate) fn read_parallel(
    chunks: LineChunks<'_>,
    first: Option<Chunk>,
    path: &Path,
    sink: &mut EdgeSink<'_>,
    parse_line: &(dyn Fn(u64, &[u8]) -> LineResult + Sync),
    edge_error: &dyn Fn(StoreError) -> StoreError,
) -> Result<()> {
    let pool = sink.pool.clone();
    let in_flight = (sink.memory_budget() / 16 / CHUNK_COST)
        .clamp(2, 2 * pool.current_num_threads() as u64 + 2) as usize;
    let skip = sink.skips_errors();
    let stop = AtomicBool::new(false);
    let feeder = Feeder { path, edge_error };
    pool.in_place_scope(|scope| {
        let outcome = drive(chunks, first, in_flight, sink, &feeder, |chunk: Chunk| {
            let (tx, rx) = mpsc::sync_channel(1);
            let stop = &stop;
            scope.spawn(move |_| {
                let parsed = (!stop.load(Ordering::Relaxed))
                    .then(|| parse_chunk(path, chunk, skip, parse_line));
                let _ = tx.send(parsed);
            });
            rx
        });
        // Chunks still queued are not parsed: the scope waits for them before it returns.
        stop.store(true, Ordering::Relaxed);
        outcome
    })
}

/// A chunk being parsed, or the read error met after the chunks before it.
enum Pending {
    Parsing(mpsc::Receiver<Option<ParsedChunk>>),
    Failed(StoreError),
}

/// Reads chunks, hands each to `spawn` (keeping `in_flight` of them ahead) and feeds the
/// results to the sink in order.
fn drive(
    mut chunks: LineChunks<'_>,
    first: Option<Chunk>,
    in_flight: usize,
    sink: &mut EdgeSink<'_>,
    feeder: &Feeder<'_>,
    mut spawn: impl FnMut(Chunk) -> mpsc::Receiver<Option<ParsedChunk>>,
) -> Result<()> {
    let mut queue: VecDeque<Pending> = VecDeque::with_capacity(in_flight);
    queue.extend(first.map(|c| Pending::Parsing(spawn(c))));
    let mut reading = true;
    loop {
        while reading && queue.len() < in_flight {
            match chunks.next_chunk() {
                Ok(Some(chunk)) => queue.push_back(Pending::Parsing(spawn(chunk))),
                Ok(None) => reading = false,
                Err(e) => {
                    reading = false;
                    queue.push_back(Pending::Failed(e));
                }
            }
        }
        match queue.pop_front() {
            None => return Ok(()),
            Some(Pending::Failed(e)) => return Err(e),
            Some(Pending::Parsing(rx)) => match rx.recv() {
                Ok(Some(parsed)) => feeder.feed(sink, parsed)?,
                _ => {
                    return Err(StoreError::Other(
                        "import: a parse worker stopped without its result".into(),
                    ))
                }
            },
        }
    }
}

/// Parses every line of `chunk` (on a worker).
fn parse_chunk(
    path: &Path,
    chunk: Chunk,
    skip: bool,
    parse_line: &(dyn Fn(u64, &[u8]) -> LineResult + Sync),
) -> ParsedChunk {
    let bytes = &chunk.bytes;
    let mut out = ParsedChunk {
        first_line: chunk.first_line,
        bytes: bytes.len() as u64,
        lines: 0,
        edges: Vec::with_capacity(bytes.len() / 16),
        failures: Vec::new(),
        unquoted: 0,
    };
    let mut line = chunk.first_line;
    let mut pos = 0;
    while pos < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i);
        let raw = &bytes[pos..end];
        pos = end + 1;
        if raw.len() > MAX_LINE + 1 {
            let at = out.edges.len();
            out.failures
                .push((at, Failure::Fatal(too_long(path, line))));
            break;
        }
        match parse_line(line, text_of(line, raw)) {
            Ok(Some((src, dst, weight))) => out.edges.push(Parsed {
                src,
                dst,
                weight,
                line: (line - chunk.first_line) as u32,
            }),
            Ok(None) => {}
            Err(Failure::Line(e)) if skip => {
                if out.failures.len() < SKIPPED_EXAMPLES {
                    let at = out.edges.len();
                    out.failures.push((at, Failure::Line(e)));
                } else {
                    out.unquoted += 1;
                }
            }
            Err(f) => {
                let at = out.edges.len();
                out.failures.push((at, f));
                break;
            }
        }
        line += 1;
    }
    out.lines = line - chunk.first_line;
    out
}

/// What feeding needs besides the sink.
struct Feeder<'a> {
    path: &'a Path,
    edge_error: &'a dyn Fn(StoreError) -> StoreError,
}

impl Feeder<'_> {
    /// Feeds one parsed chunk to the sink, failures in their places among the edges.
    fn feed(&self, sink: &mut EdgeSink<'_>, c: ParsedChunk) -> Result<()> {
        sink.bytes_read += c.bytes;
        let mut failures = c.failures.into_iter().peekable();
        for (i, e) in c.edges.iter().enumerate() {
            while let Some((_, f)) = failures.next_if(|(at, _)| *at == i) {
                fail(sink, f)?;
            }
            let line = c.first_line + e.line as u64;
            let outcome = sink
                .edge(e.src, e.dst, e.weight, self.path, line)
                .map_err(self.edge_error);
            sink.line_outcome(outcome)?;
        }
        for (_, f) in failures {
            fail(sink, f)?;
        }
        sink.skipped_unquoted(c.unquoted);
        sink.lines += c.lines;
        Ok(())
    }
}

fn fail(sink: &mut EdgeSink<'_>, f: Failure) -> Result<()> {
    match f {
        Failure::Line(e) => sink.line_outcome(Err(e)),
        Failure::NotInteger => Err(sink.restart_with_strings()),
        Failure::Fatal(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(text: &[u8], target: usize, skip: bool) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.el");
        std::fs::write(&path, text).unwrap();
        let cancel = AtomicBool::new(false);
        let mut chunks = LineChunks::open(&path, &cancel, target).unwrap();
        let parse = |line: u64, l: &[u8]| -> LineResult {
            match l {
                b"" => Ok(None),
                b"bad" => Err(Failure::Line(super::super::edgelist::input_err(
                    Path::new("x.el"),
                    line,
                    "bad",
                ))),
                _ => Ok(Some((line, l.len() as u64, 0.0))),
            }
        };
        let mut out = Vec::new();
        while let Some(c) = chunks.next_chunk().unwrap() {
            let p = parse_chunk(&path, c, skip, &parse);
            let mut fails = p.failures.iter().peekable();
            for (i, e) in p.edges.iter().enumerate() {
                while let Some((_, Failure::Line(f))) = fails.next_if(|(at, _)| *at == i) {
                    out.push(f.to_string());
                }
                out.push(format!(
                    "{}:{}:{}",
                    p.first_line + e.line as u64,
                    e.src,
                    e.dst
                ));
            }
            for (_, f) in fails {
                if let Failure::Line(f) = f {
                    out.push(f.to_string());
                }
            }
            if p.unquoted > 0 {
                out.push(format!("+{}", p.unquoted));
            }
        }
        out
    }

    #[test]
    fn lines_keep_their_numbers_and_order_in_any_chunking() {
        let text = b"\xEF\xBB\xBFab\nbad\n\ncd\r\nefg\nbad\nh";
        let whole = parse_all(text, 1 << 20, true);
        assert_eq!(
            whole,
            vec![
                "1:1:2",
                "x.el:2: bad",
                "4:4:2",
                "5:5:3",
                "x.el:6: bad",
                "7:7:1"
            ]
        );
        for target in 1..text.len() {
            assert_eq!(parse_all(text, target, true), whole, "target {target}");
        }
        // Without skipping, a chunk stops at its first failure.
        let stop = parse_all(text, 1 << 20, false);
        assert_eq!(stop, vec!["1:1:2", "x.el:2: bad"]);
    }

    #[test]
    fn only_the_first_failures_of_a_chunk_are_quoted() {
        let text = b"bad\n".repeat(SKIPPED_EXAMPLES + 3);
        let got = parse_all(&text, 1 << 20, true);
        assert_eq!(got.len(), SKIPPED_EXAMPLES + 1);
        assert_eq!(got.last().unwrap(), "+3");
    }

    #[test]
    fn an_overlong_line_in_a_chunk_is_fatal_and_named() {
        let mut text = b"1 2\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE + 5));
        text.extend_from_slice(b"\n3 4\n");
        let chunk = Chunk {
            bytes: text,
            first_line: 10,
        };
        let p = parse_chunk(Path::new("x.el"), chunk, true, &|_, _| {
            Ok(Some((1, 2, 0.0)))
        });
        assert_eq!(p.edges.len(), 1);
        match &p.failures[..] {
            [(1, Failure::Fatal(e))] => {
                assert!(e.to_string().contains(":11: line longer"), "{e}")
            }
            _ => panic!("expected one fatal failure"),
        }
    }
}
