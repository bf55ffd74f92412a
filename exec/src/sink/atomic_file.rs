//! A file that appears at its final path only when it is complete.
//!
//! Results are written under a temporary name in the destination's own directory (so the final
//! `rename` stays on one file system and is atomic), fsync'd, then renamed over the destination.
//! A reader therefore never sees half a file, and a run that fails — or a sink that is dropped
//! without [`AtomicFile::commit`] — leaves nothing behind: the temporary file is removed.
//! A process killed mid-write cannot remove its temporary file; the next write into the same
//! directory does (see [`temp_name`](super::temp_name)).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::{temp_name, SinkError};

/// Buffer size of the underlying writer: large enough that Parquet pages and CSV lines reach
/// the kernel in few system calls.
const BUFFER_BYTES: usize = 1 << 20;

/// A buffered writer to a temporary file that becomes `dest` on [`commit`](AtomicFile::commit).
#[derive(Debug)]
pub struct AtomicFile {
    /// `None` only after commit has taken it.
    file: Option<BufWriter<File>>,
    temp: PathBuf,
    dest: PathBuf,
    /// Bytes written so far (what the caller handed to `write`).
    written: u64,
}

impl AtomicFile {
    /// Opens a fresh temporary file next to `dest`, first removing temporary files there that
    /// killed processes left.
    ///
    /// Fails, naming `dest`, when its directory does not exist, `dest` is a directory, or the
    /// directory is not writable.
    pub fn create(dest: &Path) -> Result<AtomicFile, SinkError> {
        let file_name = match dest.file_name() {
            Some(name) => name.to_string_lossy().into_owned(),
            None => {
                return Err(SinkError::BadPath {
                    path: dest.to_path_buf(),
                    reason: "the path names no file".into(),
                })
            }
        };
        if dest.is_dir() {
            return Err(SinkError::BadPath {
                path: dest.to_path_buf(),
                reason: "it is a directory".into(),
            });
        }
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(SinkError::BadPath {
                path: dest.to_path_buf(),
                reason: format!("directory '{}' does not exist", dir.display()),
            });
        }
        temp_name::remove_stale(&dir);
        let temp = temp_name::next(&dir, &file_name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(|source| SinkError::Io {
                path: dest.to_path_buf(),
                source,
            })?;
        Ok(AtomicFile {
            file: Some(BufWriter::with_capacity(BUFFER_BYTES, file)),
            temp,
            dest: dest.to_path_buf(),
            written: 0,
        })
    }

    /// The final path.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// The temporary path being written (exposed so tests can check it is cleaned up).
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Flushes, fsyncs and renames the file to its final path; returns the file's size.
    ///
    /// On error the temporary file is removed and the destination is untouched.
    pub fn commit(mut self) -> Result<u64, SinkError> {
        let dest = self.dest.clone();
        let io_err = |source: io::Error| SinkError::Io {
            path: dest.clone(),
            source,
        };
        let writer = self
            .file
            .take()
            .ok_or_else(|| io_err(io::Error::other("file already committed")))?;
        // On any error below, `self` is dropped and Drop removes the temporary file.
        let file = writer.into_inner().map_err(|e| io_err(e.into_error()))?;
        file.sync_all().map_err(io_err)?;
        drop(file);
        // Whatever appeared at the destination while the result was written, only a regular
        // file may be replaced: a rename would turn a FIFO or device node into a plain file.
        match std::fs::symlink_metadata(&self.dest) {
            Ok(m) if !m.file_type().is_file() => {
                return Err(SinkError::BadPath {
                    path: dest.clone(),
                    reason: "it stopped being a regular file while the result was written; \
                             nothing was replaced"
                        .into(),
                })
            }
            _ => {}
        }
        std::fs::rename(&self.temp, &self.dest).map_err(io_err)?;
        // The rename is durable once the directory entry is; failing to sync the directory
        // (some file systems refuse) does not make the file any less complete.
        if let Some(dir) = self.dest.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        // Nothing left to clean up.
        self.temp = PathBuf::new();
        Ok(self.written)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.file.as_mut() {
            Some(f) => {
                let n = f.write(buf)?;
                self.written += n as u64;
                Ok(n)
            }
            None => Err(io::Error::other("file already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Close before removing; a buffered tail is simply discarded.
        if let Some(w) = self.file.take() {
            let (file, _unflushed) = w.into_parts();
            drop(file);
        }
        if !self.temp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}
