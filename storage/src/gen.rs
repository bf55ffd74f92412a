//! Synthetic graph generators writing edge-list text: Graph500-style R-MAT, uniform random and
//! road-like 2-D grid graphs, for benchmarks and tests (the three families of the GAP benchmark).
//! All draw from [`base::Xoshiro256`], so the output for a seed never changes across crate or
//! Rust versions.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use base::Xoshiro256;

use crate::error::{Result, StoreError};

/// Uniform in (0, 1]: edge weights are never zero.
#[inline]
fn weight(rng: &mut Xoshiro256) -> f64 {
    1.0 - rng.next_f64()
}

fn writer(out: &Path) -> Result<BufWriter<File>> {
    let f = File::create(out).map_err(|e| StoreError::io(out, e))?;
    Ok(BufWriter::with_capacity(1 << 20, f))
}

#[inline]
fn write_edge(w: &mut impl Write, a: u64, b: u64, weight: Option<f64>) -> std::io::Result<()> {
    match weight {
        Some(x) => writeln!(w, "{a} {b} {x}"),
        None => writeln!(w, "{a} {b}"),
    }
}

/// Writes a Graph500 R-MAT graph (a=0.57, b=0.19, c=0.19, d=0.05) with 2^`scale` vertices and
/// `edge_factor`·2^`scale` edges to `out`, vertex ids scrambled by a seeded permutation as
/// Graph500 does (so hubs are not the low ids). Duplicates and self-loops are kept, as R-MAT
/// produces them; the importer drops duplicates.
pub fn gen_rmat(scale: u32, edge_factor: u64, seed: u64, weighted: bool, out: &Path) -> Result<()> {
    if scale > 40 {
        return Err(StoreError::Other(format!(
            "R-MAT scale {scale} is too large (at most 40)"
        )));
    }
    let n = 1u64 << scale;
    let m = edge_factor.saturating_mul(n);
    let mut rng = Xoshiro256::new(seed);
    // A seeded permutation of the vertex ids, when it fits in memory.
    let perm: Option<Vec<u64>> = (scale <= 30).then(|| permutation(n, &mut rng));
    let (a, b, c) = (0.57, 0.19, 0.19);
    let mut w = writer(out)?;
    for _ in 0..m {
        let (mut u, mut v) = (0u64, 0u64);
        for bit in (0..scale).rev() {
            let r = rng.next_f64();
            let (du, dv) = if r < a {
                (0, 0)
            } else if r < a + b {
                (0, 1)
            } else if r < a + b + c {
                (1, 0)
            } else {
                (1, 1)
            };
            u |= du << bit;
            v |= dv << bit;
        }
        if let Some(p) = &perm {
            u = p[u as usize];
            v = p[v as usize];
        }
        let weight = weighted.then(|| weight(&mut rng));
        write_edge(&mut w, u, v, weight).map_err(|e| StoreError::io(out, e))?;
    }
    w.flush().map_err(|e| StoreError::io(out, e))?;
    Ok(())
}

/// Writes `edges` uniformly random edges over `vertices` vertices (ids `0..vertices`) to `out`.
pub fn gen_uniform(vertices: u64, edges: u64, seed: u64, weighted: bool, out: &Path) -> Result<()> {
    if vertices == 0 && edges > 0 {
        return Err(StoreError::Other("edges need at least one vertex".into()));
    }
    let mut rng = Xoshiro256::new(seed);
    let mut w = writer(out)?;
    for _ in 0..edges {
        let u = rng.below(vertices);
        let v = rng.below(vertices);
        let weight = weighted.then(|| weight(&mut rng));
        write_edge(&mut w, u, v, weight).map_err(|e| StoreError::io(out, e))?;
    }
    w.flush().map_err(|e| StoreError::io(out, e))?;
    Ok(())
}

