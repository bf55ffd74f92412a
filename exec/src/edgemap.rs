//! `EdgeMap`: apply an update along every edge leaving the active vertices, returning the
//! vertices the updates activated, with one of three strategies.
//!
//! * **SparsePush** (CAVE ProcessQueue): each worker fetches its chunk of the frontier's lists
//!   with `for_each_list`; the store keeps many fetches in flight. In memory the frontier is
//!   taken as given; out of core it is ordered and split by block as in BlockPush, so a level
//!   reads each block once whatever order the previous level discovered its vertices in.
//! * **BlockPush** (CAVE ProcessQueueBlock): the frontier is sorted by edge block and split at
//!   block boundaries, and each chunk is fetched `ByBlock`, so every block is read once.
//! * **DensePull**: every vertex that still wants updates scans its in-list in vertex (block)
//!   order with `scan_lists_where` and pulls from in-neighbours that are active, stopping early
//!   when it no longer wants updates (Beamer's bottom-up step). Out of core only the chunks
//!   holding such vertices' lists are read.
//!
//! * **ScanPush**: out of core under `Mode::Auto`, a push level whose lists are read with
//!   `scan_lists_where` (the frontier as the filter): reads of up to 1 MiB that join the needed
//!   blocks through small gaps, instead of one random read per block.
//!
//! `Mode::Auto` picks pull when the frontier's out-degree sum plus its size exceeds |arcs|/20
//! (Ligra's rule), else push. Out of core it then prices the level's reads with the store's
//! [`ReadModel`](storage::io::ReadModel) ([`crate::read_cost`]) and runs the cheapest of
//! block-by-block push, coalesced push and (where Ligra's rule allows it) pull. When the store
//! has a CSR view the same strategies run as tight loops over slices, with no callbacks.
//!
//! Kernels name their update as an operation on a [`VertexArray`]: a claim
//! ([`EdgeMap::claim`], BFS), a min-update ([`EdgeMap::relax_min`], SSSP, min-label WCC, SCC)
//! or an addition ([`EdgeMap::add`], k-core peeling).
//! On local state those run as an [`EdgeFunc`] through the strategies above; on remote state as
//! a batched push ([`crate::batched`]): claims are filtered through a local bitmap of the
//! vertices already claimed from this node (one remote CAS per vertex, not per edge), and a
//! min-update frontier carries the value each vertex was given, so relaxing its edges reads no
//! remote state. Min-updates and additions on remote state pick their update strategy per
//! round ([`crate::collab`]): direct remote update for sparse rounds, collaborative (ValRD,
//! RefRD) for dense ones; claims are always direct.

use std::borrow::Cow;
use std::ops::Range;

use planner::registry::Operator;
use planner::Mode;
use rayon::prelude::*;
use storage::io::ReadModel;
use storage::{Direction, FetchOrder, GraphStore};

use crate::balance;
use crate::batched::{self, RoundLists};
use crate::bitmap::{AtomicBitmap, Bitmap};
use crate::claim_filter::ClaimFilter;
use crate::cluster::hubs::Deal;
use crate::cluster::marks::{Marks, Owners};
use crate::collab::round::{Combine, Round};
use crate::collab::{self, UpdateStrategy, Windows};
use crate::context::{RunContext, SOURCE_WINDOW_FLOOR};
use crate::error::ExecError;
use crate::read_cost;
use crate::state::{StateValue, VertexArray};
use crate::subset::VertexSubset;

/// What EdgeMap applies along an edge `src → dst` (`src` active).
pub trait EdgeFunc: Sync {
    /// Whether the update reads edge weights; unweighted edges read as 1.0.
    const WEIGHTED: bool = false;
    /// Whether `update_atomic` returns true at most once per destination per round (a claim, as
    /// in BFS); then push needs no separate de-duplication of the next frontier.
    const CLAIMS: bool = false;

    /// Push update, run concurrently for many sources: must be atomic. True activates `dst`.
    fn update_atomic(&self, src: u32, dst: u32, weight: f64) -> bool;

    /// Pull update: only one worker updates `dst` at a time. True activates `dst`.
    fn update(&self, src: u32, dst: u32, weight: f64) -> bool {
        self.update_atomic(src, dst, weight)
    }

    /// Whether a push may carry improvements on within the round ([`Strategy::SpreadPush`]):
    /// only for an idempotent min-update whose caller takes its rounds as rounds, not levels
    /// (an addition carried on would add again; a value set per round would be wrong).
    fn spreads(&self) -> bool {
        false
    }

    /// Whether `dst`, just improved, may be carried on in the same round by a spreading push;
    /// else it waits in the next frontier.
    fn carry(&self, _dst: u32) -> bool {
        true
    }

    /// Whether `dst` still wants updates; pull stops scanning `dst`'s in-list once it is false.
    fn cond(&self, _dst: u32) -> bool {
        true
    }
}

/// The strategy of one EdgeMap round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    SparsePush,
    BlockPush,
    DensePull,
    /// Push whose lists are read by a scan that coalesces their blocks into large reads: what
    /// a level becomes out of core under `auto` when the device reads it faster that way.
    ScanPush,
    /// Push block by block that carries on through the blocks it reads: the min-updates of
    /// [`EdgeMap::relax_min_within`] out of core on a clustered graph
    /// ([`GraphStore::clustered`]).
    SpreadPush,
}

impl Strategy {
    /// The name PROFILE prints (`IterationStats::strategy`).
    pub fn name(self) -> &'static str {
        match self {
            Strategy::SparsePush => "push",
            Strategy::BlockPush => "block",
            Strategy::DensePull => "pull",
            Strategy::ScanPush => "scan push",
            Strategy::SpreadPush => "spread",
        }
    }

    /// The strategy `mode` asks for; `Auto` applies Ligra's density rule to the frontier's
    /// out-degree sum and size against the number of stored arcs.
    pub fn choose(mode: Mode, frontier_len: u64, degree_sum: u64, arcs: u64) -> Strategy {
        match mode {
            Mode::Push => Strategy::SparsePush,
            Mode::Block => Strategy::BlockPush,
            Mode::Pull => Strategy::DensePull,
            Mode::Auto => {
                if frontier_len + degree_sum > arcs / 20 {
                    Strategy::DensePull
                } else {
                    Strategy::SparsePush
                }
            }
        }
    }
}

