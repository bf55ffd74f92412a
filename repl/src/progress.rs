//! Progress bars on a terminal: imports (bytes and edges/s) and runs (iteration, frontier,
//! elapsed), drawn on stderr while the engine works.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::RunProgress;
use indicatif::{ProgressBar, ProgressStyle};
use planner::RunPlan;
use storage::import::{ImportPhase, ImportProgress};

/// The bars of one session: at most one import bar and one run bar at a time.
#[derive(Default)]
pub struct Bars {
    import: Mutex<Option<ProgressBar>>,
    run: Mutex<Option<ProgressBar>>,
}

fn spinner(template: &str, prefix: &str) -> ProgressBar {
    let b = ProgressBar::new_spinner();
    b.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    b.set_prefix(prefix.to_string());
    b.enable_steady_tick(Duration::from_millis(200));
    b
}

impl engine::Watcher for Bars {
    fn import_progress(&self, source: &str, p: &ImportProgress) {
        let mut bar = self.import.lock().unwrap_or_else(|e| e.into_inner());
        let b = bar.get_or_insert_with(|| {
            spinner("{spinner} importing {prefix}: {msg} [{elapsed}]", source)
        });
        let secs = b.elapsed().as_secs_f64().max(1e-9);
        // Later phases count their own passes over the edges; only reading has a rate.
        let rate = match p.phase {
            ImportPhase::Reading => format!(" ({:.0} edges/s)", p.edges as f64 / secs),
            _ => String::new(),
        };
        b.set_message(format!(
            "{}: {} read, {} edges{rate}",
            p.phase.name(),
            planner::settings::format_size(p.bytes_read),
            p.edges,
        ));
    }

    fn import_done(&self) {
        if let Some(b) = self.import.lock().unwrap_or_else(|e| e.into_inner()).take() {
            b.finish_and_clear();
        }
    }

    fn run_started(&self, plan: &RunPlan) -> Option<RunProgress> {
        let bar = spinner("{spinner} {prefix} {msg} [{elapsed}]", &plan.algorithms());
        *self.run.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
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

    fn run_done(&self) {
        if let Some(b) = self.run.lock().unwrap_or_else(|e| e.into_inner()).take() {
            b.finish_and_clear();
        }
    }
}
