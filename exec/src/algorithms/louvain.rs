//! Louvain communities (Blondel et al. 2008, networkx's `louvain_communities`): local moving,
//! then aggregation of the communities into one vertex each, level after level, while the
//! modularity grows by more than `TOLERANCE`.
//!
//! The graph optimised is the undirected view: every arc (or undirected edge) is an edge of
//! its weight (1 when unweighted), arcs both ways between two vertices add up, a self-loop adds
//! twice its weight to its vertex's degree (networkx's convention). Modularity is
//! `Q = Σ_c [in_c / 2m − γ (tot_c / 2m)²]` with `γ = RESOLUTION`.
//!
//! Determinism: the moves are sequential in effect, in one order drawn from `SEED` per level,
//! so the result depends on the seed and not on the thread count or on which list arrives
//! first. Each chunk of that order has its moves proposed in parallel against the state at the
//! chunk's start and kept in order when nothing they read has changed since, recomputed
//! otherwise (`louvain/moves.rs`). After a level's first sweep only the vertices with a
//! neighbour that moved are visited again (`louvain/active.rs`), so the partition is the one
//! moving those vertices one after another gives (networkx's sweep visits every vertex every
//! time). The first level reads the graph through the store a chunk at a time
//! (`lists::fetch`, many lists in flight out of core and on DM), and keeps its per-vertex
//! state (community, degree, community totals) in run-context arrays: each chunk reads the
//! communities and totals it needs in one batch, numbers them locally, moves its vertices over
//! that local copy, and writes back what changed. The communities of the first level are then
//! aggregated into a graph held in memory (one vertex per community), on which the coarser
//! levels run (`louvain/coarse.rs`), chunk by chunk of their order likewise.

mod active;
pub(super) mod coarse;
mod moves;

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use arrow_schema::SchemaRef;
use base::Xoshiro256;
use planner::registry::{
    AlgorithmSpec, ColumnSpec, ColumnType, Operator, ParamSpec, Step, SummarySpec,
};
use planner::AlgoCall;
use rayon::prelude::*;
use storage::{CsrView, Direction, GraphStore, WeightSlice};

use super::Algorithm;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::lists;
use crate::output::{key_order, per_vertex_batches, pick};
use crate::pool::Pool;
use crate::result::{ResultTable, SummaryValue};
use crate::state::VertexArray;
use active::Active;
use coarse::Coarse;
use moves::{MoveState, Mover, Workspace};

/// Louvain community detection.
pub struct Louvain;

/// Louvain's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Most local-moving sweeps per level.
    pub sweeps: u32,
    /// Most levels.
    pub levels: u32,
    pub seed: u64,
    pub resolution: f64,
    /// A level whose modularity gain is at most this ends the run (its partition is kept).
    pub tolerance: f64,
}

impl Default for Config {
    /// The declared defaults.
    fn default() -> Config {
        Louvain::config(&AlgoCall::new(&Louvain::SPEC))
    }
}

/// The partition found and what the run reports about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Communities {
    /// Per vertex, its community: dense ids numbered by smallest member vertex.
    pub community: Vec<u64>,
    pub modularity: f64,
    pub levels: u32,
    pub count: u64,
}

/// Vertices whose lists one chunk of the first level fetches and moves.
pub(super) const CHUNK: usize = 4096;

/// The first level's degree pass, as EXPLAIN shows it (Leiden's too).
pub(super) const DEGREES: Step = Step::call(
    Operator::ListFetch,
    "all, in+out, degree[v] := Σ weights (self-loops twice); total := degree; community[v] := v",
);

/// The first level's local moving, as EXPLAIN shows it (Leiden's too).
pub(super) const MOVES: Step = Step::call(
    Operator::ListFetch,
    "chunks of the SEED order (after the first sweep, vertices with a neighbour that moved), in+out, community[v] := neighbour community of largest gain, totals moved with it; ITER sweeps at most",
);

