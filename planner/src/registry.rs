//! What an algorithm is before it runs: the description every kernel declares beside its code
//! (`exec/src/algorithms/*.rs`) and hands to the planner through a [`Registry`]. The planner
//! knows no algorithm by name: its checks, EXPLAIN, HELP, completion, the output schema, the
//! state placement and the memory estimate are all derived from these declarations.

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

    /// The Arrow type as HELP shows it to users: a vertex column's type depends on the graph.
    pub fn help_name(self) -> &'static str {
        match self {
            ColumnType::VertexKey => "UInt64 (Utf8 on graphs with string keys)",
            other => other.name(),
        }
    }

    /// Bytes per value in an Arrow array (a string key's own bytes are counted apart, from
    /// the graph's key bytes).
    pub fn bytes(self) -> u64 {
        match self {
            ColumnType::UInt32 => 4,
            ColumnType::UInt64 | ColumnType::Int64 | ColumnType::Float64 => 8,
            ColumnType::VertexKey => 8,
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

impl ColumnSpec {
    /// A column that always has a value.
    pub const fn new(name: &'static str, ty: ColumnType) -> ColumnSpec {
        ColumnSpec {
            name,
            ty,
            nullable: false,
        }
    }

    /// A column that may be null (an unreached vertex, say).
    pub const fn nullable(name: &'static str, ty: ColumnType) -> ColumnSpec {
        ColumnSpec {
            name,
            ty,
            nullable: true,
        }
    }

    /// The row's vertex as the input names it, the first column of per-vertex results.
    pub const VERTEX: ColumnSpec = ColumnSpec::new("vertex", ColumnType::VertexKey);
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

impl ParamSpec {
    /// A whole-number parameter.
    pub const fn int(
        name: &'static str,
        min: u64,
        max: u64,
        default: u64,
        doc: &'static str,
    ) -> ParamSpec {
        ParamSpec {
            name,
            kind: ParamKind::Int { min, max, default },
            doc,
        }
    }

    /// A real-number parameter.
    pub const fn float(
        name: &'static str,
        min: f64,
        max: f64,
        default: f64,
        doc: &'static str,
    ) -> ParamSpec {
        ParamSpec {
            name,
            kind: ParamKind::Float { min, max, default },
            doc,
        }
    }

    /// The value used when the statement does not give one.
    pub fn default_value(&self) -> ParamValue {
        match self.kind {
            ParamKind::Int { default, .. } => ParamValue::Int(default),
            ParamKind::Float { default, .. } => ParamValue::Float(default),
        }
    }
}

/// A checked parameter value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamValue {
    Int(u64),
    Float(f64),
}

impl From<u64> for ParamValue {
    fn from(n: u64) -> ParamValue {
        ParamValue::Int(n)
    }
}

impl From<f64> for ParamValue {
    fn from(x: f64) -> ParamValue {
        ParamValue::Float(x)
    }
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Int(n) => write!(f, "{n}"),
            ParamValue::Float(x) => write!(f, "{x}"),
        }
    }
}

/// A scalar a run reports besides its rows (Louvain's modularity, the total triangle count):
/// shown on RUN's status line and PROFILE's caption, written into Parquet and Arrow IPC files
/// as `frontier.<algorithm>.<name>` metadata, and listed by HELP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummarySpec {
    pub name: &'static str,
    /// `UInt64` or `Float64`.
    pub ty: ColumnType,
    pub doc: &'static str,
}

impl SummarySpec {
    /// A summary called `name` of type `ty`.
    pub const fn new(name: &'static str, ty: ColumnType, doc: &'static str) -> SummarySpec {
        SummarySpec { name, ty, doc }
    }
}

/// How an algorithm that sums over sources (betweenness) picks them when its `samples`
/// parameter is 0, its default: every vertex, the exact result, when the work |V|·|E| is at
/// most `exact_work`; else `sampled` sources, an estimate. The planner (EXPLAIN) and the
/// kernel both read it here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleRule {
    /// The largest |V|·|E| (input edges) computed exactly by default.
    pub exact_work: u64,
    /// The sources drawn when the graph is larger.
    pub sampled: u64,
}

