//! The neighbour-intersection operator: for every vertex v, d = |N(v)| with N(v) = in- ∪
//! out-neighbours as a set (v excluded), and t, counted as the caller asks ([`Count`]):
//! the ordered pairs (u, w) of N(v) joined by an arc u → w (direction kept on directed graphs;
//! both ways on undirected ones), what LCC needs; or the unordered pairs {u, w} of N(v) joined
//! in either direction, i.e. the triangles through v of the graph with directions ignored.
//! Delivered range by range so the caller can store it anywhere.
//!
//! In memory (CSR view) t is counted by ordered triangle enumeration, see [`triangles`].
//! Out of core, per vertex: build N(v) sorted, then for every u in N(v) count u's out-neighbours
//! in it (searching the smaller side in the larger). A chunk of vertices first gathers its
//! neighbourhoods, then fetches the out-lists of their union in one batched `for_each_list`, so
//! every list the chunk needs is read once and many reads stay in flight.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

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

/// Sorted neighbour lists, each entry tagged with the arcs it stands for (bit 0 = v → w,
/// bit 1 = w → v); lists of an undirected graph may leave the tags empty.
trait Lists: Sync {
    fn of(&self, v: u32) -> (&[u32], &[u8]);
}

impl Lists for Tagged {
    #[inline]
    fn of(&self, v: u32) -> (&[u32], &[u8]) {
        Tagged::of(self, v)
    }
}

/// An undirected graph's CSR view whose every list already is the set N(v): strictly
/// increasing, without v, every id below n. Untagged.
struct Plain<'a>(CsrView<'a>);

impl Lists for Plain<'_> {
    #[inline]
    fn of(&self, v: u32) -> (&[u32], &[u8]) {
        (self.0.neighbours(v), &[])
    }
}

/// The part of every list of `L` above its own vertex: the entries from `from[v]` on.
struct Above<'a, L> {
    lists: &'a L,
    from: Vec<u32>,
}

impl<L: Lists> Lists for Above<'_, L> {
    #[inline]
    fn of(&self, v: u32) -> (&[u32], &[u8]) {
        let (ws, tags) = self.lists.of(v);
        let f = self.from[v as usize] as usize;
        (&ws[f..], tags.get(f..).unwrap_or(&[]))
    }
}

/// Whether `ws` is strictly increasing, lacks `v` and has every id below `n`.
fn is_neighbourhood(ws: &[u32], v: u32, n: u32) -> bool {
    let mut prev: Option<u32> = None;
    for &w in ws {
        if w == v || w >= n || prev.is_some_and(|p| p >= w) {
            return false;
        }
        prev = Some(w);
    }
    true
}

/// The in-memory path: per-vertex triangle counting over ordered neighbourhoods.
///
/// The vertices are put in a total order and every triangle {a, b, c} of the undirected
/// neighbourhood graph, a < b < c in it, is found once, from a, as a common entry of the
/// lists of a and b, each cut to the vertices above its own. It contributes to t(a) the number of arcs between b and
/// c, and likewise for b and c. That sum is exactly the number of ordered neighbour pairs
/// joined by an arc, with direction. Counting pairs, every triangle contributes one to each of
/// its vertices instead.
///
/// The order is by id when degrees are about even; when they are skewed it is by (|N|, id), the
/// vertices renumbered in that order, so a hub's long list is never scanned from its low end
/// and the lists of the hubs lie together.
fn triangles<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    out: CsrView<'_>,
    inn: CsrView<'_>,
    directed: bool,
    count: Count,
    emit: &(impl Fn(u32, &[(u64, usize)]) -> Result<(), ExecError> + Sync),
) -> Result<(), ExecError> {
    let n = ctx.n();
    // An undirected store's lists usually are the neighbourhoods already: then they serve as
    // they are, without building a copy.
    let plain = !directed
        && ctx.pool.install(|| {
            (0..n)
                .into_par_iter()
                .with_min_len(4096)
                .all(|v| is_neighbourhood(out.neighbours(v), v, n))
        });
    if plain {
        return count_ordered(ctx, &Plain(out), false, count, emit);
    }
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
    count_ordered(ctx, &nbhd, directed, count, emit)
}

