//! Phase 1's destination: the [`EdgeSink`] every reader puts its edges into, and the sorter
//! behind it. The sink reads vertex keys (integers, or string keys interned to temporary ids),
//! checks them against a vertex file, normalises undirected edges, collects the vertex ids,
//! applies the self-loop and error policies, and spills sorted runs; what it holds when the
//! input is read becomes a [`PhaseOne`].

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::external_sort::{InputEdge, PlainEdge, Sorter, FAN_IN};
use super::idmap::{IdCollector, IdMapper};
use super::keys::{self, KeyInterner, SortedKeys};
use super::layout::Layout;
use super::report::{Policies, SelfLoopPolicy, SKIPPED_EXAMPLES};
use super::{
    check_cancel, edgelist, resident_bytes_per_vertex, ImportPhase, ImportProgress, REPORT_EVERY,
};
use crate::error::{Result, StoreError};

/// Phase 1's sorter: weighted edges carry their weight, unweighted ones do not (two thirds
/// of the bytes).
pub(crate) enum EdgeSorter {
    Weighted(Sorter<InputEdge>),
    Plain(Sorter<PlainEdge>),
}

impl EdgeSorter {
    /// A sorter of `buffer_bytes` on `pool`. Weighted duplicates keep their input order (the
    /// policies combine them in it); unweighted duplicates are equal records, whose order
    /// cannot matter, so they sort unstably, without a scratch copy of the buffer.
    fn new(
        weighted: bool,
        dir: &Path,
        buffer_bytes: usize,
        read_buffer: usize,
        pool: &std::sync::Arc<rayon::ThreadPool>,
    ) -> EdgeSorter {
        if weighted {
            EdgeSorter::Weighted(
                Sorter::new(dir, "edges", buffer_bytes, true, read_buffer).on_pool(pool),
            )
        } else {
            EdgeSorter::Plain(
                Sorter::new(dir, "edges", buffer_bytes, false, read_buffer).on_pool(pool),
            )
        }
    }

    #[inline]
    fn push(&mut self, src: u64, dst: u64, weight: f64) -> Result<()> {
        match self {
            EdgeSorter::Weighted(s) => s.push(InputEdge { src, dst, weight }),
            EdgeSorter::Plain(s) => s.push(PlainEdge { src, dst }),
        }
    }

    fn set_buffer_bytes(&mut self, bytes: usize) {
        match self {
            EdgeSorter::Weighted(s) => s.set_buffer_bytes(bytes),
            EdgeSorter::Plain(s) => s.set_buffer_bytes(bytes),
        }
    }
}

/// How the sink reads vertex keys.
pub(crate) enum SinkKeys {
    /// Unsigned integers; `explicit` (`KEYS integer`) makes any other key an error, otherwise
    /// it asks for the input to be read again with string keys.
    Integer { explicit: bool },
    /// String keys, each given a temporary id by the interner.
    Strings(KeyInterner),
}

/// Where the parsers put edges: reads vertex keys, checks vertex membership, normalises
/// undirected edges, collects ids, feeds the sorter, reports progress and checks for
/// cancellation.
pub(crate) struct EdgeSink<'a> {
    /// Normalise edges to `src <= dst`; a reader may set it once before its first edge.
    pub(crate) directed: bool,
    keys: SinkKeys,
    /// Set when `KEYS auto` met a key that is not an integer: the import starts again with
    /// string keys.
    pub(super) restart_with_strings: bool,
    /// The vertex file, when one defines the vertex set, and (integer keys) its ids.
    vertex_file: Option<PathBuf>,
    vertex_set: Option<IdMapper>,
    given_ids: Option<Vec<u64>>,
    ids: Option<IdCollector>,
    sorter: EdgeSorter,
    /// The edge buffer's budget, and the share of the import's memory the vertex set may take
    /// on top (integer ids' collector, string keys' interner) before the buffer shrinks.
    edge_budget: u64,
    ids_budget: u64,
    /// The whole import's budget (`import_memory`) and layout: what a vertex count that a file
    /// declares is checked against before anything is allocated for it.
    memory_budget: u64,
    layout: Layout,
    edges: u64,
    pub(crate) bytes_read: u64,
    progress: &'a mut dyn FnMut(ImportProgress),
    pub(crate) cancel: &'a AtomicBool,
    /// The import's threads (`SET threads`): they sort the runs and parse text in chunks.
    pub(crate) pool: std::sync::Arc<rayon::ThreadPool>,
    policies: Policies,
    /// Input lines (or rows) seen, counted by the readers.
    pub(crate) lines: u64,
    self_loops_dropped: u64,
    skipped: u64,
    skipped_examples: Vec<String>,
}

