//! `VertexMap`: apply a function to every active vertex, keeping those it returns true for.

use rayon::prelude::*;
use storage::GraphStore;

use crate::bitmap::Bitmap;
use crate::context::RunContext;
use crate::error::ExecError;
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
    ctx.check()?;
    let n = subset.universe();
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
