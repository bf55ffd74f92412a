//! Local clustering coefficient (Graphalytics LCC). N(v) = in- ∪ out-neighbours as a set
//! (v itself excluded), d = |N(v)|; the value is 0 when d ≤ 1, else t / (d(d−1)) where t counts
//! the ordered pairs (u, w) of N(v) with an arc u → w. Arcs among neighbours keep their
//! direction on directed graphs; on undirected graphs each edge counts twice, giving the usual
//! 2T / (d(d−1)).
//!
//! Per vertex: build N(v) sorted, then for every u in N(v) look each out-neighbour of u up in
//! it. In memory this runs over CSR slices. Out of core, a chunk of vertices first gathers its
//! neighbourhoods, then fetches the out-lists of their union in one batched `for_each_list`, so
//! every list the chunk needs is read once and many reads stay in flight.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use arrow_schema::SchemaRef;
use planner::Mode;
use rayon::prelude::*;
use storage::{CsrView, Direction, FetchOrder, GraphStore};

use crate::context::RunContext;
use crate::error::ExecError;
use crate::lists::{pass_name, range_lists};
use crate::output::per_vertex_batches;

/// Vertices per chunk of work.
const CHUNK: usize = 512;

/// The coefficient of every vertex.
pub fn compute<S: GraphStore>(ctx: &RunContext<'_, S>) -> Result<Vec<f64>, ExecError> {
    let store = ctx.store;
    let shape = store.shape();
    let n = shape.vertices as usize;
    let dirs: &[Direction] = if shape.directed {
        &[Direction::Out, Direction::In]
    } else {
        &[Direction::Out]
    };
    let csr_out = store.csr(Direction::Out);
    let csr_in = if shape.directed {
        store.csr(Direction::In)
    } else {
        csr_out
    };
    let start = ctx.begin();
    let mut coef = vec![0.0; n];
    let strategy = match (csr_out, csr_in) {
        (Some(out), Some(inn)) => {
            let sorted = ctx.pool.install(|| {
                (0..shape.vertices)
                    .into_par_iter()
                    .with_min_len(1024)
                    .all(|v| out.neighbours(v).is_sorted())
            });
            ctx.pool.install(|| {
                coef.par_chunks_mut(CHUNK)
                    .enumerate()
                    .try_for_each(|(ci, slots)| {
                        ctx.check()?;
                        let mut nbrs = Vec::new();
                        for (i, slot) in slots.iter_mut().enumerate() {
                            let v = (ci * CHUNK + i) as u32;
                            nbrs.clear();
                            nbrs.extend_from_slice(out.neighbours(v));
                            if shape.directed {
                                nbrs.extend_from_slice(inn.neighbours(v));
                            }
                            neighbourhood(&mut nbrs, v);
                            let t: u64 = nbrs
                                .iter()
                                .map(|&u| links_into(u, out_list(&out, u), sorted, &nbrs))
                                .sum();
                            *slot = coefficient(t, nbrs.len());
                        }
                        Ok::<(), ExecError>(())
                    })
            })?;
            "pull"
        }
        _ => {
            ctx.pool.install(|| {
                coef.par_chunks_mut(CHUNK)
                    .enumerate()
                    .try_for_each(|(ci, slots)| {
                        ctx.check()?;
                        chunk_from_lists(ctx, dirs, (ci * CHUNK) as u32, slots)
                    })
            })?;
            pass_name(ctx.cfg.mode)
        }
    };
    let arcs = shape.arcs * dirs.len() as u64;
    ctx.finish(start, n as u64, arcs, strategy, Some(1))?;
    Ok(coef)
}

#[inline]
fn out_list<'a>(out: &CsrView<'a>, u: u32) -> &'a [u32] {
    if (u as usize) < out.degrees.len() {
        out.neighbours(u)
    } else {
        &[]
    }
}

/// Turns a gathered neighbour list into the set N(v): sorted, unique, without `v`.
fn neighbourhood(nbrs: &mut Vec<u32>, v: u32) {
    nbrs.sort_unstable();
    nbrs.dedup();
    if let Ok(at) = nbrs.binary_search(&v) {
        nbrs.remove(at);
    }
}

