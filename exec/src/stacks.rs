//! Stacks shared between workers, for kernels that run one depth-first stack per worker
//! (pseudo-DFS): a worker whose stack grows past a threshold while another is idle hands over
//! its older half; the run ends when every worker is idle and nothing is shared.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Stacks handed between workers.
pub struct Shared {
    pub state: Mutex<SharedState>,
    pub wake: Condvar,
    /// Idle workers, readable without the lock to decide whether splitting is worth it.
    pub idle_hint: AtomicUsize,
}

pub struct SharedState {
    pub stacks: Vec<Vec<u32>>,
    pub idle: usize,
    pub done: bool,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, SharedState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ends the run for every worker (on completion, error or cancel).
    pub fn stop(&self) {
        self.lock().done = true;
        self.wake.notify_all();
    }
}

/// Hands the older half of `stack` to the pool when some worker is idle.
pub fn share(shared: &Shared, stack: &mut Vec<u32>) {
    if shared.idle_hint.load(Ordering::Relaxed) == 0 {
        return;
    }
    let half: Vec<u32> = stack.drain(..stack.len() / 2).collect();
    shared.lock().stacks.push(half);
    shared.wake.notify_one();
}

/// Waits for a shared stack; false when the run is over (all idle, nothing shared, or stopped).
pub fn take_work(shared: &Shared, threads: usize, stack: &mut Vec<u32>) -> bool {
    let mut st = shared.lock();
    loop {
        if st.done {
            return false;
        }
        if let Some(s) = st.stacks.pop() {
            *stack = s;
            return true;
        }
        st.idle += 1;
        shared.idle_hint.store(st.idle, Ordering::Relaxed);
        if st.idle == threads {
            st.done = true;
            shared.wake.notify_all();
            return false;
        }
        st = shared.wake.wait(st).unwrap_or_else(|p| p.into_inner());
        st.idle -= 1;
        shared.idle_hint.store(st.idle, Ordering::Relaxed);
    }
}
