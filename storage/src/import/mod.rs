//! Importing graphs from text and columnar files into the block-file format.
//!
//! The pipeline keeps memory bounded by `memory_budget` whatever the input size:
//! 1. parse the input into (src, dst, weight) records with input ids (undirected edges are
//!    normalised to `src <= dst`), collecting the vertex id set on the way (or taking it from a
//!    vertex file): every reader feeds the `EdgeSink` (`sink.rs`); text with integer keys is
//!    parsed in chunks on the import's threads (`parallel.rs`); full buffers are sorted and
//!    spilled as runs ([`external_sort`]). String keys ([`keys`]) get temporary ids in
//!    first-seen order; `KEYS auto` reads integers until a key is not one, then reads the input
//!    again with string keys;
//! 2. merge the runs in (src, dst) order, merging duplicates by the policy, and map input ids
//!    to dense internal ids (the rank of the input id, or of the string key) (`merge.rs`);
//! 3. directed: the merged stream *is* the out-adjacency, written as it comes (string keys:
//!    sorted again, since temporary ids are not ranks), while (dst, src) arcs are sorted again
//!    for the in-adjacency; undirected: both directions of every edge are sorted again for the
//!    (only) adjacency. Under `LAYOUT degree` or `locality` the vertices are first given their
//!    new ids and every arc waiting to be sorted is renamed (`renumber.rs`);
//! 4. the writer packs lists into blocks in side files (`lists.rs`) and assembles the final
//!    file atomically.
//!
//! `import_from` runs phase 1 and `lists_and_file` phases 2 to 4, each as a few named
//! steps.
//!
//! Every temporary file lives in a `TempDir` inside `temp_dir`, removed on success, on error
//! and on cancellation.

mod arrow_batches;
mod chunks;
pub mod csv;
mod detect;
pub mod edgelist;
pub mod external_sort;
pub mod graphalytics;
pub mod idmap;
mod input;
pub mod keys;
pub mod layout;
mod lists;
mod merge;
mod mtx;
mod parallel;
pub mod parquet;
mod renumber;
pub mod report;
mod sink;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use arrow_array::RecordBatchReader;

use crate::blockfile::format::IdOrder;
use crate::blockfile::writer::{write_graph_file, GraphFileContents};
use crate::error::{Result, StoreError};
pub use detect::detect_format;
use external_sort::{Arc, ArcRecord, EdgeRecord, InputEdge, PlainArc, PlainEdge, Sorter};
use idmap::{IdCollector, IdMapper};
use keys::{KeyInterner, KeyMode, SortedKeys};
use layout::Layout;
use lists::ListFiles;
use merge::{merge_duplicates, ArcRouter, MergeCounts};
use renumber::renumber;
pub use report::{DuplicatePolicy, ImportReport, SelfLoopPolicy};
use report::{Policies, POLICY_OPTIONS};
pub(crate) use sink::EdgeSink;
use sink::{EdgeSorter, PhaseOne, ReadCounts, SinkKeys, SinkSettings};

/// The input formats the importer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputFormat {
    /// Whitespace-separated `src dst [weight]` lines.
    Edgelist,
    /// An LDBC Graphalytics dataset (`.properties` + `.v` + `.e`).
    Graphalytics,
    /// A delimited text file with a header row.
    Csv,
    /// A Parquet file with integer or string key columns.
    Parquet,
    /// A Matrix Market coordinate file.
    MatrixMarket,
    /// Arrow record batches handed over in memory (a data frame), through [`import_batches`].
    Arrow,
}

impl InputFormat {
    /// The word `CREATE GRAPH ... FORMAT` takes for this format.
    pub fn keyword(self) -> &'static str {
        match self {
            InputFormat::Edgelist => "edgelist",
            InputFormat::Graphalytics => "graphalytics",
            InputFormat::Csv => "csv",
            InputFormat::Parquet => "parquet",
            InputFormat::MatrixMarket => "mtx",
            InputFormat::Arrow => "arrow",
        }
    }
}

