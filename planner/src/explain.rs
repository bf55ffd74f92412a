//! EXPLAIN text: what will run, how, and what will be read — before anything is read.

use crate::check::{estimate_memory, CallPlan, RunPlan};
use crate::plan::{AlgoCall, Mode};
use crate::registry::{ColumnType, SampleRule};
use crate::settings::Settings;
use base::format_size;

/// What the store and the engine know about a run that the plan does not: the reader, and for
/// graphs in memory nodes where state lives and which compute nodes share the work. Each
/// field is one line of EXPLAIN, rendered by [`explain`] after the reader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReaderInfo {
    /// e.g. `memory` or `out of core (io_uring, O_DIRECT, depth 32, cache 64.0 KiB)`.
    pub description: String,
    /// Whether the whole graph will be held in memory.
    pub in_memory: bool,
    /// Per algorithm call, in run order: where its per-vertex state lives (DM graphs).
    pub state: Vec<String>,
    /// The compute nodes that share the run (DM graphs with `compute_nodes` set).
    pub compute: Option<String>,
    /// How vertex keys are held (graphs with string keys).
    pub keys: Option<String>,
}

/// The strategy rule EdgeMap will follow in each iteration under `mode`.
pub fn strategy_rule(mode: Mode, dense_algorithm: bool) -> String {
    match (mode, dense_algorithm) {
        (Mode::Auto, false) => {
            "auto: SparsePush while the frontier's out-degree sum ≤ |E|/20, else DensePull".into()
        }
        (Mode::Auto, true) => {
            "auto: every vertex is active, so DensePull (scan in-edges in block order)".into()
        }
        (Mode::Push, _) => {
            "forced push: SparsePush (fetch each active vertex's list, many in flight)".into()
        }
        (Mode::Block, _) => {
            "forced block: BlockPush (group the frontier by edge block, read each block once)"
                .into()
        }
        (Mode::Pull, _) => "forced pull: DensePull (scan in-edges in block order)".into(),
    }
}

