//! The I/O engine of the out-of-core path: block-aligned reads into aligned buffers, many in
//! flight from few threads.
//!
//! CAVE kept one thread per in-flight read (`pread` on a thread pool). Here one calling thread
//! submits up to `io_depth` reads and processes completions as they arrive ([`Session`]): with
//! `io_uring` the kernel does the waiting, so two cores keep an SSD saturated. Where io_uring is
//! unavailable (old kernel, seccomp, `io_uring_disabled`) a `pread` thread pool serves the same
//! interface. The choice is made at run time by setting up a ring and submitting one read.
//!
//! Reads use `O_DIRECT` (the block cache is ours, the page cache would only hold a second copy)
//! where the file system accepts it; tmpfs refuses it with `EINVAL`, and then the file is opened
//! without it.
//!
//! Every [`Session`] of an engine draws from one shared budget of `io_depth` in-flight reads, so
//! the total depth does not grow with the number of worker threads. A session that has nothing in
//! flight may always submit one read (so no caller ever waits on another's budget); the total is
//! therefore at most `io_depth + threads - 1`, and `io_depth` whenever the threads are busy.

pub mod aligned;
pub mod device_busy;
pub mod huge_slabs;
pub mod plan;
pub mod pread_pool;
pub mod probe;
#[cfg(target_os = "linux")]
pub mod uring;

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

pub use aligned::{AlignedBuf, BufPool};
pub use device_busy::DeviceBusy;
pub use plan::{DeviceCosts, ReadModel};
pub use probe::{probe_device, DepthResult, ProbeOptions, ProbeReport, SequentialResult};

use crate::blockfile::format::BLOCK_SIZE;
use crate::error::{Result, StoreError};
use crate::store::IoStats;

/// Which engine to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnginePreference {
    /// io_uring when the kernel allows it, the pread pool otherwise.
    #[default]
    Auto,
    /// Always the pread pool (tests, and kernels where io_uring misbehaves).
    Pread,
}

/// How to open an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineOptions {
    /// Reads in flight at once, shared by every session of the engine (at least 1).
    pub depth: u32,
    /// io_uring or the pread pool.
    pub prefer: EnginePreference,
    /// Try `O_DIRECT` (falls back silently when the file system refuses it).
    pub direct: bool,
    /// Threads of the pread pool; default `min(depth, 16)`.
    pub pread_threads: Option<usize>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            depth: 32,
            prefer: EnginePreference::Auto,
            direct: true,
            pread_threads: None,
        }
    }
}

/// The engine actually running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// One ring per active session; the kernel waits for the reads.
    IoUring,
    /// Blocking `pread`s on a pool of `threads` threads.
    PreadPool { threads: usize },
}

/// Counters shared by the engine and the block cache: atomics, so every thread adds to them
/// without locking and a snapshot is always available for PROFILE.
#[derive(Debug, Default)]
pub struct IoCounters {
    /// Blocks read from the file (a multi-block read counts each block).
    pub blocks_read: AtomicU64,
    /// Bytes read from the file.
    pub bytes_read: AtomicU64,
    /// Block lookups the cache answered.
    pub cache_hits: AtomicU64,
    /// Block lookups the cache could not answer.
    pub cache_misses: AtomicU64,
    /// Most reads ever in flight at once, across all sessions: shows the depth reached.
    pub inflight_high_water: AtomicU64,
    /// Reads in flight right now (across all sessions).
    pub in_flight: AtomicU64,
    /// Nanoseconds sessions spent in [`Session::wait`] with reads in flight, summed over threads.
    pub wait_nanos: AtomicU64,
}

impl IoCounters {
    /// A snapshot in the trait's shape.
    pub fn snapshot(&self) -> IoStats {
        IoStats {
            blocks_read: self.blocks_read.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
            cache_misses: self.cache_misses.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            inflight_high_water: self.inflight_high_water.load(Ordering::Relaxed),
            wait_nanos: self.wait_nanos.load(Ordering::Relaxed),
        }
    }
}

