//! Semantic checks of a RUN statement against the registry, the graph and the settings, and the
//! resulting [`RunPlan`].

use std::path::PathBuf;

use grammar::{AlgorithmCall, Expr, Ident, Literal, OutputFormat, Pos, Run, Value};
use storage::catalog::GraphMeta;

use crate::columns::{self, OutputColumn};
use crate::condition;
use crate::error::PlanError;
use crate::plan::{AlgoCall, Mode};
use crate::registry::{AlgorithmSpec, Operator, ParamKind, ParamValue, Registry, Rows, SourceRule};
use crate::result_clauses::{self, OrderKey, Projection};
use crate::settings::{describe, Settings};
use crate::suggest::did_you_mean;
use crate::vertex::{resolve_vertex, Vertices};

/// One checked algorithm of a RUN.
#[derive(Debug, Clone, PartialEq)]
pub struct CallPlan {
    pub call: AlgoCall,
    /// Parameter values after defaults, as text (for EXPLAIN and Parquet metadata).
    pub params: Vec<(String, String)>,
    /// The FROM vertex as the user wrote it.
    pub source_input_id: Option<u64>,
    /// What qualifies this call's clashing columns: its `AS` name, else the algorithm's name.
    pub prefix: String,
}

/// A checked RUN: what to run, on what, and what to do with the rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    /// The algorithms, in the order they run; one unless they are joined by vertex.
    pub calls: Vec<CallPlan>,
    pub graph: GraphMeta,
    /// The result's columns before YIELD: the calls' columns joined by vertex.
    pub columns: Vec<OutputColumn>,
    /// The WHERE condition, its columns named as in `columns`.
    pub filter: Option<Expr>,
    /// ORDER BY keys: columns of `columns` or expressions over them.
    pub order_by: Vec<OrderKey>,
    pub limit: Option<u64>,
    pub offset: Option<u64>,
    /// YIELD / RETURN: the columns to return, in order; `None` returns all.
    pub keep: Option<Vec<Projection>>,
    pub into: Option<PathBuf>,
    pub into_format: Option<OutputFormat>,
    pub threads: usize,
    pub mode: Mode,
    /// Whether PageRank may copy the in-edges for its cache-blocked pull (`blocking`): the
    /// graph is loaded whole, large enough to gain, and the copy fits `memory_limit`.
    pub segmented_pull: bool,
}

impl RunPlan {
    /// The first (often the only) algorithm call.
    pub fn first(&self) -> &CallPlan {
        &self.calls[0]
    }

