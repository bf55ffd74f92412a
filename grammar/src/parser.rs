//! The pest parser generated from `frontier.pest` (no build script: `pest_derive` reads the
//! grammar at compile time).

/// The parser; [`Rule`] names every rule of the grammar.
#[derive(pest_derive::Parser)]
#[grammar = "frontier.pest"]
pub(crate) struct FrontierParser;
