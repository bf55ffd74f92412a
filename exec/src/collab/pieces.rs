//! The destinations of a collaborative round: its [`Windows`] cut at the members' range
//! boundaries, so that every piece lies inside one member's owned range and that member — the
//! only one that reads, applies and writes it back — is its owner. On one compute node the
//! pieces are the windows and the one process owns them all.

use std::ops::Range;

use super::Windows;
use crate::cluster::Split;
use crate::error::ExecError;

/// Mailboxes of an array that pieces may use (`0..PIECE_MAILBOXES`, one per piece); the
/// array's last ones carry a split round's marks ([`crate::cluster::marks`]).
pub const PIECE_MAILBOXES: u32 = crate::cluster::marks::FIRST_MARKS_MAILBOX;

/// The pieces of one round, with their owners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pieces {
    /// Vertices of the state.
    pub n: u32,
    /// Items a worker buffers per piece before combining and sending them.
    pub bucket: usize,
    /// `bounds[k]..bounds[k + 1]` is piece `k`; ascending, from 0 to `n`.
    bounds: Vec<u32>,
    /// The member that owns each piece.
    owners: Vec<u32>,
}

impl Pieces {
    /// The pieces of `w` for the run `split` describes: a collective in cluster mode (every
    /// member learns where the others' ranges start).
    pub fn for_round(w: &Windows, split: &Split<'_>) -> Result<Pieces, ExecError> {
        let starts = match split.collectives() {
            None => vec![0],
            Some(c) => c.gather(split.owned().start as u64)?,
        };
        Pieces::new(w, &starts)
    }

    /// The windows of `w` cut where member `i` (of `starts.len()`) starts owning vertices,
    /// `starts[i]`; member `i` owns up to the next member's start (the last up to `n`), and
    /// member 0 also owns what lies below its start. The starts come from other processes:
    /// starts out of order are an error.
    pub fn new(w: &Windows, starts: &[u64]) -> Result<Pieces, ExecError> {
        if starts.windows(2).any(|s| s[0] > s[1]) {
            return Err(ExecError::Other(format!(
                "the compute nodes' vertex ranges are not in member order (they start at \
                 {starts:?}); run the query again"
            )));
        }
        let n = w.n;
        let cuts: Vec<u32> = starts.iter().map(|&s| s.min(n as u64) as u32).collect();
        let mut bounds: Vec<u32> = (0..w.count)
            .map(|k| w.range(k).start)
            .chain(cuts.iter().copied())
            .chain([0, n])
            .collect();
        bounds.sort_unstable();
        bounds.dedup();
        let count = bounds.len().saturating_sub(1);
        if count > PIECE_MAILBOXES as usize {
            return Err(ExecError::Other(format!(
                "{count} windows of collaborative update exceed the {PIECE_MAILBOXES} mailboxes \
                 an array has for them; SET dm_update = 'direct'"
            )));
        }
        let owners = bounds[..count]
            .iter()
            .map(|&a| cuts.partition_point(|&s| s <= a).saturating_sub(1) as u32)
            .collect();
        Ok(Pieces {
            n,
            bucket: w.bucket,
            bounds,
            owners,
        })
    }

    /// Number of pieces.
    pub fn count(&self) -> u32 {
        self.owners.len() as u32
    }

    /// The piece holding vertex `v` (`v < n`).
    #[inline]
    pub fn of(&self, v: u32) -> u32 {
        let k = self.bounds[1..].partition_point(|&b| b <= v);
        k.min(self.owners.len().saturating_sub(1)) as u32
    }

    /// The vertices of piece `k`.
    pub fn range(&self, k: u32) -> Range<u32> {
        let k = k as usize;
        match (self.bounds.get(k), self.bounds.get(k + 1)) {
            (Some(&a), Some(&b)) => a..b,
            _ => self.n..self.n,
        }
    }

    /// The member that owns piece `k`.
    pub fn owner(&self, k: u32) -> u32 {
        self.owners.get(k as usize).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(n: u32, len: u32) -> Windows {
        Windows {
            n,
            len,
            count: n.div_ceil(len),
            bucket: 8,
        }
    }

    #[test]
    fn one_compute_node_owns_the_windows_as_they_are() {
        let p = Pieces::new(&windows(10, 4), &[0]).unwrap();
        assert_eq!(p.count(), 3);
        assert_eq!((p.range(0), p.range(2)), (0..4, 8..10));
        assert_eq!((p.of(3), p.of(4), p.of(9)), (0, 1, 2));
        assert!((0..3).all(|k| p.owner(k) == 0));
    }

    #[test]
    fn windows_are_cut_at_the_members_ranges_and_owned_by_their_member() {
        // Members own 0..5, 5..5 (nothing) and 5..10.
        let p = Pieces::new(&windows(10, 4), &[0, 5, 5]).unwrap();
        let pieces: Vec<_> = (0..p.count()).map(|k| (p.range(k), p.owner(k))).collect();
        assert_eq!(pieces, vec![(0..4, 0), (4..5, 0), (5..8, 2), (8..10, 2)]);
        for v in 0..10 {
            assert!(p.range(p.of(v)).contains(&v));
        }
        // A first member starting above 0 also owns what lies below it; starts beyond n clamp.
        let p = Pieces::new(&windows(10, 10), &[2, 20]).unwrap();
        assert_eq!(
            (0..p.count())
                .map(|k| (p.range(k), p.owner(k)))
                .collect::<Vec<_>>(),
            vec![(0..2, 0), (2..10, 0)]
        );
        assert!(Pieces::new(&windows(10, 4), &[0, 6, 3]).is_err());
        let empty = Pieces::new(&windows(0, 1), &[0, 0]).unwrap();
        assert_eq!(empty.count(), 0);
        assert_eq!(empty.range(0), 0..0);
    }
}