/// What the sink of every reading of the input is made from (the first reading and, under
/// `KEYS auto`, the reading again with string keys).
pub(super) struct SinkSettings<'s> {
    pub(super) directed: bool,
    pub(super) weighted: bool,
    /// The whole import's budget (`import_memory`).
    pub(super) budget: u64,
    pub(super) layout: Layout,
    pub(super) policies: Policies,
    /// Where the sorter spills its runs.
    pub(super) dir: &'s Path,
    pub(super) pool: &'s std::sync::Arc<rayon::ThreadPool>,
}

impl SinkSettings<'_> {
    /// The read buffer of each run a merge reads: an eighth of the budget shared by the runs
    /// of one merge.
    pub(super) fn read_buffer(&self) -> usize {
        (self.budget / 8 / FAN_IN as u64) as usize
    }
}

impl<'a> EdgeSink<'a> {
    /// An empty sink reading keys as `keys` says. The edge buffer takes three tenths of the
    /// budget and the vertex ids an eighth (a vertex file, read first, may replace them).
    pub(super) fn new(
        keys: SinkKeys,
        s: &SinkSettings<'_>,
        progress: &'a mut dyn FnMut(ImportProgress),
        cancel: &'a AtomicBool,
    ) -> EdgeSink<'a> {
        let budget = s.budget;
        EdgeSink {
            directed: s.directed,
            keys,
            restart_with_strings: false,
            vertex_file: None,
            vertex_set: None,
            given_ids: None,
            ids: Some(IdCollector::new(budget / 8)),
            sorter: EdgeSorter::new(
                s.weighted,
                s.dir,
                (budget * 3 / 10) as usize,
                s.read_buffer(),
                s.pool,
            ),
            edge_budget: budget * 3 / 10,
            ids_budget: budget / 8,
            memory_budget: budget,
            layout: s.layout,
            edges: 0,
            bytes_read: 0,
            progress,
            cancel,
            pool: s.pool.clone(),
            policies: s.policies,
            lines: 0,
            self_loops_dropped: 0,
            skipped: 0,
            skipped_examples: Vec::new(),
        }
    }
}

