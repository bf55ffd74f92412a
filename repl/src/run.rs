//! RUN, EXPLAIN RUN and PROFILE RUN: open the graph's store, plan, execute, and send the rows
//! to the terminal or a file.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use grammar::{Pos, Run, RunMode};
use planner::settings::format_size;
use planner::{ReaderInfo, RunPlan, Settings};
use storage::blockfile::open::GraphFile;
use storage::blockfile::open_store::{open_store, BlockStore, ReaderOptions};
use storage::catalog::{Catalog, GraphMeta, StorageKind};
use storage::GraphStore;

use crate::error::StatementError;
use crate::session::{OutputStyle, Session};
use crate::table::TextTable;

/// Calls `$body` with `$s` bound to the concrete store, so algorithms are monomorphised per
/// store and no list access goes through dynamic dispatch.
macro_rules! with_store {
    ($store:expr, $s:ident => $body:expr) => {
        match $store {
            BlockStore::Memory($s) => $body,
            BlockStore::OutOfCore($s) => $body,
        }
    };
}

/// Opened stores, kept between statements so repeated RUNs on a graph do not reload it.
#[derive(Default)]
pub struct StoreCache {
    open: HashMap<String, (GraphMeta, u64, u32, Arc<BlockStore>)>,
}

impl StoreCache {
    /// Drops the store of `name` (after DROP or CREATE OR REPLACE).
    pub fn forget(&mut self, name: &str) {
        self.open.remove(name);
    }

    /// Drops every store (after a SET that changes how stores are opened).
    pub fn clear(&mut self) {
        self.open.clear();
    }

    fn get(
        &mut self,
        catalog: &Catalog,
        meta: &GraphMeta,
        settings: &Settings,
    ) -> Result<Arc<BlockStore>, storage::StoreError> {
        let cache = effective_cache(meta, settings);
        if let Some((m, c, d, st)) = self.open.get(&meta.name) {
            if m == meta && *c == cache && *d == settings.io_depth {
                return Ok(st.clone());
            }
        }
        let path = catalog.graph_path(meta);
        let store = Arc::new(open_store(
            &path,
            &ReaderOptions {
                cache_bytes: cache,
                io_depth: settings.io_depth,
            },
        )?);
        self.open.insert(
            meta.name.clone(),
            (meta.clone(), cache, settings.io_depth, store.clone()),
        );
        Ok(store)
    }
}

/// `STORAGE memory` graphs are always loaded whole; others follow the `cache` setting.
fn effective_cache(meta: &GraphMeta, settings: &Settings) -> u64 {
    match meta.storage {
        StorageKind::Memory => u64::MAX,
        _ => settings.cache,
    }
}

/// Runs a RUN / EXPLAIN / PROFILE statement.
pub fn run(
    s: &mut Session,
    pos: Pos,
    mode: RunMode,
    run: &Run,
    out: &mut dyn Write,
) -> Result<(), StatementError> {
    let meta = crate::graphs::lookup(s, &run.graph)?;
    let werr = |e: std::io::Error| StatementError::at(pos, format!("cannot write output: {e}"));
    if mode == RunMode::Explain {
        // EXPLAIN reads only the superblock and the vertex index, never edge data.
        let path = s.catalog.graph_path(&meta);
        let file = GraphFile::open(&path).map_err(|e| StatementError::store(pos, e))?;
        let plan = planner::plan_run(run, &meta, &|id| file.internal_id(id), &s.settings)?;
        let cache = effective_cache(&meta, &s.settings);
        let in_memory = meta.file_bytes <= cache;
        let reader = ReaderInfo {
            description: if in_memory {
                format!(
                    "memory (the {} file fits the {} cache)",
                    format_size(meta.file_bytes),
                    format_size(cache)
                )
            } else {
                format!(
                    "out of core (io_depth {}, cache {} for a {} file)",
                    s.settings.io_depth,
                    format_size(cache),
                    format_size(meta.file_bytes)
                )
            },
            in_memory,
        };
        return write!(out, "{}", planner::explain(&plan, &reader, &s.settings)).map_err(werr);
    }

    let store = s
        .stores
        .get(&s.catalog, &meta, &s.settings)
        .map_err(|e| StatementError::store(pos, e))?;
    let plan = with_store!(&*store, st => planner::plan_run(run, &meta, &|id| st.internal_id(id), &s.settings))?;
    let cfg = exec::RunConfig {
        threads: plan.threads,
        mode: plan.mode,
        cancel: s.cancel.clone(),
        progress: crate::progress::run_progress(s.show_progress, &plan),
    };
    let started = Instant::now();
    let table = with_store!(&*store, st => exec::run(st, &plan.call, &cfg));
    crate::progress::clear_run_progress(s.show_progress);
    let table = table.map_err(|e| exec_error(pos, e))?;
    let table = exec::topk::order_and_limit(
        table,
        plan.order_by.as_ref().map(|(c, d)| (c.as_str(), *d)),
        plan.limit,
    )
    .map_err(|e| StatementError::at(pos, e.to_string()))?;
    let elapsed = started.elapsed();

    if let Some(path) = &plan.into {
        let meta_out = result_meta(&plan, elapsed);
        let summary = exec::sink::write_result(&table, path, plan.into_format, &meta_out)
            .map_err(|e| StatementError::at(run.into_pos.unwrap_or(pos), e.to_string()))?;
        if s.style == OutputStyle::Table {
            writeln!(
                out,
                "wrote {} rows to {} in {:.3} s",
                table.num_rows(),
                path.display(),
                elapsed.as_secs_f64()
            )
            .map_err(werr)?;
        }
        let _ = summary;
    } else {
        crate::render::render(&table, s.style, elapsed, out).map_err(werr)?;
    }
    if mode == RunMode::Profile {
        print_profile(&table, &store, s.style, out).map_err(werr)?;
    }
    Ok(())
}

fn exec_error(pos: Pos, e: exec::ExecError) -> StatementError {
    let cancelled = matches!(e, exec::ExecError::Cancelled);
    let mut err = match e {
        exec::ExecError::Store(se) => StatementError::store(pos, se),
        other => StatementError::at(pos, other.to_string()),
    };
    err.cancelled |= cancelled;
    err
}

fn result_meta(plan: &RunPlan, elapsed: std::time::Duration) -> exec::sink::ResultMeta {
    exec::sink::ResultMeta {
        algorithm: plan.spec.name.to_string(),
        parameters: plan.params.clone(),
        graph: plan.graph.name.clone(),
        vertices: plan.graph.vertices,
        edges: plan.graph.edges,
        elapsed,
    }
}

fn print_profile(
    table: &exec::ResultTable,
    store: &BlockStore,
    style: OutputStyle,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let reader = with_store!(store, st => st.describe_reader());
    if style == OutputStyle::Table {
        writeln!(
            out,
            "\nprofile ({reader}; algorithm {:.3} s):",
            table.algorithm_time.as_secs_f64()
        )?;
    }
    let mut t = TextTable::new(&[
        "iteration",
        "active",
        "edges",
        "strategy",
        "blocks read",
        "hit rate",
        "bytes read",
        "time ms",
    ]);
    for it in &table.iterations {
        t.row(vec![
            it.iteration.to_string(),
            it.active.to_string(),
            it.edges.to_string(),
            it.strategy.to_string(),
            it.blocks_read.to_string(),
            format!("{:.1} %", it.hit_rate * 100.0),
            format_size(it.bytes_read),
            format!("{:.3}", it.elapsed.as_secs_f64() * 1000.0),
        ]);
    }
    t.print(style, out)
}
