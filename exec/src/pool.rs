//! The worker pool of one run and the chunking rules work is split by.
//!
//! A dedicated rayon pool is built per run so the `threads` setting is honoured exactly and a
//! run never competes with another run's workers. Work is split into modest chunks: each chunk
//! is one `for_each_list`/`scan_lists` call (the store keeps its own I/O depth inside a call),
//! and the cancel flag is checked between chunks, which bounds how long a cancel takes.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::error::ExecError;

/// The threads of one run.
pub struct Pool {
    inner: rayon::ThreadPool,
    threads: usize,
}

impl Pool {
    /// Starts `threads` workers (at least one).
    pub fn new(threads: usize) -> Result<Pool, ExecError> {
        let threads = threads.max(1);
        let inner = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("frontier-worker-{i}"))
            .build()
            .map_err(|e| ExecError::Other(format!("cannot start {threads} worker threads: {e}")))?;
        Ok(Pool { inner, threads })
    }

    /// Number of workers.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `op` inside the pool, so rayon parallel iterators in it use this pool's workers.
    pub fn install<R: Send>(&self, op: impl FnOnce() -> R + Send) -> R {
        self.inner.install(op)
    }

    /// Runs `op(worker_index)` once on every worker at the same time (pseudo-DFS workers).
    pub fn broadcast<R: Send>(&self, op: impl Fn(usize) -> R + Sync) -> Vec<R> {
        self.inner.broadcast(|ctx| op(ctx.index()))
    }

    /// Runs `task` on items the workers draw with `draw(worker_index)` whenever they are free
    /// (a worker slowed by its reads holds up no share fixed in advance), until `draw` returns
    /// `None` or a task fails, and returns every result, in no particular order.
    pub fn each_drawn<I: Send, T: Send, E: Send>(
        &self,
        draw: impl Fn(usize) -> Option<I> + Sync,
        task: impl Fn(I) -> Result<T, E> + Sync,
    ) -> Vec<Result<T, E>> {
        let failed = AtomicBool::new(false);
        let done = self.broadcast(|worker| {
            let mut mine = Vec::new();
            while !failed.load(Ordering::Relaxed) {
                let Some(item) = draw(worker) else { break };
                let result = task(item);
                if result.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                mine.push(result);
            }
            mine
        });
        done.into_iter().flatten().collect()
    }

    /// A vector of `make(i)` for every `i` in `0..len`, its memory advised for huge pages and
    /// written by the workers: the first touches of fresh memory (the kernel zeroing each page,
    /// on some VMs the host backing it) are shared among the threads instead of all falling on
    /// the one that allocates.
    pub fn filled_vec<T: Send>(
        &self,
        len: usize,
        make: impl Fn(usize) -> T + Sync + Send,
    ) -> Vec<T> {
        let mut v = storage::huge::with_capacity(len);
        self.install(|| {
            (0..len)
                .into_par_iter()
                .with_min_len(1 << 16)
                .map(make)
                .collect_into_vec(&mut v)
        });
        v
    }

    /// A chunk length for splitting `len` items: about 8 chunks per worker for balance, but
    /// never fewer than `min` nor more than `max` items (cancel latency, per-chunk overhead).
    pub fn chunk_len(&self, len: usize, min: usize, max: usize) -> usize {
        (len / (self.threads * 8)).clamp(min.max(1), max.max(min).max(1))
    }

    /// Splits `0..n` into consecutive ranges whose starts are multiples of 64, so each range
    /// owns whole words of a bitmap and can fill them without atomics.
    pub fn word_ranges(&self, n: u32, min: usize, max: usize) -> Vec<Range<u32>> {
        let len = self.chunk_len(n as usize, min, max).div_ceil(64) * 64;
        let mut out = Vec::with_capacity((n as usize).div_ceil(len.max(1)));
        let mut start = 0u64;
        while start < n as u64 {
            let end = (start + len as u64).min(n as u64);
            out.push(start as u32..end as u32);
            start = end;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn drawn_items_each_run_once_and_none_are_drawn_after_a_failure() {
        let pool = Pool::new(2).unwrap();
        let queue = Mutex::new(0..100u64);
        let draw = |_| queue.lock().unwrap().next();
        let mut squares: Vec<u64> = pool
            .each_drawn(draw, |i| Ok::<_, ()>(i * i))
            .into_iter()
            .map(Result::unwrap)
            .collect();
        squares.sort_unstable();
        assert_eq!(squares, (0..100u64).map(|i| i * i).collect::<Vec<_>>());
        // Item 0 fails at once; each worker may finish the item it holds, no more.
        let queue = Mutex::new(0..1000u32);
        let draw = |_| queue.lock().unwrap().next();
        let done = pool.each_drawn(draw, |i| if i == 0 { Err(i) } else { Ok(i) });
        assert!(done.contains(&Err(0)));
        assert!(
            done.len() < 1000,
            "{} items ran after the failure",
            done.len()
        );
        // The worker index reaches `draw`.
        let seen = Mutex::new(Vec::new());
        let once = AtomicBool::new(false);
        pool.each_drawn(
            |w| {
                seen.lock().unwrap().push(w);
                (!once.swap(true, Ordering::Relaxed)).then_some(())
            },
            |()| Ok::<_, ()>(()),
        );
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, vec![0, 1]);
    }

    #[test]
    fn filled_vectors_hold_each_index_value_in_place() {
        let pool = Pool::new(2).unwrap();
        for len in [0usize, 1, 1000, 3 << 20] {
            let v = pool.filled_vec(len, |i| (i as u64) * 3 + 1);
            assert_eq!(v.len(), len);
            assert!(v.iter().enumerate().all(|(i, &x)| x == (i as u64) * 3 + 1));
        }
    }

    #[test]
    fn word_ranges_cover_and_align() {
        let pool = Pool::new(2).unwrap();
        for n in [0u32, 1, 63, 64, 65, 1000, 100_000] {
            let r = pool.word_ranges(n, 64, 4096);
            let mut next = 0;
            for x in &r {
                assert_eq!(x.start, next);
                assert_eq!(x.start % 64, 0);
                assert!(x.end > x.start);
                next = x.end;
            }
            assert_eq!(next, n);
        }
    }

    #[test]
    fn broadcast_reaches_every_worker() {
        let pool = Pool::new(3).unwrap();
        let mut ids = pool.broadcast(|i| i);
        ids.sort();
        assert_eq!(ids, vec![0, 1, 2]);
    }
}
