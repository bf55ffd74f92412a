//! A statement's result: its status lines, its text (EXPLAIN, HELP, hints, secondary tables) and
//! its rows as Arrow record batches, handed to pyarrow, pandas and polars through the Arrow C
//! stream interface (`__arrow_c_stream__`) without copying the engine's buffers.

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::{ArrowError, Schema, SchemaRef};
use engine::Output;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyList, PyTuple};

use crate::text_table;

/// What `execute` gives back.
#[pyclass(module = "frontier._frontier", name = "Result", frozen)]
pub struct QueryResult {
    status: Vec<String>,
    text: Vec<String>,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    elapsed: Option<f64>,
    /// The scalars the RUN's algorithms reported, keyed as in result files' metadata.
    summaries: Vec<(String, exec::result::SummaryValue)>,
    /// The rounds the RUN's algorithm ran (PROFILE's rows), when the result holds a RUN's rows.
    iterations: Option<usize>,
}

impl QueryResult {
    /// Gathers a statement's outputs. The rows are those of the last RUN, or else the last
    /// table (SHOW GRAPHS, DESCRIBE, SHOW SETTINGS); other tables are kept as text.
    pub fn from_outputs(outputs: Vec<Output>) -> Result<QueryResult, ArrowError> {
        let primary = outputs
            .iter()
            .rposition(|o| matches!(o, Output::Rows { .. }))
            .or_else(|| outputs.iter().rposition(|o| matches!(o, Output::Table(_))));
        let mut r = QueryResult {
            status: Vec::new(),
            text: Vec::new(),
            schema: SchemaRef::new(Schema::empty()),
            batches: Vec::new(),
            elapsed: None,
            summaries: Vec::new(),
            iterations: None,
        };
        for (i, output) in outputs.into_iter().enumerate() {
            let is_primary = primary == Some(i);
            match output {
                Output::Status(s) => r.status.push(s),
                Output::Rows { table, elapsed } if is_primary => {
                    r.summaries = table.summaries.iter().map(|s| (s.key(), s.value)).collect();
                    r.iterations = Some(table.iterations.len());
                    r.schema = table.schema;
                    r.batches = table.batches;
                    r.elapsed = Some(elapsed.as_secs_f64());
                }
                Output::Rows { table, .. } => r.text.push(format!(
                    "({} rows of an earlier RUN not kept: run it on its own to get them)",
                    table.num_rows()
                )),
                Output::Table(t) if is_primary => {
                    let batch = text_table::to_batch(&t)?;
                    r.schema = batch.schema();
                    r.batches = vec![batch];
                }
                Output::Table(t) => r.text.push(text_table::render(&t)),
                Output::Caption(s) | Output::Hint(s) => r.text.push(s),
                Output::Text(s) => r.text.push(s.trim_end().to_string()),
            }
        }
        Ok(r)
    }

    fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }

    fn column_names(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }
}

#[pymethods]
impl QueryResult {
    /// The rows as a `pyarrow.Table`, sharing the engine's buffers (no copy). A statement
    /// without rows gives a table without columns.
    fn arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py().import("pyarrow")?.call_method1("table", (slf,))
    }

    /// The rows as a `pandas.DataFrame`.
    fn df<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::arrow(slf)?.call_method0("to_pandas")
    }

    /// The rows as a `polars.DataFrame` (no copy for the numeric columns).
    fn pl<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let table = Self::arrow(slf)?;
        slf.py()
            .import("polars")?
            .call_method1("from_arrow", (table,))
    }

    /// The rows as a list of tuples, one value per column.
    fn fetchall<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let columns = Self::arrow(slf)?.getattr("columns")?;
        let lists = columns
            .try_iter()?
            .map(|c| c?.call_method0("to_pylist"))
            .collect::<PyResult<Vec<_>>>()?;
        let rows = py
            .import("builtins")?
            .getattr("zip")?
            .call1(PyTuple::new(py, lists)?)?;
        PyList::new(py, rows.try_iter()?.collect::<PyResult<Vec<_>>>()?)
    }

    /// The Arrow PyCapsule stream interface: `pyarrow.table(result)`, `polars.DataFrame(result)`
    /// and other Arrow libraries read the rows through it. The requested schema is not applied.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let batches = self.batches.clone().into_iter().map(Ok);
        let reader = RecordBatchIterator::new(batches, self.schema.clone());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// Status lines: what the statements did ("created graph g: ...", "wrote 10 rows ...").
    #[getter]
    fn status(&self) -> Vec<String> {
        self.status.clone()
    }

    /// Text for people: EXPLAIN's plan, HELP, hints, and tables other than the rows (PROFILE's).
    #[getter]
    pub fn text(&self) -> String {
        self.text.join("\n")
    }

    /// The names of the rows' columns.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.column_names()
    }

    /// What the RUN's algorithms reported besides their rows (Louvain's modularity, the
    /// triangle total), keyed as in result files' metadata: `frontier.louvain.modularity`.
    #[getter]
    fn summaries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let d = pyo3::types::PyDict::new(py);
        for (key, value) in &self.summaries {
            match value {
                exec::result::SummaryValue::UInt64(n) => d.set_item(key, n)?,
                exec::result::SummaryValue::Float64(x) => d.set_item(key, x)?,
            }
        }
        Ok(d)
    }

    /// Seconds the RUN took up to its rows, when the result holds a RUN's rows.
    #[getter]
    fn elapsed(&self) -> Option<f64> {
        self.elapsed
    }

    /// The rounds the RUN ran, one per row of PROFILE's table (PageRank with a tolerance: the
    /// rounds before it converged), when the result holds a RUN's rows.
    #[getter]
    fn iterations(&self) -> Option<usize> {
        self.iterations
    }

    fn __len__(&self) -> usize {
        self.num_rows()
    }

    fn __repr__(&self) -> String {
        let mut parts = vec![format!(
            "<frontier.Result: {} rows, columns [{}]>",
            self.num_rows(),
            self.column_names().join(", ")
        )];
        parts.extend(self.status.iter().cloned());
        parts.extend(self.text.iter().cloned());
        parts.join("\n")
    }
}