/// The parameters Louvain and Leiden share.
pub(super) const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "iter",
        1,
        super::ITERATIONS_MAX,
        100,
        "most local-moving sweeps per level",
    ),
    ParamSpec::int("levels", 1, 1000, 100, "most levels (1: local moving only)"),
    ParamSpec::int(
        "seed",
        0,
        u64::MAX,
        0,
        "seed of the order vertices are visited in",
    ),
    ParamSpec::float(
        "resolution",
        0.0,
        1e9,
        1.0,
        "γ: above 1 smaller communities, below 1 larger",
    ),
    ParamSpec::float(
        "tolerance",
        0.0,
        1.0,
        1e-7,
        "least modularity gain of a level to go on",
    ),
];

/// The rows of a partition: a community per vertex.
pub(super) const COLUMNS: &[ColumnSpec] = &[
    ColumnSpec::VERTEX,
    ColumnSpec::new("community", ColumnType::UInt64),
];

/// What a partition's run reports besides its rows.
pub(super) const SUMMARIES: &[SummarySpec] = &[
    SummarySpec::new(
        "modularity",
        ColumnType::Float64,
        "modularity of the partition found",
    ),
    SummarySpec::new("levels", ColumnType::UInt64, "levels of local moving run"),
    SummarySpec::new("communities", ColumnType::UInt64, "number of communities"),
];

impl Algorithm for Louvain {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "louvain",
        summary: "Louvain communities (modularity optimisation), directions ignored",
        semantics: "Louvain community detection as networkx's louvain_communities: sweeps of local moving (each vertex, in an order drawn from SEED, joins the neighbouring community of largest modularity gain, ties to the smallest id; at most ITER sweeps, until no vertex moves), then the communities become the vertices of a smaller graph, for at most LEVELS levels, until a level gains at most TOLERANCE modularity (its partition is kept). The graph optimised is the undirected view: each arc or edge counts with its weight (1 when unweighted; negative weights are refused), arcs both ways add up, a self-loop adds twice its weight to the degree. Modularity Q = Σ_c in_c/2m − RESOLUTION·(tot_c/2m)². Moves are sequential in effect (proposed in parallel per chunk of the order, kept in order when what they read is unchanged, else recomputed); after a level's first sweep only vertices with a neighbour that moved are visited again. The result depends on SEED only, not on THREADS or the store. The first level reads the graph through the store (in memory, out of core, DM) with its state in run arrays; the coarser levels run on the aggregated graph in memory. Communities are numbered 0..k-1 by their smallest vertex id. Reports modularity, levels and communities.",
        example: "RUN louvain SEED 7 ON g ORDER BY community;",
        iter_param: Some("iter"),
        params: PARAMS,
        columns: COLUMNS,
        program: &[
            DEGREES,
            MOVES,
            Step::call(Operator::ListFetch, "all, in+out, the communities aggregated into a graph in memory"),
            Step::setup("levels 2..LEVELS: local moving and aggregation on the graph in memory"),
        ],
        dense: true,
        uses_weights: true,
        needs_nonnegative_weights: true,
        // community (u32), degree and community total (f64 each), visiting order, renumbering
        // and chunk-local numbering (u32 each), its bitmap and the vertices still to visit (a
        // bit each, rounded up to a byte); the aggregated graph comes on top, at most the
        // lists' size
        state_bytes: 33,
        passes: Some("local moving over chunks of the seeded order, lists fetched a chunk at a time, moves proposed in parallel and kept in order, later sweeps over the vertices with a neighbour that moved; coarser levels in memory"),
        summaries: SUMMARIES,
        ..AlgorithmSpec::BASE
    };
    type Config = Config;
    type Output = Communities;

    fn config(call: &AlgoCall) -> Config {
        Config {
            sweeps: call.int("iter") as u32,
            levels: call.int("levels") as u32,
            seed: call.int("seed"),
            resolution: call.float("resolution"),
            tolerance: call.float("tolerance"),
        }
    }

    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &Config,
    ) -> Result<Communities, ExecError> {
        compute(ctx, cfg)
    }

    fn batches<S: GraphStore>(
        store: &S,
        schema: &SchemaRef,
        out: &Communities,
    ) -> Result<Vec<RecordBatch>, ExecError> {
        per_vertex_batches(store, schema, |vertices| {
            vec![Arc::new(UInt64Array::from(pick(&out.community, vertices))) as ArrayRef]
        })
    }

    fn summaries(out: &Communities) -> Vec<(&'static str, SummaryValue)> {
        vec![
            ("modularity", SummaryValue::Float64(out.modularity)),
            ("levels", SummaryValue::UInt64(out.levels as u64)),
            ("communities", SummaryValue::UInt64(out.count)),
        ]
    }

    fn verify<S: GraphStore>(store: &S, cfg: &Config, table: &ResultTable) -> Result<(), String> {
        super::checks::louvain::verify(store, cfg.resolution, table)
    }
}