/// The direction pull reads when push follows `dir`.
pub fn reverse(dir: Direction) -> Direction {
    match dir {
        Direction::Out => Direction::In,
        Direction::In => Direction::Out,
    }
}

/// Runs EdgeMap rounds for one algorithm; keeps the scratch bitmap used to de-duplicate the
/// next frontier between rounds so a sparse round costs O(frontier), not O(|V|).
pub struct EdgeMap<'c, 'a, S: GraphStore> {
    ctx: &'c RunContext<'a, S>,
    seen: Option<AtomicBitmap>,
    /// Remote claims: the vertices this node has sent a claim for (claims never revert).
    sent: Option<ClaimFilter>,
    /// Split over several members: who owns what, for the rounds' marks (learnt in the
    /// first split round).
    owners: Option<Owners>,
    /// Remote min-updates: the previous round's changed vertices, sorted, with the value each
    /// was given (as words).
    carried: Vec<(u32, u64)>,
    /// Spreading rounds take their blocks in descending order (a sweep back) every other round.
    sweep_back: bool,
}

impl<'c, 'a, S: GraphStore> EdgeMap<'c, 'a, S> {
    /// An EdgeMap over `ctx`'s store and workers.
    pub fn new(ctx: &'c RunContext<'a, S>) -> Self {
        EdgeMap {
            ctx,
            seen: None,
            sweep_back: false,
            sent: None,
            owners: None,
            carried: Vec::new(),
        }
    }

    /// One round of claims: every vertex reached along `dir` from `frontier` whose state is
    /// `unset` is set to `value`, exactly once; returns the vertices claimed.
    pub fn claim<T: StateValue>(
        &mut self,
        frontier: &VertexSubset,
        dir: Direction,
        state: &VertexArray<T>,
        unset: T,
        value: T,
        of: Option<u32>,
    ) -> Result<VertexSubset, ExecError> {
        self.ctx.record(Operator::EdgeMap);
        if let Some(cells) = state.local() {
            let f = Claim {
                cells,
                unset,
                value,
            };
            return self.run(frontier, dir, &f, of);
        }
        let ctx = self.ctx;
        ctx.check()?;
        let split = ctx.split();
        split.settle()?;
        let start = ctx.begin();
        let n = frontier.universe();
        let owned = split.owned();
        let budget = ctx.placement().budget();
        let sent = &*self
            .sent
            .get_or_insert_with(|| ClaimFilter::new(n, owned.clone(), budget));
        match (frontier.as_list(), frontier.as_bitmap()) {
            (Some(list), _) => list.iter().for_each(|&v| {
                sent.first_time(v);
            }),
            (_, Some(bits)) => bits.iter_ones().for_each(|v| {
                sent.first_time(v);
            }),
            // A part: its vertices were claimed by a previous round of this filter.
            _ => {}
        }
        if split.is_cluster() {
            // Split over several members, the claimed vertices only go into the marks of the
            // round. The owned sources are listed a window at a time.
            let marks = round_marks(ctx, &mut self.owners, state)?;
            let foreign = ctx.foreign_hubs(frontier, &[dir]);
            let mut edges = 0u64;
            for (i, window) in ctx.source_windows().into_iter().enumerate() {
                let foreign: &[u32] = if i == 0 { &foreign } else { &[] };
                let (sources, deal) = ctx.window_sources(frontier, &[dir], window, foreign, true);
                if sources.is_empty() {
                    continue;
                }
                let lists = RoundLists {
                    frontier: &sources,
                    dirs: &[dir],
                    want_weights: false,
                    buffer_len: ctx.placement().buffer_len(ctx.pool.threads()),
                    deal: &deal,
                };
                let (_, e) = batched::push(
                    ctx,
                    lists,
                    |_| (),
                    |_, dst, _| (dst < n && sent.first_time(dst)).then_some(dst),
                    |buf: &mut Vec<u32>| {
                        marks.add(state.claim_batch(buf, unset, value)?);
                        buf.clear();
                        Ok(Vec::<u32>::new())
                    },
                    sort_distinct,
                )?;
                edges += e;
            }
            let next = marks.finish(&split)?;
            ctx.finish(start, frontier.len(), edges, batched::STRATEGY, of)?;
            return Ok(next);
        }
        let (sources, deal) = ctx.frontier_sources(frontier, &[dir]);
        let lists = RoundLists {
            frontier: &sources,
            dirs: &[dir],
            want_weights: false,
            buffer_len: ctx.placement().buffer_len(ctx.pool.threads()),
            deal: &deal,
        };
        let (mut next, edges) = batched::push(
            ctx,
            lists,
            |_| (),
            |_, dst, _| (dst < n && sent.first_time(dst)).then_some(dst),
            |buf: &mut Vec<u32>| {
                let won = state.claim_batch(buf, unset, value)?;
                buf.clear();
                Ok(won)
            },
            sort_distinct,
        )?;
        // Claims are exclusive, so `next` has no duplicates; sorted, its lists fetch in order.
        next.sort_unstable();
        let next = split.union(next)?;
        ctx.finish(start, frontier.len(), edges, batched::STRATEGY, of)?;
        Ok(next)
    }

