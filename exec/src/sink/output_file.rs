//! The file a sink writes: replaced whole by rename, or streamed into in place, as the
//! [`Destination`] decided.

use std::io::{self, Write};
use std::path::Path;

use super::destination::{Destination, WriteMode};
use super::stream_file::StreamFile;
use super::{AtomicFile, SinkError};

/// A buffered writer to a [`Destination`].
#[derive(Debug)]
pub enum OutputFile {
    Replace(AtomicFile),
    Stream(StreamFile),
}

impl OutputFile {
    /// Opens `dest` the way its mode says.
    pub fn open(dest: &Destination) -> Result<OutputFile, SinkError> {
        Ok(match dest.mode() {
            WriteMode::Replace => OutputFile::Replace(AtomicFile::create(dest.target())?),
            WriteMode::Stream => OutputFile::Stream(StreamFile::open(dest.target())?),
        })
    }

    /// The path written (errors name it).
    pub fn dest(&self) -> &Path {
        match self {
            OutputFile::Replace(f) => f.dest(),
            OutputFile::Stream(f) => f.dest(),
        }
    }

    /// Makes the output final: renames a replaced file into place, flushes a stream. Returns
    /// the bytes written.
    pub fn commit(self) -> Result<u64, SinkError> {
        match self {
            OutputFile::Replace(f) => f.commit(),
            OutputFile::Stream(f) => f.finish(),
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            OutputFile::Replace(f) => f.write(buf),
            OutputFile::Stream(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            OutputFile::Replace(f) => f.flush(),
            OutputFile::Stream(f) => f.flush(),
        }
    }
}
