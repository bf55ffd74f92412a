//! `LAYOUT key|degree`: the order of internal ids, and so of the lists in the block file.
//!
//! - `key`: internal id = rank of the input id (or string key).
//! - `degree` (the default): vertices grouped by degree bucket (bucket `b` holds degrees in
//!   `[2^(b-1), 2^b)`, bucket 0 the isolated vertices), the bucket of the largest degrees first,
//!   key order within each bucket: degree-based grouping (Faldu et al., "A Closer Look at
//!   Lightweight Graph Reordering", 2019). The hubs' lists and per-vertex values then share a few blocks and cache
//!   lines, and the low-degree tail, which a bottom-up traversal's late levels still want, is
//!   packed at the end of the file instead of spread over every block. Key order within a bucket
//!   keeps the id map a few ascending runs, so it still packs and is still searched by bisection.

use crate::error::{Result, StoreError};

/// The order of internal ids a graph is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Key,
    Degree,
}

impl Layout {
    /// The `LAYOUT` option of an import (the last one given wins); `degree` when absent.
    pub(crate) fn from_options(options: &[(String, String)]) -> Result<Layout> {
        let mut layout = Layout::Degree;
        for (k, v) in options {
            if !k.eq_ignore_ascii_case("layout") {
                continue;
            }
            layout = match v.to_ascii_lowercase().as_str() {
                "key" => Layout::Key,
                "degree" => Layout::Degree,
                _ => {
                    return Err(StoreError::Other(format!(
                        "LAYOUT must be key or degree, found `{v}`"
                    )))
                }
            };
        }
        Ok(layout)
    }
}

/// The degree bucket of a vertex: 0 for degree 0, else the bit length of the degree.
#[inline]
fn bucket(degree: u32) -> usize {
    (u32::BITS - degree.leading_zeros()) as usize
}

/// The new internal id of every vertex, indexed by its key-order id: buckets of larger degree
/// first, key order within a bucket. `degrees` counts both directions of directed graphs.
pub(crate) fn degree_order(degrees: &[u32]) -> Vec<u32> {
    const BUCKETS: usize = u32::BITS as usize + 1;
    let mut counts = [0u32; BUCKETS];
    for &d in degrees {
        counts[bucket(d)] += 1;
    }
    // Where each bucket starts: the largest bucket first.
    let mut next = [0u32; BUCKETS];
    let mut at = 0u32;
    for b in (0..BUCKETS).rev() {
        next[b] = at;
        at += counts[b];
    }
    degrees
        .iter()
        .map(|&d| {
            let b = bucket(d);
            let id = next[b];
            next[b] += 1;
            id
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hubs_come_first_and_key_order_holds_within_a_bucket() {
        // Key-order ids 0..8 with these degrees: buckets 5 (16..31), 3 (4..7), 2 (2..3),
        // 1 (1), 0 (isolated).
        let degrees = [1, 20, 0, 5, 3, 1, 6, 2];
        let new = degree_order(&degrees);
        assert_eq!(new, vec![5, 0, 7, 1, 3, 6, 2, 4]);
        let mut seen = new.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..8).collect::<Vec<u32>>(), "a permutation");
    }

    #[test]
    fn the_option_is_read_and_checked() {
        let o = |v: &str| vec![("LAYOUT".to_string(), v.to_string())];
        assert_eq!(Layout::from_options(&[]).unwrap(), Layout::Degree);
        assert_eq!(Layout::from_options(&o("Degree")).unwrap(), Layout::Degree);
        assert_eq!(Layout::from_options(&o("key")).unwrap(), Layout::Key);
        let err = Layout::from_options(&o("random")).unwrap_err().to_string();
        assert!(err.contains("LAYOUT must be key or degree"), "{err}");
    }
}
