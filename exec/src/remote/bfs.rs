//! BFS with the depth array in remote memory: each level claims unvisited destinations with one
//! CAS per distinct destination (`UNREACHED` → level, no read first), so exactly one claim wins
//! per vertex across threads, and the claimed vertices are the next frontier. The compute node
//! holds the frontier list, the update buffers and a bitmap of the vertices it has already sent
//! a claim for (|V|/8 bytes, 1/32 of the depths): without it every edge leaving the frontier
//! cost a remote CAS (0.87 per edge examined at R-MAT scale 16), with it every vertex costs one.
//! The remote claim stays exclusive, as several compute nodes would need.

use storage::dm::AttrKind;
use storage::{AttributeSpace, Direction, GraphStore};

use super::{push_round, read_back, update_buffer_len, RoundLists, STRATEGY};
use crate::algorithms::bfs::UNREACHED;
use crate::bitmap::AtomicBitmap;
use crate::context::RunContext;
use crate::error::ExecError;

/// Bytes per vertex of the local kernel's state (an `AtomicU32` depth): what decides placement.
pub const STATE_BYTES: u64 = 4;

/// Depths from `source` (< |V|), computed with the depths in `space`.
pub fn compute<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    space: &dyn AttributeSpace,
    source: u32,
) -> Result<Vec<u32>, ExecError> {
    let n = ctx.n();
    let depth = space.alloc_attr(n as u64, AttrKind::U32, UNREACHED as u64)?;
    depth.write_slice(source as u64, &[0])?;
    let buffer = update_buffer_len(space.local_budget(), ctx.pool.threads());
    let sent = AtomicBitmap::new(n);
    sent.set(source);
    let mut frontier = vec![source];
    let mut level = 1u64;
    while !frontier.is_empty() {
        ctx.check()?;
        let start = ctx.begin();
        let (mut next, edges) = push_round(
            ctx,
            RoundLists {
                frontier: &frontier,
                dir: Direction::Out,
                want_weights: false,
                buffer_len: buffer,
            },
            |_| (),
            |_, dst, _| sent.set(dst).then_some(dst as u64),
            |buf: &mut Vec<u64>| {
                let claimed = depth.claim_batch(buf, UNREACHED as u64, level)?;
                buf.clear();
                Ok(claimed.into_iter().map(|v| v as u32).collect::<Vec<u32>>())
            },
        )?;
        ctx.finish(start, frontier.len() as u64, edges, STRATEGY, None)?;
        // Claims are exclusive, so `next` has no duplicates; sorted, its lists fetch in order.
        next.sort_unstable();
        frontier = next;
        level += 1;
    }
    let out = read_back(&depth, |w| w as u32)?;
    depth.free()?;
    Ok(out)
}
