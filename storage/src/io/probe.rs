//! The device probe behind `frontier calibrate`: random 4 KiB reads at each I/O depth and
//! sequential 1 MiB reads, through the same engine the out-of-core reader uses.
//!
//! One sample is a short burst of reads; a figure is the median of several samples, taken
//! round-robin over the depths so that a change in load spreads over all of them rather than
//! bending the curve. A warm-up burst comes first and is discarded. Two submitting threads
//! share each depth (as two workers share the reader's depth), and the process's CPU time
//! per read is recorded. When the machine is loaded or the samples disagree, the report says
//! so in `warnings`: the figures are then a lower bound.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::{AlignedBuf, EngineOptions, IoCounters, IoEngine, ReadRequest};
use crate::blockfile::format::BLOCK_SIZE;
use crate::error::{Result, StoreError};

/// Blocks per sequential read: 1 MiB.
pub const SEQUENTIAL_READ_BLOCKS: usize = 256;
/// Sequential reads in flight (as `fio --bs=1M --iodepth=8`).
pub const SEQUENTIAL_DEPTH: u32 = 8;
/// Samples whose spread ((max - min) / median) exceeds this are reported as unsteady.
const UNSTEADY_SPREAD: f64 = 0.25;
/// A 1-minute load average above this share of the cores is reported as a busy machine.
const BUSY_LOAD_PER_CORE: f64 = 0.5;

/// What to probe.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeOptions {
    /// The I/O depths of the random-read curve.
    pub depths: Vec<u32>,
    /// Size of the temporary probe file (rounded up to 1 MiB, at least 1 MiB).
    pub file_bytes: u64,
    /// Seconds of reads per depth (and for the sequential figure), split into the samples.
    pub seconds_per_depth: f64,
    /// Samples per figure (the median is kept).
    pub samples: u32,
    /// Threads submitting reads at once, sharing the depth.
    pub submitters: u32,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            depths: vec![1, 2, 4, 8, 16, 32, 64, 128, 256],
            file_bytes: 1 << 30,
            seconds_per_depth: 1.0,
            samples: 5,
            submitters: 2,
        }
    }
}

/// Throughput at one I/O depth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DepthResult {
    /// Reads kept in flight.
    pub depth: u32,
    /// 4 KiB reads completed per second (median of the samples).
    pub reads_per_sec: f64,
    /// The same in MB/s (10^6 bytes).
    pub mb_per_sec: f64,
    /// (max - min) / median of the samples' throughput.
    pub spread: f64,
    /// Process CPU time per read, in microseconds (median of the samples).
    pub cpu_us_per_read: f64,
}

/// Sequential throughput: reads of [`SEQUENTIAL_READ_BLOCKS`] blocks walking the file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SequentialResult {
    /// Bytes per read.
    pub read_bytes: u64,
    /// Reads kept in flight.
    pub depth: u32,
    /// MB/s (10^6 bytes, median of the samples).
    pub mb_per_sec: f64,
    /// (max - min) / median of the samples' throughput.
    pub spread: f64,
    /// Process CPU time per read, in microseconds.
    pub cpu_us_per_read: f64,
}

/// What `frontier calibrate` learns about a device.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeReport {
    /// The engine probed, e.g. `io_uring, O_DIRECT`.
    pub engine: String,
    /// Whether the reads bypassed the page cache (if not, the figures measure memory).
    pub direct: bool,
    /// Size of the probe file.
    pub file_bytes: u64,
    /// Samples per figure and submitting threads.
    pub samples: u32,
    pub submitters: u32,
    /// One entry per depth probed, in the order given.
    pub results: Vec<DepthResult>,
    /// Large sequential reads.
    pub sequential: SequentialResult,
    /// The smallest depth after which throughput rises by no more than 10%.
    pub saturation_depth: u32,
    /// The best random-read throughput, in reads/s and MB/s.
    pub peak_reads_per_sec: f64,
    pub peak_mb_per_sec: f64,
    /// 1-minute load averages before and after, and the cores available.
    pub load_before: f64,
    pub load_after: f64,
    pub cores: usize,
    /// Why the figures may be low (a busy machine, unsteady samples); empty when none.
    pub warnings: Vec<String>,
}

/// Removes the probe file however the probe ends.
struct RemoveOnDrop(PathBuf);
impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// One burst's outcome.
#[derive(Debug, Clone, Copy)]
struct Sample {
    reads: u64,
    secs: f64,
    cpu_secs: f64,
}

