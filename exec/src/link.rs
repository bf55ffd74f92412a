//! The linking operator: union-find over every edge (directions ignored), leaving `comp[v]`
//! pointing straight at the root of `v`'s set.
//!
//! Lock-free linking (Shiloach-Vishkin style "hook the higher root under the lower" by
//! compare-exchange), so the work does not grow with the diameter. With the graph in memory it
//! is Afforest (Sutton et al., as in GAPBS): link along the first two out-edges of every vertex,
//! find the component most vertices already joined by sampling, and finish only the vertices
//! outside it (their remaining out-edges, and in-edges on directed graphs). Out of core the same,
//! over scans: the sample is one pass over the file, the finish a selective scan of the few
//! lists outside the big component. Otherwise (remote memory, where a selective scan reads as
//! much as a whole one) one pass over every out-list links every edge (an undirected edge
//! once, from its higher end).
//! PROFILE calls these rounds `link sample` and `link`.

use std::sync::atomic::{AtomicU32, Ordering};

use planner::registry::Operator;
use rayon::prelude::*;
use storage::{CsrView, Direction, GraphStore};

use crate::context::RunContext;
use crate::error::ExecError;
use crate::lists::{each_list, each_list_where};
use crate::prefetch::prefetch;
use crate::rng::Xoshiro256;

/// Out-edges per vertex linked before sampling (GAPBS's `neighbor_rounds`).
const NEIGHBOUR_ROUNDS: usize = 2;
/// Samples taken to find the largest intermediate component.
const SAMPLES: usize = 1024;

/// Links every edge of the store into `comp` (initially `comp[v] = v`) and compresses it.
/// The last pass, which finds every vertex's final root, calls `each(v, root)` for every
/// vertex, so a caller that wants a per-set value gets it without reading `comp` again.
/// Each root is the smallest internal id of its set (a higher root is always hooked under a
/// lower one).
pub fn link_components<S, F>(
    ctx: &RunContext<'_, S>,
    comp: &[AtomicU32],
    each: F,
) -> Result<(), ExecError>
where
    S: GraphStore,
    F: Fn(u32, u32) + Sync,
{
    ctx.record(Operator::Link);
    let store = ctx.store;
    let n = ctx.n();
    let directed = store.shape().directed;
    let out = store.csr(Direction::Out);
    let inn = if directed {
        store.csr(Direction::In)
    } else {
        out
    };
    match (out, inn) {
        (Some(out), Some(inn)) => {
            for r in 0..NEIGHBOUR_ROUNDS {
                let start = ctx.begin();
                ctx.pool.install(|| {
                    (0..n).into_par_iter().with_min_len(1024).for_each(|u| {
                        prefetch_sample(out, r, u, comp);
                        if let Some(&v) = out.neighbours(u).get(r) {
                            link(u, v, comp);
                        }
                    })
                });
                compress(ctx, comp, |_, _| {});
                ctx.finish(start, n as u64, n as u64, "link sample", None)?;
            }
            let start = ctx.begin();
            let big = most_frequent(comp);
            let edges = ctx.pool.install(|| {
                (0..n)
                    .into_par_iter()
                    .with_min_len(256)
                    .map(|u| {
                        if comp[u as usize].load(Ordering::Relaxed) == big {
                            return 0;
                        }
                        let rest = out.neighbours(u).get(NEIGHBOUR_ROUNDS..).unwrap_or(&[]);
                        for &v in rest {
                            link(u, v, comp);
                        }
                        let mut edges = rest.len() as u64;
                        if directed {
                            for &v in inn.neighbours(u) {
                                link(u, v, comp);
                            }
                            edges += inn.neighbours(u).len() as u64;
                        }
                        edges
                    })
                    .sum::<u64>()
            });
            compress(ctx, comp, each);
            ctx.finish(start, n as u64, edges, "link", None)?;
        }
        _ if store.read_model().is_some() => afforest_by_scans(ctx, comp, directed, each)?,
        _ => {
            let start = ctx.begin();
            // An undirected graph stores each edge in both lists: linking it from the list of
            // its higher end only halves the work and joins the same sets.
            let edges = each_list(ctx, Direction::Out, false, |u, ns, _| {
                for &v in ns {
                    if directed || v < u {
                        link(u, v, comp);
                    }
                }
            })?;
            compress(ctx, comp, each);
            ctx.finish(start, n as u64, edges, "link", None)?;
        }
    }
    Ok(())
}

/// Afforest out of core: one scan links the first out-edges of every vertex (the whole file is
/// read once, but a list costs two links instead of its length), then only the lists of the
/// vertices outside the largest component are read again, selectively, and linked whole. On an
/// undirected graph a skipped edge from the big component to another vertex is linked from the
/// other end's list; on a directed one the other end's in-list is read for it.
fn afforest_by_scans<S, F>(
    ctx: &RunContext<'_, S>,
    comp: &[AtomicU32],
    directed: bool,
    each: F,
) -> Result<(), ExecError>
where
    S: GraphStore,
    F: Fn(u32, u32) + Sync,
{
    let n = ctx.n();
    let start = ctx.begin();
    // Every list is read, but only its first edges are linked: PROFILE counts those, as in
    // memory.
    each_list(ctx, Direction::Out, false, |u, ns, _| {
        for &v in ns.iter().take(NEIGHBOUR_ROUNDS) {
            link(u, v, comp);
        }
    })?;
    compress(ctx, comp, |_, _| {});
    ctx.finish(start, n as u64, n as u64, "link sample", None)?;
    let start = ctx.begin();
    let big = most_frequent(comp);
    let outside = |u: u32| comp[u as usize].load(Ordering::Relaxed) != big;
    let mut edges = each_list_where(ctx, Direction::Out, false, outside, |u, ns, _| {
        for &v in ns.get(NEIGHBOUR_ROUNDS..).unwrap_or(&[]) {
            link(u, v, comp);
        }
    })?;
    if directed {
        edges += each_list_where(ctx, Direction::In, false, outside, |u, ns, _| {
            for &v in ns {
                link(u, v, comp);
            }
        })?;
    }
    compress(ctx, comp, each);
    ctx.finish(start, n as u64, edges, "link", None)
}

