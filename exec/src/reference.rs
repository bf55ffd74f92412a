//! What the kernels' verifiers share (GAPBS style: every kernel file carries a `verify` that
//! checks a run's result against a plain sequential computation of the definition): the graph
//! read once into lists, and a result table's value column by vertex.

use arrow_array::{Array, Float64Array, Int64Array, UInt32Array, UInt64Array};
use storage::{Direction, GraphStore};

use crate::result::ResultTable;

/// Every vertex's out-list (with weights, 1.0 when unweighted) and in-list.
pub struct Lists {
    pub out: Vec<Vec<(u32, f64)>>,
    pub inn: Vec<Vec<u32>>,
}

impl Lists {
    /// Reads all lists of `store` sequentially.
    pub fn read<S: GraphStore>(store: &S) -> Result<Lists, String> {
        let n = store.shape().vertices;
        let mut out = vec![Vec::new(); n as usize];
        let mut inn = vec![Vec::new(); n as usize];
        store
            .scan_lists(Direction::Out, 0..n, true, |v, ns, ws| {
                out[v as usize] = ns
                    .iter()
                    .enumerate()
                    .map(|(k, &u)| (u, ws.and_then(|w| w.get(k)).copied().unwrap_or(1.0)))
                    .collect();
            })
            .map_err(|e| e.to_string())?;
        store
            .scan_lists(Direction::In, 0..n, false, |v, ns, _| {
                inn[v as usize] = ns.to_vec()
            })
            .map_err(|e| e.to_string())?;
        Ok(Lists { out, inn })
    }

    pub fn n(&self) -> usize {
        self.out.len()
    }
}

/// The values of column `name` in row order, as f64 (`None` for nulls).
pub fn column(table: &ResultTable, name: &str) -> Result<Vec<Option<f64>>, String> {
    let at = table
        .schema
        .index_of(name)
        .map_err(|_| format!("the result has no column `{name}`"))?;
    let mut out = Vec::new();
    for b in &table.batches {
        let col = b.column(at);
        let any = col.as_any();
        for i in 0..col.len() {
            out.push(if col.is_null(i) {
                None
            } else if let Some(a) = any.downcast_ref::<UInt64Array>() {
                Some(a.value(i) as f64)
            } else if let Some(a) = any.downcast_ref::<Int64Array>() {
                Some(a.value(i) as f64)
            } else if let Some(a) = any.downcast_ref::<Float64Array>() {
                Some(a.value(i))
            } else if let Some(a) = any.downcast_ref::<UInt32Array>() {
                Some(f64::from(a.value(i)))
            } else {
                return Err(format!("column `{name}` is not numeric"));
            });
        }
    }
    Ok(out)
}

/// The values of column `name` by internal vertex id: each row goes to the vertex its `vertex`
/// column names (rows come in key order, internal ids may not).
pub fn vertex_column<S: GraphStore>(
    store: &S,
    table: &ResultTable,
    name: &str,
) -> Result<Vec<Option<f64>>, String> {
    let values = column(table, name)?;
    let vertices = column(table, "vertex")?;
    let n = store.shape().vertices as usize;
    if values.len() != n {
        return Err(format!("{} rows for {n} vertices", values.len()));
    }
    let mut out = vec![None; n];
    let mut seen = vec![false; n];
    for (value, id) in values.into_iter().zip(vertices) {
        let id = id.ok_or("a row without a vertex")? as u64;
        let v = store
            .internal_id(id)
            .ok_or_else(|| format!("a row for vertex {id}, which the graph does not have"))?;
        if std::mem::replace(&mut seen[v as usize], true) {
            return Err(format!("two rows for vertex {id}"));
        }
        out[v as usize] = value;
    }
    Ok(out)
}

/// Compares column `name` of `table` with `want` (by internal vertex id) vertex by vertex
/// (`close` decides equality) and names the first vertex (by input id) that differs.
pub fn compare<S: GraphStore>(
    store: &S,
    table: &ResultTable,
    name: &str,
    want: &[Option<f64>],
    close: impl Fn(f64, f64) -> bool,
) -> Result<(), String> {
    let got = vertex_column(store, table, name)?;
    if got.len() != want.len() {
        return Err(format!("{} rows for {} vertices", got.len(), want.len()));
    }
    for (v, (g, w)) in got.iter().zip(want).enumerate() {
        let same = match (g, w) {
            (Some(a), Some(b)) => close(*a, *b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            return Err(format!(
                "vertex {}: got {g:?}, expected {w:?}",
                store.input_id(v as u32)
            ));
        }
    }
    Ok(())
}

/// Equal up to a relative 1e-9 (sums added in another order).
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}