    /// One round of min-updates: along every `dirs` edge `u → v` leaving `frontier`,
    /// `state[v] = min(state[v], relax(state[u], weight))` (`None`: no candidate). Returns the
    /// vertices whose state dropped. Several directions are pushed in the same round.
    pub fn relax_min<T, R>(
        &mut self,
        frontier: &VertexSubset,
        dirs: &[Direction],
        state: &VertexArray<T>,
        weighted: bool,
        relax: R,
        of: Option<u32>,
    ) -> Result<VertexSubset, ExecError>
    where
        T: StateValue,
        R: Fn(T, f64) -> Option<T> + Sync,
    {
        self.ctx.record(Operator::EdgeMap);
        if let Some(cells) = state.local() {
            let n = frontier.universe();
            let mut merged: Option<VertexSubset> = None;
            for &dir in dirs {
                let next = if weighted {
                    let f = RelaxMin::<T, R, true> {
                        cells,
                        relax: &relax,
                        within: None,
                    };
                    self.run(frontier, dir, &f, of)?
                } else {
                    let f = RelaxMin::<T, R, false> {
                        cells,
                        relax: &relax,
                        within: None,
                    };
                    self.run(frontier, dir, &f, of)?
                };
                merged = Some(match merged {
                    None => next,
                    Some(prev) => {
                        let mut all = prev.to_list();
                        all.extend(next.to_list());
                        all.sort_unstable();
                        all.dedup();
                        VertexSubset::from_list(n, all)
                    }
                });
            }
            return Ok(merged.unwrap_or_else(|| VertexSubset::empty(n)));
        }
        let ctx = self.ctx;
        ctx.check()?;
        let split = ctx.split();
        split.settle()?;
        let start = ctx.begin();
        if split.is_cluster() {
            self.carried = Vec::new();
            let (next, edges, strategy) =
                self.relax_min_split(frontier, dirs, state, weighted, &relax)?;
            ctx.finish(start, frontier.len(), edges, strategy.profile_name(), of)?;
            return Ok(next);
        }
        let (list, deal) = ctx.frontier_sources(frontier, dirs);
        let values = self.frontier_values(state, &list)?;
        let strategy = remote_strategy(ctx, &list, dirs, &deal)?;
        let (mut next, edges) = match strategy {
            UpdateStrategy::Direct => {
                let lists = RoundLists {
                    frontier: &list,
                    dirs,
                    want_weights: weighted,
                    buffer_len: ctx.placement().buffer_len(ctx.pool.threads()),
                    deal: &deal,
                };
                batched::push(
                    ctx,
                    lists,
                    |v| list.binary_search(&v).ok().map(|k| values[k]),
                    |&src: &Option<T>, dst, w| relax(src?, w).map(|c| (dst, c)),
                    |buf: &mut Vec<(u32, T)>| {
                        let changed = state.min_batch(buf)?;
                        buf.clear();
                        Ok(changed)
                    },
                    smallest_per_vertex,
                )?
            }
            _ => collab::round::run(
                ctx,
                state,
                collab_round(ctx, &list, dirs, weighted, strategy, Combine::Min, &deal),
                |chunk| Ok(source_values(&list, &values, chunk)),
                |_, x, _, w| relax(x, w),
                |x| x,
            )?,
        };
        smallest_per_vertex(&mut next);
        self.carried = next.iter().map(|&(v, x)| (v, x.to_word())).collect();
        let next = split.union(next.into_iter().map(|x| x.0).collect())?;
        ctx.finish(start, frontier.len(), edges, strategy.profile_name(), of)?;
        Ok(next)
    }

    /// One spreading round of min-updates along `dir` on local `state` (where
    /// [`EdgeMap::spreads_min`] holds): a destination improved to a value `within` accepts is
    /// carried on through the blocks being read; the others, and those in other blocks, are
    /// returned as the next frontier.
    pub fn relax_min_within<T, R>(
        &mut self,
        frontier: &VertexSubset,
        dir: Direction,
        state: &VertexArray<T>,
        weighted: bool,
        relax: R,
        within: &(dyn Fn(T) -> bool + Sync),
    ) -> Result<VertexSubset, ExecError>
    where
        T: StateValue,
        R: Fn(T, f64) -> Option<T> + Sync,
    {
        let cells = state
            .local()
            .ok_or_else(|| ExecError::Other("internal: spreading over remote state".into()))?;
        if weighted {
            let f = RelaxMin::<T, R, true> {
                cells,
                relax: &relax,
                within: Some(within),
            };
            self.run(frontier, dir, &f, None)
        } else {
            let f = RelaxMin::<T, R, false> {
                cells,
                relax: &relax,
                within: Some(within),
            };
            self.run(frontier, dir, &f, None)
        }
    }

    /// [`EdgeMap::relax_min`] split over several members: returns the next frontier (this
    /// member's part of the union), the edges examined and the round's strategy. The owned
    /// sources are listed and their values read one window of
    /// [`RunContext::source_windows`] at a time, so a member holds one window's sources and
    /// values, not 12 B per owned frontier vertex; what changed goes into bits as it is
    /// learnt (a collaborative round's changes piece by piece), not into a list. Every member
    /// walks as many windows as the member with the most, and each window's values are read
    /// after every member finished the previous window and before any member lowers them, so
    /// a round is the same whatever the members' timing. A later window reads what earlier
    /// windows lowered: the same fixpoint, at most as many rounds as with one window.
    fn relax_min_split<T, R>(
        &mut self,
        frontier: &VertexSubset,
        dirs: &[Direction],
        state: &VertexArray<T>,
        weighted: bool,
        relax: &R,
    ) -> Result<(VertexSubset, u64, UpdateStrategy), ExecError>
    where
        T: StateValue,
        R: Fn(T, f64) -> Option<T> + Sync,
    {
        let ctx = self.ctx;
        let split = ctx.split();
        let foreign = ctx.foreign_hubs(frontier, dirs);
        let windows = ctx.source_windows();
        let sources_of = |i: usize, note: bool| match windows.get(i) {
            Some(w) => {
                let foreign: &[u32] = if i == 0 { &foreign } else { &[] };
                ctx.window_sources(frontier, dirs, w.clone(), foreign, note)
            }
            None => (Vec::new(), Deal::none()),
        };
        // The strategy weighs the whole round's updates: a first pass over the windows lists
        // their sources for their degrees only.
        let mut mine = 0u64;
        for i in 0..windows.len() {
            let (list, deal) = sources_of(i, false);
            mine += collab::round::expected_updates(ctx.store, &list, dirs, &deal);
        }
        let strategy = strategy_for(ctx, split.sum_u64(mine)?);
        // A member's count comes from another process: no member has more windows than |V|
        // holds, so a larger count is not waited through.
        let most = (frontier.universe() as u64).div_ceil(SOURCE_WINDOW_FLOOR as u64) + 1;
        let count = match split.collectives() {
            Some(c) => c
                .gather(windows.len() as u64)?
                .into_iter()
                .max()
                .unwrap_or(1),
            None => windows.len() as u64,
        }
        .min(most);
        // Updates reach any vertex: the round's marks keep the owned ones and send the others
        // to their owners.
        let marks = round_marks(ctx, &mut self.owners, state)?;
        let mark = |part: Vec<(u32, T)>| marks.add(part.into_iter().map(|x| x.0));
        let mut edges = 0u64;
        for i in 0..count as usize {
            if i > 0 {
                // Every member's updates of the previous window are done.
                split.settle()?;
            }
            let (list, deal) = sources_of(i, true);
            let values = state.read_at(&list)?;
            // Every member reads the window's values before any member lowers them.
            split.settle()?;
            edges += match strategy {
                UpdateStrategy::Direct => {
                    let lists = RoundLists {
                        frontier: &list,
                        dirs,
                        want_weights: weighted,
                        buffer_len: ctx.placement().buffer_len(ctx.pool.threads()),
                        deal: &deal,
                    };
                    let (_, e) = batched::push(
                        ctx,
                        lists,
                        |v| list.binary_search(&v).ok().map(|k| values[k]),
                        |&src: &Option<T>, dst, w| relax(src?, w).map(|c| (dst, c)),
                        |buf: &mut Vec<(u32, T)>| {
                            mark(state.min_batch(buf)?);
                            buf.clear();
                            Ok(Vec::<(u32, T)>::new())
                        },
                        smallest_per_vertex,
                    )?;
                    e
                }
                _ => collab::round::run_into(
                    ctx,
                    state,
                    collab_round(ctx, &list, dirs, weighted, strategy, Combine::Min, &deal),
                    &collab::sources::Sources::List(&list),
                    |chunk| Ok(source_values(&list, &values, chunk)),
                    |_, x, _, w| relax(x, w),
                    |x| x,
                    &mark,
                )?,
            };
        }
        let next = marks.finish(&split)?;
        Ok((next, edges, strategy))
    }