/// Everything an import needs to know.
#[derive(Debug, Clone)]
pub struct ImportRequest {
    /// The input file (for Graphalytics: the `.properties` file or its dataset directory).
    pub source: PathBuf,
    pub format: InputFormat,
    /// `Some(true)` DIRECTED, `Some(false)` UNDIRECTED, `None` the format's default (directed,
    /// or what the Graphalytics properties say).
    pub directed: Option<bool>,
    /// Edges carry an `f64` weight.
    pub weighted: bool,
    /// A vertex file (one id per line) defining the vertex set, isolated vertices included.
    pub vertices: Option<PathBuf>,
    /// Format options: csv `delimiter`, `header`, `src`, `dst`, `weight`; parquet `src`,
    /// `dst`, `weight`; for every format the policies `duplicates`, `self_loops`, `on_error`
    /// (see [`report`]) and `keys` (`integer`, `string`, `auto`: see [`keys`]).
    pub options: Vec<(String, String)>,
    /// Where the graph file goes.
    pub dest: PathBuf,
    /// Bytes of memory the import may use for its edges (sort buffers, merge buffers, parse
    /// chunks); per-vertex state and fixed I/O buffers come on top, at most
    /// [`PEAK_BYTES_PER_VERTEX`] per vertex and [`PEAK_FIXED_BYTES`].
    pub memory_budget: u64,
    /// Threads that parse text inputs and sort (`SET threads`); 0 means one per core.
    pub threads: usize,
    /// Where spilled runs and side files go.
    pub temp_dir: PathBuf,
    /// What the written file says about itself (graph name, generation, file id, ...).
    pub identity: crate::blockfile::format::FileIdentity,
}

/// What an import is doing, for progress reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportPhase {
    /// Parsing the input.
    Reading,
    /// Merging sorted runs and packing adjacency lists.
    Sorting,
    /// `LAYOUT degree` or `locality`: ordering the vertices and sorting the arcs again under
    /// their new ids.
    Renumbering,
    /// Assembling the graph file.
    Writing,
}

impl ImportPhase {
    /// What the phase does, for progress lines.
    pub fn name(self) -> &'static str {
        match self {
            ImportPhase::Reading => "reading",
            ImportPhase::Sorting => "sorting",
            ImportPhase::Renumbering => "renumbering",
            ImportPhase::Writing => "writing",
        }
    }
}

/// A progress report, sent about every million edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportProgress {
    pub phase: ImportPhase,
    /// Input bytes read so far.
    pub bytes_read: u64,
    /// Edges (input lines / rows) read, or records merged, so far.
    pub edges: u64,
}

/// What an import produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportSummary {
    pub vertices: u64,
    /// Distinct edges as the user counts them.
    pub edges: u64,
    /// Stored arcs per direction.
    pub arcs: u64,
    pub directed: bool,
    pub weighted: bool,
    /// Size of the graph file.
    pub file_bytes: u64,
    pub elapsed: Duration,
    /// Input bytes read.
    pub bytes_read: u64,
    /// Exact duplicate edges dropped (for undirected graphs `u v` and `v u` are the same edge).
    pub duplicates_dropped: u64,
    /// Sorted runs spilled to disk (0 when everything fit in the budget).
    pub runs_spilled: u64,
    /// The vertices are named by string keys (else by unsigned integers).
    pub string_keys: bool,
    /// Bytes of the string keys in the file (offsets and text); 0 for integer ids.
    pub key_bytes: u64,
    /// The format version of the file written (4 for `LAYOUT degree`, else 3).
    pub format_version: u32,
    /// What was read, kept, merged and skipped, and under which policies.
    pub report: ImportReport,
}

/// The most heap an import holds per vertex beyond `memory_budget`: the id set and id map,
/// the list index entries of both directions, a renumbering's degrees and new ids.
pub const PEAK_BYTES_PER_VERTEX: u64 = 64;