    /// The algorithms' names joined with `, `, as messages show the RUN.
    pub fn algorithms(&self) -> String {
        self.calls
            .iter()
            .map(|c| c.call.spec.name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the returned column `name` (after YIELD) holds vertices, which on a graph with
    /// string keys are turned into keys last.
    pub fn holds_vertices(&self, name: &str) -> bool {
        result_clauses::holds_vertices(name, &self.columns, self.keep.as_deref())
    }

    /// The names of the columns the statement returns, after YIELD.
    pub fn result_columns(&self) -> Vec<&str> {
        match &self.keep {
            Some(keep) => keep.iter().map(|p| p.name.as_str()).collect(),
            None => self.columns.iter().map(|c| c.name.as_str()).collect(),
        }
    }
}

/// Checks `run` against the algorithms of `registry` and builds its plan. `resolve` maps an
/// input vertex id to an internal id (the graph's id map).
pub fn plan_run(
    registry: &Registry,
    run: &Run,
    graph: &GraphMeta,
    resolve: &dyn Fn(u64) -> Option<u32>,
    settings: &Settings,
) -> Result<RunPlan, PlanError> {
    let vertices = Vertices {
        by_id: resolve,
        keys: None,
    };
    plan_run_on(registry, run, graph, &vertices, settings)
}

/// [`plan_run`] on a graph whose vertices may have string keys.
pub fn plan_run_on(
    registry: &Registry,
    run: &Run,
    graph: &GraphMeta,
    vertices: &Vertices<'_>,
    settings: &Settings,
) -> Result<RunPlan, PlanError> {
    let mut calls = Vec::with_capacity(run.calls.len());
    for c in &run.calls {
        calls.push(plan_call(registry, c, &run.graph, graph, vertices)?);
    }
    // Only results with one row per vertex line up for a join.
    if calls.len() > 1 {
        if let Some((c, at)) = calls
            .iter()
            .zip(&run.calls)
            .find(|(c, _)| c.call.spec.rows != Rows::PerVertex)
        {
            return Err(PlanError::new(
                at.algorithm.pos,
                format!(
                    "{} returns one row per walk step, not one per vertex, so it cannot be joined with other algorithms in one RUN; run it on its own",
                    c.call.spec.name
                ),
            ));
        }
    }
    let named: Vec<(String, &'static [crate::registry::ColumnSpec], &Ident)> = calls
        .iter()
        .zip(&run.calls)
        .map(|(c, at)| {
            (
                c.prefix.clone(),
                c.call.spec.columns,
                at.alias.as_ref().unwrap_or(&at.algorithm),
            )
        })
        .collect();
    let columns = columns::joined(&named)?;

    let filter = match &run.filter {
        Some(e) => {
            let checked = condition::check(e, &columns)?;
            if graph.string_keys() {
                if let Some(c) = condition::vertex_column(&checked, &columns) {
                    return Err(PlanError::new(
                        c.pos,
                        format!(
                            "graph `{}` has string keys, and WHERE cannot compare the vertex column `{}` yet; filter the other columns, or write the result with INTO and filter it there",
                            graph.name, c.name
                        ),
                    ));
                }
            }
            Some(checked)
        }
        None => None,
    };
    let count = |l: &Option<Literal>, clause: &str| -> Result<Option<u64>, PlanError> {
        match l {
            None => Ok(None),
            Some(l) => match l.value {
                Value::Int(n) if n >= 0 => Ok(Some(n as u64)),
                Value::BigInt(n) => Ok(Some(n)),
                ref other => Err(PlanError::new(
                    l.pos,
                    format!(
                        "{clause} expects a whole number ≥ 0, got {}",
                        describe(other)
                    ),
                )),
            },
        }
    };
    let limit = count(&run.limit, "LIMIT")?;
    let offset = count(&run.offset, "OFFSET")?;
    let keep = match &run.columns {
        Some(items) => Some(result_clauses::plan_yield(items, &columns, graph)?),
        None => None,
    };
    let order_by = result_clauses::plan_order_by(&run.order_by, &columns, keep.as_deref(), graph)?;
    let kept = keep.as_ref().map_or(columns.len(), Vec::len);
    if let (Some(path), None) = (&run.into, run.into_format) {
        let ext = std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !matches!(ext.as_str(), "parquet" | "arrow" | "csv") {
            return Err(PlanError::new(
                run.into_pos.unwrap_or(run.graph.pos),
                format!(
                    "cannot tell the output format of '{path}' from its extension; use .parquet, .arrow or .csv, or add FORMAT parquet|arrow|csv|graphalytics"
                ),
            ));
        }
    }
    if run.into_format == Some(OutputFormat::Graphalytics) && kept != 2 {
        return Err(PlanError::new(
            run.into_pos.unwrap_or(run.graph.pos),
            format!(
                "FORMAT graphalytics writes `id value` lines; this result has {kept} columns (YIELD two of them)"
            ),
        ));
    }

    let mut plan = RunPlan {
        calls,
        graph: graph.clone(),
        columns,
        filter,
        order_by,
        limit,
        offset,
        keep,
        into: run.into.as_ref().map(PathBuf::from),
        into_format: run.into_format,
        threads: settings.threads,
        mode: settings.mode,
        segmented_pull: false,
    };
    plan.segmented_pull =
        blocking_fits(&plan, settings) && crate::blocking::builds_copy(sum_rounds(&plan));
    check_memory(&plan, settings, run.calls[0].algorithm.pos)?;
    Ok(plan)
}

/// Checks one algorithm call of a RUN: its name, FROM vertex and parameters.
fn plan_call(
    registry: &Registry,
    run: &AlgorithmCall,
    graph_name: &Ident,
    graph: &GraphMeta,
    vertices: &Vertices<'_>,
) -> Result<CallPlan, PlanError> {
    let spec = registry.get(&run.algorithm.name).ok_or_else(|| {
        PlanError::new(
            run.algorithm.pos,
            format!(
                "unknown algorithm `{}`{}; HELP lists the algorithms",
                run.algorithm.name,
                did_you_mean(&run.algorithm.name, registry.names())
            ),
        )
    })?;
    // Shortest paths are wrong with negative weights; graphs may hold them for other uses.
    if spec.needs_nonnegative_weights && graph.import.negative_weights > 0 {
        return Err(PlanError::new(
            run.algorithm.pos,
            format!(
                "{} needs non-negative weights, but graph `{}` has {} edges with a negative \
                 weight; re-import it without them (or run an algorithm that ignores weights)",
                spec.name, graph.name, graph.import.negative_weights
            ),
        ));
    }

    // FROM
    let source = match (&run.from, spec.source) {
        (None, SourceRule::Required) => {
            return Err(PlanError::new(
                graph_name.pos,
                format!(
                    "{} needs a source vertex: RUN {} ON {} FROM <vertex id>",
                    spec.name, spec.name, graph_name.name
                ),
            ))
        }
        (Some(lit), SourceRule::NotAccepted) => {
            return Err(PlanError::new(
                lit.pos,
                format!("{} takes no FROM vertex", spec.name),
            ))
        }
        (Some(lit), _) => Some(resolve_vertex(lit, graph, vertices)?),
        (None, _) => None,
    };

    // Parameters: ITER and key/value pairs, each at most once.
    let mut given: Vec<(&'static str, &Literal, Pos)> = Vec::new();
    if let Some(iter) = &run.iter {
        let name = spec
            .iter_param
            .ok_or_else(|| PlanError::new(iter.pos, format!("{} takes no ITER", spec.name)))?;
        given.push((name, iter, iter.pos));
    }
    for p in &run.params {
        let param = spec
            .param(&p.key.name)
            .ok_or_else(|| unknown_param(spec, &p.key))?;
        if given.iter().any(|(n, _, _)| *n == param.name) {
            return Err(PlanError::new(
                p.key.pos,
                format!("parameter `{}` is given twice", param.name),
            ));
        }
        given.push((param.name, &p.value, p.key.pos));
    }
    let mut call = AlgoCall::new(spec);
    let mut shown = Vec::new();
    for param in spec.params {
        let lit = given
            .iter()
            .find(|(n, _, _)| *n == param.name)
            .map(|(_, l, _)| *l);
        match param.kind {
            ParamKind::Int { min, max, default } => {
                let v = match lit {
                    None => default,
                    Some(l) => match whole_number(&l.value) {
                        Some(n) if n >= i128::from(min) && n <= i128::from(max) => n as u64,
                        Some(n) => {
                            return Err(PlanError::new(
                                l.pos,
                                format!(
                                    "parameter `{}` must be in {min}..={max}, got {n}",
                                    param.name
                                ),
                            ))
                        }
                        None => {
                            return Err(PlanError::new(
                                l.pos,
                                format!(
                                    "parameter `{}` expects a whole number, got {}",
                                    param.name,
                                    describe(&l.value)
                                ),
                            ))
                        }
                    },
                };
                call = call.with(param.name, ParamValue::Int(v));
                // A sample rule's 0 is shown as the sources it stands for on this graph.
                let v = match spec.sample_rule {
                    Some(rule) if param.name == "samples" => {
                        rule.sources(v, graph.vertices, graph.edges)
                    }
                    _ => v,
                };
                shown.push((param.name.to_string(), v.to_string()));
            }
            ParamKind::Float { min, max, default } => {
                let v = match lit {
                    None => default,
                    Some(l) => {
                        let v = match l.value {
                            Value::Float(f) => f,
                            Value::Int(n) => n as f64,
                            ref other => {
                                return Err(PlanError::new(
                                    l.pos,
                                    format!(
                                        "parameter `{}` expects a number, got {}",
                                        param.name,
                                        describe(other)
                                    ),
                                ))
                            }
                        };
                        if !(min..=max).contains(&v) {
                            return Err(PlanError::new(
                                l.pos,
                                format!(
                                    "parameter `{}` must be in {min}..={max}, got {v}",
                                    param.name
                                ),
                            ));
                        }
                        v
                    }
                };
                call = call.with(param.name, ParamValue::Float(v));
                shown.push((param.name.to_string(), v.to_string()));
            }
        }
    }
    if let Some(v) = &source {
        shown.insert(0, ("from".to_string(), v.shown.clone()));
    }

    let internal_source = source.as_ref().map(|v| v.internal);
    call.source = internal_source;
    // Walks without FROM start at random vertices, and an empty graph has none; other
    // algorithms whose FROM is optional (personalised PageRank) run on it as on any graph.
    let walks = matches!(spec.rows, Rows::PerWalkStep { .. });
    if graph.vertices == 0
        && internal_source.is_none()
        && spec.source == SourceRule::Optional
        && walks
    {
        return Err(PlanError::new(
            graph_name.pos,
            format!("graph `{}` has no vertices to start walks from", graph.name),
        ));
    }

    Ok(CallPlan {
        call,
        params: shown,
        source_input_id: source.and_then(|v| v.input_id),
        prefix: run
            .alias
            .as_ref()
            .map_or(spec.name.to_string(), |a| a.name.clone()),
    })
}

/// Whether `plan` may use the edge reduce's cache-blocked pull: a sum (mode auto or pull) over
/// a graph loaded whole, large enough to gain from blocking, whose copy of the in-edges still
/// fits `memory_limit` next to everything else. The planner builds the copy only for long runs
/// ([`crate::blocking::builds_copy`]); the engine also lets a run that fits use a copy the open
/// graph keeps. Otherwise PageRank pulls over the graph as it is.
pub fn blocking_fits(plan: &RunPlan, settings: &Settings) -> bool {
    let g = &plan.graph;
    let eligible = plan
        .calls
        .iter()
        .any(|c| c.call.spec.uses(Operator::EdgeReduceSum))
        && matches!(plan.mode, Mode::Auto | Mode::Pull)
        && g.storage != storage::catalog::StorageKind::Dm
        && in_memory(g, settings);
    let Some(copy) = crate::blocking::copy_bytes(g.vertices, g.arcs) else {
        return false;
    };
    eligible
        && estimate_memory(plan, settings).total().saturating_add(copy) <= settings.memory_limit
}

/// The most rounds any call of `plan` that sums over in-edges runs: its iteration parameter, or
/// one round for an algorithm without one.
fn sum_rounds(plan: &RunPlan) -> u64 {
    plan.calls
        .iter()
        .filter(|c| c.call.spec.uses(Operator::EdgeReduceSum))
        .map(|c| c.call.spec.iter_param.map_or(1, |p| c.call.int(p)))
        .max()
        .unwrap_or(0)
}

/// Whether the run will load `g` whole rather than read it out of core.
fn in_memory(g: &GraphMeta, settings: &Settings) -> bool {
    g.storage == storage::catalog::StorageKind::Memory || g.loaded_bytes() <= settings.cache
}

/// What a run is expected to hold in memory, in bytes, by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// The graph when it is loaded whole, otherwise the reader's cache budget (which out of
    /// core holds the compact id map and vertex index as well as the blocks).
    pub graph: u64,
    /// Per-vertex bytes: the largest call's attribute arrays and frontiers and every call's
    /// result columns.
    pub per_vertex: u64,
    /// Of `per_vertex`, per vertex: the largest call's state and frontiers (the calls run one
    /// after another) and the sum of the calls' result rows.
    pub working_row: u64,
    pub result_row: u64,
    /// Result rows that are not one per vertex (random walks).
    pub extra_rows: u64,
    /// PageRank's segmented copy of the in-edges (`RunPlan::segmented_pull`).
    pub scratch: u64,
}

impl MemoryEstimate {
    pub fn total(&self) -> u64 {
        self.graph
            .saturating_add(self.per_vertex)
            .saturating_add(self.extra_rows)
            .saturating_add(self.scratch)
    }
}

/// An estimate of the memory a run needs: the graph when it is loaded whole (else the cache),
/// the per-vertex state, and the result rows.
pub fn estimate_memory(plan: &RunPlan, settings: &Settings) -> MemoryEstimate {
    let g = &plan.graph;
    let in_memory = in_memory(g, settings);
    let graph = if in_memory {
        g.loaded_bytes()
    } else {
        settings.cache.min(g.file_bytes)
    };
    // The calls run one after another: each kernel frees its state and frontiers before the
    // next starts, so only the largest working set is alive at once, while every call's result
    // is held until the join.
    let extra_rows = plan
        .calls
        .iter()
        .map(|c| match c.call.spec.rows {
            Rows::PerWalkStep { count, length } => c
                .call
                .int(count)
                .saturating_mul(c.call.int(length).saturating_add(1))
                .saturating_mul(c.call.spec.row_bytes()),
            Rows::PerVertex => 0,
        })
        .fold(0u64, u64::saturating_add);
    let working = plan
        .calls
        .iter()
        .map(|c| c.call.spec.working_bytes_per_vertex())
        .max()
        .unwrap_or(0);
    let results = plan
        .calls
        .iter()
        .map(|c| c.call.spec.result_bytes_per_vertex())
        .fold(0u64, u64::saturating_add);
    let bytes_per_vertex = working.saturating_add(results);
    // A string-keyed graph's result columns of vertices hold keys: about the keys' bytes each.
    let key_columns = plan
        .columns
        .iter()
        .filter(|c| c.ty() == crate::registry::ColumnType::VertexKey)
        .count() as u64;
    MemoryEstimate {
        graph,
        per_vertex: g
            .vertices
            .saturating_mul(bytes_per_vertex)
            .saturating_add(g.key_bytes.saturating_mul(key_columns)),
        working_row: working,
        result_row: results,
        extra_rows,
        scratch: if plan.segmented_pull {
            crate::blocking::copy_bytes(g.vertices, g.arcs).unwrap_or(0)
        } else {
            0
        },
    }
}

/// Refuses, before anything runs, a statement estimated to need more than `memory_limit`.
fn check_memory(plan: &RunPlan, settings: &Settings, pos: Pos) -> Result<(), PlanError> {
    let need = estimate_memory(plan, settings).total();
    if need > settings.memory_limit {
        let hint = match plan.first().call.spec.rows {
            Rows::PerWalkStep { count, length } => format!(
                "lower {} or {}, or raise memory_limit",
                count.to_uppercase(),
                length.to_uppercase()
            ),
            Rows::PerVertex => {
                "lower the cache setting so the graph is read out of core, or raise memory_limit"
                    .to_string()
            }
        };
        return Err(PlanError::new(
            pos,
            format!(
                "RUN {} on graph `{}` would need about {} (graph, attribute arrays and results), more than the memory_limit setting ({}); {hint}",
                plan.algorithms(),
                plan.graph.name,
                base::format_size(need),
                base::format_size(settings.memory_limit)
            ),
        ));
    }
    Ok(())
}

/// The error for a graph name the catalog does not have, with a suggestion.
pub fn unknown_graph<'a>(name: &Ident, known: impl IntoIterator<Item = &'a str>) -> PlanError {
    PlanError::new(
        name.pos,
        format!(
            "graph `{}` does not exist{}; SHOW GRAPHS lists the graphs",
            name.name,
            did_you_mean(&name.name, known)
        ),
    )
}

fn unknown_param(spec: &AlgorithmSpec, key: &Ident) -> PlanError {
    let names: Vec<&str> = spec
        .params
        .iter()
        .map(|p| p.name)
        .chain(if spec.source == SourceRule::NotAccepted {
            None
        } else {
            Some("from")
        })
        .collect();
    // `LIMT 5` reads as a parameter: a clause keyword it resembles is the likelier intent.
    const CLAUSES: [&str; 8] = [
        "WHERE", "ORDER", "LIMIT", "OFFSET", "YIELD", "RETURN", "INTO", "ITER",
    ];
    let clause = crate::suggest::nearest(&key.name, CLAUSES)
        .filter(|_| crate::suggest::nearest(&key.name, names.iter().copied()).is_none());
    if let Some(clause) = clause {
        return PlanError::new(
            key.pos,
            format!(
                "unknown parameter `{}` for {} (did you mean the clause {clause}?)",
                key.name, spec.name
            ),
        );
    }
    let hint = if key.name.eq_ignore_ascii_case("from") {
        String::new()
    } else if spec.params.is_empty() {
        format!("; {} takes no parameters", spec.name)
    } else {
        format!(
            "; {} takes {}",
            spec.name,
            spec.params
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    PlanError::new(
        key.pos,
        format!(
            "unknown parameter `{}` for {}{}{}",
            key.name,
            spec.name,
            did_you_mean(&key.name, names),
            hint
        ),
    )
}

/// A literal's value if it is a whole number (negative ones included, and ones above
/// `i64::MAX`), so that a range check can name it as it was written.
fn whole_number(v: &Value) -> Option<i128> {
    match *v {
        Value::Int(n) => Some(i128::from(n)),
        Value::BigInt(n) => Some(i128::from(n)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::tests::{BFS, PAGERANK, REGISTRY};
    use grammar::{Literal, Param};
    use storage::catalog::StorageKind;

    fn meta() -> GraphMeta {
        GraphMeta {
            name: "web".into(),
            file: "graphs/web-1.fgraph".into(),
            format_version: 1,
            vertices: 10,
            edges: 17,
            arcs: 17,
            directed: true,
            weighted: false,
            source: "x".into(),
            created_at: 0,
            storage: StorageKind::Blockfile,
            file_bytes: 1 << 20,
            memory_nodes: vec![],
            extra: None,
            file_id: None,
            import: Default::default(),
            key_bytes: 0,
        }
    }

    #[test]
    fn sssp_refuses_a_graph_with_negative_weights() {
        let mut g = meta();
        g.weighted = true;
        g.import.negative_weights = 2;
        let mut r = run("sssp");
        r.calls[0].from = Some(lit(Value::Int(1), 30));
        let resolve = |id: u64| (1..=10).contains(&id).then(|| (id - 1) as u32);
        let e = plan_run(&REGISTRY, &r, &g, &resolve, &Settings::defaults(None)).unwrap_err();
        assert!(
            e.to_string().contains("sssp needs non-negative weights"),
            "{e}"
        );
        assert!(e.to_string().contains("2 edges"), "{e}");
    }

    fn at(col: usize) -> Pos {
        Pos { line: 1, col }
    }

    fn ident(name: &str, col: usize) -> Ident {
        Ident {
            name: name.into(),
            pos: at(col),
        }
    }

    fn lit(value: Value, col: usize) -> Literal {
        Literal {
            value,
            pos: at(col),
        }
    }

    fn call(algo: &str) -> AlgorithmCall {
        AlgorithmCall {
            algorithm: ident(algo, 5),
            from: None,
            iter: None,
            params: vec![],
            alias: None,
        }
    }

    fn run(algo: &str) -> Run {
        Run {
            calls: vec![call(algo)],
            graph: ident("web", 20),
            columns: None,
            filter: None,
            order_by: vec![],
            limit: None,
            offset: None,
            into: None,
            into_pos: None,
            into_format: None,
        }
    }

    fn plan(r: &Run) -> Result<RunPlan, PlanError> {
        // Input ids 1..=10 map to internal 0..=9.
        let resolve = |id: u64| (1..=10).contains(&id).then(|| (id - 1) as u32);
        plan_run(&REGISTRY, r, &meta(), &resolve, &Settings::defaults(None))
    }

    #[test]
    fn a_valid_run_resolves_ids_and_fills_defaults() {
        let mut r = run("PageRank");
        r.calls[0].iter = Some(lit(Value::Int(5), 30));
        let p = plan(&r).unwrap();
        assert_eq!(
            p.first().call,
            AlgoCall::new(&PAGERANK).with("iter", ParamValue::Int(5))
        );
        assert_eq!(p.first().call.float("damping"), 0.85);
        let mut r = run("bfs");
        r.calls[0].from = Some(lit(Value::Int(3), 25));
        assert_eq!(plan(&r).unwrap().first().call, AlgoCall::new(&BFS).from(2));
    }

    #[test]
    fn errors_point_at_the_fault_and_suggest() {
        let cases: Vec<(Run, usize, &str)> = vec![
            (
                run("pagernak"),
                5,
                "unknown algorithm `pagernak` (did you mean `pagerank`?)",
            ),
            (run("bfs"), 20, "bfs needs a source vertex"),
            (
                {
                    let mut r = run("bfs");
                    r.calls[0].from = Some(lit(Value::Int(99), 25));
                    r
                },
                25,
                "vertex 99 is not a vertex of graph `web`",
            ),
            (
                {
                    let mut r = run("wcc");
                    r.calls[0].from = Some(lit(Value::Int(1), 25));
                    r
                },
                25,
                "wcc takes no FROM vertex",
            ),
            (
                {
                    let mut r = run("pagerank");
                    r.calls[0].params.push(Param {
                        key: ident("dampign", 30),
                        value: lit(Value::Float(0.5), 38),
                    });
                    r
                },
                30,
                "unknown parameter `dampign` for pagerank (did you mean `damping`?)",
            ),
            (
                {
                    let mut r = run("pagerank");
                    r.calls[0].params.push(Param {
                        key: ident("damping", 30),
                        value: lit(Value::Float(1.5), 38),
                    });
                    r
                },
                38,
                "parameter `damping` must be in 0..=1, got 1.5",
            ),
            (
                {
                    let mut r = run("pagerank");
                    r.calls[0].iter = Some(lit(Value::Int(0), 33));
                    r
                },
                33,
                "parameter `iter` must be in 1..=1000000, got 0",
            ),
            (
                {
                    let mut r = run("bfs");
                    r.calls[0].iter = Some(lit(Value::Int(3), 33));
                    r.calls[0].from = Some(lit(Value::Int(1), 25));
                    r
                },
                33,
                "bfs takes no ITER",
            ),
            (
                {
                    let mut r = run("pagerank");
                    r.order_by = vec![grammar::OrderBy {
                        key: Expr::Column(ident("rnak", 40)),
                        descending: true,
                    }];
                    r
                },
                40,
                "pagerank has no column `rnak` (did you mean `rank`?)",
            ),
            (
                {
                    let mut r = run("pagerank");
                    r.limit = Some(lit(Value::Int(-1), 50));
                    r
                },
                50,
                "LIMIT expects a whole number ≥ 0",
            ),
            (
                {
                    let mut r = run("pagerank");
                    r.into = Some("out.xlsx".into());
                    r.into_pos = Some(at(60));
                    r
                },
                60,
                "cannot tell the output format of 'out.xlsx'",
            ),
        ];
        for (r, col, message) in cases {
            let e = plan(&r).unwrap_err();
            assert!(
                e.message.contains(message),
                "{} — wanted {message}",
                e.message
            );
            assert_eq!(e.pos.col, col, "{}", e.message);
        }
    }

    #[test]
    fn a_run_needing_more_memory_than_allowed_is_refused_before_it_starts() {
        let mut r = run("randomwalk");
        r.calls[0].params.push(Param {
            key: ident("walks", 30),
            value: lit(Value::Int(1_000_000_000), 36),
        });
        r.calls[0].params.push(Param {
            key: ident("length", 47),
            value: lit(Value::Int(1_000_000), 54),
        });
        let e = plan(&r).unwrap_err();
        assert!(
            e.message.contains("more than the memory_limit setting"),
            "{}",
            e.message
        );
        assert!(e.message.contains("lower WALKS or LENGTH"), "{}", e.message);
        assert_eq!(e.pos.col, 5);
        // The graph itself counts when it would be loaded whole.
        let mut settings = Settings::defaults(None);
        settings.memory_limit = 1 << 20;
        settings.cache = 1 << 30;
        let resolve = |_: u64| Some(0);
        let e = plan_run(&REGISTRY, &run("wcc"), &meta(), &resolve, &settings).unwrap_err();
        assert!(
            e.message.contains("lower the cache setting"),
            "{}",
            e.message
        );
        settings.cache = 64 << 10;
        plan_run(&REGISTRY, &run("wcc"), &meta(), &resolve, &settings).unwrap();
    }

    /// `RUN pagerank ON web ITER rounds;`
    fn pagerank_for(rounds: u64) -> Run {
        parse_run(&format!("RUN pagerank ON web ITER {rounds};"))
    }

    #[test]
    fn pagerank_blocks_large_in_memory_graphs_only_when_the_copy_fits() {
        let mut g = meta();
        g.vertices = 3 << 20;
        g.arcs = 50 << 20;
        g.file_bytes = 300 << 20;
        let resolve = |_: u64| Some(0);
        let mut settings = Settings::defaults(None);
        settings.cache = 1 << 30;
        settings.memory_limit = 4 << 30;
        // A run shorter than the copy pays for may block (with a copy the graph keeps) but
        // does not build one; the default 20 iterations are such a run.
        let short = crate::blocking::MIN_ROUNDS - 1;
        for r in [run("pagerank"), pagerank_for(short)] {
            let p = plan_run(&REGISTRY, &r, &g, &resolve, &settings).unwrap();
            assert!(!p.segmented_pull && blocking_fits(&p, &settings));
            assert_eq!(estimate_memory(&p, &settings).scratch, 0);
        }
        let run = |algo: &str| match algo {
            "pagerank" => pagerank_for(crate::blocking::MIN_ROUNDS),
            _ => run(algo),
        };
        let p = plan_run(&REGISTRY, &run("pagerank"), &g, &resolve, &settings).unwrap();
        assert!(p.segmented_pull);
        let copy = crate::blocking::copy_bytes(g.vertices, g.arcs).unwrap();
        let est = estimate_memory(&p, &settings);
        assert_eq!(est.scratch, copy);
        assert!(est.total() > g.file_bytes + copy);
        // Without room for the copy the run is still allowed, pulling over the graph as is.
        settings.memory_limit = est.total() - 1;
        let p = plan_run(&REGISTRY, &run("pagerank"), &g, &resolve, &settings).unwrap();
        assert!(!p.segmented_pull);
        assert_eq!(estimate_memory(&p, &settings).scratch, 0);
        // Out of core, forced push, small graphs and other kernels never block.
        settings.memory_limit = 4 << 30;
        settings.cache = 64 << 10;
        assert!(
            !plan_run(&REGISTRY, &run("pagerank"), &g, &resolve, &settings)
                .unwrap()
                .segmented_pull
        );
        settings.cache = 1 << 30;
        settings.mode = Mode::Push;
        assert!(
            !plan_run(&REGISTRY, &run("pagerank"), &g, &resolve, &settings)
                .unwrap()
                .segmented_pull
        );
        settings.mode = Mode::Auto;
        assert!(
            !plan_run(&REGISTRY, &run("wcc"), &g, &resolve, &settings)
                .unwrap()
                .segmented_pull
        );
        assert!(
            !plan_run(&REGISTRY, &run("pagerank"), &meta(), &resolve, &settings)
                .unwrap()
                .segmented_pull
        );
    }

    #[test]
    fn several_calls_hold_the_largest_state_and_every_result() {
        let settings = Settings::defaults(None);
        let one = |text: &str| estimate_memory(&plan_text(text).unwrap(), &settings);
        let pagerank = one("RUN pagerank ON web;");
        let wcc = one("RUN wcc ON web;");
        let bfs = one("RUN bfs FROM 1 ON web;");
        let p = plan_text("RUN pagerank, wcc, bfs FROM 1 ON web;").unwrap();
        let all = estimate_memory(&p, &settings);
        let specs: Vec<_> = p.calls.iter().map(|c| c.call.spec).collect();
        let working = specs
            .iter()
            .map(|s| s.working_bytes_per_vertex())
            .max()
            .unwrap();
        let results: u64 = specs.iter().map(|s| s.result_bytes_per_vertex()).sum();
        assert_eq!((all.working_row, all.result_row), (working, results));
        assert_eq!(all.per_vertex, meta().vertices * (working + results));
        // Less than the three runs' per-vertex bytes added up, more than the largest alone.
        let summed = pagerank.per_vertex + wcc.per_vertex + bfs.per_vertex;
        assert!(all.per_vertex < summed, "{all:?} vs {summed}");
        assert!(all.per_vertex > pagerank.per_vertex.max(wcc.per_vertex).max(bfs.per_vertex));
    }

    /// The plan of `text`, a RUN statement parsed by the real grammar.
    /// The RUN statement `text`.
    fn parse_run(text: &str) -> Run {
        let stmt = grammar::parse(text).unwrap().remove(0);
        let grammar::StatementKind::Run { run, .. } = stmt.kind else {
            panic!("not a RUN: {text}")
        };
        run
    }

    fn plan_text(text: &str) -> Result<RunPlan, PlanError> {
        plan(&parse_run(text))
    }

    #[test]
    fn several_algorithms_join_by_vertex_and_qualify_clashes_only() {
        let p = plan_text("RUN pagerank ITER 3, wcc, bfs FROM 2 ON web;").unwrap();
        let names: Vec<&str> = p.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["vertex", "rank", "component", "depth"]);
        assert_eq!(p.calls[0].call.int("iter"), 3);
        assert_eq!(p.calls[2].call.source, Some(1));
        // The same algorithm twice needs AS, and then its columns carry the alias.
        let e = plan_text("RUN pagerank ITER 3, pagerank ON web;").unwrap_err();
        assert!(
            e.message.contains("appears twice") && e.message.contains("AS"),
            "{}",
            e.message
        );
        assert_eq!(e.pos.col, 22);
        let p = plan_text("RUN pagerank ITER 3 AS short, pagerank ON web ORDER BY short.rank, pagerank.rank DESC;").unwrap();
        let names: Vec<&str> = p.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["vertex", "short.rank", "pagerank.rank"]);
        assert_eq!(keys(&p), "short.rank false, pagerank.rank true");
        let e = plan_text("RUN pagerank AS a, pagerank AS b ON web ORDER BY rank;").unwrap_err();
        assert!(
            e.message.contains("ambiguous: write a.rank or b.rank"),
            "{}",
            e.message
        );
    }

    #[test]
    fn walks_cannot_be_joined() {
        let e = plan_text("RUN wcc, randomwalk ON web;").unwrap_err();
        assert!(e.message.contains("cannot be joined"), "{}", e.message);
        assert_eq!(e.pos.col, 10);
        assert!(plan_text("RUN randomwalk ON web WHERE step > 0;").is_ok());
    }

    #[test]
    fn where_is_checked_before_running() {
        let p = plan_text("RUN pagerank, wcc ON web WHERE Component = 0 AND rank * 1000 > 1.5;")
            .unwrap();
        assert_eq!(
            crate::condition::text(p.filter.as_ref().unwrap()),
            "(component = 0) AND ((rank * 1000) > 1.5)"
        );
        for (text, col, message) in [
            (
                "RUN pagerank ON web WHERE rnak > 1;",
                27,
                "no column `rnak` (did you mean `rank`?)",
            ),
            (
                "RUN pagerank ON web WHERE rank;",
                27,
                "WHERE needs a condition",
            ),
            (
                "RUN pagerank ON web WHERE rank > 'x';",
                34,
                "the string 'x' is not one",
            ),
            (
                "RUN pagerank ON web WHERE rank AND vertex > 1;",
                27,
                "`AND` needs conditions",
            ),
            (
                "RUN pagerank ON web WHERE (rank > 1) + 2 > 0;",
                28,
                "`+` needs numbers",
            ),
            (
                "RUN pagerank ON web\n  WHERE NOT rank;",
                13,
                "`NOT` needs conditions",
            ),
        ] {
            let e = plan_text(text).unwrap_err();
            assert!(e.message.contains(message), "{text}: {}", e.message);
            assert_eq!(e.pos.col, col, "{text}: {}", e.message);
        }
        assert!(plan_text("RUN bfs FROM 1 ON web WHERE depth IS NULL OR depth IN (1, 2);").is_ok());
    }

    /// The ORDER BY keys of `p` as text and direction.
    fn keys(p: &RunPlan) -> String {
        p.order_by
            .iter()
            .map(|k| format!("{} {}", condition::text(&k.expr), k.descending))
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn order_by_and_yield_take_checked_expressions() {
        let p = plan_text(
            "RUN pagerank, wcc ON web ORDER BY rank * component DESC, vertex LIMIT 3 \
             YIELD vertex, rank * 1000 AS score, component + 1;",
        )
        .unwrap();
        assert_eq!(keys(&p), "rank * component true, vertex false");
        assert_eq!(p.result_columns(), ["vertex", "score", "component + 1"]);
        assert!(p.holds_vertices("vertex") && !p.holds_vertices("score"));
        // A bare name that is a YIELD item's AS name orders by that item.
        let p = plan_text(
            "RUN pagerank ON web YIELD vertex AS v, rank * 2 AS twice ORDER BY twice DESC, v;",
        )
        .unwrap();
        assert_eq!(keys(&p), "rank * 2 true, vertex false");
        assert!(p.holds_vertices("v"));
        // Errors name the clause and point at the operand at fault.
        let e = plan_text("RUN pagerank ON web ORDER BY rank * rnak;").unwrap_err();
        assert_eq!(e.pos.col, 37);
        assert!(e.message.contains("did you mean `rank`"), "{}", e.message);
        let e = plan_text("RUN pagerank ON web ORDER BY rank > 1;").unwrap_err();
        assert!(
            e.message.contains("ORDER BY needs a number"),
            "{}",
            e.message
        );
        let e = plan_text("RUN pagerank ON web ORDER BY 2 * 3;").unwrap_err();
        assert!(e.message.contains("orders nothing"), "{}", e.message);
        let e = plan_text("RUN pagerank ON web YIELD rank * 'x' AS s;").unwrap_err();
        assert_eq!(e.pos.col, 34);
        assert!(
            e.message.contains("YIELD computes on numbers"),
            "{}",
            e.message
        );
        let e = plan_text("RUN pagerank ON web YIELD rank, rank * 2 AS RANK;").unwrap_err();
        assert!(e.message.contains("would be named `RANK`"), "{}", e.message);
        let e = plan_text("RUN pagerank ON web YIELD NULL AS n;").unwrap_err();
        assert!(e.message.contains("no type"), "{}", e.message);
        let e = plan_text("RUN pagerank ON web ORDER BY rank * 2, rank*2;").unwrap_err();
        assert!(e.message.contains("given twice"), "{}", e.message);
    }

    #[test]
    fn yield_order_offset_resolve_columns() {
        let p = plan_text("RUN pagerank, wcc ON web ORDER BY component, rank DESC LIMIT 3 OFFSET 2 YIELD RANK, vertex;").unwrap();
        assert_eq!(keys(&p), "component false, rank true");
        assert_eq!((p.limit, p.offset), (Some(3), Some(2)));
        assert_eq!(p.result_columns(), ["rank", "vertex"]);
        let e = plan_text("RUN pagerank ON web YIELD vertex, vertex;").unwrap_err();
        assert!(
            e.message.contains("would be named `vertex`"),
            "{}",
            e.message
        );
        let e = plan_text("RUN pagerank ON web ORDER BY rank, rank;").unwrap_err();
        assert!(e.message.contains("given twice"), "{}", e.message);
        let e =
            plan_text("RUN pagerank, wcc ON web INTO 'x.txt' FORMAT graphalytics;").unwrap_err();
        assert!(e.message.contains("3 columns"), "{}", e.message);
        assert!(plan_text(
            "RUN pagerank, wcc ON web YIELD vertex, rank INTO 'x.txt' FORMAT graphalytics;"
        )
        .is_ok());
    }

    #[test]
    fn explain_shows_every_clause() {
        let p = plan_text("RUN pagerank ITER 3, wcc ON web WHERE component = 0 ORDER BY rank DESC LIMIT 10 OFFSET 1 YIELD vertex, rank;").unwrap();
        let reader = crate::ReaderInfo {
            description: "memory".into(),
            in_memory: true,
            ..Default::default()
        };
        let text = crate::explain(&p, &reader, &Settings::defaults(None));
        for line in [
            "RUN pagerank iter=3 damping=0.85, wcc ON web",
            "  1. pagerank iter=3 damping=0.85:",
            "  2. wcc:",
            "output:    vertex UInt64, rank Float64, component UInt64",
            "where:     component = 0",
            "order:     rank DESC, top 11 by a bounded heap",
            "limit:     10 rows after skipping 1",
            "yield:     vertex, rank",
        ] {
            assert!(text.contains(line), "{line} in\n{text}");
        }
    }

    #[test]
    fn explain_places_state_compute_and_keys_after_the_reader() {
        let p = plan_text("RUN pagerank, wcc ON web;").unwrap();
        let reader = crate::ReaderInfo {
            description: "disaggregated memory".into(),
            in_memory: false,
            state: vec!["pagerank: remote".into(), "wcc: local".into()],
            compute: Some("2 compute nodes".into()),
            keys: Some("by block".into()),
        };
        let text = crate::explain(&p, &reader, &Settings::defaults(None));
        let want = "  reader:    disaggregated memory\n  state:     pagerank: remote\n  state:     wcc: local\n  compute:   2 compute nodes\n  keys:      by block\n  threads:";
        assert!(text.contains(want), "{text}");
        let plain = crate::explain(
            &p,
            &crate::ReaderInfo {
                description: "memory".into(),
                in_memory: true,
                ..Default::default()
            },
            &Settings::defaults(None),
        );
        assert!(plain.contains("  reader:    memory\n  threads:"), "{plain}");
    }

    #[test]
    fn explain_out_of_core_reads_per_algorithm() {
        let p = plan_text("RUN pagerank, bfs FROM 1 ON web;").unwrap();
        let reader = crate::ReaderInfo {
            description: "out of core".into(),
            in_memory: false,
            ..Default::default()
        };
        let text = crate::explain(&p, &reader, &Settings::defaults(None));
        assert!(text.contains("reads:     pagerank: about"), "{text}");
        assert!(text.contains("; bfs: at most about"), "{text}");
    }
}
