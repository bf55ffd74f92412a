//! Weakly connected components (Graphalytics WCC): directions ignored; each vertex is labelled
//! with the smallest input id of its component (the references' labelling).
//!
//! Union-find with lock-free linking (Shiloach-Vishkin style "hook the higher root under the
//! lower" by compare-exchange), not label propagation, so the work does not grow with the
//! diameter. With a CSR view it is Afforest (Sutton et al., as in GAPBS): link along the first
//! two out-edges of every vertex, find the component most vertices already joined by sampling,
//! and finish only the vertices outside it (their remaining out-edges, and in-edges on directed
//! graphs). Without one, one pass over every out-list links every edge. PROFILE calls these
//! rounds `link sample` and `link`: they are union-find passes, not EdgeMap pulls.
//!
//! When the run keeps its state remote, union-find would chase parent pointers one dependent
//! remote read at a time; the labels are propagated instead ([`EdgeMap::relax_min`] over both
//! directions, every vertex starting with its own input id), which updates in batches and ends
//! with the same labelling after (component diameter + 1) rounds.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use arrow_schema::SchemaRef;
use rayon::prelude::*;
use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::edgemap::EdgeMap;
use crate::error::ExecError;
use crate::lists::each_list;
use crate::output::per_vertex_batches;
use crate::reference::{column, compare, Lists};
use crate::result::ResultTable;
use crate::rng::Xoshiro256;
use crate::subset::VertexSubset;
use crate::vertexmap::vertex_transform;

/// Out-edges per vertex linked before sampling (GAPBS's `neighbor_rounds`).
const NEIGHBOUR_ROUNDS: usize = 2;
/// Samples taken to find the largest intermediate component.
const SAMPLES: usize = 1024;

/// The component label (smallest input id of the component) of every vertex.
pub fn compute<S: GraphStore>(ctx: &RunContext<'_, S>) -> Result<Vec<u64>, ExecError> {
    let store = ctx.store;
    if ctx.placement().is_remote() {
        return propagate_labels(ctx);
    }
    let n = ctx.n();
    let comp: Vec<AtomicU32> = storage::huge::collect((0..n).map(AtomicU32::new));
    let directed = store.shape().directed;
    let out = store.csr(Direction::Out);
    let inn = if directed {
        store.csr(Direction::In)
    } else {
        out
    };
    match (out, inn) {
        (Some(out), Some(inn)) => {
            for r in 0..NEIGHBOUR_ROUNDS {
                let start = ctx.begin();
                ctx.pool.install(|| {
                    (0..n).into_par_iter().with_min_len(1024).for_each(|u| {
                        if let Some(&v) = out.neighbours(u).get(r) {
                            link(u, v, &comp);
                        }
                    })
                });
                compress(ctx, &comp);
                ctx.finish(start, n as u64, n as u64, "link sample", None)?;
            }
            let start = ctx.begin();
            let big = most_frequent(&comp);
            let edges = ctx.pool.install(|| {
                (0..n)
                    .into_par_iter()
                    .with_min_len(256)
                    .map(|u| {
                        if comp[u as usize].load(Ordering::Relaxed) == big {
                            return 0;
                        }
                        let rest = out.neighbours(u).get(NEIGHBOUR_ROUNDS..).unwrap_or(&[]);
                        for &v in rest {
                            link(u, v, &comp);
                        }
                        let mut edges = rest.len() as u64;
                        if directed {
                            for &v in inn.neighbours(u) {
                                link(u, v, &comp);
                            }
                            edges += inn.neighbours(u).len() as u64;
                        }
                        edges
                    })
                    .sum::<u64>()
            });
            compress(ctx, &comp);
            ctx.finish(start, n as u64, edges, "link", None)?;
        }
        _ => {
            let start = ctx.begin();
            let edges = each_list(ctx, Direction::Out, false, |u, ns, _| {
                for &v in ns {
                    link(u, v, &comp);
                }
            })?;
            compress(ctx, &comp);
            ctx.finish(start, n as u64, edges, "link", None)?;
        }
    }
    // Label each component with its smallest input id.
    let min_id: Vec<AtomicU64> = storage::huge::collect((0..n).map(|_| AtomicU64::new(u64::MAX)));
    ctx.pool.install(|| {
        (0..n).into_par_iter().with_min_len(1024).for_each(|v| {
            let root = comp[v as usize].load(Ordering::Relaxed) as usize;
            let id = store.input_id(v);
            // Read first: the giant component's root is hit by most vertices, and a contended
            // read-modify-write per vertex on one cache line costs more than the whole search.
            if id < min_id[root].load(Ordering::Relaxed) {
                min_id[root].fetch_min(id, Ordering::Relaxed);
            }
        });
        Ok((0..n)
            .into_par_iter()
            .with_min_len(1024)
            .map(|v| {
                min_id[comp[v as usize].load(Ordering::Relaxed) as usize].load(Ordering::Relaxed)
            })
            .collect())
    })
}

