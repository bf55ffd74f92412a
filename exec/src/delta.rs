//! Delta-stepping SSSP (Meyer & Sanders; the GAPBS formulation) for graphs held in memory.
//!
//! Vertices are kept in bins of distance width `delta`. The lowest non-empty bin is the frontier;
//! relaxing its out-edges (compare-exchange min on the distance's bits) puts every improved
//! vertex into the bin of its new distance, in a bin vector private to the worker. A bin is
//! processed until it stays empty, then the next lowest non-empty bin across workers follows.
//! `queued[v]` is the lowest bin holding an unprocessed entry of `v`: a vertex that improves
//! again within a bin it is already queued in is not queued twice, and an entry for a bin other
//! than `queued[v]` is stale and skipped. So a vertex is relaxed once per bin it settles in.
//!
//! Compared with frontier Bellman-Ford (the path every store supports), vertices far from the
//! source are not relaxed again and again with distances that later improve. It is the
//! bucketed-relaxation operator SSSP uses when it applies ([`shortest_paths`]): the graph in
//! memory, the state local, the weights non-negative; `sssp::compute` falls back to
//! Bellman-Ford over EdgeMap otherwise.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use planner::registry::Operator;
use storage::{CsrView, Direction};

use crate::context::RunContext;
use crate::error::ExecError;
use crate::state::StateValue;
use storage::GraphStore;

/// Frontier vertices a worker claims at a time.
const GRAIN: usize = 64;
/// Bins ahead of the current one a distance may open; farther ones are binned early (still
/// correct: a vertex is processed with its current distance whenever its entry comes up).
const MAX_BINS_AHEAD: usize = 1 << 20;
/// `queued[v]` when `v` has no unprocessed entry.
const NOT_QUEUED: u32 = u32::MAX;

/// Distances from `source` by delta-stepping, or `None` when it does not apply (the graph is
/// not in memory, the run keeps its state remote, or a weight is negative or not a number).
pub fn shortest_paths<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    source: u32,
) -> Option<Result<Vec<f64>, ExecError>> {
    if ctx.placement().is_remote() {
        return None;
    }
    let csr = ctx.store.csr(Direction::Out)?;
    let shape = ctx.store.shape();
    let average_degree = shape.arcs as f64 / f64::from(shape.vertices.max(1));
    let delta = pick_delta(&csr, average_degree)?;
    ctx.record(Operator::DeltaStepping);
    Some(compute(ctx, csr, source, delta))
}

/// The bin width: a quarter of the mean weight over the average degree (Meyer and Sanders'
/// Θ(1/d) for random weights). Wide bins relax vertices again through light edges, narrow bins
/// only add cheap bin steps, so it errs narrow. The mean is taken over a sample.
/// `None` when a weight is negative or not a number.
pub fn pick_delta(csr: &CsrView<'_>, average_degree: f64) -> Option<f64> {
    let per_degree = 1.0 / (4.0 * average_degree.max(1.0));
    let weights = match csr.weights {
        Some(w) => w,
        None => return Some(per_degree),
    };
    if weights.iter().any(|w| w.is_nan() || *w < 0.0) {
        return None;
    }
    let step = (weights.len() / 4096).max(1);
    let (sum, count) = weights
        .iter()
        .step_by(step)
        .fold((0.0, 0u64), |(s, c), &w| (s + w, c + 1));
    let mean = if count == 0 { 1.0 } else { sum / count as f64 };
    Some(per_degree * if mean > 0.0 { mean } else { 1.0 })
}

/// Distances from `source` by delta-stepping with bin width `delta` (+∞ when unreachable).
pub fn compute<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    csr: CsrView<'_>,
    source: u32,
    delta: f64,
) -> Result<Vec<f64>, ExecError> {
    let n = ctx.n() as usize;
    let dist: Vec<AtomicU64> =
        storage::huge::collect((0..n).map(|_| AtomicU64::new(f64::INFINITY.to_bits())));
    if (source as usize) >= n {
        return Ok(vec![f64::INFINITY; n]);
    }
    dist[source as usize].store(0f64.to_bits(), Ordering::Relaxed);
    let queued: Vec<AtomicU32> = storage::huge::collect((0..n).map(|_| AtomicU32::new(NOT_QUEUED)));
    queued[source as usize].store(0, Ordering::Relaxed);
    let workers = ctx.pool.threads();
    let bins: Vec<Mutex<Vec<Vec<u32>>>> = (0..workers).map(|_| Mutex::new(Vec::new())).collect();
    let mut frontier = vec![source];
    let mut current = 0usize;
    loop {
        ctx.check()?;
        let start = ctx.begin();
        let cursor = AtomicUsize::new(0);
        let edges = AtomicU64::new(0);
        // Every worker relaxes claimed grains of the frontier into its own bins, then reports its
        // lowest non-empty bin.
        let lowest = ctx.pool.broadcast(|w| {
            let mut mine = bins[w].lock().unwrap_or_else(|p| p.into_inner());
            let mut examined = 0u64;
            loop {
                let i = cursor.fetch_add(GRAIN, Ordering::Relaxed);
                if i >= frontier.len() {
                    break;
                }
                for &u in &frontier[i..(i + GRAIN).min(frontier.len())] {
                    // Claim u's entry for this bin; any other entry of u here is a duplicate
                    // and an entry for a later bin is stale (u improved into this one).
                    if queued[u as usize]
                        .compare_exchange(
                            current as u32,
                            NOT_QUEUED,
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        )
                        .is_err()
                    {
                        continue;
                    }
                    let du = f64::from_bits(dist[u as usize].load(Ordering::Relaxed));
                    let ns = csr.neighbours(u);
                    examined += ns.len() as u64;
                    let ws = csr.weights_of(u);
                    for (k, &v) in ns.iter().enumerate() {
                        let nd = du + ws.map_or(1.0, |w| w[k]);
                        if f64::lower(&dist[v as usize], nd) {
                            let bin = ((nd / delta) as usize)
                                .clamp(current, current + MAX_BINS_AHEAD)
                                .min(NOT_QUEUED as usize - 1);
                            // Queue v in `bin` unless it is queued there or lower already.
                            if queued[v as usize].fetch_min(bin as u32, Ordering::Relaxed)
                                <= bin as u32
                            {
                                continue;
                            }
                            if mine.len() <= bin {
                                mine.resize_with(bin + 1, Vec::new);
                            }
                            mine[bin].push(v);
                        }
                    }
                }
            }
            edges.fetch_add(examined, Ordering::Relaxed);
            mine.iter()
                .enumerate()
                .skip(current)
                .find(|(_, b)| !b.is_empty())
                .map(|(i, _)| i)
        });
        ctx.finish(
            start,
            frontier.len() as u64,
            edges.into_inner(),
            "delta",
            None,
        )?;
        let Some(next) = lowest.into_iter().flatten().min() else {
            break;
        };
        frontier.clear();
        for b in &bins {
            let mut mine = b.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(bin) = mine.get_mut(next) {
                frontier.append(bin);
            }
        }
        current = next;
    }
    Ok(dist
        .into_iter()
        .map(|d| f64::from_bits(d.into_inner()))
        .collect())
}
