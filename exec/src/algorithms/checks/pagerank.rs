//! The sequential definition pagerank is checked against.

use storage::GraphStore;

use super::super::pagerank::Config;
use crate::reference::{compare, Lists};
use crate::result::ResultTable;

/// Checks PageRank ranks against a sequential computation of the definition, with the same
/// options (weights, personalisation, the same stopping rule).
pub fn verify<S: GraphStore>(store: &S, cfg: &Config, table: &ResultTable) -> Result<(), String> {
    let lists = Lists::read(store)?;
    let n = lists.n();
    let nf = n as f64;
    let d = cfg.damping;
    let source = cfg.source.map(|s| s as usize).filter(|&s| s < n);
    let out_weight: Vec<f64> = (0..n)
        .map(|u| {
            if cfg.weighted {
                lists.out[u].iter().map(|e| e.1).sum()
            } else {
                lists.out[u].len() as f64
            }
        })
        .collect();
    let mut rank = vec![1.0 / nf; n];
    for _ in 0..cfg.iterations {
        let sink: f64 = (0..n)
            .filter(|&v| out_weight[v] <= 0.0)
            .map(|v| rank[v])
            .sum();
        let mut next = vec![0.0; n];
        for u in 0..n {
            if out_weight[u] <= 0.0 {
                continue;
            }
            for &(v, w) in &lists.out[u] {
                let w = if cfg.weighted { w } else { 1.0 };
                next[v as usize] += rank[u] * w / out_weight[u];
            }
        }
        for (v, x) in next.iter_mut().enumerate() {
            *x = match source {
                Some(s) => d * *x + if v == s { (1.0 - d) + d * sink } else { 0.0 },
                None => (1.0 - d) / nf + d * *x + d * sink / nf,
            };
        }
        let change: f64 = rank.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
        rank = next;
        if cfg.tolerance > 0.0 && change < cfg.tolerance * nf {
            break;
        }
    }
    let want: Vec<Option<f64>> = rank.into_iter().map(Some).collect();
    compare(store, table, "rank", &want, |a, b| {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
    })
}
