//! Reading input files so that memory stays bounded and Ctrl-C always works.
//!
//! A FIFO, terminal or device may block a reader forever (a FIFO with no writer does, in
//! `open(2)` already); a file without newlines would make a line reader buffer all of it.
//! [`open_input`] opens without blocking and returns a reader that waits for bytes with
//! `poll(2)` in short slices, checking the cancel flag between them; [`for_each_line`] caps a
//! line at [`MAX_LINE`] bytes.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Result, StoreError};

/// The longest input line accepted, in bytes (without its line break).
pub(crate) const MAX_LINE: usize = 1 << 20;

/// How long one wait for bytes lasts before the cancel flag is checked again.
const POLL_SLICE_MS: libc::c_int = 100;

/// Bytes read from the file at a time.
const READ_BUFFER: usize = 1 << 20;

/// The marker inside the `io::Error` a cancelled read returns, so callers can tell a
/// cancellation from a failed read whatever readers (decompressors) sit in between.
#[derive(Debug)]
struct ReadCancelled;

impl std::fmt::Display for ReadCancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("cancelled")
    }
}

impl std::error::Error for ReadCancelled {}

/// Turns a read error on `path` into a [`StoreError`], keeping cancellation apart.
pub(crate) fn read_error(path: &Path, e: io::Error) -> StoreError {
    if e.get_ref().is_some_and(|inner| inner.is::<ReadCancelled>()) {
        StoreError::Cancelled
    } else {
        StoreError::io(path, e)
    }
}

/// A file whose reads give up when the cancel flag is set. Reads of anything but a regular
/// file (FIFO, device, socket) wait for bytes in slices of [`POLL_SLICE_MS`].
pub(crate) struct CancellableFile<'a> {
    file: File,
    /// Not a regular file: wait with `poll(2)` before each read.
    waits: bool,
    cancel: &'a AtomicBool,
}

impl CancellableFile<'_> {
    /// True when the file is a regular file (seekable, of known length).
    pub(crate) fn is_regular(&self) -> bool {
        !self.waits
    }

    /// The open file, for readers that need a regular file (Parquet).
    pub(crate) fn into_file(self) -> File {
        self.file
    }

    fn wait_readable(&self) -> io::Result<()> {
        let mut pfd = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(io::Error::other(ReadCancelled));
            }
            // SAFETY: `pfd` is a valid pollfd for the duration of the call and nfds is 1.
            let ready = unsafe { libc::poll(&mut pfd, 1, POLL_SLICE_MS) };
            if ready > 0 {
                return Ok(());
            }
            if ready < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

impl Read for CancellableFile<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(io::Error::other(ReadCancelled));
            }
            if self.waits {
                self.wait_readable()?;
            }
            match self.file.read(buf) {
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || e.kind() == io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }
}

/// Opens `path` for reading without blocking in `open(2)` (a FIFO with no writer would).
pub(crate) fn open_input<'a>(path: &Path, cancel: &'a AtomicBool) -> Result<CancellableFile<'a>> {
    if cancel.load(Ordering::Relaxed) {
        return Err(StoreError::Cancelled);
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| StoreError::io(path, e))?;
    let meta = file.metadata().map_err(|e| StoreError::io(path, e))?;
    if meta.is_dir() {
        return Err(StoreError::Input {
            path: path.to_path_buf(),
            line: 0,
            message: "is a directory, not a file".into(),
        });
    }
    Ok(CancellableFile {
        file,
        waits: !meta.is_file(),
        cancel,
    })
}

/// How a text input is compressed, told by its first bytes (not its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The compression whose magic number `head` starts with.
    pub(crate) fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// Opens `path` as buffered text input, decompressing gzip and zstd (told by their magic
/// bytes) as it reads.
pub(crate) fn open_text<'a>(
    path: &Path,
    cancel: &'a AtomicBool,
) -> Result<Box<dyn BufRead + Send + 'a>> {
    let file = open_input(path, cancel)?;
    let mut raw = BufReader::with_capacity(READ_BUFFER, file);
    let head = raw.fill_buf().map_err(|e| read_error(path, e))?;
    Ok(match Compression::sniff(head) {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            READ_BUFFER,
            flate2::bufread::MultiGzDecoder::new(raw),
        )),
        Compression::Zstd => Box::new(BufReader::with_capacity(
            READ_BUFFER,
            zstd::stream::read::Decoder::with_buffer(raw).map_err(|e| read_error(path, e))?,
        )),
    })
}

pub(crate) fn too_long(path: &Path, line: u64) -> StoreError {
    StoreError::Input {
        path: path.to_path_buf(),
        line,
        message: format!(
            "line longer than 1 MiB ({MAX_LINE} bytes): not a text edge list? \
             Check the file and its FORMAT (binary and compressed files need their own format)"
        ),
    }
}

/// How many lines [`for_each_line`] reads between two looks at the cancel flag.
const LINES_BETWEEN_CANCEL_CHECKS: u64 = 1 << 16;