    /// The state of the (sorted) frontier `list`: what the previous round carried when it
    /// produced this frontier, else read from the array in spans.
    fn frontier_values<T: StateValue>(
        &self,
        state: &VertexArray<T>,
        list: &[u32],
    ) -> Result<Vec<T>, ExecError> {
        if self.carried.len() == list.len() && self.carried.iter().zip(list).all(|(c, &v)| c.0 == v)
        {
            return Ok(self.carried.iter().map(|c| T::from_word(c.1)).collect());
        }
        state.read_at(list)
    }

    /// One round of additions: along every `dirs` edge `u → v` leaving `frontier` (self-loops
    /// skipped), `state[v] += delta` (integers wrap, so adding `u64::MAX` subtracts one).
    /// Returns the vertices that received an addition, ascending, each with its value once the
    /// round is done. Remote additions are batched fetch-and-adds.
    pub fn add<T: StateValue>(
        &mut self,
        frontier: &VertexSubset,
        dirs: &[Direction],
        state: &VertexArray<T>,
        delta: T,
        of: Option<u32>,
    ) -> Result<Vec<(u32, T)>, ExecError> {
        self.add_each(frontier, dirs, state, None, delta, of)
    }

    /// Like [`EdgeMap::add`], adding the source's own value: `state[v] += from[u]` (`from`
    /// must not be `state`).
    pub fn add_from<T: StateValue>(
        &mut self,
        frontier: &VertexSubset,
        dirs: &[Direction],
        from: &VertexArray<T>,
        state: &VertexArray<T>,
        of: Option<u32>,
    ) -> Result<Vec<(u32, T)>, ExecError> {
        self.add_each(frontier, dirs, state, Some(from), T::from_word(0), of)
    }

    fn add_each<T: StateValue>(
        &mut self,
        frontier: &VertexSubset,
        dirs: &[Direction],
        state: &VertexArray<T>,
        from: Option<&VertexArray<T>>,
        delta: T,
        of: Option<u32>,
    ) -> Result<Vec<(u32, T)>, ExecError> {
        self.ctx.record(Operator::EdgeMap);
        let n = frontier.universe();
        let mut touched = Vec::new();
        let local_from = match from {
            Some(f) => f.local().map(Some),
            None => Some(None),
        };
        if let (Some(cells), Some(from)) = (state.local(), local_from) {
            let f = Add { cells, delta, from };
            for &dir in dirs {
                touched.extend(self.run(frontier, dir, &f, of)?.to_list());
            }
        } else {
            let ctx = self.ctx;
            ctx.check()?;
            let split = ctx.split();
            split.settle()?;
            let start = ctx.begin();
            let (list, deal) = ctx.frontier_sources(frontier, dirs);
            let values = match from {
                Some(from) => from.read_at(&list)?,
                None => Vec::new(),
            };
            let value_of = |v: u32| match from {
                Some(_) => list.binary_search(&v).map_or(delta, |k| values[k]),
                None => delta,
            };
            let strategy = remote_strategy(ctx, &list, dirs, &deal)?;
            let (reached, edges) = match strategy {
                UpdateStrategy::Direct => {
                    let lists = RoundLists {
                        frontier: &list,
                        dirs,
                        want_weights: false,
                        buffer_len: ctx.placement().buffer_len(ctx.pool.threads()),
                        deal: &deal,
                    };
                    batched::push(
                        ctx,
                        lists,
                        |v| (v, value_of(v)),
                        |&(src, x), dst, _| (dst < n && dst != src).then_some((dst, x)),
                        |buf: &mut Vec<(u32, T)>| {
                            state.add_anywhere(buf)?;
                            let reached = buf.iter().map(|x| x.0).collect::<Vec<u32>>();
                            buf.clear();
                            Ok(reached)
                        },
                        sort_distinct,
                    )?
                }
                _ => {
                    let (changed, edges) = collab::round::run(
                        ctx,
                        state,
                        collab_round(ctx, &list, dirs, false, strategy, Combine::Add, &deal),
                        |chunk| Ok(chunk.iter().map(|&v| Some(value_of(v))).collect()),
                        |src, x, dst, _| (dst != src).then_some(x),
                        |x| x,
                    )?;
                    (changed.into_iter().map(|c| c.0).collect(), edges)
                }
            };
            touched = reached;
            touched.sort_unstable();
            touched.dedup();
            touched = split.union(touched)?.to_list();
            ctx.finish(start, frontier.len(), edges, strategy.profile_name(), of)?;
        }
        touched.sort_unstable();
        touched.dedup();
        let values = state.read_at(&touched)?;
        Ok(touched.into_iter().zip(values).collect())
    }

