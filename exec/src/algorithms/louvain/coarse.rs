//! Louvain's levels after the first: the communities of a level as the vertices of a smaller
//! graph held in memory, local moving over it, and the move rule every level shares.
//!
//! A graph here is symmetric rows of `(neighbour, weight)`, ascending, a vertex's own entry
//! holding twice the weight inside it (every inner edge seen from both ends), so a vertex's
//! degree is the sum of its row and `in_c` of modularity is its own entry.

use std::collections::HashMap;

use crate::error::ExecError;

/// Where a vertex moves: the community among `links` (its `(community, weight)` entries to
/// other vertices, any order) of largest modularity gain over staying in `own`, the smallest
/// id on a tie; `own` when no move gains. `k` is its degree, `tot(c)` the degree sum of `c`
/// with the vertex still counted in `own`, `m2` twice the total weight. This is networkx's
/// rule, every gain multiplied by `m`.
pub(crate) fn best_move(
    own: u32,
    k: f64,
    links: &mut [(u32, f64)],
    tot: impl Fn(u32) -> f64,
    m2: f64,
    resolution: f64,
) -> u32 {
    // Stable, so the weights to one community add up in the list's order.
    links.sort_by_key(|l| l.0);
    let mut merged: Vec<(u32, f64)> = Vec::with_capacity(links.len());
    for &(c, w) in links.iter() {
        match merged.last_mut() {
            Some(last) if last.0 == c => last.1 += w,
            _ => merged.push((c, w)),
        }
    }
    let to_own = merged.iter().find(|l| l.0 == own).map_or(0.0, |l| l.1);
    let stay = to_own - resolution * (tot(own) - k) * k / m2;
    let mut best = (own, 0.0);
    for &(c, w) in merged.iter().filter(|l| l.0 != own) {
        let gain = w - resolution * tot(c) * k / m2 - stay;
        if gain > best.1 {
            best = (c, gain);
        }
    }
    best.0
}

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
    rows: Vec<HashMap<u32, f64>>,
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
            rows: vec![HashMap::new(); count as usize],
        }
    }

    pub(crate) fn len(&self) -> u32 {
        self.rows.len() as u32
    }

    /// Entries over all rows.
    pub(crate) fn entries(&self) -> u64 {
        self.rows.iter().map(|r| r.len() as u64).sum()
    }

    fn degrees(&self) -> Vec<f64> {
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

    /// Sweeps of sequential local moving in `order`, at most `sweeps`, until none moves:
    /// each vertex's community and the sweeps run. `check` is called between sweeps.
    pub(crate) fn local_moving(
        &self,
        order: &[u32],
        m2: f64,
        resolution: f64,
        sweeps: u32,
        check: impl Fn() -> Result<(), ExecError>,
    ) -> Result<(Vec<u32>, u32), ExecError> {
        let k = self.degrees();
        let mut tot = k.clone();
        let mut comm: Vec<u32> = (0..self.len()).collect();
        let mut links = Vec::new();
        let mut run = 0;
        while run < sweeps {
            check()?;
            run += 1;
            let mut moves = 0u64;
            for &a in order {
                let ai = a as usize;
                links.clear();
                links.extend(
                    self.rows[ai]
                        .iter()
                        .filter(|e| e.0 != a)
                        .map(|&(b, w)| (comm[b as usize], w)),
                );
                let own = comm[ai];
                let target = best_move(own, k[ai], &mut links, |c| tot[c as usize], m2, resolution);
                if target != own {
                    tot[own as usize] -= k[ai];
                    tot[target as usize] += k[ai];
                    comm[ai] = target;
                    moves += 1;
                }
            }
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
    fn a_vertex_joins_the_community_it_is_tied_to_and_ties_go_to_the_smallest() {
        // Vertex of degree 2 in community 5, linked once to 3 and once to 7, totals equal.
        let mut links = vec![(7, 1.0), (3, 1.0)];
        assert_eq!(best_move(5, 2.0, &mut links, |_| 2.0, 20.0, 1.0), 3);
        // Staying is better when its own community holds the links.
        let mut links = vec![(5, 1.0), (5, 1.0), (3, 1.0)];
        assert_eq!(best_move(5, 3.0, &mut links, |_| 3.0, 20.0, 1.0), 5);
        // No links: stays.
        assert_eq!(best_move(4, 0.0, &mut [], |_| 0.0, 20.0, 1.0), 4);
    }

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
        let (comm, _) = g.local_moving(&order, m2, 1.0, 100, || Ok(())).unwrap();
        let (node, count) = renumber(&comm);
        assert_eq!(node, vec![0, 0, 0, 1, 1, 1]);
        let q = g.aggregate(&node, count).modularity(m2, 1.0);
        // Two communities with 3 inner edges each and degree sums 7: 2 (6/14 - 1/4).
        assert!((q - 2.0 * (6.0 / 14.0 - 0.25)).abs() < 1e-12, "{q}");
    }
}
