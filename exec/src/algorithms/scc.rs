//! Strongly connected components: each vertex is labelled with the smallest input id of its
//! component. On undirected graphs the components are the connected ones, as WCC labels them.
//!
//! Forward-backward colouring (Orzan), in rounds over the vertices not yet assigned:
//!
//! 1. **forward**: every unassigned vertex takes its own id as colour, and colours spread by
//!    min-updates along out-edges among unassigned vertices ([`EdgeMap::relax_min`]) until none
//!    changes; a vertex's colour is then the smallest vertex that reaches it;
//! 2. **backward**: the vertices whose colour is their own id (the roots) spread a mark along
//!    in-edges, to vertices of their colour only; the marked vertices reach their root and are
//!    reached by it, so they are its component, with the root (its smallest internal id) as
//!    label; at the end each label becomes the component's smallest input id (the same
//!    vertex unless the graph is in degree order).
//!
//! Before the first round and between rounds, **trimming** peels off the vertices with no
//! in-neighbour or no out-neighbour among the unassigned ones: each is a component of its own,
//! and removing it may expose its neighbours. Every vertex keeps both counts in one word
//! ([`Counts`]); removing a frontier is two [`EdgeMap::add`] rounds (its out-edges lower the
//! in-counts, its in-edges the out-counts), and the vertices whose count reaches zero are the
//! next frontier. So chains and trees hanging off the cycles cost work in proportion to their
//! edges instead of one forward-backward round each (a directed path of n vertices needs no
//! round at all, where it needed n). The vertices a round assigns are removed the same way.
//! With the counts in local memory a removal round is a queue step: each decrement that leaves
//! its vertex trimmable puts it in the next frontier ([`Lower`]), so a round costs its
//! frontier's edges and nothing per vertex reached; remote counts take batched additions and
//! keep the vertices whose final count is trimmable.
//!
//! Every round assigns at least the component of the smallest unassigned vertex. Both phases
//! are min-updates, so the state may be local or remote: the colour array doubles as the final
//! label (values below [`UNASSIGNED`] are labels), and the backward key orders colours in
//! reverse so that a mark can never cross into another colour (a colour only grows along an
//! edge, and the key of a larger colour is smaller than any mark of a smaller one).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::{ArrayRef, UInt64Array};
use arrow_schema::SchemaRef;
use planner::registry::{AlgorithmSpec, ColumnSpec, ColumnType, Operator, Step};
use planner::AlgoCall;
use storage::{Direction, GraphStore};

use super::Algorithm;
use crate::context::RunContext;
use crate::edgemap::{EdgeFunc, EdgeMap};
use crate::error::ExecError;
use crate::output::{per_vertex_rows, pick};
use crate::result::BatchIter;
use crate::result::ResultTable;
use crate::state::VertexArray;
use crate::subset::VertexSubset;
use crate::vertexmap::{vertex_select, vertex_transform};

/// Colours at or above this are unassigned (`UNASSIGNED + colour`); below it, final labels.
const UNASSIGNED: u64 = 1 << 33;
/// Backward keys at or above this belong to unassigned vertices; below it, final labels.
const KEYED: u64 = 1 << 40;

/// The backward key of a vertex of colour `colour`: larger colours get smaller keys; the low
/// bit is clear once the vertex is marked (roots start marked).
fn key(colour: u64, marked: bool) -> u64 {
    KEYED + (((UNASSIGNED - colour) << 1) | u64::from(!marked))
}

/// The colour of an unassigned vertex's backward key.
fn colour_of(key: u64) -> u64 {
    UNASSIGNED - ((key - KEYED) >> 1)
}

/// A vertex's in- and out-neighbours among the unassigned vertices, packed in one word so that
/// one array holds both: the out-count in the low 31 bits, the in-count in the next 31, and a
/// bit set once the vertex is removed. Degrees fit because trimming runs only below 2^31
/// vertices (duplicate edges are merged at import, so a degree is below the vertex count).
struct Counts;

impl Counts {
    /// One out-neighbour.
    const OUT: u64 = 1;
    /// One in-neighbour.
    const IN: u64 = 1 << 31;
    const FIELD: u64 = (1 << 31) - 1;
    const REMOVED: u64 = 1 << 63;
    /// The largest vertex count trimming handles.
    const MAX_VERTICES: u32 = 1 << 31;

    /// Whether a vertex with `word` is still present but has no in- or no out-neighbour left.
    fn trimmable(word: u64) -> bool {
        word & Self::REMOVED == 0 && (word & Self::FIELD == 0 || (word >> 31) & Self::FIELD == 0)
    }
}

/// Strongly connected components.
pub struct Scc;

