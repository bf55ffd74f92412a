//! Leiden's refinement phase (Traag, Waltman & van Eck 2019, `RefinePartition`), greedy:
//! within each community `S` of the moving phase, every vertex starts alone; in the visiting
//! order, a vertex still alone and well connected to `S` joins the sub-community `C ⊆ S` of
//! largest modularity gain among those well connected to `S`, when that gain is positive (ties
//! to the smallest id), and stays alone otherwise. A vertex that has been joined, or has
//! joined, moves no more, so each sub-community grows from one vertex through links of
//! positive weight and is connected.
//!
//! With `γ' = RESOLUTION / 2m` and `‖X‖` the degrees of `X` added up, `v` is well connected to
//! `S` when `E(v, S − v) ≥ γ' ‖v‖ (‖S‖ − ‖v‖)`, and `C` when `E(C, S − C) ≥ γ' ‖C‖ (‖S‖ − ‖C‖)`;
//! the gain of `v` joining `C` is `E(v, C) − γ' ‖v‖ ‖C‖` (the modularity gain times `m`).

/// The state of one refinement: per vertex its community of the moving phase and degree, per
/// sub-community (named by the vertex it started from) its degree total and its links to the
/// rest of its community.
pub(crate) struct Refiner<'a> {
    community: &'a [u32],
    degree: &'a [f64],
    /// Per community of the moving phase, its degree total.
    total: Vec<f64>,
    /// `RESOLUTION / 2m`.
    scale: f64,
    /// Per vertex, its sub-community.
    refined: Vec<u32>,
    /// Per sub-community, its degree total.
    size: Vec<f64>,
    /// Per sub-community `C`, `E(C, S − C)`.
    external: Vec<f64>,
    /// Per vertex, whether it is still alone in its sub-community.
    alone: Vec<bool>,
    /// Scratch: the weight from the visited vertex to each sub-community (zero outside a
    /// visit), and the sub-communities it reached.
    weight: Vec<f64>,
    touched: Vec<u32>,
}

impl<'a> Refiner<'a> {
    /// Every vertex alone: `community` and `degree` per vertex (community ids below the
    /// vertex count), `m2` twice the total weight.
    pub(crate) fn new(community: &'a [u32], degree: &'a [f64], m2: f64, resolution: f64) -> Self {
        let n = community.len();
        let mut total = vec![0.0; n];
        for (&c, &k) in community.iter().zip(degree) {
            total[c as usize] += k;
        }
        Refiner {
            community,
            degree,
            total,
            scale: if m2 > 0.0 { resolution / m2 } else { 0.0 },
            refined: (0..n as u32).collect(),
            size: degree.to_vec(),
            external: vec![0.0; n],
            alone: vec![true; n],
            weight: vec![0.0; n],
            touched: Vec::new(),
        }
    }

    /// Notes the links of `v` (its row of `(neighbour, weight)`) to the rest of its community:
    /// every vertex once, before any [`Refiner::visit`].
    pub(crate) fn note(&mut self, v: u32, row: &[(u32, f64)]) {
        let c = self.community[v as usize];
        self.external[v as usize] = row
            .iter()
            .filter(|e| e.0 != v && self.community[e.0 as usize] == c)
            .map(|e| e.1)
            .sum();
    }

    /// Whether the sub-community `c`, of degree total `size`, is well connected to `s`.
    fn well_connected(&self, external: f64, size: f64, s: u32) -> bool {
        external >= self.scale * size * (self.total[s as usize] - size)
    }

