//! Arrow IPC file output (the "Feather v2" format): the cheapest format to write and to
//! memory-map back, for tools that speak Arrow. The run's metadata goes into the file's custom
//! metadata and in the schema's metadata, under the same `frontier.*` keys as Parquet.

use std::path::PathBuf;

use arrow_array::RecordBatch;
use arrow_ipc::writer::FileWriter;
use arrow_schema::SchemaRef;
use grammar::ast::OutputFormat;

use super::{arrow_err, OutputFile, ResultMeta, SinkError};

pub(crate) struct ArrowSink {
    writer: FileWriter<OutputFile>,
    path: PathBuf,
}

impl ArrowSink {
    pub(crate) fn new(file: OutputFile, schema: SchemaRef) -> Result<ArrowSink, SinkError> {
        let path = file.dest().to_path_buf();
        let writer =
            FileWriter::try_new(file, &schema).map_err(arrow_err(&path, OutputFormat::Arrow))?;
        Ok(ArrowSink { writer, path })
    }

    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        self.writer
            .write(batch)
            .map_err(arrow_err(&self.path, OutputFormat::Arrow))
    }

    pub(crate) fn finish(mut self, meta: &ResultMeta) -> Result<u64, SinkError> {
        for (k, v) in meta.key_values() {
            self.writer.write_metadata(k, v);
        }
        self.writer
            .finish()
            .map_err(arrow_err(&self.path, OutputFormat::Arrow))?;
        let file = self
            .writer
            .into_inner()
            .map_err(arrow_err(&self.path, OutputFormat::Arrow))?;
        file.commit()
    }
}