impl Algorithm for Scc {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "scc",
        summary: "strongly connected components, each labelled with its smallest vertex id (undirected graphs: connected components)",
        semantics: "Strongly connected components: u and v share a component when each reaches the other along out-edges. Each component is labelled with its smallest vertex id, as wcc labels; on undirected graphs the components are the connected components. Vertices with no in- or no out-neighbour left are trimmed off as components of their own, then forward-backward colouring, one EdgeMap round per step.",
        example: "RUN scc ON g ORDER BY component LIMIT 10;",
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("component", ColumnType::UInt64),
        ],
        program: &[
            Step::call(Operator::VertexMap, "unassigned, colour[v] := v"),
            Step::call(Operator::EdgeMap, "all, out and in, count[v] := (in-neighbours, out-neighbours)"),
            Step::call(Operator::VertexMap, "trim := {v : no in- or no out-neighbour}"),
            Step::call(Operator::EdgeMap, "trim, out and in, count[w] -= 1, component[v] := v; the vertices reaching 0 are the next trim, until none"),
            Step::call(Operator::EdgeMap, "frontier, out, colour[w] := min(colour[w], colour[v]) among unassigned; until no colour changes"),
            Step::call(Operator::VertexMap, "roots := {v : colour[v] = v}"),
            Step::call(Operator::EdgeMap, "roots, in, mark w when colour[w] = colour[v]; until no mark spreads"),
            Step::call(Operator::VertexMap, "marked v: component[v] := colour[v]; trim them as above; repeat while any vertex is unassigned"),
        ],
        // colour or label (u64), backward key (u64) and neighbour counts (u64)
        state_bytes: 24,
        passes: Some("trimming (EdgeMap additions), then forward-backward colouring rounds, each a series of min-update EdgeMap rounds"),
        ..AlgorithmSpec::BASE
    };
    type Config = ();
    type Output = Vec<u64>;

    fn config(_: &AlgoCall) {}

    fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, _: &()) -> Result<Vec<u64>, ExecError> {
        let mut root = compute(ctx)?;
        label_by_smallest_input_id(ctx.store, &mut root);
        Ok(root)
    }

    fn rows<'a, S: GraphStore>(
        store: &'a S,
        schema: &SchemaRef,
        root: &'a Vec<u64>,
    ) -> Result<BatchIter<'a>, ExecError> {
        Ok(per_vertex_rows(store, schema, move |vertices| {
            let ids: UInt64Array = pick(root, vertices).into();
            vec![Arc::new(ids) as ArrayRef]
        }))
    }

    fn verify<S: GraphStore>(store: &S, _: &(), table: &ResultTable) -> Result<(), String> {
        super::checks::scc::verify(store, table)
    }
}

/// Turns every vertex's root (an internal id) into its component's label: the smallest input
/// id among the members. The root is the member of smallest internal id, which is the one of
/// smallest input id only when the graph is in key order.
fn label_by_smallest_input_id<S: GraphStore>(store: &S, root: &mut [u64]) {
    let mut smallest = vec![u64::MAX; root.len()];
    for (v, &r) in root.iter().enumerate() {
        let s = &mut smallest[r as usize];
        *s = (*s).min(store.input_id(v as u32));
    }
    for r in root.iter_mut() {
        *r = smallest[*r as usize];
    }
}

/// The root (internal id of the smallest member) of every vertex's component.
fn compute<S: GraphStore>(ctx: &RunContext<'_, S>) -> Result<Vec<u64>, ExecError> {
    let n = ctx.n();
    let backward = if ctx.store.shape().directed {
        Direction::In
    } else {
        Direction::Out
    };
    let colour = ctx.vertex_array(UNASSIGNED)?;
    let back = ctx.vertex_array(0u64)?;
    let mut edge_map = EdgeMap::new(ctx);
    let mut remaining = vertex_transform(ctx, &colour, &colour, |v, _| {
        (UNASSIGNED + u64::from(v), 1.0)
    })?;
    let trim = if n < Counts::MAX_VERTICES {
        Some(Trim::new(ctx, &mut edge_map, backward)?)
    } else {
        None
    };
    let mut assigned = match &trim {
        Some(t) => vertex_select(ctx, &t.counts, |_, w| Counts::trimmable(w))?,
        None => VertexSubset::empty(n),
    };
    // `remaining` counts the unassigned vertices; once none is left, the vertices the last
    // round assigned need not be peeled.
    while remaining > 0.0 {
        if let Some(t) = &trim {
            t.peel(&mut edge_map, assigned, &colour)?;
        }
        // Colours spread from the unassigned vertices only.
        let mut frontier = vertex_select(ctx, &colour, |_, c| c >= UNASSIGNED)?;
        if frontier.is_empty() {
            break;
        }
        while !frontier.is_empty() {
            frontier = edge_map.relax_min(
                &frontier,
                &[Direction::Out],
                &colour,
                false,
                |c, _| (c >= UNASSIGNED).then_some(c),
                None,
            )?;
        }
        vertex_transform(ctx, &colour, &back, |v, c| {
            if c < UNASSIGNED {
                (c, 0.0)
            } else {
                let c = c - UNASSIGNED;
                (key(c, c == u64::from(v)), 0.0)
            }
        })?;
        let marked = |k: u64| k >= KEYED && k & 1 == 0;
        let mut frontier = vertex_select(ctx, &back, |_, k| marked(k))?;
        while !frontier.is_empty() {
            frontier = edge_map.relax_min(
                &frontier,
                &[backward],
                &back,
                false,
                |k, _| marked(k).then_some(k),
                None,
            )?;
        }
        assigned = match &trim {
            Some(_) => vertex_select(ctx, &back, |_, k| marked(k))?,
            None => VertexSubset::empty(n),
        };
        remaining = vertex_transform(ctx, &back, &colour, |v, k| {
            if k < KEYED {
                (k, 0.0)
            } else if k & 1 == 0 {
                (colour_of(k), 0.0)
            } else {
                (UNASSIGNED + u64::from(v), 1.0)
            }
        })?;
    }
    if let Some(t) = trim {
        t.counts.free()?;
    }
    back.free()?;
    colour.into_vec()
}