impl EdgeSink<'_> {
    /// Whether keys are read as strings.
    pub(crate) fn string_keys(&self) -> bool {
        matches!(self.keys, SinkKeys::Strings(_))
    }

    /// Refuses a vertex count that a file declares (`what`, at `path:line`) when its vertices
    /// alone would need more memory than `import_memory`: a declared size is a claim, and
    /// believing it would allocate for it. Says how much it would take.
    pub(crate) fn check_declared_vertices(
        &self,
        n: u64,
        path: &Path,
        line: u64,
        what: &str,
    ) -> Result<()> {
        let need = n.saturating_mul(resident_bytes_per_vertex(self.directed, self.layout));
        if need > self.memory_budget {
            return Err(edgelist::input_err(
                path,
                line,
                format!(
                    "{what} declares {n} vertices, which need about {} of memory to import, more \
                     than import_memory ({}); if the graph really has that many vertices, \
                     SET import_memory to at least {} (and have that much memory)",
                    base::format_size(need),
                    base::format_size(self.memory_budget),
                    base::format_size(need),
                ),
            ));
        }
        Ok(())
    }

    /// `Some(explicit)` when keys are read as integers (`explicit`: `KEYS integer` was
    /// given), `None` for string keys.
    pub(crate) fn integer_keys(&self) -> Option<bool> {
        match self.keys {
            SinkKeys::Integer { explicit } => Some(explicit),
            SinkKeys::Strings(_) => None,
        }
    }

    /// `ON ERROR skip`: malformed lines are counted and skipped.
    pub(crate) fn skips_errors(&self) -> bool {
        self.policies.skip_errors
    }

    /// Counts `n` lines skipped under `ON ERROR skip` whose errors are not quoted (the report
    /// quotes only the first few).
    pub(crate) fn skipped_unquoted(&mut self, n: u64) {
        self.skipped += n;
    }

    /// The whole import's budget (`import_memory`).
    pub(crate) fn memory_budget(&self) -> u64 {
        self.memory_budget
    }

    /// Whether the user asked for `KEYS integer`.
    pub(crate) fn integer_keys_required(&self) -> bool {
        matches!(self.keys, SinkKeys::Integer { explicit: true })
    }

    /// Asks for the input to be read again with string keys (`KEYS auto` found a key that is
    /// not an unsigned integer); the error only unwinds the reader.
    pub(crate) fn restart_with_strings(&mut self) -> StoreError {
        self.restart_with_strings = true;
        StoreError::Cancelled
    }

    /// The id of vertex key `tok` (column `column`, named in errors) at `path:line`: the
    /// integer itself, or the string key's temporary id.
    #[inline]
    pub(crate) fn key(
        &mut self,
        tok: &[u8],
        path: &Path,
        line: u64,
        column: &dyn Fn() -> String,
    ) -> Result<u64> {
        match &mut self.keys {
            SinkKeys::Integer { explicit } => {
                match keys::integer_key(*explicit, tok, path, line, column)? {
                    Some(v) => Ok(v),
                    None => Err(self.restart_with_strings()),
                }
            }
            SinkKeys::Strings(interner) => {
                if tok.is_empty() {
                    return Err(edgelist::input_err(
                        path,
                        line,
                        format!("{}: empty vertex key", column()),
                    ));
                }
                if std::str::from_utf8(tok).is_err() {
                    return Err(edgelist::input_err(
                        path,
                        line,
                        format!("{}: the vertex key is not UTF-8 text", column()),
                    ));
                }
                let before = interner.len();
                match interner.intern(tok) {
                    Some(t) => {
                        // Every 64 Ki new keys, the edge buffer gives the keys' memory back.
                        if interner.len() != before && interner.len() % (1 << 16) == 0 {
                            let held = interner.memory_bytes().saturating_sub(self.ids_budget);
                            self.sorter.set_buffer_bytes(
                                self.edge_budget
                                    .saturating_sub(held)
                                    .max(self.edge_budget / 8)
                                    as usize,
                            );
                        }
                        Ok(t as u64)
                    }
                    None => Err(match &self.vertex_file {
                        Some(v) => edgelist::input_err(
                            path,
                            line,
                            format!(
                                "vertex {} is not in the vertex file {}",
                                edgelist::show(tok),
                                v.display()
                            ),
                        ),
                        None => StoreError::Other(format!(
                            "{}: more than 2^32-1 distinct vertex keys",
                            path.display()
                        )),
                    }),
                }
            }
        }
    }

    /// One input edge read at `path:line`, its keys already read by [`EdgeSink::key`].
    #[inline]
    pub(crate) fn edge(
        &mut self,
        src: u64,
        dst: u64,
        weight: f64,
        path: &Path,
        line: u64,
    ) -> Result<()> {
        if let (Some(set), Some(vpath)) = (&self.vertex_set, &self.vertex_file) {
            for id in [src, dst] {
                if set.map(id).is_none() {
                    return Err(StoreError::Input {
                        path: path.to_path_buf(),
                        line,
                        message: format!(
                            "vertex {id} is not in the vertex file {}",
                            vpath.display()
                        ),
                    });
                }
            }
        }
        if let Some(ids) = &mut self.ids {
            ids.add(src);
            ids.add(dst);
        }
        if src == dst && self.policies.self_loops == SelfLoopPolicy::Drop {
            self.self_loops_dropped += 1;
            return Ok(());
        }
        let (src, dst) = if !self.directed && dst < src {
            (dst, src)
        } else {
            (src, dst)
        };
        self.sorter.push(src, dst, weight)?;
        self.edges += 1;
        if self.edges & (REPORT_EVERY - 1) == 0 {
            self.tick(ImportPhase::Reading, self.edges)?;
        }
        Ok(())
    }

    /// What becomes of one input line's outcome: with `ON ERROR skip` a malformed line is
    /// counted (the first few quoted) and reading goes on; otherwise its error stops the import.
    pub(crate) fn line_outcome(&mut self, outcome: Result<()>) -> Result<()> {
        match outcome {
            Err(e @ StoreError::Input { .. }) if self.policies.skip_errors => {
                self.skipped += 1;
                if self.skipped_examples.len() < SKIPPED_EXAMPLES {
                    self.skipped_examples.push(e.to_string());
                }
                Ok(())
            }
            other => other,
        }
    }

    /// A vertex the input declares, with or without edges.
    pub(crate) fn vertex(&mut self, id: u64) {
        if let Some(ids) = &mut self.ids {
            ids.add(id);
        }
    }

    /// Takes the vertex set from a vertex file: the sink's keys so far (string keys: the
    /// interner, frozen from now on) or `ids` (integer keys).
    pub(crate) fn define_vertices(&mut self, file: &Path, ids: Option<Vec<u64>>, budget: u64) {
        self.vertex_file = Some(file.to_path_buf());
        self.ids = None;
        match &mut self.keys {
            SinkKeys::Strings(interner) => interner.freeze(),
            SinkKeys::Integer { .. } => {
                let ids = ids.unwrap_or_default();
                self.vertex_set = Some(IdMapper::new(&ids, budget));
                self.given_ids = Some(ids);
            }
        }
    }

    fn tick(&mut self, phase: ImportPhase, edges: u64) -> Result<()> {
        (self.progress)(ImportProgress {
            phase,
            bytes_read: self.bytes_read,
            edges,
        });
        check_cancel(self.cancel)
    }
}

