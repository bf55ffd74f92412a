//! Louvain's levels after the first: the communities of a level as the vertices of a smaller
//! graph held in memory, local moving over it, and the move rule every level shares.
//!
//! A graph here is symmetric rows of `(neighbour, weight)`, ascending, a vertex's own entry
//! holding twice the weight inside it (every inner edge seen from both ends), so a vertex's
//! degree is the sum of its row and `in_c` of modularity is its own entry.

use rustc_hash::FxHashMap;

use super::active::Active;
use super::moves::{self, MoveState, Mover};
use super::CHUNK;
use crate::error::ExecError;
use crate::pool::Pool;

/// Dense community ids `0..k` numbered by first appearance in vertex order (so by smallest
/// member), and `k`.
pub(crate) fn renumber(community: &[u32]) -> (Vec<u32>, u32) {
    let mut id = vec![u32::MAX; community.len()];
    let mut next = 0u32;
    let out = community
        .iter()
        .map(|&c| {
            let slot = &mut id[c as usize];
            if *slot == u32::MAX {
                *slot = next;
                next += 1;
            }
            *slot
        })
        .collect();
    (out, next)
}

/// A graph of communities, built row by row.
pub(crate) struct Builder {
    rows: Vec<FxHashMap<u32, f64>>,
}

impl Builder {
    /// Adds the entries `(neighbour vertex, weight)` to `vertex`'s row.
    pub(crate) fn add_list(&mut self, vertex: u32, entries: impl Iterator<Item = (u32, f64)>) {
        let row = &mut self.rows[vertex as usize];
        for (u, w) in entries {
            *row.entry(u).or_default() += w;
        }
    }

    /// The graph, rows ascending.
    pub(crate) fn finish(self) -> Coarse {
        let rows = self
            .rows
            .into_iter()
            .map(|r| {
                let mut row: Vec<(u32, f64)> = r.into_iter().collect();
                row.sort_unstable_by_key(|e| e.0);
                row
            })
            .collect();
        Coarse { rows }
    }
}

/// A graph of communities in memory.
pub(crate) struct Coarse {
    rows: Vec<Vec<(u32, f64)>>,
}

impl Coarse {
    /// An empty graph of `count` vertices to add rows to.
    pub(crate) fn builder(count: u32) -> Builder {
        Builder {
            rows: vec![FxHashMap::default(); count as usize],
        }
    }

    pub(crate) fn len(&self) -> u32 {
        self.rows.len() as u32
    }

    /// Entries over all rows.
    pub(crate) fn entries(&self) -> u64 {
        self.rows.iter().map(|r| r.len() as u64).sum()
    }

    /// The row of vertex `a`: `(neighbour, weight)` ascending, its own entry included.
    pub(crate) fn row(&self, a: u32) -> &[(u32, f64)] {
        &self.rows[a as usize]
    }

    /// Per vertex, the sum of its row.
    pub(crate) fn degrees(&self) -> Vec<f64> {
        self.rows
            .iter()
            .map(|r| r.iter().map(|e| e.1).sum())
            .collect()
    }

    /// The modularity of every vertex its own community (the partition this graph aggregates).
    pub(crate) fn modularity(&self, m2: f64, resolution: f64) -> f64 {
        let mut q = 0.0;
        for (a, (row, k)) in self.rows.iter().zip(self.degrees()).enumerate() {
            let inside = row
                .binary_search_by_key(&(a as u32), |e| e.0)
                .map_or(0.0, |i| row[i].1);
            q += inside / m2 - resolution * (k / m2) * (k / m2);
        }
        q
    }

