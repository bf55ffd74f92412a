//! The id map's strictly ascending runs. A file in key order has one (internal id = rank of the
//! input id); a file in degree order has one per degree bucket, a file in locality order one
//! per cluster (see the format's `IdMap`), so input → internal id is one binary search per run,
//! and every reader finds the runs the same way as the id map streams in.

use std::ops::Range;

use crate::blockfile::format::IdOrder;

/// Where each run of the id map ends.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IdRuns {
    /// The exclusive end of each run, ascending; the last is the number of vertices.
    ends: Vec<u32>,
}

impl IdRuns {
    /// The runs of a map in key order: `0..n` in one.
    pub fn single(n: u32) -> IdRuns {
        IdRuns { ends: vec![n] }
    }

    /// Whether the whole map is one ascending run (key order).
    pub fn is_single(&self) -> bool {
        self.ends.len() <= 1
    }

    /// The internal id ranges of the runs, in order.
    pub fn ranges(&self) -> impl Iterator<Item = Range<u32>> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter().copied()).map(|(s, e)| s..e)
    }

    /// The internal id whose input id is `input`, `id_of` giving the input id of an internal
    /// one: a binary search in each run.
    pub fn find(&self, input: u64, id_of: impl Fn(u32) -> u64) -> Option<u32> {
        self.ranges().find_map(|r| {
            let (mut lo, mut hi) = (r.start, r.end);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match id_of(mid).cmp(&input) {
                    std::cmp::Ordering::Equal => return Some(mid),
                    std::cmp::Ordering::Less => lo = mid + 1,
                    std::cmp::Ordering::Greater => hi = mid,
                }
            }
            None
        })
    }
}

/// Finds the runs of an id map streamed in internal order.
#[derive(Debug)]
pub struct IdRunsBuilder {
    /// The order the file declares: how many runs its map may have.
    order: IdOrder,
    prev: Option<u64>,
    next: u32,
    ends: Vec<u32>,
}

impl IdRunsBuilder {
    /// For a map in `order`.
    pub fn new(order: IdOrder) -> IdRunsBuilder {
        IdRunsBuilder {
            order,
            prev: None,
            next: 0,
            ends: Vec::new(),
        }
    }

    /// Takes the input id of the next internal vertex; `Err` says why the map is damaged.
    #[inline]
    pub fn push(&mut self, id: u64) -> Result<(), String> {
        let v = self.next;
        if let Some(p) = self.prev {
            if p == id {
                return Err(format!(
                    "IdMap repeats input id {id} at internal vertex {v}"
                ));
            }
            if p > id {
                if self.order == IdOrder::Key {
                    return Err(format!(
                        "IdMap is not strictly ascending at internal vertex {v}"
                    ));
                }
                let max = self.order.max_runs();
                if self.ends.len() + 1 >= max {
                    return Err(format!(
                        "IdMap has more than {max} ascending runs (at internal vertex {v})"
                    ));
                }
                self.ends.push(v);
            }
        }
        self.prev = Some(id);
        self.next += 1;
        Ok(())
    }

    /// The runs found.
    pub fn finish(mut self) -> IdRuns {
        self.ends.push(self.next);
        IdRuns { ends: self.ends }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::blockfile::format::MAX_ID_RUNS;

    fn runs_of(ids: &[u64], order: IdOrder) -> Result<IdRuns, String> {
        let mut b = IdRunsBuilder::new(order);
        for &id in ids {
            b.push(id)?;
        }
        Ok(b.finish())
    }

    #[test]
    fn every_id_is_found_in_its_run_and_missing_ids_are_not() {
        let ids = [40, 50, 90, 3, 7, 8, 100, 1];
        let runs = runs_of(&ids, IdOrder::Degree).unwrap();
        assert_eq!(runs.ranges().collect::<Vec<_>>(), vec![0..3, 3..7, 7..8]);
        for (v, &id) in ids.iter().enumerate() {
            assert_eq!(
                runs.find(id, |w| ids[w as usize]),
                Some(v as u32),
                "id {id}"
            );
        }
        for missing in [0, 2, 41, 99, 101] {
            assert_eq!(runs.find(missing, |w| ids[w as usize]), None);
        }
    }

    #[test]
    fn key_order_refuses_a_descent_and_both_refuse_a_repeat() {
        assert!(runs_of(&[1, 2, 3], IdOrder::Key).unwrap().is_single());
        assert!(runs_of(&[], IdOrder::Key).unwrap().is_single());
        let err = runs_of(&[1, 5, 4], IdOrder::Key).unwrap_err();
        assert!(
            err.contains("not strictly ascending at internal vertex 2"),
            "{err}"
        );
        let err = runs_of(&[1, 5, 5], IdOrder::Locality).unwrap_err();
        assert!(err.contains("repeats input id 5"), "{err}");
    }

    #[test]
    fn too_many_runs_is_damage_in_degree_order_only() {
        let ids: Vec<u64> = (0..MAX_ID_RUNS as u64 + 1).rev().collect();
        let err = runs_of(&ids, IdOrder::Degree).unwrap_err();
        assert!(err.contains("ascending runs"), "{err}");
        let ok: Vec<u64> = (0..MAX_ID_RUNS as u64).rev().collect();
        assert_eq!(
            runs_of(&ok, IdOrder::Degree).unwrap().ranges().count(),
            MAX_ID_RUNS
        );
        let runs = runs_of(&ids, IdOrder::Locality).unwrap();
        assert_eq!(runs.ranges().count(), ids.len());
    }
}
