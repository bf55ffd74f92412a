//! The result of a run: Arrow record batches with the algorithm's declared columns, plus the
//! statistics PROFILE prints. Sinks (terminal, Parquet, Arrow IPC, CSV, Graphalytics text) read it.
//!
//! A run's rows can also be taken before they are all built: [`PendingResult`] keeps what the
//! kernel computed, and [`PendingResult::rows`] builds its rows batch by batch as a
//! [`RowStream`] is pulled, so LIMIT, a bounded ORDER BY and a file sink hold a batch or a few at
//! a time rather than every row.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use planner::registry::Operator;

use crate::error::ExecError;

/// What one iteration (one EdgeMap round) did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IterationStats {
    /// 0-based iteration number.
    pub iteration: u32,
    /// Vertices in the input frontier.
    pub active: u64,
    /// Edges examined.
    pub edges: u64,
    /// The EdgeMap strategy used (`push`, `block`, `pull`, or `-` for vertex-only steps).
    pub strategy: &'static str,
    /// Blocks (or remote batches) read during the iteration.
    pub blocks_read: u64,
    /// Cache hit rate of the iteration's block requests (`None` when it made none: scans read
    /// past the cache).
    pub hit_rate: Option<f64>,
    /// Bytes read during the iteration.
    pub bytes_read: u64,
    /// Remote round trips (request/reply exchanges) during the iteration; 0 on a store
    /// without remote memory.
    pub round_trips: u64,
    /// Remote operations (verbs plus two-sided calls) during the iteration; 0 on a store
    /// without remote memory.
    pub remote_ops: u64,
    /// Bytes sent to remote memory during the iteration (remote updates); 0 on a store
    /// without remote memory.
    pub bytes_sent: u64,
    pub elapsed: Duration,
    /// With several compute nodes, each member's time for the iteration in member order
    /// (the remote and edge counts above are then the members' sums); empty otherwise.
    pub member_times: Vec<Duration>,
    /// With several compute nodes, the edges each member examined, in member order: the
    /// work measure hub re-scheduling balances; empty otherwise.
    pub member_edges: Vec<u64>,
    /// Hubs whose edge lists were dealt out across the compute nodes in this iteration
    /// (re-scheduled after an earlier iteration made their owner the straggler).
    pub hubs_dealt: u64,
}

impl IterationStats {
    /// The busiest member's edges over the members' mean (1.0 is perfect balance); `None`
    /// unless several members ran the iteration.
    pub fn edge_imbalance(&self) -> Option<f64> {
        if self.member_edges.len() < 2 {
            return None;
        }
        let total: u64 = self.member_edges.iter().sum();
        let most = self.member_edges.iter().copied().max().unwrap_or(0);
        let mean = total as f64 / self.member_edges.len() as f64;
        Some(if mean > 0.0 { most as f64 / mean } else { 1.0 })
    }

    /// The slowest member's time over the mean (1.0 is perfect balance); `None` unless
    /// several members ran the iteration.
    pub fn imbalance(&self) -> Option<f64> {
        if self.member_times.len() < 2 {
            return None;
        }
        let secs: Vec<f64> = self
            .member_times
            .iter()
            .map(Duration::as_secs_f64)
            .collect();
        let mean = secs.iter().sum::<f64>() / secs.len() as f64;
        let max = secs.iter().copied().fold(0.0, f64::max);
        Some(if mean > 0.0 { max / mean } else { 1.0 })
    }
}

/// The value of a scalar a run reports (see `planner::registry::SummarySpec`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SummaryValue {
    UInt64(u64),
    Float64(f64),
}

impl std::fmt::Display for SummaryValue {
    /// Integers as they are, floats in their shortest exact form (so a file's metadata reads
    /// back to the same `f64`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SummaryValue::UInt64(n) => write!(f, "{n}"),
            SummaryValue::Float64(x) => write!(f, "{x}"),
        }
    }
}

/// One scalar a run reported: which call (the algorithm's name, or its `AS` name when a RUN
/// joins several), the declared summary name, and the value.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub scope: String,
    pub name: &'static str,
    pub value: SummaryValue,
}

impl Summary {
    /// The metadata key of a result file: `frontier.louvain.modularity`.
    pub fn key(&self) -> String {
        format!("frontier.{}.{}", self.scope, self.name)
    }
}

/// `louvain: modularity 0.41, levels 2`: the summaries of each call on one line per call, for
/// RUN's status line and PROFILE's caption.
pub fn summary_lines(summaries: &[Summary]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut scope: Option<&str> = None;
    for s in summaries {
        if scope == Some(s.scope.as_str()) {
            if let Some(line) = lines.last_mut() {
                line.push_str(&format!(", {} {}", s.name, s.value));
            }
        } else {
            lines.push(format!("{}: {} {}", s.scope, s.name, s.value));
            scope = Some(&s.scope);
        }
    }
    lines
}