/// The most heap an import holds beyond `memory_budget` whatever the input: file read and
/// decompression buffers, run and list writers' buffers, the chunk being cut, thread state.
pub const PEAK_FIXED_BYTES: u64 = 16 << 20;

/// Records per progress report and cancellation check.
const REPORT_EVERY: u64 = 1 << 20;

fn check_cancel(cancel: &AtomicBool) -> Result<()> {
    if cancel.load(Ordering::Relaxed) {
        Err(StoreError::Cancelled)
    } else {
        Ok(())
    }
}

fn option<'a>(req: &'a ImportRequest, key: &str) -> Option<&'a str> {
    req.options
        .iter()
        .rev()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

fn check_options(req: &ImportRequest, allowed: &[&str]) -> Result<()> {
    for (k, _) in &req.options {
        if POLICY_OPTIONS.iter().any(|a| a.eq_ignore_ascii_case(k))
            || k.eq_ignore_ascii_case("keys")
            || k.eq_ignore_ascii_case("layout")
        {
            continue;
        }
        if !allowed.iter().any(|a| a.eq_ignore_ascii_case(k)) {
            let known = if allowed.is_empty() {
                "it takes none".to_string()
            } else {
                format!("known: {}", allowed.join(", "))
            };
            return Err(StoreError::Other(format!(
                "unknown option `{k}` for FORMAT {}{} ({known})",
                req.format.keyword(),
                base::suggest::did_you_mean(k, allowed.iter().copied()),
            )));
        }
    }
    Ok(())
}

fn csv_options(req: &ImportRequest) -> Result<csv::CsvOptions> {
    check_options(req, &["delimiter", "header", "src", "dst", "weight"])?;
    let mut o = csv::CsvOptions::default();
    if detect::is_tab_separated_name(&req.source) {
        o.delimiter = b'\t';
    }
    if let Some(d) = option(req, "delimiter") {
        o.delimiter = match d {
            "\\t" | "tab" | "\t" => b'\t',
            d if d.len() == 1 && d.is_ascii() => d.as_bytes()[0],
            d => {
                return Err(StoreError::Other(format!(
                    "option delimiter must be one ASCII character (or `tab`), found `{d}`"
                )))
            }
        };
    }
    if let Some(h) = option(req, "header") {
        o.header = match h.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Some(true),
            "false" | "no" | "0" => Some(false),
            _ => {
                return Err(StoreError::Other(format!(
                    "option header must be true or false, found `{h}`"
                )))
            }
        };
    }
    o.src = option(req, "src").map(str::to_string);
    o.dst = option(req, "dst").map(str::to_string);
    o.weight = option(req, "weight").map(str::to_string);
    Ok(o)
}

/// Imports `req.source` into a graph file at `req.dest`.
///
/// Calls `progress` about every million edges and stops with [`StoreError::Cancelled`] soon
/// after `cancel` is set; temporary files are removed and no destination file is left behind
/// on any error.
pub fn import(
    req: &ImportRequest,
    progress: &mut dyn FnMut(ImportProgress),
    cancel: &AtomicBool,
) -> Result<ImportSummary> {
    import_from(req, None, progress, cancel)
}

/// Imports the edges of `batches`, Arrow record batches held in memory (a data frame), into a
/// graph file at `req.dest`, as [`import`] does a file: batches are read one at a time, so a
/// frame produced in pieces is never whole in memory here. `req.source` only names the input
/// in errors and in the file's identity; `req.options` may name the `src`, `dst` and `weight`
/// columns and the key policy.
pub fn import_batches(
    req: &ImportRequest,
    batches: &mut dyn RecordBatchReader,
    progress: &mut dyn FnMut(ImportProgress),
    cancel: &AtomicBool,
) -> Result<ImportSummary> {
    let req = ImportRequest {
        format: InputFormat::Arrow,
        ..req.clone()
    };
    import_from(&req, Some(batches), progress, cancel)
}

