//! Output schemas, derived from the algorithm registry, and the Arrow batches results are built
//! into.

use std::cmp::Reverse;
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use planner::registry::ColumnType;
use planner::AlgoCall;
use storage::GraphStore;

use crate::error::ExecError;
use crate::result::{BatchIter, BATCH_ROWS};

/// The columns `call` produces, as the registry declares them.
pub fn output_schema(call: &AlgoCall) -> SchemaRef {
    let fields: Vec<Field> = call
        .spec
        .columns
        .iter()
        .map(|c| Field::new(c.name, arrow_type(c.ty), c.nullable))
        .collect();
    Arc::new(Schema::new(fields))
}

/// The Arrow type of a declared column type.
pub fn arrow_type(ty: ColumnType) -> DataType {
    match ty {
        // Internal ids while the run builds, orders and limits the rows; a string-keyed graph's
        // keys replace them last (`vertex_keys::with_keys`).
        ColumnType::UInt64 | ColumnType::VertexKey => DataType::UInt64,
        ColumnType::Int64 => DataType::Int64,
        ColumnType::UInt32 => DataType::UInt32,
        ColumnType::Float64 => DataType::Float64,
    }
}

/// Builds one row per vertex in key order (see [`key_order`]), at most [`BATCH_ROWS`] rows per
/// batch: the `vertex` column holds input ids, `values(vertices)` builds the other columns for
/// the rows of those internal ids, in that order ([`pick`] gathers a value array).
pub(crate) fn per_vertex_batches<S: GraphStore>(
    store: &S,
    schema: &SchemaRef,
    values: impl Fn(&[u32]) -> Vec<ArrayRef>,
) -> Result<Vec<RecordBatch>, ExecError> {
    per_vertex_rows(store, schema, values).collect()
}

/// The batches of [`per_vertex_batches`], each built only when pulled: a consumer that stops
/// early (LIMIT) or keeps a batch at a time (a bounded ORDER BY, a file) never holds every row.
pub(crate) fn per_vertex_rows<'a, S: GraphStore>(
    store: &'a S,
    schema: &SchemaRef,
    values: impl Fn(&[u32]) -> Vec<ArrayRef> + 'a,
) -> BatchIter<'a> {
    let schema = schema.clone();
    let mut order = key_order(store);
    let (mut vertices, mut ids) = (Vec::new(), Vec::new());
    Box::new(std::iter::from_fn(move || {
        if !order.next_batch(BATCH_ROWS, &mut vertices, &mut ids) {
            return None;
        }
        let mut cols: Vec<ArrayRef> = vec![Arc::new(UInt64Array::from(std::mem::take(&mut ids)))];
        cols.extend(values(&vertices));
        Some(RecordBatch::try_new(schema.clone(), cols).map_err(ExecError::from))
    }))
}

/// `values[v]` for each vertex `v` of `vertices`, in that order.
pub(crate) fn pick<T: Copy>(values: &[T], vertices: &[u32]) -> Vec<T> {
    vertices.iter().map(|&v| values[v as usize]).collect()
}

/// The vertices of `store` in ascending input id (key) order, merged from its key runs
/// ([`GraphStore::key_runs`]): result rows come in key order whatever the layout, so a result,
/// a file written from it and the rows a `LIMIT` keeps do not depend on how the graph was
/// imported.
pub fn key_order<S: GraphStore>(store: &S) -> KeyOrder<impl Fn(u32) -> u64 + '_> {
    KeyOrder::new(store.key_runs(), |v| store.input_id(v))
}

/// A merge of runs of vertices whose input ids (`id_of`) ascend within each run: one run (key
/// order) is a plain count; under `LAYOUT degree` (at most 33 runs) a heap of cursors; under
/// `LAYOUT locality` (a run per cluster, more than [`MERGED_RUNS_MAX`]) a heap of cursors for
/// the first [`MERGED_FIRST`] vertices, then the vertices sorted once by input id. A consumer
/// that takes only the first rows (LIMIT) then never pays for the sort's table of a vertex
/// id each; one that takes them all pays a dozen heap levels for those first vertices only.
pub struct KeyOrder<F> {
    id_of: F,
    /// Each run's next input id, next vertex and end, smallest input id on top.
    heap: BinaryHeap<Reverse<(u64, u32, u32)>>,
    /// Every vertex in key order and how many were given, when there are too many runs to
    /// merge.
    sorted: Option<(Vec<u32>, usize)>,
    /// Too many runs to merge them all: the runs, the vertices the heap gave so far, and how
    /// many it gives before the rest come from a sort.
    to_sort: Option<(Vec<Range<u32>>, usize, usize)>,
}