/// One read: `buf.len()` bytes at `offset` (both block aligned). `tag` is the caller's.
#[derive(Debug)]
pub struct ReadRequest {
    /// Returned in the completion, so the caller knows what arrived.
    pub tag: u64,
    /// Byte offset in the file, a multiple of 4096 (O_DIRECT).
    pub offset: u64,
    /// Where the data goes; its length is the read's length.
    pub buf: AlignedBuf,
}

/// A finished read: the buffer comes back with `Ok(bytes read)` (fewer than asked only at end
/// of file; the rest of the buffer is zero) or the error.
#[derive(Debug)]
pub struct Completion {
    /// The request's tag.
    pub tag: u64,
    /// The request's offset.
    pub offset: u64,
    /// The request's buffer, now holding the data.
    pub buf: AlignedBuf,
    /// Bytes read, or the error.
    pub result: std::io::Result<usize>,
}

/// The shared in-flight budget.
#[derive(Debug)]
struct Budget {
    depth: u32,
    used: AtomicU32,
}

impl Budget {
    fn try_acquire(&self) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                (u < self.depth).then_some(u + 1)
            })
            .is_ok()
    }
    fn force_acquire(&self) {
        self.used.fetch_add(1, Ordering::AcqRel);
    }
    fn release(&self) {
        self.used.fetch_sub(1, Ordering::AcqRel);
    }
}

enum Backend {
    #[cfg(target_os = "linux")]
    Uring(uring::UringBackend),
    Pread(pread_pool::PreadPool),
}

/// A file opened for block reads with an engine behind it. `Sync`: many threads open
/// [`Session`]s on one engine concurrently.
pub struct IoEngine {
    path: PathBuf,
    file: Arc<File>,
    file_len: u64,
    direct: bool,
    budget: Budget,
    counters: Arc<IoCounters>,
    backend: Backend,
}

impl std::fmt::Debug for IoEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IoEngine({}, {})", self.path.display(), self.describe())
    }
}

fn open_file(path: &Path, direct: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path)
}

fn is_einval(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINVAL)
}

impl IoEngine {
    /// Opens `path` and picks the engine: tries `O_DIRECT` (open and one read), then io_uring
    /// (ring setup and one read), falling back step by step. Counters go to `counters`, which
    /// the caller may share with a block cache.
    pub fn open(path: &Path, opts: &EngineOptions, counters: Arc<IoCounters>) -> Result<IoEngine> {
        let ioerr = |e| StoreError::io(path, e);
        let depth = opts.depth.max(1);
        let mut direct = opts.direct;
        let mut file = match open_file(path, direct) {
            Ok(f) => f,
            Err(e) if direct && is_einval(&e) => {
                direct = false;
                open_file(path, false).map_err(ioerr)?
            }
            Err(e) => return Err(ioerr(e)),
        };
        let file_len = file.metadata().map_err(ioerr)?.len();
        if direct {
            // Some file systems accept the flag at open and refuse the reads.
            let mut probe = AlignedBuf::new(1);
            if let Err(e) = file.read_at(probe.as_bytes_mut(), 0) {
                if is_einval(&e) {
                    direct = false;
                    file = open_file(path, false).map_err(ioerr)?;
                } else {
                    return Err(ioerr(e));
                }
            }
        }
        let file = Arc::new(file);
        let backend = Self::pick_backend(&file, depth, opts);
        Ok(IoEngine {
            path: path.to_path_buf(),
            file,
            file_len,
            direct,
            budget: Budget {
                depth,
                used: AtomicU32::new(0),
            },
            counters,
            backend,
        })
    }

