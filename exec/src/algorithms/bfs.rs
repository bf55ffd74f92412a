//! Breadth-first search over out-edges (Graphalytics BFS): the depth of every vertex from the
//! source, null when unreachable.
//!
//! Each level is one EdgeMap round. Under `Auto` this is direction-optimising BFS (Beamer):
//! top-down push while the frontier is small, bottom-up pull with bitmaps — every unvisited
//! vertex scans its in-list and stops at the first parent in the frontier — once the frontier's
//! out-degree sum passes |arcs|/20. With a CSR view both directions run over slices.
//! Each level claims the unvisited destinations ([`EdgeMap::claim`]), so the depths may be local
//! or remote. Out of core on a clustered graph (`LAYOUT locality`: road networks, meshes) the
//! rounds are min-updates that spread through the blocks they read instead, in buckets of
//! depth ([`crate::spread`]): a round crosses whole clusters where a level crosses one vertex.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, SourceRule, Step};
use planner::AlgoCall;
use storage::{Direction, GraphStore};

use super::{Algorithm, FromVertex};
use crate::context::RunContext;
use crate::edgemap::EdgeMap;
use crate::error::ExecError;
use crate::output::{per_vertex_rows, pick};
use crate::reference::{compare, Lists};
use crate::result::BatchIter;
use crate::result::ResultTable;
use crate::spread;
use crate::subset::VertexSubset;

/// Depth of an unvisited vertex.
pub const UNREACHED: u32 = u32::MAX;

/// Breadth-first search.
pub struct Bfs;

impl Algorithm for Bfs {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "bfs",
        summary: "breadth-first search: hops from the source along out-edges",
        semantics: "Hop counts along out-edges from the FROM vertex (along edges either way on undirected graphs). `depth` is 0 at the source and null for a vertex the search never reaches; edge weights are ignored.",
        example: "RUN bfs FROM 1 ON g WHERE depth IS NOT NULL ORDER BY depth DESC LIMIT 5;",
        source: SourceRule::Required,
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::nullable("depth", ColumnType::Int64),
        ],
        program: &[
            Step::setup("frontier := {source}"),
            Step::call(
                Operator::EdgeMap,
                "frontier, out, depth[v] unset => depth[v] := level+1; until the frontier is empty",
            ),
        ],
        // depth (u32)
        state_bytes: 4,
        splits: true,
        ..AlgorithmSpec::BASE
    };
    type Config = FromVertex;
    type Output = Vec<u32>;

    fn config(call: &AlgoCall) -> FromVertex {
        FromVertex::of(call)
    }

    /// Depths from the source ([`UNREACHED`] when not reachable); an out-of-range source
    /// reaches nothing.
    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &FromVertex,
    ) -> Result<Vec<u32>, ExecError> {
        let n = ctx.n();
        let source = cfg.source;
        if source >= n {
            return Ok(vec![UNREACHED; n as usize]);
        }
        let depth = ctx.vertex_array(UNREACHED)?;
        depth.set(source, 0)?;
        let mut frontier = VertexSubset::single(n, source);
        let mut edge_map = EdgeMap::new(ctx);
        if edge_map.spreads_min(Direction::Out, &depth) {
            let per_hop = 1.0 / spread::cluster_hops(ctx.store, Direction::Out);
            spread::spread_min(
                &mut edge_map,
                &depth,
                source,
                Direction::Out,
                false,
                |d: u32, _| d.checked_add(1),
                |d: u32| (f64::from(d) * per_hop) as u64,
            )?;
            return depth.into_vec();
        }
        let mut level = 1;
        while !frontier.is_empty() {
            frontier = edge_map.claim(&frontier, Direction::Out, &depth, UNREACHED, level, None)?;
            level += 1;
        }
        depth.into_vec()
    }

    /// Rows `(vertex, depth)`.
    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        depth: &'a Vec<u32>,
    ) -> Result<BatchIter<'a>, ExecError> {
        Ok(per_vertex_rows(store, schema, move |vertices| {
            let col: Int64Array = pick(depth, vertices)
                .into_iter()
                .map(|d| (d != UNREACHED).then_some(d as i64))
                .collect();
            vec![Arc::new(col) as ArrayRef]
        }))
    }

    /// Checks depths against a sequential queue-based BFS from the source.
    fn verify<S: GraphStore>(
        store: &S,
        cfg: &FromVertex,
        table: &ResultTable,
    ) -> Result<(), String> {
        let lists = Lists::read(store)?;
        let source = cfg.source as usize;
        let mut want = vec![None; lists.n()];
        if source < lists.n() {
            want[source] = Some(0.0);
            let mut queue = std::collections::VecDeque::from([source]);
            while let Some(u) = queue.pop_front() {
                let next = want[u].map(|d: f64| d + 1.0);
                for &(v, _) in &lists.out[u] {
                    if want[v as usize].is_none() {
                        want[v as usize] = next;
                        queue.push_back(v as usize);
                    }
                }
            }
        }
        compare(store, table, "depth", &want, |a, b| a == b)
    }
}
