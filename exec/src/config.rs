//! How one run is configured: thread count, EdgeMap strategy, cancellation and progress.

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use planner::{DmUpdate, Mode};

use crate::kept_pull::KeptPull;

/// A progress report, sent after every iteration so a terminal can show a progress line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// 1-based number of the iteration just finished.
    pub iteration: u32,
    /// The number of iterations the run will make, when it is known in advance (PageRank, CDLP).
    pub of: Option<u32>,
    /// Vertices active in the iteration just finished.
    pub frontier: u64,
    /// Time since the algorithm started.
    pub elapsed: Duration,
}

/// A callback receiving progress reports; it must be cheap, it runs on the driving thread.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// The knobs of one run, built by the session from its settings.
#[derive(Clone)]
pub struct RunConfig {
    /// Worker threads (at least 1 is used). I/O depth comes from the store, not from this.
    pub threads: usize,
    /// EdgeMap strategy: `Auto` decides per iteration, the others force one.
    pub mode: Mode,
    /// Raised by Ctrl-C; algorithms check it between iterations and chunks.
    pub cancel: Arc<AtomicBool>,
    /// Where progress reports go, if anywhere.
    pub progress: Option<ProgressFn>,
    /// Whether PageRank may copy the in-edges for its cache-blocked pull, which the planner
    /// allows when the copy fits `memory_limit` (`planner::blocking`).
    pub segmented_pull: bool,
    /// Where the open graph keeps its blocked pull between runs (`None`: each run builds its
    /// own and drops it at the end).
    pub kept_pull: Option<Arc<KeptPull>>,
    /// How updates reach remote state (`SET dm_update`): `Auto` decides per iteration.
    pub dm_update: DmUpdate,
    /// This process's part in a run over several compute nodes (`SET compute_nodes`); `None`
    /// runs the whole query here.
    pub cluster: Option<storage::cluster::Member>,
}

impl RunConfig {
    /// A configuration with `threads` workers, `Auto` mode, a fresh cancel flag, no progress.
    pub fn with_threads(threads: usize) -> RunConfig {
        RunConfig {
            threads,
            ..RunConfig::default()
        }
    }
}

impl Default for RunConfig {
    /// As many workers as the machine has cores, `Auto` mode.
    fn default() -> Self {
        RunConfig {
            threads: default_threads(),
            mode: Mode::Auto,
            cancel: Arc::new(AtomicBool::new(false)),
            progress: None,
            segmented_pull: true,
            kept_pull: None,
            dm_update: DmUpdate::Auto,
            cluster: None,
        }
    }
}

impl fmt::Debug for RunConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunConfig")
            .field("threads", &self.threads)
            .field("mode", &self.mode)
            .field("cancel", &self.cancel)
            .field("progress", &self.progress.as_ref().map(|_| "callback"))
            .field("segmented_pull", &self.segmented_pull)
            .field("kept_pull", &self.kept_pull.as_ref().map(|k| k.bytes()))
            .field("dm_update", &self.dm_update)
            .field("cluster", &self.cluster)
            .finish()
    }
}

/// The machine's cores (1 when the platform cannot tell): the `threads` setting's default.
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