/// Trimming: the neighbour counts of every vertex among the unassigned ones.
struct Trim {
    counts: VertexArray<u64>,
    /// The direction of in-edges (out-edges again on undirected graphs).
    backward: Direction,
}

impl Trim {
    /// Counts every vertex's in- and out-neighbours.
    fn new<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        edge_map: &mut EdgeMap<'_, '_, S>,
        backward: Direction,
    ) -> Result<Self, ExecError> {
        let counts = ctx.vertex_array(0u64)?;
        let all = VertexSubset::all(ctx.n());
        edge_map.add(&all, &[Direction::Out], &counts, Counts::IN, None)?;
        edge_map.add(&all, &[backward], &counts, Counts::OUT, None)?;
        Ok(Trim { counts, backward })
    }

    /// Removes `removed` (vertices just assigned a component, or trimmable), then every vertex
    /// that removal leaves without in- or out-neighbours, each its own component.
    fn peel<S: GraphStore>(
        &self,
        edge_map: &mut EdgeMap<'_, '_, S>,
        removed: VertexSubset,
        colour: &VertexArray<u64>,
    ) -> Result<(), ExecError> {
        let n = removed.universe();
        let mut frontier = removed;
        while !frontier.is_empty() {
            let list = frontier.to_list();
            let flagged: Vec<(u32, u64)> = list.iter().map(|&v| (v, Counts::REMOVED)).collect();
            self.counts.add_batch(&flagged)?;
            // A vertex assigned by a round already holds its (smaller) label; a trimmed one
            // becomes its own component.
            let own: Vec<(u32, u64)> = list.iter().map(|&v| (v, u64::from(v))).collect();
            colour.min_batch(&own)?;
            let mut next = self.lower(edge_map, &frontier, Direction::Out, Counts::IN)?;
            next.extend(self.lower(edge_map, &frontier, self.backward, Counts::OUT)?);
            next.sort_unstable();
            next.dedup();
            frontier = VertexSubset::from_list(n, next);
        }
        Ok(())
    }

    /// Takes `unit` off the count of every `dir` neighbour of `frontier` (self-loops skipped,
    /// as they were not counted); returns the neighbours that are now trimmable, each once per
    /// call, in no particular order.
    fn lower<S: GraphStore>(
        &self,
        edge_map: &mut EdgeMap<'_, '_, S>,
        frontier: &VertexSubset,
        dir: Direction,
        unit: u64,
    ) -> Result<Vec<u32>, ExecError> {
        match self.counts.local() {
            Some(cells) => Ok(edge_map
                .run(frontier, dir, &Lower { cells, unit }, None)?
                .to_list()),
            None => Ok(edge_map
                .add(frontier, &[dir], &self.counts, unit.wrapping_neg(), None)?
                .into_iter()
                .filter(|&(_, w)| Counts::trimmable(w))
                .map(|(v, _)| v)
                .collect()),
        }
    }
}

/// One removal along an edge: `count[dst] -= unit`, activating `dst` when this decrement made
/// it trimmable. A present vertex turns trimmable once (its counts only fall, and it is
/// flagged removed before its own edges are walked), so a round activates each vertex once.
struct Lower<'a> {
    cells: &'a [AtomicU64],
    unit: u64,
}

impl EdgeFunc for Lower<'_> {
    const CLAIMS: bool = true;

    #[inline]
    fn update_atomic(&self, src: u32, dst: u32, _: f64) -> bool {
        if src == dst {
            return false;
        }
        let before = self.cells[dst as usize].fetch_sub(self.unit, Ordering::Relaxed);
        Counts::trimmable(before.wrapping_sub(self.unit)) && !Counts::trimmable(before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_colours_in_reverse_and_marks_below_their_colour() {
        assert!(key(3, true) < key(3, false));
        assert!(key(5, false) < key(3, true));
        assert_eq!(colour_of(key(7, true)), 7);
        assert_eq!(
            colour_of(key(u64::from(u32::MAX), false)),
            u64::from(u32::MAX)
        );
        assert!(key(u64::from(u32::MAX), false) >= KEYED);
    }
}
