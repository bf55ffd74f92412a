//! Synthetic graph generators writing edge-list text: Graph500-style R-MAT and uniform random
//! graphs, for benchmarks and tests. Both draw from [`base::Xoshiro256`], so the output for a
//! seed never changes across crate or Rust versions.

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
    // A seeded permutation of the vertex ids (Fisher-Yates), when it fits in memory.
    let perm: Option<Vec<u64>> = (scale <= 30).then(|| {
        let mut p: Vec<u64> = (0..n).collect();
        for i in (1..n as usize).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            p.swap(i, j);
        }
        p
    });
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
}
