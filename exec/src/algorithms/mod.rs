//! One file per algorithm, each written against the operators only. A file declares what its
//! algorithm is ([`Algorithm::SPEC`]: name, parameters, columns, program, state bytes), turns a
//! checked call into its [`Algorithm::Config`], computes, builds rows, and verifies a result
//! against a plain sequential computation of the definition (GAPBS style). Adding an algorithm
//! is its file and one line in [`algorithms!`] below; the planner, EXPLAIN, HELP, the output
//! schema, state placement and the memory estimate all read the declaration through
//! [`REGISTRY`].

pub mod betweenness;
pub mod bfs;
pub mod cdlp;
mod checks;
pub mod closeness;
pub mod degree;
pub mod dfs;
pub mod distances;
pub mod harmonic;
pub mod kcore;
pub mod lcc;
pub mod leiden;
pub mod louvain;
pub mod pagerank;
pub mod randomwalk;
pub mod scc;
pub mod sssp;
pub mod triangles;
pub mod wcc;

use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, Registry};
use planner::AlgoCall;
use storage::GraphStore;

use crate::context::RunContext;
use crate::error::ExecError;
use crate::result::{BatchIter, ResultTable, RowSource, Summary, SummaryValue};

/// An algorithm: its declaration and its kernel.
pub trait Algorithm {
    /// What the system knows of it before it runs.
    const SPEC: AlgorithmSpec;
    /// Its parameters, typed.
    type Config;
    /// What the kernel computes, before rows are built.
    type Output: Send;

    /// The typed parameters of a checked call.
    fn config(call: &AlgoCall) -> Self::Config;

    /// The kernel (timed as algorithm time).
    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &Self::Config,
    ) -> Result<Self::Output, ExecError>;

    /// The result rows, in the declared columns (not timed). An algorithm implements this or
    /// [`Algorithm::rows`]; each one's default is the other.
    fn batches<S: GraphStore>(
        store: &S,
        schema: &SchemaRef,
        out: &Self::Output,
    ) -> Result<Vec<RecordBatch>, ExecError> {
        Self::rows(store, schema, out)?.collect()
    }

    /// The rows of [`Algorithm::batches`], each batch built when it is pulled, so that a
    /// consumer which stops early (LIMIT) or keeps a batch at a time never holds them all. By
    /// default every batch is built first.
    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        out: &'a Self::Output,
    ) -> Result<BatchIter<'a>, ExecError> {
        Ok(Box::new(
            Self::batches(store, schema, out)?.into_iter().map(Ok),
        ))
    }

    /// The scalars the run reports besides its rows, by the names `SPEC.summaries` declares
    /// (none unless declared).
    fn summaries(_out: &Self::Output) -> Vec<(&'static str, SummaryValue)> {
        Vec::new()
    }

    /// Checks `table` against a sequential computation of the definition.
    fn verify<S: GraphStore>(
        store: &S,
        cfg: &Self::Config,
        table: &ResultTable,
    ) -> Result<(), String>;
}

/// The most iterations `ITER` accepts.
pub const ITERATIONS_MAX: u64 = 1_000_000;

/// The configuration of an algorithm whose only input is where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FromVertex {
    /// An internal id; an id out of range reaches nothing.
    pub source: u32,
}

impl FromVertex {
    /// The source of a checked call.
    pub fn of(call: &AlgoCall) -> FromVertex {
        FromVertex {
            source: call.source.unwrap_or(0),
        }
    }
}

/// What one call produced: the algorithm time, what its rows are built from and the
/// summaries.
pub(crate) struct Computed<'s> {
    pub elapsed: Duration,
    pub rows: Box<dyn RowSource + 's>,
    pub summaries: Vec<Summary>,
}

/// A kernel's output over its store, from which [`Algorithm::rows`] builds the rows.
struct KernelOutput<'s, A: Algorithm, S> {
    store: &'s S,
    out: A::Output,
}

