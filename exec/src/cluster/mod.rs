//! The split of work inside the operators when several compute nodes run one query (DMG
//! §4.1–4.2), SPMD: every member runs the same kernel over the same remote state, and each
//! operator does only the member's part and meets the others at collectives.
//!
//! The rules every operator follows in cluster mode (`RunConfig::cluster` set):
//! * it starts with a barrier ([`Split::settle`]), so it sees every write made before it — the
//!   previous operator's, and the kernel's own (`set`, `write_range`, `add_batch` on a shared
//!   array apply to the caller's owned vertices only: every member makes the same call, the
//!   owner of each vertex applies it);
//! * push rounds take the frontier ∩ owned as their sources, pulls and vertex maps compute the
//!   owned vertices only;
//! * a frontier it returns is the union of the members' parts, of which each member keeps the
//!   bits of its owned range and the union's size: a vertex map's through [`Split::union`]
//!   (OR-ed in pieces through `or_words`), a claim or min-update round's through its
//!   [`marks`] (changes to other members' vertices mailed to their owners); a scalar is the
//!   member-order sum of their parts;
//! * updates to other members' vertices go directly to remote state (CAS, FAA, the nodes'
//!   pass-by-value add are atomic there) or, in a collaborative round, into the mailboxes of
//!   the pieces the owners apply ([`crate::collab::pieces`]).
//!
//! So after every operator call each member holds the same frontier and scalars, and the
//! kernels need no change. Without a cluster every helper here is the identity.
//!
//! Hubs that make their owner the straggler are dealt out across the members at run time
//! ([`hubs`]).

pub mod hubs;
pub mod marks;

use std::ops::Range;

use storage::cluster::{Collectives, Member};
use storage::remote_memory::RemoteMemory;

use crate::bitmap::Bitmap;
use crate::error::ExecError;
use crate::remote_part::{OwnedSet, PartBits, RemotePart};
use crate::subset::VertexSubset;

/// Words of a union OR-ed across the members in one collective call (64 KiB): what a member
/// holds of the union beyond its own part, and what a collective reads from each member.
pub const UNION_PIECE_WORDS: usize = 1 << 13;

/// Figures each member reports for an iteration: time (µs), edges, round trips, remote
/// operations, bytes sent, hubs processed whole, and its owned range's start and end.
pub const FIGURES: usize = 8;

/// A member's part of the run, or the whole run when there is no cluster.
#[derive(Clone, Copy)]
pub struct Split<'a> {
    member: Option<&'a Member>,
    vertices: u32,
}

/// What every member did in one iteration, gathered ([`Split::gather_iteration`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemberFigures {
    /// Per member, in member order: the iteration's time in microseconds.
    pub micros: Vec<u64>,
    /// Per member, in member order: the edges it examined.
    pub member_edges: Vec<u64>,
    /// Per member, in member order: the hubs among its own sources it processed whole.
    pub whole_hubs: Vec<u64>,
    /// Per member, in member order: its owned range.
    pub owned: Vec<Range<u32>>,
    /// The members' edges, round trips, remote operations and bytes sent, summed.
    pub edges: u64,
    pub round_trips: u64,
    pub remote_ops: u64,
    pub bytes_sent: u64,
}

impl<'a> Split<'a> {
    pub fn new(member: Option<&'a Member>, vertices: u32) -> Split<'a> {
        Split { member, vertices }
    }

    /// True when several compute nodes share the run (even a group of one: the collectives
    /// are then trivial).
    pub fn is_cluster(&self) -> bool {
        self.member.is_some()
    }

    /// The collectives of the run, if it is split.
    pub fn collectives(&self) -> Option<&'a dyn Collectives> {
        self.member.map(|m| &*m.collectives)
    }

    /// The vertices this member works on: its owned range, within `0..|V|`.
    pub fn owned(&self) -> Range<u32> {
        match self.member {
            None => 0..self.vertices,
            Some(m) => {
                let end = m.owned.end.min(self.vertices);
                m.owned.start.min(end)..end
            }
        }
    }

    /// The members' count and this member's rank (1 and 0 without a cluster).
    pub fn size_rank(&self) -> (usize, usize) {
        match self.collectives() {
            None => (1, 0),
            Some(c) => (c.size(), c.rank()),
        }
    }