/// How a burst picks offsets.
#[derive(Clone, Copy)]
enum Pattern {
    /// Uniformly random 4 KiB blocks.
    Random,
    /// Consecutive reads of [`SEQUENTIAL_READ_BLOCKS`] blocks, wrapping at the end of the file.
    Sequential,
}

/// CPU time of the whole process so far (every thread, including the pread pool's).
fn process_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The 1-minute load average, when the system reports one.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => xs[n / 2],
        _ => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// (max - min) / median of positive figures; 0 for fewer than two.
fn spread(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let mut v = xs.to_vec();
    let m = median(&mut v);
    if m <= 0.0 {
        return 0.0;
    }
    (v[v.len() - 1] - v[0]) / m
}

/// Why the probe's figures may be low: a loaded machine, or samples of one figure that
/// disagree (`spreads`: the figure's name and its spread).
pub fn busy_warnings(
    load_before: f64,
    load_after: f64,
    cores: usize,
    spreads: &[(String, f64)],
) -> Vec<String> {
    let mut out = Vec::new();
    let load = load_before.max(load_after);
    if load > BUSY_LOAD_PER_CORE * cores as f64 {
        out.push(format!(
            "the machine is busy (load average {load:.1} on {cores} cores): the figures may be \
             low; run `frontier calibrate` again when it is idle"
        ));
    }
    let unsteady: Vec<String> = spreads
        .iter()
        .filter(|(_, s)| *s > UNSTEADY_SPREAD)
        .map(|(name, s)| format!("{name} ({:.0} %)", 100.0 * s))
        .collect();
    if !unsteady.is_empty() {
        out.push(format!(
            "samples varied by more than {:.0} % at {}: something else used the device or the \
             CPU; more or longer samples (--samples, --seconds) steady the medians",
            100.0 * UNSTEADY_SPREAD,
            unsteady.join(", ")
        ));
    }
    out
}

/// Writes the probe file: `bytes` of pseudo-random data (so no layer can compress it), synced.
fn write_probe_file(path: &Path, bytes: u64) -> Result<()> {
    use std::io::Write;
    const MIB: u64 = 1 << 20;
    let f = File::create(path).map_err(|e| StoreError::io(path, e))?;
    let mut w = std::io::BufWriter::with_capacity(MIB as usize, f);
    let mut chunk = vec![0u8; MIB as usize];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..bytes / MIB {
        for c in chunk.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            c.copy_from_slice(&x.to_le_bytes());
        }
        w.write_all(&chunk).map_err(|e| StoreError::io(path, e))?;
    }
    let f = w
        .into_inner()
        .map_err(|e| StoreError::io(path, e.into_error()))?;
    f.sync_all().map_err(|e| StoreError::io(path, e))
}

/// One burst of `seconds`: `submitters` threads, each with its own session on `engine`, keep
/// reads of `read_blocks` in flight (sharing the engine's depth) following `pattern`.
fn burst(
    engine: &IoEngine,
    submitters: u32,
    read_blocks: usize,
    pattern: Pattern,
    seconds: f64,
    seed: u64,
) -> Result<Sample> {
    let file_blocks = engine.file_len() / BLOCK_SIZE as u64;
    let positions = (file_blocks / read_blocks as u64).max(1);
    let next_sequential = AtomicU64::new(0);
    let reads = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let depth = engine.depth() as usize;
    let cpu0 = process_cpu_secs();
    let start = Instant::now();
    let outcome: Result<()> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..submitters.max(1) as u64)
            .map(|t| {
                let (next_sequential, reads, stop) = (&next_sequential, &reads, &stop);
                s.spawn(move || -> Result<()> {
                    let mut session = engine.session()?;
                    let mut rng = (seed ^ (t + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1;
                    let mut free: Vec<AlignedBuf> =
                        (0..depth).map(|_| AlignedBuf::new(read_blocks)).collect();
                    let mut failed = None;
                    loop {
                        let stopping = stop.load(Ordering::Relaxed)
                            || start.elapsed().as_secs_f64() >= seconds;
                        if stopping {
                            stop.store(true, Ordering::Relaxed);
                        }
                        while !stopping && session.has_room() {
                            let Some(buf) = free.pop() else { break };
                            let position = match pattern {
                                Pattern::Random => {
                                    rng ^= rng << 13;
                                    rng ^= rng >> 7;
                                    rng ^= rng << 17;
                                    rng % positions
                                }
                                Pattern::Sequential => {
                                    next_sequential.fetch_add(1, Ordering::Relaxed) % positions
                                }
                            };
                            session.submit(ReadRequest {
                                tag: 0,
                                offset: position * (read_blocks * BLOCK_SIZE) as u64,
                                buf,
                            })?;
                        }
                        if session.in_flight() == 0 {
                            return Ok(());
                        }
                        session.wait(|c| {
                            if let Err(e) = c.result {
                                failed.get_or_insert(e);
                            }
                            reads.fetch_add(1, Ordering::Relaxed);
                            free.push(c.buf);
                        })?;
                        if let Some(e) = failed.take() {
                            return Err(StoreError::io(engine.path(), e));
                        }
                    }
                })
            })
            .collect();
        let mut first_error = Ok(());
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(StoreError::Other("a probe thread panicked".into())));
            if first_error.is_ok() {
                first_error = r;
            }
        }
        first_error
    });
    outcome?;
    Ok(Sample {
        reads: reads.load(Ordering::Relaxed),
        secs: start.elapsed().as_secs_f64().max(1e-9),
        cpu_secs: (process_cpu_secs() - cpu0).max(0.0),
    })
}

