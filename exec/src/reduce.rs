//! Edge reduce: `out[v] = finish(Σ_{u → v} values[u])` for every vertex, the aggregation of
//! PageRank (and of any kernel that sums over its in-neighbours); weighted, each term is
//! multiplied by the edge's weight (weighted PageRank), and [`EdgeReduce::out_weights`] gives
//! every vertex's sum of out-edge weights.
//!
//! Strategies, picked by the operator and not the kernel:
//! * **blocked pull** — in memory, on graphs large enough to outgrow the caches, when the
//!   planner found room for the copy and the run is long enough to pay for building it, or
//!   the open graph keeps one (`RunConfig::segmented_pull`): the in-edges are copied
//!   segment by segment ([`crate::gather`]), so each sweep's random reads stay in one
//!   cache-sized slice of `values`; the copy is built once per query, or once per open graph
//!   where the engine keeps it ([`crate::kept_pull`]);
//! * **pull** — every worker owns a slice of `out` and sums its vertices' in-lists (CSR slices
//!   in memory, `scan_lists` or fetched lists out of core): no atomics, and the sum follows
//!   list order, so the result does not depend on the thread count;
//! * **push** — forced `push`/`block` mode: atomic f64 additions along out-edges;
//! * **remote valrd / refrd** — remote state, collaborative update ([`crate::collab`]): the
//!   contributions are summed per destination on the compute node and sent by value (or by
//!   reference) into the owners' mailboxes; each owner window is summed, `finish`ed and
//!   written once;
//! * **remote direct** — remote state, forced direct update: the vertices are walked in ranges
//!   of one update buffer, each range's values read once and added to `out` along its
//!   out-edges with the memory nodes' pass-by-value add, then `finish` applied range by range.

use std::sync::Arc;

use planner::registry::Operator;
use planner::Mode;
use rayon::prelude::*;
use storage::{Direction, GraphStore};

use crate::balance;
use crate::batched;
use crate::cluster::hubs::Deal;
use crate::collab::round::{Combine, Round};
use crate::collab::sources::Sources;
use crate::collab::{self, UpdateStrategy, Windows};
use crate::context::RunContext;
use crate::error::ExecError;
use crate::gather::SegmentedPull;
use crate::list_sum::{list_sum, Cut};
use crate::lists::{each_list, pass_name, range_lists};
use crate::state::{StateValue, VertexArray};

/// Vertices per pull chunk (fixed, so results do not depend on the thread count).
const CHUNK: usize = 4096;

/// What one reduce did, for PROFILE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reduced {
    pub strategy: &'static str,
    pub edges: u64,
}

/// Runs sum-reduces for one algorithm; keeps the blocked pull's copy between rounds.
pub struct EdgeReduce<'c, 'a, S: GraphStore> {
    ctx: &'c RunContext<'a, S>,
    /// Built (or taken from the open graph) on the first local pull (`None` inside: blocking
    /// does not apply).
    blocked: Option<Option<Arc<SegmentedPull>>>,
    /// Whether the first pull took the copy kept from an earlier run, until PROFILE says so.
    reused: bool,
}

impl<'c, 'a, S: GraphStore> EdgeReduce<'c, 'a, S> {
    pub fn new(ctx: &'c RunContext<'a, S>) -> Self {
        EdgeReduce {
            ctx,
            blocked: None,
            reused: false,
        }
    }

    /// The run this reduce belongs to.
    pub(crate) fn ctx(&self) -> &'c RunContext<'a, S> {
        self.ctx
    }

    /// `out[v] = finish(Σ_{u ∈ in(v)} values[u])` for every vertex.
    pub fn sum(
        &mut self,
        values: &VertexArray<f64>,
        out: &mut VertexArray<f64>,
        finish: impl Fn(f64) -> f64 + Sync,
    ) -> Result<Reduced, ExecError> {
        self.reduce(values, out, false, finish)
    }

