//! Cutting a text input into chunks of whole lines, so that workers can parse them apart.
//!
//! A chunk starts at a line start and carries the number of its first line, so an error found
//! in it still names the right line. Reads go through [`open_text`] (decompression, cancellable
//! reads); the reader checks the cancel flag before each chunk, since a decompressor can make
//! many chunks out of one read.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::input::{open_text, read_error, too_long, MAX_LINE};
use crate::error::{Result, StoreError};

/// Whole lines of the input (the last one may lack its line break at the end of the input).
pub(crate) struct Chunk {
    pub(crate) bytes: Vec<u8>,
    /// The 1-based number of the chunk's first line.
    pub(crate) first_line: u64,
}

/// Reads an input as consecutive chunks of about `target` bytes of whole lines.
pub(crate) struct LineChunks<'a> {
    r: Box<dyn BufRead + Send + 'a>,
    path: PathBuf,
    cancel: &'a AtomicBool,
    /// Bytes read after the last complete line handed out.
    carry: Vec<u8>,
    next_line: u64,
    target: usize,
    done: bool,
}

impl<'a> LineChunks<'a> {
    pub(crate) fn open(path: &Path, cancel: &'a AtomicBool, target: usize) -> Result<Self> {
        Ok(LineChunks {
            r: open_text(path, cancel)?,
            path: path.to_path_buf(),
            cancel,
            carry: Vec::new(),
            next_line: 1,
            target: target.max(1),
            done: false,
        })
    }

    /// The next chunk, or `None` at the end of the input. A line longer than [`MAX_LINE`]
    /// without a break is an error naming it (the caller reports it after the lines before).
    pub(crate) fn next_chunk(&mut self) -> Result<Option<Chunk>> {
        if self.done {
            return Ok(None);
        }
        if self.cancel.load(Ordering::Relaxed) {
            return Err(StoreError::Cancelled);
        }
        loop {
            let avail = self.r.fill_buf().map_err(|e| read_error(&self.path, e))?;
            if avail.is_empty() {
                self.done = true;
                if self.carry.is_empty() {
                    return Ok(None);
                }
                let end = self.carry.len();
                return Ok(Some(self.cut(end)));
            }
            // Up to the target, then up to the end of the line the target falls in.
            let take = if self.carry.len() < self.target {
                avail.len().min(self.target - self.carry.len())
            } else {
                memchr::memchr(b'\n', avail).map_or(avail.len(), |i| i + 1)
            };
            self.carry.extend_from_slice(&avail[..take]);
            self.r.consume(take);
            if self.carry.len() < self.target {
                continue;
            }
            match memchr::memrchr(b'\n', &self.carry) {
                Some(i) => return Ok(Some(self.cut(i + 1))),
                None if self.carry.len() > MAX_LINE + 1 => {
                    self.done = true;
                    return Err(too_long(&self.path, self.next_line));
                }
                None => {}
            }
        }
    }

    /// Hands out `carry[..end]` (whole lines), keeping the rest.
    fn cut(&mut self, end: usize) -> Chunk {
        let mut rest = Vec::with_capacity(self.target + 1);
        rest.extend_from_slice(&self.carry[end..]);
        let mut bytes = std::mem::replace(&mut self.carry, rest);
        bytes.truncate(end);
        let first_line = self.next_line;
        self.next_line += memchr::memchr_iter(b'\n', &bytes).count() as u64;
        Chunk { bytes, first_line }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn chunks(bytes: &[u8], target: usize) -> Result<Vec<(u64, Vec<u8>)>> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        let cancel = AtomicBool::new(false);
        let mut r = LineChunks::open(f.path(), &cancel, target)?;
        let mut out = Vec::new();
        while let Some(c) = r.next_chunk()? {
            out.push((c.first_line, c.bytes));
        }
        Ok(out)
    }

    #[test]
    fn chunks_are_whole_lines_numbered_from_their_first() {
        let text = b"1 2\n# c\n\n3 4\r\n5 6\n7 8";
        for target in 1..text.len() + 2 {
            let got = chunks(text, target).unwrap();
            let joined: Vec<u8> = got.iter().flat_map(|c| c.1.clone()).collect();
            assert_eq!(joined, text, "target {target}");
            let mut line = 1;
            for (first, bytes) in &got {
                assert_eq!(*first, line, "target {target}");
                assert!(bytes.ends_with(b"\n") || bytes.ends_with(b"7 8"));
                line += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
            }
        }
    }

    #[test]
    fn a_line_without_end_is_an_error_naming_it() {
        let mut bytes = b"1 2\n3 4\n".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', MAX_LINE + 5));
        let e = chunks(&bytes, 4096).unwrap_err().to_string();
        assert!(e.contains(":3: line longer than 1 MiB"), "{e}");
    }

    #[test]
    fn a_set_cancel_flag_stops_the_chunks() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(b"1 2\n").unwrap();
        let cancel = AtomicBool::new(false);
        let mut r = LineChunks::open(f.path(), &cancel, 1).unwrap();
        cancel.store(true, Ordering::Relaxed);
        assert!(matches!(r.next_chunk(), Err(StoreError::Cancelled)));
    }
}