/// Reduces a figure's samples to (median reads/s, spread, median CPU µs per read).
fn summarise(samples: &[Sample]) -> (f64, f64, f64) {
    let rates: Vec<f64> = samples.iter().map(|s| s.reads as f64 / s.secs).collect();
    let mut cpu: Vec<f64> = samples
        .iter()
        .filter(|s| s.reads > 0)
        .map(|s| 1e6 * s.cpu_secs / s.reads as f64)
        .collect();
    (median(&mut rates.clone()), spread(&rates), median(&mut cpu))
}

/// Probes the device under `dir`: writes a temporary file, warms up, then takes
/// `opts.samples` samples of random 4 KiB reads at every depth and of sequential 1 MiB reads,
/// round-robin. The file is removed afterwards. The saturation depth tells the planner how
/// much depth is worth keeping in flight; the sequential figure bounds large scans.
pub fn probe_device(dir: &Path, opts: &ProbeOptions) -> Result<ProbeReport> {
    const MIB: u64 = 1 << 20;
    if opts.depths.is_empty() {
        return Err(StoreError::Other("probe_device: no depths to probe".into()));
    }
    let samples = opts.samples.max(1);
    let submitters = opts.submitters.max(1);
    let bytes = opts.file_bytes.max(MIB).div_ceil(MIB) * MIB;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let path = dir.join(format!(".frontier-probe-{}-{nanos}", std::process::id()));
    let _guard = RemoveOnDrop(path.clone());
    write_probe_file(&path, bytes)?;
    let load_before = load_average().unwrap_or(0.0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    let open = |depth: u32| {
        IoEngine::open(
            &path,
            &EngineOptions {
                depth: depth.max(1),
                ..EngineOptions::default()
            },
            Arc::new(IoCounters::default()),
        )
    };
    let engines: Vec<IoEngine> = opts
        .depths
        .iter()
        .map(|&d| open(d))
        .collect::<Result<_>>()?;
    let sequential_engine = open(SEQUENTIAL_DEPTH)?;
    let sample_secs = opts.seconds_per_depth / samples as f64;
    let mut seed = 0x2545_F491_4F6C_DD1D ^ nanos as u64;
    let mut next_seed = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        seed
    };

    // Warm-up (discarded): wakes the device, the ring and the threads.
    let deepest = engines
        .iter()
        .max_by_key(|e| e.depth())
        .expect("depths are not empty");
    let warm = (sample_secs / 2.0).clamp(0.01, 0.5);
    burst(deepest, submitters, 1, Pattern::Random, warm, next_seed())?;
    burst(
        &sequential_engine,
        submitters,
        SEQUENTIAL_READ_BLOCKS,
        Pattern::Sequential,
        warm,
        0,
    )?;

    let mut random: Vec<Vec<Sample>> = vec![Vec::new(); engines.len()];
    let mut sequential = Vec::new();
    for _ in 0..samples {
        for (i, e) in engines.iter().enumerate() {
            random[i].push(burst(
                e,
                submitters,
                1,
                Pattern::Random,
                sample_secs,
                next_seed(),
            )?);
        }
        sequential.push(burst(
            &sequential_engine,
            submitters,
            SEQUENTIAL_READ_BLOCKS,
            Pattern::Sequential,
            sample_secs,
            0,
        )?);
    }
    let load_after = load_average().unwrap_or(0.0);

    let results: Vec<DepthResult> = engines
        .iter()
        .zip(&random)
        .map(|(e, s)| {
            let (rps, spread, cpu) = summarise(s);
            DepthResult {
                depth: e.depth(),
                reads_per_sec: rps,
                mb_per_sec: rps * BLOCK_SIZE as f64 / 1e6,
                spread,
                cpu_us_per_read: cpu,
            }
        })
        .collect();
    let (seq_rps, seq_spread, seq_cpu) = summarise(&sequential);
    let read_bytes = (SEQUENTIAL_READ_BLOCKS * BLOCK_SIZE) as u64;
    let sequential = SequentialResult {
        read_bytes,
        depth: SEQUENTIAL_DEPTH,
        mb_per_sec: seq_rps * read_bytes as f64 / 1e6,
        spread: seq_spread,
        cpu_us_per_read: seq_cpu,
    };
    let mut spreads: Vec<(String, f64)> = results
        .iter()
        .map(|r| (format!("depth {}", r.depth), r.spread))
        .collect();
    spreads.push(("sequential reads".into(), seq_spread));
    let peak = results
        .iter()
        .map(|r| r.reads_per_sec)
        .fold(0.0f64, f64::max);
    Ok(ProbeReport {
        engine: deepest.describe(),
        direct: deepest.direct(),
        file_bytes: bytes,
        samples,
        submitters,
        saturation_depth: saturation_depth(&results),
        results,
        sequential,
        peak_reads_per_sec: peak,
        peak_mb_per_sec: peak * BLOCK_SIZE as f64 / 1e6,
        warnings: busy_warnings(load_before, load_after, cores, &spreads),
        load_before,
        load_after,
        cores,
    })
}