    /// `out[v] = finish(Σ_{u → v} values[u] · weight(u → v))` for every vertex (unweighted
    /// graphs: every weight 1).
    pub fn weighted_sum(
        &mut self,
        values: &VertexArray<f64>,
        out: &mut VertexArray<f64>,
        finish: impl Fn(f64) -> f64 + Sync,
    ) -> Result<Reduced, ExecError> {
        self.reduce(values, out, true, finish)
    }

    /// `out[u] = Σ_{u → v} weight(u → v)` for every vertex; fails naming the first vertex
    /// with a negative out-edge weight.
    pub fn out_weights(&mut self, out: &VertexArray<f64>) -> Result<(), ExecError> {
        self.ctx.record(Operator::EdgeReduceSum);
        let ctx = self.ctx;
        let store = ctx.store;
        let negative = std::sync::atomic::AtomicU32::new(u32::MAX);
        let n = ctx.n();
        let split = ctx.split();
        split.settle()?;
        let owned = split.owned();
        let ranges: Vec<std::ops::Range<u32>> = ctx
            .pool
            .word_ranges(n, 1024, 65536)
            .into_iter()
            .map(|r| r.start.max(owned.start)..r.end.min(owned.end))
            .filter(|r| r.start < r.end)
            .collect();
        ctx.pool.install(|| {
            ranges.par_iter().try_for_each(|r| {
                ctx.check()?;
                let mut sums = vec![0.0; (r.end - r.start) as usize];
                range_lists(
                    store,
                    ctx.cfg.mode,
                    Direction::Out,
                    r.clone(),
                    true,
                    |u, ns, ws| {
                        let w: f64 = match ws {
                            Some(ws) => ws.iter().sum(),
                            None => ns.len() as f64,
                        };
                        if ws.is_some_and(|ws| ws.iter().any(|&w| w < 0.0)) {
                            negative.fetch_min(u, std::sync::atomic::Ordering::Relaxed);
                        }
                        if let Some(slot) = sums.get_mut((u - r.start) as usize) {
                            *slot = w;
                        }
                    },
                )?;
                out.write_range(r.start, &sums)
            })
        })?;
        let negative = split.min_u64(Some(negative.into_inner() as u64))?;
        match negative.map_or(u32::MAX, |v| v as u32) {
            u32::MAX => Ok(()),
            v => Err(ExecError::Other(format!(
                "vertex {} has an out-edge of negative weight: weighted sums need weights >= 0",
                store.input_id(v)
            ))),
        }
    }

    fn reduce(
        &mut self,
        values: &VertexArray<f64>,
        out: &mut VertexArray<f64>,
        weighted: bool,
        finish: impl Fn(f64) -> f64 + Sync,
    ) -> Result<Reduced, ExecError> {
        self.ctx.record(Operator::EdgeReduceSum);
        let ctx = self.ctx;
        ctx.check()?;
        let arcs = ctx.store.shape().arcs;
        let (Some(vals), Some(cells)) = (values.local(), out.local_mut()) else {
            return self.sum_remote(values, out, weighted, finish);
        };
        let mode = ctx.cfg.mode;
        if matches!(mode, planner::Mode::Push | planner::Mode::Block) {
            push_local(ctx, vals, cells, weighted, &finish)?;
            return Ok(Reduced {
                strategy: pass_name(mode),
                edges: arcs,
            });
        }
        let store = ctx.store;
        let n = cells.len();
        if !weighted {
            let reused = &mut self.reused;
            let blocked = self
                .blocked
                .get_or_insert_with(|| match store.csr(Direction::In) {
                    Some(csr) if ctx.cfg.segmented_pull => {
                        let kept = ctx.cfg.kept_pull.as_deref();
                        if let Some(pull) = kept.and_then(|k| k.get(n)) {
                            *reused = true;
                            return Some(pull);
                        }
                        let pull = ctx.pool.install(|| SegmentedPull::new(&csr, n, n))?;
                        let pull = Arc::new(pull);
                        if let Some(k) = kept {
                            k.keep(pull.clone());
                        }
                        Some(pull)
                    }
                    _ => None,
                });
            if let Some(pull) = blocked {
                ctx.pool
                    .install(|| pull.sum(vals, cells, &|| ctx.check(), &finish))?;
                return Ok(Reduced {
                    strategy: if std::mem::take(&mut self.reused) {
                        "blocked pull, kept"
                    } else {
                        "blocked pull"
                    },
                    edges: arcs,
                });
            }
        }
        pull_local(ctx, vals, cells, weighted, &finish)?;
        Ok(Reduced {
            strategy: pass_name(mode),
            edges: arcs,
        })
    }

