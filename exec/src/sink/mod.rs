//! Result sinks: `RUN ... INTO 'path' [FORMAT parquet|arrow|csv|graphalytics]`.
//!
//! A sink is opened with the result's schema, takes record batches as the algorithm produces
//! them (so a 100 M-row result never has to exist twice in memory), and is finished with the
//! run's metadata, which Parquet and Arrow IPC store in the file. The path is checked first
//! ([`Destination`]): a regular file is written through [`AtomicFile`], so it appears at its path
//! only when complete and a failed or abandoned run leaves no file behind; a FIFO or character
//! device is streamed into in place; nothing inside the data directory is ever written.

mod arrow_ipc;
pub mod atomic_file;
mod csv;
pub mod destination;
mod graphalytics;
mod output_file;
mod parquet;
mod stream_file;
mod temp_name;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};
use grammar::ast::OutputFormat;

use crate::result::{ResultTable, Summary};
pub use atomic_file::AtomicFile;
pub use destination::{Destination, WriteMode};
pub use output_file::OutputFile;

/// What a sink can fail with. Every variant names the path, since a batch script's user sees
/// only the message.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error(
        "cannot tell the output format of '{}' from its extension: use a path ending in .parquet, \
         .arrow or .csv, or say FORMAT parquet|arrow|csv|graphalytics",
        path.display()
    )]
    UnknownFormat { path: PathBuf },
    #[error("cannot write '{}': {reason}", path.display())]
    BadPath { path: PathBuf, reason: String },
    #[error("cannot write '{}': {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write Parquet file '{}': {source}", path.display())]
    Parquet {
        path: PathBuf,
        #[source]
        source: ::parquet::errors::ParquetError,
    },
    #[error("cannot write {format} file '{}': {source}", path.display())]
    Arrow {
        path: PathBuf,
        format: FormatName,
        #[source]
        source: ArrowError,
    },
    #[error("cannot write '{}' as {format}: {reason}", path.display())]
    Unsupported {
        path: PathBuf,
        format: FormatName,
        reason: String,
    },
}

/// An [`OutputFormat`] that prints as the word a user types after `FORMAT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatName(pub OutputFormat);

impl fmt::Display for FormatName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(format_name(self.0))
    }
}

/// The keyword of a format, as written after `FORMAT`.
pub fn format_name(format: OutputFormat) -> &'static str {
    match format {
        OutputFormat::Parquet => "parquet",
        OutputFormat::Arrow => "arrow",
        OutputFormat::Csv => "csv",
        OutputFormat::Graphalytics => "graphalytics",
    }
}

/// What the run was, stored in Parquet key-value metadata (and Arrow IPC custom metadata) so a
/// file found months later says where it came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultMeta {
    pub algorithm: String,
    /// Parameters as the planner resolved them (defaults included), in declaration order.
    pub parameters: Vec<(String, String)>,
    pub graph: String,
    pub vertices: u64,
    pub edges: u64,
    /// Time spent in the algorithm.
    pub elapsed: Duration,
    /// The scalars the run reported, as `frontier.<algorithm>.<name>` keys and their values.
    pub summaries: Vec<(String, String)>,
}

impl ResultMeta {
    /// The metadata as `frontier.*` key-value pairs; `parameters` is a JSON object.
    pub fn key_values(&self) -> Vec<(String, String)> {
        let mut params = String::from("{");
        for (i, (k, v)) in self.parameters.iter().enumerate() {
            if i > 0 {
                params.push_str(", ");
            }
            json_string(&mut params, k);
            params.push_str(": ");
            json_string(&mut params, v);
        }
        params.push('}');
        vec![
            ("frontier.algorithm".into(), self.algorithm.clone()),
            ("frontier.parameters".into(), params),
            ("frontier.graph".into(), self.graph.clone()),
            ("frontier.vertices".into(), self.vertices.to_string()),
            ("frontier.edges".into(), self.edges.to_string()),
            ("frontier.version".into(), env!("CARGO_PKG_VERSION").into()),
            (
                "frontier.elapsed_seconds".into(),
                format!("{:.6}", self.elapsed.as_secs_f64()),
            ),
        ]
        .into_iter()
        .chain(self.summaries.iter().cloned())
        .collect()
    }
}

/// Appends `s` as a JSON string literal.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// What a finished sink wrote, for the "wrote N rows to 'path'" line.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteSummary {
    pub path: PathBuf,
    pub format: OutputFormat,
    pub rows: u64,
    /// Size of the file written.
    pub bytes: u64,
    /// Time from opening the sink to the rename.
    pub elapsed: Duration,
}

/// The format of `path` from its extension (case-insensitive): `.parquet`/`.pq`, `.arrow`/
/// `.ipc`/`.feather`, `.csv`. Graphalytics outputs conventionally have no extension, so that
/// format is only chosen by `FORMAT graphalytics`.
pub fn infer_format(path: &Path) -> Result<OutputFormat, SinkError> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "parquet" | "pq" => Ok(OutputFormat::Parquet),
        "arrow" | "ipc" | "feather" => Ok(OutputFormat::Arrow),
        "csv" => Ok(OutputFormat::Csv),
        _ => Err(SinkError::UnknownFormat {
            path: path.to_path_buf(),
        }),
    }
}

