//! The algorithm registry: the single source of truth for names, parameters (type, default,
//! range), output columns, per-vertex state and how each algorithm maps onto frontier
//! operators. Checks, tab completion, `HELP`, EXPLAIN, the executor's output schema and its
//! state placement all read it.

use crate::plan::AlgoCall;

/// The type of an output column (mapped to Arrow by the executor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    UInt64,
    Int64,
    UInt32,
    Float64,
    /// A vertex of the graph: UInt64 input ids, or Utf8 keys for a string-keyed graph.
    VertexKey,
}

impl ColumnType {
    /// The name users see.
    pub fn name(self) -> &'static str {
        match self {
            ColumnType::UInt64 => "UInt64",
            ColumnType::Int64 => "Int64",
            ColumnType::UInt32 => "UInt32",
            ColumnType::Float64 => "Float64",
            ColumnType::VertexKey => "vertex key",
        }
    }
}

/// One output column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnSpec {
    pub name: &'static str,
    pub ty: ColumnType,
    pub nullable: bool,
}

/// The type and valid range of a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// A whole number in `min..=max`.
    Int { min: u64, max: u64, default: u64 },
    /// A float in `min..=max`.
    Float { min: f64, max: f64, default: f64 },
}

/// One `key value` parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    pub doc: &'static str,
}

/// Whether `FROM vertex` is required, optional or not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceRule {
    Required,
    Optional,
    NotAccepted,
}

/// Everything the system knows about an algorithm before running it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlgorithmSpec {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: SourceRule,
    /// The parameter `ITER n` sets, if any.
    pub iter_param: Option<&'static str>,
    pub params: &'static [ParamSpec],
    pub columns: &'static [ColumnSpec],
    /// The operator program, one line per step, for EXPLAIN.
    pub operators: &'static [&'static str],
    /// Whether an iteration scans all edges (dense) rather than a frontier.
    pub dense: bool,
    /// Whether the algorithm reads edge weights.
    pub uses_weights: bool,
    /// Bytes of per-vertex state the kernel allocates through the run context: what decides,
    /// on a DM graph, whether that state stays local or goes to the memory nodes.
    pub state_bytes: u64,
    /// How the kernel passes over the edges when it does not follow EdgeMap's strategy rule
    /// (EXPLAIN's strategy line); `None` for EdgeMap and edge-reduce kernels.
    pub passes: Option<&'static str>,
}

impl AlgorithmSpec {
    /// The parameter called `name`, case-insensitively.
    pub fn param(&self, name: &str) -> Option<&'static ParamSpec> {
        self.params
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// The column called `name`, case-insensitively.
    pub fn column(&self, name: &str) -> Option<&'static ColumnSpec> {
        self.columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// `bfs FROM v`, `pagerank [ITER n=20] [damping d=0.85]`: the usage line of HELP.
    pub fn usage(&self) -> String {
        let mut s = self.name.to_string();
        match self.source {
            SourceRule::Required => s.push_str(" FROM vertex"),
            SourceRule::Optional => s.push_str(" [FROM vertex]"),
            SourceRule::NotAccepted => {}
        }
        for p in self.params {
            let default = match p.kind {
                ParamKind::Int { default, .. } => default.to_string(),
                ParamKind::Float { default, .. } => default.to_string(),
            };
            if Some(p.name) == self.iter_param {
                s.push_str(&format!(" [ITER n={default}]"));
            } else {
                s.push_str(&format!(" [{} {}={default}]", p.name, &p.name[..1]));
            }
        }
        s
    }
}

const VERTEX: ColumnSpec = ColumnSpec {
    name: "vertex",
    ty: ColumnType::VertexKey,
    nullable: false,
};

const ITERATIONS_MAX: u64 = 1_000_000;

