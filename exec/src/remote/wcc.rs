//! WCC with the labels in remote memory: min-label propagation over both directions, every
//! vertex starting with its own input id, so each ends with the smallest input id of its
//! component (the local kernel's labelling). Union-find, as the local kernel uses, would chase
//! parent pointers one dependent remote read at a time; label propagation updates in batches.
//!
//! The frontier is a bitmap (|V|/8 bytes). A round walks the vertices in ranges of one update
//! buffer: for the range's active vertices it reads their labels, fetches their lists (out, and
//! in on directed graphs) and offers each neighbour the label with [`RemoteArray::cas_min_batch`];
//! the neighbours whose label dropped are the next frontier. Rounds: the component diameter + 1.
//!
//! [`RemoteArray::cas_min_batch`]: storage::dm::RemoteArray::cas_min_batch

use rayon::prelude::*;
use storage::dm::{AttrKind, RemoteArray};
use storage::{AttributeSpace, Direction, FetchOrder, GraphStore};

use super::{read_back, update_buffer_len, STRATEGY};
use crate::bitmap::Bitmap;
use crate::context::RunContext;
use crate::error::ExecError;

/// Bytes per vertex of the local kernel's state (u32 parent, u64 smallest id per root).
pub const STATE_BYTES: u64 = 12;

/// The component label (smallest input id of the component) of every vertex, kept in `space`.
pub fn compute<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    space: &dyn AttributeSpace,
) -> Result<Vec<u64>, ExecError> {
    let store = ctx.store;
    let n = ctx.n();
    let label = space.alloc_attr(n as u64, AttrKind::U64, 0)?;
    let buffer = update_buffer_len(space.local_budget(), ctx.pool.threads());
    let ranges: Vec<(u32, u32)> = (0..n)
        .step_by(buffer)
        .map(|a| (a, a.saturating_add(buffer as u32).min(n)))
        .collect();
    for &(a, b) in &ranges {
        let ids: Vec<u64> = (a..b).map(|v| store.input_id(v)).collect();
        label.write_slice(a as u64, &ids)?;
    }
    let dirs: &[Direction] = if store.shape().directed {
        &[Direction::Out, Direction::In]
    } else {
        &[Direction::Out]
    };
    let mut active = Bitmap::from_words(vec![u64::MAX; (n as usize).div_ceil(64)]);
    let mut count = n as u64;
    while count > 0 {
        ctx.check()?;
        let start = ctx.begin();
        let parts = ctx.pool.install(|| {
            ranges
                .par_iter()
                .map(|&(a, b)| propagate_range(ctx, &label, &active, dirs, a, b, buffer))
                .collect::<Result<Vec<_>, ExecError>>()
        })?;
        let mut next = Bitmap::new(n);
        let mut edges = 0;
        for (changed, e) in parts {
            edges += e;
            for v in changed {
                next.set(v);
            }
        }
        ctx.finish(start, count, edges, STRATEGY, None)?;
        active = next;
        count = active.count();
    }
    let out = read_back(&label, |w| w)?;
    label.free()?;
    Ok(out)
}

/// Offers the labels of the active vertices of `a..b` to their neighbours; returns the vertices
/// whose label dropped and the edges examined.
fn propagate_range<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    label: &RemoteArray,
    active: &Bitmap,
    dirs: &[Direction],
    a: u32,
    b: u32,
    buffer: usize,
) -> Result<(Vec<u32>, u64), ExecError> {
    ctx.check()?;
    // The range's vertices pass `a..b` bound by `n`: `get` is in range.
    let verts: Vec<u32> = (a..b).filter(|&v| active.get(v)).collect();
    if verts.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let mut own = vec![0u64; (b - a) as usize];
    label.read_range(a as u64, &mut own)?;
    let mut buf: Vec<(u64, u64)> = Vec::with_capacity(buffer);
    let mut changed = Vec::new();
    let mut edges = 0u64;
    let mut failed = None;
    let flush = |buf: &mut Vec<(u64, u64)>, changed: &mut Vec<u32>| {
        let r = label.cas_min_batch(buf);
        buf.clear();
        r.map(|c| changed.extend(c.into_iter().map(|(v, _)| v as u32)))
    };
    for &dir in dirs {
        ctx.store
            .for_each_list(dir, &verts, FetchOrder::AsGiven, false, |u, ns, _| {
                if failed.is_some() {
                    return;
                }
                edges += ns.len() as u64;
                let l = own[(u - a) as usize];
                for &v in ns {
                    buf.push((v as u64, l));
                    if buf.len() >= buffer {
                        if let Err(e) = flush(&mut buf, &mut changed) {
                            failed = Some(e);
                            return;
                        }
                    }
                }
            })?;
        if let Some(e) = failed.take() {
            return Err(e.into());
        }
    }
    flush(&mut buf, &mut changed)?;
    Ok((changed, edges))
}
