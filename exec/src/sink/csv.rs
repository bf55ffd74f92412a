//! CSV output: a header row, then one line per row; null is an empty field and floats use the
//! shortest text that reads back to the same f64, so a spreadsheet or `pandas.read_csv` sees
//! exactly what frontier computed.

use std::path::PathBuf;

use arrow_array::RecordBatch;
use arrow_csv::writer::{Writer, WriterBuilder};
use arrow_schema::SchemaRef;
use grammar::ast::OutputFormat;

use super::{arrow_err, OutputFile, SinkError};

pub(crate) struct CsvSink {
    writer: Writer<OutputFile>,
    schema: SchemaRef,
    path: PathBuf,
    wrote_any: bool,
}

impl CsvSink {
    pub(crate) fn new(file: OutputFile, schema: SchemaRef) -> CsvSink {
        let path = file.dest().to_path_buf();
        let writer = WriterBuilder::new()
            .with_header(true)
            .with_null(String::new())
            .build(file);
        CsvSink {
            writer,
            schema,
            path,
            wrote_any: false,
        }
    }

    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        self.wrote_any = true;
        self.writer
            .write(batch)
            .map_err(arrow_err(&self.path, OutputFormat::Csv))
    }

    pub(crate) fn finish(mut self) -> Result<u64, SinkError> {
        if !self.wrote_any {
            // An empty result still gets its header line.
            let empty = RecordBatch::new_empty(self.schema.clone());
            self.write(&empty)?;
        }
        // `write` flushes the CSV buffer after every batch, so this cannot lose data.
        self.writer.into_inner().commit()
    }
}