/// Every algorithm frontier runs.
pub static ALGORITHMS: &[AlgorithmSpec] = &[
    AlgorithmSpec {
        name: "bfs",
        summary: "breadth-first search: hops from the source along out-edges",
        source: SourceRule::Required,
        iter_param: None,
        params: &[],
        columns: &[
            VERTEX,
            ColumnSpec {
                name: "depth",
                ty: ColumnType::Int64,
                nullable: true,
            },
        ],
        operators: &[
            "frontier := {source}",
            "repeat until the frontier is empty: frontier := EdgeMap(frontier, out, depth[v] unset => depth[v] := level+1)",
        ],
        dense: false,
        uses_weights: false,
        // depth (u32)
        state_bytes: 4,
        passes: None,
    },
    AlgorithmSpec {
        name: "pagerank",
        summary: "PageRank with dangling mass spread over all vertices (Graphalytics semantics)",
        source: SourceRule::NotAccepted,
        iter_param: Some("iter"),
        params: &[
            ParamSpec {
                name: "iter",
                kind: ParamKind::Int {
                    min: 1,
                    max: ITERATIONS_MAX,
                    default: 20,
                },
                doc: "iterations (run exactly, no convergence test)",
            },
            ParamSpec {
                name: "damping",
                kind: ParamKind::Float {
                    min: 0.0,
                    max: 1.0,
                    default: 0.85,
                },
                doc: "damping factor",
            },
        ],
        columns: &[
            VERTEX,
            ColumnSpec {
                name: "rank",
                ty: ColumnType::Float64,
                nullable: false,
            },
        ],
        operators: &[
            "rank := 1/|V| for all vertices",
            "repeat ITER times: VertexMap(all, contrib := rank/out_degree); EdgeMap(all, in, rank' := (1-d)/|V| + d*(sum contrib + sink mass/|V|))",
        ],
        dense: true,
        uses_weights: false,
        // rank, contribution and next rank (f64 each)
        state_bytes: 24,
        passes: None,
    },
    AlgorithmSpec {
        name: "wcc",
        summary: "weakly connected components, labelled by the smallest vertex id",
        source: SourceRule::NotAccepted,
        iter_param: None,
        params: &[],
        columns: &[
            VERTEX,
            ColumnSpec {
                name: "component",
                ty: ColumnType::VertexKey,
                nullable: false,
            },
        ],
        operators: &[
            "union-find over out- and in-edges (directions ignored); with remote state, min-label propagation: EdgeMap(frontier, out+in, label[v] := min(label[v], label[u]))",
            "VertexMap(all, component := smallest input id of the root's set)",
        ],
        dense: true,
        uses_weights: false,
        // parent (u32) and smallest id per root (u64)
        state_bytes: 12,
        passes: Some(
            "union-find passes (PROFILE: link sample, link); with remote state, min-label push rounds (push remote)",
        ),
    },
    AlgorithmSpec {
        name: "sssp",
        summary: "single-source shortest paths over out-edges (weight 1 on unweighted graphs)",
        source: SourceRule::Required,
        iter_param: None,
        params: &[],
        columns: &[
            VERTEX,
            ColumnSpec {
                name: "distance",
                ty: ColumnType::Float64,
                nullable: true,
            },
        ],
        operators: &[
            "frontier := {source}, distance[source] := 0",
            "repeat until the frontier is empty: frontier := EdgeMap(frontier, out, relax distance[v] := min(distance[v], distance[u] + w))",
            "(in memory under mode auto, with non-negative weights: delta-stepping, the frontier being the lowest non-empty bin of distance width delta = mean weight / (4 x average degree))",
        ],
        dense: false,
        uses_weights: true,
        // distance (f64)
        state_bytes: 8,
        passes: None,
    },
    AlgorithmSpec {
        name: "cdlp",
        summary: "community detection by synchronous label propagation (Graphalytics semantics)",
        source: SourceRule::NotAccepted,
        iter_param: Some("iter"),
        params: &[ParamSpec {
            name: "iter",
            kind: ParamKind::Int {
                min: 1,
                max: ITERATIONS_MAX,
                default: 10,
            },
            doc: "iterations (run exactly)",
        }],
        columns: &[
            VERTEX,
            ColumnSpec {
                name: "label",
                ty: ColumnType::VertexKey,
                nullable: false,
            },
        ],
        operators: &[
            "label := own id",
            "repeat ITER times: EdgeMap(all, in+out, label' := most frequent neighbour label, ties to the smallest)",
        ],
        dense: true,
        uses_weights: false,
        // label and next label (u64 each)
        state_bytes: 16,
        passes: None,
    },
    AlgorithmSpec {
        name: "lcc",
        summary: "local clustering coefficient",
        source: SourceRule::NotAccepted,
        iter_param: None,
        params: &[],
        columns: &[
            VERTEX,
            ColumnSpec {
                name: "coefficient",
                ty: ColumnType::Float64,
                nullable: false,
            },
        ],
        operators: &["VertexMap(all, N(v) := in ∪ out; count arcs among N(v) by list intersection)"],
        dense: true,
        uses_weights: false,
        // coefficient (f64) and arc count (u64)
        state_bytes: 16,
        passes: None,
    },
    AlgorithmSpec {
        name: "randomwalk",
        summary: "random walks; the same SEED gives the same walks whatever the thread count",
        source: SourceRule::Optional,
        iter_param: None,
        params: &[
            ParamSpec {
                name: "walks",
                kind: ParamKind::Int {
                    min: 1,
                    max: 1_000_000_000,
                    default: 1000,
                },
                doc: "number of walks",
            },
            ParamSpec {
                name: "length",
                kind: ParamKind::Int {
                    min: 0,
                    max: 1_000_000,
                    default: 80,
                },
                doc: "steps per walk (a walk ends early at a vertex with no out-edges)",
            },
            ParamSpec {
                name: "seed",
                kind: ParamKind::Int {
                    min: 0,
                    max: u64::MAX,
                    default: 0,
                },
                doc: "random seed",
            },
        ],
        columns: &[
            ColumnSpec {
                name: "walk",
                ty: ColumnType::UInt64,
                nullable: false,
            },
            ColumnSpec {
                name: "step",
                ty: ColumnType::UInt32,
                nullable: false,
            },
            ColumnSpec {
                name: "vertex",
                ty: ColumnType::VertexKey,
                nullable: false,
            },
        ],
        operators: &[
            "walkers := WALKS start vertices (FROM, or drawn with SEED)",
            "repeat LENGTH times: EdgeMap(walkers, out, step to a neighbour drawn from (SEED, walk, step))",
        ],
        dense: false,
        uses_weights: false,
        // none: walkers and paths are result rows
        state_bytes: 0,
        passes: None,
    },
    AlgorithmSpec {
        name: "dfs",
        summary: "parallel pseudo-DFS (CAVE): discovery order and a discovering parent",
        source: SourceRule::Required,
        iter_param: None,
        params: &[],
        columns: &[
            VERTEX,
            ColumnSpec {
                name: "discovered",
                ty: ColumnType::UInt64,
                nullable: true,
            },
            ColumnSpec {
                name: "parent",
                ty: ColumnType::VertexKey,
                nullable: true,
            },
        ],
        operators: &[
            "stacks := [{source}]",
            "per thread: pop, EdgeMap(v, out, claim undiscovered neighbours); split a stack above the threshold to idle threads",
        ],
        dense: false,
        uses_weights: false,
        // parent (u32) and discovery number (u64)
        state_bytes: 12,
        passes: None,
    },
    AlgorithmSpec {
        name: "degree",
        summary: "out- and in-degree of every vertex",
        source: SourceRule::NotAccepted,
        iter_param: None,
        params: &[],
        columns: &[
            VERTEX,
            ColumnSpec {
                name: "out_degree",
                ty: ColumnType::UInt64,
                nullable: false,
            },
            ColumnSpec {
                name: "in_degree",
                ty: ColumnType::UInt64,
                nullable: false,
            },
        ],
        operators: &["VertexMap(all, read the vertex index; no edge data)"],
        dense: false,
        uses_weights: false,
        // none
        state_bytes: 0,
        passes: None,
    },
];

