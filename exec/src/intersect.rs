//! The neighbour-intersection operator: for every vertex v, d = |N(v)| with N(v) = in- ∪
//! out-neighbours as a set (v excluded), and t, counted as the caller asks ([`Count`]):
//! the ordered pairs (u, w) of N(v) joined by an arc u → w (direction kept on directed graphs;
//! both ways on undirected ones), what LCC needs; or the unordered pairs {u, w} of N(v) joined
//! in either direction, i.e. the triangles through v of the graph with directions ignored.
//! Delivered range by range so the caller can store it anywhere.
//!
//! In memory (CSR view) t is counted by degree-ordered triangle enumeration, see [`triangles`].
//! Out of core, per vertex: build N(v) sorted, then for every u in N(v) count u's out-neighbours
//! in it (searching the smaller side in the larger). A chunk of vertices first gathers its
//! neighbourhoods, then fetches the out-lists of their union in one batched `for_each_list`, so
//! every list the chunk needs is read once and many reads stay in flight.

use std::sync::atomic::{AtomicU64, Ordering};

use planner::registry::Operator;
use planner::Mode;
use rayon::prelude::*;
use storage::{CsrView, Direction, FetchOrder, GraphStore};

use crate::context::RunContext;
use crate::error::ExecError;
use crate::lists::{pass_name, range_lists};

/// Vertices per chunk of work.
const CHUNK: usize = 512;

/// What t counts among the neighbours of a vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// Ordered pairs (u, w) with an arc u → w: every arc once.
    Arcs,
    /// Unordered pairs {u, w} with an arc either way: every triangle through the vertex once.
    Pairs,
}

/// Computes `(t, d)` of every vertex and hands them to `emit(first, counts)` for consecutive
/// ranges starting at `first` (concurrently, in no particular order). Returns the strategy name.
pub fn neighbour_arcs<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    count: Count,
    emit: impl Fn(u32, &[(u64, usize)]) -> Result<(), ExecError> + Sync,
) -> Result<&'static str, ExecError> {
    ctx.record(Operator::NeighbourIntersect);
    let store = ctx.store;
    let shape = store.shape();
    let n = shape.vertices;
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
    let split = ctx.split();
    split.settle()?;
    match (csr_out, csr_in) {
        // Split over several compute nodes, each counts its own vertices from their lists.
        (Some(out), Some(inn)) if !split.is_cluster() => {
            triangles(ctx, out, inn, shape.directed, count, &emit)?;
            Ok("pull")
        }
        _ => {
            let owned = split.owned();
            let end = owned.end.min(n);
            ctx.pool.install(|| {
                owned
                    .step_by(CHUNK)
                    .collect::<Vec<u32>>()
                    .into_par_iter()
                    .try_for_each(|first| {
                        ctx.check()?;
                        let len = (end - first).min(CHUNK as u32) as usize;
                        chunk_from_lists(ctx, dirs, count, first, len, &emit)
                    })
            })?;
            Ok(pass_name(ctx.cfg.mode))
        }
    }
}

/// The undirected neighbourhoods N(v) in CSR form, each entry tagged with the arcs it stands
/// for: bit 0 = v → w, bit 1 = w → v (both bits on undirected graphs).
struct Tagged {
    starts: Vec<usize>,
    targets: Vec<u32>,
    arcs: Vec<u8>,
}

impl Tagged {
    #[inline]
    fn of(&self, v: u32) -> (&[u32], &[u8]) {
        let r = self.starts[v as usize]..self.starts[v as usize + 1];
        (&self.targets[r.clone()], &self.arcs[r])
    }
}

/// Builds `Tagged` lists in parallel: `list(v, tmp)` fills v's entries, sorted by target.
fn tagged<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    n: u32,
    list: impl Fn(u32, &mut Vec<(u32, u8)>) + Sync,
) -> Tagged {
    let ranges = ctx.pool.word_ranges(n, 1024, 16384);
    let parts: Vec<(Vec<usize>, Vec<u32>, Vec<u8>)> = ctx.pool.install(|| {
        ranges
            .par_iter()
            .map(|r| {
                let (mut lens, mut targets, mut arcs) = (Vec::new(), Vec::new(), Vec::new());
                let mut tmp = Vec::new();
                for v in r.clone() {
                    tmp.clear();
                    list(v, &mut tmp);
                    lens.push(tmp.len());
                    targets.extend(tmp.iter().map(|e| e.0));
                    arcs.extend(tmp.iter().map(|e| e.1));
                }
                (lens, targets, arcs)
            })
            .collect()
    });
    let total = parts.iter().map(|p| p.1.len()).sum();
    let mut t = Tagged {
        starts: Vec::with_capacity(n as usize + 1),
        targets: Vec::with_capacity(total),
        arcs: Vec::with_capacity(total),
    };
    t.starts.push(0);
    for (lens, targets, arcs) in parts {
        for l in lens {
            let last = t.starts[t.starts.len() - 1];
            t.starts.push(last + l);
        }
        t.targets.extend_from_slice(&targets);
        t.arcs.extend_from_slice(&arcs);
    }
    t
}

