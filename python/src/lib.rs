//! `frontier._frontier`: the Python binding of the engine. A [`connection::Connection`] owns an
//! `engine::Session` over a data directory and runs statements on a worker thread with the GIL
//! released, so that Ctrl-C (`KeyboardInterrupt`) and progress bars keep working while the
//! engine runs; results come back as Arrow record batches handed over through the Arrow C
//! stream interface, without a copy. The pure-Python package `frontier/` wraps this module.

mod connection;
mod errors;
mod frame;
mod progress;
mod result;
mod text_table;
mod waiting;

use pyo3::prelude::*;

#[pymodule]
fn _frontier(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<connection::Connection>()?;
    m.add_class::<result::QueryResult>()?;
    errors::register(m)?;
    Ok(())
}
