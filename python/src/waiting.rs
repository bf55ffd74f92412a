//! Running engine work on a worker thread while the calling Python thread waits with the GIL
//! released. Every [`POLL`] the waiting thread takes the GIL briefly to run Python's signal
//! handlers (Ctrl-C becomes `KeyboardInterrupt` there, and only there: the main thread) and to
//! draw progress. An interrupt raises the session's cancel flag, as Ctrl-C does in the REPL; the
//! engine stops at its next check, and the `KeyboardInterrupt` is raised once it has.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

use engine::Session;
use pyo3::prelude::*;

use crate::errors::error;
use crate::progress::ProgressDisplay;

/// How often the waiting thread checks for signals and redraws progress.
const POLL: Duration = Duration::from_millis(50);

/// The worker's stack: the command line runs statements on the main thread, whose stack is
/// 8 MiB on Linux; a spawned thread would get 2 MiB.
const WORKER_STACK: usize = 8 << 20;

/// Runs `work` on `session` on a worker thread and waits for it, cancellable by Ctrl-C.
pub fn run_cancellable<T: Send>(
    py: Python<'_>,
    session: &mut Session,
    progress: Option<&ProgressDisplay>,
    work: impl FnOnce(&mut Session) -> T + Send,
) -> PyResult<T> {
    let cancel = session.cancel.clone();
    let (finished, interrupt) = py.detach(|| {
        std::thread::scope(|scope| {
            let (done_tx, done_rx) = mpsc::channel::<()>();
            let worker = std::thread::Builder::new()
                .name("frontier-statement".into())
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, move || {
                    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| work(session)));
                    let _ = done_tx.send(());
                    outcome
                });
            let worker = match worker {
                Ok(w) => w,
                Err(e) => return (Err(format!("cannot start a thread: {e}")), None),
            };
            let mut interrupt: Option<PyErr> = None;
            while let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(POLL) {
                Python::attach(|py| {
                    if interrupt.is_none() {
                        interrupt = py.check_signals().err();
                    }
                    if let Some(p) = progress {
                        p.tick(py);
                    }
                });
                // Raised at every poll: a statement clears the flag when it starts.
                if interrupt.is_some() {
                    cancel.store(true, Ordering::SeqCst);
                }
            }
            let finished = worker.join().unwrap_or_else(Err).map_err(|panic| {
                let why = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("no message");
                format!("internal error: the engine panicked ({why}); please report it")
            });
            (finished, interrupt)
        })
    });
    if let Some(p) = progress {
        p.finish(py);
    }
    if let Some(interrupt) = interrupt {
        return Err(interrupt);
    }
    finished.map_err(error)
}