/// The in-memory path: per-vertex triangle counting over degree-ordered neighbourhoods.
///
/// Every triangle {a, b, c} of the undirected neighbourhood graph is found once (from its
/// lowest-ranked vertex, rank = (|N|, id), by merging the higher-ranked neighbour lists of a and
/// b), and contributes to t(a) the number of arcs between b and c, and likewise for b and c.
/// That sum is exactly the number of ordered neighbour pairs joined by an arc, with direction,
/// and costs far less than intersecting every neighbour's list with N(v) on skewed graphs.
/// Counting pairs, every triangle contributes one to each of its vertices instead.
fn triangles<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    out: CsrView<'_>,
    inn: CsrView<'_>,
    directed: bool,
    count: Count,
    emit: &(impl Fn(u32, &[(u64, usize)]) -> Result<(), ExecError> + Sync),
) -> Result<(), ExecError> {
    let n = ctx.n();
    let nbhd = tagged(ctx, n, |v, tmp| {
        if directed {
            tmp.extend(out.neighbours(v).iter().map(|&w| (w, 1u8)));
            tmp.extend(inn.neighbours(v).iter().map(|&w| (w, 2u8)));
        } else {
            tmp.extend(out.neighbours(v).iter().map(|&w| (w, 3u8)));
        }
        tmp.sort_unstable();
        let mut k = 0;
        for i in 0..tmp.len() {
            if tmp[i].0 == v || tmp[i].0 >= n {
                continue;
            }
            if k > 0 && tmp[k - 1].0 == tmp[i].0 {
                tmp[k - 1].1 |= tmp[i].1;
            } else {
                tmp[k] = tmp[i];
                k += 1;
            }
        }
        tmp.truncate(k);
    });
    ctx.check()?;
    let degree = |v: u32| nbhd.starts[v as usize + 1] - nbhd.starts[v as usize];
    let rank = |v: u32| (degree(v), v);
    let higher = tagged(ctx, n, |v, tmp| {
        let (ws, arcs) = nbhd.of(v);
        tmp.extend(
            ws.iter()
                .zip(arcs)
                .filter(|(&w, _)| rank(w) > rank(v))
                .map(|(&w, &a)| (w, a)),
        );
    });
    ctx.check()?;
    let weight = |arcs: u8| match count {
        Count::Arcs => arcs.count_ones() as u64,
        Count::Pairs => 1,
    };
    let t: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    ctx.pool.install(|| {
        (0..n).into_par_iter().with_min_len(64).try_for_each(|a| {
            if a % 4096 == 0 {
                ctx.check()?;
            }
            let (ha, aa) = higher.of(a);
            let mut own = 0u64;
            for (&b, &ab) in ha.iter().zip(aa) {
                let (hb, ba) = higher.of(b);
                let (mut i, mut j) = (0, 0);
                let mut for_b = 0u64;
                while i < ha.len() && j < hb.len() {
                    match ha[i].cmp(&hb[j]) {
                        std::cmp::Ordering::Less => i += 1,
                        std::cmp::Ordering::Greater => j += 1,
                        std::cmp::Ordering::Equal => {
                            let c = ha[i];
                            own += weight(ba[j]);
                            for_b += weight(aa[i]);
                            t[c as usize].fetch_add(weight(ab), Ordering::Relaxed);
                            i += 1;
                            j += 1;
                        }
                    }
                }
                if for_b > 0 {
                    t[b as usize].fetch_add(for_b, Ordering::Relaxed);
                }
            }
            if own > 0 {
                t[a as usize].fetch_add(own, Ordering::Relaxed);
            }
            Ok::<(), ExecError>(())
        })
    })?;
    ctx.pool.install(|| {
        (0..n)
            .step_by(CHUNK)
            .collect::<Vec<u32>>()
            .into_par_iter()
            .try_for_each(|first| {
                let counts: Vec<(u64, usize)> = (first..(first + CHUNK as u32).min(n))
                    .map(|v| (t[v as usize].load(Ordering::Relaxed), degree(v)))
                    .collect();
                emit(first, &counts)
            })
    })
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

/// The generic path for the vertices `first..first + len`. Counting pairs, each pair is found
/// from both its ends, so the sums are halved; on directed graphs a neighbour's out- and
/// in-list are merged first (its out-list kept, cut to the chunk's neighbours, until its
/// in-list arrives), so a pair joined both ways is found once from each end.
fn chunk_from_lists<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    dirs: &[Direction],
    count: Count,
    first: u32,
    len: usize,
    emit: &(impl Fn(u32, &[(u64, usize)]) -> Result<(), ExecError> + Sync),
) -> Result<(), ExecError> {
    let store = ctx.store;
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
    let mut count_from = |u: u32, outs: &[u32], sorted: bool| {
        let from = wanted.partition_point(|w| w.0 < u);
        for &(_, i) in wanted[from..].iter().take_while(|w| w.0 == u) {
            t[i as usize] += links_into(u, outs, sorted, &gathered[i as usize]);
        }
    };
    if count == Count::Pairs && dirs.len() > 1 {
        let mut kept: Vec<Vec<u32>> = vec![Vec::new(); lists.len()];
        store.for_each_list(Direction::Out, &lists, order, false, |u, outs, _| {
            if let Ok(at) = lists.binary_search(&u) {
                kept[at] = outs
                    .iter()
                    .copied()
                    .filter(|w| lists.binary_search(w).is_ok())
                    .collect();
            }
        })?;
        store.for_each_list(Direction::In, &lists, order, false, |u, ins, _| {
            let Ok(at) = lists.binary_search(&u) else {
                return;
            };
            let mut both = std::mem::take(&mut kept[at]);
            both.extend(
                ins.iter()
                    .copied()
                    .filter(|w| lists.binary_search(w).is_ok()),
            );
            both.sort_unstable();
            both.dedup();
            count_from(u, &both, true);
        })?;
    } else {
        store.for_each_list(Direction::Out, &lists, order, false, |u, outs, _| {
            count_from(u, outs, outs.is_sorted());
        })?;
    }
    if count == Count::Pairs {
        for x in &mut t {
            *x /= 2;
        }
    }
    let counts: Vec<(u64, usize)> = (0..len).map(|i| (t[i], gathered[i].len())).collect();
    emit(first, &counts)
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
    }
}
