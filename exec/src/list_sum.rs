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

/// For a list of `n` ids (index `n`): the position each of the four lanes loads (a missing
/// lane reloads the last id) and the mask that keeps a present lane's value and turns a
/// missing one into `+0.0`. Tables rather than comparisons: once the sum is inlined into a
/// loop, the compiler turns selects on the length back into branches.
const SHORT_LANES: [([usize; 4], [u64; 4]); 5] = [
    ([0; 4], [0; 4]),
    ([0, 0, 0, 0], [!0, 0, 0, 0]),
    ([0, 1, 1, 1], [!0, !0, 0, 0]),
    ([0, 1, 2, 2], [!0, !0, !0, 0]),
    ([0, 1, 2, 3], [!0; 4]),
];

/// [`lane_sum`] of one to four ids, without a branch on the length: every lane loads (a missing
/// one reloads the last id and is masked to `+0.0`). On graphs of low degree the lane loops'
/// exits are mispredicted about once a list, and each misprediction discards the loads already
/// started for the lists after it. Equal to `lane_sum` but for the sign of a zero sum, which
/// callers normalise by adding the sum to `0.0`. An empty list sums to `+0.0`.
#[inline(always)]
fn short_sum(list: &[u32], values: &[AtomicU64]) -> f64 {
    let Some((at, keep)) = SHORT_LANES.get(list.len()) else {
        return lane_sum(list, values);
    };
    let lane = |i: usize| match list.get(at[i]) {
        Some(&u) => f64::from_bits(load(values, u).to_bits() & keep[i]),
        None => 0.0,
    };
    (lane(0) + lane(1)) + (lane(2) + lane(3))
}

/// Where a pull cuts its lists: every `width` source ids. The piece of an id is found with a
/// multiplication by a reciprocal instead of a division, which would cost as much as the
/// additions of a short list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    width: u32,
    /// `⌈2^64 / width⌉` (for `width` ≥ 2): `(reciprocal · u) >> 64` is `u / width` for every
    /// 32-bit `u` (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019).
    reciprocal: u64,
}

impl Cut {
    /// Cuts every `width` ids; `None` for a width of 0 (no cuts).
    pub fn new(width: u32) -> Option<Cut> {
        let reciprocal = match width {
            0 => return None,
            1 => 0,
            w => u64::MAX / u64::from(w) + 1,
        };
        Some(Cut { width, reciprocal })
    }

    /// `u / width`: the piece `u` falls in.
    #[inline(always)]
    pub fn piece(self, u: u32) -> u32 {
        if self.width == 1 {
            u
        } else {
            ((u128::from(self.reciprocal) * u128::from(u)) >> 64) as u32
        }
    }

    /// The first id after the piece `u` falls in (saturating at `u32::MAX`).
    #[inline(always)]
    fn end_of_piece(self, u: u32) -> u32 {
        self.piece(u).saturating_add(1).saturating_mul(self.width)
    }
}

/// `Σ values[u]` over a whole sorted list, cut every `width` source ids (`None`: not cut, when
/// the pull is never blocked at this size).
///
/// Adds exactly as [`lane_sum`] over each piece would, but finds a piece's end in the same pass
/// (a quad is whole when its last id is below the bound; lists are sorted): most pieces are a
/// few ids long, and a binary search for each end costs more than summing the piece. Lists of
/// at most four ids in one piece are summed inline; longer ones in [`cut_sum`].
#[inline(always)]
pub fn list_sum(list: &[u32], values: &[AtomicU64], cut: Option<Cut>) -> f64 {
    if let (true, Some(&first), Some(&last)) = (list.len() <= 4, list.first(), list.last()) {
        if cut.is_none_or(|c| c.piece(first) == c.piece(last)) {
            return 0.0 + short_sum(list, values);
        }
    }
    cut_sum(list, values, cut)
}