impl SampleRule {
    /// The sources a run with `samples` draws on a graph of `vertices` and `edges`: `samples`
    /// itself unless it is 0; at least `vertices` means every vertex (exact).
    pub fn sources(&self, samples: u64, vertices: u64, edges: u64) -> u64 {
        if samples > 0 {
            samples
        } else if self.exact_by_default(vertices, edges) {
            vertices
        } else {
            self.sampled
        }
    }

    /// Whether a graph of `vertices` and `edges` is small enough to be exact by default.
    pub fn exact_by_default(&self, vertices: u64, edges: u64) -> bool {
        vertices.saturating_mul(edges) <= self.exact_work
    }
}

/// Whether `FROM vertex` is required, optional or not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceRule {
    Required,
    Optional,
    NotAccepted,
}

/// The operators of the executor a kernel is written against. The run context records every
/// one a kernel calls, and a test holds each algorithm's declared program to those records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// Push or pull along the edges of a frontier, with claims or min-updates.
    EdgeMap,
    /// `out[v] = f(Σ values over v's in-neighbours)`.
    EdgeReduceSum,
    /// `out[v]` = the most frequent value among v's neighbours.
    EdgeReduceMode,
    /// A function applied to every vertex, or from one vertex array into another.
    VertexMap,
    /// Fetch the lists of given vertices.
    ListFetch,
    /// Count the arcs among every vertex's neighbours.
    NeighbourIntersect,
    /// Union-find linking over every edge.
    Link,
    /// Delta-stepping over distance bins, in memory.
    DeltaStepping,
}

impl Operator {
    /// Every operator, in a fixed order (the bit order of the run context's record).
    pub const ALL: [Operator; 8] = [
        Operator::EdgeMap,
        Operator::EdgeReduceSum,
        Operator::EdgeReduceMode,
        Operator::VertexMap,
        Operator::ListFetch,
        Operator::NeighbourIntersect,
        Operator::Link,
        Operator::DeltaStepping,
    ];

    /// The name EXPLAIN and PROFILE print.
    pub fn name(self) -> &'static str {
        match self {
            Operator::EdgeMap => "EdgeMap",
            Operator::EdgeReduceSum => "EdgeReduce(sum)",
            Operator::EdgeReduceMode => "EdgeReduce(mode)",
            Operator::VertexMap => "VertexMap",
            Operator::ListFetch => "ListFetch",
            Operator::NeighbourIntersect => "NeighbourIntersect",
            Operator::Link => "Link",
            Operator::DeltaStepping => "DeltaStepping",
        }
    }

    /// This operator's bit in a set of operators.
    pub fn bit(self) -> u32 {
        1 << Operator::ALL.iter().position(|&o| o == self).unwrap_or(0)
    }
}

/// One line of an algorithm's program, as EXPLAIN prints it: the operator it calls (none for a
/// set-up line) and what it does there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub op: Option<Operator>,
    pub what: &'static str,
}

impl Step {
    /// A line that calls `op`.
    pub const fn call(op: Operator, what: &'static str) -> Step {
        Step { op: Some(op), what }
    }

    /// A line that sets state up without an operator.
    pub const fn setup(what: &'static str) -> Step {
        Step { op: None, what }
    }

    /// The line as EXPLAIN prints it.
    pub fn text(&self) -> String {
        match self.op {
            Some(Operator::EdgeReduceSum) => format!("EdgeReduce(sum: {})", self.what),
            Some(Operator::EdgeReduceMode) => format!("EdgeReduce(mode: {})", self.what),
            Some(op) => format!("{}({})", op.name(), self.what),
            None => self.what.to_string(),
        }
    }
}

