//! `VertexMap`: apply a function to every active vertex, keeping those it returns true for;
//! and `vertex_transform`, a map from one vertex array into another, local or remote.

use planner::registry::Operator;
use rayon::prelude::*;
use storage::GraphStore;

use crate::bitmap::Bitmap;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::state::{StateValue, VertexArray};
use crate::subset::VertexSubset;

/// Runs `f` on every vertex of `subset` in parallel and returns the vertices it returned true
/// for, in the subset's own representation. `f` must be safe to run concurrently.
pub fn vertex_map<S: GraphStore, F>(
    ctx: &RunContext<'_, S>,
    subset: &VertexSubset,
    f: F,
) -> Result<VertexSubset, ExecError>
where
    F: Fn(u32) -> bool + Sync,
{
    ctx.record(Operator::VertexMap);

    ctx.check()?;
    let n = subset.universe();
    if subset.is_part() {
        // A member's part of a split frontier: every member filters its own part, and the
        // union counts the whole.
        let mine = subset.ones_in(ctx.split().owned())?;
        let kept: Vec<u32> = ctx
            .pool
            .install(|| mine.into_par_iter().filter(|&v| f(v)).collect());
        return ctx.split().union(kept);
    }
    let out = ctx
        .pool
        .install(|| match (subset.as_list(), subset.as_bitmap()) {
            (Some(list), _) => {
                VertexSubset::from_list(n, list.par_iter().copied().filter(|&v| f(v)).collect())
            }
            (None, Some(bits)) => {
                let words: Vec<u64> = bits
                    .words()
                    .par_iter()
                    .enumerate()
                    .map(|(wi, &w)| {
                        let mut keep = 0u64;
                        let mut rest = w;
                        while rest != 0 {
                            let b = rest.trailing_zeros();
                            rest &= rest - 1;
                            if f(wi as u32 * 64 + b) {
                                keep |= 1 << b;
                            }
                        }
                        keep
                    })
                    .collect();
                VertexSubset::from_bitmap(n, Bitmap::from_words(words))
            }
            (None, None) => VertexSubset::empty(n),
        });
    Ok(out)
}

/// Vertices per local transform chunk (fixed, so the returned sum is added in the same order
/// whatever the thread count).
pub(crate) const TRANSFORM_CHUNK: usize = 4096;

/// `out[v] = f(v, input[v]).0` for every vertex; returns the sum of the `.1` parts, added chunk
/// by chunk in vertex order. Local arrays are walked in place, remote ones range by range (one
/// read and one write per range of an update buffer).
pub fn vertex_transform<S, T, U, F>(
    ctx: &RunContext<'_, S>,
    input: &VertexArray<T>,
    out: &VertexArray<U>,
    f: F,
) -> Result<f64, ExecError>
where
    S: GraphStore,
    T: StateValue,
    U: StateValue,
    F: Fn(u32, T) -> (U, f64) + Sync,
{
    ctx.record(Operator::VertexMap);

    ctx.check()?;
    let n = input.len().min(out.len()) as usize;
    let parts: Vec<f64> = match (input.local(), out.local()) {
        (Some(i), Some(o)) => ctx.pool.install(|| {
            o[..n]
                .par_chunks(TRANSFORM_CHUNK)
                .zip(i[..n].par_chunks(TRANSFORM_CHUNK))
                .enumerate()
                .map(|(ci, (o, i))| {
                    let first = ci * TRANSFORM_CHUNK;
                    let mut sum = 0.0;
                    for (k, (o, i)) in o.iter().zip(i).enumerate() {
                        let (x, s) = f((first + k) as u32, T::load(i));
                        U::store(o, x);
                        sum += s;
                    }
                    sum
                })
                .collect()
        }),
        _ => {
            let split = ctx.split();
            split.settle()?;
            let owned = split.owned();
            let (first, end) = (owned.start as usize, (owned.end as usize).min(n));
            let step = ctx.placement().buffer_len(ctx.pool.threads());
            let ranges: Vec<(usize, usize)> = (first..end)
                .step_by(step)
                .map(|a| (a, (a + step).min(end)))
                .collect();
            ctx.pool.install(|| {
                ranges
                    .par_iter()
                    .map(|&(a, b)| {
                        ctx.check()?;
                        let mut vals = vec![T::from_word(0); b - a];
                        input.read_range(a as u32, &mut vals)?;
                        let mut sum = 0.0;
                        let xs: Vec<U> = vals
                            .iter()
                            .enumerate()
                            .map(|(k, &v)| {
                                let (x, s) = f((a + k) as u32, v);
                                sum += s;
                                x
                            })
                            .collect();
                        out.write_range(a as u32, &xs)?;
                        Ok(sum)
                    })
                    .collect::<Result<Vec<f64>, ExecError>>()
            })?
        }
    };
    ctx.split().sum_f64(parts.iter().sum())
}