/// How far ahead of the vertex being linked a sampling round starts loading a list's sampled
/// slot, and the parent of the neighbour found there.
const AHEAD_LIST: u32 = 16;
const AHEAD_PARENT: u32 = 8;

/// Starts the loads a sampling round will wait for a few vertices later: each link's
/// compare-exchange waits for every earlier load, so misses the core would otherwise overlap
/// (the sampled slot of the next lists, their neighbours' parents) are taken one at a time.
/// The slot is loaded `AHEAD_LIST` vertices ahead, and once it has arrived its neighbour's
/// parent `AHEAD_PARENT` ahead.
#[inline(always)]
fn prefetch_sample(out: CsrView<'_>, r: usize, u: u32, comp: &[AtomicU32]) {
    let n = comp.len() as u32;
    let slot = |w: u32| {
        (w < n && (out.degrees[w as usize] as usize) > r)
            .then(|| out.starts[w as usize] as usize + r)
            .and_then(|s| out.targets.get(s))
    };
    if let Some(t) = slot(u.wrapping_add(AHEAD_LIST)) {
        prefetch(t);
    }
    if let Some(&v) = slot(u.wrapping_add(AHEAD_PARENT)) {
        if let Some(c) = comp.get(v as usize) {
            prefetch(c);
        }
    }
}

/// Joins the trees of `u` and `v`: the higher root is hooked under the lower one by
/// compare-exchange, retried until both have the same root. Out-of-range ids are ignored.
#[inline]
fn link(u: u32, v: u32, comp: &[AtomicU32]) {
    if v as usize >= comp.len() {
        return;
    }
    let get = |x: u32| comp[x as usize].load(Ordering::Relaxed);
    let mut p1 = get(u);
    let mut p2 = get(v);
    while p1 != p2 {
        let (high, low) = if p1 > p2 { (p1, p2) } else { (p2, p1) };
        let p_high = get(high);
        if p_high == low
            || (p_high == high
                && comp[high as usize]
                    .compare_exchange(high, low, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok())
        {
            break;
        }
        // Path halving: when `high` is no root, point it at its grandparent. Once the sampled
        // trees start merging, their old roots form chains that every later link from their
        // members would walk again. A plain store is enough: only roots are ever
        // compare-exchanged, a non-root never becomes a root again, and every value written
        // to it is one of its ancestors, so a store that loses a race only leaves the path a
        // little longer.
        let gp = get(p_high);
        if p_high != high && gp != p_high {
            comp[high as usize].store(gp, Ordering::Relaxed);
        }
        p1 = gp;
        p2 = get(low);
    }
}

/// Points every vertex straight at its root and calls `each(v, root)` for every vertex `v`.
/// Runs after linking, so the trees hold still: a vertex first finds its root, then points
/// every vertex on its way there straight at it, and the first member of an old tree to walk
/// a long chain shortens it for all the others.
fn compress<S, F>(ctx: &RunContext<'_, S>, comp: &[AtomicU32], each: F)
where
    S: GraphStore,
    F: Fn(u32, u32) + Sync,
{
    ctx.pool.install(|| {
        (0..comp.len() as u32)
            .into_par_iter()
            .with_min_len(1024)
            .for_each(|v| {
                let get = |x: u32| comp[x as usize].load(Ordering::Relaxed);
                let p = get(v);
                let mut root = get(p);
                if root != p {
                    loop {
                        let up = get(root);
                        if up == root {
                            break;
                        }
                        root = up;
                    }
                    let mut x = v;
                    loop {
                        let up = get(x);
                        if up == root {
                            break;
                        }
                        comp[x as usize].store(root, Ordering::Relaxed);
                        x = up;
                    }
                }
                each(v, root);
            })
    });
}

/// The most common label among a fixed-seed sample of vertices (Afforest's "largest
/// intermediate component", whose members can skip the finishing pass).
fn most_frequent(comp: &[AtomicU32]) -> u32 {
    if comp.is_empty() {
        return 0;
    }
    let mut rng = Xoshiro256::for_stream(0x5eed, 0);
    let mut sample: Vec<u32> = (0..SAMPLES)
        .map(|_| comp[rng.below(comp.len() as u64) as usize].load(Ordering::Relaxed))
        .collect();
    sample.sort_unstable();
    let mut best = (0usize, sample[0]);
    let mut i = 0;
    while i < sample.len() {
        let j = i + sample[i..].iter().take_while(|&&x| x == sample[i]).count();
        if j - i > best.0 {
            best = (j - i, sample[i]);
        }
        i = j;
    }
    best.1
}