impl<A: Algorithm, S: GraphStore> RowSource for KernelOutput<'_, A, S> {
    fn rows(&self, schema: &SchemaRef) -> Result<BatchIter<'_>, ExecError> {
        A::rows(self.store, schema, &self.out)
    }
}

/// Computes `call` with `A`'s kernel and keeps its output (what the rows are built from) and
/// its summaries.
fn run_as<'s, A: Algorithm + 's, S: GraphStore>(
    ctx: &RunContext<'_, S>,
    store: &'s S,
    call: &AlgoCall,
) -> Result<Computed<'s>, ExecError>
where
    A::Output: 's,
{
    let started = Instant::now();
    // In one process the kernel's own thread is one of the pool's workers: its parallel steps
    // are then split among the workers it wakes, instead of being handed over while it waits.
    // A compute node's member keeps the kernel on the job's thread, whose allocations are the
    // ones its memory bound (cn_cache) accounts for.
    let out = match ctx.cfg.cluster {
        None => ctx.pool.install(|| A::compute(ctx, &A::config(call)))?,
        Some(_) => A::compute(ctx, &A::config(call))?,
    };
    let elapsed = started.elapsed();
    // Over several compute nodes only member 0 returns rows and summaries; the others' output
    // is empty (their kernels' shared results are not read back: `VertexArray::into_vec`).
    if ctx
        .cfg
        .cluster
        .as_ref()
        .is_some_and(|m| m.collectives.rank() != 0)
    {
        return Ok(Computed {
            elapsed,
            rows: Box::new(Vec::<RecordBatch>::new()),
            summaries: Vec::new(),
        });
    }
    let mut summaries = Vec::new();
    for (name, value) in A::summaries(&out) {
        let Some(spec) = A::SPEC.summary(name) else {
            return Err(ExecError::Other(format!(
                "internal error: {} reports the undeclared summary `{name}`",
                A::SPEC.name
            )));
        };
        summaries.push(Summary {
            scope: A::SPEC.name.to_string(),
            name: spec.name,
            value,
        });
    }
    Ok(Computed {
        elapsed,
        rows: Box::new(KernelOutput::<A, S> { store, out }),
        summaries,
    })
}

/// The registration list: for each algorithm its module and type, in the order HELP lists them.
macro_rules! algorithms {
    ($($module:ident :: $kind:ident),* $(,)?) => {
        /// Every algorithm the executor runs, for the planner.
        pub static REGISTRY: Registry =
            Registry::new(&[$(&<$module::$kind as Algorithm>::SPEC),*]);

        /// Runs `call`'s kernel over the context's store, `store` (whose borrow the rows
        /// keep).
        pub(crate) fn dispatch<'s, S: GraphStore>(
            ctx: &RunContext<'_, S>,
            store: &'s S,
            call: &AlgoCall,
        ) -> Result<Computed<'s>, ExecError> {
            $(if call.spec.name == <$module::$kind as Algorithm>::SPEC.name {
                return run_as::<$module::$kind, S>(ctx, store, call);
            })*
            Err(ExecError::Other(format!("no kernel is registered for `{}`", call.spec.name)))
        }

        /// Checks `table`, the result of `call` over `store`, with the algorithm's verifier.
        pub fn verify<S: GraphStore>(
            store: &S,
            call: &AlgoCall,
            table: &ResultTable,
        ) -> Result<(), String> {
            $(if call.spec.name == <$module::$kind as Algorithm>::SPEC.name {
                let cfg = <$module::$kind as Algorithm>::config(call);
                return <$module::$kind as Algorithm>::verify(store, &cfg, table);
            })*
            Err(format!("no verifier is registered for `{}`", call.spec.name))
        }
    };
}

