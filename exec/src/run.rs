//! `run`: the executor's entry point, dispatching a validated call to its algorithm file and
//! wrapping the rows and statistics into a [`ResultTable`] (or a [`PendingResult`] whose rows
//! are built as they are taken).

use planner::AlgoCall;
use storage::GraphStore;

use crate::algorithms;
use crate::config::RunConfig;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::output_schema;
use crate::result::{PendingResult, ResultTable};

/// Runs `call` over `store` with `cfg`'s workers and strategy. The kernel is monomorphised for
/// the store type, so the in-memory path has no per-edge dynamic dispatch. Returns `Cancelled`
/// promptly once `cfg.cancel` is raised. Over several compute nodes, a member that fails
/// aborts the run, so the others' collectives return its error instead of waiting for it.
pub fn run<S: GraphStore>(
    store: &S,
    call: &AlgoCall,
    cfg: &RunConfig,
) -> Result<ResultTable, ExecError> {
    let outcome = run_here(store, call, cfg).and_then(PendingResult::into_table);
    abort_on_error(cfg, outcome)
}

/// [`run`] with the rows not built yet: they are built batch by batch as
/// [`PendingResult::rows`] is pulled.
pub fn run_pending<'s, S: GraphStore>(
    store: &'s S,
    call: &AlgoCall,
    cfg: &RunConfig,
) -> Result<PendingResult<'s>, ExecError> {
    abort_on_error(cfg, run_here(store, call, cfg))
}

/// Over several compute nodes, aborts the run when this member failed, and returns the
/// failure that caused it.
fn abort_on_error<T>(cfg: &RunConfig, outcome: Result<T, ExecError>) -> Result<T, ExecError> {
    if let (Err(e), Some(member)) = (&outcome, &cfg.cluster) {
        let c = &member.collectives;
        let mine = format!("compute node {}: {e}", c.rank());
        c.abort(&mine);
        // Once aborted, a barrier returns the first aborter's reason. When that is another
        // member's, it is the cause, and this member's error (e.g. reading state the failing
        // member freed while unwinding) its consequence.
        if let Err(first) = c.barrier() {
            let first = first.to_string();
            let prefix: String = mine.chars().take(64).collect();
            if first.starts_with("the run was aborted: ") && !first.contains(&prefix) {
                return Err(ExecError::Other(first));
            }
        }
    }
    outcome
}

fn run_here<'s, S: GraphStore>(
    store: &'s S,
    call: &AlgoCall,
    cfg: &RunConfig,
) -> Result<PendingResult<'s>, ExecError> {
    if cfg.cluster.is_some() && !call.spec.splits {
        return Err(ExecError::Other(format!(
            "compute_nodes: {} runs on one compute node; SET compute_nodes = '' to run it here",
            call.spec.name
        )));
    }
    let mut ctx = RunContext::new(store, cfg)?;
    ctx.place_state(call.spec.state_bytes)?;
    let schema = output_schema(call);
    let computed = algorithms::dispatch(&ctx, store, call)?;
    let operators = ctx.operators_called();
    let info = ResultTable {
        schema,
        batches: Vec::new(),
        iterations: ctx.into_stats(),
        algorithm_time: computed.elapsed,
        operators,
        summaries: computed.summaries,
    };
    Ok(PendingResult::new(info, computed.rows))
}
