//! "Did you mean ...?" suggestions, shared with the importers (`base::suggest`).

pub use base::suggest::{did_you_mean, edit_distance, nearest};