/// [`list_sum`] of a list that is longer than four ids or crosses a cut.
#[inline(never)]
fn cut_sum(list: &[u32], values: &[AtomicU64], cut: Option<Cut>) -> f64 {
    let Some(cut) = cut else {
        return 0.0 + lane_sum(list, values);
    };
    let mut sum = 0.0;
    let mut rest = list;
    while let Some(&first) = rest.first() {
        let bound = cut.end_of_piece(first);
        let mut lanes = [0.0f64; 4];
        let mut taken = 0;
        for q in rest.chunks_exact(4) {
            if q[3] >= bound {
                break;
            }
            lanes[0] += load(values, q[0]);
            lanes[1] += load(values, q[1]);
            lanes[2] += load(values, q[2]);
            lanes[3] += load(values, q[3]);
            taken += 4;
        }
        // Fewer than four ids of the piece are left: the remainder lanes, as in `lane_sum`.
        for lane in &mut lanes {
            match rest.get(taken) {
                Some(&u) if u < bound => {
                    *lane += load(values, u);
                    taken += 1;
                }
                _ => break,
            }
        }
        sum += (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
        rest = &rest[taken..];
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
    fn pieces_are_the_quotients() {
        assert_eq!(Cut::new(0), None);
        let widths = [
            1u32,
            2,
            3,
            7,
            1000,
            (1 << 19) - 1,
            1 << 19,
            523_441,
            (1 << 31) - 1,
            1 << 31,
            u32::MAX - 1,
            u32::MAX,
        ];
        let mut seed = 11u64;
        let mut ids: Vec<u32> = vec![0, 1, 2, 3, u32::MAX - 1, u32::MAX, 1 << 31, (1 << 31) - 1];
        for _ in 0..20_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ids.push((seed >> 32) as u32);
        }
        for w in widths {
            let cut = Cut::new(w).unwrap();
            // Every multiple of the width and its neighbours, where a wrong quotient would show.
            let edges = (1..=u32::MAX / w).step_by((u32::MAX / w / 5000).max(1) as usize);
            for u in ids
                .iter()
                .copied()
                .chain(edges.flat_map(|k| [k * w - 1, k * w, (k * w).saturating_add(1)]))
            {
                assert_eq!(cut.piece(u), u / w, "{u} / {w}");
            }
        }
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
        assert_eq!(list_sum(&list, &c, Cut::new(32)).to_bits(), want.to_bits());
        assert_eq!(list_sum(&[], &c, Cut::new(32)), 0.0);
        // Every cut width and list shape: the same bits as summing each piece with `lane_sum`.
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for _ in 0..300 {
            let len = (next() % 40) as usize;
            let mut l: Vec<u32> = (0..len).map(|_| next() % 100).collect();
            l.sort_unstable();
            assert_eq!(
                list_sum(&l, &c, None).to_bits(),
                (0.0 + lanes(&l)).to_bits(),
                "{l:?} uncut"
            );
            for w in [1u32, 2, 3, 5, 8, 13, 32, 64, 99, 100, 1000] {
                let mut want = 0.0;
                let mut rest = &l[..];
                while let Some(&f) = rest.first() {
                    let end = rest.partition_point(|&u| u < (f / w + 1) * w);
                    want += lanes(&rest[..end]);
                    rest = &rest[end..];
                }
                assert_eq!(
                    list_sum(&l, &c, Cut::new(w)).to_bits(),
                    want.to_bits(),
                    "{l:?} / {w}"
                );
            }
        }
        // Short lists take the branch-free path: zeros of either sign and values at the ends.
        let signed = cells(&[-0.0, 0.0, -0.0, 2.5, -1.0]);
        for l in [
            &[0u32][..],
            &[0, 2],
            &[0, 1, 2],
            &[0, 2, 2, 0],
            &[3, 4],
            &[2, 3, 4, 4],
        ] {
            let mut lanes4 = [0.0f64; 4];
            for (k, &u) in l.iter().enumerate() {
                lanes4[k % 4] += f64::from_bits(signed[u as usize].load(Ordering::Relaxed));
            }
            let want = 0.0 + ((lanes4[0] + lanes4[1]) + (lanes4[2] + lanes4[3]));
            assert_eq!(
                list_sum(l, &signed, None).to_bits(),
                want.to_bits(),
                "{l:?}"
            );
            assert_eq!(
                list_sum(l, &signed, Cut::new(2)).to_bits(),
                {
                    let mut sum = 0.0;
                    let mut rest = l;
                    while let Some(&f) = rest.first() {
                        let end = rest.partition_point(|&u| u < (f / 2 + 1) * 2);
                        sum += lane_sum(&rest[..end], &signed);
                        rest = &rest[end..];
                    }
                    sum.to_bits()
                },
                "{l:?} cut every 2"
            );
        }
        // The sum is the same number up to rounding whatever the cuts.
        let plain: f64 = list.iter().map(|&u| v(u)).sum();
        assert!((list_sum(&list, &c, Cut::new(7)) - plain).abs() < 1e-15);
    }
}