    fn pick_backend(file: &Arc<File>, depth: u32, opts: &EngineOptions) -> Backend {
        #[cfg(target_os = "linux")]
        if opts.prefer == EnginePreference::Auto {
            if let Some(u) = uring::UringBackend::try_new(file, depth) {
                return Backend::Uring(u);
            }
        }
        let threads = opts
            .pread_threads
            .unwrap_or_else(|| (depth as usize).min(16))
            .max(1);
        Backend::Pread(pread_pool::PreadPool::new(threads))
    }

    /// Which engine runs.
    pub fn kind(&self) -> EngineKind {
        match &self.backend {
            #[cfg(target_os = "linux")]
            Backend::Uring(_) => EngineKind::IoUring,
            Backend::Pread(p) => EngineKind::PreadPool {
                threads: p.threads(),
            },
        }
    }

    /// Whether reads bypass the page cache.
    pub fn direct(&self) -> bool {
        self.direct
    }

    /// The shared in-flight budget.
    pub fn depth(&self) -> u32 {
        self.budget.depth
    }

    /// The file's size when opened.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The counters this engine adds to.
    pub fn counters(&self) -> &Arc<IoCounters> {
        &self.counters
    }

    /// For EXPLAIN: `io_uring, O_DIRECT` or `pread pool (8 threads)`.
    pub fn describe(&self) -> String {
        let mut s = match self.kind() {
            EngineKind::IoUring => "io_uring".to_string(),
            EngineKind::PreadPool { threads } => {
                format!(
                    "pread pool ({threads} thread{})",
                    if threads == 1 { "" } else { "s" }
                )
            }
        };
        if self.direct {
            s.push_str(", O_DIRECT");
        }
        s
    }

    /// A submission context for one calling thread.
    pub fn session(&self) -> Result<Session<'_>> {
        let inner = match &self.backend {
            #[cfg(target_os = "linux")]
            Backend::Uring(u) => SessionInner::Uring(Box::new(
                u.session(self.file_len)
                    .map_err(|e| StoreError::io(&self.path, e))?,
            )),
            Backend::Pread(p) => SessionInner::Pread(p.session(&self.file)),
        };
        Ok(Session {
            engine: self,
            inner,
            in_flight: 0,
            reserved: false,
            counts_waits: true,
        })
    }

    /// Reads `blocks` blocks at block `first` and waits: for the few one-off reads.
    pub fn read_blocks(&self, first: u64, blocks: usize) -> Result<AlignedBuf> {
        let mut s = self.session()?;
        s.submit(ReadRequest {
            tag: 0,
            offset: first * BLOCK_SIZE as u64,
            buf: AlignedBuf::new(blocks),
        })?;
        let mut out = None;
        while out.is_none() && s.in_flight() > 0 {
            s.wait(|c| out = Some(c))?;
        }
        let c = out.ok_or_else(|| StoreError::Other("read lost by the I/O engine".into()))?;
        c.result.map_err(|e| StoreError::io(&self.path, e))?;
        Ok(c.buf)
    }
}

enum SessionInner<'a> {
    #[cfg(target_os = "linux")]
    Uring(Box<uring::UringSession<'a>>),
    Pread(pread_pool::PreadSession<'a>),
}

/// One thread's window of in-flight reads: submit while [`Session::has_room`], then
/// [`Session::wait`] hands over completions as they arrive. Dropping a session waits for its
/// reads to finish (their buffers belong to the kernel until then).
pub struct Session<'a> {
    engine: &'a IoEngine,
    inner: SessionInner<'a>,
    in_flight: usize,
    reserved: bool,
    /// Whether time in [`Session::wait`] counts as the threads' waiting for reads.
    counts_waits: bool,
}

