//! A vertex as the user wrote it (`FROM 42`, `FROM 'alice'`, `FROM 9223372036854775813`)
//! resolved to an internal id, against the graph's integer ids or its string keys.

use grammar::{Literal, Value};
use storage::blockfile::keys::VertexKeys;
use storage::catalog::GraphMeta;

use crate::error::PlanError;
use crate::settings::describe;
use crate::suggest::nearest;

/// How to find a graph's vertices.
pub struct Vertices<'a> {
    /// The internal id of an integer input id (the graph's id map).
    pub by_id: &'a dyn Fn(u64) -> Option<u32>,
    /// The graph's string keys, when it has them.
    pub keys: Option<&'a VertexKeys>,
}

/// Keys compared for "did you mean": every key of a graph this small, ...
const SUGGEST_ALL_BELOW: u32 = 4096;
/// ... else the keys this close in sorted order.
const SUGGEST_AROUND: u32 = 32;

/// A resolved vertex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub internal: u32,
    /// The vertex as results show it: its id or key.
    pub shown: String,
    /// Its integer input id, when the graph has integer ids.
    pub input_id: Option<u64>,
}

/// Resolves `lit` to a vertex of `graph`, or says why it cannot (with a suggestion for a
/// misspelt string key).
pub fn resolve_vertex(
    lit: &Literal,
    graph: &GraphMeta,
    vertices: &Vertices<'_>,
) -> Result<Resolved, PlanError> {
    let err = |m: String| PlanError::new(lit.pos, m);
    match vertices.keys {
        None => {
            let id = match &lit.value {
                Value::Int(n) if *n >= 0 => *n as u64,
                Value::BigInt(n) => *n,
                Value::Str(s) => s.parse::<u64>().map_err(|_| {
                    err(format!(
                        "graph `{}` has integer vertex ids; '{s}' is not one",
                        graph.name
                    ))
                })?,
                other => {
                    return Err(err(format!(
                        "FROM expects a vertex id (a whole number ≥ 0), got {}",
                        describe(other)
                    )))
                }
            };
            let internal = (vertices.by_id)(id).ok_or_else(|| {
                err(format!(
                    "vertex {id} is not a vertex of graph `{}`",
                    graph.name
                ))
            })?;
            Ok(Resolved {
                internal,
                shown: id.to_string(),
                input_id: Some(id),
            })
        }
        Some(keys) => {
            let key = match &lit.value {
                Value::Str(s) | Value::Word(s) => s.clone(),
                Value::Int(n) => n.to_string(),
                Value::BigInt(n) => n.to_string(),
                other => {
                    return Err(err(format!(
                        "FROM expects a vertex key such as 'alice' (graph `{}` has string keys), got {}",
                        graph.name,
                        describe(other)
                    )))
                }
            };
            let store = |e: storage::StoreError| {
                err(format!("reading the keys of graph `{}`: {e}", graph.name))
            };
            // The key's rank is the vertex's input id, which the id map turns into its
            // internal id (the same number unless the graph is in degree order).
            match keys
                .find(&key)
                .map_err(store)?
                .and_then(|rank| (vertices.by_id)(rank as u64))
            {
                Some(internal) => Ok(Resolved {
                    internal,
                    shown: key,
                    input_id: None,
                }),
                None => {
                    let near = keys
                        .near(&key, SUGGEST_AROUND, SUGGEST_ALL_BELOW)
                        .map_err(store)?;
                    let hint = nearest(&key, near.iter().map(String::as_str))
                        .map(|k| format!(" (did you mean '{k}'?)"))
                        .unwrap_or_default();
                    Err(err(format!(
                        "vertex '{key}' is not a vertex of graph `{}`{hint}",
                        graph.name
                    )))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grammar::Pos;

    fn graph() -> GraphMeta {
        GraphMeta {
            name: "web".into(),
            file: "graphs/web-1.fgraph".into(),
            format_version: 3,
            vertices: 3,
            edges: 2,
            arcs: 2,
            directed: true,
            weighted: false,
            source: "x".into(),
            created_at: 0,
            storage: storage::catalog::StorageKind::Blockfile,
            file_bytes: 1,
            memory_nodes: vec![],
            extra: None,
            file_id: None,
            import: Default::default(),
            key_bytes: 0,
        }
    }

    fn lit(value: Value) -> Literal {
        Literal {
            value,
            pos: Pos { line: 1, col: 20 },
        }
    }

    #[test]
    fn integer_graphs_take_ids_up_to_2_pow_64_and_numeric_strings() {
        let big = (1u64 << 63) + 5;
        let by_id = move |id: u64| [1, 7, big].iter().position(|&x| x == id).map(|i| i as u32);
        let v = Vertices {
            by_id: &by_id,
            keys: None,
        };
        let g = graph();
        assert_eq!(
            resolve_vertex(&lit(Value::BigInt(big)), &g, &v).unwrap(),
            Resolved {
                internal: 2,
                shown: big.to_string(),
                input_id: Some(big)
            }
        );
        assert_eq!(
            resolve_vertex(&lit(Value::Str("7".into())), &g, &v)
                .unwrap()
                .internal,
            1
        );
        for (value, want) in [
            (Value::Int(-1), "a whole number ≥ 0"),
            (Value::Int(2), "vertex 2 is not a vertex of graph `web`"),
            (
                Value::Str("alice".into()),
                "integer vertex ids; 'alice' is not one",
            ),
        ] {
            let e = resolve_vertex(&lit(value), &g, &v).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
        }
    }
}
