//! Delta-stepping SSSP (Meyer & Sanders; the GAPBS formulation with bucket fusion) for graphs
//! held in memory.
//!
//! Vertices are kept in bins of distance width `delta`: a distance `d` belongs to bin
//! `min(d / delta, LAST_BIN)`. The lowest non-empty bin is the frontier; relaxing its out-edges
//! (compare-exchange min on the distance's bits) puts every improved vertex into the bin of its
//! new distance, in a bin vector private to the worker. A worker whose own entries for the
//! current bin are few keeps relaxing them itself (bucket fusion) instead of waiting for the
//! next round; a round ends when every worker is out of work for the current bin, and the next
//! lowest non-empty bin across workers follows.
//!
//! No per-vertex queue state is kept: an entry whose vertex has since moved to a lower bin is
//! stale and skipped, and an improvement that stays within a later bin the vertex is already
//! queued in adds no second entry. Each vertex is thus relaxed once per bin it settles in.
//!
//! Distances are f64 in general. When every weight is a whole number (or the graph is
//! unweighted) and no path can reach `u32::MAX`, they are u32, as GAPBS keeps them: the sums are
//! exact either way, so the results are the same bits, and the array each relaxation updates at
//! random is half the size.
//!
//! With non-negative weights a new distance never falls below the current bin. One that does
//! proves a negative weight; the run stops and [`shortest_paths`] hands over to Bellman-Ford, so
//! weights need no pass of their own before the run.
//!
//! Compared with frontier Bellman-Ford (the path every store supports), vertices far from the
//! source are not relaxed again and again with distances that later improve. It is the
//! bucketed-relaxation operator SSSP uses when it applies ([`shortest_paths`]): the graph in
//! memory, the state local, the weights non-negative; `sssp::compute` falls back to
//! Bellman-Ford over EdgeMap otherwise.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock};

use planner::registry::Operator;
use storage::{CsrView, Direction, WeightSlice};

use crate::context::RunContext;
use crate::error::ExecError;
use crate::prefetch::prefetch;
use crate::spin_barrier::SpinBarrier;
use crate::state::StateValue;
use storage::GraphStore;

/// A worker's report of having no non-empty bin left.
const NO_BIN: usize = usize::MAX;
/// Frontier vertices a worker claims at a time.
const GRAIN: usize = 64;
/// The last bin: every distance from `LAST_BIN * delta` on shares it, and it is relaxed
/// label-correcting (again until it stays empty). It bounds a worker's bin vector however far
/// the distances reach.
const LAST_BIN: usize = 1 << 20;
/// A worker's own entries for the current bin below this many are relaxed at once by the
/// worker (bucket fusion); more wait for the next round, where all workers share them.
const FUSE_BELOW: usize = 1000;
/// How far ahead, in frontier entries or neighbours, their loads are started: each
/// improvement's compare-exchange stops the core from running ahead to the next loads itself.
const PREFETCH_AHEAD: usize = 8;

/// Distances from `source` by delta-stepping, or `None` when it does not apply (the graph is
/// not in memory, the run keeps its state remote, or a weight met on the way is negative).
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
    let delta = pick_delta(&csr, average_degree);
    ctx.record(Operator::DeltaStepping);
    let whole = csr
        .whole_weight_max
        .filter(|&max| u64::from(max) * u64::from(shape.vertices) < u64::from(u32::MAX));
    match whole {
        Some(_) => compute::<S, u32>(ctx, csr, source, delta).transpose(),
        None => compute::<S, f64>(ctx, csr, source, delta).transpose(),
    }
}

/// A distance as delta-stepping keeps it per vertex: a state value (its cell, loads, lowering)
/// that can also add weights.
pub trait Distance: StateValue {
    /// Unreached.
    const INFINITY: Self;
    const ZERO: Self;
    /// The weight of an unweighted edge.
    const ONE: Self;
    fn plus(self, w: Self) -> Self;
    fn from_wide(w: f64) -> Self;
    fn from_narrow(w: f32) -> Self;
    fn to_f64(self) -> f64;
}