/// The whole import: settles what the format and options say, reads the input (phase 1), then
/// hands the sorted edges to [`lists_and_file`] under the record types the weights call for.
fn import_from(
    req: &ImportRequest,
    batches: Option<&mut dyn RecordBatchReader>,
    progress: &mut dyn FnMut(ImportProgress),
    cancel: &AtomicBool,
) -> Result<ImportSummary> {
    let started = Instant::now();
    check_cancel(cancel)?;
    let tmp = import_temp_dir(&req.temp_dir)?;
    let budget = req.memory_budget.max(1);
    let policies = Policies::from_options(&req.options)?;
    let pool = import_pool(req.threads)?;
    let facts = FormatFacts::of(req, cancel)?;
    let key_mode = KeyMode::from_options(&req.options)?;
    let layout = Layout::from_options(&req.options)?;
    if req.format == InputFormat::MatrixMarket && key_mode == KeyMode::String {
        return Err(StoreError::Other(
            "FORMAT mtx numbers its vertices 1..n; drop `KEYS string`".into(),
        ));
    }
    let settings = SinkSettings {
        directed: facts.directed,
        weighted: facts.weighted,
        budget,
        layout,
        policies,
        dir: tmp.path(),
        pool: &pool,
    };
    let read_buffer = settings.read_buffer();
    let read = read_edges(req, batches, &facts, &settings, key_mode, progress, cancel)?;
    progress(ImportProgress {
        phase: ImportPhase::Sorting,
        bytes_read: read.counts.bytes_read,
        edges: read.counts.edges,
    });
    check_cancel(cancel)?;
    let (ids, mapper) = internal_ids(read.keys, read.given_ids, read.collected, budget)?;
    let job = ImportJob {
        req,
        pool,
        budget,
        read_buffer,
        layout,
        directed: read.directed,
        weighted: facts.weighted,
        policies,
        dataset: facts.dataset,
        started,
    };
    let rest = Rest {
        job,
        tmp,
        ids,
        mapper,
        read: read.counts,
    };
    match read.sorter {
        EdgeSorter::Weighted(s) => lists_and_file::<InputEdge, Arc>(rest, s, progress, cancel),
        EdgeSorter::Plain(s) => lists_and_file::<PlainEdge, PlainArc>(rest, s, progress, cancel),
    }
}

/// The import's own temporary directory inside `temp_dir`: spilled runs and side files go
/// there, and it is removed with everything in it however the import ends.
fn import_temp_dir(temp_dir: &Path) -> Result<tempfile::TempDir> {
    std::fs::create_dir_all(temp_dir).map_err(|e| StoreError::io(temp_dir, e))?;
    tempfile::Builder::new()
        .prefix("frontier-import-")
        .tempdir_in(temp_dir)
        .map_err(|e| StoreError::io(temp_dir, e))
}

/// The import's threads (`SET threads`, 0 for one per core): they parse text in chunks and
/// sort the runs.
fn import_pool(threads: usize) -> Result<std::sync::Arc<rayon::ThreadPool>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("frontier-sort-{i}"))
        .build()
        .map_err(|e| StoreError::Other(format!("cannot start the import's sort threads: {e}")))?;
    Ok(std::sync::Arc::new(pool))
}

/// What the format and the statement say about the graph before its edges are read.
struct FormatFacts {
    directed: bool,
    weighted: bool,
    /// The file defining the vertex set: `VERTICES`, or a Graphalytics dataset's own.
    vertex_file: Option<PathBuf>,
    /// A Graphalytics dataset's properties.
    dataset: Option<graphalytics::GraphalyticsDataset>,
}

