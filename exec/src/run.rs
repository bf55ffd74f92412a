//! `run`: the executor's entry point, dispatching a validated call to its algorithm file and
//! wrapping the rows and statistics into a [`ResultTable`].

use std::time::Instant;

use arrow_array::RecordBatch;
use planner::AlgoCall;
use storage::GraphStore;

use crate::algorithms::{self, bfs, cdlp, degree, dfs, lcc, pagerank, randomwalk, sssp, wcc};
use crate::config::RunConfig;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::output_schema;
use crate::result::ResultTable;

/// Runs `call` over `store` with `cfg`'s workers and strategy. The algorithm is monomorphised
/// for the store type, so the in-memory path has no per-edge dynamic dispatch. Returns
/// `Cancelled` promptly once `cfg.cancel` is raised.
pub fn run<S: GraphStore>(
    store: &S,
    call: &AlgoCall,
    cfg: &RunConfig,
) -> Result<ResultTable, ExecError> {
    let mut ctx = RunContext::new(store, cfg)?;
    ctx.place_state(algorithms::state_bytes_per_vertex(call));
    let schema = output_schema(call);
    let started = Instant::now();
    // Each arm computes (timed), then builds rows (not timed).
    let (algorithm_time, batches): (_, Vec<RecordBatch>) = match call {
        AlgoCall::Bfs { source } => {
            let depth = bfs::compute(&ctx, *source)?;
            (started.elapsed(), bfs::batches(store, &schema, &depth)?)
        }
        AlgoCall::PageRank {
            iterations,
            damping,
        } => {
            let rank = pagerank::compute(&ctx, *iterations, *damping)?;
            (started.elapsed(), pagerank::batches(store, &schema, &rank)?)
        }
        AlgoCall::Wcc => {
            let label = wcc::compute(&ctx)?;
            (started.elapsed(), wcc::batches(store, &schema, &label)?)
        }
        AlgoCall::Sssp { source } => {
            let dist = sssp::compute(&ctx, *source)?;
            (started.elapsed(), sssp::batches(store, &schema, &dist)?)
        }
        AlgoCall::Cdlp { iterations } => {
            let label = cdlp::compute(&ctx, *iterations)?;
            (started.elapsed(), cdlp::batches(store, &schema, &label)?)
        }
        AlgoCall::Lcc => {
            let coef = lcc::compute(&ctx)?;
            (started.elapsed(), lcc::batches(store, &schema, &coef)?)
        }
        AlgoCall::RandomWalk {
            start,
            walks,
            length,
            seed,
        } => {
            let w = randomwalk::compute(&ctx, *start, *walks, *length, *seed)?;
            (started.elapsed(), randomwalk::batches(store, &schema, &w)?)
        }
        AlgoCall::Dfs { source } => {
            let d = dfs::compute(&ctx, *source)?;
            (started.elapsed(), dfs::batches(store, &schema, &d)?)
        }
        AlgoCall::Degree => {
            let b = degree::batches(&ctx, &schema)?;
            (started.elapsed(), b)
        }
    };
    Ok(ResultTable {
        schema,
        batches,
        iterations: ctx.into_stats(),
        algorithm_time,
    })
}
