//! Importing graphs from text and columnar files into the block-file format.
//!
//! The pipeline keeps memory bounded by `memory_budget` whatever the input size:
//! 1. parse the input into (src, dst, weight) records with input ids (undirected edges are
//!    normalised to `src <= dst`), collecting the vertex id set on the way (or taking it from a
//!    vertex file); text with integer keys is parsed in chunks on the import's threads
//!    (`parallel.rs`); full buffers are sorted and spilled as runs ([`external_sort`]). String
//!    keys ([`keys`]) get temporary ids in first-seen order; `KEYS auto` reads integers until
//!    a key is not one, then reads the input again with string keys;
//! 2. merge the runs in (src, dst) order, merging duplicates by the policy, and map input ids
//!    to dense internal ids (the rank of the input id, or of the string key);
//! 3. directed: the merged stream *is* the out-adjacency, written as it comes (string keys:
//!    sorted again, since temporary ids are not ranks), while (dst, src) arcs are sorted again
//!    for the in-adjacency; undirected: both directions of every edge are sorted again for the
//!    (only) adjacency;
//! 4. the writer packs lists into blocks in side files and assembles the final file atomically.
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
mod mtx;
mod parallel;
pub mod parquet;
pub mod report;
mod sink;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use arrow_array::RecordBatchReader;