    fn sum_remote(
        &self,
        values: &VertexArray<f64>,
        out: &VertexArray<f64>,
        weighted: bool,
        finish: impl Fn(f64) -> f64 + Sync,
    ) -> Result<Reduced, ExecError> {
        let ctx = self.ctx;
        let n = ctx.n();
        let split = ctx.split();
        split.settle()?;
        let windows = Windows::for_budget(n, ctx.placement().budget(), ctx.pool.threads());
        let strategy = collab::choose(ctx.cfg.dm_update, ctx.store.shape().arcs, &windows);
        // The owned vertices, plus the hubs dealt out across the members (their slices).
        let (spans, deal) = ctx.push_spans_all(&[Direction::Out]);
        if strategy != UpdateStrategy::Direct {
            let sources = Sources::spans(spans);
            let round = Round {
                sources: &[],
                dirs: &[Direction::Out],
                weighted,
                strategy,
                combine: Combine::Add,
                deal: &deal,
                fresh: true,
                windows,
            };
            let read = |chunk: &[u32]| -> Result<Vec<Option<f64>>, ExecError> {
                let r = match (chunk.first(), chunk.last()) {
                    (Some(&a), Some(&b)) if (b - a) as usize + 1 == chunk.len() => {
                        let mut r = vec![0.0; chunk.len()];
                        values.read_range(a, &mut r)?;
                        r
                    }
                    _ => values.read_at(chunk)?,
                };
                Ok(r.into_iter().map(Some).collect())
            };
            let emit = |_, x, _, w| Some(x * w);
            let (_, edges) =
                collab::round::run_over(ctx, out, round, &sources, read, emit, finish)?;
            return Ok(Reduced {
                strategy: strategy.profile_name(),
                edges,
            });
        }
        // Direct update pushes from the owned range in spans of a buffer each.
        drop(spans);
        let buffer = ctx.placement().buffer_len(ctx.pool.threads());
        let owned = split.owned();
        let ranges: Vec<(u32, u32)> = owned
            .clone()
            .step_by(buffer)
            .map(|a| (a, a.saturating_add(buffer as u32).min(owned.end)))
            .collect();
        ctx.pool.install(|| {
            ranges
                .par_iter()
                .try_for_each(|&(a, b)| out.write_range(a, &vec![0.0; (b - a) as usize]))
        })?;
        // Every member's part is zero before any member adds into it.
        split.settle()?;
        let mut edges = ctx.pool.install(|| {
            ranges
                .par_iter()
                .map(|&(a, b)| push_range(ctx, values, out, (a, b), buffer, weighted, &deal))
                .sum::<Result<u64, ExecError>>()
        })?;
        // Other members' hubs dealt out: this member's slices of their lists.
        let foreign: Vec<u32> = deal
            .hubs()
            .iter()
            .copied()
            .filter(|v| !owned.contains(v))
            .collect();
        if !foreign.is_empty() {
            let contributions = values.read_at(&foreign)?;
            let lists = batched::RoundLists {
                frontier: &foreign,
                dirs: &[Direction::Out],
                want_weights: weighted,
                buffer_len: buffer,
                deal: &deal,
            };
            let (_, hub_edges) = batched::push(
                ctx,
                lists,
                |u| foreign.binary_search(&u).map_or(0.0, |k| contributions[k]),
                |&c, v, w| Some((v, c * w)),
                |buf: &mut Vec<(u32, f64)>| {
                    out.add_anywhere(buf)?;
                    buf.clear();
                    Ok(Vec::<()>::new())
                },
                |_: &mut Vec<()>| {},
            )?;
            edges += hub_edges;
        }
        // Every member's additions are in before any member finishes its sums.
        split.settle()?;
        ctx.pool.install(|| {
            ranges.par_iter().try_for_each(|&(a, b)| {
                ctx.check()?;
                let mut s = vec![0.0; (b - a) as usize];
                out.read_range(a, &mut s)?;
                for x in &mut s {
                    *x = finish(*x);
                }
                out.write_range(a, &s)
            })
        })?;
        Ok(Reduced {
            strategy: batched::STRATEGY,
            edges,
        })
    }
}