/// The lists of the undirected view: in and out on a directed graph, out on an undirected one.
fn directions<S: GraphStore>(store: &S) -> &'static [Direction] {
    if store.shape().directed {
        &[Direction::Out, Direction::In]
    } else {
        &[Direction::Out]
    }
}

/// The undirected-view neighbourhoods of some vertices: entries `(neighbour, weight)`, the
/// rows one after another.
pub(super) struct Rows {
    entries: Vec<(u32, f64)>,
    /// Per row, where its entries end.
    end: Vec<usize>,
}

impl Rows {
    fn row(&self, i: usize) -> &[(u32, f64)] {
        let start = if i == 0 { 0 } else { self.end[i - 1] };
        &self.entries[start..self.end[i]]
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &[(u32, f64)]> {
        (0..self.end.len()).map(|i| self.row(i))
    }

    /// Moves the rows' vertices (row `i` is `vertex_degree(i)`'s neighbourhood) between the
    /// communities of `state`; returns the rows whose vertex moved.
    fn move_vertices(
        &self,
        pool: &Pool,
        vertex_degree: impl Fn(usize) -> (u32, f64),
        state: &mut MoveState<'_>,
        ws: &mut Workspace,
    ) -> Vec<u32> {
        let movers: Vec<Mover<'_>> = (0..self.end.len())
            .map(|i| {
                let (vertex, degree) = vertex_degree(i);
                Mover {
                    vertex,
                    degree,
                    row: self.row(i),
                }
            })
            .collect();
        moves::move_chunk(pool, &movers, state, ws)
    }
}

/// The undirected-view neighbourhoods of `vertices` (distinct), in their order: every entry
/// `(u, w)` of each list (out before in), a self-loop of an undirected graph twice (a directed
/// one is in both lists already). Returns the rows and the number of entries read.
pub(super) fn neighbourhoods<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    vertices: &[u32],
) -> Result<(Rows, u64), ExecError> {
    let store = ctx.store;
    let directed = store.shape().directed;
    if let Some(lists) = lists_in_memory(store) {
        ctx.record(planner::registry::Operator::ListFetch);
        let rows = rows_in_memory(ctx, &lists, directed, vertices);
        let read = rows.entries.len() as u64;
        return Ok((rows, read));
    }
    let mut at: Vec<(u32, u32)> = vertices.iter().copied().zip(0..).collect();
    at.sort_unstable();
    let mut entries = Vec::new();
    // Per list as it arrived: its vertex's position and where its entries end.
    let mut pieces: Vec<(u32, usize)> = Vec::with_capacity(vertices.len());
    for &dir in directions(store) {
        lists::fetch(ctx, dir, vertices, true, |v, ns, ws| {
            let Ok(i) = at.binary_search_by_key(&v, |a| a.0) else {
                return;
            };
            match ws {
                Some(ws) => entries.extend(ns.iter().zip(ws).map(|(&u, &w)| {
                    let loops = if u == v && !directed { 2.0 } else { 1.0 };
                    (u, w * loops)
                })),
                None => entries.extend(ns.iter().map(|&u| {
                    let loops = if u == v && !directed { 2.0 } else { 1.0 };
                    (u, loops)
                })),
            }
            pieces.push((at[i].1, entries.len()));
        })?;
    }
    let read = entries.len() as u64;
    let in_order = pieces.len() == vertices.len() && pieces.iter().zip(0..).all(|(p, i)| p.0 == i);
    if in_order {
        let end = pieces.into_iter().map(|p| p.1).collect();
        return Ok((Rows { entries, end }, read));
    }
    // Lists arrived out of order or in two directions: gather each vertex's pieces.
    let mut spans: Vec<(u32, usize, usize)> = Vec::with_capacity(pieces.len());
    let mut start = 0;
    for (i, end) in pieces {
        spans.push((i, start, end));
        start = end;
    }
    // Stable, so a vertex's out-list stays before its in-list.
    spans.sort_by_key(|s| s.0);
    let mut rows = Rows {
        entries: Vec::with_capacity(entries.len()),
        end: Vec::with_capacity(vertices.len()),
    };
    let mut next = spans.iter().peekable();
    for i in 0..vertices.len() as u32 {
        while let Some(&(_, a, b)) = next.next_if(|s| s.0 == i) {
            rows.entries.extend_from_slice(&entries[a..b]);
        }
        rows.end.push(rows.entries.len());
    }
    Ok((rows, read))
}

