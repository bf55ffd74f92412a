//! `run`: the executor's entry point, dispatching a validated call to its algorithm file and
//! wrapping the rows and statistics into a [`ResultTable`].

use planner::AlgoCall;
use storage::GraphStore;

use crate::algorithms;
use crate::config::RunConfig;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::output_schema;
use crate::result::ResultTable;

/// Runs `call` over `store` with `cfg`'s workers and strategy. The kernel is monomorphised for
/// the store type, so the in-memory path has no per-edge dynamic dispatch. Returns `Cancelled`
/// promptly once `cfg.cancel` is raised.
pub fn run<S: GraphStore>(
    store: &S,
    call: &AlgoCall,
    cfg: &RunConfig,
) -> Result<ResultTable, ExecError> {
    if cfg.cluster.is_some() && !call.spec.splits {
        return Err(ExecError::Other(format!(
            "compute_nodes: {} runs on one compute node; SET compute_nodes = '' to run it here",
            call.spec.name
        )));
    }
    let mut ctx = RunContext::new(store, cfg)?;
    let computed = ctx
        .place_state(call.spec.state_bytes)
        .and_then(|()| algorithms::dispatch(&ctx, call, &output_schema(call)));
    let computed = match computed {
        Ok(c) => c,
        Err(e) => {
            // The other members may be waiting at a collective: release them with the reason.
            ctx.split()
                .abort(&format!("compute node {}: {e}", ctx.split().size_rank().1));
            return Err(e);
        }
    };
    let schema = output_schema(call);
    let operators = ctx.operators_called();
    Ok(ResultTable {
        schema,
        batches: computed.batches,
        iterations: ctx.into_stats(),
        algorithm_time: computed.elapsed,
        operators,
        summaries: computed.summaries,
    })
}
