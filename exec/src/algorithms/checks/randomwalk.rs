//! The sequential definition randomwalk is checked against.

use storage::GraphStore;

use super::super::randomwalk::Config;
use crate::reference::{column, Lists};
use crate::result::ResultTable;
use crate::rng::Xoshiro256;

/// Checks the rows against the walks replayed one after another from the same streams.
pub fn verify<S: GraphStore>(store: &S, cfg: &Config, table: &ResultTable) -> Result<(), String> {
    let lists = Lists::read(store)?;
    let n = lists.n() as u64;
    let mut want = Vec::new();
    for w in (0..cfg.walks).filter(|_| n > 0 && cfg.start.is_none_or(|s| u64::from(s) < n)) {
        let mut rng = Xoshiro256::for_stream(cfg.seed, w);
        let mut at = cfg.start.unwrap_or_else(|| rng.below(n) as u32);
        want.push([w, 0, store.input_id(at)]);
        for step in 1..=u64::from(cfg.length) {
            let ns = &lists.out[at as usize];
            if ns.is_empty() {
                break;
            }
            at = ns[rng.below(ns.len() as u64) as usize].0;
            want.push([w, step, store.input_id(at)]);
        }
    }
    let cols = ["walk", "step", "vertex"].map(|c| column(table, c));
    let got: Vec<[u64; 3]> = match cols {
        [Ok(w), Ok(s), Ok(v)] => (0..w.len())
            .map(|i| [w[i], s[i], v[i]].map(|x| x.unwrap_or(f64::NAN) as u64))
            .collect(),
        _ => return Err("the result lacks a walk, step or vertex column".into()),
    };
    match got.iter().zip(&want).position(|(g, w)| g != w) {
        Some(i) => Err(format!(
            "row {i}: {:?}, the definition gives {:?}",
            got[i], want[i]
        )),
        None if got.len() != want.len() => Err(format!(
            "{} rows, the definition gives {}",
            got.len(),
            want.len()
        )),
        None => Ok(()),
    }
}