/// The vertices of one part of the rows and the entries they fill.
type RowPiece<'a> = (&'a [u32], &'a mut [(u32, f64)]);

/// [`neighbourhoods`] from lists in memory: the rows' ends from the degrees, then the
/// entries copied in parallel, each worker a run of rows of about equal length.
fn rows_in_memory<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    lists: &[CsrView<'_>],
    directed: bool,
    vertices: &[u32],
) -> Rows {
    /// Entries below which one thread copies the rows.
    const PARALLEL_MIN: usize = 1 << 15;
    let n = ctx.n();
    let mut end = Vec::with_capacity(vertices.len());
    let mut total = 0usize;
    for &v in vertices {
        if v < n {
            total += lists
                .iter()
                .map(|l| l.degrees[v as usize] as usize)
                .sum::<usize>();
        }
        end.push(total);
    }
    let mut entries = vec![(0u32, 0.0f64); total];
    let fill = |vertices: &[u32], out: &mut [(u32, f64)]| {
        let mut at = 0;
        for &v in vertices.iter().filter(|&&v| v < n) {
            each_entry(lists, directed, v, |u, w| {
                out[at] = (u, w);
                at += 1;
            });
        }
    };
    let parts = (ctx.pool.threads() * 4).min(total / PARALLEL_MIN + 1);
    if parts <= 1 {
        fill(vertices, &mut entries);
        return Rows { entries, end };
    }
    // Cut the rows where the entries before pass each part's share.
    let mut pieces: Vec<RowPiece<'_>> = Vec::with_capacity(parts);
    let (mut rest, mut rest_vertices, mut done, mut first) = (&mut entries[..], vertices, 0, 0);
    for p in 1..=parts {
        let share = total * p / parts;
        let mut last = first;
        while last < vertices.len() && end[last] <= share {
            last += 1;
        }
        if p == parts {
            last = vertices.len();
        }
        let upto = if last == 0 { 0 } else { end[last - 1] };
        let (head, tail) = rest.split_at_mut(upto - done);
        let (vs, vtail) = rest_vertices.split_at(last - first);
        pieces.push((vs, head));
        (rest, rest_vertices, done, first) = (tail, vtail, upto, last);
    }
    ctx.pool.install(|| {
        pieces
            .into_par_iter()
            .for_each(|(vertices, out)| fill(vertices, out))
    });
    Rows { entries, end }
}

/// The vertices `0..n` in chunks of [`CHUNK`], in order.
pub(super) fn in_order(n: u32) -> impl Iterator<Item = Vec<u32>> {
    (0..n)
        .step_by(CHUNK)
        .map(move |first| (first..n.min(first.saturating_add(CHUNK as u32))).collect())
}

/// A vertex order drawn from `rng` (Fisher–Yates).
pub(crate) fn shuffled(n: u32, rng: &mut Xoshiro256) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n).collect();
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

