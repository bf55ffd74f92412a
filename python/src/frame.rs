//! A data frame's edges as Arrow record batches: any object with `__arrow_c_stream__` (the
//! Arrow PyCapsule interface: pyarrow tables and readers, polars and pandas data frames) is
//! taken over as a C stream and read batch by batch, without a copy.

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::errors::error;

const STREAM_CAPSULE: &std::ffi::CStr = c"arrow_array_stream";

/// Takes over `frame`'s Arrow C stream.
pub fn record_batches(frame: &Bound<'_, PyAny>) -> PyResult<RecordBatchStreamReader> {
    if !frame.hasattr("__arrow_c_stream__")? {
        return Err(error(format!(
            "edges must be a pandas or polars DataFrame, a pyarrow Table or RecordBatchReader, or \
             another object with __arrow_c_stream__; got {}",
            frame.get_type().name()?
        )));
    }
    let capsule = frame.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        error("__arrow_c_stream__ did not return a PyCapsule (is the Arrow library too old?)")
    })?;
    let stream = capsule
        .pointer_checked(Some(STREAM_CAPSULE))?
        .cast::<FFI_ArrowArrayStream>();
    // SAFETY: a capsule named "arrow_array_stream" holds an ArrowArrayStream (the Arrow PyCapsule
    // interface); `from_raw` moves it out and leaves a released stream behind, which the
    // capsule's destructor then ignores.
    unsafe { RecordBatchStreamReader::from_raw(stream.as_ptr()) }
        .map_err(|e| error(format!("cannot read the edges' Arrow stream: {e}")))
}
