//! Community detection by label propagation (Graphalytics CDLP). L₀(v) = v's input id; each
//! of exactly `iterations` synchronous rounds gives every vertex the most frequent label among
//! its neighbours, ties going to the smallest label; a vertex without neighbours keeps its own.
//! On directed graphs the histogram takes the labels of all in-neighbours and then of all
//! out-neighbours, so a neighbour joined by arcs both ways counts twice. On undirected graphs
//! each neighbour is counted once (counting both stored directions would double every count
//! and change nothing).
//!
//! Each worker owns a slice of the next labels (no atomics): it gathers its vertices' neighbour
//! labels into a reused buffer, sorts, and takes the longest run.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use arrow_schema::SchemaRef;
use rayon::prelude::*;
use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::error::ExecError;
use crate::lists::{pass_name, range_lists};
use crate::output::per_vertex_batches;

/// Vertices per chunk of work.
const CHUNK: usize = 1024;

/// Labels (input ids) after `iterations` rounds.
pub fn compute<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    iterations: u32,
) -> Result<Vec<u64>, ExecError> {
    let store = ctx.store;
    let shape = store.shape();
    let n = shape.vertices as usize;
    let directed = shape.directed;
    let mut labels: Vec<u64> = ctx.pool.install(|| {
        (0..n as u32)
            .into_par_iter()
            .map(|v| store.input_id(v))
            .collect()
    });
    let mut next = labels.clone();
    let dirs: &[Direction] = if directed {
        &[Direction::In, Direction::Out]
    } else {
        &[Direction::Out]
    };
    let csr_out = store.csr(Direction::Out);
    let csr_in = if directed {
        store.csr(Direction::In)
    } else {
        csr_out
    };
    let edges = shape.arcs * dirs.len() as u64;
    for _ in 0..iterations {
        ctx.check()?;
        let start = ctx.begin();
        let cur = &labels;
        let strategy = match (csr_out, csr_in) {
            (Some(out_csr), Some(in_csr)) => {
                ctx.pool.install(|| {
                    next.par_chunks_mut(CHUNK)
                        .enumerate()
                        .try_for_each(|(ci, out)| {
                            ctx.check()?;
                            let mut buf = Vec::new();
                            for (i, slot) in out.iter_mut().enumerate() {
                                let v = (ci * CHUNK + i) as u32;
                                buf.clear();
                                if directed {
                                    buf.extend(
                                        in_csr.neighbours(v).iter().map(|&u| cur[u as usize]),
                                    );
                                }
                                buf.extend(out_csr.neighbours(v).iter().map(|&u| cur[u as usize]));
                                *slot = most_frequent(&mut buf, cur[v as usize]);
                            }
                            Ok::<(), ExecError>(())
                        })
                })?;
                "pull"
            }
            _ => {
                ctx.pool.install(|| {
                    next.par_chunks_mut(CHUNK)
                        .enumerate()
                        .try_for_each(|(ci, out)| {
                            ctx.check()?;
                            chunk_from_lists(ctx, dirs, cur, (ci * CHUNK) as u32, out)
                        })
                })?;
                pass_name(ctx.cfg.mode)
            }
        };
        std::mem::swap(&mut labels, &mut next);
        ctx.finish(start, n as u64, edges, strategy, Some(iterations))?;
    }
    Ok(labels)
}

/// The generic path for the vertices `first..first + out.len()`: gathers their neighbours'
/// labels per direction into one flat buffer (sized from the degrees), then picks per vertex.
fn chunk_from_lists<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    dirs: &[Direction],
    cur: &[u64],
    first: u32,
    out: &mut [u64],
) -> Result<(), ExecError> {
    let store = ctx.store;
    let len = out.len();
    let mut offsets = Vec::with_capacity(len + 1);
    let mut total = 0usize;
    for i in 0..len {
        offsets.push(total);
        for &d in dirs {
            total += store.degree(d, first + i as u32) as usize;
        }
    }
    offsets.push(total);
    let mut fill = offsets[..len].to_vec();
    let mut buf = vec![0u64; total];
    let range = first..first + len as u32;
    for &dir in dirs {
        range_lists(
            store,
            ctx.cfg.mode,
            dir,
            range.clone(),
            false,
            |v, ns, _| {
                let i = (v - first) as usize;
                let (Some(at), Some(&end)) = (fill.get(i).copied(), offsets.get(i + 1)) else {
                    return;
                };
                let take = ns.len().min(end - at);
                for (slot, &u) in buf[at..at + take].iter_mut().zip(ns) {
                    *slot = cur.get(u as usize).copied().unwrap_or(u64::MAX);
                }
                fill[i] = at + take;
            },
        )?;
    }
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = most_frequent(&mut buf[offsets[i]..fill[i]], cur[first as usize + i]);
    }
    Ok(())
}

/// The most frequent value of `labels` (smallest on ties), or `own` when there is none.
fn most_frequent(labels: &mut [u64], own: u64) -> u64 {
    if labels.is_empty() {
        return own;
    }
    labels.sort_unstable();
    let (mut best, mut best_count) = (labels[0], 0usize);
    let mut i = 0;
    while i < labels.len() {
        let x = labels[i];
        let mut j = i + 1;
        while j < labels.len() && labels[j] == x {
            j += 1;
        }
        if j - i > best_count {
            best = x;
            best_count = j - i;
        }
        i = j;
    }
    best
}

/// Rows `(vertex, label)`.
pub fn batches<S: GraphStore>(
    store: &S,
    schema: &SchemaRef,
    label: &[u64],
) -> Result<Vec<RecordBatch>, ExecError> {
    per_vertex_batches(store, schema, |r| {
        vec![Arc::new(UInt64Array::from(label[r].to_vec())) as ArrayRef]
    })
}

#[cfg(test)]
mod tests {
    use super::most_frequent;

    #[test]
    fn ties_go_to_the_smallest() {
        assert_eq!(most_frequent(&mut [5, 3, 5, 3, 9], 1), 3);
        assert_eq!(most_frequent(&mut [5, 3, 5], 1), 5);
        assert_eq!(most_frequent(&mut [], 7), 7);
    }
}
