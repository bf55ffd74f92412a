//! The shape of PageRank's cache-blocked pull (`exec::gather`), shared by the executor, which
//! builds it, and the memory estimate, which must count it and decides whether it fits.
//!
//! Sources are split into segments of about [`SEGMENT_VERTICES`] ids; the in-edges are copied
//! segment by segment, so one sweep streams a contiguous run of edges while its random reads
//! stay inside one cache-sized slice of the values.

/// Sources per segment: 512 Ki f64 values are 4 MiB, which stays cached while the edges stream
/// past. Smaller segments mean more sweeps over the destinations for no fewer misses.
pub const SEGMENT_VERTICES: u64 = 512 * 1024;

/// At most this many segments, so the copy's offsets stay within 4 B × 8 per vertex; larger
/// graphs get larger segments.
pub const MAX_SEGMENTS: u64 = 8;

/// The fewest rounds of a sum for which a run builds the copy. Building the copy costs several
/// plain iterations' worth of time (more where the VM hands the process fresh pages) and each
/// iteration after it saves only part of one, so a shorter run is faster without it
/// (docs/PERFORMANCE.md, "In memory"). A copy an open graph already keeps is used by runs of
/// any length.
pub const MIN_ROUNDS: u64 = 50;

/// Whether a run summing `rounds` times builds the copy (when it fits; see [`MIN_ROUNDS`]).
pub fn builds_copy(rounds: u64) -> bool {
    rounds >= MIN_ROUNDS
}

/// How many segments a pull over `sources` ids uses, or `None` when it is not worth blocking:
/// below two full segments the values fit the cache anyway and the copy only costs.
pub fn segments(sources: u64) -> Option<u64> {
    (sources >= 2 * SEGMENT_VERTICES).then(|| sources.div_ceil(SEGMENT_VERTICES).min(MAX_SEGMENTS))
}

/// How many source ids one segment spans (the last may span fewer), or `None` when a pull over
/// `sources` ids is not blocked. The plain pull cuts its sums at the same ids (see
/// `exec::list_sum`), so both pulls add in the same order.
pub fn segment_width(sources: u64) -> Option<u64> {
    segments(sources).map(|count| sources.div_ceil(count))
}

/// Bytes of the segmented copy for `vertices` destinations and `arcs` in-edges: the edges once
/// (4 B each) and one 4-byte offset per vertex per segment. `None` when not worth blocking.
pub fn copy_bytes(vertices: u64, arcs: u64) -> Option<u64> {
    let segments = segments(vertices)?;
    Some(
        arcs.saturating_mul(4).saturating_add(
            segments
                .saturating_mul(vertices.saturating_add(1))
                .saturating_mul(4),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_graphs_are_not_blocked_and_large_ones_are_capped() {
        assert_eq!(segments(2 * SEGMENT_VERTICES - 1), None);
        assert_eq!(segments(2 * SEGMENT_VERTICES), Some(2));
        assert_eq!(segments(2_396_371), Some(5));
        assert_eq!(segments(1 << 40), Some(MAX_SEGMENTS));
        assert!(!builds_copy(MIN_ROUNDS - 1) && builds_copy(MIN_ROUNDS));
        assert_eq!(copy_bytes(1000, 10_000), None);
        assert_eq!(
            copy_bytes(2 * SEGMENT_VERTICES, 100),
            Some(400 + 2 * (2 * SEGMENT_VERTICES + 1) * 4)
        );
    }
}