/// How many rows a result has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// One per vertex.
    PerVertex,
    /// One per step and start of every walk: `count × (length + 1)`, both parameters.
    PerWalkStep {
        count: &'static str,
        length: &'static str,
    },
}

/// Everything the system knows about an algorithm before running it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlgorithmSpec {
    pub name: &'static str,
    pub summary: &'static str,
    /// What exactly the result means, for `HELP algorithm`: the definition followed, how
    /// weights, directions and unreached vertices are treated.
    pub semantics: &'static str,
    /// A statement that shows the algorithm at work, for `HELP algorithm`.
    pub example: &'static str,
    pub source: SourceRule,
    /// The parameter `ITER n` sets, if any.
    pub iter_param: Option<&'static str>,
    pub params: &'static [ParamSpec],
    pub columns: &'static [ColumnSpec],
    pub rows: Rows,
    /// The program, one line per step, in the operators the kernel calls.
    pub program: &'static [Step],
    /// Whether an iteration scans all edges (dense) rather than a frontier.
    pub dense: bool,
    /// Whether the algorithm reads edge weights.
    pub uses_weights: bool,
    /// Whether a negative weight makes the answer wrong (the run is refused).
    pub needs_nonnegative_weights: bool,
    /// Bytes of per-vertex state the kernel allocates through the run context: what decides,
    /// on a DM graph, whether that state stays local or goes to the memory nodes.
    pub state_bytes: u64,
    /// How the kernel passes over the edges when it does not follow EdgeMap's strategy rule
    /// (EXPLAIN's strategy line); `None` for EdgeMap and edge-reduce kernels.
    pub passes: Option<&'static str>,
    /// The scalars a run reports besides its rows, in the order they are shown.
    pub summaries: &'static [SummarySpec],
    /// Whether the operators can split the kernel's work over several compute nodes
    /// (`SET compute_nodes`); the others run on one.
    pub splits: bool,
    /// How the `samples` parameter's default 0 picks the sources, for algorithms that sum over
    /// sources and are exact on small graphs.
    pub sample_rule: Option<SampleRule>,
}

impl AlgorithmSpec {
    /// The fields most algorithms share, for `..AlgorithmSpec::BASE`: no FROM, no parameters,
    /// one row per vertex, frontier-driven, unweighted, no per-vertex state.
    pub const BASE: AlgorithmSpec = AlgorithmSpec {
        name: "",
        summary: "",
        semantics: "",
        example: "",
        source: SourceRule::NotAccepted,
        iter_param: None,
        params: &[],
        columns: &[],
        rows: Rows::PerVertex,
        program: &[],
        dense: false,
        uses_weights: false,
        needs_nonnegative_weights: false,
        state_bytes: 0,
        passes: None,
        summaries: &[],
        splits: false,
        sample_rule: None,
    };
}

/// Working memory per vertex of a kernel that keeps frontiers: the current and the next one,
/// each a list entry or a bitmap bit, plus EdgeMap's per-vertex scratch.
const FRONTIER_BYTES: u64 = 16;