/// The algorithm `call` runs.
pub fn spec_of(call: &AlgoCall) -> &'static AlgorithmSpec {
    let name = match call {
        AlgoCall::Bfs { .. } => "bfs",
        AlgoCall::PageRank { .. } => "pagerank",
        AlgoCall::Wcc => "wcc",
        AlgoCall::Sssp { .. } => "sssp",
        AlgoCall::Cdlp { .. } => "cdlp",
        AlgoCall::Lcc => "lcc",
        AlgoCall::RandomWalk { .. } => "randomwalk",
        AlgoCall::Dfs { .. } => "dfs",
        AlgoCall::Degree => "degree",
    };
    // Every call has an entry (`every_call_has_a_spec`).
    algorithm(name).unwrap_or(&ALGORITHMS[0])
}

/// The algorithm called `name`, case-insensitively.
pub fn algorithm(name: &str) -> Option<&'static AlgorithmSpec> {
    ALGORITHMS
        .iter()
        .find(|a| a.name.eq_ignore_ascii_case(name))
}

/// Algorithm names, for completion and suggestions.
pub fn algorithm_names() -> impl Iterator<Item = &'static str> {
    ALGORITHMS.iter().map(|a| a.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_has_a_spec() {
        let calls = [
            AlgoCall::Bfs { source: 0 },
            AlgoCall::PageRank {
                iterations: 1,
                damping: 0.5,
            },
            AlgoCall::Wcc,
            AlgoCall::Sssp { source: 0 },
            AlgoCall::Cdlp { iterations: 1 },
            AlgoCall::Lcc,
            AlgoCall::RandomWalk {
                start: None,
                walks: 1,
                length: 1,
                seed: 0,
            },
            AlgoCall::Dfs { source: 0 },
            AlgoCall::Degree,
        ];
        let names: Vec<&str> = calls.iter().map(|c| spec_of(c).name).collect();
        assert_eq!(names, algorithm_names().collect::<Vec<_>>());
    }

    #[test]
    fn every_algorithm_has_a_vertex_column_and_unique_names() {
        for a in ALGORITHMS {
            assert!(a.column("vertex").is_some(), "{}", a.name);
            let mut names: Vec<_> = a.columns.iter().map(|c| c.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), a.columns.len(), "{}", a.name);
            if let Some(p) = a.iter_param {
                assert!(a.param(p).is_some(), "{}", a.name);
            }
        }
        assert_eq!(algorithm("PageRank").unwrap().name, "pagerank");
    }

    #[test]
    fn usage_lines_read_well() {
        assert_eq!(algorithm("bfs").unwrap().usage(), "bfs FROM vertex");
        assert_eq!(
            algorithm("pagerank").unwrap().usage(),
            "pagerank [ITER n=20] [damping d=0.85]"
        );
    }
}
