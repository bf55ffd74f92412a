//! Where `INTO 'path'` may write, decided before the run starts so that a refused path costs
//! nothing.
//!
//! - An absent path or a regular file is written whole under a temporary name and renamed into
//!   place ([`AtomicFile`](super::AtomicFile)). A symbolic link is followed: the file it points to
//!   is replaced and the link stays.
//! - A FIFO or a character device (`/dev/stdout`, a terminal, `/dev/null`), and the names of
//!   descriptors already open (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`), are
//!   streamed into in place, as `> /dev/stdout` in a shell or DuckDB's `COPY ... TO '/dev/stdout'`
//!   do. Renaming over them would replace the special file by a regular one.
//! - Anything else (a directory, a socket, a block device) is refused.
//! - Every path that resolves (through symbolic links and `..`) to somewhere inside the data
//!   directory is refused: a result written there could replace a graph's block file or the
//!   catalog.

use std::fs::FileType;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::SinkError;

/// What the refusal of a special file tells the user to do.
const WHAT_INTO_WRITES: &str = "INTO writes a regular file (replaced whole when complete) or \
                                streams into a FIFO or character device such as /dev/stdout";

/// How the result reaches the destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Written under a temporary name in the same directory, then renamed over the target.
    Replace,
    /// Opened in place and appended to (FIFOs, character devices, open descriptors).
    Stream,
}

/// A checked output path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The path as written in the statement, for messages.
    given: PathBuf,
    /// The file that is written: absolute with symbolic links followed when it is replaced,
    /// the name as given when it is streamed into.
    target: PathBuf,
    mode: WriteMode,
}

impl Destination {
    /// Checks `path` as an output: what is there now, and that it lies outside `data_dir` (the
    /// directory holding the graphs and the catalog, when there is one to protect).
    pub fn resolve(path: &Path, data_dir: Option<&Path>) -> Result<Destination, SinkError> {
        let bad = |reason: String| SinkError::BadPath {
            path: path.to_path_buf(),
            reason,
        };
        let io_err = |source: io::Error| SinkError::Io {
            path: path.to_path_buf(),
            source,
        };
        let Some(name) = path.file_name() else {
            return Err(bad("the path names no file".into()));
        };
        let (target, mode) = match std::fs::metadata(path) {
            Ok(meta) => {
                let mode = if names_open_descriptor(path) {
                    WriteMode::Stream
                } else {
                    mode_for(meta.file_type()).map_err(|kind| {
                        bad(format!(
                            "it is {kind}; {WHAT_INTO_WRITES}; choose a file path"
                        ))
                    })?
                };
                match mode {
                    WriteMode::Replace => (std::fs::canonicalize(path).map_err(io_err)?, mode),
                    // A pipe behind /proc/self/fd/N has no path to resolve to: open the name.
                    WriteMode::Stream => (path.to_path_buf(), mode),
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Ok(link) = std::fs::read_link(path) {
                    return Err(bad(format!(
                        "it is a symbolic link to '{}', which does not exist",
                        link.display()
                    )));
                }
                let dir = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                let dir = std::fs::canonicalize(dir).map_err(|e| match e.kind() {
                    io::ErrorKind::NotFound => {
                        bad(format!("directory '{}' does not exist", dir.display()))
                    }
                    _ => io_err(e),
                })?;
                if !dir.is_dir() {
                    return Err(bad(format!("'{}' is not a directory", dir.display())));
                }
                (dir.join(name), WriteMode::Replace)
            }
            Err(e) => return Err(io_err(e)),
        };
        if let Some(data) = data_dir {
            let data = std::fs::canonicalize(data).unwrap_or_else(|_| data.to_path_buf());
            let resolved = std::fs::canonicalize(&target).unwrap_or_else(|_| target.clone());
            if resolved.starts_with(&data) {
                return Err(bad(format!(
                    "it is inside the data directory '{}', which holds the graphs and the \
                     catalog; write results somewhere else",
                    data.display()
                )));
            }
        }
        Ok(Destination {
            given: path.to_path_buf(),
            target,
            mode,
        })
    }

    /// The path as the statement wrote it.
    pub fn given(&self) -> &Path {
        &self.given
    }

    /// The file written (see the field).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Replaced by rename, or streamed into in place.
    pub fn mode(&self) -> WriteMode {
        self.mode
    }
}

/// How an existing file of type `t` is written, or what it is when it cannot be.
fn mode_for(t: FileType) -> Result<WriteMode, &'static str> {
    if t.is_file() {
        Ok(WriteMode::Replace)
    } else if t.is_fifo() || t.is_char_device() {
        Ok(WriteMode::Stream)
    } else if t.is_dir() {
        Err("a directory")
    } else if t.is_socket() {
        Err("a socket")
    } else if t.is_block_device() {
        Err("a block device")
    } else {
        Err("not a regular file")
    }
}

/// Whether `path` names a descriptor this process already has open (`/dev/stdout` and kin).
/// Such a name is written in place even when it leads to a regular file, the way a shell's
/// `> /dev/stdout` is: replacing the file by rename would leave the descriptor on the old one.
fn names_open_descriptor(path: &Path) -> bool {
    let words: Vec<&str> = path
        .components()
        .map(|c| c.as_os_str().to_str().unwrap_or(""))
        .collect();
    matches!(
        words.as_slice(),
        ["/", "dev", "stdout" | "stderr" | "stdin"]
            | ["/", "dev", "fd", _]
            | ["/", "proc", "self" | "thread-self", "fd", _]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_names_are_recognised_by_their_components() {
        for p in [
            "/dev/stdout",
            "/dev/stderr",
            "/dev//stdout",
            "/dev/fd/1",
            "/proc/self/fd/3",
        ] {
            assert!(names_open_descriptor(Path::new(p)), "{p}");
        }
        for p in ["/dev/null", "/dev/shm/stdout", "dev/stdout", "/tmp/fd/1"] {
            assert!(!names_open_descriptor(Path::new(p)), "{p}");
        }
    }
}