/// The smallest depth after which the (median) throughput rises by no more than 10%.
fn saturation_depth(results: &[DepthResult]) -> u32 {
    for i in 0..results.len() {
        let best_later = results[i + 1..]
            .iter()
            .map(|r| r.reads_per_sec)
            .fold(0.0f64, f64::max);
        if best_later <= results[i].reads_per_sec * 1.10 {
            return results[i].depth;
        }
    }
    results.last().map_or(1, |r| r.depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_reports_every_depth_and_sequential_reads() {
        let dir = tempfile::tempdir().unwrap();
        let r = probe_device(
            dir.path(),
            &ProbeOptions {
                depths: vec![1, 4],
                file_bytes: 4 << 20,
                seconds_per_depth: 0.06,
                samples: 3,
                submitters: 2,
            },
        )
        .unwrap();
        assert_eq!(r.results.len(), 2);
        assert_eq!((r.samples, r.submitters), (3, 2));
        assert!(r.results.iter().all(|d| d.reads_per_sec > 0.0));
        assert!(r.results.iter().all(|d| d.cpu_us_per_read >= 0.0));
        assert!([1, 4].contains(&r.saturation_depth));
        assert!(r.peak_mb_per_sec > 0.0);
        assert_eq!(r.sequential.read_bytes, 1 << 20);
        assert!(r.sequential.mb_per_sec > 0.0);
        // The probe file is gone.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn medians_ignore_one_outlier() {
        let s = |reads| Sample {
            reads,
            secs: 1.0,
            cpu_secs: 0.0,
        };
        let (rps, spread, _) = summarise(&[s(100), s(5), s(110), s(105), s(95)]);
        assert_eq!(rps, 100.0);
        assert!((spread - 1.05).abs() < 1e-9, "{spread}");
    }

    #[test]
    fn saturation_is_read_from_the_medians() {
        let d = |depth, reads_per_sec| DepthResult {
            depth,
            reads_per_sec,
            mb_per_sec: 0.0,
            spread: 0.0,
            cpu_us_per_read: 0.0,
        };
        let curve = [d(1, 10.0), d(2, 20.0), d(4, 39.0), d(8, 41.0), d(16, 40.0)];
        assert_eq!(saturation_depth(&curve), 4);
    }

    #[test]
    fn a_busy_machine_and_unsteady_samples_are_reported() {
        assert!(busy_warnings(0.2, 0.4, 2, &[("depth 1".into(), 0.1)]).is_empty());
        let w = busy_warnings(3.5, 1.0, 2, &[]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("busy") && w[0].contains("3.5"), "{w:?}");
        let w = busy_warnings(0.0, 0.0, 4, &[("depth 64".into(), 0.6)]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("depth 64 (60 %)"), "{w:?}");
    }
}
