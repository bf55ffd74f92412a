//! The worker pool of one run and the chunking rules work is split by.
//!
//! A dedicated rayon pool is built per run so the `threads` setting is honoured exactly and a
//! run never competes with another run's workers. Work is split into modest chunks: each chunk
//! is one `for_each_list`/`scan_lists` call (the store keeps its own I/O depth inside a call),
//! and the cancel flag is checked between chunks, which bounds how long a cancel takes.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

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

    /// Runs `task` on every item, each taken in order by whichever worker is free (a worker
    /// slowed by its reads holds up no share fixed in advance), and returns the results in item
    /// order. Once a task fails the workers take no further items, and the first failure in
    /// item order is returned.
    pub fn each_in_turn<I: Send, T: Send, E: Send>(
        &self,
        items: Vec<I>,
        task: impl Fn(I) -> Result<T, E> + Sync,
    ) -> Result<Vec<T>, E> {
        let queue = Mutex::new(items.into_iter().enumerate());
        let mut all = self.each_drawn(
            |_| queue.lock().unwrap_or_else(|e| e.into_inner()).next(),
            |(i, item)| task(item).map(|t| (i, t)).map_err(|e| (i, e)),
        );
        all.sort_unstable_by_key(|r| match r {
            Ok((i, _)) | Err((i, _)) => *i,
        });
        all.into_iter()
            .map(|r| r.map(|(_, t)| t).map_err(|(_, e)| e))
            .collect()
    }

    /// Runs `task` on items the workers draw with `draw(worker_index)` whenever they are free,
    /// until it returns `None` or a task fails, and returns every result drawn, in no
    /// particular order.
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
    use super::*;

    #[test]
    fn items_in_turn_give_results_in_item_order_and_stop_after_a_failure() {
        let pool = Pool::new(2).unwrap();
        let squares = pool.each_in_turn((0..100u64).collect(), |i| Ok::<_, ()>(i * i));
        assert_eq!(squares, Ok((0..100u64).map(|i| i * i).collect()));
        // Of two failures the earlier item's is returned, whichever finished first.
        let failed = pool.each_in_turn((0..1000u32).collect(), |i| match i {
            10 => {
                std::thread::sleep(std::time::Duration::from_millis(20));
                Err(format!("item {i}"))
            }
            500 => Err(format!("item {i}")),
            _ => Ok(i),
        });
        assert_eq!(failed, Err("item 10".to_string()));
        assert_eq!(
            pool.each_in_turn(Vec::<u8>::new(), |_| Ok::<u8, ()>(0)),
            Ok(vec![])
        );
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