impl Distance for f64 {
    const INFINITY: f64 = f64::INFINITY;
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    #[inline]
    fn plus(self, w: f64) -> f64 {
        self + w
    }
    #[inline]
    fn from_wide(w: f64) -> f64 {
        w
    }
    #[inline]
    fn from_narrow(w: f32) -> f64 {
        f64::from(w)
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
}

/// Only used when every weight is a whole number and `max weight × |V|` stays below
/// `u32::MAX`, so no sum reaches [`Distance::INFINITY`].
impl Distance for u32 {
    const INFINITY: u32 = u32::MAX;
    const ZERO: u32 = 0;
    const ONE: u32 = 1;
    #[inline]
    fn plus(self, w: u32) -> u32 {
        self.saturating_add(w)
    }
    #[inline]
    fn from_wide(w: f64) -> u32 {
        w as u32
    }
    #[inline]
    fn from_narrow(w: f32) -> u32 {
        w as u32
    }
    #[inline]
    fn to_f64(self) -> f64 {
        if self == u32::MAX {
            f64::INFINITY
        } else {
            f64::from(self)
        }
    }
}

/// The bin width: a quarter of the mean weight over the average degree (Meyer and Sanders'
/// Θ(1/d) for random weights). Wide bins relax vertices again through light edges; narrow bins
/// cost a round, with a barrier across the workers, each. On R-MAT graphs this width examines
/// each arc little more than once; a wider bin saves rounds but relaxes many arcs again. The mean
/// is taken over a sample; a sample without a positive mean counts as weight 1.
pub fn pick_delta(csr: &CsrView<'_>, average_degree: f64) -> f64 {
    let per_degree = 1.0 / (4.0 * average_degree.max(1.0));
    let weights = match csr.weights {
        Some(w) => w,
        None => return per_degree,
    };
    let step = (weights.len() / 4096).max(1);
    let (sum, count) = (0..weights.len())
        .step_by(step)
        .filter_map(|k| weights.get(k))
        .filter(|w| w.is_finite())
        .fold((0.0, 0u64), |(s, c), w| (s + w, c + 1));
    let mean = if count == 0 { 1.0 } else { sum / count as f64 };
    per_degree * if mean > 0.0 { mean } else { 1.0 }
}

/// The bin of distance `d`.
#[inline]
fn bin_of<D: Distance>(d: D, delta: f64) -> usize {
    // `as` saturates: +∞ and huge quotients land in the last bin.
    ((d.to_f64() / delta) as usize).min(LAST_BIN)
}

/// What the workers share in one round.
struct Round<'r, D: Distance> {
    csr: &'r CsrView<'r>,
    dist: &'r [D::Cell],
    delta: f64,
    /// The bin being relaxed.
    current: usize,
    /// Set when a relaxation went below the current bin: a negative weight.
    negative: &'r AtomicBool,
}

impl<D: Distance> Round<'_, D> {
    /// Relaxes the out-edges of `u` (one entry of the current bin) into `mine`; the number of
    /// edges examined (0 for a stale entry).
    #[inline]
    fn relax(&self, u: u32, mine: &mut Vec<Vec<u32>>) -> u64 {
        let du = D::load(&self.dist[u as usize]);
        // `u` moved to a lower bin since this entry was made, and was relaxed there.
        if bin_of(du, self.delta) < self.current {
            return 0;
        }
        let ns = self.csr.neighbours(u);
        match self.csr.weights_of(u) {
            Some(WeightSlice::Wide(ws)) => {
                self.relax_list(du, ns, ws.iter().map(|&w| D::from_wide(w)), mine)
            }
            Some(WeightSlice::Narrow(ws)) => {
                self.relax_list(du, ns, ws.iter().map(|&w| D::from_narrow(w)), mine)
            }
            None => self.relax_list(du, ns, std::iter::repeat(D::ONE), mine),
        }
        ns.len() as u64
    }

    /// Starts loading what relaxing entry `u` reads first: its distance and index entry.
    #[inline]
    fn prefetch_entry(&self, u: u32) {
        if let Some(d) = self.dist.get(u as usize) {
            prefetch(d);
            prefetch(&self.csr.starts[u as usize]);
            prefetch(&self.csr.degrees[u as usize]);
        }
    }

    #[inline]
    fn relax_list(&self, du: D, ns: &[u32], ws: impl Iterator<Item = D>, mine: &mut Vec<Vec<u32>>) {
        for (k, (&v, w)) in ns.iter().zip(ws).enumerate() {
            if let Some(d) = ns
                .get(k + PREFETCH_AHEAD)
                .and_then(|&a| self.dist.get(a as usize))
            {
                prefetch(d);
            }
            let nd = du.plus(w);
            if let Some(old) = D::lower_from(&self.dist[v as usize], nd) {
                self.queue(v, old, nd, mine);
            }
        }
    }

    /// Files `v`, lowered from `old` to `new`, in the bin of `new`.
    #[inline]
    fn queue(&self, v: u32, old: D, new: D, mine: &mut Vec<Vec<u32>>) {
        let bin = bin_of(new, self.delta);
        if bin < self.current {
            self.negative.store(true, Ordering::Relaxed);
            return;
        }
        // A later bin that already holds an entry of `v` (made when it got `old`, not yet
        // relaxed since that bin's turn has not come) relaxes it with `new`.
        if bin > self.current && old < D::INFINITY && bin_of(old, self.delta) == bin {
            return;
        }
        if mine.len() <= bin {
            mine.resize_with(bin + 1, Vec::new);
        }
        mine[bin].push(v);
    }
}