    /// Moves `v` (row `row`) into the best sub-community of its community, if it is still
    /// alone and that gains; returns whether it moved.
    pub(crate) fn visit(&mut self, v: u32, row: &[(u32, f64)]) -> bool {
        let vi = v as usize;
        let s = self.community[vi];
        let k = self.degree[vi];
        if !self.alone[vi] || !self.well_connected(self.external[vi], k, s) {
            return false;
        }
        self.touched.clear();
        for &(u, w) in row {
            if u == v || self.community[u as usize] != s {
                continue;
            }
            let c = self.refined[u as usize];
            // Weights are not negative: a slot is zero until its sub-community is first seen
            // (one reached only through zero weights may be listed twice, which is harmless).
            if self.weight[c as usize] == 0.0 {
                self.touched.push(c);
            }
            self.weight[c as usize] += w;
        }
        let mut best = (v, 0.0, 0.0);
        for &c in &self.touched {
            let (size, to) = (self.size[c as usize], self.weight[c as usize]);
            if !self.well_connected(self.external[c as usize], size, s) {
                continue;
            }
            let gain = to - self.scale * k * size;
            if gain > best.1 || (gain == best.1 && best.0 != v && c < best.0) {
                best = (c, gain, to);
            }
        }
        for &c in &self.touched {
            self.weight[c as usize] = 0.0;
        }
        let (c, _, to) = best;
        if c == v {
            return false;
        }
        let ci = c as usize;
        self.size[ci] += k;
        self.external[ci] += self.external[vi] - 2.0 * to;
        self.size[vi] = 0.0;
        self.external[vi] = 0.0;
        self.refined[vi] = c;
        self.alone[vi] = false;
        self.alone[ci] = false;
        true
    }

    /// Per vertex, its sub-community (the id of the vertex it grew from).
    pub(crate) fn finish(self) -> Vec<u32> {
        self.refined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Symmetric rows of the edges `(u, v)` of weight 1 over `n` vertices.
    fn rows(n: usize, edges: &[(u32, u32)]) -> Vec<Vec<(u32, f64)>> {
        let mut rows = vec![Vec::new(); n];
        for &(u, v) in edges {
            rows[u as usize].push((v, 1.0));
            rows[v as usize].push((u, 1.0));
        }
        rows
    }

    fn refine(rows: &[Vec<(u32, f64)>], community: &[u32], order: &[u32]) -> Vec<u32> {
        let degree: Vec<f64> = rows.iter().map(|r| r.iter().map(|e| e.1).sum()).collect();
        let m2 = degree.iter().sum();
        let mut r = Refiner::new(community, &degree, m2, 1.0);
        for (v, row) in rows.iter().enumerate() {
            r.note(v as u32, row);
        }
        for &v in order {
            r.visit(v, &rows[v as usize]);
        }
        r.finish()
    }

    #[test]
    fn a_community_of_two_unlinked_triangles_is_refined_apart() {
        // Two triangles 0-1-2 and 3-4-5, each linked to a far triangle 6-7-8 by one edge, the
        // moving phase's community {0..5} holding both near ones.
        let edges = [
            (0, 1),
            (1, 2),
            (0, 2),
            (3, 4),
            (4, 5),
            (3, 5),
            (6, 7),
            (7, 8),
            (6, 8),
            (2, 6),
            (5, 8),
        ];
        let rows = rows(9, &edges);
        let community = [0, 0, 0, 0, 0, 0, 6, 6, 6];
        let order: Vec<u32> = (0..9).rev().collect();
        let refined = refine(&rows, &community, &order);
        // Nothing joins across the two triangles, nor leaves its community.
        for a in 0..3 {
            for b in 3..6 {
                assert_ne!(refined[a], refined[b], "{refined:?}");
            }
        }
        for (v, &c) in refined.iter().enumerate() {
            assert_eq!(community[c as usize], community[v], "{refined:?}");
        }
        assert!(refined.iter().zip(0..).any(|(&c, v)| c != v), "{refined:?}");
    }

    #[test]
    fn a_vertex_without_links_inside_its_community_stays_alone() {
        let rows = rows(4, &[(0, 1), (2, 3)]);
        // 0 and 2 in one community though unlinked; 1 and 3 apart.
        let refined = refine(&rows, &[0, 1, 0, 3], &[0, 1, 2, 3]);
        assert_eq!(refined, [0, 1, 2, 3]);
    }
}
