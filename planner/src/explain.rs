//! EXPLAIN text: what will run, how, and what will be read — before anything is read.

use crate::check::{estimate_memory, RunPlan};
use crate::plan::Mode;
use crate::registry::ColumnType;
use crate::settings::Settings;
use base::format_size;

/// The reader the executor will use, as the storage layer describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderInfo {
    /// e.g. `memory` or `out of core (io_uring, O_DIRECT, depth 32, cache 64.0 KiB)`.
    pub description: String,
    /// Whether the whole graph will be held in memory.
    pub in_memory: bool,
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

/// The EXPLAIN text of `plan`.
pub fn explain(plan: &RunPlan, reader: &ReaderInfo, settings: &Settings) -> String {
    let g = &plan.graph;
    let mut out = String::new();
    let params = plan
        .params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    out.push_str(&format!(
        "RUN {} ON {} {}\n",
        plan.call.spec.name, g.name, params
    ));
    out.push_str(&format!(
        "  graph:     {} vertices, {} edges, {}, {}\n",
        g.vertices,
        g.edges,
        if g.directed { "directed" } else { "undirected" },
        if g.weighted { "weighted" } else { "unweighted" }
    ));
    if plan.call.spec.uses_weights && !g.weighted {
        out.push_str("  weights:   the graph is unweighted: every edge has weight 1\n");
    }
    out.push_str("  operators:\n");
    for (i, step) in plan.call.spec.program.iter().enumerate() {
        out.push_str(&format!("    {}. {}\n", i + 1, step.text()));
    }
    let strategy = match plan.call.spec.passes {
        Some(passes) => passes.to_string(),
        None => strategy_rule(plan.mode, plan.call.spec.dense),
    };
    out.push_str(&format!("  strategy:  {strategy}\n"));
    out.push_str(&format!("  reader:    {}\n", reader.description));
    out.push_str(&format!(
        "  threads:   {}   io_depth: {}   cache: {}\n",
        plan.threads,
        settings.io_depth,
        format_size(settings.cache)
    ));
    let edge_bytes = g.arcs.saturating_mul(4);
    let weight_bytes = if plan.call.spec.uses_weights && g.weighted {
        g.arcs.saturating_mul(8)
    } else {
        0
    };
    let per_dense = edge_bytes + weight_bytes;
    let estimate = if reader.in_memory {
        format!(
            "{} once, sequentially, to load the graph; then nothing per iteration",
            format_size(g.file_bytes)
        )
    } else if !plan.call.spec.reads_edges() {
        "nothing: the program reads only the vertex index".to_string()
    } else if plan.call.spec.dense {
        format!(
            "about {} per iteration (every edge block once)",
            format_size(per_dense)
        )
    } else {
        format!(
            "at most about {} per iteration, in proportion to the frontier's out-degree sum",
            format_size(per_dense)
        )
    };
    out.push_str(&format!("  reads:     {estimate}\n"));
    let mem = estimate_memory(plan, settings);
    out.push_str(&format!(
        "  memory:    about {}: {} {} + per-vertex arrays {} ({} B x {} vertices){}\n",
        format_size(mem.total()),
        if reader.in_memory { "graph" } else { "cache" },
        format_size(mem.graph),
        format_size(mem.per_vertex),
        mem.per_vertex / g.vertices.max(1),
        g.vertices,
        if mem.extra_rows > 0 {
            format!(" + result rows {}", format_size(mem.extra_rows))
        } else {
            String::new()
        }
    ));
    if mem.scratch > 0 {
        out.push_str(&format!(
            "  blocking:  {} segments of in-edges copied for a cache-blocked pull: + {}\n",
            crate::blocking::segments(g.vertices).unwrap_or(0),
            format_size(mem.scratch)
        ));
    }
    let columns = plan
        .call
        .spec
        .columns
        .iter()
        .map(|c| {
            format!(
                "{} {}{}",
                c.name,
                match c.ty {
                    ColumnType::VertexKey if g.string_keys() => "Utf8",
                    ColumnType::VertexKey => ColumnType::UInt64.name(),
                    other => other.name(),
                },
                if c.nullable { " (nullable)" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    out.push_str(&format!("  output:    {columns}\n"));
    if let Some((col, desc)) = &plan.order_by {
        out.push_str(&format!(
            "  order:     {col} {}{}\n",
            if *desc { "DESC" } else { "ASC" },
            plan.limit
                .map(|l| format!(", top {l} by a bounded heap"))
                .unwrap_or_default()
        ));
    } else if let Some(l) = plan.limit {
        out.push_str(&format!("  limit:     first {l} rows\n"));
    }
    if let Some(p) = &plan.into {
        out.push_str(&format!("  into:      {}\n", p.display()));
    }
    out
}
