//! Synthetic graph generators writing edge-list text: Graph500-style R-MAT and uniform random
//! graphs, for benchmarks and tests. Both use a self-contained PRNG (splitmix64 seeding a
//! xoshiro256**) so the output for a seed never changes across crate or Rust versions.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::error::{Result, StoreError};

/// xoshiro256** seeded through splitmix64: small, fast, and fixed forever.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let r = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1]: edge weights are never zero.
    #[inline]
    pub fn weight(&mut self) -> f64 {
        1.0 - self.next_f64()
    }

    /// Uniform in `0..n` (n > 0), by multiply-shift.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
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
    let mut rng = Rng::new(seed);
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
        let weight = weighted.then(|| rng.weight());
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
    let mut rng = Rng::new(seed);
    let mut w = writer(out)?;
    for _ in 0..edges {
        let u = rng.below(vertices);
        let v = rng.below(vertices);
        let weight = weighted.then(|| rng.weight());
        write_edge(&mut w, u, v, weight).map_err(|e| StoreError::io(out, e))?;
    }
    w.flush().map_err(|e| StoreError::io(out, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prng_is_fixed_forever() {
        let mut r = Rng::new(42);
        let first: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        let mut again = Rng::new(42);
        assert_eq!(first, (0..3).map(|_| again.next_u64()).collect::<Vec<_>>());
        for _ in 0..1000 {
            let w = r.weight();
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
