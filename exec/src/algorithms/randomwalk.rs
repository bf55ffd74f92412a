//! Random walks (CAVE's parallel random walk): `walks` walkers each take up to `length` steps
//! along uniformly chosen out-edges. Step 0 is the start (FROM, or a vertex drawn uniformly
//! with the seed); a walk ends early at a vertex without out-edges.
//!
//! Reproducibility: walk w draws from its own xoshiro256** stream derived from (seed, w) only,
//! one draw per start and per step, so the same SEED gives the same walks whatever the thread
//! count, chunking or fetch order. Each iteration advances every live walk by one step; a chunk
//! of walks fetches the lists of the distinct vertices its walkers stand on with one list fetch
//! (CAVE Algorithm 5's frontier of walkers).

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt32Array, UInt64Array};
use arrow_schema::SchemaRef;
use planner::Mode;
use rayon::prelude::*;
use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::error::ExecError;
use crate::lists::fetch;
use crate::result::BATCH_ROWS;
use crate::rng::Xoshiro256;

/// Walks per chunk of work.
const CHUNK: usize = 4096;
/// The most rows (walks × (length + 1)) a run may produce; more is refused, not attempted.
pub const MAX_ROWS: u64 = 1 << 31;

/// The visited vertices of every walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walks {
    /// Slots per walk: `length + 1`.
    pub slots: usize,
    /// `slots` internal ids per walk; only the first `lengths[w]` are meaningful.
    pub path: Vec<u32>,
    /// Vertices visited by each walk (at least 1).
    pub lengths: Vec<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Walker {
    at: u32,
    rng: Xoshiro256,
    alive: bool,
}

/// Runs the walks.
pub fn compute<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    start: Option<u32>,
    walks: u64,
    length: u32,
    seed: u64,
) -> Result<Walks, ExecError> {
    let n = ctx.n();
    let slots = length as usize + 1;
    let empty = Walks {
        slots,
        path: Vec::new(),
        lengths: Vec::new(),
    };
    let no_start = match start {
        Some(s) => s >= n,
        None => n == 0,
    };
    if walks == 0 || no_start {
        return Ok(empty);
    }
    let rows = walks.saturating_mul(slots as u64);
    if rows > MAX_ROWS {
        return Err(ExecError::Other(format!(
            "randomwalk: {walks} walks of length {length} would produce {rows} rows; at most {MAX_ROWS} are supported"
        )));
    }
    let walks = walks as usize;
    let mut path = vec![u32::MAX; walks * slots];
    let mut lengths = vec![1u32; walks];
    let mut walkers: Vec<Walker> = ctx.pool.install(|| {
        (0..walks as u64)
            .into_par_iter()
            .map(|w| {
                let mut rng = Xoshiro256::for_stream(seed, w);
                let at = start.unwrap_or_else(|| rng.below(n as u64) as u32);
                Walker {
                    at,
                    rng,
                    alive: length > 0,
                }
            })
            .collect()
    });
    for (w, walker) in walkers.iter().enumerate() {
        path[w * slots] = walker.at;
    }
    let strategy = if ctx.cfg.mode == Mode::Block {
        "block"
    } else {
        "push"
    };
    for step in 1..slots {
        ctx.check()?;
        let begin = ctx.begin();
        let active = walkers.iter().filter(|w| w.alive).count() as u64;
        if active == 0 {
            break;
        }
        let moves: u64 = ctx.pool.install(|| {
            walkers
                .par_chunks_mut(CHUNK)
                .zip(path.par_chunks_mut(CHUNK * slots))
                .zip(lengths.par_chunks_mut(CHUNK))
                .map(|((ws, ps), ls)| {
                    ctx.check()?;
                    let mut moves = 0u64;
                    // The distinct vertices the chunk's walkers stand on, each list
                    // fetched once for all its walkers.
                    let mut here: Vec<(u32, u32)> = ws
                        .iter()
                        .enumerate()
                        .filter(|(_, w)| w.alive)
                        .map(|(i, w)| (w.at, i as u32))
                        .collect();
                    here.sort_unstable();
                    let mut vertices: Vec<u32> = here.iter().map(|h| h.0).collect();
                    vertices.dedup();
                    fetch(ctx, Direction::Out, &vertices, false, |v, ns, _| {
                        let from = here.partition_point(|h| h.0 < v);
                        for &(_, i) in here[from..].iter().take_while(|h| h.0 == v) {
                            let i = i as usize;
                            moves += advance(&mut ws[i], &mut ps[i * slots + step], &mut ls[i], ns);
                        }
                    })?;
                    Ok::<u64, ExecError>(moves)
                })
                .try_reduce(|| 0, |a, b| Ok(a + b))
        })?;
        ctx.finish(begin, active, moves, strategy, Some(length))?;
    }
    Ok(Walks {
        slots,
        path,
        lengths,
    })
}

/// Moves `walker` to a uniformly chosen vertex of `ns` (recording it in `slot` and counting it
/// in `len`), or ends the walk when `ns` is empty. Returns the number of moves made (0 or 1).
#[inline]
fn advance(walker: &mut Walker, slot: &mut u32, len: &mut u32, ns: &[u32]) -> u64 {
    if ns.is_empty() {
        walker.alive = false;
        return 0;
    }
    let next = ns[walker.rng.below(ns.len() as u64) as usize];
    walker.at = next;
    *slot = next;
    *len += 1;
    1
}

/// Rows `(walk, step, vertex)`, by walk then step.
pub fn batches<S: GraphStore>(
    store: &S,
    schema: &SchemaRef,
    walks: &Walks,
) -> Result<Vec<RecordBatch>, ExecError> {
    let mut batches = Vec::new();
    let (mut walk, mut step, mut vertex) = (Vec::new(), Vec::new(), Vec::new());
    let mut flush = |walk: &mut Vec<u64>, step: &mut Vec<u32>, vertex: &mut Vec<u64>| {
        let cols: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from(std::mem::take(walk))),
            Arc::new(UInt32Array::from(std::mem::take(step))),
            Arc::new(UInt64Array::from(std::mem::take(vertex))),
        ];
        RecordBatch::try_new(schema.clone(), cols).map(|b| batches.push(b))
    };
    for (w, &len) in walks.lengths.iter().enumerate() {
        for s in 0..len as usize {
            walk.push(w as u64);
            step.push(s as u32);
            vertex.push(store.input_id(walks.path[w * walks.slots + s]));
            if walk.len() == BATCH_ROWS {
                flush(&mut walk, &mut step, &mut vertex)?;
            }
        }
    }
    if !walk.is_empty() {
        flush(&mut walk, &mut step, &mut vertex)?;
    }
    Ok(batches)
}
