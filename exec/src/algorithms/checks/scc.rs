//! The sequential definition scc is checked against.

use storage::GraphStore;

use crate::reference::{compare, Lists};
use crate::result::ResultTable;

/// Checks the labels against Tarjan's algorithm (iterative), each component labelled with its
/// smallest input id.
pub fn verify<S: GraphStore>(store: &S, table: &ResultTable) -> Result<(), String> {
    let lists = Lists::read(store)?;
    let n = lists.n();
    const NONE: usize = usize::MAX;
    let mut index = vec![NONE; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut label = vec![0u64; n];
    let mut next = 0;
    for start in 0..n {
        if index[start] != NONE {
            continue;
        }
        // (vertex, position in its out-list)
        let mut calls = vec![(start, 0usize)];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut at)) = calls.last_mut() {
            if let Some(&(w, _)) = lists.out[v].get(*at) {
                *at += 1;
                let w = w as usize;
                if index[w] == NONE {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut members = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                let smallest = members
                    .iter()
                    .map(|&w| store.input_id(w as u32))
                    .min()
                    .unwrap_or(0);
                for w in members {
                    label[w] = smallest;
                }
            }
        }
    }
    let want: Vec<Option<f64>> = label.into_iter().map(|l| Some(l as f64)).collect();
    compare(store, table, "component", &want, |a, b| a == b)
}
