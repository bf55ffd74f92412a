//! What closeness and harmonic centrality share: hop distances from a sample of sources, one
//! breadth-first search per source through [`EdgeMap::claim`], each handed to the caller to
//! accumulate into its own vertex arrays (local or remote alike).
//!
//! `SAMPLES k SEED s` picks k distinct sources uniformly with the seed, by key rank so that the
//! sample does not depend on the layout (all vertices when k >= |V|, which makes the result
//! exact); the estimates scale by |V|/k.

use planner::registry::ParamSpec;
use storage::{Direction, GraphStore};

use crate::context::RunContext;
use crate::edgemap::EdgeMap;
use crate::error::ExecError;
use crate::output::key_order;
use crate::rng::Xoshiro256;
use crate::state::VertexArray;
use crate::subset::VertexSubset;
use crate::vertexmap::vertex_transform;

/// The distance of a vertex the search has not reached.
pub const UNREACHED: f64 = f64::INFINITY;

/// The `samples` and `seed` parameters, as both centralities declare them.
pub const PARAMS: [ParamSpec; 2] = [
    ParamSpec::int(
        "samples",
        1,
        u32::MAX as u64,
        64,
        "sources searched from; exact when >= |V|",
    ),
    ParamSpec::int("seed", 0, u64::MAX, 0, "random seed of the sample"),
];

/// The sources of a run as internal ids, ascending: the vertices at the key ranks
/// [`sample_ranks`] draws, so the sample is the same whatever the graph's layout.
pub fn sample_sources<S: GraphStore>(store: &S, samples: u64, seed: u64) -> Vec<u32> {
    let ranks = sample_ranks(store.shape().vertices, samples, seed);
    let mut wanted = ranks.iter().copied().peekable();
    let mut out = Vec::with_capacity(ranks.len());
    let mut rank = 0u32;
    key_order(store).for_each_vertex(|v| {
        if wanted.next_if_eq(&rank).is_some() {
            out.push(v);
        }
        rank += 1;
    });
    out.sort_unstable();
    out
}

/// `samples` distinct ranks of `0..n` drawn with `seed`, ascending, or all of them when
/// `samples >= n`.
pub fn sample_ranks(n: u32, samples: u64, seed: u64) -> Vec<u32> {
    if samples >= u64::from(n) {
        return (0..n).collect();
    }
    // Partial Fisher-Yates over 0..n, the swaps kept in a map: O(samples) time and memory.
    let mut rng = Xoshiro256::new(seed);
    let mut swapped = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(samples as usize);
    for i in 0..samples as u32 {
        let j = i + rng.below(u64::from(n - i)) as u32;
        let at_j = *swapped.get(&j).unwrap_or(&j);
        let at_i = *swapped.get(&i).unwrap_or(&i);
        swapped.insert(j, at_i);
        out.push(at_j);
    }
    out.sort_unstable();
    out
}

/// The factor that scales sums over the sample to sums over every source.
pub fn scale(n: u32, sources: usize) -> f64 {
    if sources == 0 {
        0.0
    } else {
        f64::from(n) / sources as f64
    }
}

/// For every source in turn, the hop distance of every vertex from it along out-edges
/// ([`UNREACHED`] when none), handed to `each` while the next search waits.
pub fn from_each_source<S: GraphStore>(
    ctx: &RunContext<'_, S>,
    sources: &[u32],
    mut each: impl FnMut(u32, &VertexArray<f64>) -> Result<(), ExecError>,
) -> Result<(), ExecError> {
    let n = ctx.n();
    let depth = ctx.vertex_array(UNREACHED)?;
    for (k, &s) in sources.iter().enumerate() {
        // A new EdgeMap per search: remote claims remember what they sent, for one search.
        let mut edge_map = EdgeMap::new(ctx);
        if k > 0 {
            vertex_transform(ctx, &depth, &depth, |_, _| (UNREACHED, 0.0))?;
        }
        depth.set(s, 0.0)?;
        let mut frontier = VertexSubset::single(n, s);
        let mut level = 1.0;
        while !frontier.is_empty() {
            frontier = edge_map.claim(&frontier, Direction::Out, &depth, UNREACHED, level, None)?;
            level += 1.0;
        }
        each(s, &depth)?;
    }
    depth.free()
}

/// Hop distances from `s` along out-edges, sequentially (the verifiers' reference).
pub fn bfs_reference(out: &[Vec<(u32, f64)>], s: usize) -> Vec<Option<u64>> {
    let mut d = vec![None; out.len()];
    d[s] = Some(0);
    let mut queue = std::collections::VecDeque::from([s]);
    while let Some(u) = queue.pop_front() {
        for &(v, _) in &out[u] {
            if d[v as usize].is_none() {
                d[v as usize] = d[u].map(|x| x + 1);
                queue.push_back(v as usize);
            }
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_distinct_sorted_and_all_when_enough() {
        let s = sample_ranks(100, 10, 7);
        assert_eq!(s.len(), 10);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert!(s.iter().all(|&v| v < 100));
        assert_eq!(s, sample_ranks(100, 10, 7));
        assert_ne!(s, sample_ranks(100, 10, 8));
        assert_eq!(sample_ranks(5, 5, 1), vec![0, 1, 2, 3, 4]);
        assert_eq!(sample_ranks(5, 64, 1).len(), 5);
    }
}
