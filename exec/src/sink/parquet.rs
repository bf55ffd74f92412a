//! Parquet output: zstd-compressed, row groups of about a million rows, the run's metadata as
//! `frontier.*` key-value pairs and in the embedded Arrow schema's metadata. This is the format
//! downstream tools (pandas, polars, DuckDB, Spark) read, so the Arrow schema is embedded and
//! read back exactly (vertex UInt64, nullable value columns).

use std::path::PathBuf;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use super::{OutputFile, ResultMeta, SinkError};

/// Rows per row group: large enough for good compression and few footers, small enough that
/// the writer's buffer stays in the tens of megabytes.
pub(crate) const ROW_GROUP_ROWS: usize = 1 << 20;

/// zstd level 1: results are mostly incompressible ids and floats, and writing must cost a small
/// fraction of the run; higher levels buy little here.
const ZSTD_LEVEL: i32 = 1;

pub(crate) struct ParquetSink {
    writer: ArrowWriter<OutputFile>,
    path: PathBuf,
}

impl ParquetSink {
    pub(crate) fn new(file: OutputFile, schema: SchemaRef) -> Result<ParquetSink, SinkError> {
        let path = file.dest().to_path_buf();
        let perr = |source| SinkError::Parquet {
            path: path.clone(),
            source,
        };
        let level = ZstdLevel::try_new(ZSTD_LEVEL).map_err(perr)?;
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_created_by(format!("frontier {}", env!("CARGO_PKG_VERSION")));
        // A vertex id column is unique and float values (ranks, distances, coefficients) rarely
        // repeat: a dictionary would be built only to be thrown away, which costs more than
        // the rest of the write. Integer value columns (components, labels, depths) keep it.
        for field in schema.fields() {
            let unique_ids = field.name() == "vertex";
            let float = matches!(field.data_type(), DataType::Float32 | DataType::Float64);
            if unique_ids || float {
                props = props
                    .set_column_dictionary_enabled(ColumnPath::from(field.name().as_str()), false);
            }
        }
        let writer = ArrowWriter::try_new(file, schema, Some(props.build())).map_err(perr)?;
        Ok(ParquetSink { writer, path })
    }

    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        self.writer
            .write(batch)
            .map_err(|source| SinkError::Parquet {
                path: self.path.clone(),
                source,
            })
    }

    /// Writes the footer with `meta` and commits the file; returns its size.
    pub(crate) fn finish(mut self, meta: &ResultMeta) -> Result<u64, SinkError> {
        for (k, v) in meta.key_values() {
            self.writer.append_key_value_metadata(KeyValue::new(k, v));
        }
        let path = self.path;
        let file = self
            .writer
            .into_inner()
            .map_err(|source| SinkError::Parquet { path, source })?;
        file.commit()
    }
}