impl AlgorithmSpec {
    /// The parameter called `name`, case-insensitively.
    pub fn param(&self, name: &str) -> Option<&'static ParamSpec> {
        self.params
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// The summary called `name`.
    pub fn summary(&self, name: &str) -> Option<&'static SummarySpec> {
        self.summaries.iter().find(|s| s.name == name)
    }

    /// The column called `name`, case-insensitively.
    pub fn column(&self, name: &str) -> Option<&'static ColumnSpec> {
        self.columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Whether the program calls `op`.
    pub fn uses(&self, op: Operator) -> bool {
        self.program.iter().any(|s| s.op == Some(op))
    }

    /// Whether any step reads edges (every operator but VertexMap does).
    pub fn reads_edges(&self) -> bool {
        self.program
            .iter()
            .any(|s| s.op.is_some_and(|op| op != Operator::VertexMap))
    }

    /// The operators the program calls, as a bit set (see [`Operator::bit`]).
    pub fn operator_bits(&self) -> u32 {
        self.program
            .iter()
            .filter_map(|s| s.op)
            .fold(0, |bits, op| bits | op.bit())
    }

    /// Bytes of one result row.
    pub fn row_bytes(&self) -> u64 {
        self.columns
            .iter()
            .map(|c| c.ty.bytes() + u64::from(c.nullable))
            .sum()
    }

    /// Bytes a run of this algorithm alone holds per vertex: its working state and its result.
    pub fn bytes_per_vertex(&self) -> u64 {
        self.working_bytes_per_vertex() + self.result_bytes_per_vertex()
    }

    /// Bytes per vertex the kernel holds only while it runs: its state and, when it keeps them,
    /// its frontiers. Freed before the next algorithm of a RUN starts.
    pub fn working_bytes_per_vertex(&self) -> u64 {
        // Walkers fetch lists too, but hold positions per walk (rows), not per vertex.
        let frontier = self.uses(Operator::EdgeMap)
            || (self.uses(Operator::ListFetch) && self.rows == Rows::PerVertex);
        self.state_bytes + if frontier { FRONTIER_BYTES } else { 0 }
    }

    /// Bytes per vertex of the result when there is one row per vertex: kept until the RUN ends.
    pub fn result_bytes_per_vertex(&self) -> u64 {
        if self.rows == Rows::PerVertex {
            self.row_bytes()
        } else {
            0
        }
    }

    /// `bfs FROM vertex`, `pagerank [ITER n=20] [damping d=0.85]`: the usage line of HELP.
    pub fn usage(&self) -> String {
        let mut s = self.name.to_string();
        match self.source {
            SourceRule::Required => s.push_str(" FROM vertex"),
            SourceRule::Optional => s.push_str(" [FROM vertex]"),
            SourceRule::NotAccepted => {}
        }
        for p in self.params {
            let default = p.default_value();
            if Some(p.name) == self.iter_param {
                s.push_str(&format!(" [ITER n={default}]"));
            } else {
                s.push_str(&format!(" [{} {}={default}]", p.name, &p.name[..1]));
            }
        }
        s
    }
}

/// The algorithms a session can run, as the executor registers them.
#[derive(Debug, Clone, Copy)]
pub struct Registry {
    algorithms: &'static [&'static AlgorithmSpec],
}

impl Registry {
    /// A registry of `algorithms`, in the order HELP lists them.
    pub const fn new(algorithms: &'static [&'static AlgorithmSpec]) -> Registry {
        Registry { algorithms }
    }

    /// The algorithm called `name`, case-insensitively.
    pub fn get(&self, name: &str) -> Option<&'static AlgorithmSpec> {
        self.algorithms
            .iter()
            .copied()
            .find(|a| a.name.eq_ignore_ascii_case(name))
    }

    /// Every algorithm, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &'static AlgorithmSpec> {
        self.algorithms.iter().copied()
    }

    /// Algorithm names, for completion and suggestions.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        self.algorithms.iter().map(|a| a.name)
    }
}

