//! Neighbour ids must be vertices: a checksum-valid but wrong file must not make an algorithm
//! index out of bounds. Out of core every list is checked before it is visited, so these checks
//! are on the hot path of every scan: one branch-free pass that vectorises, and only when it
//! finds something a second pass that says where.

use crate::blockfile::format::EMPTY_SLOT;

/// The first id in `nbrs` that is not one of `vertices` vertices. An OR of the comparisons
/// vectorises (even without SSE4's unsigned maximum), and an early-exit search does not.
pub fn first_outside(nbrs: &[u32], vertices: u64) -> Option<u32> {
    let n = u32::try_from(vertices).ok()?; // otherwise every u32 is a vertex
    if !nbrs.iter().fold(false, |any, &x| any | (x >= n)) {
        return None;
    }
    nbrs.iter().copied().find(|&x| x >= n)
}

/// The first slot of whole edge blocks (`slots`) that holds neither a vertex of `vertices` nor
/// the filler of unused slots, with its id. Checking a scan's read once, block by block, costs
/// less than checking each list it holds: no work per list, and no short loops.
pub fn first_stray_slot(slots: &[u32], vertices: u64) -> Option<(usize, u32)> {
    let n = u32::try_from(vertices).ok()?;
    // `x + 1` wraps the filler to 0 and maps a vertex to 1..=n, so a stray id is exactly one
    // whose successor exceeds n: the largest successor says whether there is one.
    if largest_successor(slots) <= n {
        return None;
    }
    slots
        .iter()
        .position(|&x| x != EMPTY_SLOT && x >= n)
        .map(|i| (i, slots[i]))
}

/// `max(x + 1)` over `slots` (wrapping), 0 when empty.
fn largest_successor(slots: &[u32]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU was just found to have AVX2, which is all the function enables.
        return unsafe { largest_successor_avx2(slots) };
    }
    largest_successor_portable(slots)
}

#[inline(always)]
fn largest_successor_portable(slots: &[u32]) -> u32 {
    slots.iter().fold(0, |m, &x| m.max(x.wrapping_add(1)))
}

/// The same loop (inlined) compiled for AVX2, whose unsigned maximum handles eight slots an
/// instruction (baseline x86-64 has none and needs several instructions a lane).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn largest_successor_avx2(slots: &[u32]) -> u32 {
    largest_successor_portable(slots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_at_or_past_the_vertex_count_is_found() {
        let long: Vec<u32> = (0..1000).collect();
        assert_eq!(first_outside(&long, 1000), None);
        assert_eq!(first_outside(&long, 999), Some(999));
        assert_eq!(first_outside(&[5, 2, u32::MAX, 7], 8), Some(u32::MAX));
        assert_eq!(first_outside(&[], 0), None);
        assert_eq!(first_outside(&[0], 0), Some(0));
        assert_eq!(first_outside(&[u32::MAX], 1 << 32), None);
    }

    #[test]
    fn a_stray_slot_is_found_and_the_filler_is_not_one() {
        let mut block: Vec<u32> = (0..1024).map(|i| i % 100).collect();
        block[1000..].fill(EMPTY_SLOT);
        assert_eq!(first_stray_slot(&block, 100), None);
        assert_eq!(first_stray_slot(&block, 99), Some((99, 99)));
        block[517] = 100;
        assert_eq!(first_stray_slot(&block, 100), Some((517, 100)));
        block[517] = u32::MAX - 1;
        assert_eq!(first_stray_slot(&block, 100), Some((517, u32::MAX - 1)));
        assert_eq!(first_stray_slot(&[], 0), None);
        assert_eq!(first_stray_slot(&[EMPTY_SLOT], 0), None);
        assert_eq!(first_stray_slot(&[0], 0), Some((0, 0)));
        assert_eq!(first_stray_slot(&[u32::MAX - 1], 1 << 32), None);
    }

    #[test]
    fn both_loops_agree() {
        let slots: Vec<u32> = (0..4099u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        assert_eq!(
            largest_successor(&slots),
            largest_successor_portable(&slots)
        );
        assert_eq!(largest_successor(&[]), 0);
        assert_eq!(largest_successor(&[EMPTY_SLOT]), 0);
    }
}