/// Distances from `source` by delta-stepping with bin width `delta` (+∞ when unreachable), or
/// `None` when a negative weight was met.
pub fn compute<S: GraphStore, D: Distance>(
    ctx: &RunContext<'_, S>,
    csr: CsrView<'_>,
    source: u32,
    delta: f64,
) -> Result<Option<Vec<f64>>, ExecError> {
    let n = ctx.n() as usize;
    if (source as usize) >= n {
        return Ok(Some(vec![f64::INFINITY; n]));
    }
    let dist: Vec<D::Cell> = ctx.pool.filled_vec(n, |_| D::cell(D::INFINITY));
    D::store(&dist[source as usize], D::ZERO);
    let negative = AtomicBool::new(false);
    let workers = ctx.pool.threads();
    let bins: Vec<Mutex<Vec<Vec<u32>>>> = (0..workers).map(|_| Mutex::new(Vec::new())).collect();
    // The rounds run inside one broadcast, separated by a spinning barrier: a broadcast per
    // round would park and wake the workers every round (`spin_barrier`).
    let barrier = SpinBarrier::new(workers);
    let frontier = RwLock::new(vec![source]);
    let current = AtomicUsize::new(0);
    let cursor = AtomicUsize::new(0);
    let edges = AtomicU64::new(0);
    let entries = AtomicU64::new(1);
    let lowest: Vec<AtomicUsize> = (0..workers).map(|_| AtomicUsize::new(NO_BIN)).collect();
    let round_start = Mutex::new(Some(ctx.begin()));
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<ExecError>> = Mutex::new(None);
    let fail = |e: ExecError| {
        *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
        stop.store(true, Ordering::Relaxed);
    };
    ctx.check()?;
    ctx.pool.broadcast(|w| {
        while !stop.load(Ordering::Relaxed) {
            // Every worker relaxes claimed grains of the frontier into its own bins, then its
            // own few entries for the current bin, then reports its lowest non-empty bin.
            let current_bin = current.load(Ordering::Relaxed);
            let round = Round::<D> {
                csr: &csr,
                dist: &dist,
                delta,
                current: current_bin,
                negative: &negative,
            };
            {
                let frontier = frontier.read().unwrap_or_else(|p| p.into_inner());
                let mut mine = bins[w].lock().unwrap_or_else(|p| p.into_inner());
                let mut examined = 0u64;
                loop {
                    let i = cursor.fetch_add(GRAIN, Ordering::Relaxed);
                    if i >= frontier.len() || negative.load(Ordering::Relaxed) {
                        break;
                    }
                    let grain = &frontier[i..(i + GRAIN).min(frontier.len())];
                    for (k, &u) in grain.iter().enumerate() {
                        if let Some(&ahead) = grain.get(k + PREFETCH_AHEAD) {
                            round.prefetch_entry(ahead);
                        }
                        examined += round.relax(u, &mut mine);
                    }
                }
                let mut fused = Vec::new();
                while let Some(bin) = mine.get_mut(current_bin) {
                    // A long chain of light edges can stay in this loop; Ctrl-C ends it.
                    if bin.is_empty()
                        || bin.len() >= FUSE_BELOW
                        || negative.load(Ordering::Relaxed)
                        || ctx.check().is_err()
                    {
                        break;
                    }
                    std::mem::swap(bin, &mut fused);
                    entries.fetch_add(fused.len() as u64, Ordering::Relaxed);
                    for &u in &fused {
                        examined += round.relax(u, &mut mine);
                    }
                    fused.clear();
                }
                edges.fetch_add(examined, Ordering::Relaxed);
                let low = mine
                    .iter()
                    .enumerate()
                    .skip(current_bin)
                    .find(|(_, b)| !b.is_empty())
                    .map_or(NO_BIN, |(i, _)| i);
                lowest[w].store(low, Ordering::Relaxed);
            }
            // The last worker to arrive closes the round while the others wait.
            barrier.wait_then(|| {
                let start = round_start.lock().unwrap_or_else(|p| p.into_inner()).take();
                let finished = start.map_or(Ok(()), |start| {
                    ctx.finish(
                        start,
                        entries.swap(0, Ordering::Relaxed),
                        edges.swap(0, Ordering::Relaxed),
                        "delta",
                        None,
                    )
                });
                let next = lowest.iter().map(|l| l.load(Ordering::Relaxed)).min();
                match (finished.and_then(|_| ctx.check()), next) {
                    (Err(e), _) => fail(e),
                    _ if negative.load(Ordering::Relaxed) => stop.store(true, Ordering::Relaxed),
                    (Ok(()), None | Some(NO_BIN)) => stop.store(true, Ordering::Relaxed),
                    (Ok(()), Some(next)) => {
                        let mut frontier = frontier.write().unwrap_or_else(|p| p.into_inner());
                        frontier.clear();
                        for b in &bins {
                            let mut theirs = b.lock().unwrap_or_else(|p| p.into_inner());
                            if let Some(bin) = theirs.get_mut(next) {
                                frontier.append(bin);
                            }
                        }
                        entries.store(frontier.len() as u64, Ordering::Relaxed);
                        cursor.store(0, Ordering::Relaxed);
                        current.store(next, Ordering::Relaxed);
                        *round_start.lock().unwrap_or_else(|p| p.into_inner()) = Some(ctx.begin());
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if negative.load(Ordering::Relaxed) {
        return Ok(None);
    }
    Ok(Some(dist.iter().map(|d| D::load(d).to_f64()).collect()))
}
