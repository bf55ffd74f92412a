//! Writing into a FIFO, a character device or an open descriptor in place.
//!
//! Such a target cannot be replaced whole, so rows reach it as they are written; a run that
//! fails part-way leaves what was already written there, as `> /dev/stdout` in a shell would.
//! A FIFO that nobody reads is refused at once rather than waited for: opening it for writing
//! would block until a reader comes, beyond the reach of Ctrl-C.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::SinkError;

/// Buffer size of the writer: the same as a replaced file's.
const BUFFER_BYTES: usize = 1 << 20;

/// A buffered writer appending to a special file in place.
#[derive(Debug)]
pub struct StreamFile {
    file: BufWriter<File>,
    dest: PathBuf,
    written: u64,
}

impl StreamFile {
    /// Opens `dest` for appending, without creating it. A FIFO with no reader is an error that
    /// says to start the reader first.
    pub fn open(dest: &Path) -> Result<StreamFile, SinkError> {
        let file = OpenOptions::new()
            .append(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(dest)
            .map_err(|source| match source.raw_os_error() {
                Some(libc::ENXIO) => SinkError::BadPath {
                    path: dest.to_path_buf(),
                    reason: "it is a FIFO that no process is reading; start the reader \
                             (for example `cat` on it) first"
                        .into(),
                },
                _ => SinkError::Io {
                    path: dest.to_path_buf(),
                    source,
                },
            })?;
        // Non-blocking was only for the open: writes wait for a slow reader.
        set_blocking(&file).map_err(|source| SinkError::Io {
            path: dest.to_path_buf(),
            source,
        })?;
        Ok(StreamFile {
            file: BufWriter::with_capacity(BUFFER_BYTES, file),
            dest: dest.to_path_buf(),
            written: 0,
        })
    }

    /// The path written.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Flushes what is buffered; returns the bytes written.
    pub fn finish(mut self) -> Result<u64, SinkError> {
        self.file.flush().map_err(|source| SinkError::Io {
            path: self.dest.clone(),
            source,
        })?;
        Ok(self.written)
    }
}

/// Clears `O_NONBLOCK` on `file`.
fn set_blocking(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function borrows open; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl Write for StreamFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}