    /// One round: applies `f` along the `dir` edges of `frontier` (pull reads the reverse
    /// lists), records the round's statistics (`of` = rounds planned, when known) and returns
    /// the activated vertices.
    pub fn run<F: EdgeFunc>(
        &mut self,
        frontier: &VertexSubset,
        dir: Direction,
        f: &F,
        of: Option<u32>,
    ) -> Result<VertexSubset, ExecError> {
        self.ctx.record(Operator::EdgeMap);
        let ctx = self.ctx;
        ctx.check()?;
        let start = ctx.begin();
        let strategy = match ctx.cfg.mode {
            // Spreading reads each block about once whatever the frontier: no other way of
            // reading it needs pricing (pricing pull alone walks every vertex's index).
            _ if f.spreads() && self.spreading_store(dir) => Strategy::SpreadPush,
            Mode::Auto => match (ctx.store.read_model(), ctx.store.csr(dir)) {
                (Some(model), None) => self.priced(frontier, dir, f, &model),
                _ => {
                    let sum = self.degree_sum(frontier, dir);
                    Strategy::choose(Mode::Auto, frontier.len(), sum, ctx.store.shape().arcs)
                }
            },
            m => Strategy::choose(m, 0, 0, 0),
        };
        let (next, edges) = match strategy {
            Strategy::SparsePush => self.push(frontier, dir, f, FetchOrder::AsGiven)?,
            Strategy::BlockPush => self.push(frontier, dir, f, FetchOrder::ByBlock)?,
            Strategy::ScanPush => self.scan_push(frontier, dir, f)?,
            Strategy::DensePull => self.pull(frontier, dir, f)?,
            Strategy::SpreadPush => self.spread_push(frontier, dir, f)?,
        };
        ctx.finish(start, frontier.len(), edges, strategy.name(), of)?;
        Ok(next)
    }

    /// Out of core on a clustered graph, under `auto` or `block` (a spreading push is read
    /// block by block).
    fn spreading_store(&self, dir: Direction) -> bool {
        let ctx = self.ctx;
        matches!(ctx.cfg.mode, Mode::Auto | Mode::Block)
            && ctx.store.clustered()
            && ctx.store.csr(dir).is_none()
    }

    /// Whether min-updates along `dir` on `state` carry on through the blocks they read: then
    /// a traversal runs as rounds of min-updates (label-correcting) rather than level by level
    /// with final claims, and crosses a cluster in one round.
    pub fn spreads_min<T: StateValue>(&self, dir: Direction, state: &VertexArray<T>) -> bool {
        state.local().is_some() && self.spreading_store(dir)
    }

    /// Out-degree (in `dir`) sum of the frontier, for the Auto rule.
    fn degree_sum(&self, frontier: &VertexSubset, dir: Direction) -> u64 {
        let store = self.ctx.store;
        self.ctx.pool.install(|| match frontier.as_list() {
            Some(list) => list.par_iter().map(|&v| store.degree(dir, v)).sum(),
            None => {
                let bits = frontier.as_bitmap().map(Cow::Borrowed);
                let bits = bits.unwrap_or_else(|| Cow::Owned(frontier.to_bitmap()));
                bits.words()
                    .par_iter()
                    .enumerate()
                    .map(|(wi, &w)| {
                        let mut w = w;
                        let mut sum = 0;
                        while w != 0 {
                            sum += store.degree(dir, wi as u32 * 64 + w.trailing_zeros());
                            w &= w - 1;
                        }
                        sum
                    })
                    .sum()
            }
        })
    }

    /// Out of core under `auto`: the strategy whose reads cost least on this device — push
    /// block by block or coalesced, or pull, which reads the in-lists of the vertices that
    /// still want updates (pull also stops early, so it wins ties). Pull is priced at every
    /// level, not only where Ligra's density rule would pull: a late BFS level's frontier has
    /// few edges but its lists fill most blocks, while the few unvisited vertices' lists fill
    /// few. It is not priced when push costs less than the walk any pull scan pays.
    fn priced<F: EdgeFunc>(
        &self,
        frontier: &VertexSubset,
        dir: Direction,
        f: &F,
        model: &ReadModel,
    ) -> Strategy {
        let ctx = self.ctx;
        let n = frontier.universe();
        let push = read_cost::push_blocks(ctx, dir, frontier);
        let by_block = read_cost::block_by_block_secs(&push, model);
        let coalesced = read_cost::coalesced_secs(&push, model, n);
        let (best, secs) = if coalesced < by_block {
            (Strategy::ScanPush, coalesced)
        } else {
            (Strategy::SparsePush, by_block)
        };
        if secs > read_cost::scan_walk_secs(n) {
            let pull = read_cost::pull_blocks(ctx, reverse(dir), n, |v| f.cond(v));
            if read_cost::coalesced_secs(&pull, model, n) <= secs {
                return Strategy::DensePull;
            }
        }
        best
    }

    /// A push round, its lists fetched in `order` (out of core always by block).
    fn push<F: EdgeFunc>(
        &mut self,
        frontier: &VertexSubset,
        dir: Direction,
        f: &F,
        order: FetchOrder,
    ) -> Result<(VertexSubset, u64), ExecError> {
        let ctx = self.ctx;
        let store = ctx.store;
        let n = frontier.universe();
        let mut list: Cow<[u32]> = match frontier.as_list() {
            Some(l) => Cow::Borrowed(l),
            None => Cow::Owned(frontier.to_list()),
        };
        let csr = store.csr(dir);
        // Out of core a sparse level is read in block order too, so no block is read twice in
        // one level because the frontier listed its vertices in discovery order.
        let order = if csr.is_none() {
            FetchOrder::ByBlock
        } else {
            order
        };
        let chunk = ctx.pool.chunk_len(list.len(), 16, 1024);
        let chunks: Vec<&[u32]> = if order == FetchOrder::ByBlock {
            let (keyed, sorted) = by_block(store, dir, &list);
            list = Cow::Owned(sorted);
            block_chunks(&list, &keyed, chunk)
        } else {
            list.chunks(chunk).collect()
        };
        if !F::CLAIMS && self.seen.is_none() {
            self.seen = Some(AtomicBitmap::new(n));
        }
        let seen = self.seen.as_ref();
        let parts = ctx.pool.install(|| {
            chunks
                .par_iter()
                .map(|chunk| {
                    ctx.check()?;
                    let mut out = Vec::new();
                    let mut edges = 0u64;
                    match csr {
                        Some(csr) => {
                            let mut scratch = Vec::new();
                            for &v in chunk.iter() {
                                let ns = csr.neighbours(v);
                                let ws = if F::WEIGHTED {
                                    csr.weights_f64(v, &mut scratch)
                                } else {
                                    None
                                };
                                edges += ns.len() as u64;
                                push_list(f, v, ns, ws, seen, &mut out);
                            }
                        }
                        None => {
                            store.for_each_list(dir, chunk, order, F::WEIGHTED, |v, ns, ws| {
                                edges += ns.len() as u64;
                                push_list(f, v, ns, ws, seen, &mut out);
                            })?
                        }
                    }
                    Ok((out, edges))
                })
                .collect::<Result<Vec<_>, ExecError>>()
        })?;
        Ok(self.gather_next(n, parts))
    }