/// The EXPLAIN text of `plan`. One algorithm prints its operators, strategy and reads at the
/// top level; several print them per algorithm, in the order they run.
pub fn explain(plan: &RunPlan, reader: &ReaderInfo, settings: &Settings) -> String {
    let g = &plan.graph;
    let mut out = String::new();
    let calls = plan
        .calls
        .iter()
        .map(|c| {
            let params = c
                .params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ");
            let alias = if c.prefix != c.call.spec.name {
                format!(" AS {}", c.prefix)
            } else {
                String::new()
            };
            format!("{} {params}{alias}", c.call.spec.name)
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>();
    if let [c] = &plan.calls[..] {
        // One algorithm: its parameters follow the graph name.
        let params = c
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        out.push_str(&format!(
            "RUN {} ON {} {}\n",
            c.call.spec.name, g.name, params
        ));
    } else {
        out.push_str(&format!("RUN {} ON {}\n", calls.join(", "), g.name));
    }
    out.push_str(&format!(
        "  graph:     {} vertices, {} edges, {}, {}\n",
        g.vertices,
        g.edges,
        if g.directed { "directed" } else { "undirected" },
        if g.weighted { "weighted" } else { "unweighted" }
    ));
    if !g.import.layout.is_empty() {
        out.push_str(&format!(
            "  layout:    {} ({})\n",
            g.import.layout, g.import.layout_reason
        ));
    }
    if plan.calls.iter().any(|c| c.call.spec.uses_weights) && !g.weighted {
        out.push_str("  weights:   the graph is unweighted: every edge has weight 1\n");
    }
    let several = plan.calls.len() > 1;
    for (i, c) in plan.calls.iter().enumerate() {
        let indent = if several {
            out.push_str(&format!("  {}. {}:\n", i + 1, calls[i]));
            "    "
        } else {
            "  "
        };
        call_lines(&mut out, indent, c, plan);
    }
    out.push_str(&format!("  reader:    {}\n", reader.description));
    for state in &reader.state {
        out.push_str(&format!("  state:     {state}\n"));
    }
    if let Some(compute) = &reader.compute {
        out.push_str(&format!("  compute:   {compute}\n"));
    }
    if let Some(keys) = &reader.keys {
        out.push_str(&format!("  keys:      {keys}\n"));
    }
    out.push_str(&format!(
        "  threads:   {}   io_depth: {}   cache: {}\n",
        plan.threads,
        settings.io_depth,
        format_size(settings.cache)
    ));
    let reads = if reader.in_memory {
        format!(
            "{} once, sequentially, to load the graph; then nothing per iteration",
            format_size(g.file_bytes)
        )
    } else if let [c] = &plan.calls[..] {
        reads_per_iteration(c, g)
    } else {
        plan.calls
            .iter()
            .map(|c| format!("{}: {}", c.prefix, reads_per_iteration(c, g)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    out.push_str(&format!("  reads:     {reads}\n"));
    let mem = estimate_memory(plan, settings);
    out.push_str(&format!(
        "  memory:    about {}: {} {} + per-vertex arrays {} ({} B x {} vertices{}){}\n",
        format_size(mem.total()),
        if reader.in_memory {
            "graph"
        } else {
            "cache (vertex index and ids included)"
        },
        format_size(mem.graph),
        format_size(mem.per_vertex),
        mem.per_vertex / g.vertices.max(1),
        g.vertices,
        if several {
            format!(
                "; the calls run one at a time: largest state {} B + all results {} B",
                mem.working_row, mem.result_row
            )
        } else {
            String::new()
        },
        if mem.extra_rows > 0 {
            format!(" + result rows {}", format_size(mem.extra_rows))
        } else {
            String::new()
        }
    ));
    if mem.scratch > 0 {
        out.push_str(&format!(
            "  blocking:  {} segments of in-edges copied for a cache-blocked pull, kept for the next PageRank: + {}\n",
            crate::blocking::segments(g.vertices).unwrap_or(0),
            format_size(mem.scratch)
        ));
    }
    let columns = plan
        .columns
        .iter()
        .map(|c| {
            format!(
                "{} {}{}",
                c.name,
                match c.ty() {
                    ColumnType::VertexKey if g.string_keys() => "Utf8",
                    ColumnType::VertexKey => ColumnType::UInt64.name(),
                    other => other.name(),
                },
                if c.spec.nullable { " (nullable)" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    if several {
        out.push_str(
            "  join:      one row per vertex, the algorithms' columns side by side
",
        );
    }
    out.push_str(&format!("  output:    {columns}\n"));
    if let Some(f) = &plan.filter {
        out.push_str(&format!(
            "  where:     {} (Arrow compute kernels, batch by batch, before ordering)\n",
            crate::condition::text(f)
        ));
    }
    let keys = plan
        .order_by
        .iter()
        .map(|k| {
            format!(
                "{} {}",
                crate::condition::text(&k.expr),
                if k.descending { "DESC" } else { "ASC" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let window = plan
        .limit
        .map(|l| l.saturating_add(plan.offset.unwrap_or(0)));
    if !keys.is_empty() {
        let computed = plan
            .order_by
            .iter()
            .any(|k| !matches!(k.expr, grammar::Expr::Column(_)));
        out.push_str(&format!(
            "  order:     {keys}{}{}\n",
            window
                .map(|l| format!(", top {l} by a bounded heap"))
                .unwrap_or_default(),
            if computed {
                " (keys computed batch by batch)"
            } else {
                ""
            }
        ));
    }
    match (plan.offset, plan.limit) {
        (Some(o), Some(l)) => out.push_str(&format!("  limit:     {l} rows after skipping {o}\n")),
        (Some(o), None) => out.push_str(&format!("  offset:    skip the first {o} rows\n")),
        (None, Some(l)) if keys.is_empty() => {
            out.push_str(&format!("  limit:     first {l} rows\n"))
        }
        _ => {}
    }
    if let Some(keep) = &plan.keep {
        let items = keep
            .iter()
            .map(|p| match &p.expr {
                grammar::Expr::Column(c) if c.name == p.name => p.name.clone(),
                e if crate::condition::text(e) == p.name => p.name.clone(),
                e => format!("{} AS {}", crate::condition::text(e), p.name),
            })
            .collect::<Vec<_>>()
            .join(", ");
        out.push_str(&format!("  yield:     {items}\n"));
    }
    if let Some(p) = &plan.into {
        out.push_str(&format!("  into:      {}\n", p.display()));
    }
    out
}

/// The operators and strategy of one call.
fn call_lines(out: &mut String, indent: &str, c: &CallPlan, plan: &RunPlan) {
    let spec = c.call.spec;
    out.push_str(&format!("{indent}operators:\n"));
    for (i, step) in spec.program.iter().enumerate() {
        out.push_str(&format!("{indent}  {}. {}\n", i + 1, step.text()));
    }
    let strategy = match spec.passes {
        Some(passes) => passes.to_string(),
        None => strategy_rule(plan.mode, spec.dense),
    };
    out.push_str(&format!("{indent}strategy:  {strategy}\n"));
    if let Some(rule) = spec.sample_rule {
        out.push_str(&format!(
            "{indent}sources:   {}\n",
            sources_line(rule, &c.call, &plan.graph)
        ));
    }
}

/// Which sources an algorithm with a sample rule searches from, and why.
fn sources_line(rule: SampleRule, call: &AlgoCall, g: &storage::catalog::GraphMeta) -> String {
    let samples = call.int("samples");
    let sources = rule.sources(samples, g.vertices, g.edges);
    let work = g.vertices.saturating_mul(g.edges);
    let why = match (samples, rule.exact_by_default(g.vertices, g.edges)) {
        (0, true) => format!(" (by default: |V|·|E| = {work} <= {})", rule.exact_work),
        (0, false) => format!(
            " (by default: |V|·|E| = {work} > {}; SAMPLES {} for the exact result)",
            rule.exact_work, g.vertices
        ),
        _ => String::new(),
    };
    if sources >= g.vertices {
        format!("every vertex: exact{why}")
    } else {
        format!(
            "{sources} of {} sampled with SEED {}: an estimate{why}",
            g.vertices,
            call.int("seed")
        )
    }
}

/// What one call reads per iteration from a graph out of core.
fn reads_per_iteration(c: &CallPlan, g: &storage::catalog::GraphMeta) -> String {
    let spec = c.call.spec;
    let edge_bytes = g.arcs.saturating_mul(4);
    let weight_bytes = if spec.uses_weights && g.weighted {
        g.arcs.saturating_mul(8)
    } else {
        0
    };
    let per_dense = edge_bytes + weight_bytes;
    if !spec.reads_edges() {
        "nothing: the program reads only the vertex index".to_string()
    } else if spec.dense {
        format!(
            "about {} per iteration (every edge block once)",
            format_size(per_dense)
        )
    } else {
        format!(
            "at most about {} per iteration, in proportion to the frontier's out-degree sum",
            format_size(per_dense)
        )
    }
}
