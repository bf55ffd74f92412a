//! repl