/// The most runs [`KeyOrder`] merges with a heap throughout; past that, it merges only the
/// first [`MERGED_FIRST`] vertices and sorts the rest, which costs a pass and four bytes a
/// vertex, where a heap of a run per cluster costs a dozen levels a vertex.
pub const MERGED_RUNS_MAX: usize = 64;

/// How many vertices [`KeyOrder`] merges with a heap over more than [`MERGED_RUNS_MAX`] runs
/// before it sorts the rest: two batches of rows.
pub const MERGED_FIRST: usize = 2 * BATCH_ROWS;

impl<F: Fn(u32) -> u64> KeyOrder<F> {
    pub fn new(runs: Vec<Range<u32>>, id_of: F) -> KeyOrder<F> {
        KeyOrder::merging_first(runs, id_of, MERGED_FIRST)
    }

    /// [`KeyOrder::new`] whose heap gives the first `merged_first` vertices of more than
    /// [`MERGED_RUNS_MAX`] runs (whole batches: the sort takes over between batches).
    fn merging_first(runs: Vec<Range<u32>>, id_of: F, merged_first: usize) -> KeyOrder<F> {
        let runs: Vec<Range<u32>> = runs.into_iter().filter(|r| !r.is_empty()).collect();
        let to_sort = (runs.len() > MERGED_RUNS_MAX).then(|| (runs.clone(), 0, merged_first));
        let heap = runs
            .into_iter()
            .map(|r| Reverse((id_of(r.start), r.start, r.end)))
            .collect();
        KeyOrder {
            id_of,
            heap,
            sorted: None,
            to_sort,
        }
    }

    /// Past the vertices the heap gives, sorts every vertex once and continues after those
    /// already given (the heap gave them in the same, ascending input id, order).
    fn sort_when_due(&mut self, now: bool) {
        let Some((runs, given, first)) = &self.to_sort else {
            return;
        };
        if !now && given < first {
            return;
        }
        self.sorted = Some((sorted_by_key(runs, &self.id_of), *given));
        self.heap = BinaryHeap::new();
        self.to_sort = None;
    }

    /// Replaces `vertices` and `ids` with the next (up to) `max` vertices in key order and
    /// their input ids; false once every vertex was given.
    pub fn next_batch(&mut self, max: usize, vertices: &mut Vec<u32>, ids: &mut Vec<u64>) -> bool {
        vertices.clear();
        ids.clear();
        self.sort_when_due(false);
        if let Some((sorted, given)) = &mut self.sorted {
            let stop = sorted.len().min(*given + max);
            vertices.extend_from_slice(&sorted[*given..stop]);
            ids.extend(vertices.iter().map(|&v| (self.id_of)(v)));
            *given = stop;
        } else if self.heap.len() == 1 {
            let Reverse((_, next, end)) = self.heap.pop().expect("one run");
            let stop = end.min(next.saturating_add(max as u32));
            vertices.extend(next..stop);
            ids.extend((next..stop).map(&self.id_of));
            if stop < end {
                self.heap.push(Reverse(((self.id_of)(stop), stop, end)));
            }
        } else {
            while vertices.len() < max {
                let Some((v, id)) = self.pop_merged() else {
                    break;
                };
                vertices.push(v);
                ids.push(id);
            }
        }
        if let Some((_, given, _)) = &mut self.to_sort {
            *given += vertices.len();
        }
        !vertices.is_empty()
    }

