//! What an import did with its input, and the policies the user chose for what is not a
//! plain edge: duplicates (`DUPLICATES first|min|max|sum`), self-loops (`SELF LOOPS
//! keep|drop`) and bad lines (`ON ERROR stop|skip`). Stored in the catalog, shown after
//! CREATE and by DESCRIBE.

use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};

/// How the weights of duplicate edges (the same `src dst`, or for an undirected graph the
/// same pair either way round) become one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DuplicatePolicy {
    /// The first in input order (the default).
    #[default]
    First,
    Min,
    Max,
    Sum,
}

impl DuplicatePolicy {
    /// The weight of an edge seen again with weight `next`.
    #[inline]
    pub(crate) fn combine(self, kept: f64, next: f64) -> f64 {
        match self {
            DuplicatePolicy::First => kept,
            DuplicatePolicy::Min => kept.min(next),
            DuplicatePolicy::Max => kept.max(next),
            DuplicatePolicy::Sum => kept + next,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DuplicatePolicy::First => "first",
            DuplicatePolicy::Min => "min",
            DuplicatePolicy::Max => "max",
            DuplicatePolicy::Sum => "sum",
        }
    }
}

/// Whether edges from a vertex to itself are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SelfLoopPolicy {
    #[default]
    Keep,
    Drop,
}

/// The policies of one import, from its options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Policies {
    pub duplicates: DuplicatePolicy,
    pub self_loops: SelfLoopPolicy,
    /// `ON ERROR skip`: a malformed line is counted and skipped instead of stopping.
    pub skip_errors: bool,
}

/// The option keys every format accepts for the policies.
pub(crate) const POLICY_OPTIONS: &[&str] = &["duplicates", "self_loops", "on_error"];

impl Policies {
    /// Reads the policies from `(key, value)` options (later ones win).
    pub(crate) fn from_options(options: &[(String, String)]) -> Result<Policies> {
        let mut p = Policies::default();
        for (k, v) in options {
            let value = v.to_ascii_lowercase();
            let bad = |allowed: &str| {
                StoreError::Other(format!(
                    "{} must be {allowed}, found `{v}`",
                    k.to_ascii_uppercase().replace('_', " ")
                ))
            };
            match k.to_ascii_lowercase().as_str() {
                "duplicates" => {
                    p.duplicates = match value.as_str() {
                        "first" => DuplicatePolicy::First,
                        "min" => DuplicatePolicy::Min,
                        "max" => DuplicatePolicy::Max,
                        "sum" => DuplicatePolicy::Sum,
                        _ => return Err(bad("first, min, max or sum")),
                    }
                }
                "self_loops" => {
                    p.self_loops = match value.as_str() {
                        "keep" => SelfLoopPolicy::Keep,
                        "drop" => SelfLoopPolicy::Drop,
                        _ => return Err(bad("keep or drop")),
                    }
                }
                "on_error" => {
                    p.skip_errors = match value.as_str() {
                        "stop" => false,
                        "skip" => true,
                        _ => return Err(bad("stop or skip")),
                    }
                }
                _ => {}
            }
        }
        Ok(p)
    }
}

/// How many skipped lines a report quotes.
pub const SKIPPED_EXAMPLES: usize = 5;

/// The report line saying why the import chose its layout: DESCRIBE shows it, the CREATE
/// status line leaves it out.
pub const LAYOUT_REASON: &str = "layout reason";

/// What an import read, kept, merged and skipped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ImportReport {
    /// Input lines (text) or rows (Parquet) read, comments and blank lines included.
    pub lines_read: u64,
    /// Edges in the graph, as the user counts them.
    pub edges_kept: u64,
    pub duplicates: DuplicatePolicy,
    /// Duplicate edges merged into one by the policy.
    pub duplicates_merged: u64,
    pub self_loops: SelfLoopPolicy,
    /// Self-loops kept (policy keep) or dropped (policy drop).
    pub self_loop_count: u64,
    /// Malformed lines skipped (`ON ERROR skip`).
    pub lines_skipped: u64,
    /// The first few skipped lines' errors (`path:line: reason`).
    pub skipped_examples: Vec<String>,
    /// Vertices the VERTICES file (or the Graphalytics vertex file) defined.
    pub vertices_from_file: Option<u64>,
    /// Kept edges with a negative weight (algorithms that need non-negative weights refuse
    /// the graph).
    pub negative_weights: u64,
    /// The order of internal ids written (`LAYOUT`: key, degree or locality) and why; empty in
    /// catalogs written before layouts were chosen.
    pub layout: String,
    pub layout_reason: String,
}

impl ImportReport {
    /// One line per fact, for the REPL after CREATE and for DESCRIBE.
    pub fn lines(&self) -> Vec<(String, String)> {
        let mut out = vec![
            ("lines read".into(), self.lines_read.to_string()),
            ("edges kept".into(), self.edges_kept.to_string()),
            (
                "duplicates merged".into(),
                format!(
                    "{} (DUPLICATES {})",
                    self.duplicates_merged,
                    self.duplicates.name()
                ),
            ),
            (
                match self.self_loops {
                    SelfLoopPolicy::Keep => "self-loops kept",
                    SelfLoopPolicy::Drop => "self-loops dropped",
                }
                .into(),
                self.self_loop_count.to_string(),
            ),
            ("lines skipped".into(), self.lines_skipped.to_string()),
        ];
        for e in &self.skipped_examples {
            out.push(("  skipped".into(), e.clone()));
        }
        if let Some(n) = self.vertices_from_file {
            out.push(("vertices from file".into(), n.to_string()));
        }
        if !self.layout.is_empty() {
            out.push(("layout chosen".into(), self.layout.clone()));
        }
        if !self.layout_reason.is_empty() {
            out.push((LAYOUT_REASON.into(), self.layout_reason.clone()));
        }
        if self.negative_weights > 0 {
            out.push(("negative weights".into(), self.negative_weights.to_string()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_read_from_options_and_bad_values_name_the_choices() {
        let o = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert_eq!(
            Policies::from_options(&o("duplicates", "SUM"))
                .unwrap()
                .duplicates,
            DuplicatePolicy::Sum
        );
        assert!(
            Policies::from_options(&o("on_error", "skip"))
                .unwrap()
                .skip_errors
        );
        let e = Policies::from_options(&o("self_loops", "maybe")).unwrap_err();
        assert!(
            e.to_string().contains("SELF LOOPS must be keep or drop"),
            "{e}"
        );
        assert_eq!(DuplicatePolicy::Min.combine(2.0, 1.0), 1.0);
        assert_eq!(DuplicatePolicy::First.combine(2.0, 1.0), 2.0);
    }
}
