//! Whole-graph list passes (every vertex's list once), the access path of algorithms that are
//! dense by nature (PageRank push, union-find WCC, CDLP, LCC). `Mode` picks the fetch the same
//! way it picks EdgeMap's strategy: `Push`/`Block` fetch lists with `for_each_list`
//! (`AsGiven`/`ByBlock`), `Pull`/`Auto` scan them sequentially with `scan_lists`.

use std::ops::Range;

use planner::registry::Operator;
use planner::Mode;
use rayon::prelude::*;
use storage::{Direction, FetchOrder, GraphStore};

use crate::balance;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::prefetch::prefetch;

/// The strategy name PROFILE shows for a whole-graph pass under `mode`.
pub fn pass_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Push => "push",
        Mode::Block => "block",
        Mode::Pull | Mode::Auto => "pull",
    }
}

/// The strategy name PROFILE shows for list fetches under `mode`.
pub fn fetch_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Block => "block",
        _ => "push",
    }
}

/// Visits the `dir` lists of `range` (each exactly once) with the fetch `mode` asks for.
pub fn range_lists<S: GraphStore, F>(
    store: &S,
    mode: Mode,
    dir: Direction,
    range: Range<u32>,
    want_weights: bool,
    visit: F,
) -> Result<(), ExecError>
where
    F: FnMut(u32, &[u32], Option<&[f64]>),
{
    range_lists_where(store, mode, dir, range, want_weights, |_| true, visit)
}

/// [`range_lists`] of only the vertices `want` accepts: a scan (`Pull`/`Auto`) then reads only
/// the blocks holding their lists.
fn range_lists_where<S: GraphStore, W, F>(
    store: &S,
    mode: Mode,
    dir: Direction,
    range: Range<u32>,
    want_weights: bool,
    want: W,
    visit: F,
) -> Result<(), ExecError>
where
    W: Fn(u32) -> bool,
    F: FnMut(u32, &[u32], Option<&[f64]>),
{
    match mode {
        Mode::Push | Mode::Block => {
            let order = if mode == Mode::Block {
                FetchOrder::ByBlock
            } else {
                FetchOrder::AsGiven
            };
            let vertices: Vec<u32> = range.filter(|&v| want(v)).collect();
            store.for_each_list(dir, &vertices, order, want_weights, visit)?;
        }
        Mode::Pull | Mode::Auto => store.scan_lists_where(dir, range, want_weights, want, visit)?,
    }
    Ok(())
}

/// Visits every vertex's `dir` list once, in parallel chunks of vertex ranges, checking the
/// cancel flag between chunks. `visit` runs concurrently and must be thread safe. Returns the
/// number of list entries visited.
pub fn each_list<S: GraphStore, F>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    want_weights: bool,
    visit: F,
) -> Result<u64, ExecError>
where
    F: Fn(u32, &[u32], Option<&[f64]>) + Sync,
{
    each_list_where(ctx, dir, want_weights, |_| true, visit)
}

/// [`each_list`] over only the vertices `want` accepts (asked once per vertex, before its
/// range's reads are planned): out of core the blocks holding none of their lists are not read.
pub fn each_list_where<S: GraphStore, W, F>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    want_weights: bool,
    want: W,
    visit: F,
) -> Result<u64, ExecError>
where
    W: Fn(u32) -> bool + Sync,
    F: Fn(u32, &[u32], Option<&[f64]>) + Sync,
{
    let store = ctx.store;
    let mode = ctx.cfg.mode;
    let ranges = balance::list_ranges(ctx, dir, ctx.n(), 1024, 16384);
    let csr = store.csr(dir);
    ctx.pool.install(|| {
        ranges
            .par_iter()
            .map(|r| {
                ctx.check()?;
                let mut edges = 0u64;
                let mut each = |v: u32, ns: &[u32], ws: Option<&[f64]>| {
                    edges += ns.len() as u64;
                    visit(v, ns, ws);
                };
                match csr {
                    Some(csr) => {
                        let mut scratch = Vec::new();
                        for v in r.clone().filter(|&v| want(v)) {
                            let ws = if want_weights {
                                csr.weights_f64(v, &mut scratch)
                            } else {
                                None
                            };
                            each(v, csr.neighbours(v), ws);
                        }
                    }
                    None => {
                        range_lists_where(store, mode, dir, r.clone(), want_weights, &want, each)?
                    }
                }
                Ok(edges)
            })
            .try_reduce(|| 0, |a, b| Ok(a + b))
    })
}