    /// The next vertex of a merge of several runs and its input id.
    fn pop_merged(&mut self) -> Option<(u32, u64)> {
        let mut top = self.heap.peek_mut()?;
        let Reverse((id, v, end)) = *top;
        if v + 1 < end {
            *top = Reverse(((self.id_of)(v + 1), v + 1, end));
        } else {
            PeekMut::pop(top);
        }
        Some((v, id))
    }

    /// Calls `visit` for every remaining vertex, in key order (one run is counted through
    /// without looking up any input id).
    pub fn for_each_vertex(mut self, mut visit: impl FnMut(u32)) {
        self.sort_when_due(true);
        if let Some((sorted, given)) = self.sorted {
            sorted[given..].iter().for_each(|&v| visit(v));
            return;
        }
        if self.heap.len() == 1 {
            let Reverse((_, next, end)) = self.heap.pop().expect("one run");
            (next..end).for_each(visit);
            return;
        }
        while let Some((v, _)) = self.pop_merged() {
            visit(v);
        }
    }
}

/// The vertices of `runs` in ascending input id. Ids that span at most twice the vertex count
/// (contiguous ones, as string keys' ranks always are, or an integer range with a few unused
/// ids) are placed straight at `id - smallest` in a table of the span, its holes then dropped:
/// at most 8 bytes a vertex. Sparser ids are sorted as (id, vertex) pairs, 12–16 bytes a vertex.
fn sorted_by_key(runs: &[Range<u32>], id_of: &impl Fn(u32) -> u64) -> Vec<u32> {
    let n: usize = runs.iter().map(|r| r.len()).sum();
    let vertices = || runs.iter().flat_map(|r| r.clone());
    let (lo, hi) = vertices()
        .map(id_of)
        .fold((u64::MAX, 0), |(lo, hi), id| (lo.min(id), hi.max(id)));
    if n == 0 {
        return Vec::new();
    }
    let span = hi - lo + 1;
    if span <= 2 * n as u64 {
        const HOLE: u32 = u32::MAX;
        let mut placed = vec![HOLE; span as usize];
        for v in vertices() {
            placed[(id_of(v) - lo) as usize] = v;
        }
        if span > n as u64 {
            placed.retain(|&v| v != HOLE);
            placed.shrink_to_fit();
        }
        return placed;
    }
    let mut pairs: Vec<(u64, u32)> = Vec::with_capacity(n);
    pairs.extend(vertices().map(|v| (id_of(v), v)));
    pairs.sort_unstable();
    pairs.into_iter().map(|(_, v)| v).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every vertex once, input ids ascending, whatever the batch size and the runs.
    #[test]
    fn runs_merge_into_key_order_across_batches() {
        // 40 runs (degree buckets) over 1000 vertices with scattered ascending ids.
        let mut ids = vec![0u64; 1000];
        let mut runs = Vec::new();
        let mut start = 0u32;
        for r in 0..40u32 {
            let end = if r == 39 { 1000 } else { start + (r * 7) % 45 };
            let mut run_ids: Vec<u64> = (start..end)
                .map(|v| u64::from(v) * 2_654_435_761 % 1_000_003)
                .collect();
            run_ids.sort_unstable();
            ids[start as usize..end as usize].copy_from_slice(&run_ids);
            runs.push(start..end);
            start = end;
        }
        let mut want: Vec<(u64, u32)> = ids.iter().copied().zip(0..).collect();
        want.sort_unstable();
        for max in [1, 7, 64, 5000] {
            let mut order = KeyOrder::new(runs.clone(), |v| ids[v as usize]);
            let (mut vs, mut got_ids, mut got) = (Vec::new(), Vec::new(), Vec::new());
            while order.next_batch(max, &mut vs, &mut got_ids) {
                assert!(vs.len() <= max);
                got.extend(got_ids.iter().copied().zip(vs.iter().copied()));
            }
            assert_eq!(got, want, "batches of {max}");
        }
        // One run is counted, not merged.
        let one_run = std::iter::once(0..10).collect();
        let mut order = KeyOrder::new(one_run, |v| u64::from(v) + 100);
        let (mut vs, mut got_ids) = (Vec::new(), Vec::new());
        assert!(order.next_batch(4, &mut vs, &mut got_ids));
        assert_eq!(
            (vs.clone(), got_ids.clone()),
            (vec![0, 1, 2, 3], vec![100, 101, 102, 103])
        );
        assert!(order.next_batch(100, &mut vs, &mut got_ids));
        assert_eq!(vs, (4..10).collect::<Vec<u32>>());
        assert!(!order.next_batch(100, &mut vs, &mut got_ids));
    }

    /// More runs than a heap merges throughout (a run per cluster) are merged for their first
    /// vertices and sorted for the rest: key order all the same, wherever the sort takes over,
    /// for contiguous ids and ids with holes (placed) and thinly spread ones (sorted).
    #[test]
    fn many_runs_come_in_key_order() {
        // Contiguous ids, ids with holes (placed), and ids spread thinly (sorted).
        for spread in [1u64, 2, 3] {
            let n = 5000u32;
            // Runs of 7 vertices whose ids are a permutation of 0..n, ascending in each run.
            let mut ids: Vec<u64> = (0..n as u64).map(|v| v * 7919 % n as u64).collect();
            let runs: Vec<Range<u32>> = (0..n).step_by(7).map(|s| s..(s + 7).min(n)).collect();
            for r in &runs {
                ids[r.start as usize..r.end as usize].sort_unstable();
            }
            ids.iter_mut().for_each(|id| *id = *id * spread + 11);
            assert!(runs.len() > MERGED_RUNS_MAX);
            let mut want: Vec<(u64, u32)> = ids.iter().copied().zip(0..).collect();
            want.sort_unstable();
            // The heap gives the first vertices (none, some, all), the sort the rest.
            for merged_first in [0, 1, 333, 1000, 4999, 5000, usize::MAX] {
                let mut order =
                    KeyOrder::merging_first(runs.clone(), |v| ids[v as usize], merged_first);
                let (mut vs, mut got_ids, mut got) = (Vec::new(), Vec::new(), Vec::new());
                while order.next_batch(333, &mut vs, &mut got_ids) {
                    got.extend(got_ids.iter().copied().zip(vs.iter().copied()));
                }
                assert_eq!(got, want, "ids every {spread}, {merged_first} merged");
                // Visiting the rest after a batch picks up where the batch ended.
                let mut order =
                    KeyOrder::merging_first(runs.clone(), |v| ids[v as usize], merged_first);
                let mut visited = Vec::new();
                if order.next_batch(333, &mut vs, &mut got_ids) {
                    visited.extend_from_slice(&vs);
                }
                order.for_each_vertex(|v| visited.push(v));
                let want_vertices: Vec<u32> = want.iter().map(|&(_, v)| v).collect();
                assert_eq!(
                    visited, want_vertices,
                    "ids every {spread}, {merged_first} merged"
                );
            }
            let mut visited = Vec::new();
            KeyOrder::new(runs, |v| ids[v as usize]).for_each_vertex(|v| visited.push(v));
            let want_vertices: Vec<u32> = want.iter().map(|&(_, v)| v).collect();
            assert_eq!(visited, want_vertices, "ids every {spread}");
        }
    }

    /// `for_each_vertex` visits what the batches give, in their order; one run looks up no id.
    #[test]
    fn for_each_vertex_follows_key_order() {
        let ids: Vec<u64> = vec![5, 9, 12, 1, 7, 3, 4];
        let runs = vec![0..3, 3..5, 5..7];
        let mut got = Vec::new();
        KeyOrder::new(runs, |v| ids[v as usize]).for_each_vertex(|v| got.push(v));
        assert_eq!(got, vec![3, 5, 6, 0, 4, 1, 2]);
        let looked_up = std::cell::Cell::new(0);
        let mut got = Vec::new();
        let one = KeyOrder::new(std::iter::once(0..5).collect(), |v| {
            looked_up.set(looked_up.get() + 1);
            u64::from(v)
        });
        let after_new = looked_up.get();
        one.for_each_vertex(|v| got.push(v));
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
        assert_eq!(
            looked_up.get(),
            after_new,
            "one run is counted without id lookups"
        );
    }
}