use crate::blockfile::format::IdOrder;
use crate::blockfile::writer::{write_graph_file, GraphFileContents, ListWriter, WrittenLists};
use crate::error::{Result, StoreError};
pub use detect::detect_format;
use external_sort::{Arc, ArcRecord, EdgeRecord, InputEdge, Merged, PlainArc, PlainEdge, Sorter};
use idmap::{IdCollector, IdMapper};
use keys::{KeyInterner, KeyMode, SortedKeys};
use layout::Layout;
pub use report::{DuplicatePolicy, ImportReport, SelfLoopPolicy};
use report::{Policies, POLICY_OPTIONS};
pub(crate) use sink::EdgeSink;
use sink::{EdgeSorter, PhaseOne, SinkKeys, SinkSettings};

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
        bytes_read: read.bytes_read,
        edges: read.edges,
    });
    check_cancel(cancel)?;
    let vertices_from_file = facts.vertex_file.as_ref().map(|_| read.vertices_defined());
    let (ids, mapper) = internal_ids(read.keys, read.given_ids, read.collected, budget)?;
    let rest = Rest {
        req,
        tmp,
        pool,
        budget,
        read_buffer,
        layout,
        directed: read.directed,
        weighted: facts.weighted,
        policies,
        ids,
        mapper,
        dataset: facts.dataset,
        edges_read: read.edges,
        bytes_read: read.bytes_read,
        lines: read.lines,
        self_loops_dropped: read.self_loops_dropped,
        skipped: read.skipped,
        skipped_examples: read.skipped_examples,
        vertices_from_file,
        started,
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

/// What phases 2 to 4 start from: the sorted input edges, the vertex set, and what phase 1
/// counted.
struct Rest<'r> {
    req: &'r ImportRequest,
    tmp: tempfile::TempDir,
    pool: std::sync::Arc<rayon::ThreadPool>,
    budget: u64,
    read_buffer: usize,
    layout: Layout,
    directed: bool,
    weighted: bool,
    policies: Policies,
    ids: Vec<u64>,
    mapper: InternalIds,
    dataset: Option<graphalytics::GraphalyticsDataset>,
    edges_read: u64,
    bytes_read: u64,
    lines: u64,
    self_loops_dropped: u64,
    skipped: u64,
    skipped_examples: Vec<String>,
    vertices_from_file: Option<u64>,
    started: Instant,
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
        req,
        tmp,
        pool,
        budget,
        read_buffer,
        layout,
        directed,
        weighted,
        policies,
        ids,
        mapper,
        dataset,
        edges_read,
        bytes_read,
        lines,
        self_loops_dropped,
        skipped,
        skipped_examples,
        vertices_from_file,
        started,
    } = rest;
    let n = ids.len() as u32;
    let mut runs_spilled = 0u64;

    // Phase 2: merge, drop duplicates, map ids, write out-lists (directed) and sort again.
    // String keys: the merged stream is in temporary-id order, not internal-id order, so a
    // directed graph's out-lists are sorted again too (into `out_again`).
    let per_vertex = resident_bytes_per_vertex(directed, layout);
    let resident = ids.len() as u64 * per_vertex + mapper.bytes();
    let sorter2_bytes = (budget / 2).saturating_sub(resident).max(budget / 8) as usize;
    // Degree order renumbers every vertex once the degrees are known, after this merge, so
    // out-lists cannot be written as the merge produces them either.
    let resort_out = directed && (matches!(mapper, InternalIds::Ranks(_)) || layout.renumbers());
    let sorter2_bytes = if resort_out {
        sorter2_bytes / 2
    } else {
        sorter2_bytes
    };
    let mut merged = sorter.finish_counting(&mut runs_spilled)?;
    // Under degree or locality order the arcs' final ids are known only after this merge:
    // they are collected unsorted and sorted once, renumbered.
    let arcs = |name: &str| {
        if layout.renumbers() {
            Sorter::deferred(tmp.path(), name, sorter2_bytes, read_buffer)
        } else {
            Sorter::new(tmp.path(), name, sorter2_bytes, false, read_buffer)
        }
        .on_pool(&pool)
    };
    let mut again: Sorter<A> = arcs(if directed { "in" } else { "both" });
    let mut out_again: Option<Sorter<A>> = resort_out.then(|| arcs("out"));
    let mut out_writer = if directed && !resort_out {
        Some(ListWriter::new(tmp.path(), "out", n, weighted)?)
    } else {
        None
    };
    let mut list = ListBuf::default();
    let mut edges = 0u64;
    let mut duplicates = 0u64;
    let mut self_loops_kept = 0u64;
    let mut negative_weights = 0u64;
    let mut merged_count = 0u64;
    // Both directions' degrees by key-order id, to choose and compute the order.
    let mut degrees: Vec<u32> = if layout.renumbers() {
        vec![0; n as usize]
    } else {
        Vec::new()
    };
    let unknown =
        |id: u64| StoreError::Other(format!("import: vertex {id} missing from the id map"));
    // One distinct edge, its duplicates merged: map ids and pass it on.
    let mut emit = |e: E| -> Result<()> {
        let (src, dst, weight) = (e.src(), e.dst(), e.weight());
        edges += 1;
        if src == dst {
            self_loops_kept += 1;
        }
        if weighted && weight < 0.0 {
            negative_weights += 1;
        }
        let a = mapper.map(src).ok_or_else(|| unknown(src))?;
        let b = mapper.map(dst).ok_or_else(|| unknown(dst))?;
        if !degrees.is_empty() {
            degrees[a as usize] = degrees[a as usize].saturating_add(1);
            if a != b || directed {
                degrees[b as usize] = degrees[b as usize].saturating_add(1);
            }
        }
        if let Some(w) = &mut out_writer {
            list.add(w, a, b, weight, weighted)?;
            again.push(A::arc(b, a, weight))?;
        } else if let Some(out) = &mut out_again {
            out.push(A::arc(a, b, weight))?;
            again.push(A::arc(b, a, weight))?;
        } else {
            again.push(A::arc(a, b, weight))?;
            if a != b {
                again.push(A::arc(b, a, weight))?;
            }
        }
        Ok(())
    };
    // The edge being merged with its duplicates (equal keys arrive together, in input order).
    let mut pending: Option<E> = None;
    while let Some(e) = merged.next()? {
        merged_count += 1;
        if merged_count & (REPORT_EVERY - 1) == 0 {
            progress(ImportProgress {
                phase: ImportPhase::Sorting,
                bytes_read,
                edges: merged_count,
            });
            check_cancel(cancel)?;
        }
        if let Some(p) = &mut pending {
            if p.key() == e.key() {
                duplicates += 1;
                p.set_weight(policies.duplicates.combine(p.weight(), e.weight()));
                continue;
            }
        }
        if let Some(p) = pending.replace(e) {
            emit(p)?;
        }
    }
    if let Some(p) = pending.take() {
        emit(p)?;
    }
    drop(merged);
    let (mut ids, mut again, mut out_again) = (ids, again, out_again);
    let (mut order, mut layout_reason) = if layout.renumbers() {
        layout::choose(layout, &degrees, (budget / 2).saturating_sub(resident))?
    } else {
        (IdOrder::Key, "LAYOUT given".to_string())
    };
    if order != IdOrder::Key {
        progress(ImportProgress {
            phase: ImportPhase::Renumbering,
            bytes_read,
            edges: 0,
        });
        let mut new_id = None;
        if order == IdOrder::Locality {
            // Every arc once from each end: the undirected adjacency the clusters grow in.
            let mut adj = layout::Adjacency::with_degrees(&degrees);
            again.for_each(|a| adj.add(a.from(), a.to()))?;
            if let Some(out) = &out_again {
                out.for_each(|a| adj.add(a.from(), a.to()))?;
            }
            check_cancel(cancel)?;
            let capacity = layout::cluster_capacity(directed);
            (order, layout_reason) =
                layout::confirm_locality(layout, &adj, &degrees, capacity, layout_reason);
            if order == IdOrder::Locality {
                new_id = Some(layout::locality_order(&adj, &degrees, capacity));
            }
        }
        let new_id = new_id.unwrap_or_else(|| layout::degree_order(&degrees));
        drop(degrees);
        let mut relabel = |s: Sorter<A>, name: &str| -> Result<Sorter<A>> {
            let mut count = 0u64;
            s.remap(name, &mut runs_spilled, |a| {
                count += 1;
                if count & (REPORT_EVERY - 1) == 0 {
                    progress(ImportProgress {
                        phase: ImportPhase::Renumbering,
                        bytes_read,
                        edges: count,
                    });
                    check_cancel(cancel)?;
                }
                Ok(A::arc(
                    new_id[a.from() as usize],
                    new_id[a.to() as usize],
                    a.weight(),
                ))
            })
        };
        again = relabel(
            again,
            if directed {
                "in-degree-order"
            } else {
                "both-degree-order"
            },
        )?;
        out_again = out_again
            .map(|s| relabel(s, "out-degree-order"))
            .transpose()?;
        let mut by_new = vec![0u64; ids.len()];
        for (rank, &id) in ids.iter().enumerate() {
            by_new[new_id[rank] as usize] = id;
        }
        ids = by_new;
    }
    let (out, inn) = match (out_writer, out_again) {
        (Some(mut w), _) => {
            list.flush(&mut w, weighted)?;
            let out = w.finish()?;
            let inn = lists_from(
                again,
                tmp.path(),
                "in",
                n,
                weighted,
                progress,
                cancel,
                bytes_read,
                &mut runs_spilled,
            )?;
            (out, Some(inn))
        }
        (None, Some(out_again)) => {
            let out = lists_from(
                out_again,
                tmp.path(),
                "out",
                n,
                weighted,
                progress,
                cancel,
                bytes_read,
                &mut runs_spilled,
            )?;
            let inn = lists_from(
                again,
                tmp.path(),
                "in",
                n,
                weighted,
                progress,
                cancel,
                bytes_read,
                &mut runs_spilled,
            )?;
            (out, Some(inn))
        }
        (None, None) => {
            let out = lists_from(
                again,
                tmp.path(),
                "out",
                n,
                weighted,
                progress,
                cancel,
                bytes_read,
                &mut runs_spilled,
            )?;
            (out, None)
        }
    };

    if let Some(ds) = &dataset {
        let bad = |what: &str, meta: u64, got: u64| StoreError::Input {
            path: ds.properties.clone(),
            line: 0,
            message: format!("meta.{what} = {meta}, but {got} were read"),
        };
        if let Some(m) = ds.meta_vertices {
            if m != n as u64 {
                return Err(bad("vertices", m, n as u64));
            }
        }
        if let Some(m) = ds.meta_edges {
            if m != edges_read {
                return Err(bad("edges", m, edges_read));
            }
        }
    }

    progress(ImportProgress {
        phase: ImportPhase::Writing,
        bytes_read,
        edges,
    });
    check_cancel(cancel)?;
    let arcs = out.arcs;
    let contents = GraphFileContents {
        identity: req.identity.clone(),
        keys: match mapper {
            InternalIds::Ranks(k) => Some(k),
            InternalIds::Ids(_) => None,
        },
        ids,
        order,
        edges,
        directed,
        weighted,
        out,
        inn,
    };
    let file_bytes = write_graph_file(&req.dest, &contents)?;
    let string_keys = contents.keys.is_some();
    let format_version = crate::blockfile::format::FORMAT_VERSION;
    let key_bytes = contents.keys.as_ref().map_or(0, |k| k.file_bytes());
    drop(contents);
    drop(tmp);
    Ok(ImportSummary {
        vertices: n as u64,
        edges,
        arcs,
        directed,
        weighted,
        file_bytes,
        elapsed: started.elapsed(),
        bytes_read,
        duplicates_dropped: duplicates,
        runs_spilled,
        string_keys,
        key_bytes,
        format_version,
        report: ImportReport {
            lines_read: lines,
            edges_kept: edges,
            duplicates: policies.duplicates,
            duplicates_merged: duplicates,
            self_loops: policies.self_loops,
            self_loop_count: match policies.self_loops {
                SelfLoopPolicy::Keep => self_loops_kept,
                SelfLoopPolicy::Drop => self_loops_dropped,
            },
            lines_skipped: skipped,
            skipped_examples,
            vertices_from_file,
            negative_weights,
            layout: order.keyword().to_string(),
            layout_reason,
        },
    })
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

