//! Betweenness centrality as networkx computes it (`betweenness_centrality`, unweighted,
//! normalised, endpoints excluded): for every vertex v, the sum over sources s and targets
//! t (both ≠ v) of the fraction of shortest s–t paths through v, times 1/((|V|−1)(|V|−2)).
//!
//! Brandes' algorithm, one source at a time, in EdgeMap rounds:
//!
//! 1. a breadth-first search claims the levels (frontiers F₀ = {s}, F₁, …);
//! 2. path counts level by level: every vertex of F_ℓ adds its count σ to its out-neighbours
//!    ([`EdgeMap::add_from`]); of those, the vertices of F_ℓ₊₁ take the sum as their σ (the
//!    others, at level ℓ or less, already have theirs);
//! 3. dependencies from the deepest level up: every w of F_ℓ₊₁ adds (1 + δ(w))/σ(w) to its
//!    in-neighbours; those of F_ℓ take δ(v) = σ(v) · sum.
//!
//! Then every vertex but s adds δ to its score. Exact when `SAMPLES` >= |V|; otherwise over
//! the k sampled sources, scaled as networkx scales its `k` sample: 1/(k(|V|−2)) for the
//! vertices not sampled, 1/((k−1)(|V|−2)) for the sampled ones (their own source is missing).

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, Step};
use planner::AlgoCall;
use storage::{Direction, GraphStore};

use super::closeness::Sampling;
use super::distances::{self, sample_sources, UNREACHED};
use super::Algorithm;
use crate::context::RunContext;
use crate::edgemap::EdgeMap;
use crate::error::ExecError;
use crate::output::{per_vertex_batches, pick};
use crate::result::ResultTable;
use crate::state::VertexArray;
use crate::subset::VertexSubset;
use crate::vertexmap::{vertex_transform, vertex_transform2};

/// Betweenness centrality.
pub struct Betweenness;

impl Algorithm for Betweenness {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "betweenness",
        summary: "betweenness centrality (Brandes; networkx's normalisation); sampled with SAMPLES k SEED s",
        semantics: "networkx betweenness_centrality (Brandes, unweighted): the sum over pairs s != v != t of the fraction of shortest s-t paths through v, normalised as networkx does with normalized=True. With SAMPLES k < |V| only k sources drawn with SEED are used, scaled as networkx scales k samples; exact when k >= |V|.",
        example: "RUN betweenness ON g SAMPLES 64 SEED 1 ORDER BY betweenness DESC LIMIT 10;",
        params: &distances::PARAMS,
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("betweenness", ColumnType::Float64),
        ],
        program: &[
            Step::setup("sources := SAMPLES vertices drawn with SEED (every vertex when SAMPLES >= |V|)"),
            Step::call(Operator::EdgeMap, "per source: levels by claims along out; sigma[w] += sigma[v] along out, level by level; acc[v] += (1+delta[w])/sigma[w] along in, deepest level first"),
            Step::call(Operator::VertexMap, "per source: reset; score[v] += delta[v] for v != source; at the end scaled by 1/((|V|-1)(|V|-2)), sampled as networkx scales k sources"),
        ],
        // depth, sigma, sigma sums, coefficient, delta, delta sums, score (f64 each)
        state_bytes: 56,
        passes: Some("per sampled source: a breadth-first search, then one EdgeMap round per level forward and backward"),
        ..AlgorithmSpec::BASE
    };
    type Config = Sampling;
    type Output = Vec<f64>;

    fn config(call: &AlgoCall) -> Sampling {
        Sampling::of(call)
    }

    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &Sampling,
    ) -> Result<Vec<f64>, ExecError> {
        let n = ctx.n();
        let sources = sample_sources(ctx.store, cfg.samples, cfg.seed);
        let arrays = Arrays::new(ctx)?;
        for &s in &sources {
            arrays.add_source(ctx, s)?;
        }
        vertex_transform(ctx, &arrays.score, &arrays.score, |v, b| {
            (b * normalisation(n, &sources, v), 0.0)
        })?;
        arrays.into_score()
    }

    fn batches<S: GraphStore>(
        store: &S,
        schema: &SchemaRef,
        out: &Vec<f64>,
    ) -> Result<Vec<RecordBatch>, ExecError> {
        per_vertex_batches(store, schema, |vertices| {
            vec![Arc::new(Float64Array::from(pick(out, vertices))) as ArrayRef]
        })
    }

    fn verify<S: GraphStore>(store: &S, cfg: &Sampling, table: &ResultTable) -> Result<(), String> {
        super::checks::betweenness::verify(store, cfg, table)
    }
}

/// networkx's factor for vertex `v`'s normalised betweenness without endpoints, from the
/// (ascending) `sources`.
pub(super) fn normalisation(n: u32, sources: &[u32], v: u32) -> f64 {
    if n <= 2 {
        return 1.0;
    }
    let k = sources.len() as f64;
    let pairs = f64::from(n - 2);
    if sources.len() >= n as usize {
        1.0 / (f64::from(n - 1) * pairs)
    } else if sources.binary_search(&v).is_err() {
        1.0 / (k * pairs)
    } else if sources.len() > 1 {
        1.0 / ((k - 1.0) * pairs)
    } else {
        0.0
    }
}

