//! Parallel pseudo-DFS (CAVE, after Acar et al.'s unordered DFS): every vertex reachable from
//! the source over out-edges is discovered exactly once, in depth-first-like order per worker.
//!
//! Every worker pops from its own stack ([`depth_first`]) and pushes the neighbours it claims.
//! A vertex is claimed by compare-exchange on its parent slot (a batch of remote CASes per list
//! when the state is remote), then given the next global discovery number, so the parent (whose
//! list revealed it) was always discovered earlier.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::{ArrayRef, UInt64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, SourceRule, Step};
use planner::AlgoCall;
use storage::GraphStore;

use super::{Algorithm, FromVertex};
use crate::bitmap::AtomicBitmap;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::output::{per_vertex_rows, pick};
use crate::result::BatchIter;
use crate::result::ResultTable;
use crate::stacks::depth_first;
use crate::state::StateValue;

/// Parent slot of an undiscovered vertex.
const UNSEEN: u32 = u32::MAX;
/// Discovery number of an undiscovered vertex.
pub const UNDISCOVERED: u64 = u64::MAX;

/// The result: discovery numbers and parents (internal ids; the source is its own parent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    pub source: u32,
    pub order: Vec<u64>,
    pub parent: Vec<u32>,
}

/// Parallel pseudo-DFS.
pub struct Dfs;

impl Algorithm for Dfs {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "dfs",
        summary: "parallel pseudo-DFS (CAVE): discovery order and a discovering parent",
        semantics: "CAVE's parallel pseudo-DFS from the FROM vertex: `discovered` numbers the vertices in the order they were reached and `parent` is the vertex that discovered each one; both are null for unreached vertices. With more than one thread the order is a valid pseudo-DFS order, not the sequential one.",
        example: "RUN dfs FROM 1 ON g ORDER BY discovered LIMIT 10;",
        source: SourceRule::Required,
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::nullable("discovered", ColumnType::UInt64),
            ColumnSpec::nullable("parent", ColumnType::VertexKey),
        ],
        program: &[
            Step::setup("stacks := [{source}]"),
            Step::call(
                Operator::ListFetch,
                "per worker: pop, out, claim undiscovered neighbours and push them; split a long stack to idle workers",
            ),
        ],
        // parent (u32) and discovery number (u64)
        state_bytes: 12,
        ..AlgorithmSpec::BASE
    };
    type Config = FromVertex;
    type Output = Discovery;

    fn config(call: &AlgoCall) -> FromVertex {
        FromVertex::of(call)
    }

    /// Discovers everything reachable from the source.
    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &FromVertex,
    ) -> Result<Discovery, ExecError> {
        let (n, source) = (ctx.n(), cfg.source);
        let parent = ctx.vertex_array(UNSEEN)?;
        let order = ctx.vertex_array(UNDISCOVERED)?;
        if source < n {
            let begin = ctx.begin();
            parent.set(source, source)?;
            order.set(source, 0)?;
            let counter = AtomicU64::new(1);
            // Remote claims are filtered through the vertices this node already tried (claims
            // never revert), so each vertex costs one remote CAS.
            let sent = parent.is_remote().then(|| AtomicBitmap::new(n));
            if let Some(sent) = &sent {
                sent.set(source);
            }
            let claim = |from: u32, ns: &[u32], stack: &mut Vec<u32>| -> Result<(), ExecError> {
                if let (Some(p), Some(o)) = (parent.local(), order.local()) {
                    for &w in ns.iter().rev() {
                        if p.get(w as usize)
                            .is_some_and(|p| u32::claim(p, UNSEEN, from))
                        {
                            u64::store(&o[w as usize], counter.fetch_add(1, Ordering::Relaxed));
                            stack.push(w);
                        }
                    }
                    return Ok(());
                }
                let tried: Vec<u32> = ns
                    .iter()
                    .rev()
                    .copied()
                    .filter(|&w| w < n && sent.as_ref().is_none_or(|s| s.set(w)))
                    .collect();
                let won = parent.claim_batch(&tried, UNSEEN, from)?;
                let first = counter.fetch_add(won.len() as u64, Ordering::Relaxed);
                let numbered: Vec<(u32, u64)> = won
                    .iter()
                    .enumerate()
                    .map(|(k, &w)| (w, first + k as u64))
                    .collect();
                // Discovery numbers start undiscovered (the largest value): a min-update writes them.
                order.min_batch(&numbered)?;
                stack.extend(won);
                Ok(())
            };
            let edges = depth_first(ctx, vec![source], &claim)?;
            ctx.finish(begin, counter.load(Ordering::Relaxed), edges, "push", None)?;
        }
        Ok(Discovery {
            source,
            order: order.into_vec()?,
            parent: parent.into_vec()?,
        })
    }

    /// Rows `(vertex, discovered, parent)`; both null for undiscovered vertices, parent null for
    /// the source.
    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        d: &'a Discovery,
    ) -> Result<BatchIter<'a>, ExecError> {
        Ok(per_vertex_rows(store, schema, move |vertices| {
            let order: UInt64Array = pick(&d.order, vertices)
                .into_iter()
                .map(|o| (o != UNDISCOVERED).then_some(o))
                .collect();
            let parent: UInt64Array = vertices
                .iter()
                .map(|&v| {
                    let p = d.parent[v as usize];
                    (p != UNSEEN && v != d.source).then(|| store.input_id(p))
                })
                .collect();
            vec![Arc::new(order) as ArrayRef, Arc::new(parent) as ArrayRef]
        }))
    }

    fn verify<S: GraphStore>(
        store: &S,
        cfg: &FromVertex,
        table: &ResultTable,
    ) -> Result<(), String> {
        super::checks::dfs::verify(store, cfg, table)
    }
}