impl Session<'_> {
    /// Stops counting this session's waits as threads waiting for reads: for a thread that
    /// only reads for others, whose waiting keeps no computation back (the threads it reads
    /// for count their own waits).
    pub fn without_wait_count(mut self) -> Self {
        self.counts_waits = false;
        self
    }

    /// Whether one more read may be submitted now (reserves a slot of the shared budget when it
    /// says yes). Always yes when this session has nothing in flight.
    pub fn has_room(&mut self) -> bool {
        if self.reserved {
            return true;
        }
        if self.in_flight >= self.engine.budget.depth as usize {
            return false;
        }
        if self.engine.budget.try_acquire() {
            self.reserved = true;
        } else if self.in_flight == 0 {
            self.engine.budget.force_acquire();
            self.reserved = true;
        }
        self.reserved
    }

    /// Reads in flight in this session.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Queues a read (block-aligned offset; the buffer's length is read). Call after
    /// [`Session::has_room`] said yes; otherwise the budget is overdrawn by one.
    pub fn submit(&mut self, req: ReadRequest) -> Result<()> {
        if !std::mem::take(&mut self.reserved) {
            self.engine.budget.force_acquire();
        }
        let r = match &mut self.inner {
            #[cfg(target_os = "linux")]
            SessionInner::Uring(u) => u.submit(req),
            SessionInner::Pread(p) => p.submit(req),
        };
        if let Err(e) = r {
            self.engine.budget.release();
            return Err(StoreError::io(&self.engine.path, e));
        }
        self.in_flight += 1;
        let c = &self.engine.counters;
        let now = c.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        c.inflight_high_water.fetch_max(now, Ordering::Relaxed);
        Ok(())
    }

    /// Starts the reads queued by [`Session::submit`] now. Submissions are batched: without a
    /// flush they reach the device only at the next [`Session::wait`], so a caller that
    /// computes on landed reads while others should be in flight flushes first. Each flush
    /// that finds reads queued is a system call (and, in a VM, a doorbell), so flush once per
    /// batch of reads, not per read.
    pub fn flush(&mut self) -> Result<()> {
        match &mut self.inner {
            #[cfg(target_os = "linux")]
            SessionInner::Uring(u) => u.flush().map_err(|e| StoreError::io(&self.engine.path, e)),
            SessionInner::Pread(_) => Ok(()),
        }
    }

    /// Waits until at least one read completes (returns at once when none is in flight) and
    /// hands every completed read to `f`. Errors here are engine failures; a failed read comes
    /// back as a [`Completion`] with its error.
    pub fn wait(&mut self, mut f: impl FnMut(Completion)) -> Result<()> {
        if std::mem::take(&mut self.reserved) {
            self.engine.budget.release();
        }
        if self.in_flight == 0 {
            return Ok(());
        }
        let engine = self.engine;
        let mut done = 0usize;
        let mut handle = |c: Completion| {
            done += 1;
            engine.budget.release();
            let ctr = &engine.counters;
            ctr.in_flight.fetch_sub(1, Ordering::Relaxed);
            if let Ok(n) = c.result {
                ctr.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
                ctr.blocks_read
                    .fetch_add(n.div_ceil(BLOCK_SIZE) as u64, Ordering::Relaxed);
            }
            f(c)
        };
        let started = std::time::Instant::now();
        let r = match &mut self.inner {
            #[cfg(target_os = "linux")]
            SessionInner::Uring(u) => u.wait(&mut handle),
            SessionInner::Pread(p) => p.wait(&mut handle),
        };
        if self.counts_waits {
            let waited = started.elapsed().as_nanos().min(u64::MAX as u128) as u64;
            engine
                .counters
                .wait_nanos
                .fetch_add(waited, Ordering::Relaxed);
        }
        self.in_flight -= done;
        r.map_err(|e| StoreError::io(&self.engine.path, e))
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if std::mem::take(&mut self.reserved) {
            self.engine.budget.release();
        }
        while self.in_flight > 0 {
            if self.wait(|_| {}).is_err() {
                // The backend could not reap; it leaks what it must keep alive (see its Drop).
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Word `w` of block `b` holds `b * 1_000_003 + w`.
    fn word(b: u64, w: u64) -> u64 {
        b * 1_000_003 + w
    }

    fn pattern_file(dir: &Path, blocks: u64) -> PathBuf {
        let path = dir.join("pattern");
        let mut f = std::io::BufWriter::new(File::create(&path).unwrap());
        for b in 0..blocks {
            for w in 0..(BLOCK_SIZE / 8) as u64 {
                f.write_all(&word(b, w).to_le_bytes()).unwrap();
            }
        }
        f.into_inner().unwrap().sync_all().unwrap();
        path
    }

    fn check(buf: &AlignedBuf, first: u64, got: usize, file_blocks: u64) {
        let want_blocks = (file_blocks.saturating_sub(first)).min(buf.blocks() as u64);
        assert_eq!(got as u64, want_blocks * BLOCK_SIZE as u64);
        for (i, c) in buf.as_bytes().chunks_exact(8).enumerate() {
            let b = first + (i / (BLOCK_SIZE / 8)) as u64;
            let w = (i % (BLOCK_SIZE / 8)) as u64;
            let v = u64::from_le_bytes(c.try_into().unwrap());
            let want = if b < file_blocks { word(b, w) } else { 0 };
            assert_eq!(v, want, "block {b} word {w}");
        }
    }

    /// Submits one-block reads of blocks `0..count`, each tagged with its block, each with room.
    fn submit_first_blocks(s: &mut Session<'_>, count: u64) {
        for b in 0..count {
            assert!(s.has_room());
            s.submit(ReadRequest {
                tag: b,
                offset: b * BLOCK_SIZE as u64,
                buf: AlignedBuf::new(1),
            })
            .unwrap();
        }
    }

    fn engines(path: &Path, depth: u32) -> Vec<IoEngine> {
        [EnginePreference::Auto, EnginePreference::Pread]
            .into_iter()
            .map(|prefer| {
                IoEngine::open(
                    path,
                    &EngineOptions {
                        depth,
                        prefer,
                        ..EngineOptions::default()
                    },
                    Arc::new(IoCounters::default()),
                )
                .unwrap()
            })
            .collect()
    }

    #[test]
    fn reads_the_right_bytes_at_every_depth_with_both_engines() {
        let dir = tempfile::tempdir().unwrap();
        let blocks = 300u64;
        let path = pattern_file(dir.path(), blocks);
        for depth in [1u32, 4, 64] {
            for e in engines(&path, depth) {
                eprintln!("depth {depth}: {}", e.describe());
                let mut s = e.session().unwrap();
                let mut rng = 12345u64 ^ depth as u64;
                let mut submitted = 0;
                let mut completed = 0;
                // Single blocks, multi-block runs, and reads running past the end of the file.
                while completed < 400 {
                    while submitted < 400 && s.has_room() {
                        rng = rng
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let first = (rng >> 33) % (blocks + 2);
                        let n = if submitted % 5 == 0 {
                            1 + (rng >> 20) % 40
                        } else {
                            1
                        };
                        s.submit(ReadRequest {
                            tag: first,
                            offset: first * BLOCK_SIZE as u64,
                            buf: AlignedBuf::new(n as usize),
                        })
                        .unwrap();
                        submitted += 1;
                        assert!(s.in_flight() <= depth as usize);
                    }
                    s.wait(|c| {
                        completed += 1;
                        assert_eq!(c.offset, c.tag * BLOCK_SIZE as u64);
                        check(&c.buf, c.tag, c.result.unwrap(), blocks);
                    })
                    .unwrap();
                }
                drop(s);
                let st = e.counters().snapshot();
                assert!(st.inflight_high_water <= depth as u64);
                assert!(st.bytes_read > 0);
            }
        }
    }

    #[test]
    fn sessions_share_one_depth_budget() {
        let dir = tempfile::tempdir().unwrap();
        let path = pattern_file(dir.path(), 64);
        for e in engines(&path, 4) {
            std::thread::scope(|sc| {
                for t in 0..2u64 {
                    let e = &e;
                    sc.spawn(move || {
                        let mut s = e.session().unwrap();
                        let mut left = 200;
                        let mut next = t;
                        while left > 0 {
                            while left > s.in_flight() && s.has_room() {
                                next = (next + 7) % 64;
                                s.submit(ReadRequest {
                                    tag: next,
                                    offset: next * BLOCK_SIZE as u64,
                                    buf: AlignedBuf::new(1),
                                })
                                .unwrap();
                            }
                            s.wait(|c| {
                                left -= 1;
                                check(&c.buf, c.tag, c.result.unwrap(), 64);
                            })
                            .unwrap();
                        }
                    });
                }
            });
            // Four shared, plus at most one overdraft for a session that had nothing in flight.
            assert!(e.counters().snapshot().inflight_high_water <= 5);
        }
    }

    #[test]
    fn a_flush_hands_queued_reads_to_the_kernel_before_any_wait() {
        let dir = tempfile::tempdir().unwrap();
        let path = pattern_file(dir.path(), 16);
        for e in engines(&path, 8) {
            let mut s = e.session().unwrap();
            submit_first_blocks(&mut s, 4);
            #[cfg(target_os = "linux")]
            if let SessionInner::Uring(u) = &mut s.inner {
                assert_eq!(
                    u.unsubmitted(),
                    4,
                    "submissions are batched until a flush or wait"
                );
            }
            s.flush().unwrap();
            #[cfg(target_os = "linux")]
            if let SessionInner::Uring(u) = &mut s.inner {
                assert_eq!(u.unsubmitted(), 0, "the flush left reads in the ring");
            }
            let mut left = 4;
            while left > 0 {
                s.wait(|c| {
                    left -= 1;
                    check(&c.buf, c.tag, c.result.unwrap(), 16);
                })
                .unwrap();
            }
        }
    }

    #[test]
    fn dropping_a_session_with_reads_in_flight_is_safe() {
        let dir = tempfile::tempdir().unwrap();
        let path = pattern_file(dir.path(), 32);
        for e in engines(&path, 8) {
            let mut s = e.session().unwrap();
            submit_first_blocks(&mut s, 8);
            drop(s);
            // The budget came back: a new session gets the full depth.
            let mut s = e.session().unwrap();
            let mut n = 0;
            while s.has_room() && n < 20 {
                s.submit(ReadRequest {
                    tag: 0,
                    offset: 0,
                    buf: AlignedBuf::new(1),
                })
                .unwrap();
                n += 1;
            }
            assert_eq!(n, 8);
            let buf = e.read_blocks(3, 2).unwrap();
            check(&buf, 3, 2 * BLOCK_SIZE, 32);
        }
    }

    #[test]
    fn works_without_o_direct_and_on_tmpfs() {
        let dir = tempfile::tempdir().unwrap();
        let path = pattern_file(dir.path(), 8);
        let e = IoEngine::open(
            &path,
            &EngineOptions {
                direct: false,
                ..EngineOptions::default()
            },
            Arc::new(IoCounters::default()),
        )
        .unwrap();
        assert!(!e.direct());
        check(&e.read_blocks(1, 3).unwrap(), 1, 3 * BLOCK_SIZE, 8);
        // /dev/shm is tmpfs where present: O_DIRECT may be refused there, reads must still work.
        if let Ok(shm) = tempfile::tempdir_in("/dev/shm") {
            let path = pattern_file(shm.path(), 8);
            for e in engines(&path, 4) {
                eprintln!("tmpfs: {}", e.describe());
                check(&e.read_blocks(0, 8).unwrap(), 0, 8 * BLOCK_SIZE, 8);
            }
        }
    }

    #[test]
    fn a_missing_file_names_the_path() {
        let err = IoEngine::open(
            Path::new("/nonexistent/graph.frontier"),
            &EngineOptions::default(),
            Arc::new(IoCounters::default()),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/graph.frontier"),
            "{err}"
        );
    }
}
