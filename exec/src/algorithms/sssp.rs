//! Single-source shortest paths over out-edges (Graphalytics SSSP): the distance from the
//! source with the edges' f64 weights (1.0 on unweighted graphs), null when unreachable.
//!
//! In memory under `SET mode = auto`, with non-negative weights, it runs delta-stepping
//! (`crate::delta`, with 4-byte integer distances when every weight is a whole number). Otherwise, frontier Bellman-Ford: each EdgeMap round relaxes the out-edges of the vertices whose
//! distance dropped in the previous round (push: compare-exchange min on the distance's bits;
//! pull: a vertex relaxes from its active in-neighbours). With non-negative weights it reaches
//! the same fixpoint as Dijkstra. A round count above |V| can only come from a negative cycle,
//! which is reported instead of looping.
//! Relaxations are EdgeMap min-updates ([`EdgeMap::relax_min`]), so the distances may be local
//! or remote; delta-stepping needs them local. Out of core on a clustered graph the rounds
//! spread through the blocks they read, in buckets of distance ([`crate::spread`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, SourceRule, Step};
use planner::{AlgoCall, Mode};
use storage::{Direction, FetchOrder, GraphStore};

use super::{Algorithm, FromVertex};
use crate::context::RunContext;
use crate::delta;
use crate::edgemap::EdgeMap;
use crate::error::ExecError;
use crate::output::{per_vertex_rows, pick};
use crate::reference::{close, compare, Lists};
use crate::result::BatchIter;
use crate::result::ResultTable;
use crate::spread;
use crate::subset::VertexSubset;

/// Single-source shortest paths.
pub struct Sssp;

impl Algorithm for Sssp {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "sssp",
        summary: "single-source shortest paths over out-edges (weight 1 on unweighted graphs)",
        semantics: "Shortest-path distances along out-edges from the FROM vertex, summing edge weights (1 per edge on unweighted graphs); null for unreachable vertices. Refused on graphs with negative weights.",
        example: "RUN sssp FROM 1 ON g WHERE distance IS NOT NULL ORDER BY distance DESC LIMIT 5;",
        source: SourceRule::Required,
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::nullable("distance", ColumnType::Float64),
        ],
        program: &[
            Step::setup("frontier := {source}, distance[source] := 0"),
            Step::call(
                Operator::DeltaStepping,
                "in memory under mode auto with non-negative weights: bins of width delta = mean weight / (4 x average degree); a worker relaxes its own few entries of the current bin in the same round; 4-byte integer distances when every weight is a whole number",
            ),
            Step::call(
                Operator::EdgeMap,
                "otherwise: frontier, out, distance[v] := min(distance[v], distance[u] + w); until the frontier is empty",
            ),
        ],
        uses_weights: true,
        needs_nonnegative_weights: true,
        // distance (f64)
        state_bytes: 8,
        splits: true,
        ..AlgorithmSpec::BASE
    };
    type Config = FromVertex;
    type Output = Vec<f64>;

    fn config(call: &AlgoCall) -> FromVertex {
        FromVertex::of(call)
    }

    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &FromVertex,
    ) -> Result<Vec<f64>, ExecError> {
        compute(ctx, cfg.source)
    }

    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        dist: &'a Vec<f64>,
    ) -> Result<BatchIter<'a>, ExecError> {
        rows(store, schema, dist)
    }

    fn verify<S: GraphStore>(
        store: &S,
        cfg: &FromVertex,
        table: &ResultTable,
    ) -> Result<(), String> {
        verify(store, cfg.source, table)
    }
}

/// Distances from `source` (+∞ when unreachable).
fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, source: u32) -> Result<Vec<f64>, ExecError> {
    if ctx.cfg.mode == Mode::Auto {
        if let Some(distances) = delta::shortest_paths(ctx, source) {
            return distances;
        }
    }
    bellman_ford(ctx, source)
}

