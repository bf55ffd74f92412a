//! SSSP with the distance array in remote memory: frontier Bellman-Ford whose relaxations are
//! CAS-min updates (read, compare, CAS until written or no longer smaller). The frontier carries
//! the distance each vertex was given, so relaxing its out-edges reads no remote state; a vertex
//! lowered twice in a round appears twice and keeps its smaller distance. A stale (larger)
//! distance only produces candidates that lose, so the fixpoint is the local kernel's.

use storage::dm::AttrKind;
use storage::{AttributeSpace, Direction, GraphStore};

use super::{push_round, read_back, update_buffer_len, RoundLists, STRATEGY};
use crate::context::RunContext;
use crate::error::ExecError;

/// Bytes per vertex of the local kernel's state (an `AtomicU64` distance).
pub const STATE_BYTES: u64 = 8;

/// Distances from `source` (< |V|), computed with the distances in `space`.
pub fn compute<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    space: &dyn AttributeSpace,
    source: u32,
) -> Result<Vec<f64>, ExecError> {
    let n = ctx.n();
    let dist = space.alloc_attr(n as u64, AttrKind::F64, f64::INFINITY.to_bits())?;
    dist.write_slice(source as u64, &[0f64.to_bits()])?;
    let buffer = update_buffer_len(space.local_budget(), ctx.pool.threads());
    // Parallel sorted lists: the frontier's vertices and the distance each was given.
    let mut verts = vec![source];
    let mut given = vec![0f64];
    let mut rounds = 0u64;
    while !verts.is_empty() {
        rounds += 1;
        if rounds > n as u64 + 1 {
            return Err(ExecError::Other(
                "sssp: a negative-weight cycle is reachable from the source".into(),
            ));
        }
        ctx.check()?;
        let start = ctx.begin();
        let (mut next, edges) = push_round(
            ctx,
            RoundLists {
                frontier: &verts,
                dir: Direction::Out,
                want_weights: true,
                buffer_len: buffer,
            },
            |v| {
                verts
                    .binary_search(&v)
                    .map(|k| given[k])
                    .unwrap_or(f64::INFINITY)
            },
            |&d, dst, w| {
                let c = d + w;
                (c < f64::INFINITY).then(|| (dst as u64, c.to_bits()))
            },
            |buf: &mut Vec<(u64, u64)>| {
                let changed = dist.cas_min_batch(buf)?;
                buf.clear();
                Ok(changed
                    .into_iter()
                    .map(|(v, d)| (v as u32, f64::from_bits(d)))
                    .collect::<Vec<(u32, f64)>>())
            },
        )?;
        ctx.finish(start, verts.len() as u64, edges, STRATEGY, None)?;
        // One entry per vertex, with the smallest distance it was given this round.
        next.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        next.dedup_by_key(|x| x.0);
        verts = next.iter().map(|x| x.0).collect();
        given = next.into_iter().map(|x| x.1).collect();
    }
    let out = read_back(&dist, f64::from_bits)?;
    dist.free()?;
    Ok(out)
}
