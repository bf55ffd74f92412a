//! Coreness (k-core decomposition): the largest k such that the vertex belongs to a subgraph
//! in which every vertex has degree at least k. Self-loops are ignored; on directed graphs the
//! degree is in-degree + out-degree (networkx's `core_number`), so a pair of opposite arcs
//! counts twice.
//!
//! Bucketed peeling in EdgeMap rounds (Julienne's, Dhulipala et al. 2017): the degrees are
//! counted by one addition round from every vertex ([`EdgeMap::add`]); then, for each k from
//! the smallest remaining degree up, the vertices of degree k are removed (their core is k),
//! each removal takes one from its neighbours' degrees, and the neighbours that fall to k or
//! below are removed in the next round, until none falls; then the next k.
//!
//! The vertices of degree k are found in buckets, not by a scan: [`OPEN`] consecutive degrees
//! from the smallest remaining one have a list each, filled by one scan; a round's additions
//! return the new degrees of the vertices they reached, and each that lands among the open
//! degrees is appended to its bucket. A list may hold a vertex removed since (a claim skips
//! it); degrees only fall, so a vertex in bucket k still present has degree k. A scan per
//! [`OPEN`] degrees instead of two per k makes a level cost what its vertices and edges cost.
//!
//! Degrees are kept with a bias so that removed vertices, whose degrees keep falling, stay
//! below every remaining one without wrapping; a removed vertex is recognised by its core
//! being set, which a claim does exactly once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::{ArrayRef, UInt64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, Step};
use planner::AlgoCall;
use storage::{Direction, GraphStore};

use super::Algorithm;
use crate::context::RunContext;
use crate::edgemap::{EdgeFunc, EdgeMap};
use crate::error::ExecError;
use crate::output::{per_vertex_rows, pick};
use crate::reference::{compare, Lists};
use crate::result::BatchIter;
use crate::result::ResultTable;
use crate::state::VertexArray;
use crate::subset::VertexSubset;
use crate::vertexmap::{vertex_min, vertex_select};

/// Degree 0 in the degree array: far above any number of decrements a vertex can receive.
const BIAS: u64 = 1 << 62;
/// The core of a vertex not yet removed.
const UNSET: u64 = u64::MAX;
/// Degrees with a bucket at a time, from the smallest remaining one.
const OPEN: u64 = 128;

/// k-core decomposition.
pub struct KCore;

impl Algorithm for KCore {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "kcore",
        summary: "coreness of every vertex by peeling (directed graphs: degree = in + out; self-loops ignored)",
        semantics: "The coreness of v is the largest k such that v belongs to a subgraph whose vertices all have degree at least k (networkx core_number). On directed graphs the degree is in + out; self-loops are ignored; isolated vertices have core 0.",
        example: "RUN kcore ON g ORDER BY core DESC LIMIT 10;",
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("core", ColumnType::UInt64),
        ],
        program: &[
            Step::call(Operator::EdgeMap, "all, out (and in), degree[w] += 1"),
            Step::call(Operator::VertexMap, "lo := smallest degree of a remaining vertex; bucket[d] := remaining v with degree[v] = d, for lo <= d < lo + 128"),
            Step::call(Operator::EdgeMap, "k from lo: frontier := bucket[k] not yet removed, core := k; out (and in), degree[w] -= 1; w with degree[w] <= k is the next frontier, w with a degree still open joins its bucket; until empty, then the next k, and a new scan past lo + 128"),
        ],
        // degree (u64) and core (u64)
        state_bytes: 16,
        passes: Some("bucketed peeling: per core value, EdgeMap rounds until no degree falls to it; one scan per 128 degrees"),
        ..AlgorithmSpec::BASE
    };
    type Config = ();
    type Output = Vec<u64>;

    fn config(_: &AlgoCall) {}

    fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, _: &()) -> Result<Vec<u64>, ExecError> {
        compute(ctx)
    }

    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        core: &'a Vec<u64>,
    ) -> Result<BatchIter<'a>, ExecError> {
        Ok(per_vertex_rows(store, schema, move |vertices| {
            vec![Arc::new(UInt64Array::from(pick(core, vertices))) as ArrayRef]
        }))
    }

    fn verify<S: GraphStore>(store: &S, _: &(), table: &ResultTable) -> Result<(), String> {
        verify(store, table)
    }
}

/// The directions whose lists together hold every neighbour once per arc.
fn directions<S: GraphStore>(store: &S) -> &'static [Direction] {
    if store.shape().directed {
        &[Direction::Out, Direction::In]
    } else {
        &[Direction::Out]
    }
}