impl FormatFacts {
    /// Checks the options the format takes; a Graphalytics dataset's properties are read and
    /// decide the rest.
    fn of(req: &ImportRequest, cancel: &AtomicBool) -> Result<FormatFacts> {
        match req.format {
            InputFormat::Graphalytics => return FormatFacts::graphalytics(req, cancel),
            InputFormat::Edgelist => check_options(req, &[])?,
            InputFormat::Csv => {
                csv_options(req)?;
            }
            InputFormat::Parquet | InputFormat::Arrow => {
                check_options(req, &["src", "dst", "weight"])?
            }
            InputFormat::MatrixMarket => check_options(req, &[])?,
        }
        Ok(FormatFacts {
            directed: req.directed.unwrap_or(true),
            weighted: req.weighted,
            vertex_file: req.vertices.clone(),
            dataset: None,
        })
    }

    /// A Graphalytics dataset says itself whether it is directed or weighted and names its
    /// vertex file: the statement may repeat what it says, but not contradict it.
    fn graphalytics(req: &ImportRequest, cancel: &AtomicBool) -> Result<FormatFacts> {
        check_options(req, &[])?;
        let props = graphalytics::find_properties(&req.source)?;
        let ds = graphalytics::read_properties(&props, cancel)?;
        let contradiction = |m: String| StoreError::Input {
            path: props.clone(),
            line: 0,
            message: m,
        };
        if let Some(d) = req.directed {
            if d != ds.directed {
                return Err(contradiction(format!(
                    "{} was asked for, but the properties say directed = {}",
                    if d { "DIRECTED" } else { "UNDIRECTED" },
                    ds.directed
                )));
            }
        }
        if req.weighted && !ds.weighted {
            return Err(contradiction(
                "WEIGHTED was asked for, but the edges have no `weight` property".into(),
            ));
        }
        if req.vertices.is_some() {
            return Err(contradiction(
                "a Graphalytics dataset names its own vertex file; drop VERTICES".into(),
            ));
        }
        Ok(FormatFacts {
            directed: ds.directed,
            weighted: ds.weighted,
            vertex_file: Some(ds.vertex_file.clone()),
            dataset: Some(ds),
        })
    }
}

/// Phase 1: parses the input into sorted runs of input-id edges. `KEYS auto` reads integers
/// until a key is not one, then reads the input again with string keys.
fn read_edges(
    req: &ImportRequest,
    mut batches: Option<&mut dyn RecordBatchReader>,
    facts: &FormatFacts,
    settings: &SinkSettings<'_>,
    key_mode: KeyMode,
    progress: &mut dyn FnMut(ImportProgress),
    cancel: &AtomicBool,
) -> Result<PhaseOne> {
    let mut strings = key_mode == KeyMode::String;
    loop {
        let keys = if strings {
            SinkKeys::Strings(KeyInterner::default())
        } else {
            SinkKeys::Integer {
                explicit: key_mode == KeyMode::Integer,
            }
        };
        let mut sink = EdgeSink::new(keys, settings, &mut *progress, cancel);
        let outcome = read_input(
            req,
            batches.as_deref_mut(),
            facts.vertex_file.as_deref(),
            facts.dataset.as_ref(),
            facts.weighted,
            settings.budget,
            &mut sink,
        );
        if sink.restart_with_strings && !strings {
            check_rereadable(req, facts.vertex_file.as_deref())?;
            strings = true;
            continue;
        }
        outcome?;
        return Ok(PhaseOne::from(sink));
    }
}

/// Reading again needs files, not streams: refuses a source or vertex file that is not a
/// regular file. Record batches decide their key type from their schema before any batch is
/// taken, so they are still whole.
fn check_rereadable(req: &ImportRequest, vertex_file: Option<&Path>) -> Result<()> {
    let source = (req.format != InputFormat::Arrow).then_some(req.source.as_path());
    let inputs = [source, vertex_file];
    if let Some(stream) = inputs.into_iter().flatten().find(|p| !is_regular_file(p)) {
        return Err(StoreError::Other(format!(
            "{}: a vertex key is not an integer, so the input must be read again with \
             string keys, but it is not a regular file; add `KEYS string`",
            stream.display()
        )));
    }
    Ok(())
}

