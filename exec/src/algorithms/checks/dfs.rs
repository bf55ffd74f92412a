//! The sequential definition dfs is checked against.

use storage::GraphStore;

use super::super::FromVertex;
use crate::reference::{vertex_column, Lists};
use crate::result::ResultTable;

/// Checks a DFS result: exactly the vertices reachable from `source` are discovered, with
/// distinct discovery numbers, the source first and without a parent, and every other vertex's
/// parent discovered before it and joined to it by an out-edge.
pub fn verify<S: GraphStore>(
    store: &S,
    cfg: &FromVertex,
    table: &ResultTable,
) -> Result<(), String> {
    let source = cfg.source;
    let lists = Lists::read(store)?;
    let n = lists.n();
    let mut reach = vec![false; n];
    if (source as usize) < n {
        reach[source as usize] = true;
        let mut stack = vec![source];
        while let Some(u) = stack.pop() {
            for &(v, _) in &lists.out[u as usize] {
                if !std::mem::replace(&mut reach[v as usize], true) {
                    stack.push(v);
                }
            }
        }
    }
    let found = vertex_column(store, table, "discovered")?;
    let parent = vertex_column(store, table, "parent")?;
    let mut numbers = std::collections::HashSet::new();
    for v in 0..n {
        let id = store.input_id(v as u32);
        if found[v].is_some() != reach[v] {
            return Err(format!(
                "vertex {id}: discovered {:?}, reachable {}",
                found[v], reach[v]
            ));
        }
        let Some(at) = found[v] else { continue };
        if !numbers.insert(at as u64) {
            return Err(format!("vertex {id}: discovery number {at} given twice"));
        }
        match parent[v] {
            None if v as u32 == source && at == 0.0 => {}
            None => return Err(format!("vertex {id}: no parent")),
            Some(p) => {
                let p = store
                    .internal_id(p as u64)
                    .ok_or_else(|| format!("vertex {id}: parent {p} is no vertex"))?;
                if !lists.out[p as usize].iter().any(|e| e.0 as usize == v) {
                    return Err(format!("vertex {id}: no edge from its parent"));
                }
                if found[p as usize].is_none_or(|pa| pa >= at) {
                    return Err(format!("vertex {id}: discovered before its parent"));
                }
            }
        }
    }
    Ok(())
}