/// Writes `values` at the ascending, distinct `indices`: one write per run of consecutive
/// indices.
fn write_at<T: crate::state::StateValue>(
    array: &VertexArray<T>,
    indices: &[u32],
    values: &[T],
) -> Result<(), ExecError> {
    let mut i = 0;
    while i < indices.len() {
        let mut j = i + 1;
        while j < indices.len() && indices[j] == indices[j - 1] + 1 {
            j += 1;
        }
        array.write_range(indices[i], &values[i..j])?;
        i = j;
    }
    Ok(())
}

/// What the first level's local moving leaves.
pub(super) struct FirstLevel {
    /// Per vertex, its community (the id of one of its vertices).
    pub community: Vec<u32>,
    /// Per vertex, its degree, and the level's visiting order, when asked for.
    pub kept: Option<(Vec<f64>, Vec<u32>)>,
    /// Twice the total edge weight.
    pub m2: f64,
    /// The modularity of every vertex on its own.
    pub singletons: f64,
    pub moved_any: bool,
}

/// The first level over the store: degrees, then sweeps of local moving in an order drawn
/// from `rng`; keeps the degrees and the order when `keep` (Leiden refines with them).
pub(super) fn first_level<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    cfg: &Config,
    rng: &mut Xoshiro256,
    keep: bool,
) -> Result<FirstLevel, ExecError> {
    let n = ctx.n();
    let degree = ctx.vertex_array(0.0f64)?;
    let total = ctx.vertex_array(0.0f64)?;
    let community = ctx.vertex_array(0u32)?;

    // Degrees, totals of the singleton communities, and the singletons' modularity terms.
    let start = ctx.begin();
    let (mut m2, mut own_links, mut squares, mut entries) = (0.0, 0.0, 0.0, 0u64);
    for chunk in in_order(n) {
        let chunk = &chunk[..];
        ctx.check()?;
        let (lists, read) = neighbourhoods(ctx, chunk)?;
        entries += read;
        let k: Vec<f64> = lists.iter().map(|l| l.iter().map(|e| e.1).sum()).collect();
        for (&v, list) in chunk.iter().zip(lists.iter()) {
            own_links += list.iter().filter(|e| e.0 == v).map(|e| e.1).sum::<f64>();
        }
        m2 += k.iter().sum::<f64>();
        squares += k.iter().map(|k| k * k).sum::<f64>();
        degree.write_range(chunk[0], &k)?;
        total.write_range(chunk[0], &k)?;
        community.write_range(chunk[0], chunk)?;
    }
    ctx.finish(start, n as u64, entries, "degrees", None)?;
    let singletons = if m2 > 0.0 {
        own_links / m2 - cfg.resolution * squares / (m2 * m2)
    } else {
        0.0
    };

    // Local moving: over plain arrays with the vertices' own ids when the lists and the run
    // arrays are in memory, else over the store with chunk-local copies of the state.
    let order = shuffled(n, rng);
    let mut active = Active::all(n);
    let mut ws = Workspace::new();
    if lists_in_memory(ctx.store).is_some() && !community.is_remote() {
        let degree = degree.into_vec()?;
        let mut tot = total.into_vec()?;
        let mut comm = community.into_vec()?;
        let moved_any = sweeps(ctx, cfg, m2, &order, &mut active, |active, chunk| {
            let (lists, entries) = neighbourhoods(ctx, chunk)?;
            let mut state = MoveState {
                comm: &mut comm,
                tot: &mut tot,
                m2,
                resolution: cfg.resolution,
            };
            let vertex_degree = |i: usize| (chunk[i], degree[chunk[i] as usize]);
            let moved = lists.move_vertices(&ctx.pool, vertex_degree, &mut state, &mut ws);
            for &i in &moved {
                let v = chunk[i as usize];
                for &(u, _) in lists.row(i as usize) {
                    if u != v {
                        active.mark(u);
                    }
                }
            }
            Ok((moved.len() as u64, entries))
        })?;
        return Ok(FirstLevel {
            community: comm,
            kept: keep.then_some((degree, order)),
            m2,
            singletons,
            moved_any,
        });
    }
    let mut local = LocalIds::new(n);
    let moved_any = sweeps(ctx, cfg, m2, &order, &mut active, |active, chunk| {
        move_chunk(
            ctx,
            chunk,
            &degree,
            &total,
            &community,
            (&mut local, active, &mut ws),
            m2,
            cfg.resolution,
        )
    })?;
    drop((local, active, ws));
    total.free()?;
    let kept = if keep {
        Some((degree.into_vec()?, order))
    } else {
        drop(order);
        degree.free()?;
        None
    };
    Ok(FirstLevel {
        community: community.into_vec()?,
        kept,
        m2,
        singletons,
        moved_any,
    })
}