/// Checks the declarations the rest of the system relies on: unique names, a `vertex` column
/// for per-vertex results, unique column names, the ITER parameter among the parameters, walk
/// rows naming integer parameters. The executor's tests run it over its registry.
pub fn check_declarations(registry: &Registry) -> Result<(), String> {
    let mut names: Vec<&str> = registry.names().collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("algorithm `{}` is registered twice", w[0]));
    }
    for a in registry.iter() {
        let mut columns: Vec<&str> = a.columns.iter().map(|c| c.name).collect();
        columns.sort_unstable();
        columns.dedup();
        if columns.len() != a.columns.len() {
            return Err(format!("{}: two columns share a name", a.name));
        }
        if a.column("vertex").is_none() {
            return Err(format!("{}: no `vertex` column", a.name));
        }
        if let Some(p) = a.iter_param {
            if a.param(p).is_none() {
                return Err(format!(
                    "{}: ITER sets `{p}`, which is no parameter",
                    a.name
                ));
            }
        }
        for (i, summary) in a.summaries.iter().enumerate() {
            if !matches!(summary.ty, ColumnType::UInt64 | ColumnType::Float64) {
                return Err(format!(
                    "{}: summary `{}` is neither UInt64 nor Float64",
                    a.name, summary.name
                ));
            }
            if a.summaries[..i].iter().any(|s| s.name == summary.name) {
                return Err(format!("{}: two summaries share a name", a.name));
            }
        }
        if a.sample_rule.is_some()
            && !matches!(
                a.param("samples").map(|p| p.kind),
                Some(ParamKind::Int {
                    min: 0,
                    default: 0,
                    ..
                })
            )
        {
            return Err(format!(
                "{}: a sample rule needs an integer `samples` parameter defaulting to 0",
                a.name
            ));
        }
        if let Rows::PerWalkStep { count, length } = a.rows {
            for p in [count, length] {
                if !matches!(a.param(p).map(|p| p.kind), Some(ParamKind::Int { .. })) {
                    return Err(format!(
                        "{}: rows count `{p}`, no integer parameter",
                        a.name
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A breadth-first search as a kernel would declare it.
    pub static BFS: AlgorithmSpec = AlgorithmSpec {
        name: "bfs",
        summary: "hops from the source",
        semantics: "",
        example: "",
        source: SourceRule::Required,
        iter_param: None,
        params: &[],
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::nullable("depth", ColumnType::Int64),
        ],
        rows: Rows::PerVertex,
        program: &[
            Step::setup("frontier := {source}"),
            Step::call(Operator::EdgeMap, "frontier, out, claim depth"),
        ],
        dense: false,
        uses_weights: false,
        needs_nonnegative_weights: false,
        state_bytes: 4,
        passes: None,
        summaries: &[],
        splits: false,
        sample_rule: None,
    };

    /// A PageRank as a kernel would declare it.
    pub static PAGERANK: AlgorithmSpec = AlgorithmSpec {
        name: "pagerank",
        summary: "PageRank",
        semantics: "",
        example: "",
        source: SourceRule::NotAccepted,
        iter_param: Some("iter"),
        params: &[
            ParamSpec::int("iter", 1, 1_000_000, 20, "iterations"),
            ParamSpec::float("damping", 0.0, 1.0, 0.85, "damping factor"),
        ],
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("rank", ColumnType::Float64),
        ],
        rows: Rows::PerVertex,
        program: &[Step::call(Operator::EdgeReduceSum, "in, rank")],
        dense: true,
        uses_weights: false,
        needs_nonnegative_weights: false,
        state_bytes: 24,
        passes: None,
        summaries: &[],
        splits: false,
        sample_rule: None,
    };

    /// A weighted shortest-path search, refusing negative weights.
    pub static SSSP: AlgorithmSpec = AlgorithmSpec {
        name: "sssp",
        summary: "shortest paths",
        semantics: "",
        example: "",
        source: SourceRule::Required,
        iter_param: None,
        params: &[],
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::nullable("distance", ColumnType::Float64),
        ],
        rows: Rows::PerVertex,
        program: &[Step::call(Operator::EdgeMap, "relax")],
        dense: false,
        uses_weights: true,
        needs_nonnegative_weights: true,
        state_bytes: 8,
        passes: None,
        summaries: &[],
        splits: false,
        sample_rule: None,
    };

    /// Walks, one row per step.
    pub static WALK: AlgorithmSpec = AlgorithmSpec {
        name: "randomwalk",
        summary: "walks",
        semantics: "",
        example: "",
        source: SourceRule::Optional,
        iter_param: None,
        params: &[
            ParamSpec::int("walks", 1, 1_000_000_000, 1000, "walks"),
            ParamSpec::int("length", 0, 1_000_000, 80, "steps"),
            ParamSpec::int("seed", 0, u64::MAX, 0, "seed"),
        ],
        columns: &[
            ColumnSpec::new("walk", ColumnType::UInt64),
            ColumnSpec::new("step", ColumnType::UInt32),
            ColumnSpec::VERTEX,
        ],
        rows: Rows::PerWalkStep {
            count: "walks",
            length: "length",
        },
        program: &[Step::call(Operator::ListFetch, "walkers' vertices, out")],
        dense: false,
        uses_weights: false,
        needs_nonnegative_weights: false,
        state_bytes: 0,
        passes: None,
        summaries: &[],
        splits: false,
        sample_rule: None,
    };

    /// Components by union-find, no parameters.
    pub static WCC: AlgorithmSpec = AlgorithmSpec {
        name: "wcc",
        summary: "components",
        semantics: "",
        example: "",
        source: SourceRule::NotAccepted,
        iter_param: None,
        params: &[],
        columns: &[
            ColumnSpec::VERTEX,
            ColumnSpec::new("component", ColumnType::UInt64),
        ],
        rows: Rows::PerVertex,
        program: &[Step::call(Operator::Link, "every edge")],
        dense: true,
        uses_weights: false,
        needs_nonnegative_weights: false,
        state_bytes: 12,
        passes: Some("union-find passes"),
        summaries: &[],
        splits: false,
        sample_rule: None,
    };

    /// A registry of the test declarations.
    pub static REGISTRY: Registry = Registry::new(&[&BFS, &PAGERANK, &SSSP, &WALK, &WCC]);

    #[test]
    fn the_test_declarations_are_consistent_and_found_by_any_case() {
        check_declarations(&REGISTRY).unwrap();
        assert_eq!(REGISTRY.get("PageRank").unwrap().name, "pagerank");
        assert!(REGISTRY.get("nope").is_none());
    }

    #[test]
    fn broken_declarations_are_named() {
        static NO_VERTEX: AlgorithmSpec = AlgorithmSpec {
            columns: &[ColumnSpec::new("x", ColumnType::UInt64)],
            ..BFS
        };
        static R1: Registry = Registry::new(&[&NO_VERTEX]);
        let e = check_declarations(&R1).unwrap_err();
        assert!(e.contains("no `vertex` column"), "{e}");
        static R2: Registry = Registry::new(&[&BFS, &BFS]);
        let e = check_declarations(&R2).unwrap_err();
        assert!(e.contains("registered twice"), "{e}");
        static BAD_ITER: AlgorithmSpec = AlgorithmSpec {
            iter_param: Some("rounds"),
            ..PAGERANK
        };
        static R3: Registry = Registry::new(&[&BAD_ITER]);
        let e = check_declarations(&R3).unwrap_err();
        assert!(e.contains("`rounds`"), "{e}");
    }

    #[test]
    fn usage_lines_read_well() {
        assert_eq!(BFS.usage(), "bfs FROM vertex");
        assert_eq!(PAGERANK.usage(), "pagerank [ITER n=20] [damping d=0.85]");
    }

    #[test]
    fn per_vertex_bytes_add_state_frontiers_and_the_row() {
        // depth 4 B + frontiers 16 B + vertex 8 B + depth 8 B and a validity byte
        assert_eq!(BFS.bytes_per_vertex(), 4 + 16 + 8 + 9);
        // rank state 24 B, no frontier, row 16 B
        assert_eq!(PAGERANK.bytes_per_vertex(), 24 + 16);
        // walks: rows are counted per step, not per vertex
        assert_eq!(WALK.bytes_per_vertex(), 0);
        assert_eq!(WALK.row_bytes(), 20);
    }

    #[test]
    fn operator_bits_follow_the_program() {
        assert!(BFS.uses(Operator::EdgeMap));
        assert!(!BFS.uses(Operator::Link));
        assert_eq!(BFS.operator_bits(), Operator::EdgeMap.bit());
        assert_eq!(
            Step::call(Operator::EdgeMap, "x").text(),
            "EdgeMap(x)".to_string()
        );
    }
}
