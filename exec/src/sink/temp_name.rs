//! The temporary names results are written under, `.NAME.frontier-tmp-PID-N`, and the removal
//! of those a killed process left behind.
//!
//! A temporary file is stale when the process in its name is gone. Only names of exactly this
//! pattern that are regular files are ever removed; a process that is still running (or that
//! this process may not signal, which means it exists) keeps its files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What sits between the file's name and the process id.
const MARK: &str = ".frontier-tmp-";

/// Distinguishes temporary names of sinks opened concurrently by one process.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// A fresh temporary name in `dir` for a file that will become `dir/file_name`.
pub(crate) fn next(dir: &Path, file_name: &str) -> PathBuf {
    let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{file_name}{MARK}{}-{n}", std::process::id()))
}

/// The process id in a temporary name of this pattern, or `None` for any other name.
pub(crate) fn owner(name: &str) -> Option<i32> {
    let rest = name.strip_prefix('.')?;
    let at = rest.rfind(MARK)?;
    if at == 0 {
        return None;
    }
    let (pid, n) = rest[at + MARK.len()..].split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(n) {
        return None;
    }
    pid.parse::<i32>().ok().filter(|&p| p > 0)
}

/// Whether process `pid` exists (signal 0 checks without sending anything).
fn process_exists(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists and may be signalled.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Removes the temporary files in `dir` whose process is gone; returns how many.
///
/// Best effort: a directory that cannot be listed, or a file that cannot be removed, is left
/// as it is and the write goes on.
pub(crate) fn remove_stale(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner) else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && !process_exists(pid) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_of_the_pattern_have_an_owner() {
        assert_eq!(owner(".out.csv.frontier-tmp-123-0"), Some(123));
        assert_eq!(owner(".a.frontier-tmp-b.frontier-tmp-77-12"), Some(77));
        let name = next(Path::new("/x"), "r.parquet");
        let own = std::process::id() as i32;
        assert_eq!(
            owner(name.file_name().unwrap().to_str().unwrap()),
            Some(own)
        );
        for other in [
            "out.csv.frontier-tmp-123-0",
            "..frontier-tmp-123-0",
            ".out.csv.frontier-tmp-123",
            ".out.csv.frontier-tmp-123-",
            ".out.csv.frontier-tmp-12a-0",
            ".out.csv.frontier-tmp--1-0",
            ".out.csv.frontier-tmp-0-0",
            ".out.csv.frontier-tmp-123-0.bak",
            ".out.csv.frontier-tmp-99999999999-0",
            "notes.txt",
        ] {
            assert_eq!(owner(other), None, "{other}");
        }
    }

    #[test]
    fn this_process_exists() {
        assert!(process_exists(std::process::id() as i32));
    }
}
