//! PageRank's cache-blocked pull kept with an open graph between statements, so a session's
//! next PageRank on the graph skips building it (a copy of all in-edges, which takes about an
//! iteration's worth of time to build, more on fresh memory).
//!
//! The engine owns one slot per open graph, hands it to each run through
//! [`crate::RunConfig::kept_pull`], and empties it when the graph is dropped or reopened, or
//! when a statement needs the memory.

use std::sync::{Arc, Mutex, PoisonError};

use crate::gather::SegmentedPull;

/// The blocked pull one open graph keeps, if any.
#[derive(Default)]
pub struct KeptPull(Mutex<Option<Arc<SegmentedPull>>>);

impl KeptPull {
    /// The kept pull, when one was built for `destinations` vertices.
    pub fn get(&self, destinations: usize) -> Option<Arc<SegmentedPull>> {
        self.slot()
            .as_ref()
            .filter(|p| p.destinations() == destinations)
            .cloned()
    }

    /// Keeps `pull` for the next run, in place of any other.
    pub fn keep(&self, pull: Arc<SegmentedPull>) {
        *self.slot() = Some(pull);
    }

    /// The bytes the kept pull holds (0 when none is kept).
    pub fn bytes(&self) -> u64 {
        self.slot().as_ref().map_or(0, |p| p.bytes())
    }

    /// Lets the kept pull go: its memory is freed once no run uses it.
    pub fn release(&self) {
        *self.slot() = None;
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Arc<SegmentedPull>>> {
        // A run that panicked while holding the lock left either a whole pull or none.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
