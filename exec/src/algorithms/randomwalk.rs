//! Random walks (CAVE's parallel random walk): `walks` walkers each take up to `length` steps
//! along uniformly chosen out-edges. Step 0 is the start (FROM, or a vertex drawn uniformly
//! with the seed); a walk ends early at a vertex without out-edges.
//!
//! Reproducibility: walk w draws from its own xoshiro256** stream derived from (seed, w) only,
//! one draw per start and per step, so the same SEED gives the same walks whatever the thread
//! count, chunking or fetch order. Each iteration advances every live walk by one step; a chunk
//! of walks fetches the lists of the distinct vertices its walkers stand on with one list fetch
//! (CAVE Algorithm 5's frontier of walkers).

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt32Array, UInt64Array};
use arrow_schema::SchemaRef;
use planner::registry::{
    AlgorithmSpec, ColumnSpec, ColumnType, Operator, ParamSpec, Rows, SourceRule, Step,
};
use planner::AlgoCall;
use rayon::prelude::*;
use storage::{Direction, GraphStore};

use super::Algorithm;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::lists::{fetch_name, visit_positions};
use crate::result::{ResultTable, BATCH_ROWS};
use crate::rng::Xoshiro256;

/// The most rows (walks × (length + 1)) a run may produce; more is refused, not attempted.
pub const MAX_ROWS: u64 = 1 << 31;

/// The visited vertices of every walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walks {
    /// Per step, where every walk stood (meaningful for the walks that got that far).
    pub steps: Vec<Vec<u32>>,
    /// Vertices visited by each walk (at least 1).
    pub lengths: Vec<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Walker {
    at: u32,
    rng: Xoshiro256,
    /// Vertices visited so far; a walk still moving after k steps has visited k + 1.
    visited: u32,
}

/// Random walks.
pub struct RandomWalk;

/// The walks to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Where every walk starts; drawn per walk with the seed when `None`.
    pub start: Option<u32>,
    pub walks: u64,
    pub length: u32,
    pub seed: u64,
}

impl Default for Config {
    /// The declared defaults.
    fn default() -> Config {
        RandomWalk::config(&AlgoCall::new(&RandomWalk::SPEC))
    }
}

impl Algorithm for RandomWalk {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "randomwalk",
        summary: "random walks; the same SEED gives the same walks whatever the thread count",
        semantics: "WALKS walks of up to LENGTH steps along out-edges, each next vertex chosen uniformly (weights are ignored); a walk ends early at a vertex with no out-edges. Walks start at the FROM vertex, or at uniformly chosen vertices without it. One row per walk step, so it cannot be joined with other algorithms. The same SEED gives the same walks whatever the thread count.",
        example: "RUN randomwalk FROM 1 ON g walks 10 length 5 seed 7;",
        source: SourceRule::Optional,
        params: &[
            ParamSpec::int("walks", 1, 1_000_000_000, 1000, "number of walks"),
            ParamSpec::int("length", 0, 1_000_000, 80, "steps per walk (a walk ends early at a vertex with no out-edges)"),
            ParamSpec::int("seed", 0, u64::MAX, 0, "random seed"),
        ],
        columns: &[
            ColumnSpec::new("walk", ColumnType::UInt64),
            ColumnSpec::new("step", ColumnType::UInt32),
            ColumnSpec::VERTEX,
        ],
        rows: Rows::PerWalkStep {
            count: "walks",
            length: "length",
        },
        program: &[
            Step::setup("walkers := WALKS start vertices (FROM, or drawn with SEED)"),
            Step::call(
                Operator::ListFetch,
                "walkers' vertices, out; step to a neighbour drawn from (SEED, walk, step); LENGTH times",
            ),
        ],
        ..AlgorithmSpec::BASE
    };
    type Config = Config;
    type Output = Walks;

    fn config(call: &AlgoCall) -> Config {
        Config {
            start: call.source,
            walks: call.int("walks"),
            length: call.int("length") as u32,
            seed: call.int("seed"),
        }
    }

    /// Runs the walks.
    fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, cfg: &Config) -> Result<Walks, ExecError> {
        let n = ctx.n();
        let no_start = cfg.start.map_or(n == 0, |s| s >= n);
        if cfg.walks == 0 || no_start {
            return Ok(Walks {
                steps: Vec::new(),
                lengths: Vec::new(),
            });
        }
        let rows = cfg.walks.saturating_mul(u64::from(cfg.length) + 1);
        if rows > MAX_ROWS {
            return Err(ExecError::Other(format!(
                "randomwalk: {} walks of length {} would produce {rows} rows; at most {MAX_ROWS} are supported",
                cfg.walks, cfg.length
            )));
        }
        let mut walkers: Vec<Walker> = ctx.pool.install(|| {
            (0..cfg.walks)
                .into_par_iter()
                .map(|w| {
                    let mut rng = Xoshiro256::for_stream(cfg.seed, w);
                    let at = cfg.start.unwrap_or_else(|| rng.below(u64::from(n)) as u32);
                    Walker {
                        at,
                        rng,
                        visited: 1,
                    }
                })
                .collect()
        });
        let mut steps = vec![walkers.iter().map(|w| w.at).collect::<Vec<u32>>()];
        for moved in 1..=cfg.length {
            let begin = ctx.begin();
            let active = walkers.iter().filter(|w| w.visited == moved).count() as u64;
            if active == 0 {
                break;
            }
            let at = |w: &Walker| (w.visited == moved).then_some(w.at);
            let moves = visit_positions(ctx, Direction::Out, &mut walkers, at, advance)?;
            steps.push(walkers.iter().map(|w| w.at).collect());
            ctx.finish(
                begin,
                active,
                moves,
                fetch_name(ctx.cfg.mode),
                Some(cfg.length),
            )?;
        }
        let lengths = walkers.iter().map(|w| w.visited).collect();
        Ok(Walks { steps, lengths })
    }

    /// Rows `(walk, step, vertex)`, by walk then step.
    fn batches<S: GraphStore>(
        store: &S,
        schema: &SchemaRef,
        walks: &Walks,
    ) -> Result<Vec<RecordBatch>, ExecError> {
        let rows: Vec<(u64, u32, u32)> = walks
            .lengths
            .iter()
            .enumerate()
            .flat_map(|(w, &len)| (0..len).map(move |s| (w as u64, s, walks.steps[s as usize][w])))
            .collect();
        rows.chunks(BATCH_ROWS)
            .map(|c| {
                let cols: Vec<ArrayRef> = vec![
                    Arc::new(UInt64Array::from_iter_values(c.iter().map(|r| r.0))),
                    Arc::new(UInt32Array::from_iter_values(c.iter().map(|r| r.1))),
                    Arc::new(UInt64Array::from_iter_values(
                        c.iter().map(|r| store.input_id(r.2)),
                    )),
                ];
                Ok(RecordBatch::try_new(schema.clone(), cols)?)
            })
            .collect()
    }

    fn verify<S: GraphStore>(store: &S, cfg: &Config, table: &ResultTable) -> Result<(), String> {
        super::checks::randomwalk::verify(store, cfg, table)
    }
}

/// Moves `walker` to a uniformly chosen vertex of `ns` (its walk ends when `ns` is empty).
/// Returns the number of moves made (0 or 1).
fn advance(walker: &mut Walker, ns: &[u32]) -> u64 {
    if ns.is_empty() {
        return 0;
    }
    walker.at = ns[walker.rng.below(ns.len() as u64) as usize];
    walker.visited += 1;
    1
}
