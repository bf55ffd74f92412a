//! Progress of long statements: the engine reports through [`ProgressWatch`] (a `Watcher`, called
//! on the engine's threads, which only records the latest counts), and the waiting Python thread
//! draws them through [`ProgressDisplay`] with `frontier._progress` (tqdm when installed, plain
//! lines on stderr otherwise) once a statement has run longer than the connection's delay.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use engine::{RunProgress, Watcher};
use planner::RunPlan;
use pyo3::prelude::*;
use storage::import::ImportProgress;

/// What the engine is doing now, as the last report said.
#[derive(Clone, Default, PartialEq)]
struct Shown {
    label: String,
    done: u64,
    total: Option<u64>,
    unit: &'static str,
    active: bool,
}

/// The engine's side: records the latest progress report.
#[derive(Default)]
pub struct ProgressWatch {
    shown: Arc<Mutex<Shown>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Watcher for ProgressWatch {
    fn import_progress(&self, source: &str, progress: &ImportProgress) {
        *lock(&self.shown) = Shown {
            label: format!("import {source}"),
            done: progress.edges,
            total: None,
            unit: "edges",
            active: true,
        };
    }

    fn import_done(&self) {
        lock(&self.shown).active = false;
    }

    fn run_started(&self, plan: &RunPlan) -> Option<RunProgress> {
        *lock(&self.shown) = Shown {
            label: plan.algorithms(),
            done: 0,
            total: None,
            unit: "iterations",
            active: true,
        };
        let shown = self.shown.clone();
        Some(Arc::new(move |p: exec::Progress| {
            let mut s = lock(&shown);
            s.done = p.iteration.into();
            s.total = p.of.map(u64::from);
        }))
    }

    fn run_done(&self) {
        lock(&self.shown).active = false;
    }
}

/// The Python side, for one statement: a bar appears once the statement has run for `delay`,
/// follows the engine's reports, and is closed when the work it shows ends.
pub struct ProgressDisplay {
    watch: Arc<ProgressWatch>,
    started: Instant,
    delay: Duration,
    /// The bar on screen and the label it was opened for.
    bar: Mutex<Option<(String, Py<PyAny>)>>,
}

impl ProgressDisplay {
    pub fn new(watch: Arc<ProgressWatch>, delay: Duration) -> ProgressDisplay {
        lock(&watch.shown).active = false;
        ProgressDisplay {
            watch,
            started: Instant::now(),
            delay,
            bar: Mutex::new(None),
        }
    }

    /// Brings the bar up to date (called with the GIL held, between waits). A failure to draw
    /// never fails the statement: it is reported as unraisable and the bar given up.
    pub fn tick(&self, py: Python<'_>) {
        if self.started.elapsed() < self.delay {
            return;
        }
        let shown = lock(&self.watch.shown).clone();
        let mut bar = lock(&self.bar);
        if bar
            .as_ref()
            .is_some_and(|(label, _)| !shown.active || *label != shown.label)
        {
            close(py, bar.take());
        }
        if !shown.active {
            return;
        }
        if bar.is_none() {
            let opened = py
                .import("frontier._progress")
                .and_then(|m| m.call_method1("start", (&shown.label, shown.total, shown.unit)));
            match opened {
                Ok(b) => *bar = Some((shown.label.clone(), b.unbind())),
                Err(e) => {
                    e.write_unraisable(py, None);
                    return;
                }
            }
        }
        if let Some((_, b)) = bar.as_ref() {
            if let Err(e) = b.call_method1(py, "update", (shown.done, shown.total)) {
                e.write_unraisable(py, None);
                *bar = None;
            }
        }
    }

    /// Closes the bar, if one is shown.
    pub fn finish(&self, py: Python<'_>) {
        close(py, lock(&self.bar).take());
    }
}

fn close(py: Python<'_>, bar: Option<(String, Py<PyAny>)>) {
    if let Some((_, b)) = bar {
        if let Err(e) = b.call_method0(py, "close") {
            e.write_unraisable(py, None);
        }
    }
}
