//! The mode edge reduce: `out[v]` = the most frequent value among `v`'s neighbours over the
//! given directions (ties to the smallest; `values[v]` when there are none), as CDLP needs.
//! On directed graphs with both directions a neighbour joined by arcs both ways counts twice.
//!
//! Every worker owns a slice of `out`: it gathers its vertices' neighbour values into a buffer,
//! sorts, and takes the longest run. In memory it reads CSR slices; out of core it sizes one
//! flat buffer from the degrees and fills it from the range's lists; on remote state it reads
//! the distinct neighbour values of a range in spans and writes the range back once.

use planner::registry::Operator;
use rayon::prelude::*;
use storage::{Direction, GraphStore};

use crate::batched;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::lists::{pass_name, range_lists};
use crate::reduce::{EdgeReduce, Reduced};
use crate::state::{StateValue, VertexArray};

/// Vertices per chunk of work.
const CHUNK: usize = 1024;
/// Neighbour ids closer than this are read in one span from remote state.
const SPAN_GAP: u32 = 64;

impl<S: GraphStore> EdgeReduce<'_, '_, S> {
    /// `out[v] = mode of values[u] over u ∈ dirs-neighbours of v`, or `values[v]` without any.
    pub fn mode(
        &mut self,
        values: &VertexArray<u64>,
        out: &mut VertexArray<u64>,
        dirs: &[Direction],
    ) -> Result<Reduced, ExecError> {
        self.ctx().record(Operator::EdgeReduceMode);
        let ctx = self.ctx();
        ctx.check()?;
        let store = ctx.store;
        let edges: u64 = dirs.len() as u64 * store.shape().arcs;
        let (Some(cur), Some(next)) = (values.local(), out.local_mut()) else {
            return mode_remote(ctx, values, out, dirs);
        };
        let csrs: Option<Vec<_>> = dirs.iter().map(|&d| store.csr(d)).collect();
        let strategy = match csrs {
            Some(csrs) => {
                ctx.pool.install(|| {
                    next.par_chunks_mut(CHUNK)
                        .enumerate()
                        .try_for_each(|(ci, out)| {
                            ctx.check()?;
                            let mut buf = Vec::new();
                            for (i, slot) in out.iter_mut().enumerate() {
                                let v = (ci * CHUNK + i) as u32;
                                buf.clear();
                                for csr in &csrs {
                                    buf.extend(
                                        csr.neighbours(v)
                                            .iter()
                                            .map(|&u| u64::load(&cur[u as usize])),
                                    );
                                }
                                *slot.get_mut() =
                                    most_frequent(&mut buf, u64::load(&cur[v as usize]));
                            }
                            Ok::<(), ExecError>(())
                        })
                })?;
                "pull"
            }
            None => {
                ctx.pool.install(|| {
                    next.par_chunks_mut(CHUNK)
                        .enumerate()
                        .try_for_each(|(ci, out)| {
                            ctx.check()?;
                            let first = (ci * CHUNK) as u32;
                            let len = out.len();
                            let own = |i: usize| u64::load(&cur[first as usize + i]);
                            let value = |u: u32| cur.get(u as usize).map_or(u64::MAX, u64::load);
                            let picked = chunk_from_lists(ctx, dirs, first, len, own, value)?;
                            for (slot, x) in out.iter_mut().zip(picked) {
                                *slot.get_mut() = x;
                            }
                            Ok::<(), ExecError>(())
                        })
                })?;
                pass_name(ctx.cfg.mode)
            }
        };
        Ok(Reduced { strategy, edges })
    }
}