/// A seeded permutation of `0..n` (Fisher-Yates).
fn permutation(n: u64, rng: &mut Xoshiro256) -> Vec<u64> {
    let mut p: Vec<u64> = (0..n).collect();
    for i in (1..n as usize).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

/// Largest vertex count [`gen_grid`] takes: its id permutation is held in memory.
pub const GRID_MAX_VERTICES: u64 = 1 << 32;

/// Writes a road-like graph to `out`: `vertices` vertices laid out row by row on a 2-D grid
/// ⌈√vertices⌉ wide, each joined to its right and lower neighbour, with each of those edges
/// dropped with probability `remove` (so degrees are about 4·(1 − `remove`) and the diameter
/// about 2·√vertices, as on road networks). Vertex ids are a seeded permutation of
/// `0..vertices`, so neighbours are not neighbouring ids. With `weighted`, every edge gets an
/// integer weight uniform in 1..=255 (the range GAPBS's own generator uses). Each edge is written
/// once; vertices whose edges were all dropped do not appear.
pub fn gen_grid(vertices: u64, remove: f64, seed: u64, weighted: bool, out: &Path) -> Result<()> {
    if vertices > GRID_MAX_VERTICES {
        return Err(StoreError::Other(format!(
            "grid of {vertices} vertices is too large (at most {GRID_MAX_VERTICES})"
        )));
    }
    if !(0.0..=1.0).contains(&remove) {
        return Err(StoreError::Other(format!(
            "--remove {remove} is not a fraction: give a number from 0 to 1"
        )));
    }
    let n = vertices;
    let width = (n as f64).sqrt().ceil() as u64;
    let mut rng = Xoshiro256::new(seed);
    let perm = permutation(n, &mut rng);
    let mut w = writer(out)?;
    for v in 0..n {
        let right = (v % width + 1 < width).then_some(v + 1);
        let down = Some(v + width);
        for u in [right, down].into_iter().flatten().filter(|&u| u < n) {
            if rng.next_f64() < remove {
                continue;
            }
            let (a, b) = (perm[v as usize], perm[u as usize]);
            let res = if weighted {
                let x = 1 + rng.below(255);
                writeln!(w, "{a} {b} {x}")
            } else {
                writeln!(w, "{a} {b}")
            };
            res.map_err(|e| StoreError::io(out, e))?;
        }
    }
    w.flush().map_err(|e| StoreError::io(out, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_never_zero() {
        let mut rng = Xoshiro256::new(42);
        for _ in 0..1000 {
            let w = weight(&mut rng);
            assert!(w > 0.0 && w <= 1.0);
        }
    }

    #[test]
    fn rmat_is_deterministic_and_sized() {
        let d = tempfile::tempdir().unwrap();
        let (p, q) = (d.path().join("a"), d.path().join("b"));
        gen_rmat(6, 4, 7, true, &p).unwrap();
        gen_rmat(6, 4, 7, true, &q).unwrap();
        let a = std::fs::read_to_string(&p).unwrap();
        assert_eq!(a, std::fs::read_to_string(&q).unwrap());
        assert_eq!(a.lines().count(), 256);
        for l in a.lines() {
            let t: Vec<&str> = l.split(' ').collect();
            assert_eq!(t.len(), 3);
            assert!(t[0].parse::<u64>().unwrap() < 64);
        }
        gen_uniform(10, 50, 1, false, &p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap().lines().count(), 50);
    }

    /// Parses a grid edge list: its edges, and its weights when it has them.
    fn read_grid(p: &Path) -> (Vec<(u64, u64)>, Vec<u64>) {
        let mut edges = Vec::new();
        let mut weights = Vec::new();
        for l in std::fs::read_to_string(p).unwrap().lines() {
            let t: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            edges.push((t[0], t[1]));
            if t.len() == 3 {
                weights.push(t[2]);
            }
        }
        (edges, weights)
    }

    /// Sizes of the connected components over `0..n` (isolated vertices count), largest first.
    fn components(n: u64, edges: &[(u64, u64)]) -> Vec<u64> {
        let mut parent: Vec<usize> = (0..n as usize).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for &(a, b) in edges {
            let (ra, rb) = (find(&mut parent, a as usize), find(&mut parent, b as usize));
            parent[ra] = rb;
        }
        let mut sizes = vec![0u64; n as usize];
        for x in 0..n as usize {
            sizes[find(&mut parent, x)] += 1;
        }
        sizes.retain(|&s| s > 0);
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        sizes
    }

    #[test]
    fn full_grid_is_one_component_with_every_lattice_edge() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("g");
        // 10 x 10, and 50 vertices 8 wide: six full rows and two vertices in the last
        // (6 x 7 + 1 edges along the rows, 42 down from the vertices with one below).
        for (n, want_edges) in [(100u64, 2 * 10 * 9), (50, 6 * 7 + 1 + 42)] {
            gen_grid(n, 0.0, 3, false, &p).unwrap();
            let (edges, weights) = read_grid(&p);
            assert!(weights.is_empty());
            assert_eq!(edges.len(), want_edges, "n = {n}");
            assert!(edges.iter().all(|&(a, b)| a < n && b < n && a != b));
            let mut seen = vec![false; n as usize];
            for &(a, b) in &edges {
                seen[a as usize] = true;
                seen[b as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "every id of 0..{n} is used");
            assert_eq!(components(n, &edges), vec![n]);
            let mut dedup = edges
                .iter()
                .map(|&(a, b)| (a.min(b), a.max(b)))
                .collect::<Vec<_>>();
            dedup.sort_unstable();
            dedup.dedup();
            assert_eq!(dedup.len(), edges.len(), "no duplicate edges");
        }
    }

    #[test]
    fn grid_has_road_degrees_and_a_giant_component() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("g");
        let n = 1u64 << 14;
        gen_grid(n, 0.2, 1, true, &p).unwrap();
        let (edges, weights) = read_grid(&p);
        let mean_degree = 2.0 * edges.len() as f64 / n as f64;
        assert!(
            (3.0..3.4).contains(&mean_degree),
            "mean degree {mean_degree}"
        );
        let mut degree = vec![0u32; n as usize];
        for &(a, b) in &edges {
            degree[a as usize] += 1;
            degree[b as usize] += 1;
        }
        assert!(degree.iter().all(|&x| x <= 4));
        assert_eq!(weights.len(), edges.len());
        assert!(weights.iter().all(|&x| (1..=255).contains(&x)));
        assert!(weights.contains(&1) && weights.contains(&255));
        // Removing a fifth of a grid's edges leaves it above the bond percolation threshold
        // (a half): one component holds nearly every vertex, the rest are small pieces.
        let sizes = components(n, &edges);
        let giant = sizes[0];
        assert!(
            giant as f64 > 0.9 * n as f64,
            "giant component {giant} of {n}"
        );
        assert!(
            sizes.len() > 1,
            "a fifth removed leaves some vertices cut off"
        );
    }

    #[test]
    fn grid_is_deterministic_by_seed_and_permutes_ids() {
        let d = tempfile::tempdir().unwrap();
        let (p, q) = (d.path().join("a"), d.path().join("b"));
        gen_grid(400, 0.2, 7, true, &p).unwrap();
        gen_grid(400, 0.2, 7, true, &q).unwrap();
        let a = std::fs::read_to_string(&p).unwrap();
        assert_eq!(a, std::fs::read_to_string(&q).unwrap());
        gen_grid(400, 0.2, 8, true, &q).unwrap();
        assert_ne!(a, std::fs::read_to_string(&q).unwrap());
        // Ids are permuted: the grid's right-hand neighbours are not consecutive ids.
        let (edges, _) = read_grid(&p);
        let consecutive = edges.iter().filter(|&&(a, b)| a.abs_diff(b) == 1).count();
        assert!(
            consecutive < edges.len() / 10,
            "{consecutive} of {} edges join consecutive ids",
            edges.len()
        );
    }

    #[test]
    fn grid_rejects_bad_arguments() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("g");
        assert!(gen_grid(10, 1.5, 1, false, &p).is_err());
        assert!(gen_grid(10, -0.1, 1, false, &p).is_err());
        assert!(gen_grid(10, f64::NAN, 1, false, &p).is_err());
        assert!(gen_grid(GRID_MAX_VERTICES + 1, 0.2, 1, false, &p).is_err());
        gen_grid(0, 0.2, 1, false, &p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "");
        gen_grid(1, 0.2, 1, false, &p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "");
    }
}