/// The list being assembled for one vertex.
#[derive(Default)]
struct ListBuf {
    vertex: Option<u32>,
    targets: Vec<u32>,
    weights: Vec<f64>,
}

impl ListBuf {
    #[inline]
    fn add(
        &mut self,
        w: &mut ListWriter,
        from: u32,
        to: u32,
        weight: f64,
        weighted: bool,
    ) -> Result<()> {
        if self.vertex != Some(from) {
            self.flush(w, weighted)?;
            self.vertex = Some(from);
        }
        self.targets.push(to);
        if weighted {
            self.weights.push(weight);
        }
        Ok(())
    }

    fn flush(&mut self, w: &mut ListWriter, weighted: bool) -> Result<()> {
        if let Some(v) = self.vertex.take() {
            w.push(v, &self.targets, weighted.then_some(&self.weights[..]))?;
            self.targets.clear();
            self.weights.clear();
        }
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
fn lists_from<A: ArcRecord>(
    sorter: Sorter<A>,
    dir: &Path,
    name: &str,
    n: u32,
    weighted: bool,
    progress: &mut dyn FnMut(ImportProgress),
    cancel: &AtomicBool,
    bytes_read: u64,
    runs_spilled: &mut u64,
) -> Result<WrittenLists> {
    let mut merged: Merged<A> = sorter.finish_counting(runs_spilled)?;
    let mut w = ListWriter::new(dir, name, n, weighted)?;
    let mut list = ListBuf::default();
    let mut count = 0u64;
    while let Some(a) = merged.next()? {
        count += 1;
        if count & (REPORT_EVERY - 1) == 0 {
            progress(ImportProgress {
                phase: ImportPhase::Sorting,
                bytes_read,
                edges: count,
            });
            check_cancel(cancel)?;
        }
        list.add(&mut w, a.from(), a.to(), a.weight(), weighted)?;
    }
    list.flush(&mut w, weighted)?;
    w.finish()
}