/// `f(v)` for every vertex, into a new local array: result columns that are not state (a
/// kernel's state lives in vertex arrays).
pub fn vertex_values<S, T, F>(ctx: &RunContext<'_, S>, f: F) -> Result<Vec<T>, ExecError>
where
    S: GraphStore,
    T: Send,
    F: Fn(u32) -> T + Sync,
{
    ctx.record(Operator::VertexMap);
    ctx.check()?;
    Ok(ctx.pool.install(|| {
        (0..ctx.n())
            .into_par_iter()
            .with_min_len(4096)
            .map(&f)
            .collect()
    }))
}

/// `per_range(first, values)` over consecutive ranges of `array`, in vertex order: local arrays
/// are loaded in place, remote ones read range by range (one read per range).
fn scan_ranges<S, T, R, F>(
    ctx: &RunContext<'_, S>,
    array: &VertexArray<T>,
    per_range: F,
) -> Result<Vec<R>, ExecError>
where
    S: GraphStore,
    T: StateValue,
    R: Send,
    F: Fn(u32, &[T]) -> R + Sync,
{
    ctx.record(Operator::VertexMap);
    ctx.check()?;
    let split = ctx.split();
    split.settle()?;
    let owned = split.owned();
    let n = array.len() as usize;
    let (first, end) = (owned.start as usize, (owned.end as usize).min(n));
    let step = match array.local() {
        Some(_) => TRANSFORM_CHUNK,
        None => ctx.placement().buffer_len(ctx.pool.threads()),
    };
    let starts: Vec<usize> = (first..end).step_by(step).collect();
    ctx.pool.install(|| {
        starts
            .par_iter()
            .map(|&a| {
                let b = (a + step).min(end);
                let mut vals = vec![T::from_word(0); b - a];
                array.read_range(a as u32, &mut vals)?;
                Ok(per_range(a as u32, &vals))
            })
            .collect()
    })
}

/// The vertices whose value in `array` satisfies `keep`, ascending: a frontier selected from
/// state, wherever the state lives.
pub fn vertex_select<S, T, F>(
    ctx: &RunContext<'_, S>,
    array: &VertexArray<T>,
    keep: F,
) -> Result<VertexSubset, ExecError>
where
    S: GraphStore,
    T: StateValue,
    F: Fn(u32, T) -> bool + Sync,
{
    let parts = scan_ranges(ctx, array, |first, vals| {
        (first..)
            .zip(vals)
            .filter(|&(v, &x)| keep(v, x))
            .map(|(v, _)| v)
            .collect::<Vec<u32>>()
    })?;
    ctx.split().union(parts.concat())
}

/// The smallest `key(value)` over `array` (values whose key is `None` skipped), or `None`.
pub fn vertex_min<S, T, F>(
    ctx: &RunContext<'_, S>,
    array: &VertexArray<T>,
    key: F,
) -> Result<Option<u64>, ExecError>
where
    S: GraphStore,
    T: StateValue,
    F: Fn(T) -> Option<u64> + Sync,
{
    let parts = scan_ranges(ctx, array, |_, vals| {
        vals.iter().filter_map(|&x| key(x)).min()
    })?;
    ctx.split().min_u64(parts.into_iter().flatten().min())
}

/// `Σ f(v, a[v], b[v])` over every vertex, added range by range in vertex order (so the sum does
/// not depend on the thread count): e.g. the distance between two iterations' values.
pub fn vertex_sum2<S, T, F>(
    ctx: &RunContext<'_, S>,
    a: &VertexArray<T>,
    b: &VertexArray<T>,
    f: F,
) -> Result<f64, ExecError>
where
    S: GraphStore,
    T: StateValue,
    F: Fn(u32, T, T) -> f64 + Sync,
{
    let parts = scan_ranges(ctx, a, |first, xs| {
        let mut ys = vec![T::from_word(0); xs.len()];
        b.read_range(first, &mut ys)?;
        Ok::<f64, ExecError>(
            (first..)
                .zip(xs.iter().zip(&ys))
                .map(|(v, (&x, &y))| f(v, x, y))
                .sum(),
        )
    })?;
    ctx.split()
        .sum_f64(parts.into_iter().sum::<Result<f64, ExecError>>()?)
}

/// `out[v] = f(v, a[v], b[v]).0` for every vertex; returns the sum of the `.1` parts, added
/// range by range in vertex order. `out` may be `a` or `b`: each range is read before it is
/// written.
pub fn vertex_transform2<S, T, F>(
    ctx: &RunContext<'_, S>,
    a: &VertexArray<T>,
    b: &VertexArray<T>,
    out: &VertexArray<T>,
    f: F,
) -> Result<f64, ExecError>
where
    S: GraphStore,
    T: StateValue,
    F: Fn(u32, T, T) -> (T, f64) + Sync,
{
    let parts = scan_ranges(ctx, a, |first, xs| {
        let mut ys = vec![T::from_word(0); xs.len()];
        b.read_range(first, &mut ys)?;
        let mut sum = 0.0;
        let values: Vec<T> = (first..)
            .zip(xs.iter().zip(&ys))
            .map(|(v, (&x, &y))| {
                let (z, s) = f(v, x, y);
                sum += s;
                z
            })
            .collect();
        out.write_range(first, &values)?;
        Ok::<f64, ExecError>(sum)
    })?;
    ctx.split()
        .sum_f64(parts.into_iter().sum::<Result<f64, ExecError>>()?)
}