/// The remote path: ranges of one update buffer; each reads its own values, its lists, the
/// distinct neighbour values (in spans), and writes its results once.
fn mode_remote<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    values: &VertexArray<u64>,
    out: &VertexArray<u64>,
    dirs: &[Direction],
) -> Result<Reduced, ExecError> {
    let n = ctx.n();
    let split = ctx.split();
    split.settle()?;
    let owned = split.owned();
    let step = ctx.placement().buffer_len(ctx.pool.threads()) as u32;
    let ranges: Vec<(u32, u32)> = owned
        .clone()
        .step_by(step as usize)
        .map(|a| (a, a.saturating_add(step).min(owned.end)))
        .collect();
    let edges = ctx.pool.install(|| {
        ranges
            .par_iter()
            .map(|&(a, b)| {
                ctx.check()?;
                let len = (b - a) as usize;
                let mut own = vec![0u64; len];
                values.read_range(a, &mut own)?;
                let mut wanted: Vec<u32> = Vec::new();
                for &dir in dirs {
                    ctx.store.scan_lists(dir, a..b, false, |_, ns, _| {
                        wanted.extend(ns.iter().filter(|&&u| u < n))
                    })?;
                }
                wanted.sort_unstable();
                wanted.dedup();
                let known = read_spans(values, &wanted)?;
                let value = |u: u32| wanted.binary_search(&u).map_or(u64::MAX, |k| known[k]);
                let picked = chunk_from_lists(ctx, dirs, a, len, |i| own[i], value)?;
                out.write_range(a, &picked)?;
                Ok(wanted.len() as u64)
            })
            .sum::<Result<u64, ExecError>>()
    })?;
    Ok(Reduced {
        strategy: batched::STRATEGY,
        edges,
    })
}

/// The values of the sorted, distinct indices `wanted`, read in spans of nearby indices.
fn read_spans(values: &VertexArray<u64>, wanted: &[u32]) -> Result<Vec<u64>, ExecError> {
    let mut out = Vec::with_capacity(wanted.len());
    let mut buf = Vec::new();
    let mut i = 0;
    while i < wanted.len() {
        let mut j = i + 1;
        while j < wanted.len() && wanted[j] - wanted[j - 1] < SPAN_GAP {
            j += 1;
        }
        let first = wanted[i];
        buf.resize((wanted[j - 1] - first + 1) as usize, 0);
        values.read_range(first, &mut buf)?;
        out.extend(wanted[i..j].iter().map(|&u| buf[(u - first) as usize]));
        i = j;
    }
    Ok(out)
}

/// The mode for the vertices `first..first + len` from their lists: gathers the neighbours'
/// values per direction into one flat buffer (sized from the degrees), then picks per vertex.
fn chunk_from_lists<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    dirs: &[Direction],
    first: u32,
    len: usize,
    own: impl Fn(usize) -> u64,
    value: impl Fn(u32) -> u64,
) -> Result<Vec<u64>, ExecError> {
    let store = ctx.store;
    let mut offsets = Vec::with_capacity(len + 1);
    let mut total = 0usize;
    for i in 0..len {
        offsets.push(total);
        for &d in dirs {
            total += store.degree(d, first + i as u32) as usize;
        }
    }
    offsets.push(total);
    let mut fill = offsets[..len].to_vec();
    let mut buf = vec![0u64; total];
    let range = first..first + len as u32;
    for &dir in dirs {
        range_lists(
            store,
            ctx.cfg.mode,
            dir,
            range.clone(),
            false,
            |v, ns, _| {
                let i = (v - first) as usize;
                let (Some(at), Some(&end)) = (fill.get(i).copied(), offsets.get(i + 1)) else {
                    return;
                };
                let take = ns.len().min(end - at);
                for (slot, &u) in buf[at..at + take].iter_mut().zip(ns) {
                    *slot = value(u);
                }
                fill[i] = at + take;
            },
        )?;
    }
    Ok((0..len)
        .map(|i| most_frequent(&mut buf[offsets[i]..fill[i]], own(i)))
        .collect())
}

/// The most frequent value of `labels` (smallest on ties), or `own` when there is none.
fn most_frequent(labels: &mut [u64], own: u64) -> u64 {
    if labels.is_empty() {
        return own;
    }
    labels.sort_unstable();
    let (mut best, mut best_count) = (labels[0], 0usize);
    let mut i = 0;
    while i < labels.len() {
        let x = labels[i];
        let mut j = i + 1;
        while j < labels.len() && labels[j] == x {
            j += 1;
        }
        if j - i > best_count {
            best = x;
            best_count = j - i;
        }
        i = j;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::most_frequent;

    #[test]
    fn ties_go_to_the_smallest() {
        assert_eq!(most_frequent(&mut [5, 3, 5, 3, 9], 1), 3);
        assert_eq!(most_frequent(&mut [5, 3, 5], 1), 5);
        assert_eq!(most_frequent(&mut [], 7), 7);
    }
}