    /// The part of the sorted `list` this member owns.
    pub fn owned_part<'l>(&self, list: &'l [u32]) -> &'l [u32] {
        if self.member.is_none() {
            return list;
        }
        let r = self.owned();
        let a = list.partition_point(|&v| v < r.start);
        let b = list.partition_point(|&v| v < r.end);
        &list[a..b]
    }

    /// Waits for every member (an operator's first step in cluster mode).
    pub fn settle(&self) -> Result<(), ExecError> {
        match self.collectives() {
            None => Ok(()),
            Some(c) => Ok(c.barrier()?),
        }
    }

    /// The sum of every member's `x`, in member order.
    pub fn sum_f64(&self, x: f64) -> Result<f64, ExecError> {
        match self.collectives() {
            None => Ok(x),
            Some(c) => Ok(c.sum_f64(x)?),
        }
    }

    /// The sum of every member's `x`.
    pub fn sum_u64(&self, x: u64) -> Result<u64, ExecError> {
        match self.collectives() {
            None => Ok(x),
            Some(c) => Ok(c.sum_u64(x)?),
        }
    }

    /// The smallest of every member's `x` (`None` where a member has none).
    pub fn min_u64(&self, x: Option<u64>) -> Result<Option<u64>, ExecError> {
        let Some(c) = self.collectives() else {
            return Ok(x);
        };
        let present = c.gather(x.is_some() as u64)?;
        let values = c.gather(x.unwrap_or(0))?;
        Ok(present
            .iter()
            .zip(&values)
            .filter(|(p, _)| **p != 0)
            .map(|(_, v)| *v)
            .min())
    }

    /// The union of every member's vertices `mine` (each below `vertices`): the next frontier
    /// of a split round. Without a cluster `mine` itself; over several members this member's
    /// part of it ([`VertexSubset::from_part`]): the bits of its owned range and the size of
    /// the whole union. The union travels as a bitmap over |V| in pieces of
    /// [`UNION_PIECE_WORDS`] words, each OR-ed across the members, so a member holds one piece
    /// of the others' bits at a time, never a bitmap over |V|.
    pub fn union(&self, mut mine: Vec<u32>) -> Result<VertexSubset, ExecError> {
        let Some(c) = self.collectives() else {
            return Ok(VertexSubset::from_list(self.vertices, mine));
        };
        if !mine.is_sorted() {
            mine.sort_unstable();
        }
        let mut k = 0;
        self.union_pieces(c, |at, piece| {
            let end = (at + piece.len()) as u64 * 64;
            while let Some(&v) = mine.get(k) {
                if v as u64 >= end {
                    break;
                }
                let i = v as usize - at * 64;
                piece[i / 64] |= 1 << (i % 64);
                k += 1;
            }
        })
    }

    /// The union of the members' bits, `fill(first_word, piece)` giving this member's words
    /// of each piece in turn; every member walks the same pieces, so the collectives line up.
    fn union_pieces(
        &self,
        c: &dyn Collectives,
        mut fill: impl FnMut(usize, &mut [u64]),
    ) -> Result<VertexSubset, ExecError> {
        let n = self.vertices;
        let total = (n as usize).div_ceil(64);
        let owned = self.owned();
        let first = owned.start as usize / 64;
        let end = (owned.end as usize).div_ceil(64).max(first);
        let mut part = vec![0u64; end - first];
        let mut count = 0u64;
        if total == 0 {
            c.or_words(&mut [])?;
        }
        let mut buf = vec![0u64; UNION_PIECE_WORDS.min(total)];
        let mut at = 0;
        while at < total {
            let len = UNION_PIECE_WORDS.min(total - at);
            let piece = &mut buf[..len];
            piece.fill(0);
            fill(at, piece);
            if at + len == total && !n.is_multiple_of(64) {
                piece[len - 1] &= (1u64 << (n % 64)) - 1;
            }
            c.or_words(piece)?;
            count += piece.iter().map(|w| w.count_ones() as u64).sum::<u64>();
            let (a, b) = (at.max(first), (at + len).min(end));
            if a < b {
                part[a - first..b - first].copy_from_slice(&piece[a - at..b - at]);
            }
            at += len;
        }
        // Only the owned range: the words' other bits are the neighbours'.
        if let Some(w) = part.first_mut() {
            *w &= !((1u64 << (owned.start % 64)) - 1);
        }
        if !owned.end.is_multiple_of(64) {
            if let Some(w) = part.last_mut() {
                *w &= (1u64 << (owned.end % 64)) - 1;
            }
        }
        Ok(VertexSubset::from_part(
            n,
            (first * 64) as u32,
            Bitmap::from_words(part),
            count,
        ))
    }

    /// Every vertex: the first frontier of a round over all vertices. Over several members
    /// this member's part of it (its owned range), counted as |V|: bits when they fit
    /// `budget`, else (with remote `memory`) a part that stores nothing
    /// ([`RemotePart::whole`]).
    pub fn all(&self, memory: Option<&dyn RemoteMemory>, budget: u64) -> VertexSubset {
        if self.member.is_none() {
            return VertexSubset::all(self.vertices);
        }
        let owned = self.owned();
        if memory.is_some() && !OwnedSet::fits(&owned, budget) {
            let bits = PartBits::Remote(std::sync::Arc::new(RemotePart::whole(owned)));
            return VertexSubset::from_part_bits(self.vertices, bits, self.vertices as u64);
        }
        let first = owned.start / 64 * 64;
        let mut bits = Bitmap::new(owned.end - first);
        for v in owned {
            bits.set(v - first);
        }
        VertexSubset::from_part(self.vertices, first, bits, self.vertices as u64)
    }

    /// Every member's `mine` (vertices below |V|), concatenated in member order; without a
    /// cluster `mine` itself. For short lists, such as the hubs of a frontier.
    pub fn all_gather(&self, mine: &[u32]) -> Result<Vec<u32>, ExecError> {
        let Some(c) = self.collectives() else {
            return Ok(mine.to_vec());
        };
        let counts = c.gather(mine.len() as u64)?;
        let total = counts.iter().fold(0u64, |a, &x| a.saturating_add(x));
        let before = counts
            .iter()
            .take(c.rank())
            .fold(0u64, |a, &x| a.saturating_add(x));
        // The counts come from the other members: more than |V| in all is a lie.
        if total > self.vertices as u64 || before + mine.len() as u64 > total {
            return Err(ExecError::Other(format!(
                "the compute nodes reported {total} vertices to exchange, more than the graph's \
                 {}; run the query again",
                self.vertices
            )));
        }
        let mut table = vec![0u64; total as usize];
        for (slot, &v) in table[before as usize..].iter_mut().zip(mine) {
            *slot = v as u64;
        }
        c.or_words(&mut table)?;
        Ok(table
            .into_iter()
            .filter(|&w| w < self.vertices as u64)
            .map(|w| w as u32)
            .collect())
    }

    /// Every member's figures for one iteration, in one collective: each member fills its own
    /// slots of a table and the OR of the tables is the whole of it.
    pub fn gather_iteration(&self, mine: [u64; FIGURES]) -> Result<MemberFigures, ExecError> {
        let Some(c) = self.collectives() else {
            return Ok(MemberFigures {
                micros: Vec::new(),
                member_edges: Vec::new(),
                whole_hubs: Vec::new(),
                owned: Vec::new(),
                edges: mine[1],
                round_trips: mine[2],
                remote_ops: mine[3],
                bytes_sent: mine[4],
            });
        };
        let (size, rank) = (c.size(), c.rank());
        let mut table = vec![0u64; size * FIGURES];
        table[rank * FIGURES..(rank + 1) * FIGURES].copy_from_slice(&mine);
        c.or_words(&mut table)?;
        let column = |k: usize| table.chunks(FIGURES).map(move |row| row[k]);
        let starts = column(6).map(|x| x as u32);
        Ok(MemberFigures {
            micros: column(0).collect(),
            member_edges: column(1).collect(),
            whole_hubs: column(5).collect(),
            owned: starts.zip(column(7)).map(|(a, b)| a..b as u32).collect(),
            edges: column(1).fold(0, u64::wrapping_add),
            round_trips: column(2).fold(0, u64::wrapping_add),
            remote_ops: column(3).fold(0, u64::wrapping_add),
            bytes_sent: column(4).fold(0, u64::wrapping_add),
        })
    }

    /// Makes every other member's collectives fail with `reason` (this member's kernel failed).
    pub fn abort(&self, reason: &str) {
        if let Some(c) = self.collectives() {
            c.abort(reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use storage::cluster::LocalCollectives;

    fn members(n: usize, vertices: u32) -> Vec<Member> {
        let ranges = storage::cluster::split_ranges(&[0, vertices / 2, vertices], &[1, 1], n);
        LocalCollectives::group(n)
            .into_iter()
            .zip(ranges)
            .map(|(c, owned)| Member {
                collectives: Arc::new(c),
                owned,
            })
            .collect()
    }

    #[test]
    fn without_a_cluster_the_split_is_the_whole_run() {
        let s = Split::new(None, 10);
        assert_eq!(s.owned(), 0..10);
        assert_eq!(s.owned_part(&[1, 5, 9]), &[1, 5, 9]);
        assert_eq!(s.union(vec![3, 1]).unwrap().to_list(), vec![3, 1]);
        assert_eq!(s.sum_f64(2.5).unwrap(), 2.5);
    }

    #[test]
    fn members_own_their_part_and_agree_on_unions_and_sums() {
        let group = members(2, 200);
        let out: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = group
                .iter()
                .map(|m| {
                    s.spawn(move || {
                        let split = Split::new(Some(m), 200);
                        let part = split.owned_part(&[0, 50, 99, 100, 150, 199]).to_vec();
                        let union = split.union(part.clone()).unwrap();
                        assert!(union.is_part(), "a split frontier is the member's part");
                        assert_eq!(union.len(), 6);
                        let union = union.to_list();
                        let sum = split.sum_u64(part.len() as u64).unwrap();
                        let min = split.min_u64(part.first().map(|&v| v as u64)).unwrap();
                        let figures = split.gather_iteration([7, 1, 2, 3, 4, 0, 0, 9]).unwrap();
                        (part, union, sum, min, figures)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(out[0].0, vec![0, 50, 99]);
        assert_eq!(out[1].0, vec![100, 150, 199]);
        for (part, union, sum, min, figures) in &out {
            assert_eq!(union, part, "each member keeps its own part of the union");
            assert_eq!(*sum, 6);
            assert_eq!(*min, Some(0));
            assert_eq!(figures.micros, vec![7, 7]);
            assert_eq!(figures.edges, 2);
            assert_eq!(figures.bytes_sent, 8);
            assert_eq!(figures.member_edges, vec![1, 1]);
            assert_eq!(figures.owned, vec![0..9, 0..9]);
        }
    }

    /// Members whose updates reach each other's vertices: each keeps exactly its owned range's
    /// bits of the union (no more words than that range spans), the union's size is the
    /// whole's, lists and bitmaps agree, and short lists gather in member order.
    #[test]
    fn a_union_keeps_the_owned_range_of_the_whole() {
        let n = 3 * UNION_PIECE_WORDS as u32 * 64 + 77;
        for size in 1..=3 {
            let group = members(size, n);
            let out: Vec<_> = std::thread::scope(|s| {
                let handles: Vec<_> = group
                    .iter()
                    .enumerate()
                    .map(|(rank, m)| {
                        s.spawn(move || {
                            let split = Split::new(Some(m), n);
                            // Every member reaches vertices anywhere, some of them twice.
                            let mine: Vec<u32> = (0..n)
                                .filter(|v| (v % 97) as usize % size == rank || v % 1000 == 0)
                                .rev()
                                .collect();
                            let a = split.union(mine).unwrap();
                            let all = split.all(None, u64::MAX);
                            let hubs = split.all_gather(&[split.owned().start]).unwrap();
                            (split.owned(), a, all, hubs)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let mut seen = Vec::new();
            for (owned, a, all, hubs) in &out {
                let want: Vec<u32> = owned.clone().collect();
                assert_eq!(a.to_list(), want, "every vertex is in the union");
                assert_eq!(a.len(), n as u64);
                assert!(a.held_words() <= owned.len().div_ceil(64) + 1);
                assert_eq!(all.to_list(), want);
                assert_eq!(all.len(), n as u64);
                let starts: Vec<u32> = out.iter().map(|o| o.0.start).collect();
                assert_eq!(hubs, &starts);
                seen.extend(a.to_list());
            }
            assert_eq!(
                seen,
                (0..n).collect::<Vec<_>>(),
                "the parts partition 0..|V|"
            );
        }
    }
}
