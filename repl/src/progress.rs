//! Progress bars on a terminal: imports (bytes and edges/s) and runs (iteration, frontier,
//! elapsed). Silent when stderr is not a terminal, so batch output stays clean.

use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use planner::RunPlan;
use storage::import::ImportProgress;

/// The bar of one import.
pub struct ImportProgressBar {
    bar: Option<ProgressBar>,
}

impl ImportProgressBar {
    /// A spinner labelled with the source path, when `enabled`.
    pub fn new(enabled: bool, source: &str) -> ImportProgressBar {
        let bar = enabled.then(|| {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{spinner} importing {prefix}: {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.set_prefix(source.to_string());
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        ImportProgressBar { bar }
    }

    /// Shows the latest counts.
    pub fn update(&mut self, p: &ImportProgress) {
        if let Some(b) = &self.bar {
            let secs = b.elapsed().as_secs_f64().max(1e-9);
            b.set_message(format!(
                "{} read, {} edges ({:.0} edges/s)",
                planner::settings::format_size(p.bytes_read),
                p.edges,
                p.edges as f64 / secs
            ));
        }
    }

    /// Removes the bar.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// A progress callback for a run, when `enabled`.
pub fn run_progress(
    enabled: bool,
    plan: &RunPlan,
) -> Option<Arc<dyn Fn(exec::Progress) + Send + Sync>> {
    if !enabled {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {prefix} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_prefix(plan.spec.name.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    RUN_BAR.with(|b| *b.borrow_mut() = Some(bar.clone()));
    Some(Arc::new(move |p: exec::Progress| {
        let of = p.of.map(|n| format!(" of {n}")).unwrap_or_default();
        bar.set_message(format!(
            "iteration {}{of}, frontier {} ({:.1} s)",
            p.iteration,
            p.frontier,
            p.elapsed.as_secs_f64()
        ));
    }))
}

thread_local! {
    static RUN_BAR: std::cell::RefCell<Option<ProgressBar>> = const { std::cell::RefCell::new(None) };
}

/// Removes the run's bar, if one was drawn.
pub fn clear_run_progress(enabled: bool) {
    if enabled {
        RUN_BAR.with(|b| {
            if let Some(bar) = b.borrow_mut().take() {
                bar.finish_and_clear();
            }
        });
    }
}
