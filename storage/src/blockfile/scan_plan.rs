//! The reads a sequential scan plans for a range of lists, kept for the next scan of the same
//! range. An iterative algorithm scans the same ranges pass after pass, and planning one means
//! decoding the index entry of every vertex in it before the first read goes out: under
//! `LAYOUT degree` the last quarter of a pass's work is millions of short lists, and planning
//! them again every pass would leave the worker reading nothing meanwhile.

use std::cell::Cell;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap as HashMap;

use crate::store::Direction;

/// Reads kept across all plans: at 20 bytes each, at most 1.25 MiB (a pass over R-MAT scale 22
/// in 512 KiB reads is about 1 200 of them).
pub const KEPT_READS_MAX: usize = 1 << 16;

/// A scan's reads and what needs them.
#[derive(Debug)]
pub struct ScanPlan {
    /// Block ranges, sorted, one read each.
    pub reads: Vec<Range<u64>>,
    /// How many of the range's lists need each read.
    pub uses: Vec<u32>,
}

/// Finds the read holding a block, for blocks asked in about file order: lists come in vertex
/// order, which is file order apart from the odd long list, so the last answer or the read after
/// it is tried before a binary search (which cost more than the rest of a short list's visit).
pub struct ReadOf<'a> {
    reads: &'a [Range<u64>],
    last: Cell<usize>,
}

impl<'a> ReadOf<'a> {
    /// Over sorted, disjoint `reads`.
    pub fn new(reads: &'a [Range<u64>]) -> ReadOf<'a> {
        ReadOf {
            reads,
            last: Cell::new(0),
        }
    }

    /// The index of the read holding block `b` (`reads.len()` when none does and `b` lies past
    /// them all).
    pub fn of(&self, b: u64) -> usize {
        let holds = |i: usize| self.reads.get(i).is_some_and(|r| r.contains(&b));
        let h = self.last.get();
        let c = if holds(h) {
            h
        } else if holds(h + 1) {
            h + 1
        } else {
            self.reads.partition_point(|r| r.end <= b)
        };
        self.last.set(c);
        c
    }
}

/// Which scans share a plan: the adjacency, whether weights are read beside it, and the range
/// of vertices (all of them wanted).
pub type PlanKey = (Direction, bool, Range<u32>);

/// Plans of scans that wanted every list of their range, which is what repeats.
#[derive(Debug, Default)]
pub struct ScanPlans {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    plans: HashMap<PlanKey, Arc<ScanPlan>>,
    reads: usize,
}

impl ScanPlans {
    /// The plan kept for `key`, or the one `plan` makes, which is kept unless it alone exceeds
    /// [`KEPT_READS_MAX`] reads (the plans kept before are forgotten when it would take them
    /// past that). Planning runs outside the lock: workers planning different ranges do not
    /// wait for each other.
    pub fn get_or_plan(&self, key: PlanKey, plan: impl FnOnce() -> ScanPlan) -> Arc<ScanPlan> {
        if let Some(p) = self.lock().plans.get(&key) {
            return p.clone();
        }
        let p = Arc::new(plan());
        let mut kept = self.lock();
        if p.reads.len() <= KEPT_READS_MAX {
            if kept.reads + p.reads.len() > KEPT_READS_MAX {
                kept.plans.clear();
                kept.reads = 0;
            }
            kept.reads += p.reads.len();
            if let Some(old) = kept.plans.insert(key, p.clone()) {
                kept.reads -= old.reads.len();
            }
        }
        p
    }

    /// Forgets every plan (the reads are priced differently from now on).
    pub fn clear(&mut self) {
        let kept = self.kept.get_mut().unwrap_or_else(|e| e.into_inner());
        *kept = Kept::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn plan(reads: usize) -> ScanPlan {
        ScanPlan {
            reads: (0..reads as u64).map(|b| b..b + 1).collect(),
            uses: vec![1; reads],
        }
    }

    #[test]
    fn a_range_is_planned_once_and_others_apart() {
        let plans = ScanPlans::default();
        let planned = Cell::new(0);
        let get = |key: PlanKey, n: usize| {
            plans.get_or_plan(key, || {
                planned.set(planned.get() + 1);
                plan(n)
            })
        };
        let a = get((Direction::In, false, 0..10), 3);
        let again = get((Direction::In, false, 0..10), 99);
        assert!(Arc::ptr_eq(&a, &again));
        assert_eq!(planned.get(), 1);
        // Another range, direction or weights is another plan.
        assert_eq!(get((Direction::In, false, 0..11), 4).reads.len(), 4);
        assert_eq!(get((Direction::Out, false, 0..10), 5).reads.len(), 5);
        assert_eq!(get((Direction::In, true, 0..10), 6).reads.len(), 6);
        assert_eq!(planned.get(), 4);
    }

    #[test]
    fn kept_reads_stay_bounded() {
        let mut plans = ScanPlans::default();
        for start in 0..100u32 {
            plans.get_or_plan((Direction::In, false, start..start + 1), || {
                plan(KEPT_READS_MAX / 10)
            });
            assert!(plans.lock().reads <= KEPT_READS_MAX);
        }
        // A plan larger than the bound is used but not kept.
        let key = (Direction::In, false, 0..u32::MAX);
        plans.get_or_plan(key.clone(), || plan(KEPT_READS_MAX + 1));
        assert!(!plans.lock().plans.contains_key(&key));
        plans.clear();
        assert_eq!(plans.lock().reads, 0);
        assert!(plans.lock().plans.is_empty());
    }

    #[test]
    fn read_of_agrees_with_a_binary_search_in_any_order_asked() {
        let reads = vec![0..4u64, 4..6, 9..12, 12..20, 30..31];
        let search = |b: u64| reads.partition_point(|r| r.end <= b);
        let read_of = ReadOf::new(&reads);
        // In order, backwards, across gaps and past the end.
        for b in [0u64, 3, 4, 5, 9, 11, 12, 19, 30, 2, 13, 0, 31, 40, 5, 6, 7] {
            assert_eq!(read_of.of(b), search(b), "block {b}");
        }
        assert_eq!(ReadOf::new(&[]).of(3), 0);
    }
}