/// Whether the degrees are skewed enough for ordering by degree to pay: the mean of d² is
/// more than twice the square of the mean degree, i.e. the degrees' standard deviation exceeds
/// their mean. Even degrees (a lattice, a uniform random graph) stay near a ratio of one; a
/// few hubs, whose wedges dominate the work when their lists are scanned in full, push it far
/// above.
fn skewed(degree: &[u32]) -> bool {
    let (sum, squares) = degree
        .par_iter()
        .with_min_len(1 << 14)
        .map(|&d| (d as f64, d as f64 * d as f64))
        .reduce(|| (0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    degree.len() as f64 * squares > 2.0 * sum * sum
}

/// The vertices sorted by (degree, id), by counting: `order[r]` is the vertex of rank r.
fn by_degree(degree: &[u32]) -> Vec<u32> {
    let top = degree.iter().copied().max().unwrap_or(0) as usize;
    let mut at = vec![0usize; top + 2];
    for &d in degree {
        at[d as usize + 1] += 1;
    }
    for i in 1..at.len() {
        at[i] += at[i - 1];
    }
    let mut order = vec![0u32; degree.len()];
    for (v, &d) in degree.iter().enumerate() {
        order[at[d as usize]] = v as u32;
        at[d as usize] += 1;
    }
    order
}

/// Counts over the neighbourhoods `nbhd` (tagged when `tagged`, i.e. on directed graphs) in
/// the order [`triangles`] describes, and emits `(t, |N|)` of every vertex.
fn count_ordered<S: GraphStore, L: Lists>(
    ctx: &RunContext<'_, S>,
    nbhd: &L,
    tagged_arcs: bool,
    count: Count,
    emit: &(impl Fn(u32, &[(u64, usize)]) -> Result<(), ExecError> + Sync),
) -> Result<(), ExecError> {
    let n = ctx.n();
    let degree: Vec<u32> = ctx.pool.install(|| {
        (0..n)
            .into_par_iter()
            .with_min_len(4096)
            .map(|v| nbhd.of(v).0.len() as u32)
            .collect()
    });
    // `t` is indexed by the position in the order; `pos` maps a vertex there (None: by id).
    let (t, pos): (Vec<AtomicU64>, Option<Vec<u32>>) = if ctx.pool.install(|| skewed(&degree)) {
        let order = by_degree(&degree);
        let mut pos = vec![0u32; n as usize];
        for (r, &v) in order.iter().enumerate() {
            pos[v as usize] = r as u32;
        }
        let higher = tagged(ctx, n, |r, tmp| {
            let (ws, tags) = nbhd.of(order[r as usize]);
            for (k, &w) in ws.iter().enumerate() {
                let p = pos[w as usize];
                if p > r {
                    tmp.push((p, tags.get(k).copied().unwrap_or(3)));
                }
            }
            tmp.sort_unstable();
        });
        ctx.check()?;
        (count_above(ctx, &higher, tagged_arcs, count)?, Some(pos))
    } else {
        let from: Vec<u32> = ctx.pool.install(|| {
            (0..n)
                .into_par_iter()
                .with_min_len(4096)
                .map(|v| nbhd.of(v).0.partition_point(|&w| w <= v) as u32)
                .collect()
        });
        let above = Above { lists: nbhd, from };
        (count_above(ctx, &above, tagged_arcs, count)?, None)
    };
    each_chunk(ctx, n, |chunk| {
        let first = chunk.start;
        let counts: Vec<(u64, usize)> = chunk
            .map(|v| {
                let at = pos.as_ref().map_or(v, |p| p[v as usize]);
                let tv = t[at as usize].load(Ordering::Relaxed);
                (tv, degree[v as usize] as usize)
            })
            .collect();
        emit(first, &counts)
    })
}

/// Runs `f` on the workers over `0..n` in ranges of [`CHUNK`] vertices, stopping at the first
/// error.
fn each_chunk<S, F>(ctx: &RunContext<'_, S>, n: u32, f: F) -> Result<(), ExecError>
where
    S: GraphStore,
    F: Fn(Range<u32>) -> Result<(), ExecError> + Sync,
{
    ctx.pool.install(|| {
        (0..n)
            .step_by(CHUNK)
            .collect::<Vec<u32>>()
            .into_par_iter()
            .try_for_each(|first| f(first..(first + CHUNK as u32).min(n)))
    })
}

/// The counting proper, `higher.of(a)` being the neighbours of a above a in the order (sorted
/// in it): for every a and every b of that list, the common entries of a's list and b's list
/// are the triangles {a, b, c}. The hits of a's entries are summed in a scratch array and added
/// to their vertices once per a, so the shared counters see one addition per entry, not one per
/// triangle.
fn count_above<S: GraphStore, L: Lists>(
    ctx: &RunContext<'_, S>,
    higher: &L,
    tagged_arcs: bool,
    count: Count,
) -> Result<Vec<AtomicU64>, ExecError> {
    if tagged_arcs {
        merge_all::<S, L, true>(ctx, higher, count)
    } else {
        merge_all::<S, L, false>(ctx, higher, count)
    }
}

/// [`count_above`] with the tags read (`TAGGED`) or every pair taken as joined both ways.
///
/// For a vertex a, every entry c of a's list is marked in a worker's own vertex-sized bitmap
/// (and its position in a's list noted); then for every b of a's list, b's list is read in order up to a's last
/// entry and each marked c is a triangle {a, b, c}. Nothing is compared with a's list on the
/// way, so the reads of b's list do not wait on one another as a merge's do.
fn merge_all<S: GraphStore, L: Lists, const TAGGED: bool>(
    ctx: &RunContext<'_, S>,
    higher: &L,
    count: Count,
) -> Result<Vec<AtomicU64>, ExecError> {
    let n = ctx.n();
    // Without tags every neighbour pair is an undirected edge: two arcs, one pair.
    let unit = match count {
        Count::Arcs => 2,
        Count::Pairs => 1,
    };
    let weight = |tags: &[u8], i: usize| -> u64 {
        if TAGGED {
            match count {
                Count::Arcs => tags[i].count_ones() as u64,
                Count::Pairs => 1,
            }
        } else {
            unit
        }
    };
    let t: Vec<AtomicU64> = ctx.pool.filled_vec(n as usize, |_| AtomicU64::new(0));
    // One scratch per worker (and one for a caller outside the pool): a bit per vertex saying
    // it is in a's list, small enough to stay cached; the position there of the marked
    // vertices, read on a hit only; and the hits of a's entries.
    #[allow(clippy::type_complexity)]
    let scratch: Vec<Mutex<(Vec<u64>, Vec<u32>, Vec<u64>)>> = (0..=ctx.pool.threads())
        .map(|_| Mutex::new((Vec::new(), Vec::new(), Vec::new())))
        .collect();
    each_chunk(ctx, n, |chunk| {
        ctx.check()?;
        let worker = rayon::current_thread_index()
            .unwrap_or(usize::MAX)
            .min(scratch.len() - 1);
        let mut guard = scratch[worker]
            .lock()
            .map_err(|_| ExecError::Other("a counting worker panicked".into()))?;
        let (bits, mark, hits) = &mut *guard;
        if mark.len() < n as usize {
            mark.resize(n as usize, 0);
            bits.resize((n as usize).div_ceil(64), 0);
        }
        for a in chunk {
            let (ha, ta) = higher.of(a);
            let Some(&last) = ha.last() else { continue };
            if ha.len() < 2 {
                continue;
            }
            for (x, &c) in ha.iter().enumerate() {
                bits[c as usize / 64] |= 1 << (c % 64);
                mark[c as usize] = x as u32;
            }
            hits.clear();
            hits.resize(ha.len(), 0);
            let mut own = 0u64;
            let mut next = higher.of(ha[0]);
            for i in 0..ha.len() - 1 {
                let (hb, tb) = next;
                // Look up the next list now, so its first read is under way while
                // this one is scanned.
                next = higher.of(ha[i + 1]);
                std::hint::black_box(next.0.first());
                let ab = weight(ta, i);
                let mut for_b = 0u64;
                for (y, &c) in hb.iter().enumerate() {
                    if c > last {
                        break;
                    }
                    if bits[c as usize / 64] & (1 << (c % 64)) != 0 {
                        let x = mark[c as usize] as usize;
                        hits[x] += ab;
                        for_b += weight(ta, x);
                        own += weight(tb, y);
                    }
                }
                if for_b > 0 {
                    t[ha[i] as usize].fetch_add(for_b, Ordering::Relaxed);
                }
            }
            for (&c, &h) in ha.iter().zip(hits.iter()) {
                bits[c as usize / 64] = 0;
                if h > 0 {
                    t[c as usize].fetch_add(h, Ordering::Relaxed);
                }
            }
            if own > 0 {
                t[a as usize].fetch_add(own, Ordering::Relaxed);
            }
        }
        Ok(())
    })?;
    Ok(t)
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
        // A repeated arc (a parallel edge) joins a pair once: a list with repeats is counted
        // from a sorted copy without them.
        let mut copy = Vec::new();
        store.for_each_list(Direction::Out, &lists, order, false, |u, outs, _| {
            if outs.windows(2).all(|p| p[0] < p[1]) {
                count_from(u, outs, true);
            } else {
                copy.clear();
                copy.extend_from_slice(outs);
                copy.sort_unstable();
                copy.dedup();
                count_from(u, &copy, true);
            }
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

    #[test]
    fn a_star_is_skewed_and_a_lattice_is_not() {
        let star: Vec<u32> = std::iter::once(99).chain([1; 99]).collect();
        assert!(skewed(&star));
        let lattice: Vec<u32> = (0..100).map(|v| if v % 10 == 0 { 3 } else { 4 }).collect();
        assert!(!skewed(&lattice));
        assert!(!skewed(&[]));
        assert!(!skewed(&[0, 0, 0]));
    }

    #[test]
    fn ranks_go_by_degree_then_id() {
        assert_eq!(by_degree(&[2, 0, 2, 1, 0]), vec![1, 4, 3, 0, 2]);
        assert_eq!(by_degree(&[]), Vec::<u32>::new());
    }

    #[test]
    fn only_sorted_loop_free_lists_in_range_are_neighbourhoods() {
        assert!(is_neighbourhood(&[1, 3, 4], 2, 5));
        assert!(is_neighbourhood(&[], 2, 5));
        assert!(!is_neighbourhood(&[1, 2, 4], 2, 5));
        assert!(!is_neighbourhood(&[1, 3, 3], 2, 5));
        assert!(!is_neighbourhood(&[3, 1], 2, 5));
        assert!(!is_neighbourhood(&[1, 5], 2, 5));
    }
}