/// The core of every vertex.
fn compute<S: GraphStore>(ctx: &RunContext<'_, S>) -> Result<Vec<u64>, ExecError> {
    let n = ctx.n();
    let dirs = directions(ctx.store);
    let degree = ctx.vertex_array(BIAS)?;
    let core = ctx.vertex_array(UNSET)?;
    let mut edge_map = EdgeMap::new(ctx);
    edge_map.add(&VertexSubset::all(n), dirs, &degree, 1u64, None)?;
    // Remaining vertices have degree >= floor; removed ones below it.
    let mut floor = 0u64;
    while let Some(lo) = vertex_min(ctx, &degree, |d| (d >= BIAS + floor).then(|| d - BIAS))? {
        let hi = lo.saturating_add(OPEN);
        let mut buckets = Buckets::fill(ctx, &degree, lo, hi)?;
        for k in lo..hi {
            let bucket = buckets.take(k);
            if bucket.is_empty() {
                continue;
            }
            let won = core.claim_batch(&bucket, UNSET, k)?;
            let mut frontier = VertexSubset::from_list(n, won);
            while !frontier.is_empty() {
                let lowered = lower(&mut edge_map, &frontier, dirs, &degree, hi)?;
                let mut fallen = Vec::new();
                for (v, d) in lowered {
                    if d <= BIAS + k {
                        fallen.push(v);
                    } else {
                        buckets.put(v, d - BIAS);
                    }
                }
                frontier = VertexSubset::from_list(n, core.claim_batch(&fallen, UNSET, k)?);
            }
        }
        floor = hi;
    }
    degree.free()?;
    core.into_vec()
}

/// Takes one from the degree of every neighbour of `frontier` along `dirs`; returns the
/// neighbours whose degree is now below `hi` (possibly more, and some twice), with it. Local
/// degrees are lowered in place by a push that keeps those neighbours only, unsorted; remote
/// ones by batched additions.
fn lower<S: GraphStore>(
    edge_map: &mut EdgeMap<'_, '_, S>,
    frontier: &VertexSubset,
    dirs: &[Direction],
    degree: &VertexArray<u64>,
    hi: u64,
) -> Result<Vec<(u32, u64)>, ExecError> {
    let Some(cells) = degree.local() else {
        return edge_map.add(frontier, dirs, degree, u64::MAX, None);
    };
    let below = BIAS.saturating_add(hi);
    let mut reached = Vec::new();
    for &dir in dirs {
        let f = Decrement { cells, below };
        reached.extend(edge_map.run(frontier, dir, &f, None)?.to_list());
    }
    Ok(reached
        .into_iter()
        .map(|v| (v, cells[v as usize].load(Ordering::Relaxed)))
        .collect())
}

/// `degree[dst] -= 1` along an edge (self-loops skipped), activating `dst` when its degree is
/// then below `below`.
struct Decrement<'a> {
    cells: &'a [AtomicU64],
    below: u64,
}

impl EdgeFunc for Decrement<'_> {
    #[inline]
    fn update_atomic(&self, src: u32, dst: u32, _: f64) -> bool {
        src != dst && self.cells[dst as usize].fetch_sub(1, Ordering::Relaxed) - 1 < self.below
    }
}

/// The vertices of each open degree `lo..hi`, as last seen.
struct Buckets {
    lo: u64,
    lists: Vec<Vec<u32>>,
}

impl Buckets {
    /// The remaining vertices of degree `lo..hi`, each in its degree's list.
    fn fill<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        degree: &VertexArray<u64>,
        lo: u64,
        hi: u64,
    ) -> Result<Buckets, ExecError> {
        let open = |d: u64| d >= BIAS + lo && d - BIAS < hi;
        let vertices = vertex_select(ctx, degree, |_, d| open(d))?.to_list();
        let degrees = degree.read_at(&vertices)?;
        let mut buckets = Buckets {
            lo,
            lists: vec![Vec::new(); (hi - lo) as usize],
        };
        for (v, d) in vertices.into_iter().zip(degrees) {
            buckets.put(v, d - BIAS);
        }
        Ok(buckets)
    }

    /// Notes that `v` has degree `d` (nothing when `d` is not open).
    fn put(&mut self, v: u32, d: u64) {
        if let Some(list) = d
            .checked_sub(self.lo)
            .and_then(|i| self.lists.get_mut(i as usize))
        {
            list.push(v);
        }
    }

    /// The list of degree `k`, emptied.
    fn take(&mut self, k: u64) -> Vec<u32> {
        std::mem::take(&mut self.lists[(k - self.lo) as usize])
    }
}

/// Checks the cores against sequential peeling: repeatedly remove a vertex of smallest
/// remaining degree; its core is the largest such degree seen so far.
fn verify<S: GraphStore>(store: &S, table: &ResultTable) -> Result<(), String> {
    let lists = Lists::read(store)?;
    let n = lists.n();
    let directed = store.shape().directed;
    let neighbours: Vec<Vec<usize>> = (0..n)
        .map(|v| {
            let out = lists.out[v].iter().map(|e| e.0 as usize);
            let inn = lists.inn[v].iter().map(|&u| u as usize);
            let all: Vec<usize> = if directed {
                out.chain(inn).collect()
            } else {
                out.collect()
            };
            all.into_iter().filter(|&u| u != v).collect()
        })
        .collect();
    let mut degree: Vec<usize> = neighbours.iter().map(Vec::len).collect();
    let mut queue: std::collections::BTreeSet<(usize, usize)> =
        (0..n).map(|v| (degree[v], v)).collect();
    let mut core = vec![0u64; n];
    let mut k = 0;
    while let Some((d, v)) = queue.pop_first() {
        k = k.max(d);
        core[v] = k as u64;
        for &u in &neighbours[v] {
            if queue.remove(&(degree[u], u)) {
                degree[u] -= 1;
                queue.insert((degree[u], u));
            }
        }
    }
    let want: Vec<Option<f64>> = core.into_iter().map(|c| Some(c as f64)).collect();
    compare(store, table, "core", &want, |a, b| a == b)
}
