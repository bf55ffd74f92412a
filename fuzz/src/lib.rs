//! Shared plumbing of the import fuzz targets: a per-process scratch directory (removed at exit)
//! and an import run whose result, when it succeeds, is checked with `VERIFY GRAPH`'s reader.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

use storage::import::{import, ImportRequest, ImportSummary};

static SCRATCH: OnceLock<PathBuf> = OnceLock::new();

extern "C" fn remove_scratch() {
    if let Some(p) = SCRATCH.get() {
        let _ = std::fs::remove_dir_all(p);
    }
}

/// `$TMPDIR/frontier-fuzz-<pid>`, created on first use and removed when the process exits
/// normally (libFuzzer's `-max_total_time`, `-runs`); set `TMPDIR=/dev/shm` to keep the disk out
/// of the loop.
pub fn scratch() -> &'static Path {
    SCRATCH.get_or_init(|| {
        let p = std::env::temp_dir().join(format!("frontier-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create the scratch directory");
        // SAFETY: registering a plain `extern "C" fn` with no captured state.
        unsafe {
            libc::atexit(remove_scratch);
        }
        p
    })
}

/// Writes `bytes` to `dir/name` (replacing it) and returns the path.
pub fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create input directory");
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write fuzz input file");
    p
}

/// Runs the import. An `Err` is a fine answer to a bad input; a panic is a bug. When it
/// succeeds, the graph file it wrote must pass `verify_file` and agree with the summary.
pub fn run_import(req: &ImportRequest) -> Option<ImportSummary> {
    let _ = std::fs::remove_file(&req.dest);
    let cancel = AtomicBool::new(false);
    let result = import(req, &mut |_| {}, &cancel);
    let out = match result {
        Ok(summary) => {
            let report = storage::blockfile::verify::verify_file(&req.dest)
                .unwrap_or_else(|e| panic!("import succeeded but its file fails VERIFY: {e}; {summary:?}"));
            assert_eq!(report.vertices, summary.vertices, "{summary:?} vs {report:?}");
            assert_eq!(report.arcs, summary.arcs, "{summary:?} vs {report:?}");
            Some(summary)
        }
        Err(_) => {
            assert!(!req.dest.exists(), "a failed import left its destination file behind");
            None
        }
    };
    let _ = std::fs::remove_file(&req.dest);
    out
}
