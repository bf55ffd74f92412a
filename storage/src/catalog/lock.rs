//! The data directory's writer lock: an advisory `flock` on `DATA/lock`, held by the one
//! process that may change the directory (create, replace, drop, repair, tidy). Readers take no
//! lock: they read the catalog file, which is only ever replaced whole by a rename.
//!
//! The lock belongs to the open file description, so the kernel releases it when the process
//! ends however it ends; a stale lock file is harmless. The holder writes its process id into
//! the file so that others can name it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::Path;

use rustix::fs::{flock, FlockOperation};

use crate::error::{Result, StoreError};

/// The lock file's name under the data directory.
pub const LOCK_FILE: &str = "lock";

/// A held writer lock; released when dropped.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl DirLock {
    /// Takes the writer lock of `dir` without waiting. When another process holds it, the error
    /// is [`StoreError::Locked`], naming the lock file and the holder's process id.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| StoreError::io(&path, e))?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                return Err(StoreError::Locked {
                    holder: holder_of(&mut file),
                    lock: path,
                })
            }
            Err(e) => return Err(StoreError::io(&path, e.into())),
        }
        // Best effort: the pid only improves messages.
        let _ = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()));
        Ok(DirLock { _file: file })
    }
}

/// The process id a lock holder wrote into the lock file, if readable.
fn holder_of(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}
