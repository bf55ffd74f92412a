//! The block-file graph store: format, writer, and the in-memory and out-of-core readers.

pub mod compact;
pub mod format;
pub mod id_runs;
pub mod ids_check;
pub mod keys;
pub mod list_budget;
pub mod memory;
pub mod ooc;
pub mod open;
pub mod open_store;
pub mod packed;
pub mod scan_plan;
pub mod verify;
pub mod writer;