    /// The modularity of the partition `community` of this graph's vertices (ids below
    /// `len()`).
    pub(crate) fn modularity_of(&self, community: &[u32], m2: f64, resolution: f64) -> f64 {
        let mut inside = 0.0;
        let mut tot = vec![0.0; self.rows.len()];
        for (a, (row, k)) in self.rows.iter().zip(self.degrees()).enumerate() {
            let c = community[a];
            tot[c as usize] += k;
            inside += row
                .iter()
                .filter(|e| community[e.0 as usize] == c)
                .map(|e| e.1)
                .sum::<f64>();
        }
        inside / m2 - resolution * tot.iter().map(|t| (t / m2) * (t / m2)).sum::<f64>()
    }

    /// Sweeps of local moving in `order` (sequential in effect, chunks of it proposed in
    /// parallel: `moves::move_chunk`; after the first sweep only the vertices with a neighbour
    /// that moved: `Active`) from the partition `comm` (ids below `len()`), at most `sweeps`,
    /// until none moves: each vertex's community and the sweeps run. `check` is called between
    /// sweeps.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn local_moving(
        &self,
        pool: &Pool,
        order: &[u32],
        mut comm: Vec<u32>,
        m2: f64,
        resolution: f64,
        sweeps: u32,
        check: impl Fn() -> Result<(), ExecError>,
    ) -> Result<(Vec<u32>, u32), ExecError> {
        let k = self.degrees();
        let mut tot = vec![0.0; k.len()];
        for (&c, &k) in comm.iter().zip(&k) {
            tot[c as usize] += k;
        }
        let mut active = Active::all(self.len());
        let mut run = 0;
        while run < sweeps && active.any() {
            check()?;
            run += 1;
            let mut moves = 0u64;
            active.visit(order, CHUNK, |active, chunk| {
                let movers: Vec<Mover<'_>> = chunk
                    .iter()
                    .map(|&a| Mover {
                        vertex: a,
                        degree: k[a as usize],
                        row: &self.rows[a as usize],
                    })
                    .collect();
                let mut state = MoveState {
                    comm: &mut comm,
                    tot: &mut tot,
                    m2,
                    resolution,
                };
                let moved = moves::move_chunk(pool, &movers, &mut state);
                for &i in &moved {
                    let a = chunk[i as usize];
                    for &(x, _) in self.row(a) {
                        if x != a {
                            active.mark(x);
                        }
                    }
                }
                moves += moved.len() as u64;
                Ok::<(), ExecError>(())
            })?;
            if moves == 0 {
                break;
            }
        }
        Ok((comm, run))
    }

    /// The graph of the communities `node` (dense ids below `count`).
    pub(crate) fn aggregate(&self, node: &[u32], count: u32) -> Coarse {
        let mut b = Coarse::builder(count);
        for (a, row) in self.rows.iter().enumerate() {
            b.add_list(node[a], row.iter().map(|&(x, w)| (node[x as usize], w)));
        }
        b.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn communities_are_numbered_by_their_smallest_member() {
        assert_eq!(renumber(&[4, 4, 1, 2, 1]), (vec![0, 0, 1, 2, 1], 3));
    }

    #[test]
    fn two_triangles_joined_by_one_edge_are_two_communities() {
        let edges = [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)];
        let mut b = Coarse::builder(6);
        for (u, v) in edges {
            b.add_list(u, [(v, 1.0)].into_iter());
            b.add_list(v, [(u, 1.0)].into_iter());
        }
        let g = b.finish();
        let m2 = 14.0;
        let order: Vec<u32> = (0..6).collect();
        let pool = Pool::new(1).unwrap();
        let (comm, _) = g
            .local_moving(&pool, &order, order.clone(), m2, 1.0, 100, || Ok(()))
            .unwrap();
        let (node, count) = renumber(&comm);
        assert_eq!(node, vec![0, 0, 0, 1, 1, 1]);
        let q = g.aggregate(&node, count).modularity(m2, 1.0);
        // Two communities with 3 inner edges each and degree sums 7: 2 (6/14 - 1/4).
        assert!((q - 2.0 * (6.0 / 14.0 - 0.25)).abs() < 1e-12, "{q}");
    }
}