/// Number of arcs `u → w` with `w` in the sorted set `nbrs` (self-loops excluded). When
/// `outs` is sorted and longer than `nbrs`, the smaller side is searched in the larger one, so
/// a hub's list costs O(|nbrs| log |outs|) instead of O(|outs|) for each of its neighbours.
#[inline]
fn links_into(u: u32, outs: &[u32], outs_sorted: bool, nbrs: &[u32]) -> u64 {
    if outs_sorted && outs.len() > nbrs.len() {
        nbrs.iter()
            .filter(|&&w| w != u && outs.binary_search(&w).is_ok())
            .count() as u64
    } else {
        outs.iter()
            .filter(|&&w| w != u && nbrs.binary_search(&w).is_ok())
            .count() as u64
    }
}

/// t / (d(d−1)), or 0 when d ≤ 1.
fn coefficient(t: u64, d: usize) -> f64 {
    if d <= 1 {
        0.0
    } else {
        t as f64 / (d as f64 * (d as f64 - 1.0))
    }
}

/// The generic path for the vertices `first..first + slots.len()`.
fn chunk_from_lists<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    dirs: &[Direction],
    first: u32,
    slots: &mut [f64],
) -> Result<(), ExecError> {
    let store = ctx.store;
    let len = slots.len();
    // 1. The neighbourhoods N(v), gathered from the lists of the range.
    let mut gathered: Vec<Vec<u32>> = vec![Vec::new(); len];
    let range = first..first + len as u32;
    for &dir in dirs {
        range_lists(
            store,
            ctx.cfg.mode,
            dir,
            range.clone(),
            false,
            |v, ns, _| {
                if let Some(g) = gathered.get_mut((v - first) as usize) {
                    g.extend_from_slice(ns);
                }
            },
        )?;
    }
    for (i, g) in gathered.iter_mut().enumerate() {
        neighbourhood(g, first + i as u32);
    }
    // 2. Who needs which out-list: (u, i) for every u in N(v_i), and the union of the u.
    let mut wanted: Vec<(u32, u32)> = gathered
        .iter()
        .enumerate()
        .flat_map(|(i, g)| g.iter().map(move |&u| (u, i as u32)))
        .collect();
    wanted.sort_unstable();
    let mut lists: Vec<u32> = wanted.iter().map(|w| w.0).collect();
    lists.dedup();
    // 3. One batched fetch of those lists; each arriving list serves every vertex that needs it.
    let order = if ctx.cfg.mode == Mode::Block {
        FetchOrder::ByBlock
    } else {
        FetchOrder::AsGiven
    };
    let mut t = vec![0u64; len];
    store.for_each_list(Direction::Out, &lists, order, false, |u, outs, _| {
        let sorted = outs.is_sorted();
        let from = wanted.partition_point(|w| w.0 < u);
        for &(_, i) in wanted[from..].iter().take_while(|w| w.0 == u) {
            t[i as usize] += links_into(u, outs, sorted, &gathered[i as usize]);
        }
    })?;
    for (i, slot) in slots.iter_mut().enumerate() {
        *slot = coefficient(t[i], gathered[i].len());
    }
    Ok(())
}

/// Rows `(vertex, coefficient)`.
pub fn batches<S: GraphStore>(
    store: &S,
    schema: &SchemaRef,
    coef: &[f64],
) -> Result<Vec<RecordBatch>, ExecError> {
    per_vertex_batches(store, schema, |r| {
        vec![Arc::new(Float64Array::from(coef[r].to_vec())) as ArrayRef]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_search_directions_count_the_same() {
        let nbrs = [2, 4, 6, 8];
        let outs = [1, 2, 3, 4, 5, 6, 7, 9];
        assert_eq!(links_into(4, &outs, true, &nbrs), 2);
        assert_eq!(links_into(4, &outs, false, &nbrs), 2);
        assert_eq!(coefficient(2, 4), 2.0 / 12.0);
        assert_eq!(coefficient(0, 1), 0.0);
    }
}