    /// A push block by block in which a worker carries an improvement on at once, in the same
    /// store call, when `f` lets it ([`EdgeFunc::carry`]) and the store has the destination's
    /// list at hand (out of core: in a block of the worker's share of the frontier, read by
    /// that call); any other joins the next frontier. On a clustered graph a round thus crosses whole clusters
    /// where a level crosses one vertex's width, and reads a block about once, not once per
    /// level crossing it. Carrying on into blocks beyond the share was tried: calls then
    /// wander over more blocks than the cache keeps and read them again. The updates are
    /// min-updates, so visiting a vertex before its final value only costs work.
    fn spread_push<F: EdgeFunc>(
        &mut self,
        frontier: &VertexSubset,
        dir: Direction,
        f: &F,
    ) -> Result<(VertexSubset, u64), ExecError> {
        let ctx = self.ctx;
        let store = ctx.store;
        let n = frontier.universe();
        let list: Cow<[u32]> = match frontier.as_list() {
            Some(l) => Cow::Borrowed(l),
            None => Cow::Owned(frontier.to_list()),
        };
        let (keyed, sorted) = by_block(store, dir, &list);
        let chunk = ctx.pool.chunk_len(sorted.len(), 16, 1024);
        let mut chunks = block_chunks(&sorted, &keyed, chunk);
        // Every other round sweeps the blocks back: it starts where the last round ended, on
        // the blocks the cache took last.
        if self.sweep_back {
            chunks.reverse();
        }
        self.sweep_back = !self.sweep_back;
        if self.seen.is_none() {
            self.seen = Some(AtomicBitmap::new(n));
        }
        let seen = self.seen.as_ref().expect("made above");
        let parts = ctx.pool.install(|| {
            chunks
                .par_iter()
                .map(|chunk| {
                    ctx.check()?;
                    let mut out = Vec::new();
                    let mut left = Vec::new();
                    let mut edges = 0u64;
                    store.for_each_list_spreading(
                        dir,
                        chunk,
                        F::WEIGHTED,
                        |src, ns, ws, more| {
                            edges += ns.len() as u64;
                            let mut emit = |dst: u32, w: f64| {
                                if f.cond(dst) && f.update_atomic(src, dst, w) {
                                    // A negative weight is never followed within the call, so a
                                    // negative cycle cannot keep it going.
                                    if w >= 0.0 && f.carry(dst) {
                                        more.push(dst);
                                    } else if seen.set(dst) {
                                        out.push(dst);
                                    }
                                }
                            };
                            match ws {
                                Some(ws) if F::WEIGHTED => {
                                    ns.iter().zip(ws).for_each(|(&d, &w)| emit(d, w))
                                }
                                _ => ns.iter().for_each(|&d| emit(d, 1.0)),
                            }
                        },
                        &mut left,
                    )?;
                    // What the store did not carry on waits for the next round.
                    out.extend(left.into_iter().filter(|&v| seen.set(v)));
                    Ok((out, edges))
                })
                .collect::<Result<Vec<_>, ExecError>>()
        })?;
        Ok(self.gather_next(n, parts))
    }

    /// Joins the workers' activated vertices and edge counts, and resets the de-duplication
    /// bitmap for the next round.
    fn gather_next(&mut self, n: u32, parts: Vec<(Vec<u32>, u64)>) -> (VertexSubset, u64) {
        let edges = parts.iter().map(|p| p.1).sum();
        let mut next = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
        for (p, _) in parts {
            next.extend_from_slice(&p);
        }
        if let Some(seen) = self.seen.as_mut() {
            if next.len() as u64 > n as u64 / 64 {
                seen.clear_all();
            } else {
                for &v in &next {
                    seen.clear(v);
                }
            }
        }
        (VertexSubset::from_list(n, next), edges)
    }

    /// Push with the frontier's lists read by a scan of the chunks that hold them (one scan per
    /// range of [`balance::each_scan_range`]), large sequential reads instead of one read per block.
    fn scan_push<F: EdgeFunc>(
        &mut self,
        frontier: &VertexSubset,
        dir: Direction,
        f: &F,
    ) -> Result<(VertexSubset, u64), ExecError> {
        let ctx = self.ctx;
        let store = ctx.store;
        let n = frontier.universe();
        let bits: Cow<Bitmap> = match frontier.as_bitmap() {
            Some(b) => Cow::Borrowed(b),
            None => Cow::Owned(frontier.to_bitmap()),
        };
        let bits = &*bits;
        if !F::CLAIMS && self.seen.is_none() {
            self.seen = Some(AtomicBitmap::new(n));
        }
        let seen = self.seen.as_ref();
        let parts = balance::each_scan_range(ctx, dir, n, |r| {
            ctx.check()?;
            let mut out = Vec::new();
            let mut edges = 0u64;
            store.scan_lists_where(
                dir,
                r,
                F::WEIGHTED,
                |v| bits.get(v),
                |v, ns, ws| {
                    edges += ns.len() as u64;
                    push_list(f, v, ns, ws, seen, &mut out);
                },
            )?;
            Ok::<_, ExecError>((out, edges))
        })?;
        Ok(self.gather_next(n, parts))
    }