/// Sweeps of local moving over the chunks of `order` that `active` still holds, each chunk
/// moved by `move_chunk` (which returns the moves made and the list entries read), at most
/// `cfg.sweeps`, until a sweep moves nothing; whether any vertex moved. None when `m2` is 0.
fn sweeps<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    cfg: &Config,
    m2: f64,
    order: &[u32],
    active: &mut Active,
    mut move_chunk: impl FnMut(&mut Active, &[u32]) -> Result<(u64, u64), ExecError>,
) -> Result<bool, ExecError> {
    let mut moved_any = false;
    let sweeps = if m2 > 0.0 { cfg.sweeps } else { 0 };
    for _ in 0..sweeps {
        let start = ctx.begin();
        let (mut moves, mut entries, mut visited) = (0u64, 0u64, 0u64);
        active.visit(order, CHUNK, |active, chunk| {
            ctx.check()?;
            let (m, e) = move_chunk(active, chunk)?;
            moves += m;
            entries += e;
            visited += chunk.len() as u64;
            Ok::<(), ExecError>(())
        })?;
        ctx.finish(start, visited, entries, "local moves", Some(cfg.sweeps))?;
        moved_any |= moves > 0;
        if moves == 0 || !active.any() {
            break;
        }
    }
    Ok(moved_any)
}

/// The lists of the undirected view when the store holds them in memory.
fn lists_in_memory<S: GraphStore>(store: &S) -> Option<Vec<CsrView<'_>>> {
    directions(store)
        .iter()
        .map(|&dir| store.csr(dir))
        .collect()
}

/// Calls `f(u, w)` on each entry of `v`'s undirected-view neighbourhood from lists in memory,
/// as [`neighbourhoods`] gives it: out before in, an undirected self-loop twice.
#[inline]
fn each_entry(lists: &[CsrView<'_>], directed: bool, v: u32, mut f: impl FnMut(u32, f64)) {
    let loops = |u: u32| if u == v && !directed { 2.0 } else { 1.0 };
    for csr in lists {
        let ns = csr.neighbours(v);
        match csr.weights_of(v) {
            Some(WeightSlice::Wide(ws)) => {
                for (&u, &w) in ns.iter().zip(ws) {
                    f(u, w * loops(u));
                }
            }
            Some(WeightSlice::Narrow(ws)) => {
                for (&u, &w) in ns.iter().zip(ws) {
                    f(u, f64::from(w) * loops(u));
                }
            }
            None => {
                for &u in ns {
                    f(u, loops(u));
                }
            }
        }
    }
}

/// The graph of the vertices' groups `node_of` (dense ids below `count`) in memory, from one
/// pass over the store (rows made in parallel when the store holds the lists in memory).
pub(super) fn aggregated<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    node_of: &[u32],
    count: u32,
) -> Result<Coarse, ExecError> {
    let start = ctx.begin();
    if let Some(lists) = lists_in_memory(ctx.store) {
        ctx.record(planner::registry::Operator::ListFetch);
        ctx.check()?;
        let directed = ctx.store.shape().directed;
        let graph = coarse::aggregate_by_node(
            &ctx.pool,
            &node_of[..ctx.n() as usize],
            count,
            |v| lists.iter().map(|l| l.degrees[v as usize] as u64).sum(),
            |v, sums| each_entry(&lists, directed, v, |u, w| sums.add(node_of[u as usize], w)),
        );
        let entries = graph_entries_read(&lists);
        ctx.finish(start, ctx.n() as u64, entries, "aggregate", None)?;
        return Ok(graph);
    }
    let mut graph = Coarse::builder(count);
    let mut entries = 0u64;
    for chunk in in_order(ctx.n()) {
        ctx.check()?;
        let (lists, read) = neighbourhoods(ctx, &chunk)?;
        entries += read;
        for (&v, list) in chunk.iter().zip(lists.iter()) {
            graph.add_list(
                node_of[v as usize],
                list.iter().map(|&(u, w)| (node_of[u as usize], w)),
            );
        }
    }
    let graph = graph.finish();
    ctx.finish(start, ctx.n() as u64, entries, "aggregate", None)?;
    Ok(graph)
}

