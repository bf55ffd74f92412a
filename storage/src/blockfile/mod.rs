//! The block-file graph store: format, writer, and the in-memory and out-of-core readers.

pub mod format;
