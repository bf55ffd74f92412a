//! What a Louvain result is checked against: a valid partition, numbered as documented, whose
//! modularity recomputed from the rows equals the one reported and is no worse than every
//! vertex on its own.

use storage::GraphStore;

use crate::algorithms::leiden::Pieces;
use crate::reference::{close, column, vertex_column, Lists};
use crate::result::{ResultTable, SummaryValue};

/// The modularity of `community` (one entry per vertex) on the undirected view of `store`'s
/// graph, and that of every vertex on its own: each arc an edge of its weight, a self-loop
/// twice in its vertex's degree.
pub fn modularity<S: GraphStore>(
    store: &S,
    community: &[u64],
    resolution: f64,
) -> Result<(f64, f64), String> {
    let lists = Lists::read(store)?;
    let n = lists.n();
    if community.len() != n {
        return Err(format!("{} rows for {n} vertices", community.len()));
    }
    let directed = store.shape().directed;
    let mut degree = vec![0.0; n];
    let mut own = vec![0.0; n];
    let mut inside = 0.0;
    for (v, out) in lists.out.iter().enumerate() {
        for &(u, w) in out {
            let u = u as usize;
            // An undirected graph lists each edge at both ends, a self-loop once.
            let (at_v, at_u) = match (directed, u == v) {
                (true, _) => (w, w),
                (false, true) => (w, w),
                (false, false) => (w, 0.0),
            };
            degree[v] += at_v;
            degree[u] += at_u;
            if u == v {
                own[v] += at_v + at_u;
            }
            if community[u] == community[v] {
                inside += at_v + at_u;
            }
        }
    }
    let m2: f64 = degree.iter().sum();
    if m2 == 0.0 {
        return Ok((0.0, 0.0));
    }
    let mut tot = vec![0.0; n];
    for v in 0..n {
        tot[community[v] as usize] += degree[v];
    }
    let squares = |t: &[f64]| t.iter().map(|t| (t / m2) * (t / m2)).sum::<f64>();
    let q = inside / m2 - resolution * squares(&tot);
    let singletons = own.iter().sum::<f64>() / m2 - resolution * squares(&degree);
    Ok((q, singletons))
}

/// Checks the partition, its numbering and the reported modularity.
pub fn verify<S: GraphStore>(
    store: &S,
    resolution: f64,
    table: &ResultTable,
) -> Result<(), String> {
    // Numbered by first appearance in row (key) order, so by smallest member id.
    let mut next = 0u64;
    for (c, id) in column(table, "community")?
        .iter()
        .zip(column(table, "vertex")?)
    {
        let id = id.unwrap_or(f64::NAN);
        let Some(c) = c else {
            return Err(format!("vertex {id} has no community"));
        };
        let c = *c as u64;
        if c > next {
            return Err(format!(
                "vertex {id}: community {c} before community {next} was used (not numbered by smallest member)"
            ));
        }
        next = next.max(c + 1);
    }
    let community: Vec<u64> = vertex_column(store, table, "community")?
        .into_iter()
        .map(|c| c.unwrap_or(0.0) as u64)
        .collect();
    let (q, singletons) = modularity(store, &community, resolution)?;
    let reported = table
        .summaries
        .iter()
        .find(|s| s.name == "modularity")
        .map(|s| s.value);
    let Some(SummaryValue::Float64(reported)) = reported else {
        return Err("no modularity was reported".into());
    };
    if !(close(q, reported) || (q - reported).abs() < 1e-12) {
        return Err(format!("reported modularity {reported}, the rows give {q}"));
    }
    if q < singletons - 1e-12 {
        return Err(format!(
            "modularity {q} is below that of every vertex on its own, {singletons}"
        ));
    }
    let count = table.summaries.iter().find(|s| s.name == "communities");
    if let Some(s) = count {
        if s.value != SummaryValue::UInt64(next) {
            return Err(format!(
                "reported {} communities, the rows have {next}",
                s.value
            ));
        }
    }
    Ok(())
}

/// Checks that every community of the rows is connected in the undirected view.
pub fn connected<S: GraphStore>(store: &S, table: &ResultTable) -> Result<(), String> {
    let community: Vec<u64> = vertex_column(store, table, "community")?
        .into_iter()
        .map(|c| c.unwrap_or(0.0) as u64)
        .collect();
    let lists = Lists::read(store)?;
    let mut pieces = Pieces::new(community.len() as u32);
    for (v, out) in lists.out.iter().enumerate() {
        for &(u, _) in out {
            if community[u as usize] == community[v] {
                pieces.join(u, v as u32);
            }
        }
    }
    let mut first: std::collections::HashMap<u64, (u32, u32)> = Default::default();
    for v in 0..community.len() as u32 {
        let r = pieces.root(v);
        let (w, at) = *first.entry(community[v as usize]).or_insert((v, r));
        if at != r {
            return Err(format!(
                "community {} is not connected: internal vertices {w} and {v} are in two pieces of it",
                community[v as usize]
            ));
        }
    }
    Ok(())
}
