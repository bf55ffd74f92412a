//! PageRank with the exact Graphalytics semantics: PR₀ = 1/|V|; each of exactly `iterations`
//! synchronous rounds computes
//! `PR(v) = (1-d)/|V| + d·Σ_{u→v} PR(u)/outdeg(u) + (d/|V|)·Σ_{sinks w} PR(w)`,
//! i.e. the rank held by sinks (no out-edges) is scaled by d and spread over all vertices.
//!
//! The default is a pull over in-edges with no atomics: `contrib[u] = PR(u)/outdeg(u)` is
//! precomputed, then every worker owns a slice of the next ranks and sums its in-neighbours'
//! contributions (CSR slices when in memory, `scan_lists` otherwise). The sum follows list
//! order, so the result does not depend on the thread count. In memory, graphs of a million
//! vertices and more are pulled cache-blocked (`gather`) over a segmented copy of the in-edges
//! when the planner found room for it; the sums and so the ranks are the same bits. A forced `push`/`block` mode adds
//! contributions along out-edges with atomic f64 additions instead.
//!
//! On a DM graph whose ranks do not fit `cn_cache`, `compute` hands over to
//! `remote::pagerank`, which keeps them in the memory nodes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use arrow_schema::SchemaRef;
use planner::Mode;
use rayon::prelude::*;
use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::error::ExecError;
use crate::gather;
use crate::lists::{each_list, pass_name, range_lists};
use crate::output::per_vertex_batches;
use crate::remote;

/// Vertices per pull chunk (fixed, so sink sums are added up in the same order every run).
const CHUNK: usize = 4096;

/// Ranks after `iterations` rounds with damping `damping`.
pub fn compute<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    iterations: u32,
    damping: f64,
) -> Result<Vec<f64>, ExecError> {
    let store = ctx.store;
    let n = ctx.n() as usize;
    if n == 0 {
        return Ok(Vec::new());
    }
    // Ranks too large for the compute node's budget stay in remote memory.
    if let Some(space) = remote::remote_space(store, remote::pagerank::STATE_BYTES) {
        return remote::pagerank::compute(ctx, space, iterations, damping);
    }
    let arcs = store.shape().arcs;
    let outdeg: Vec<u64> = ctx.pool.install(|| {
        (0..n as u32)
            .into_par_iter()
            .map(|v| store.degree(Direction::Out, v))
            .collect()
    });
    let mut rank = storage::huge::filled(n, 1.0 / n as f64);
    let mut next = storage::huge::filled(n, 0.0);
    let mut contrib = storage::huge::filled(n, 0.0);
    // Large in-memory graphs are pulled segment by segment, so the reads stay in cache; the
    // segmented copy is built in the first iteration, so PROFILE counts it there.
    let mut segmented: Option<Option<gather::SegmentedPull>> = None;
    for _ in 0..iterations {
        ctx.check()?;
        let start = ctx.begin();
        // Contributions and the sink mass, summed chunk by chunk in a fixed order.
        let sink_parts: Vec<f64> = ctx.pool.install(|| {
            contrib
                .par_chunks_mut(CHUNK)
                .zip(rank.par_chunks(CHUNK))
                .zip(outdeg.par_chunks(CHUNK))
                .map(|((c, r), d)| {
                    let mut sink = 0.0;
                    for i in 0..c.len() {
                        if d[i] == 0 {
                            sink += r[i];
                            c[i] = 0.0;
                        } else {
                            c[i] = r[i] / d[i] as f64;
                        }
                    }
                    sink
                })
                .collect()
        });
        let sink: f64 = sink_parts.iter().sum();
        let base = (1.0 - damping) / n as f64 + damping * sink / n as f64;
        match ctx.cfg.mode {
            Mode::Push | Mode::Block => push_round(ctx, &contrib, &mut next, base, damping)?,
            Mode::Pull | Mode::Auto => {
                let segmented = segmented.get_or_insert_with(|| match store.csr(Direction::In) {
                    Some(csr) if ctx.cfg.segmented_pull => {
                        ctx.pool.install(|| gather::SegmentedPull::new(&csr, n, n))
                    }
                    _ => None,
                });
                pull_round(ctx, &contrib, &mut next, segmented.as_ref(), base, damping)?
            }
        }
        std::mem::swap(&mut rank, &mut next);
        let pass = match segmented {
            Some(Some(_)) => "blocked pull",
            _ => pass_name(ctx.cfg.mode),
        };
        ctx.finish(start, n as u64, arcs, pass, Some(iterations))?;
    }
    Ok(rank)
}