/// The local pull: every worker owns a slice of `out`.
fn pull_local<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    values: &[<f64 as StateValue>::Cell],
    out: &mut [<f64 as StateValue>::Cell],
    weighted: bool,
    finish: &(impl Fn(f64) -> f64 + Sync),
) -> Result<(), ExecError> {
    let store = ctx.store;
    let csr = store.csr(Direction::In);
    let value = |u: u32| values.get(u as usize).map_or(0.0, f64::load);
    // Where the blocked pull would cut the lists: the same order of additions, the same bits.
    let cut = planner::blocking::segment_width(values.len() as u64)
        .and_then(|w| Cut::new(w.min(u32::MAX as u64) as u32));
    // Ranges hold equal work, not equal vertex counts (hubs may come first); the sums do not
    // depend on the cutting.
    let Some(csr) = csr else {
        return pull_scans(ctx, values, out, weighted, cut, finish);
    };
    let ranges = balance::list_ranges(ctx, Direction::In, out.len() as u32, CHUNK, CHUNK);
    let parts = balance::split_by_ranges(out, &ranges);
    ctx.pool.install(|| {
        parts
            .into_par_iter()
            .zip(ranges.par_iter())
            .try_for_each(|(out, r)| {
                ctx.check()?;
                let first = r.start;
                if weighted {
                    let mut scratch = Vec::new();
                    for (i, slot) in out.iter_mut().enumerate() {
                        let v = first + i as u32;
                        let ws = csr.weights_f64(v, &mut scratch);
                        let sum = weighted_terms(csr.neighbours(v), ws, value);
                        *slot.get_mut() = finish(sum).to_bits();
                    }
                } else {
                    // The range's index entries as slices: one bounds check a range, not two
                    // a vertex.
                    let span = r.start as usize..r.end as usize;
                    let (starts, degrees) = (&csr.starts[span.clone()], &csr.degrees[span]);
                    for ((slot, &s), &d) in out.iter_mut().zip(starts).zip(degrees) {
                        let s = s as usize;
                        let sum = list_sum(&csr.targets[s..s + d as usize], values, cut);
                        *slot.get_mut() = finish(sum).to_bits();
                    }
                }
                Ok(())
            })
    })
}