/// Internal ids, the rank of the input id or of the string key, and the input id (for string
/// keys, the key's rank) of each internal vertex.
fn internal_ids(
    keys: Option<SortedKeys>,
    given_ids: Option<Vec<u64>>,
    collected: Option<IdCollector>,
    budget: u64,
) -> Result<(Vec<u64>, InternalIds)> {
    match keys {
        Some(k) => {
            check_vertex_count(k.len())?;
            Ok((
                (0..k.len() as u64).collect::<Vec<u64>>(),
                InternalIds::Ranks(k),
            ))
        }
        None => {
            let ids = match given_ids {
                Some(ids) => ids,
                None => collected.map(IdCollector::finish).unwrap_or_default(),
            };
            check_vertex_count(ids.len())?;
            let m = IdMapper::new(&ids, budget / 4);
            Ok((ids, InternalIds::Ids(m)))
        }
    }
}

/// What the steps after phase 1 work with: the request, the import's threads and budget, the
/// graph's shape and the policies.
struct ImportJob<'r> {
    req: &'r ImportRequest,
    pool: std::sync::Arc<rayon::ThreadPool>,
    budget: u64,
    /// The read buffer of each run a merge reads.
    read_buffer: usize,
    layout: Layout,
    directed: bool,
    weighted: bool,
    policies: Policies,
    /// A Graphalytics dataset's properties, whose counts the graph must match.
    dataset: Option<graphalytics::GraphalyticsDataset>,
    started: Instant,
}

/// What phases 2 to 4 start from, besides the sorted input edges: the vertex set and what
/// phase 1 counted.
struct Rest<'r> {
    job: ImportJob<'r>,
    tmp: tempfile::TempDir,
    /// The input id (for string keys, the key's rank) of each internal vertex, in key order.
    ids: Vec<u64>,
    mapper: InternalIds,
    read: ReadCounts,
}

/// Progress reports and cancellation checks after phase 1.
struct Progress<'p> {
    report: &'p mut dyn FnMut(ImportProgress),
    cancel: &'p AtomicBool,
    /// Input bytes read: every report after phase 1 repeats it.
    bytes_read: u64,
}

impl Progress<'_> {
    /// Reports `edges` records done in `phase`.
    fn report(&mut self, phase: ImportPhase, edges: u64) {
        (self.report)(ImportProgress {
            phase,
            bytes_read: self.bytes_read,
            edges,
        });
    }

    /// After the `count`th record of `phase`: every [`REPORT_EVERY`] records, reports and
    /// checks for cancellation.
    #[inline]
    fn record(&mut self, phase: ImportPhase, count: u64) -> Result<()> {
        if count & (REPORT_EVERY - 1) == 0 {
            self.report(phase, count);
            self.check_cancel()?;
        }
        Ok(())
    }

    fn check_cancel(&self) -> Result<()> {
        check_cancel(self.cancel)
    }
}