/// `next[v] = base + d·Σ_{u ∈ in(v)} contrib[u]`, each worker writing its own slice. In memory,
/// graphs too large for the caches are summed segment by segment (`segmented`).
fn pull_round<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    contrib: &[f64],
    next: &mut [f64],
    segmented: Option<&gather::SegmentedPull>,
    base: f64,
    damping: f64,
) -> Result<(), ExecError> {
    if let Some(pull) = segmented {
        return ctx
            .pool
            .install(|| pull.sum(contrib, next, &|| ctx.check(), &|sum| base + damping * sum));
    }
    let store = ctx.store;
    let csr = store.csr(Direction::In);
    let mode = ctx.cfg.mode;
    // Out of core each chunk is one sequential scan: larger chunks keep more of the scan's
    // read-ahead in flight (4 096 vertices are ~0.5 MiB of lists at scale 20, one read at a
    // time). The sums do not depend on the chunking.
    let chunk = match csr {
        Some(_) => CHUNK,
        None => ctx.pool.chunk_len(next.len(), CHUNK, 16 * CHUNK),
    };
    ctx.pool.install(|| {
        next.par_chunks_mut(chunk)
            .enumerate()
            .try_for_each(|(ci, out)| {
                ctx.check()?;
                let first = (ci * chunk) as u32;
                match csr {
                    Some(csr) => {
                        for (i, slot) in out.iter_mut().enumerate() {
                            let mut sum = 0.0;
                            for &u in csr.neighbours(first + i as u32) {
                                sum += contrib[u as usize];
                            }
                            *slot = base + damping * sum;
                        }
                    }
                    None => {
                        let range = first..first + out.len() as u32;
                        range_lists(store, mode, Direction::In, range, false, |v, ns, _| {
                            let mut sum = 0.0;
                            for &u in ns {
                                sum += contrib[u as usize];
                            }
                            if let Some(slot) = out.get_mut((v - first) as usize) {
                                *slot = base + damping * sum;
                            }
                        })?;
                    }
                }
                Ok(())
            })
    })
}

/// Pushes `contrib[u]` along every out-edge with atomic f64 additions.
fn push_round<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    contrib: &[f64],
    next: &mut [f64],
    base: f64,
    damping: f64,
) -> Result<(), ExecError> {
    let acc: Vec<AtomicU64> = (0..next.len()).map(|_| AtomicU64::new(0)).collect();
    each_list(ctx, Direction::Out, false, |u, ns, _| {
        let c = contrib[u as usize];
        for &v in ns {
            if let Some(a) = acc.get(v as usize) {
                atomic_add(a, c);
            }
        }
    })?;
    ctx.pool.install(|| {
        next.par_iter_mut()
            .zip(acc.par_iter())
            .for_each(|(slot, a)| {
                *slot = base + damping * f64::from_bits(a.load(Ordering::Relaxed))
            });
    });
    Ok(())
}

/// `a += x` on an f64 stored as bits, by compare-exchange.
#[inline]
fn atomic_add(a: &AtomicU64, x: f64) {
    let mut cur = a.load(Ordering::Relaxed);
    loop {
        let new = (f64::from_bits(cur) + x).to_bits();
        match a.compare_exchange_weak(cur, new, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(seen) => cur = seen,
        }
    }
}

/// Rows `(vertex, rank)`.
pub fn batches<S: GraphStore>(
    store: &S,
    schema: &SchemaRef,
    rank: &[f64],
) -> Result<Vec<RecordBatch>, ExecError> {
    per_vertex_batches(store, schema, |r| {
        vec![Arc::new(Float64Array::from(rank[r].to_vec())) as ArrayRef]
    })
}