/// Min-label propagation: the remote-state kernel.
fn propagate_labels<S: GraphStore>(ctx: &RunContext<'_, S>) -> Result<Vec<u64>, ExecError> {
    let store = ctx.store;
    let n = ctx.n();
    let label = ctx.vertex_array(0u64)?;
    vertex_transform(ctx, &label, &label, |v, _| (store.input_id(v), 0.0))?;
    let dirs: &[Direction] = if store.shape().directed {
        &[Direction::Out, Direction::In]
    } else {
        &[Direction::Out]
    };
    let mut frontier = VertexSubset::all(n);
    let mut edge_map = EdgeMap::new(ctx);
    while !frontier.is_empty() {
        frontier = edge_map.relax_min(&frontier, dirs, &label, false, |l, _| Some(l), None)?;
    }
    label.into_vec()
}

/// Joins the trees of `u` and `v`: the higher root is hooked under the lower one by
/// compare-exchange, retried until both have the same root. Out-of-range ids are ignored.
#[inline]
fn link(u: u32, v: u32, comp: &[AtomicU32]) {
    if v as usize >= comp.len() {
        return;
    }
    let get = |x: u32| comp[x as usize].load(Ordering::Relaxed);
    let mut p1 = get(u);
    let mut p2 = get(v);
    while p1 != p2 {
        let (high, low) = if p1 > p2 { (p1, p2) } else { (p2, p1) };
        let p_high = get(high);
        if p_high == low
            || (p_high == high
                && comp[high as usize]
                    .compare_exchange(high, low, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok())
        {
            break;
        }
        p1 = get(get(high));
        p2 = get(low);
    }
}

/// Points every vertex straight at its root.
fn compress<S: GraphStore>(ctx: &RunContext<'_, S>, comp: &[AtomicU32]) {
    ctx.pool.install(|| {
        (0..comp.len())
            .into_par_iter()
            .with_min_len(1024)
            .for_each(|v| {
                let get = |x: u32| comp[x as usize].load(Ordering::Relaxed);
                loop {
                    let p = get(v as u32);
                    let gp = get(p);
                    if p == gp {
                        break;
                    }
                    comp[v].store(gp, Ordering::Relaxed);
                }
            })
    });
}

/// The most common label among a fixed-seed sample of vertices (Afforest's "largest
/// intermediate component", whose members can skip the finishing pass).
fn most_frequent(comp: &[AtomicU32]) -> u32 {
    if comp.is_empty() {
        return 0;
    }
    let mut rng = Xoshiro256::for_stream(0x5eed, 0);
    let mut sample: Vec<u32> = (0..SAMPLES)
        .map(|_| comp[rng.below(comp.len() as u64) as usize].load(Ordering::Relaxed))
        .collect();
    sample.sort_unstable();
    let mut best = (0usize, sample[0]);
    let mut i = 0;
    while i < sample.len() {
        let j = i + sample[i..].iter().take_while(|&&x| x == sample[i]).count();
        if j - i > best.0 {
            best = (j - i, sample[i]);
        }
        i = j;
    }
    best.1
}

/// Rows `(vertex, component)`.
pub fn batches<S: GraphStore>(
    store: &S,
    schema: &SchemaRef,
    label: &[u64],
) -> Result<Vec<RecordBatch>, ExecError> {
    per_vertex_batches(store, schema, |r| {
        vec![Arc::new(UInt64Array::from(label[r].to_vec())) as ArrayRef]
    })
}

/// Checks WCC labels against sequential min-label propagation over both directions.
pub fn verify<S: GraphStore>(store: &S, table: &ResultTable) -> Result<(), String> {
    let lists = Lists::read(store)?;
    let n = lists.n();
    let mut label: Vec<u64> = (0..n as u32).map(|v| store.input_id(v)).collect();
    loop {
        let mut changed = false;
        for u in 0..n {
            for &(v, _) in &lists.out[u] {
                let m = label[u].min(label[v as usize]);
                if label[u] != m || label[v as usize] != m {
                    label[u] = m;
                    label[v as usize] = m;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let want: Vec<Option<f64>> = label.into_iter().map(|l| Some(l as f64)).collect();
    compare(store, &column(table, "component")?, &want, |a, b| a == b)
}
