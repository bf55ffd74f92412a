//! Graph generators and result readers shared by the integration tests.
#![allow(dead_code)]

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::Array;
use exec::ResultTable;

pub mod members;

/// A tiny deterministic generator (tests must not depend on an RNG crate's stream).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Input ids with gaps (10, 13, 16, ...), so internal and input ids differ.
pub fn gapped_ids(n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| 10 + 3 * i).collect()
}

/// A graph with hubs (vertex 0 points to > 4096 vertices, > 4096 vertices point to vertex 1),
/// sinks (the last tenth has no out-edges), cycles (a ring over the first half), and random
/// edges; no self-loops or duplicate edges.
pub fn hub_graph(n: usize, seed: u64) -> (Vec<u64>, Vec<(u64, u64)>) {
    assert!(n > 5000);
    let ids = gapped_ids(n);
    let sinks_from = n - n / 10;
    let mut set = std::collections::BTreeSet::new();
    for v in 2..4200.min(n) {
        set.insert((0usize, v));
    }
    for u in 2..4300.min(sinks_from) {
        set.insert((u, 1usize));
    }
    for u in 0..n / 2 {
        set.insert((u, (u + 1) % (n / 2)));
    }
    let mut rng = Lcg(seed);
    for _ in 0..n * 2 {
        let u = rng.below(sinks_from as u64) as usize;
        let v = rng.below(n as u64) as usize;
        if u != v {
            set.insert((u, v));
        }
    }
    set.retain(|&(u, _)| u < sinks_from);
    let edges = set.into_iter().map(|(u, v)| (ids[u], ids[v])).collect();
    (ids, edges)
}

/// Column `name` as u64 options, rows in order.
pub fn u64_col(t: &ResultTable, name: &str) -> Vec<Option<u64>> {
    let mut out = Vec::new();
    for b in &t.batches {
        let c = b.column_by_name(name).unwrap();
        let a = c.as_primitive::<UInt64Type>();
        out.extend((0..a.len()).map(|i| (!a.is_null(i)).then(|| a.value(i))));
    }
    out
}

pub fn u32_col(t: &ResultTable, name: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for b in &t.batches {
        let a = b
            .column_by_name(name)
            .unwrap()
            .as_primitive::<UInt32Type>()
            .clone();
        out.extend(a.values().iter().copied());
    }
    out
}

pub fn i64_col(t: &ResultTable, name: &str) -> Vec<Option<i64>> {
    let mut out = Vec::new();
    for b in &t.batches {
        let a = b
            .column_by_name(name)
            .unwrap()
            .as_primitive::<Int64Type>()
            .clone();
        out.extend((0..a.len()).map(|i| (!a.is_null(i)).then(|| a.value(i))));
    }
    out
}

pub fn f64_col(t: &ResultTable, name: &str) -> Vec<Option<f64>> {
    let mut out = Vec::new();
    for b in &t.batches {
        let a = b
            .column_by_name(name)
            .unwrap()
            .as_primitive::<Float64Type>()
            .clone();
        out.extend((0..a.len()).map(|i| (!a.is_null(i)).then(|| a.value(i))));
    }
    out
}
