//! Louvain's levels after the first: the communities of a level as the vertices of a smaller
//! graph held in memory, local moving over it, and the move rule every level shares.
//!
//! A graph here is symmetric rows of `(neighbour, weight)`, ascending, a vertex's own entry
//! holding twice the weight inside it (every inner edge seen from both ends), so a vertex's
//! degree is the sum of its row and `in_c` of modularity is its own entry.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::active::Active;
use super::moves::{self, MoveState, Mover, Workspace};
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

/// One worker's sums of a row being aggregated: the weight to each neighbour node (dense,
/// zero outside a row), whether it is listed, and the nodes listed.
pub(crate) struct RowSum {
    weight: Vec<f64>,
    listed: Vec<bool>,
    touched: Vec<u32>,
}

impl RowSum {
    fn new(count: u32) -> RowSum {
        RowSum {
            weight: vec![0.0; count as usize],
            listed: vec![false; count as usize],
            touched: Vec::new(),
        }
    }

    /// Adds `w` to the entry of node `b` in the row being made.
    #[inline]
    pub(crate) fn add(&mut self, b: u32, w: f64) {
        let b = b as usize;
        if !self.listed[b] {
            self.listed[b] = true;
            self.touched.push(b as u32);
        }
        self.weight[b] += w;
    }

    /// The row made, ascending; clears the sums for the next.
    fn take(&mut self) -> Vec<(u32, f64)> {
        self.touched.sort_unstable();
        let row = self
            .touched
            .iter()
            .map(|&b| (b, self.weight[b as usize]))
            .collect();
        for &b in &self.touched {
            self.weight[b as usize] = 0.0;
            self.listed[b as usize] = false;
        }
        self.touched.clear();
        row
    }
}

/// The graph of the groups `node` (dense ids below `count`) of the vertices `0..node.len()`,
/// rows made in parallel over ranges of nodes: `visit(v, sums)` adds vertex `v`'s entries
/// `(node of the neighbour, weight)` to `sums` in its list's order, `cost(v)` is about how many
/// it adds. Each node's row adds its members' entries in vertex order, so every weight is the
/// sum [`Builder`] makes from the vertices one after another.
pub(crate) fn aggregate_by_node(
    pool: &Pool,
    node: &[u32],
    count: u32,
    cost: impl Fn(u32) -> u64,
    visit: impl Fn(u32, &mut RowSum) + Sync,
) -> Coarse {
    // The members of each node, ascending: counting sort of the vertices by node.
    let mut first = vec![0u32; count as usize + 1];
    let mut work = vec![0u64; count as usize];
    for (v, &a) in node.iter().enumerate() {
        first[a as usize + 1] += 1;
        work[a as usize] += cost(v as u32) + 1;
    }
    for a in 0..count as usize {
        first[a + 1] += first[a];
    }
    let mut members = vec![0u32; node.len()];
    let mut at = first.clone();
    for (v, &a) in node.iter().enumerate() {
        members[at[a as usize] as usize] = v as u32;
        at[a as usize] += 1;
    }
    drop(at);
    // Ranges of nodes of about equal work, several per worker so that they even out.
    let total: u64 = work.iter().sum();
    let share = total / (pool.threads() as u64 * 8) + 1;
    let mut ranges = Vec::new();
    let (mut start, mut sum) = (0u32, 0u64);
    for (a, &w) in work.iter().enumerate() {
        sum += w;
        if sum >= share {
            ranges.push(start..a as u32 + 1);
            start = a as u32 + 1;
            sum = 0;
        }
    }
    if start < count {
        ranges.push(start..count);
    }
    drop(work);
    let parts: Vec<Vec<Vec<(u32, f64)>>> = pool.install(|| {
        ranges
            .par_iter()
            .map(|r| {
                let mut sums = RowSum::new(count);
                r.clone()
                    .map(|a| {
                        let (from, to) = (first[a as usize], first[a as usize + 1]);
                        for &v in &members[from as usize..to as usize] {
                            visit(v, &mut sums);
                        }
                        sums.take()
                    })
                    .collect()
            })
            .collect()
    });
    Coarse {
        rows: parts.into_iter().flatten().collect(),
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
        let mut ws = Workspace::new();
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
                let moved = moves::move_chunk(pool, &movers, &mut state, &mut ws);
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

    /// The graph of the communities `node` (dense ids below `count`), rows made in parallel.
    pub(crate) fn aggregate(&self, pool: &Pool, node: &[u32], count: u32) -> Coarse {
        aggregate_by_node(
            pool,
            node,
            count,
            |a| self.rows[a as usize].len() as u64,
            |a, sums| {
                for &(x, w) in &self.rows[a as usize] {
                    sums.add(node[x as usize], w);
                }
            },
        )
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
    fn rows_made_in_parallel_are_the_builders_bit_for_bit() {
        let mut rng = base::Xoshiro256::new(5);
        let n = 3000u32;
        let rows: Vec<Vec<(u32, f64)>> = (0..n)
            .map(|_| {
                (0..rng.below(12))
                    .map(|_| (rng.below(n as u64) as u32, 0.1 * (1 + rng.below(9)) as f64))
                    .collect()
            })
            .collect();
        let node: Vec<u32> = (0..n).map(|_| rng.below(40) as u32).collect();
        let (node, count) = renumber(&node);
        let mut b = Coarse::builder(count);
        for (v, row) in rows.iter().enumerate() {
            b.add_list(node[v], row.iter().map(|&(u, w)| (node[u as usize], w)));
        }
        let bits = |g: &Coarse| -> Vec<Vec<(u32, u64)>> {
            g.rows
                .iter()
                .map(|r| r.iter().map(|&(b, w)| (b, w.to_bits())).collect())
                .collect()
        };
        let built = bits(&b.finish());
        for threads in [1, 2, 3] {
            let pool = Pool::new(threads).unwrap();
            let g = aggregate_by_node(
                &pool,
                &node,
                count,
                |v| rows[v as usize].len() as u64,
                |v, sums| {
                    for &(u, w) in &rows[v as usize] {
                        sums.add(node[u as usize], w);
                    }
                },
            );
            assert_eq!(bits(&g), built, "{threads} threads");
        }
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
        let q = g.aggregate(&pool, &node, count).modularity(m2, 1.0);
        // Two communities with 3 inner edges each and degree sums 7: 2 (6/14 - 1/4).
        assert!((q - 2.0 * (6.0 / 14.0 - 0.25)).abs() < 1e-12, "{q}");
    }
}