/// Phases 2 to 4 from the sorted edges of `sorter`, with arcs of type `A`: unweighted edges
/// and arcs carry no weight, so the sorts (the largest buffers of an import) hold a third
/// (edges) and half (arcs) fewer bytes.
fn lists_and_file<E: EdgeRecord, A: ArcRecord>(
    rest: Rest<'_>,
    sorter: Sorter<E>,
    progress: &mut dyn FnMut(ImportProgress),
    cancel: &AtomicBool,
) -> Result<ImportSummary> {
    let Rest {
        job,
        tmp,
        ids,
        mapper,
        read,
    } = rest;
    let mut progress = Progress {
        report: progress,
        cancel,
        bytes_read: read.bytes_read,
    };
    let n = ids.len() as u32;
    let mut runs_spilled = 0u64;
    // What every vertex holds from here to the end, whatever the budget: the sorts and the
    // order's computation share what is left of half the budget.
    let resident =
        ids.len() as u64 * resident_bytes_per_vertex(job.directed, job.layout) + mapper.bytes();
    let merged = sorter.finish_counting(&mut runs_spilled)?;
    let mut router = ArcRouter::<A>::new(&job, tmp.path(), &mapper, n, resident)?;
    merge_duplicates(merged, job.policies.duplicates, &mut router, &mut progress)?;
    let (routed, degrees, merge) = router.finish();
    let memory = (job.budget / 2).saturating_sub(resident);
    let renumbered = renumber(
        &job,
        routed,
        degrees,
        ids,
        memory,
        &mut progress,
        &mut runs_spilled,
    )?;
    let files = ListFiles {
        dir: tmp.path(),
        n,
        weighted: job.weighted,
    };
    let (out, inn) = renumbered
        .routed
        .write_lists(&files, &mut progress, &mut runs_spilled)?;
    if let Some(ds) = &job.dataset {
        check_dataset_counts(ds, n as u64, read.edges)?;
    }
    progress.report(ImportPhase::Writing, merge.edges);
    progress.check_cancel()?;
    let arcs = out.arcs;
    let contents = GraphFileContents {
        identity: job.req.identity.clone(),
        keys: match mapper {
            InternalIds::Ranks(k) => Some(k),
            InternalIds::Ids(_) => None,
        },
        ids: renumbered.ids,
        order: renumbered.order,
        edges: merge.edges,
        directed: job.directed,
        weighted: job.weighted,
        out,
        inn,
    };
    let written = WrittenFile {
        vertices: n as u64,
        arcs,
        bytes: write_graph_file(&job.req.dest, &contents)?,
        string_keys: contents.keys.is_some(),
        key_bytes: contents.keys.as_ref().map_or(0, |k| k.file_bytes()),
        order: renumbered.order,
        layout_reason: renumbered.reason,
        runs_spilled,
    };
    drop(contents);
    drop(tmp);
    Ok(summary(&job, read, merge, written))
}

/// A Graphalytics dataset's `meta.vertices` and `meta.edges`, when given, must be what was
/// read.
fn check_dataset_counts(
    ds: &graphalytics::GraphalyticsDataset,
    vertices: u64,
    edges_read: u64,
) -> Result<()> {
    let bad = |what: &str, meta: u64, got: u64| StoreError::Input {
        path: ds.properties.clone(),
        line: 0,
        message: format!("meta.{what} = {meta}, but {got} were read"),
    };
    if let Some(m) = ds.meta_vertices {
        if m != vertices {
            return Err(bad("vertices", m, vertices));
        }
    }
    if let Some(m) = ds.meta_edges {
        if m != edges_read {
            return Err(bad("edges", m, edges_read));
        }
    }
    Ok(())
}

/// What the graph file holds, for the summary.
struct WrittenFile {
    vertices: u64,
    /// Arcs per direction.
    arcs: u64,
    bytes: u64,
    string_keys: bool,
    key_bytes: u64,
    order: IdOrder,
    layout_reason: String,
    /// Sorted runs spilled to disk by the sorts after phase 1's.
    runs_spilled: u64,
}

/// The summary and report of an import that wrote `file`.
fn summary(
    job: &ImportJob<'_>,
    read: ReadCounts,
    merge: MergeCounts,
    file: WrittenFile,
) -> ImportSummary {
    let policies = job.policies;
    ImportSummary {
        vertices: file.vertices,
        edges: merge.edges,
        arcs: file.arcs,
        directed: job.directed,
        weighted: job.weighted,
        file_bytes: file.bytes,
        elapsed: job.started.elapsed(),
        bytes_read: read.bytes_read,
        duplicates_dropped: merge.duplicates,
        runs_spilled: file.runs_spilled,
        string_keys: file.string_keys,
        key_bytes: file.key_bytes,
        format_version: crate::blockfile::format::FORMAT_VERSION,
        report: ImportReport {
            lines_read: read.lines,
            edges_kept: merge.edges,
            duplicates: policies.duplicates,
            duplicates_merged: merge.duplicates,
            self_loops: policies.self_loops,
            self_loop_count: match policies.self_loops {
                SelfLoopPolicy::Keep => merge.self_loops_kept,
                SelfLoopPolicy::Drop => read.self_loops_dropped,
            },
            lines_skipped: read.skipped,
            skipped_examples: read.skipped_examples,
            vertices_from_file: read.vertices_from_file,
            negative_weights: merge.negative_weights,
            layout: file.order.keyword().to_string(),
            layout_reason: file.layout_reason,
        },
    }
}

