//! Run-time re-scheduling of hubs across the members of a split run (DMG §4.4.2, carried from
//! a compute node's threads to the compute nodes themselves).
//!
//! Ownership gives each member whole vertices, so a hub's whole edge list is processed by the
//! member that owns it, and on a skewed graph that member is the straggler of every round that
//! reaches the hub. After each iteration every member holds the same gathered figures
//! ([`super::MemberFigures`]); from them all members decide the same thing, with no timing
//! involved: when the busiest member examined more than [`LIMIT`] times the mean of the
//! members' edges and some of its sources were hubs it processed whole (degree over
//! [`HUB_DEGREE`]), its hubs are **dealt out** from the next iteration on: in every push round
//! that has one of them as a source, member `k` of `p` processes slice `k` of the hub's edge
//! list ([`Deal::part`]). The owner keeps the hub's state; only the edge work moves. Updates
//! from the slices compose as every push update already does across members (CAS, FAA, the
//! memory nodes' add, or a collaborative round's mailboxes, never references for a dealt hub).
//!
//! Dealing is monotone: a member whose hubs are dealt stays so for the rest of the run, so at
//! most one decision per member is ever taken.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use storage::{Direction, GraphStore};

/// A vertex whose degree over a round's directions exceeds this is a hub (the paper's 1024).
pub const HUB_DEGREE: u64 = 1024;

/// The busiest member's edges over the members' mean beyond which its hubs are dealt out.
pub const LIMIT: f64 = 1.2;

/// What the operators of one run have dealt out so far, the same on every member.
#[derive(Debug, Default)]
pub struct Reschedule {
    /// The owned ranges of the members whose hubs are dealt out, in the order decided.
    dealt: Mutex<Vec<Range<u32>>>,
    /// Since the last iteration was recorded: hub sources this member processed whole.
    whole_hubs: AtomicU64,
    /// Since the last iteration was recorded: hubs dealt out (the same count on every member).
    dealt_hubs: AtomicU64,
}

/// One round's hubs dealt out over the members, and which slice of each is this member's.
#[derive(Debug, Clone, Default)]
pub struct Deal {
    /// Sorted, distinct.
    hubs: Vec<u32>,
    members: usize,
    rank: usize,
}

impl Deal {
    /// No vertex is dealt out: every list is processed whole.
    pub fn none() -> Deal {
        Deal::default()
    }

    /// True when `v`'s edges are dealt out this round.
    #[inline]
    pub fn is_dealt(&self, v: u32) -> bool {
        !self.hubs.is_empty() && self.hubs.binary_search(&v).is_ok()
    }

    /// The part of `v`'s list of `len` edges this member processes: the whole list, or for a
    /// dealt hub this member's slice (the members' slices partition the list).
    #[inline]
    pub fn part(&self, v: u32, len: usize) -> Range<usize> {
        if !self.is_dealt(v) {
            return 0..len;
        }
        let (p, k) = (self.members.max(1), self.rank);
        len * k / p..len * (k + 1) / p
    }

    /// The hubs dealt out this round.
    pub fn hubs(&self) -> &[u32] {
        &self.hubs
    }
}

impl Reschedule {
    /// The sources of a push round along `dirs`, and its deal: `mine`, the frontier's part in
    /// the member's `owned` range (sorted), plus every hub dealt out this round — the hubs of
    /// `mine` in a dealt range and the hubs of `foreign`, the frontier's vertices in the other
    /// members' dealt ranges (sorted, distinct). Counts the hubs for the iteration's figures
    /// when `note` (a round that lists its sources twice counts them once).
    pub fn sources<S: GraphStore>(
        &self,
        store: &S,
        mine: Vec<u32>,
        foreign: &[u32],
        dirs: &[Direction],
        (members, rank): (usize, usize),
        note: bool,
    ) -> (Vec<u32>, Deal) {
        let degree = |v: u32| dirs.iter().map(|&d| store.degree(d, v)).sum::<u64>();
        let dealt = self.dealt_ranges();
        let in_dealt = |v: &u32| dealt.iter().any(|r| r.contains(v));
        let hubs: Vec<u32> = mine
            .iter()
            .copied()
            .filter(in_dealt)
            .chain(foreign.iter().copied())
            .filter(|&v| degree(v) > HUB_DEGREE)
            .collect();
        if note {
            self.note(&mine, &hubs, &degree);
        }
        self.assemble(mine, hubs, members, rank)
    }

    /// [`Reschedule::sources`] for a round whose sources are every vertex (a sum over all
    /// edges), as spans: `owned` plus each dealt hub of the other members as a span of one, so
    /// nothing is listed per owned vertex.
    pub fn all_spans<S: GraphStore>(
        &self,
        store: &S,
        owned: Range<u32>,
        dirs: &[Direction],
        (members, rank): (usize, usize),
    ) -> (Vec<Range<u32>>, Deal) {
        let degree = |v: u32| dirs.iter().map(|&d| store.degree(d, v)).sum::<u64>();
        let mut hubs = Vec::new();
        for r in self.dealt_ranges() {
            hubs.extend(r.filter(|&v| degree(v) > HUB_DEGREE));
        }
        hubs.sort_unstable();
        hubs.dedup();
        let whole = owned
            .clone()
            .filter(|&v| degree(v) > HUB_DEGREE && hubs.binary_search(&v).is_err())
            .count() as u64;
        self.whole_hubs.fetch_add(whole, Ordering::Relaxed);
        self.dealt_hubs
            .fetch_add(hubs.len() as u64, Ordering::Relaxed);
        let mut spans = vec![owned.clone()];
        spans.extend(
            hubs.iter()
                .filter(|v| !owned.contains(v))
                .map(|&v| v..v + 1),
        );
        let deal = Deal {
            hubs,
            members,
            rank,
        };
        (spans, deal)
    }