enum Inner {
    Parquet(parquet::ParquetSink),
    Arrow(arrow_ipc::ArrowSink),
    Csv(csv::CsvSink),
    Graphalytics(graphalytics::GraphalyticsSink),
}

/// An open output file taking record batches as they are produced.
///
/// Dropping it without [`finish`](ResultSink::finish) (an error, a cancelled run) removes the
/// temporary file; nothing appears at the destination.
pub struct ResultSink {
    inner: Inner,
    path: PathBuf,
    format: OutputFormat,
    rows: u64,
    started: Instant,
}

impl ResultSink {
    /// Opens a sink for rows of `schema` at `dest`; the format is `format`, or inferred from the
    /// extension when `None`.
    pub fn create(
        dest: &Destination,
        format: Option<OutputFormat>,
        schema: SchemaRef,
    ) -> Result<ResultSink, SinkError> {
        let started = Instant::now();
        let path = dest.given();
        let format = match format {
            Some(f) => f,
            None => infer_format(path)?,
        };
        let file = OutputFile::open(dest)?;
        let inner = match format {
            OutputFormat::Parquet => Inner::Parquet(parquet::ParquetSink::new(file, schema)?),
            OutputFormat::Arrow => Inner::Arrow(arrow_ipc::ArrowSink::new(file, schema)?),
            OutputFormat::Csv => Inner::Csv(csv::CsvSink::new(file, schema)),
            OutputFormat::Graphalytics => {
                Inner::Graphalytics(graphalytics::GraphalyticsSink::new(file, schema)?)
            }
        };
        Ok(ResultSink {
            inner,
            path: path.to_path_buf(),
            format,
            rows: 0,
            started,
        })
    }

    /// The chosen format.
    pub fn format(&self) -> OutputFormat {
        self.format
    }

    /// Appends one batch (it must have the schema the sink was opened with).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        match &mut self.inner {
            Inner::Parquet(s) => s.write(batch)?,
            Inner::Arrow(s) => s.write(batch)?,
            Inner::Csv(s) => s.write(batch)?,
            Inner::Graphalytics(s) => s.write(batch)?,
        }
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// Writes the footer (with `meta` where the format has metadata), then fsyncs and renames
    /// a replaced file into place, or flushes a stream.
    pub fn finish(self, meta: &ResultMeta) -> Result<WriteSummary, SinkError> {
        let bytes = match self.inner {
            Inner::Parquet(s) => s.finish(meta)?,
            Inner::Arrow(s) => s.finish(meta)?,
            Inner::Csv(s) => s.finish()?,
            Inner::Graphalytics(s) => s.finish()?,
        };
        Ok(WriteSummary {
            path: self.path,
            format: self.format,
            rows: self.rows,
            bytes,
            elapsed: self.started.elapsed(),
        })
    }
}

/// Writes a whole result to `dest` — the `RUN ... INTO` path for results already in memory.
pub fn write_result(
    table: &ResultTable,
    dest: &Destination,
    format: Option<OutputFormat>,
    meta: &ResultMeta,
) -> Result<WriteSummary, SinkError> {
    let meta = with_summaries(meta, &table.summaries);
    let mut sink = ResultSink::for_result(dest, format, &table.schema, &meta)?;
    for batch in &table.batches {
        sink.write(batch)?;
    }
    sink.finish(&meta)
}

/// `meta` with a run's summaries added as `frontier.<scope>.<name>` entries.
pub fn with_summaries(meta: &ResultMeta, summaries: &[Summary]) -> ResultMeta {
    let mut meta = meta.clone();
    meta.summaries
        .extend(summaries.iter().map(|s| (s.key(), s.value.to_string())));
    meta
}

impl ResultSink {
    /// A sink for rows of `schema` whose file carries `meta` (see [`with_summaries`]) in its
    /// schema's metadata; [`ResultSink::finish`] with the same `meta` completes it. Rows are
    /// then written a batch at a time, as they are built.
    pub fn for_result(
        dest: &Destination,
        format: Option<OutputFormat>,
        schema: &SchemaRef,
        meta: &ResultMeta,
    ) -> Result<ResultSink, SinkError> {
        ResultSink::create(dest, format, with_provenance(schema, meta))
    }
}

/// `schema` carrying the run's `frontier.*` metadata, so the Arrow schema of Parquet and Arrow
/// files says where they came from (pyarrow, pandas and polars show schema metadata, not
/// Parquet's key-value footer).
fn with_provenance(schema: &SchemaRef, meta: &ResultMeta) -> SchemaRef {
    let mut metadata = schema.metadata().clone();
    metadata.extend(meta.key_values());
    std::sync::Arc::new(schema.as_ref().clone().with_metadata(metadata))
}

/// Wraps an Arrow error with the path and format it happened on.
fn arrow_err(path: &Path, format: OutputFormat) -> impl FnOnce(ArrowError) -> SinkError + '_ {
    move |source| match source {
        ArrowError::IoError(_, e) => SinkError::Io {
            path: path.to_path_buf(),
            source: e,
        },
        source => SinkError::Arrow {
            path: path.to_path_buf(),
            format: FormatName(format),
            source,
        },
    }
}
