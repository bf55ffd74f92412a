//! Depth-first stacks shared between workers, for kernels that explore one stack per worker
//! (pseudo-DFS): each worker pops as many vertices as the list-fetch operator fetches at a time
//! (one in memory, a batch out of core, so reads stay in flight), fetches their out-lists and
//! lets the kernel push what it claims. A worker whose stack grows past [`SPLIT_AT`] while
//! another is idle hands over its older half; the run ends when every worker is idle and
//! nothing is shared.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::error::ExecError;
use crate::lists::{fetch, fetch_batch};

/// A stack larger than this is split when some worker is idle.
pub const SPLIT_AT: usize = 32;
/// Vertices expanded between cancel checks.
const BATCH: usize = 64;

/// Explores from `start` depth-first on every worker: `expand(v, out-list of v, stack)` pushes
/// the neighbours it claims. Returns the number of list entries read.
pub fn depth_first<S: GraphStore, E>(
    ctx: &RunContext<'_, S>,
    start: Vec<u32>,
    expand: &E,
) -> Result<u64, ExecError>
where
    E: Fn(u32, &[u32], &mut Vec<u32>) -> Result<(), ExecError> + Sync,
{
    let threads = ctx.pool.threads();
    let shared = Shared {
        state: Mutex::new(SharedState {
            stacks: vec![start],
            idle: 0,
            done: false,
        }),
        wake: Condvar::new(),
        idle_hint: AtomicUsize::new(0),
    };
    let results = ctx.pool.broadcast(|_| {
        let r = worker(ctx, &shared, threads, expand);
        if r.is_err() {
            shared.stop();
        }
        r
    });
    results.into_iter().sum()
}

/// One worker: pops, expands, shares; returns the number of list entries it read.
fn worker<S: GraphStore, E>(
    ctx: &RunContext<'_, S>,
    shared: &Shared,
    threads: usize,
    expand: &E,
) -> Result<u64, ExecError>
where
    E: Fn(u32, &[u32], &mut Vec<u32>) -> Result<(), ExecError> + Sync,
{
    let take = fetch_batch(ctx);
    let mut stack: Vec<u32> = Vec::new();
    let mut batch: Vec<u32> = Vec::with_capacity(take);
    let mut edges = 0u64;
    loop {
        if stack.is_empty() && !take_work(shared, threads, &mut stack) {
            return Ok(edges);
        }
        ctx.check()?;
        for _ in 0..(BATCH / take).max(1) {
            batch.clear();
            let keep = stack.len().saturating_sub(take);
            batch.extend(stack.drain(keep..).rev());
            if batch.is_empty() {
                break;
            }
            let mut failed = None;
            fetch(ctx, Direction::Out, &batch, false, |v, ns, _| {
                edges += ns.len() as u64;
                if failed.is_none() {
                    failed = expand(v, ns, &mut stack).err();
                }
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
            if stack.len() > SPLIT_AT {
                share(shared, &mut stack);
            }
        }
    }
}

/// Stacks handed between workers.
struct Shared {
    state: Mutex<SharedState>,
    wake: Condvar,
    /// Idle workers, readable without the lock to decide whether splitting is worth it.
    idle_hint: AtomicUsize,
}

struct SharedState {
    stacks: Vec<Vec<u32>>,
    idle: usize,
    done: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, SharedState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ends the run for every worker (on completion, error or cancel).
    fn stop(&self) {
        self.lock().done = true;
        self.wake.notify_all();
    }
}

/// Hands the older half of `stack` to the pool when some worker is idle.
fn share(shared: &Shared, stack: &mut Vec<u32>) {
    if shared.idle_hint.load(Ordering::Relaxed) == 0 {
        return;
    }
    let half: Vec<u32> = stack.drain(..stack.len() / 2).collect();
    shared.lock().stacks.push(half);
    shared.wake.notify_one();
}

/// Waits for a shared stack; false when the run is over (all idle, nothing shared, or stopped).
fn take_work(shared: &Shared, threads: usize, stack: &mut Vec<u32>) -> bool {
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