/// The mean weight of the lists of the source and of 63 vertices spread over the ids (1 when
/// they have no edges): what a hop weighs, for the bucket width of [`spread::spread_min`].
fn mean_weight<S: GraphStore>(ctx: &RunContext<'_, S>, source: u32) -> Result<f64, ExecError> {
    let n = ctx.n();
    let mut sample: Vec<u32> = (0..63u64).map(|i| (i * u64::from(n) / 63) as u32).collect();
    sample.push(source);
    sample.sort_unstable();
    sample.dedup();
    let (mut sum, mut count) = (0.0, 0u64);
    ctx.store.for_each_list(
        Direction::Out,
        &sample,
        FetchOrder::ByBlock,
        true,
        |_, ns, ws| {
            match ws {
                Some(ws) => sum += ws.iter().map(|w| w.abs()).sum::<f64>(),
                None => sum += ns.len() as f64,
            }
            count += ns.len() as u64;
        },
    )?;
    Ok(if count == 0 || sum <= 0.0 {
        1.0
    } else {
        sum / count as f64
    })
}

/// Frontier Bellman-Ford over EdgeMap's min-updates: any store, any mode, any weights, local
/// or remote distances.
fn bellman_ford<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    source: u32,
) -> Result<Vec<f64>, ExecError> {
    let n = ctx.n();
    if source >= n {
        return Ok(vec![f64::INFINITY; n as usize]);
    }
    let dist = ctx.vertex_array(f64::INFINITY)?;
    dist.set(source, 0.0)?;
    let mut edge_map = EdgeMap::new(ctx);
    let negative = AtomicBool::new(false);
    if edge_map.spreads_min(Direction::Out, &dist) {
        // A negative weight is not followed, and sends the run on to plain Bellman-Ford.
        let width = spread::cluster_hops(ctx.store, Direction::Out) * mean_weight(ctx, source)?;
        spread::spread_min(
            &mut edge_map,
            &dist,
            source,
            Direction::Out,
            true,
            |d: f64, w| {
                if w < 0.0 {
                    negative.store(true, Ordering::Relaxed);
                    return None;
                }
                let c = d + w;
                (c < f64::INFINITY).then_some(c)
            },
            |d: f64| (d / width) as u64,
        )?;
        if !negative.load(Ordering::Relaxed) {
            return dist.into_vec();
        }
    }
    // After a spread that met a negative weight the distances are lengths of paths without
    // one: relaxing from every vertex reaches the same fixpoint as from the source alone.
    let mut frontier = if negative.load(Ordering::Relaxed) {
        VertexSubset::all(n)
    } else {
        VertexSubset::single(n, source)
    };
    let mut rounds = 0u64;
    while !frontier.is_empty() {
        rounds += 1;
        if rounds > n as u64 + 1 {
            return Err(ExecError::Other(
                "sssp: a negative-weight cycle is reachable from the source".into(),
            ));
        }
        frontier = edge_map.relax_min(
            &frontier,
            &[Direction::Out],
            &dist,
            true,
            |d: f64, w| {
                let c = d + w;
                (c < f64::INFINITY).then_some(c)
            },
            None,
        )?;
    }
    dist.into_vec()
}

/// Rows `(vertex, distance)`.
fn rows<'a, S: GraphStore>(
    store: &'a S,
    schema: &SchemaRef,
    dist: &'a [f64],
) -> Result<BatchIter<'a>, ExecError> {
    Ok(per_vertex_rows(store, schema, move |vertices| {
        let col: Float64Array = pick(dist, vertices)
            .into_iter()
            .map(|d| (d != f64::INFINITY).then_some(d))
            .collect();
        vec![Arc::new(col) as ArrayRef]
    }))
}

/// Checks an SSSP result against a sequential Bellman-Ford from `source`.
fn verify<S: GraphStore>(store: &S, source: u32, table: &ResultTable) -> Result<(), String> {
    let lists = Lists::read(store)?;
    let mut dist = vec![f64::INFINITY; lists.n()];
    if (source as usize) < lists.n() {
        dist[source as usize] = 0.0;
        for _ in 0..lists.n() {
            let mut changed = false;
            for u in 0..lists.n() {
                for &(v, w) in &lists.out[u] {
                    if dist[u] + w < dist[v as usize] {
                        dist[v as usize] = dist[u] + w;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
    let want: Vec<Option<f64>> = dist.iter().map(|d| d.is_finite().then_some(*d)).collect();
    compare(store, table, "distance", &want, close)
}