algorithms! {
    bfs::Bfs,
    pagerank::PageRank,
    wcc::Wcc,
    sssp::Sssp,
    cdlp::Cdlp,
    lcc::Lcc,
    randomwalk::RandomWalk,
    dfs::Dfs,
    degree::Degree,
    scc::Scc,
    kcore::KCore,
    triangles::Triangles,
    closeness::Closeness,
    harmonic::Harmonic,
    betweenness::Betweenness,
    louvain::Louvain,
    leiden::Leiden,
}

/// The declaration of the algorithm called `name`.
pub fn spec(name: &str) -> Option<&'static AlgorithmSpec> {
    REGISTRY.get(name)
}

/// A call of the algorithm `name` with its defaults, for programs and tests that run kernels
/// without a statement (statements go through the planner).
///
/// # Panics
/// When no algorithm is called `name`: a programming error, not an input.
pub fn call(name: &str) -> AlgoCall {
    match REGISTRY.get(name) {
        Some(spec) => AlgoCall::new(spec),
        None => panic!("no algorithm is called `{name}`"),
    }
}

/// EXPLAIN's line for a DM graph: whether the kernel's state will be remote or local, and why.
/// `members` is how many compute nodes share the run: several always keep the state remote,
/// where every member reads and updates it.
pub fn explain_state(spec: &AlgorithmSpec, vertices: u64, cn_cache: u64, members: usize) -> String {
    let per = spec.state_bytes;
    let total = per.saturating_mul(vertices);
    let sizes = format!(
        "{per} B × {vertices} vertices = {} vs cn_cache {}",
        base::format_size(total),
        base::format_size(cn_cache)
    );
    if per == 0 {
        "local (no per-vertex state)".to_string()
    } else if members > 1 {
        format!(
            "remote ({per} B × {vertices} vertices = {}, shared by the {members} compute nodes)",
            base::format_size(total)
        )
    } else if total > cn_cache {
        format!("remote ({sizes}: direct remote update, frontier kept locally)")
    } else {
        format!("local ({sizes}: fits)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registered_declarations_are_consistent() {
        planner::registry::check_declarations(&REGISTRY).unwrap();
        assert_eq!(
            REGISTRY.names().collect::<Vec<_>>(),
            [
                "bfs",
                "pagerank",
                "wcc",
                "sssp",
                "cdlp",
                "lcc",
                "randomwalk",
                "dfs",
                "degree",
                "scc",
                "kcore",
                "triangles",
                "closeness",
                "harmonic",
                "betweenness",
                "louvain",
                "leiden"
            ]
        );
    }

    #[test]
    fn every_algorithm_explains_itself_with_an_example_that_parses() {
        for a in REGISTRY.iter() {
            assert!(!a.semantics.is_empty(), "{}: no semantics for HELP", a.name);
            let stmts = grammar::parse(a.example)
                .unwrap_or_else(|e| panic!("{}: example does not parse: {e}", a.name));
            let [grammar::Statement {
                kind: grammar::StatementKind::Run { run, .. },
                ..
            }] = &stmts[..]
            else {
                panic!("{}: the example is not one RUN", a.name)
            };
            assert!(
                run.calls.iter().any(|c| c.algorithm.name == a.name),
                "{}: the example runs something else",
                a.name
            );
        }
    }

    #[test]
    fn explain_says_where_the_state_lives_and_why() {
        let bfs = spec("bfs").unwrap();
        let s = explain_state(bfs, 10, 16, 1);
        assert!(
            s.starts_with("remote (4 B × 10 vertices = 40 B vs cn_cache 16 B"),
            "{s}"
        );
        assert!(explain_state(bfs, 10, 40, 1).starts_with("local ("));
        // Several compute nodes share the state, however small.
        assert!(explain_state(bfs, 10, 1 << 30, 3).contains("shared by the 3 compute nodes"));
        assert!(
            explain_state(spec("randomwalk").unwrap(), 10, 16, 1).contains("no per-vertex state")
        );
        assert!(explain_state(spec("degree").unwrap(), 10, 16, 1).contains("no per-vertex state"));
    }
}
