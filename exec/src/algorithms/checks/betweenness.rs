//! The sequential definition betweenness is checked against.

use storage::GraphStore;

use super::super::betweenness::{normalisation, sources};
use super::super::closeness::Sampling;
use crate::reference::{compare, Lists};
use crate::result::ResultTable;

/// Checks against sequential Brandes from the same sources.
pub fn verify<S: GraphStore>(store: &S, cfg: &Sampling, table: &ResultTable) -> Result<(), String> {
    let lists = Lists::read(store)?;
    let n = lists.n() as u32;
    let sources = sources(store, cfg);
    let mut score = vec![0.0; n as usize];
    for &s in &sources {
        for (v, d) in brandes_reference(&lists, s as usize)
            .into_iter()
            .enumerate()
        {
            if v != s as usize {
                score[v] += d;
            }
        }
    }
    let want: Vec<Option<f64>> = (0..n)
        .map(|v| Some(score[v as usize] * normalisation(n, &sources, v)))
        .collect();
    compare(store, table, "betweenness", &want, |a, b| {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
    })
}

/// The dependencies δ_s(v) of every vertex on source `s`, sequentially (Brandes).
fn brandes_reference(lists: &Lists, s: usize) -> Vec<f64> {
    let n = lists.n();
    let mut depth = vec![usize::MAX; n];
    let mut sigma = vec![0.0; n];
    let mut order = Vec::new();
    depth[s] = 0;
    sigma[s] = 1.0;
    let mut queue = std::collections::VecDeque::from([s]);
    while let Some(u) = queue.pop_front() {
        order.push(u);
        for &(v, _) in &lists.out[u] {
            let v = v as usize;
            if depth[v] == usize::MAX {
                depth[v] = depth[u] + 1;
                queue.push_back(v);
            }
            if depth[v] == depth[u] + 1 {
                sigma[v] += sigma[u];
            }
        }
    }
    let mut delta = vec![0.0; n];
    for &w in order.iter().rev() {
        for &(v, _) in &lists.out[w] {
            let v = v as usize;
            if depth[v] == depth[w] + 1 {
                delta[w] += sigma[w] / sigma[v] * (1.0 + delta[v]);
            }
        }
    }
    delta
}
