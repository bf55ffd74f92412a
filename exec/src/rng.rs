//! The project's random number generator, for the kernels that draw (random walks, WCC's
//! sampling): each parallel task derives its generator from (seed, task index) with
//! [`Xoshiro256::for_stream`], so a SEED gives the same result at any thread count.

pub use base::rng::{splitmix64, Xoshiro256};