/// Calls `f(line_number, line, bytes_consumed)` for each line of `path`, without its
/// `\n`/`\r\n`. A line longer than [`MAX_LINE`] stops the read with an error naming it.
pub(crate) fn for_each_line(
    path: &Path,
    cancel: &AtomicBool,
    mut f: impl FnMut(u64, &[u8], usize) -> Result<()>,
) -> Result<()> {
    let mut r = open_text(path, cancel)?;
    // A line split across reads is assembled here; a line inside one read is not copied.
    let mut partial: Vec<u8> = Vec::new();
    let mut line = 0u64;
    loop {
        // The file's reads check the flag, but a decompressor can turn one read into gigabytes
        // of lines (a compressed file of newlines): check it here too, every so many lines.
        if line.is_multiple_of(LINES_BETWEEN_CANCEL_CHECKS) && cancel.load(Ordering::Relaxed) {
            return Err(StoreError::Cancelled);
        }
        let avail = r.fill_buf().map_err(|e| read_error(path, e))?;
        if avail.is_empty() {
            if !partial.is_empty() {
                line += 1;
                f(line, text_of(line, &partial), partial.len())?;
            }
            return Ok(());
        }
        match memchr::memchr(b'\n', avail) {
            Some(i) if partial.is_empty() => {
                line += 1;
                if i > MAX_LINE + 1 {
                    return Err(too_long(path, line));
                }
                f(line, text_of(line, &avail[..i]), i + 1)?;
                r.consume(i + 1);
            }
            Some(i) => {
                line += 1;
                if partial.len() + i > MAX_LINE + 1 {
                    return Err(too_long(path, line));
                }
                partial.extend_from_slice(&avail[..i]);
                r.consume(i + 1);
                f(line, text_of(line, &partial), partial.len() + 1)?;
                partial.clear();
            }
            None => {
                if partial.len() + avail.len() > MAX_LINE + 1 {
                    return Err(too_long(path, line + 1));
                }
                partial.extend_from_slice(avail);
                let n = avail.len();
                r.consume(n);
            }
        }
    }
}

/// The UTF-8 byte-order mark some editors put first in a text file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The text of line `line`: without a trailing `\r` (of a `\r\n` break), and for the first
/// line without a byte-order mark.
#[inline]
pub(crate) fn text_of(line: u64, l: &[u8]) -> &[u8] {
    let l = trim_break(l);
    if line == 1 {
        l.strip_prefix(BOM).unwrap_or(l)
    } else {
        l
    }
}

/// The line without a trailing `\r` (of a `\r\n` break).
#[inline]
fn trim_break(l: &[u8]) -> &[u8] {
    match l {
        [rest @ .., b'\r'] => rest,
        _ => l,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines(bytes: &[u8]) -> Result<Vec<(u64, Vec<u8>, usize)>> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        let cancel = AtomicBool::new(false);
        let mut out = Vec::new();
        for_each_line(f.path(), &cancel, |n, l, c| {
            out.push((n, l.to_vec(), c));
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn lines_split_on_breaks_and_count_bytes() {
        let got = lines(b"1 2\r\n\n3 4").unwrap();
        assert_eq!(
            got,
            vec![
                (1, b"1 2".to_vec(), 5),
                (2, b"".to_vec(), 1),
                (3, b"3 4".to_vec(), 3)
            ]
        );
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let got = lines(b"\xEF\xBB\xBF1 2\n").unwrap();
        assert_eq!(got, vec![(1, b"1 2".to_vec(), 7)]);
    }

    #[test]
    fn gzip_and_zstd_are_told_by_their_bytes() {
        let text = b"1 2\n3 4\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text).unwrap();
        let gz = gz.finish().unwrap();
        let zst = zstd::stream::encode_all(&text[..], 1).unwrap();
        for bytes in [gz, zst] {
            let got: Vec<Vec<u8>> = lines(&bytes).unwrap().into_iter().map(|l| l.1).collect();
            assert_eq!(got, vec![b"1 2".to_vec(), b"3 4".to_vec()]);
        }
    }

    #[test]
    fn a_line_across_reads_is_whole() {
        let long = vec![b'7'; MAX_LINE - 1];
        let mut bytes = b"1 2\n".to_vec();
        bytes.extend_from_slice(&long);
        bytes.extend_from_slice(b"\n3 4\n");
        let got = lines(&bytes).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[1].1, long);
        assert_eq!(got[2].1, b"3 4");
    }

    #[test]
    fn an_overlong_line_is_an_error_naming_it() {
        let mut bytes = b"1 2\n".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', MAX_LINE + 5));
        let e = lines(&bytes).unwrap_err().to_string();
        assert!(e.contains(":2: line longer than 1 MiB"), "{e}");
    }

    #[test]
    fn cancel_stops_a_decompressed_stream_of_lines() {
        // 4 Mi newlines compress to a few hundred bytes: the file is read once, and the lines
        // come from the decompressor alone.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bomb.txt.zst");
        let newlines = vec![b'\n'; 4 << 20];
        std::fs::write(&path, zstd::encode_all(&newlines[..], 1).unwrap()).unwrap();
        let cancel = AtomicBool::new(false);
        let mut seen = 0u64;
        let e = for_each_line(&path, &cancel, |n, _, _| {
            seen = n;
            if n == 10 {
                cancel.store(true, Ordering::Relaxed);
            }
            Ok(())
        })
        .unwrap_err();
        assert!(matches!(e, StoreError::Cancelled), "{e}");
        assert!(
            seen <= 10 + LINES_BETWEEN_CANCEL_CHECKS,
            "read {seen} lines after the cancel"
        );
    }

    #[test]
    fn a_set_cancel_flag_stops_the_read() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let cancel = AtomicBool::new(true);
        let e = for_each_line(f.path(), &cancel, |_, _, _| Ok(())).unwrap_err();
        assert!(matches!(e, StoreError::Cancelled), "{e}");
    }
}