    fn pull<F: EdgeFunc>(
        &mut self,
        frontier: &VertexSubset,
        dir: Direction,
        f: &F,
    ) -> Result<(VertexSubset, u64), ExecError> {
        let ctx = self.ctx;
        let store = ctx.store;
        let n = frontier.universe();
        let bits: Cow<Bitmap> = match frontier.as_bitmap() {
            Some(b) => Cow::Borrowed(b),
            None => Cow::Owned(frontier.to_bitmap()),
        };
        let bits = &*bits;
        let rev = reverse(dir);
        let csr = store.csr(rev);
        // One range's pull: the words of the next frontier over the range, and edges examined.
        let pull_range = |r: Range<u32>| -> Result<(Vec<u64>, u64), ExecError> {
            ctx.check()?;
            let mut words = vec![0u64; (r.end - r.start).div_ceil(64) as usize];
            let mut edges = 0u64;
            let mut visit = |dst: u32, ns: &[u32], ws: Option<&[f64]>| {
                let (hit, e) = pull_list(f, dst, ns, ws, bits);
                edges += e;
                if hit {
                    let i = (dst - r.start) as usize;
                    words[i >> 6] |= 1 << (i & 63);
                }
            };
            match csr {
                Some(csr) => {
                    let mut scratch = Vec::new();
                    for dst in r.clone() {
                        let ws = if F::WEIGHTED {
                            csr.weights_f64(dst, &mut scratch)
                        } else {
                            None
                        };
                        visit(dst, csr.neighbours(dst), ws);
                    }
                }
                // Only vertices that still want updates are read: a late level skips every
                // chunk whose vertices are all done.
                None => {
                    store.scan_lists_where(rev, r.clone(), F::WEIGHTED, |dst| f.cond(dst), visit)?
                }
            }
            Ok((words, edges))
        };
        let parts = match csr {
            Some(_) => {
                let ranges = balance::list_ranges(ctx, rev, n, 4096, 65536);
                ctx.pool.install(|| {
                    ranges
                        .into_par_iter()
                        .map(pull_range)
                        .collect::<Result<Vec<_>, ExecError>>()
                })?
            }
            None => balance::each_scan_range(ctx, rev, n, pull_range)?,
        };
        let edges = parts.iter().map(|p| p.1).sum();
        let mut words = Vec::with_capacity((n as usize).div_ceil(64));
        for (w, _) in parts {
            words.extend_from_slice(&w);
        }
        Ok((
            VertexSubset::from_bitmap(n, Bitmap::from_words(words)),
            edges,
        ))
    }
}

/// The update strategy of a remote-state round from `list` along `dirs`: the setting, or the
/// cost rule over the updates the round will send ([`collab::choose`]). Split over several
/// compute nodes the rule weighs every member's updates (a collective), so all members choose
/// the same.
fn remote_strategy<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    list: &[u32],
    dirs: &[Direction],
    deal: &Deal,
) -> Result<UpdateStrategy, ExecError> {
    let mine = collab::round::expected_updates(ctx.store, list, dirs, deal);
    let updates = ctx.split().sum_u64(mine)?;
    Ok(strategy_for(ctx, updates))
}

/// The update strategy of a remote-state round sending `updates` in all (every member's).
fn strategy_for<S: GraphStore>(ctx: &RunContext<'_, S>, updates: u64) -> UpdateStrategy {
    let windows = Windows::for_budget(ctx.n(), ctx.placement().budget(), ctx.pool.threads());
    collab::choose(ctx.cfg.dm_update, updates, &windows)
}

/// A collaborative round from `list` along `dirs` under the run's budget.
fn collab_round<'r, S: GraphStore>(
    ctx: &RunContext<'_, S>,
    list: &'r [u32],
    dirs: &'r [Direction],
    weighted: bool,
    strategy: UpdateStrategy,
    combine: Combine,
    deal: &'r Deal,
) -> Round<'r> {
    Round {
        sources: list,
        dirs,
        weighted,
        strategy,
        combine,
        deal,
        fresh: false,
        windows: Windows::for_budget(ctx.n(), ctx.placement().budget(), ctx.pool.threads()),
    }
}

/// The values of a chunk of the sorted frontier `list`, whose values are `values`.
fn source_values<T: Copy>(list: &[u32], values: &[T], chunk: &[u32]) -> Vec<Option<T>> {
    chunk
        .iter()
        .map(|v| {
            list.binary_search(v)
                .ok()
                .and_then(|k| values.get(k).copied())
        })
        .collect()
}

/// The marks of a split round updating `state`, learning who owns what at the run's first
/// split round (a collective: every member calls this at the same points).
fn round_marks<'r, S: GraphStore, T: StateValue>(
    ctx: &RunContext<'_, S>,
    owners: &'r mut Option<Owners>,
    state: &'r VertexArray<T>,
) -> Result<Marks<'r>, ExecError> {
    let split = ctx.split();
    let owners = match owners {
        Some(o) => o,
        None => owners.insert(Owners::learn(&split)?),
    };
    Marks::new(
        ctx.n(),
        split.owned(),
        state.remote(),
        ctx.placement().memory(),
        owners,
        ctx.placement().budget(),
    )
}

/// Sorts `list` and drops repeats: a round's changed vertices, compacted.
fn sort_distinct(list: &mut Vec<u32>) {
    list.sort_unstable();
    list.dedup();
}

/// Sorts `changes` by vertex and keeps one entry per vertex, with the smallest value it was
/// given: a min-update round's changes, compacted.
fn smallest_per_vertex<T: StateValue>(changes: &mut Vec<(u32, T)>) {
    changes.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal))
    });
    changes.dedup_by_key(|x| x.0);
}

/// A claim on local cells: `unset → value`, once per vertex.
struct Claim<'s, T: StateValue> {
    cells: &'s [T::Cell],
    unset: T,
    value: T,
}