/// The entries of all lists in memory.
fn graph_entries_read(lists: &[CsrView<'_>]) -> u64 {
    lists
        .iter()
        .map(|l| l.degrees.iter().map(|&d| d as u64).sum::<u64>())
        .sum()
}

/// The whole run: the first level through the store, the others in memory.
fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, cfg: &Config) -> Result<Communities, ExecError> {
    let mut rng = Xoshiro256::new(cfg.seed);
    let first = first_level(ctx, cfg, &mut rng, false)?;
    let m2 = first.m2;

    // The first level's communities aggregated into a graph in memory.
    let (mut node_of, count) = coarse::renumber(&first.community);
    drop(first.community);
    let mut graph = aggregated(ctx, &node_of, count)?;

    let mut modularity = if m2 > 0.0 {
        graph.modularity(m2, cfg.resolution)
    } else {
        0.0
    };
    let mut levels = 1;
    let mut go_on = first.moved_any && modularity - first.singletons > cfg.tolerance;
    while go_on && levels < cfg.levels {
        let start = ctx.begin();
        let order = shuffled(graph.len(), &mut rng);
        let (communities, sweeps) = graph.local_moving(
            &ctx.pool,
            &order,
            (0..graph.len()).collect(),
            m2,
            cfg.resolution,
            cfg.sweeps,
            || ctx.check(),
        )?;
        levels += 1;
        let (renumbered, count) = coarse::renumber(&communities);
        let next = graph.aggregate(&ctx.pool, &renumbered, count);
        ctx.finish(
            start,
            graph.len() as u64,
            graph.entries() * sweeps as u64,
            "local moves (in memory)",
            None,
        )?;
        for node in &mut node_of {
            *node = renumbered[*node as usize];
        }
        let gained = next.modularity(m2, cfg.resolution) - modularity;
        modularity += gained;
        graph = next;
        go_on = gained > cfg.tolerance;
    }
    Ok(Communities {
        community: numbered_in_key_order(ctx.store, &node_of, graph.len() as usize),
        modularity,
        levels,
        count: graph.len() as u64,
    })
}

/// Community ids renumbered `0..k` by first appearance in key order, so by their member of
/// smallest input id whatever the layout (in key order this keeps every id).
pub(super) fn numbered_in_key_order<S: GraphStore>(
    store: &S,
    community: &[u32],
    count: usize,
) -> Vec<u64> {
    let mut id = vec![u64::MAX; count];
    let mut next = 0u64;
    key_order(store).for_each_vertex(|v| {
        let slot = &mut id[community[v as usize] as usize];
        if *slot == u64::MAX {
            *slot = next;
            next += 1;
        }
    });
    community.iter().map(|&c| id[c as usize]).collect()
}

/// Chunk-local numbering of vertex (or community) ids: the ids a chunk touches, ascending
/// (as `read_at` wants them), and each one's position among them.
struct LocalIds {
    /// One bit per id, set while it is listed.
    seen: Vec<u64>,
    /// Per id, its position in the last list made (valid for the ids of that list).
    position: Vec<u32>,
}

impl LocalIds {
    fn new(n: u32) -> LocalIds {
        LocalIds {
            seen: vec![0; (n as usize).div_ceil(64)],
            position: vec![0; n as usize],
        }
    }

