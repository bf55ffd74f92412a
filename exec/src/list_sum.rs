//! The order in which an unweighted pull adds a vertex's in-list, `Σ values[u]`: fixed here so
//! that the plain pull (in memory and out of core) and the cache-blocked pull ([`crate::gather`])
//! give the same bits.
//!
//! A list is cut where the blocked pull cuts the sources (every [`segment_width`] ids; lists are
//! sorted, so each piece is one run), each piece is summed in four lanes (position mod 4,
//! combined `(l0 + l1) + (l2 + l3)`), and the pieces are added in order to a sum starting at 0.
//! Four lanes are four independent chains of additions: one chain makes every addition wait for
//! the one before (its latency, 3–4 cycles), which bounded the pull below the rate the loads
//! allow.
//!
//! [`segment_width`]: planner::blocking::segment_width

use std::sync::atomic::{AtomicU64, Ordering};

#[inline(always)]
fn load(values: &[AtomicU64], u: u32) -> f64 {
    f64::from_bits(values[u as usize].load(Ordering::Relaxed))
}

/// `Σ values[u]` over one piece of a list, in four lanes.
#[inline]
pub fn lane_sum(piece: &[u32], values: &[AtomicU64]) -> f64 {
    let mut lanes = [0.0f64; 4];
    let mut quads = piece.chunks_exact(4);
    for q in &mut quads {
        lanes[0] += load(values, q[0]);
        lanes[1] += load(values, q[1]);
        lanes[2] += load(values, q[2]);
        lanes[3] += load(values, q[3]);
    }
    for (lane, &u) in lanes.iter_mut().zip(quads.remainder()) {
        *lane += load(values, u);
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// `Σ values[u]` over a whole sorted list, cut every `width` source ids (`None`: not cut, when
/// the pull is never blocked at this size).
#[inline]
pub fn list_sum(list: &[u32], values: &[AtomicU64], width: Option<u32>) -> f64 {
    let Some(width) = width.filter(|&w| w > 0) else {
        return 0.0 + lane_sum(list, values);
    };
    let mut sum = 0.0;
    let mut rest = list;
    while let Some(&first) = rest.first() {
        let bound = (first / width).saturating_add(1).saturating_mul(width);
        let end = match rest.last() {
            Some(&last) if last < bound => rest.len(),
            _ => rest.partition_point(|&u| u < bound),
        };
        sum += lane_sum(&rest[..end], values);
        rest = &rest[end..];
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(values: &[f64]) -> Vec<AtomicU64> {
        values.iter().map(|v| AtomicU64::new(v.to_bits())).collect()
    }

    #[test]
    fn lanes_add_by_position_and_pieces_in_order() {
        let values: Vec<f64> = (0..100).map(|i| 1.0 / (i as f64 + 3.0)).collect();
        let c = cells(&values);
        let list: Vec<u32> = vec![1, 4, 9, 10, 33, 34, 35, 60, 61, 99];
        let v = |u: u32| values[u as usize];
        let lanes = |p: &[u32]| {
            let mut l = [0.0; 4];
            for (k, &u) in p.iter().enumerate() {
                l[k % 4] += v(u);
            }
            (l[0] + l[1]) + (l[2] + l[3])
        };
        assert_eq!(lane_sum(&list, &c).to_bits(), lanes(&list).to_bits());
        assert_eq!(list_sum(&list, &c, None).to_bits(), lanes(&list).to_bits());
        // Cut every 32 ids: [1 4 9 10] [33 34 35 60 61] [99].
        let want = ((0.0 + lanes(&list[..4])) + lanes(&list[4..9])) + lanes(&list[9..]);
        assert_eq!(list_sum(&list, &c, Some(32)).to_bits(), want.to_bits());
        assert_eq!(list_sum(&[], &c, Some(32)), 0.0);
        // The sum is the same number up to rounding whatever the cuts.
        let plain: f64 = list.iter().map(|&u| v(u)).sum();
        assert!((list_sum(&list, &c, Some(7)) - plain).abs() < 1e-15);
    }
}