fn is_regular_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file())
}

/// How input ids (integers, or string keys' temporary ids) become internal ids.
enum InternalIds {
    /// The rank of the integer id.
    Ids(IdMapper),
    /// The rank of the string key.
    Ranks(SortedKeys),
}

impl InternalIds {
    #[inline]
    fn map(&self, id: u64) -> Option<u32> {
        match self {
            InternalIds::Ids(m) => m.map(id),
            InternalIds::Ranks(k) => k.rank(id),
        }
    }

    /// Bytes held in memory while the lists are written.
    fn bytes(&self) -> u64 {
        match self {
            InternalIds::Ids(_) => 0,
            InternalIds::Ranks(k) => k.memory_bytes(),
        }
    }
}

/// Reads the vertex file (when there is one) and the input's edges into `sink`.
fn read_input<'b>(
    req: &ImportRequest,
    batches: Option<&mut (dyn RecordBatchReader + 'b)>,
    vertex_file: Option<&Path>,
    dataset: Option<&graphalytics::GraphalyticsDataset>,
    weighted: bool,
    budget: u64,
    sink: &mut EdgeSink<'_>,
) -> Result<()> {
    if let Some(v) = vertex_file {
        let ids = edgelist::read_vertex_file(v, sink)?;
        if let Some(ids) = &ids {
            check_vertex_count(ids.len())?;
        }
        sink.define_vertices(v, ids, budget / 4);
    }
    match req.format {
        InputFormat::Edgelist => {
            edgelist::read_edgelist(&req.source, weighted.then_some(2), 3, sink)
        }
        InputFormat::Graphalytics => {
            let ds = dataset.expect("read with the format");
            let props = graphalytics::edge_property_count(ds);
            let wcol = graphalytics::weight_column(ds);
            edgelist::read_edgelist(
                &ds.edge_file,
                wcol,
                (2 + props).min(edgelist::MAX_COLS),
                sink,
            )
        }
        InputFormat::Csv => csv::read_csv(&req.source, &csv_options(req)?, weighted, sink),
        InputFormat::Parquet => parquet::read_parquet(
            &req.source,
            option(req, "src"),
            option(req, "dst"),
            option(req, "weight"),
            weighted,
            sink,
        ),
        InputFormat::MatrixMarket => mtx::read_mtx(&req.source, req.directed, weighted, sink),
        InputFormat::Arrow => {
            let batches = batches.ok_or_else(|| {
                StoreError::Other("Arrow edges are imported from record batches in memory".into())
            })?;
            arrow_batches::read_batches(
                &batches.schema(),
                batches,
                &req.source,
                option(req, "src"),
                option(req, "dst"),
                option(req, "weight"),
                weighted,
                sink,
            )
        }
    }
}

/// The bytes every vertex holds in memory from the merge phase to the end of an import,
/// whatever the budget: its id, the list writers' index entries, and when it is renumbered
/// its degree and then its new id.
fn resident_bytes_per_vertex(directed: bool, layout: Layout) -> u64 {
    8 + 12 * if directed { 2 } else { 1 } + if layout.renumbers() { 8 } else { 0 }
}

fn check_vertex_count(n: usize) -> Result<()> {
    if n as u64 > u32::MAX as u64 {
        return Err(StoreError::Other(format!(
            "the graph has {n} vertices; frontier supports at most 2^32-1 (4294967295)"
        )));
    }
    Ok(())
}