    /// The distinct `ids`, ascending, each one's position noted.
    fn list(&mut self, ids: impl Iterator<Item = u32>) -> Vec<u32> {
        let mut out = Vec::new();
        for id in ids {
            let (word, bit) = ((id / 64) as usize, 1u64 << (id % 64));
            if self.seen[word] & bit == 0 {
                self.seen[word] |= bit;
                out.push(id);
            }
        }
        // Sorting few ids is cheaper than reading every word of the bitmap.
        if out.len() * 8 < self.seen.len() {
            out.sort_unstable();
            for &id in &out {
                self.seen[(id / 64) as usize] = 0;
            }
        } else {
            out.clear();
            for (word, bits) in self.seen.iter_mut().enumerate() {
                let mut b = *bits;
                while b != 0 {
                    out.push(word as u32 * 64 + b.trailing_zeros());
                    b &= b - 1;
                }
                *bits = 0;
            }
        }
        for (at, &id) in out.iter().enumerate() {
            self.position[id as usize] = at as u32;
        }
        out
    }
}

/// Moves the vertices of `chunk` one after another over a copy of the state they touch, in
/// chunk-local numbering (`moves::move_chunk`: proposals in parallel, the sequential result),
/// marks the neighbours of the vertices that moved to be visited again, and writes back what
/// changed; returns the moves made and the list entries read.
#[allow(clippy::too_many_arguments)]
fn move_chunk<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    chunk: &[u32],
    degree: &VertexArray<f64>,
    total: &VertexArray<f64>,
    community: &VertexArray<u32>,
    (local, active, ws): (&mut LocalIds, &mut Active, &mut Workspace),
    m2: f64,
    resolution: f64,
) -> Result<(u64, u64), ExecError> {
    let (mut lists, entries) = neighbourhoods(ctx, chunk)?;
    let ids = local.list(
        lists
            .entries
            .iter()
            .map(|e| e.0)
            .chain(chunk.iter().copied()),
    );
    let position = &local.position;
    ctx.pool.install(|| {
        lists.entries.par_chunks_mut(8192).for_each(|part| {
            for e in part {
                e.0 = position[e.0 as usize];
            }
        })
    });
    let member: Vec<u32> = chunk.iter().map(|&v| local.position[v as usize]).collect();
    let mut sorted = chunk.to_vec();
    sorted.sort_unstable();
    let sorted_degree = degree.read_at(&sorted)?;
    let k: Vec<f64> = chunk
        .iter()
        .map(|v| sorted_degree[sorted.binary_search(v).unwrap_or(0)])
        .collect();
    let community_of = community.read_at(&ids)?;
    let cids = local.list(community_of.iter().copied());
    let mut comm: Vec<u32> = community_of
        .iter()
        .map(|&c| local.position[c as usize])
        .collect();
    let before = total.read_at(&cids)?;
    let mut tot = before.clone();

    let mut state = MoveState {
        comm: &mut comm,
        tot: &mut tot,
        m2,
        resolution,
    };
    let moved = lists.move_vertices(&ctx.pool, |i| (member[i], k[i]), &mut state, ws);
    if moved.is_empty() {
        return Ok((0, entries));
    }
    for &i in &moved {
        let v = chunk[i as usize];
        for &(u, _) in lists.row(i as usize) {
            let u = ids[u as usize];
            if u != v {
                active.mark(u);
            }
        }
    }
    let mut changed: Vec<(u32, u32)> = moved
        .iter()
        .map(|&i| {
            (
                chunk[i as usize],
                cids[comm[member[i as usize] as usize] as usize],
            )
        })
        .collect();
    changed.sort_unstable();
    let (at, values): (Vec<u32>, Vec<u32>) = changed.into_iter().unzip();
    write_at(community, &at, &values)?;
    let (at, values): (Vec<u32>, Vec<f64>) = cids
        .iter()
        .zip(before.iter().zip(&tot))
        .filter(|(_, (b, t))| b.to_bits() != t.to_bits())
        .map(|(&c, (_, &t))| (c, t))
        .unzip();
    write_at(total, &at, &values)?;
    Ok((moved.len() as u64, entries))
}