impl<T: StateValue> EdgeFunc for Claim<'_, T> {
    const CLAIMS: bool = true;

    #[inline]
    fn update_atomic(&self, _src: u32, dst: u32, _w: f64) -> bool {
        T::claim(&self.cells[dst as usize], self.unset, self.value)
    }

    #[inline]
    fn update(&self, _src: u32, dst: u32, _w: f64) -> bool {
        T::store(&self.cells[dst as usize], self.value);
        true
    }

    #[inline]
    fn cond(&self, dst: u32) -> bool {
        T::load(&self.cells[dst as usize]) == self.unset
    }
}

/// A min-update on local cells through `relax`; `W`: whether it reads weights.
struct RelaxMin<'s, T: StateValue, R, const W: bool> {
    cells: &'s [T::Cell],
    relax: &'s R,
    /// The values a spreading push carries on within the round (all when `None`).
    within: Option<&'s (dyn Fn(T) -> bool + Sync)>,
}

impl<T, R, const W: bool> EdgeFunc for RelaxMin<'_, T, R, W>
where
    T: StateValue,
    R: Fn(T, f64) -> Option<T> + Sync,
{
    const WEIGHTED: bool = W;

    #[inline]
    fn update_atomic(&self, src: u32, dst: u32, w: f64) -> bool {
        match (self.relax)(T::load(&self.cells[src as usize]), w) {
            Some(c) => T::lower(&self.cells[dst as usize], c),
            None => false,
        }
    }

    /// Only the rounds of [`EdgeMap::relax_min_within`] spread.
    fn spreads(&self) -> bool {
        self.within.is_some()
    }

    fn carry(&self, dst: u32) -> bool {
        self.within
            .is_none_or(|within| within(T::load(&self.cells[dst as usize])))
    }
}

/// An addition on local cells, skipping self-loops: `delta`, or the source's value in `from`.
struct Add<'s, T: StateValue> {
    cells: &'s [T::Cell],
    delta: T,
    from: Option<&'s [T::Cell]>,
}

impl<T: StateValue> EdgeFunc for Add<'_, T> {
    #[inline]
    fn update_atomic(&self, src: u32, dst: u32, _w: f64) -> bool {
        if src == dst {
            return false;
        }
        let x = match self.from {
            Some(from) => T::load(&from[src as usize]),
            None => self.delta,
        };
        T::add(&self.cells[dst as usize], x);
        true
    }
}

/// `list` keyed by the edge block its lists start in and sorted so, and the vertices in that
/// order: a push's frontier read block by block. A key is the block in the high half and the
/// vertex in the low (one `u64` sorts faster than a pair); blocks past 2^32 - 1 (a 16 TiB file)
/// share the last key, which only splits their reads between chunks.
fn by_block<S: GraphStore>(store: &S, dir: Direction, list: &[u32]) -> (Vec<u64>, Vec<u32>) {
    let mut keyed: Vec<u64> = list
        .iter()
        .map(|&v| store.edge_block(dir, v).min(u64::from(u32::MAX)) << 32 | u64::from(v))
        .collect();
    keyed.par_sort_unstable();
    let sorted = keyed.iter().map(|&k| k as u32).collect();
    (keyed, sorted)
}

/// Splits a frontier sorted by block into chunks of about `target` vertices that never split
/// one block's vertices, so each block is fetched by one chunk only.
fn block_chunks<'l>(list: &'l [u32], keyed: &[u64], target: usize) -> Vec<&'l [u32]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=list.len() {
        let cut = i == list.len() || (i - start >= target && keyed[i] >> 32 != keyed[i - 1] >> 32);
        if cut {
            out.push(&list[start..i]);
            start = i;
        }
    }
    out
}

/// Push along one list: claims or de-duplicates each activated destination into `out`.
#[inline]
fn push_list<F: EdgeFunc>(
    f: &F,
    src: u32,
    ns: &[u32],
    ws: Option<&[f64]>,
    seen: Option<&AtomicBitmap>,
    out: &mut Vec<u32>,
) {
    let mut emit = |dst: u32, w: f64| {
        if f.cond(dst) && f.update_atomic(src, dst, w) {
            let fresh = match seen {
                Some(seen) if !F::CLAIMS => seen.set(dst),
                _ => true,
            };
            if fresh {
                out.push(dst);
            }
        }
    };
    match ws {
        Some(ws) if F::WEIGHTED => {
            for (&d, &w) in ns.iter().zip(ws) {
                emit(d, w);
            }
        }
        _ => {
            for &d in ns {
                emit(d, 1.0);
            }
        }
    }
}

/// Pull into `dst` from its active in-neighbours; returns (activated, edges examined).
#[inline]
fn pull_list<F: EdgeFunc>(
    f: &F,
    dst: u32,
    ns: &[u32],
    ws: Option<&[f64]>,
    active: &Bitmap,
) -> (bool, u64) {
    if !f.cond(dst) {
        return (false, 0);
    }
    let mut hit = false;
    let mut edges = 0;
    match ws {
        Some(ws) if F::WEIGHTED => {
            for (&s, &w) in ns.iter().zip(ws) {
                edges += 1;
                if active.get(s) && f.update(s, dst, w) {
                    hit = true;
                    if !f.cond(dst) {
                        break;
                    }
                }
            }
        }
        _ => {
            for &s in ns {
                edges += 1;
                if active.get(s) && f.update(s, dst, 1.0) {
                    hit = true;
                    if !f.cond(dst) {
                        break;
                    }
                }
            }
        }
    }
    (hit, edges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_rule() {
        assert_eq!(
            Strategy::choose(Mode::Auto, 1, 10, 1000),
            Strategy::SparsePush
        );
        assert_eq!(
            Strategy::choose(Mode::Auto, 1, 60, 1000),
            Strategy::DensePull
        );
        assert_eq!(
            Strategy::choose(Mode::Block, 1, 600, 1000),
            Strategy::BlockPush
        );
    }

    #[test]
    fn block_chunks_never_split_a_block() {
        let keyed: Vec<u64> = (0..100u64).map(|v| (v / 7) << 32 | v).collect();
        let list: Vec<u32> = keyed.iter().map(|&k| k as u32).collect();
        let chunks = block_chunks(&list, &keyed, 10);
        assert_eq!(chunks.iter().map(|c| c.len()).sum::<usize>(), 100);
        for w in chunks.windows(2) {
            assert_ne!(w[0].last().unwrap() / 7, w[1][0] / 7);
        }
    }
}