/// Rows and run statistics of one RUN.
#[derive(Debug, Clone)]
pub struct ResultTable {
    pub schema: SchemaRef,
    /// Batches in output order; each at most [`BATCH_ROWS`] rows.
    pub batches: Vec<RecordBatch>,
    pub iterations: Vec<IterationStats>,
    /// Time spent in the algorithm, result building excluded.
    pub algorithm_time: Duration,
    /// The operators the kernel called, in `Operator::ALL` order.
    pub operators: Vec<Operator>,
    /// The scalars the algorithms reported, in call order, then declaration order.
    pub summaries: Vec<Summary>,
}

/// Rows per record batch (and Parquet row group chunk) when results are built.
pub const BATCH_ROWS: usize = 64 * 1024;

impl ResultTable {
    /// Total rows across batches.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }

    /// An empty table with `schema`.
    pub fn empty(schema: SchemaRef) -> ResultTable {
        ResultTable {
            schema,
            batches: Vec::new(),
            iterations: Vec::new(),
            algorithm_time: Duration::ZERO,
            operators: Vec::new(),
            summaries: Vec::new(),
        }
    }
}

/// Shared handle to a result, for sinks running while the next statement parses.
pub type SharedResult = Arc<ResultTable>;

/// Record batches as they are built, in output order; each is built when pulled.
pub type BatchIter<'a> = Box<dyn Iterator<Item = Result<RecordBatch, ExecError>> + 'a>;

/// Rows with their schema, produced one batch at a time.
pub struct RowStream<'a> {
    pub schema: SchemaRef,
    pub batches: BatchIter<'a>,
}

impl<'a> RowStream<'a> {
    /// Batches already built, handed out one at a time.
    pub fn from_batches(schema: SchemaRef, batches: Vec<RecordBatch>) -> RowStream<'a> {
        RowStream {
            schema,
            batches: Box::new(batches.into_iter().map(Ok)),
        }
    }

    /// Every remaining batch (the first error stops the stream).
    pub fn collect(self) -> Result<Vec<RecordBatch>, ExecError> {
        self.batches.collect()
    }
}

/// Builds a result's rows on demand from what its kernel computed.
pub(crate) trait RowSource {
    /// The rows in output order, built as they are pulled.
    fn rows(&self, schema: &SchemaRef) -> Result<BatchIter<'_>, ExecError>;
}

impl RowSource for Vec<RecordBatch> {
    fn rows(&self, _schema: &SchemaRef) -> Result<BatchIter<'_>, ExecError> {
        Ok(Box::new(self.iter().cloned().map(Ok)))
    }
}

/// A run whose rows are not built yet: the statistics and summaries of [`ResultTable`] (in
/// `info`, whose `batches` stay empty) and what the kernel computed, from which
/// [`PendingResult::rows`] builds the rows batch by batch. `'s` is the store's borrow.
pub struct PendingResult<'s> {
    /// The schema, statistics and summaries; no batches.
    pub info: ResultTable,
    source: Box<dyn RowSource + 's>,
}

impl<'s> PendingResult<'s> {
    pub(crate) fn new(info: ResultTable, source: Box<dyn RowSource + 's>) -> PendingResult<'s> {
        debug_assert!(info.batches.is_empty());
        PendingResult { info, source }
    }

    /// A result whose rows are already built (a join, a run split over compute nodes).
    pub fn built(mut table: ResultTable) -> PendingResult<'s> {
        let batches = std::mem::take(&mut table.batches);
        PendingResult {
            info: table,
            source: Box::new(batches),
        }
    }

    /// The rows, built batch by batch as the stream is pulled; a stream dropped early builds
    /// no more.
    pub fn rows(&self) -> Result<RowStream<'_>, ExecError> {
        Ok(RowStream {
            schema: self.info.schema.clone(),
            batches: self.source.rows(&self.info.schema)?,
        })
    }

    /// Every row built, as a table.
    pub fn into_table(self) -> Result<ResultTable, ExecError> {
        let batches = self.rows()?.collect()?;
        Ok(self.info.with_rows(self.info.schema.clone(), batches))
    }
}

impl ResultTable {
    /// This table's statistics and summaries with `batches` of `schema` as its rows.
    pub fn with_rows(&self, schema: SchemaRef, batches: Vec<RecordBatch>) -> ResultTable {
        ResultTable {
            schema,
            batches,
            iterations: self.iterations.clone(),
            algorithm_time: self.algorithm_time,
            operators: self.operators.clone(),
            summaries: self.summaries.clone(),
        }
    }
}
