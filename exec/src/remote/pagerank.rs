//! PageRank with the ranks in remote memory: two `F64` arrays, `rank` and `next` (the sums of
//! the round). Each round walks the vertices in ranges of at most one update buffer:
//!
//! 1. **push**: read the range's ranks, scan its out-lists, and add `PR(u)/outdeg(u)` to
//!    `next[v]` for every edge with [`RemoteArray::add_batch`] — the memory nodes' pass-by-value
//!    add, one call per node per full buffer (sums for one destination combined first);
//! 2. **finish**: read the range's sums, write `rank = base + d·sum`, zero the sums, and add up
//!    the new rank held by sinks for the next round's `base`.
//!
//! Same Graphalytics semantics as the local kernel (sink mass spread over all vertices); the
//! sums are added in another order, so ranks agree to rounding, as in the local push mode.
//!
//! [`RemoteArray::add_batch`]: storage::dm::RemoteArray::add_batch

use rayon::prelude::*;
use storage::dm::{AttrKind, RemoteArray};
use storage::{AttributeSpace, Direction, GraphStore};

use super::{read_back, update_buffer_len, STRATEGY};
use crate::context::RunContext;
use crate::error::ExecError;

/// Bytes per vertex of the local kernel's state (rank, next rank, contribution: f64 each).
pub const STATE_BYTES: u64 = 24;

/// Ranks after `iterations` rounds with damping `damping` (|V| > 0), kept in `space`.
pub fn compute<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    space: &dyn AttributeSpace,
    iterations: u32,
    damping: f64,
) -> Result<Vec<f64>, ExecError> {
    let store = ctx.store;
    let n = ctx.n();
    let nf = n as f64;
    let rank = space.alloc_attr(n as u64, AttrKind::F64, (1.0 / nf).to_bits())?;
    let next = space.alloc_attr(n as u64, AttrKind::F64, 0)?;
    let buffer = update_buffer_len(space.local_budget(), ctx.pool.threads());
    let ranges: Vec<(u32, u32)> = (0..n)
        .step_by(buffer)
        .map(|a| (a, a.saturating_add(buffer as u32).min(n)))
        .collect();
    let sinks = (0..n)
        .filter(|&v| store.degree(Direction::Out, v) == 0)
        .count();
    let mut sink = sinks as f64 / nf;
    for _ in 0..iterations {
        ctx.check()?;
        let start = ctx.begin();
        let edges = ctx.pool.install(|| {
            ranges
                .par_iter()
                .map(|&(a, b)| push_range(ctx, &rank, &next, a, b, buffer))
                .sum::<Result<u64, ExecError>>()
        })?;
        let base = (1.0 - damping) / nf + damping * sink / nf;
        // Sink sums per range, added in range order so the total does not depend on threads.
        let parts = ctx.pool.install(|| {
            ranges
                .par_iter()
                .map(|&(a, b)| finish_range(ctx, &rank, &next, a, b, base, damping))
                .collect::<Result<Vec<f64>, ExecError>>()
        })?;
        sink = parts.iter().sum();
        ctx.finish(start, n as u64, edges, STRATEGY, Some(iterations))?;
    }
    let out = read_back(&rank, f64::from_bits)?;
    rank.free()?;
    next.free()?;
    Ok(out)
}

/// Adds the contributions of `a..b` to `next`; returns the edges examined.
fn push_range<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    rank: &RemoteArray,
    next: &RemoteArray,
    a: u32,
    b: u32,
    buffer: usize,
) -> Result<u64, ExecError> {
    ctx.check()?;
    let mut r = vec![0u64; (b - a) as usize];
    rank.read_range(a as u64, &mut r)?;
    let mut buf: Vec<(u64, u64)> = Vec::with_capacity(buffer);
    let mut edges = 0u64;
    let mut failed = None;
    ctx.store
        .scan_lists(Direction::Out, a..b, false, |u, ns, _| {
            if failed.is_some() || ns.is_empty() {
                return;
            }
            edges += ns.len() as u64;
            let c = f64::from_bits(r[(u - a) as usize]) / ns.len() as f64;
            for &v in ns {
                buf.push((v as u64, c.to_bits()));
                if buf.len() >= buffer {
                    if let Err(e) = next.add_batch(&buf) {
                        failed = Some(e);
                        return;
                    }
                    buf.clear();
                }
            }
        })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    next.add_batch(&buf)?;
    Ok(edges)
}

/// Turns the sums of `a..b` into ranks, zeroes the sums, and returns the new rank held by sinks.
fn finish_range<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    rank: &RemoteArray,
    next: &RemoteArray,
    a: u32,
    b: u32,
    base: f64,
    damping: f64,
) -> Result<f64, ExecError> {
    ctx.check()?;
    let mut s = vec![0u64; (b - a) as usize];
    next.read_range(a as u64, &mut s)?;
    let mut sink = 0.0;
    for (i, w) in s.iter_mut().enumerate() {
        let pr = base + damping * f64::from_bits(*w);
        if ctx.store.degree(Direction::Out, a + i as u32) == 0 {
            sink += pr;
        }
        *w = pr.to_bits();
    }
    rank.write_slice(a as u64, &s)?;
    s.fill(0);
    next.write_slice(a as u64, &s)?;
    Ok(sink)
}