/// The local pull over a store without an in-memory CSR (out of core): one pass over every list
/// that the workers share, where the store has it ([`GraphStore::scan_all_shared`]); otherwise
/// each range is one sequential scan, the ranges taken from both ends of the file
/// ([`balance::each_scan_range`]).
fn pull_scans<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    values: &[<f64 as StateValue>::Cell],
    out: &mut [<f64 as StateValue>::Cell],
    weighted: bool,
    cut: Option<Cut>,
    finish: &(impl Fn(f64) -> f64 + Sync),
) -> Result<(), ExecError> {
    let store = ctx.store;
    let mode = ctx.cfg.mode;
    let value = |u: u32| values.get(u as usize).map_or(0.0, f64::load);
    let out: &[<f64 as StateValue>::Cell] = out;
    let visit = |v: u32, ns: &[u32], ws: Option<&[f64]>| {
        let sum = match ws {
            Some(_) => weighted_terms(ns, ws, value),
            None => list_sum(ns, values, cut),
        };
        if let Some(slot) = out.get(v as usize) {
            f64::store(slot, finish(sum));
        }
    };
    if matches!(mode, Mode::Pull | Mode::Auto) && out.len() == ctx.n() as usize {
        // One pass the workers share, where the store has it.
        let run_workers = |job: &storage::WorkerJob<'_>| {
            ctx.pool.broadcast(job);
        };
        let stop = || ctx.check().is_err();
        if store.scan_all_shared(Direction::In, weighted, &run_workers, &stop, &visit)? {
            return ctx.check();
        }
    }
    balance::each_scan_range(ctx, Direction::In, out.len() as u32, |range| {
        ctx.check()?;
        range_lists(store, mode, Direction::In, range, weighted, visit)
    })?;
    Ok(())
}

/// The local push: atomic additions along out-edges, then `finish`.
fn push_local<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    values: &[<f64 as StateValue>::Cell],
    out: &mut [<f64 as StateValue>::Cell],
    weighted: bool,
    finish: &(impl Fn(f64) -> f64 + Sync),
) -> Result<(), ExecError> {
    ctx.pool
        .install(|| out.par_iter_mut().for_each(|c| *c.get_mut() = 0));
    let acc = &*out;
    each_list(ctx, Direction::Out, weighted, |u, ns, ws| {
        let c = values.get(u as usize).map_or(0.0, f64::load);
        for (k, &v) in ns.iter().enumerate() {
            if let Some(a) = acc.get(v as usize) {
                f64::add(a, c * weight_at(ws, k));
            }
        }
    })?;
    ctx.pool.install(|| {
        out.par_iter_mut()
            .for_each(|c| *c.get_mut() = finish(f64::from_bits(*c.get_mut())).to_bits())
    });
    Ok(())
}

/// Adds the values of `a..b` to `out` along their out-edges (of a dealt hub, this member's
/// slice); returns the edges examined.
fn push_range<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    values: &VertexArray<f64>,
    out: &VertexArray<f64>,
    (a, b): (u32, u32),
    buffer: usize,
    weighted: bool,
    deal: &Deal,
) -> Result<u64, ExecError> {
    ctx.check()?;
    let mut r = vec![0.0; (b - a) as usize];
    values.read_range(a, &mut r)?;
    let mut buf: Vec<(u32, f64)> = Vec::with_capacity(buffer);
    let mut edges = 0u64;
    let mut failed = None;
    ctx.store
        .scan_lists(Direction::Out, a..b, weighted, |u, ns, ws| {
            if failed.is_some() || ns.is_empty() {
                return;
            }
            let part = deal.part(u, ns.len());
            let (first, ns) = (part.start, &ns[part]);
            edges += ns.len() as u64;
            let c = r[(u - a) as usize];
            for (k, &v) in ns.iter().enumerate() {
                buf.push((v, c * weight_at(ws, first + k)));
                if buf.len() >= buffer {
                    if let Err(e) = out.add_anywhere(&buf) {
                        failed = Some(e);
                        return;
                    }
                    buf.clear();
                }
            }
        })?;
    if let Some(e) = failed {
        return Err(e);
    }
    out.add_anywhere(&buf)?;
    Ok(edges)
}

/// The weight of the `k`th edge of a list (1 without weights).
#[inline]
fn weight_at(ws: Option<&[f64]>, k: usize) -> f64 {
    ws.and_then(|w| w.get(k)).copied().unwrap_or(1.0)
}

/// `Σ value(u) · weight` over one in-list.
#[inline]
fn weighted_terms(ns: &[u32], ws: Option<&[f64]>, value: impl Fn(u32) -> f64) -> f64 {
    ns.iter()
        .enumerate()
        .map(|(k, &u)| value(u) * weight_at(ws, k))
        .sum()
}
