//! BFS and shortest paths out of core on a clustered graph (`LAYOUT locality`): min-updates
//! that spread through the blocks they read, taken in buckets of value.
//!
//! A spreading round ([`EdgeMap::relax_min_within`]) carries every improvement on through the
//! blocks it is reading, so it crosses a cluster of neighbours where a level crosses one vertex.
//! Unchecked, it also runs ahead along whichever paths it meets first and sets values that
//! later rounds must lower, reading those blocks again. So the vertices waiting to be relaxed
//! are taken a bucket at a time, smallest values first, and a round carries on only within the
//! current bucket, as delta-stepping does with single vertices: the wave keeps to value order
//! and a block is read about once per bucket its values span. Every improved vertex is either
//! carried on at once or waits for a later round, so the result is exact whatever the order.
//!
//! The bucket width is what a cluster spans: a block holds about `k = n / blocks` vertices, a
//! cluster of `k` vertices of a planar-like graph (a road network, a mesh) is about `2·√k` hops
//! across, and a hop weighs the mean edge weight.

use storage::{Direction, GraphStore};

use crate::edgemap::EdgeMap;
use crate::error::ExecError;
use crate::state::{StateValue, VertexArray};
use crate::subset::VertexSubset;

/// Hops a cluster spans: `2·√k` for `k` vertices a block (at least 1).
pub fn cluster_hops<S: GraphStore>(store: &S, dir: Direction) -> f64 {
    let n = store.shape().vertices;
    if n == 0 {
        return 1.0;
    }
    let blocks = store
        .edge_block(dir, n - 1)
        .abs_diff(store.edge_block(dir, 0))
        + 1;
    let per_block = f64::from(n) / blocks as f64;
    (2.0 * per_block.sqrt()).max(1.0)
}

/// Relaxes `state` along `dir` from `source` (its value already set) until nothing improves:
/// `state[v] = min(state[v], relax(state[u], w))`, in buckets `bucket(value)`.
pub fn spread_min<S, T, R, B>(
    edge_map: &mut EdgeMap<'_, '_, S>,
    state: &VertexArray<T>,
    source: u32,
    dir: Direction,
    weighted: bool,
    relax: R,
    bucket: B,
) -> Result<(), ExecError>
where
    S: GraphStore,
    T: StateValue,
    R: Fn(T, f64) -> Option<T> + Sync,
    B: Fn(T) -> u64 + Sync,
{
    let cells = state
        .local()
        .ok_or_else(|| ExecError::Other("internal: spreading over remote state".into()))?;
    let n = cells.len() as u32;
    let bucket_of = |v: u32| bucket(T::load(&cells[v as usize]));
    let mut pending = vec![source];
    while !pending.is_empty() {
        pending.sort_unstable();
        pending.dedup();
        let lowest = pending.iter().map(|&v| bucket_of(v)).min().unwrap_or(0);
        let (mut current, later): (Vec<u32>, Vec<u32>) =
            pending.iter().partition(|&&v| bucket_of(v) <= lowest);
        pending = later;
        let within = |x: T| bucket(x) <= lowest;
        while !current.is_empty() {
            let next = edge_map.relax_min_within(
                &VertexSubset::from_list(n, std::mem::take(&mut current)),
                dir,
                state,
                weighted,
                &relax,
                &within,
            )?;
            for v in next.to_list() {
                if bucket_of(v) <= lowest {
                    current.push(v);
                } else {
                    pending.push(v);
                }
            }
        }
    }
    Ok(())
}