/// The per-vertex state of the kernel.
struct Arrays {
    depth: VertexArray<f64>,
    sigma: VertexArray<f64>,
    sigma_sum: VertexArray<f64>,
    coef: VertexArray<f64>,
    delta: VertexArray<f64>,
    delta_sum: VertexArray<f64>,
    score: VertexArray<f64>,
}

impl Arrays {
    fn new<S: GraphStore>(ctx: &RunContext<'_, S>) -> Result<Arrays, ExecError> {
        Ok(Arrays {
            depth: ctx.vertex_array(UNREACHED)?,
            sigma: ctx.vertex_array(0.0)?,
            sigma_sum: ctx.vertex_array(0.0)?,
            coef: ctx.vertex_array(0.0)?,
            delta: ctx.vertex_array(0.0)?,
            delta_sum: ctx.vertex_array(0.0)?,
            score: ctx.vertex_array(0.0)?,
        })
    }

    /// Adds the dependencies of source `s` to the scores.
    fn add_source<S: GraphStore>(&self, ctx: &RunContext<'_, S>, s: u32) -> Result<(), ExecError> {
        let n = ctx.n();
        vertex_transform(ctx, &self.depth, &self.depth, |_, _| (UNREACHED, 0.0))?;
        for a in [
            &self.sigma,
            &self.sigma_sum,
            &self.coef,
            &self.delta,
            &self.delta_sum,
        ] {
            vertex_transform(ctx, a, a, |_, _| (0.0, 0.0))?;
        }
        self.depth.set(s, 0.0)?;
        self.sigma.set(s, 1.0)?;
        // 1. The levels.
        let mut levels = vec![VertexSubset::single(n, s)];
        let mut claims = EdgeMap::new(ctx);
        let mut level = 1.0;
        loop {
            let last = &levels[levels.len() - 1];
            let next = claims.claim(last, Direction::Out, &self.depth, UNREACHED, level, None)?;
            if next.is_empty() {
                break;
            }
            levels.push(sorted(next));
            level += 1.0;
        }
        // 2. Path counts, level by level.
        let mut edge_map = EdgeMap::new(ctx);
        for l in 0..levels.len() - 1 {
            let reached = edge_map.add_from(
                &levels[l],
                &[Direction::Out],
                &self.sigma,
                &self.sigma_sum,
                None,
            )?;
            let next = levels[l + 1].to_list();
            let counts: Vec<(u32, f64)> = only(&reached, &next);
            self.sigma.add_batch(&counts)?;
        }
        // 3. Dependencies, deepest level first.
        let backward = if ctx.store.shape().directed {
            Direction::In
        } else {
            Direction::Out
        };
        for l in (1..levels.len()).rev() {
            let here = levels[l].to_list();
            let sigma = self.sigma.read_at(&here)?;
            let delta = self.delta.read_at(&here)?;
            let coef: Vec<(u32, f64)> = here
                .iter()
                .zip(sigma.iter().zip(&delta))
                .map(|(&w, (&sg, &dl))| (w, (1.0 + dl) / sg))
                .collect();
            self.coef.add_batch(&coef)?;
            let reached =
                edge_map.add_from(&levels[l], &[backward], &self.coef, &self.delta_sum, None)?;
            let below = levels[l - 1].to_list();
            let sums = only(&reached, &below);
            let list: Vec<u32> = sums.iter().map(|x| x.0).collect();
            let sigma = self.sigma.read_at(&list)?;
            let deltas: Vec<(u32, f64)> = sums
                .iter()
                .zip(sigma)
                .map(|(&(v, sum), sg)| (v, sg * sum))
                .collect();
            self.delta.add_batch(&deltas)?;
        }
        vertex_transform2(ctx, &self.delta, &self.score, &self.score, |v, d, b| {
            (if v == s { b } else { b + d }, 0.0)
        })?;
        Ok(())
    }

    fn into_score(self) -> Result<Vec<f64>, ExecError> {
        for a in [
            self.depth,
            self.sigma,
            self.sigma_sum,
            self.coef,
            self.delta,
            self.delta_sum,
        ] {
            a.free()?;
        }
        self.score.into_vec()
    }
}

/// A frontier as an ascending list.
fn sorted(subset: VertexSubset) -> VertexSubset {
    let n = subset.universe();
    let mut list = subset.to_list();
    list.sort_unstable();
    VertexSubset::from_list(n, list)
}

/// The entries of `reached` (ascending by vertex) whose vertex is in `members` (ascending).
fn only(reached: &[(u32, f64)], members: &[u32]) -> Vec<(u32, f64)> {
    reached
        .iter()
        .copied()
        .filter(|(v, _)| members.binary_search(v).is_ok())
        .collect()
}
