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
//!
//! Without `SAMPLES` the run is exact, as networkx, GDS and NetworKit are unless asked to
//! sample, when the work |V|·|E| is at most [`SAMPLE_RULE`]'s bound, and samples its sources
//! otherwise; the `sources` and `sampled` summaries and EXPLAIN say which it did.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array};
use arrow_schema::SchemaRef;
use planner::registry::{
    AlgorithmSpec, ColumnSpec, ColumnType, Operator, ParamSpec, SampleRule, Step, SummarySpec,
};
use planner::AlgoCall;
use storage::{Direction, GraphStore};

use super::closeness::Sampling;
use super::distances::{self, sample_sources, UNREACHED};
use super::Algorithm;
use crate::context::RunContext;
use crate::edgemap::EdgeMap;
use crate::error::ExecError;
use crate::output::{per_vertex_rows, pick};
use crate::result::BatchIter;
use crate::result::{ResultTable, SummaryValue};
use crate::state::VertexArray;
use crate::subset::VertexSubset;
use crate::vertexmap::{vertex_transform, vertex_transform2};

/// Betweenness centrality.
pub struct Betweenness;

/// The default sources: every vertex while |V|·|E| <= 2^30 (about a billion edge visits each
/// way), else 64 sampled ones.
pub const SAMPLE_RULE: SampleRule = SampleRule {
    exact_work: 1 << 30,
    sampled: 64,
};

/// `samples` (0 by default: [`SAMPLE_RULE`]) and the seed closeness and harmonic draw with.
const PARAMS: [ParamSpec; 2] = [
    ParamSpec::int(
        "samples",
        0,
        u32::MAX as u64,
        0,
        "sources searched from; exact when >= |V|; 0: every vertex when |V|·|E| is small, else a sample (EXPLAIN says which)",
    ),
    distances::PARAMS[1],
];

/// The scores and how many sources they sum over.
pub struct Scores {
    pub score: Vec<f64>,
    pub sources: u64,
    /// Whether the sources are a sample (the scores an estimate).
    pub sampled: bool,
}

impl Algorithm for Betweenness {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "betweenness",
        summary: "betweenness centrality (Brandes; networkx's normalisation); exact on small graphs, else sampled (SAMPLES k SEED s)",
        semantics: "networkx betweenness_centrality (Brandes, unweighted): the sum over pairs s != v != t of the fraction of shortest s-t paths through v, normalised as networkx does with normalized=True. With SAMPLES k < |V| only k sources drawn with SEED are used, scaled as networkx scales k samples; exact when k >= |V|. Without SAMPLES: exact when |V|·|E| <= 2^30, else 64 sampled sources; the status line (sources, sampled) and EXPLAIN say which.",
        example: "RUN betweenness ON g SAMPLES 64 SEED 1 ORDER BY betweenness DESC LIMIT 10;",
        params: &PARAMS,
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("betweenness", ColumnType::Float64),
        ],
        program: &[
            Step::setup("sources := SAMPLES vertices drawn with SEED (every vertex when SAMPLES >= |V|, or by default when |V|·|E| is small)"),
            Step::call(Operator::EdgeMap, "per source: levels by claims along out; sigma[w] += sigma[v] along out, level by level; acc[v] += (1+delta[w])/sigma[w] along in, deepest level first"),
            Step::call(Operator::VertexMap, "per source: reset; score[v] += delta[v] for v != source; at the end scaled by 1/((|V|-1)(|V|-2)), sampled as networkx scales k sources"),
        ],
        // depth, sigma, sigma sums, coefficient, delta, delta sums, score (f64 each)
        state_bytes: 56,
        passes: Some("per source: a breadth-first search, then one EdgeMap round per level forward and backward"),
        summaries: &[
            SummarySpec::new("sources", ColumnType::UInt64, "sources searched from (|V| when exact)"),
            SummarySpec::new("sampled", ColumnType::UInt64, "1 when the sources are a sample and the scores estimates, 0 when exact"),
        ],
        sample_rule: Some(SAMPLE_RULE),
        ..AlgorithmSpec::BASE
    };
    type Config = Sampling;
    type Output = Scores;

    fn config(call: &AlgoCall) -> Sampling {
        Sampling::of(call)
    }

    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &Sampling,
    ) -> Result<Scores, ExecError> {
        let n = ctx.n();
        let sources = sources(ctx.store, cfg);
        let arrays = Arrays::new(ctx)?;
        for &s in &sources {
            arrays.add_source(ctx, s)?;
        }
        vertex_transform(ctx, &arrays.score, &arrays.score, |v, b| {
            (b * normalisation(n, &sources, v), 0.0)
        })?;
        Ok(Scores {
            score: arrays.into_score()?,
            sources: sources.len() as u64,
            sampled: sources.len() < n as usize,
        })
    }

    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        out: &'a Scores,
    ) -> Result<BatchIter<'a>, ExecError> {
        Ok(per_vertex_rows(store, schema, move |vertices| {
            vec![Arc::new(Float64Array::from(pick(&out.score, vertices))) as ArrayRef]
        }))
    }

    fn summaries(out: &Scores) -> Vec<(&'static str, SummaryValue)> {
        vec![
            ("sources", SummaryValue::UInt64(out.sources)),
            ("sampled", SummaryValue::UInt64(u64::from(out.sampled))),
        ]
    }

    fn verify<S: GraphStore>(store: &S, cfg: &Sampling, table: &ResultTable) -> Result<(), String> {
        super::checks::betweenness::verify(store, cfg, table)
    }
}

/// The sources of a run as internal ids, ascending: `SAMPLES` of them drawn with `SEED`, or
/// as [`SAMPLE_RULE`] picks them when `SAMPLES` is 0.
pub(super) fn sources<S: GraphStore>(store: &S, cfg: &Sampling) -> Vec<u32> {
    let shape = store.shape();
    let samples = SAMPLE_RULE.sources(cfg.samples, u64::from(shape.vertices), shape.edges);
    sample_sources(store, samples, cfg.seed)
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