/// What phase 1 (reading the input) leaves for the rest of the import.
pub(super) struct PhaseOne {
    pub(super) directed: bool,
    /// String keys, sorted; `None` for integer keys.
    pub(super) keys: Option<SortedKeys>,
    /// Integer ids a vertex file defined.
    pub(super) given_ids: Option<Vec<u64>>,
    /// Integer ids collected from the edges (no vertex file).
    pub(super) collected: Option<IdCollector>,
    pub(super) sorter: EdgeSorter,
    pub(super) counts: ReadCounts,
}

/// What phase 1 counted, for the summary and the report.
pub(super) struct ReadCounts {
    /// Edges passed to the sorter.
    pub(super) edges: u64,
    pub(super) bytes_read: u64,
    /// Input lines (or rows) seen.
    pub(super) lines: u64,
    pub(super) self_loops_dropped: u64,
    /// Lines skipped under `ON ERROR skip`, and the first few errors.
    pub(super) skipped: u64,
    pub(super) skipped_examples: Vec<String>,
    /// The vertices a vertex file defined, when one did: its integer ids, or the string keys
    /// (frozen once the file was read).
    pub(super) vertices_from_file: Option<u64>,
}

impl From<EdgeSink<'_>> for PhaseOne {
    fn from(s: EdgeSink<'_>) -> PhaseOne {
        let keys = match s.keys {
            SinkKeys::Strings(k) => Some(k.finish()),
            SinkKeys::Integer { .. } => None,
        };
        let vertices_from_file = s.vertex_file.as_ref().map(|_| match (&s.given_ids, &keys) {
            (Some(ids), _) => ids.len() as u64,
            (None, Some(k)) => k.len() as u64,
            (None, None) => 0,
        });
        PhaseOne {
            directed: s.directed,
            keys,
            given_ids: s.given_ids,
            collected: s.ids,
            sorter: s.sorter,
            counts: ReadCounts {
                edges: s.edges,
                bytes_read: s.bytes_read,
                lines: s.lines,
                self_loops_dropped: s.self_loops_dropped,
                skipped: s.skipped,
                skipped_examples: s.skipped_examples,
                vertices_from_file,
            },
        }
    }
}