    fn assemble(
        &self,
        mine: Vec<u32>,
        mut hubs: Vec<u32>,
        members: usize,
        rank: usize,
    ) -> (Vec<u32>, Deal) {
        hubs.sort_unstable();
        hubs.dedup();
        let mut sources = mine;
        sources.extend(&hubs);
        sources.sort_unstable();
        sources.dedup();
        let deal = Deal {
            hubs,
            members,
            rank,
        };
        (sources, deal)
    }

    /// Counts the round's hubs: those of `mine` processed whole, and those dealt out.
    fn note(&self, mine: &[u32], hubs: &[u32], degree: &impl Fn(u32) -> u64) {
        let whole = mine
            .iter()
            .filter(|&&v| degree(v) > HUB_DEGREE && hubs.binary_search(&v).is_err())
            .count() as u64;
        self.whole_hubs.fetch_add(whole, Ordering::Relaxed);
        self.dealt_hubs
            .fetch_add(hubs.len() as u64, Ordering::Relaxed);
    }

    /// The owned ranges of the members whose hubs are dealt out so far.
    pub(crate) fn dealt_ranges(&self) -> Vec<Range<u32>> {
        self.dealt.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Takes the iteration's counts (hubs processed whole by this member, hubs dealt out),
    /// starting the next iteration's at zero.
    pub fn take_counts(&self) -> (u64, u64) {
        (
            self.whole_hubs.swap(0, Ordering::Relaxed),
            self.dealt_hubs.swap(0, Ordering::Relaxed),
        )
    }

    /// Applies the rule to an iteration's gathered figures: deals out the straggler's hubs
    /// from the next iteration on. Returns the member whose hubs were dealt, if any.
    pub fn decide(&self, edges: &[u64], whole_hubs: &[u64], owned: &[Range<u32>]) -> Option<usize> {
        let b = straggler(edges, whole_hubs)?;
        let range = owned.get(b)?.clone();
        let mut dealt = self.dealt.lock().unwrap_or_else(|p| p.into_inner());
        if dealt.contains(&range) {
            return None;
        }
        dealt.push(range);
        Some(b)
    }
}

/// The member whose hubs should be dealt out after an iteration where the members examined
/// `edges` and processed `whole_hubs` hubs whole: the busiest (the first of equals), when it
/// examined more than [`LIMIT`] times the mean and had hubs of its own.
pub fn straggler(edges: &[u64], whole_hubs: &[u64]) -> Option<usize> {
    if edges.len() < 2 {
        return None;
    }
    let total: u128 = edges.iter().map(|&e| e as u128).sum();
    let (b, &most) = edges
        .iter()
        .enumerate()
        .max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(&x.0)))?;
    // most > LIMIT · total / p, in integers: 5 · most · p > 6 · total.
    let over = 5 * most as u128 * edges.len() as u128 > 6 * total;
    (over && whole_hubs.get(b).copied().unwrap_or(0) > 0).then_some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busiest_member_with_hubs_is_the_straggler() {
        assert_eq!(straggler(&[4333, 1667], &[2, 0]), Some(0));
        assert_eq!(straggler(&[1667, 4333], &[2, 0]), None, "no hub of its own");
        assert_eq!(straggler(&[1100, 1000], &[3, 3]), None, "within the limit");
        assert_eq!(straggler(&[5000], &[3]), None, "one member");
        assert_eq!(straggler(&[0, 0, 0], &[0, 0, 0]), None);
        assert_eq!(
            straggler(&[20, 30, 30], &[1, 1, 1]),
            None,
            "30 < 1.2 · 80/3"
        );
        assert_eq!(
            straggler(&[10, 40, 40], &[1, 0, 1]),
            None,
            "the first of equals"
        );
    }

    #[test]
    fn slices_partition_a_dealt_list_and_leave_others_whole() {
        for members in 1..=5 {
            let mut covered = Vec::new();
            for rank in 0..members {
                let deal = Deal {
                    hubs: vec![3, 9],
                    members,
                    rank,
                };
                assert_eq!(deal.part(4, 100), 0..100);
                covered.extend(deal.part(9, 1037));
            }
            assert_eq!(covered, (0..1037).collect::<Vec<_>>());
        }
        assert_eq!(Deal::none().part(3, 7), 0..7);
    }

    #[test]
    fn a_member_is_dealt_out_once() {
        let r = Reschedule::default();
        let owned = [0..10, 10..20];
        assert_eq!(r.decide(&[90, 10], &[1, 0], &owned), Some(0));
        assert_eq!(r.decide(&[90, 10], &[1, 0], &owned), None);
        assert_eq!(r.dealt_ranges(), vec![0..10]);
    }
}