/// The list-fetch operator: visits the `dir` lists of `vertices` (slices when the store holds
/// the graph in memory, otherwise one batched `for_each_list` with many reads in flight, by
/// block under `SET mode = block`). For kernels that follow single lists (DFS, random walks,
/// neighbourhood gathering) rather than a frontier.
pub fn fetch<S: GraphStore, F>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    vertices: &[u32],
    want_weights: bool,
    mut visit: F,
) -> Result<(), ExecError>
where
    F: FnMut(u32, &[u32], Option<&[f64]>),
{
    ctx.record(Operator::ListFetch);
    match ctx.store.csr(dir) {
        Some(csr) => {
            let n = ctx.n();
            let mut scratch = Vec::new();
            for (i, &v) in vertices.iter().enumerate() {
                if v >= n {
                    continue;
                }
                // Lists of scattered vertices each wait for memory twice (index, then list):
                // start the index loads a little ahead and the list loads halfway there.
                if let Some(&ahead) = vertices.get(i + PREFETCH_INDEX).filter(|&&u| u < n) {
                    prefetch(&csr.starts[ahead as usize]);
                    prefetch(&csr.degrees[ahead as usize]);
                }
                if let Some(&ahead) = vertices.get(i + PREFETCH_LIST).filter(|&&u| u < n) {
                    let start = csr.starts[ahead as usize] as usize;
                    if let Some(first) = csr.targets.get(start) {
                        prefetch(first);
                    }
                }
                let ws = if want_weights {
                    csr.weights_f64(v, &mut scratch)
                } else {
                    None
                };
                visit(v, csr.neighbours(v), ws);
            }
        }
        None => {
            let order = if ctx.cfg.mode == Mode::Block {
                FetchOrder::ByBlock
            } else {
                FetchOrder::AsGiven
            };
            ctx.store
                .for_each_list(dir, vertices, order, want_weights, visit)?;
        }
    }
    Ok(())
}

/// How far ahead in the vertices given [`fetch`] starts loading an index entry, and a list.
const PREFETCH_INDEX: usize = 16;
const PREFETCH_LIST: usize = 8;

/// How many lists a kernel following single lists should fetch at a time: one when the graph
/// is in memory (a fetch costs nothing to start), [`FETCH_BATCH`] otherwise, so reads overlap.
pub fn fetch_batch<S: GraphStore>(ctx: &RunContext<'_, S>) -> usize {
    if ctx.store.csr(Direction::Out).is_some() {
        1
    } else {
        FETCH_BATCH
    }
}

/// Lists fetched together out of core by kernels that follow single lists.
pub const FETCH_BATCH: usize = 64;

/// Items per chunk of [`visit_positions`].
const POSITIONS_CHUNK: usize = 4096;

/// Moves items that stand on vertices (walkers): every chunk of `items` fetches the `dir` lists
/// of the distinct vertices its items stand on (`at`; `None` for an item that no longer moves),
/// each once, and calls `visit` on every item with its vertex's list. Returns the sum of what
/// `visit` returned. Chunks are fixed, so the work per item does not depend on the thread count.
pub fn visit_positions<S, I, A, V>(
    ctx: &RunContext<'_, S>,
    dir: Direction,
    items: &mut [I],
    at: A,
    visit: V,
) -> Result<u64, ExecError>
where
    S: GraphStore,
    I: Send,
    A: Fn(&I) -> Option<u32> + Sync,
    V: Fn(&mut I, &[u32]) -> u64 + Sync,
{
    ctx.pool.install(|| {
        items
            .par_chunks_mut(POSITIONS_CHUNK)
            .map(|chunk| {
                ctx.check()?;
                let mut here: Vec<(u32, usize)> = chunk
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| at(item).map(|v| (v, i)))
                    .collect();
                here.sort_unstable();
                let mut vertices: Vec<u32> = here.iter().map(|h| h.0).collect();
                vertices.dedup();
                let mut sum = 0;
                fetch(ctx, dir, &vertices, false, |v, ns, _| {
                    let from = here.partition_point(|h| h.0 < v);
                    for &(_, i) in here[from..].iter().take_while(|h| h.0 == v) {
                        sum += visit(&mut chunk[i], ns);
                    }
                })?;
                Ok(sum)
            })
            .try_reduce(|| 0, |a, b| Ok(a + b))
    })
}
