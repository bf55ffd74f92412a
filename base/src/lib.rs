//! Pieces every frontier crate shares and none owns. This crate sits below all others and
//! depends on nothing, so the grammar (a size literal), the planner (settings), storage (the
//! memory node's capacity, generators, import options) and the executor (random walks) use the same code.

pub mod clip;
pub mod rng;
pub mod size;
pub mod suggest;

pub use rng::Xoshiro256;
pub use size::{format_size, parse_size, SizeError};
