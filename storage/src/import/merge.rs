//! Phase 2: merges phase 1's sorted runs into distinct edges (duplicates combined by the
//! policy), maps input ids to internal ids, and routes every arc to where it waits for phase 4:
//! a directed graph's out-lists are written as the merge produces them when it comes in
//! internal-id order, every other arc goes to a sorter that orders it again.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use super::external_sort::{ArcRecord, EdgeRecord, Merged, Sorter};
use super::lists::{ListBuf, ListFiles};
use super::report::DuplicatePolicy;
use super::{ImportJob, ImportPhase, InternalIds, Progress};
use crate::blockfile::writer::ListWriter;
use crate::error::{Result, StoreError};

/// The arcs phase 2 routed, waiting to become lists.
pub(super) struct Routed<A: ArcRecord> {
    /// Arcs to sort again: (dst, src) for a directed graph's in-lists, both directions of every
    /// edge for an undirected graph's (only) lists.
    pub(super) again: Sorter<A>,
    /// A directed graph's out-arcs when they cannot be written as merged: string keys (the
    /// merge comes in temporary-id order) or a renumbering (final ids are known only after it).
    pub(super) out_again: Option<Sorter<A>>,
    /// A directed graph's out-lists written as merged, and the list being assembled.
    pub(super) out_written: Option<(ListWriter, ListBuf)>,
}

/// What the merge counted, for the summary and the report.
#[derive(Default)]
pub(super) struct MergeCounts {
    /// Distinct edges kept.
    pub(super) edges: u64,
    /// Duplicates merged into an edge before them.
    pub(super) duplicates: u64,
    pub(super) self_loops_kept: u64,
    pub(super) negative_weights: u64,
}

impl MergeCounts {
    /// Counts distinct edge `e` and maps its ids: its arc `(a, b, weight)` in internal ids.
    #[inline]
    fn map_edge<E: EdgeRecord>(
        &mut self,
        e: E,
        mapper: &InternalIds,
        weighted: bool,
    ) -> Result<(u32, u32, f64)> {
        let (src, dst, weight) = (e.src(), e.dst(), e.weight());
        self.edges += 1;
        if src == dst {
            self.self_loops_kept += 1;
        }
        if weighted && weight < 0.0 {
            self.negative_weights += 1;
        }
        let a = mapper.map(src).ok_or_else(|| unknown(src))?;
        let b = mapper.map(dst).ok_or_else(|| unknown(dst))?;
        Ok((a, b, weight))
    }
}

/// Takes each distinct edge of the merge, maps its ids and routes its arcs.
pub(super) struct ArcRouter<'m, A: ArcRecord> {
    mapper: &'m InternalIds,
    directed: bool,
    weighted: bool,
    arcs: Routed<A>,
    /// Both directions' degrees by key-order id, kept when the vertices are renumbered: they
    /// choose and compute the order. Atomic, so that workers count them in parallel.
    degrees: Vec<AtomicU32>,
    counts: MergeCounts,
    /// The import's threads: an in-memory merge's edges are mapped and routed on them.
    pool: std::sync::Arc<rayon::ThreadPool>,
}

impl<'m, A: ArcRecord> ArcRouter<'m, A> {
    /// Opens the sorters (and the out-list writer) for `n` vertices. The sorts share half the
    /// budget less what the vertices hold (`resident`), but never less than an eighth of it.
    pub(super) fn new(
        job: &ImportJob<'_>,
        dir: &Path,
        mapper: &'m InternalIds,
        n: u32,
        resident: u64,
    ) -> Result<ArcRouter<'m, A>> {
        let (directed, layout, budget) = (job.directed, job.layout, job.budget);
        let sorter_bytes = (budget / 2).saturating_sub(resident).max(budget / 8) as usize;
        // String keys merge in temporary-id order, not internal-id order, and a renumbering
        // knows the final ids only after the merge: either way a directed graph's out-lists
        // are sorted again too, not written as they come.
        let resort_out =
            directed && (matches!(mapper, InternalIds::Ranks(_)) || layout.renumbers());
        let sorter_bytes = if resort_out {
            sorter_bytes / 2
        } else {
            sorter_bytes
        };
        // Under a renumbering the arcs are collected unsorted and sorted once, renumbered.
        let arcs = |name: &str| {
            if layout.renumbers() {
                Sorter::deferred(dir, name, sorter_bytes, job.read_buffer)
            } else {
                Sorter::new(dir, name, sorter_bytes, false, job.read_buffer)
            }
            .on_pool(&job.pool)
        };
        let again: Sorter<A> = arcs(if directed { "in" } else { "both" });
        let out_again: Option<Sorter<A>> = resort_out.then(|| arcs("out"));
        let files = ListFiles {
            dir,
            n,
            weighted: job.weighted,
        };
        let out_written = if directed && !resort_out {
            Some((files.writer("out")?, ListBuf::default()))
        } else {
            None
        };
        Ok(ArcRouter {
            mapper,
            directed,
            weighted: job.weighted,
            arcs: Routed {
                again,
                out_again,
                out_written,
            },
            degrees: if layout.renumbers() {
                (0..n).map(|_| AtomicU32::new(0)).collect()
            } else {
                Vec::new()
            },
            counts: MergeCounts::default(),
            pool: job.pool.clone(),
        })
    }

    /// One distinct edge, its duplicates merged: counts it, maps its ids and passes its arcs on.
    #[inline]
    fn edge<E: EdgeRecord>(&mut self, e: E) -> Result<()> {
        let (a, b, weight) = self.counts.map_edge(e, self.mapper, self.weighted)?;
        if !self.degrees.is_empty() {
            let d = self.degrees[a as usize].get_mut();
            *d = d.saturating_add(1);
            if a != b || self.directed {
                let d = self.degrees[b as usize].get_mut();
                *d = d.saturating_add(1);
            }
        }
        self.arcs.push(a, b, weight, self.weighted)
    }

    /// The routed arcs, the degrees (empty unless the vertices are renumbered) and the counts.
    pub(super) fn finish(self) -> (Routed<A>, Vec<u32>, MergeCounts) {
        let degrees = self
            .degrees
            .into_iter()
            .map(AtomicU32::into_inner)
            .collect();
        (self.arcs, degrees, self.counts)
    }

    /// What a worker needs to map and route a piece of the merge.
    fn piece_router(&self) -> PieceRouter<'_> {
        PieceRouter {
            mapper: self.mapper,
            directed: self.directed,
            weighted: self.weighted,
            degrees: &self.degrees,
            split_out: self.arcs.out_again.is_some(),
        }
    }
}

/// Maps and routes a piece of an in-memory merge on a worker, as [`ArcRouter::edge`] and
/// [`Routed::push`] do one edge: the arcs are collected in the order they would have been
/// pushed and handed to the sorters in input order afterwards.
struct PieceRouter<'m> {
    mapper: &'m InternalIds,
    directed: bool,
    weighted: bool,
    degrees: &'m [AtomicU32],
    /// A directed graph's out-arcs go to a sorter of their own.
    split_out: bool,
}

/// What a worker made of a piece of an in-memory merge.
struct Piece<A> {
    /// Arcs for [`Routed::again`], and for [`Routed::out_again`] when it is kept.
    again: Vec<A>,
    out: Vec<A>,
    counts: MergeCounts,
    /// The first edge whose id did not map: the piece stops there.
    error: Option<StoreError>,
}

impl PieceRouter<'_> {
    /// Merges the duplicates of `records` (a piece of the merge in reverse order, no key
    /// straddling its ends) and maps and routes the distinct edges.
    fn piece<E: EdgeRecord, A: ArcRecord>(
        &self,
        records: &[E],
        policy: DuplicatePolicy,
    ) -> Piece<A> {
        let mut p = Piece {
            again: Vec::with_capacity(2 * records.len()),
            out: Vec::with_capacity(if self.split_out { records.len() } else { 0 }),
            counts: MergeCounts::default(),
            error: None,
        };
        let mut pending: Option<E> = None;
        for &e in records.iter().rev() {
            if let Some(q) = next_distinct(&mut pending, e, policy, &mut p.counts) {
                if let Err(err) = self.edge(q, &mut p) {
                    p.error = Some(err);
                    return p;
                }
            }
        }
        if let Some(q) = pending {
            if let Err(err) = self.edge(q, &mut p) {
                p.error = Some(err);
            }
        }
        p
    }

    #[inline]
    fn edge<E: EdgeRecord, A: ArcRecord>(&self, e: E, p: &mut Piece<A>) -> Result<()> {
        let (a, b, weight) = p.counts.map_edge(e, self.mapper, self.weighted)?;
        if !self.degrees.is_empty() {
            add_degree(&self.degrees[a as usize]);
            if a != b || self.directed {
                add_degree(&self.degrees[b as usize]);
            }
        }
        if self.split_out {
            p.out.push(A::arc(a, b, weight));
            p.again.push(A::arc(b, a, weight));
        } else {
            p.again.push(A::arc(a, b, weight));
            if a != b {
                p.again.push(A::arc(b, a, weight));
            }
        }
        Ok(())
    }
}

/// One more arc at a vertex, saturating at `u32::MAX` as the sequential count does.
#[inline]
fn add_degree(d: &AtomicU32) {
    let _ = d.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| x.checked_add(1));
}

impl<A: ArcRecord> Routed<A> {
    /// The arcs of edge `a -> b`: an out-arc written at once and an in-arc to sort, both
    /// sorted, or (undirected) both directions to sort for the one adjacency.
    #[inline]
    fn push(&mut self, a: u32, b: u32, weight: f64, weighted: bool) -> Result<()> {
        if let Some((w, list)) = &mut self.out_written {
            list.add(w, a, b, weight, weighted)?;
            self.again.push(A::arc(b, a, weight))
        } else if let Some(out) = &mut self.out_again {
            out.push(A::arc(a, b, weight))?;
            self.again.push(A::arc(b, a, weight))
        } else {
            self.again.push(A::arc(a, b, weight))?;
            if a != b {
                self.again.push(A::arc(b, a, weight))?;
            }
            Ok(())
        }
    }
}

/// Takes the next sorted edge `e`: a duplicate of `pending` is folded into it (its weight
/// combined by `policy`); otherwise `e` becomes pending and the edge it replaces, now complete,
/// is returned.
#[inline]
fn next_distinct<E: EdgeRecord>(
    pending: &mut Option<E>,
    e: E,
    policy: DuplicatePolicy,
    counts: &mut MergeCounts,
) -> Option<E> {
    if let Some(q) = pending {
        if q.key() == e.key() {
            counts.duplicates += 1;
            q.set_weight(policy.combine(q.weight(), e.weight()));
            return None;
        }
    }
    pending.replace(e)
}

fn unknown(id: u64) -> StoreError {
    StoreError::Other(format!("import: vertex {id} missing from the id map"))
}

/// Merges the sorted edges into distinct ones for `router`: equal (src, dst) keys arrive
/// together, in input order, and `policy` combines their weights in that order.
pub(super) fn merge_duplicates<E: EdgeRecord, A: ArcRecord>(
    mut merged: Merged<E>,
    policy: DuplicatePolicy,
    router: &mut ArcRouter<'_, A>,
    progress: &mut Progress<'_>,
) -> Result<()> {
    // Out-lists written as merged are assembled one edge at a time; every other arc goes to a
    // sorter, so a merge held in memory is mapped and routed on the import's threads.
    if router.arcs.out_written.is_none() && merged.in_memory().is_some() {
        return merge_in_memory(merged, policy, router, progress);
    }
    let mut merged_count = 0u64;
    // The edge being merged with its duplicates.
    let mut pending: Option<E> = None;
    while let Some(e) = merged.next()? {
        merged_count += 1;
        progress.record(ImportPhase::Sorting, merged_count)?;
        if let Some(p) = next_distinct(&mut pending, e, policy, &mut router.counts) {
            router.edge(p)?;
        }
    }
    if let Some(p) = pending.take() {
        router.edge(p)?;
    }
    Ok(())
}

/// Records of an in-memory merge taken at a time: their arcs wait in the workers' buffers (a few
/// MiB) before they are handed to the sorters, and the records' memory is given back after.
const ROUND_RECORDS: usize = 1 << 17;

/// Records a worker takes at a time within a round.
const PIECE_RECORDS: usize = 1 << 14;

/// [`merge_duplicates`] of a sort that fit in memory: a round at a time, cut where keys change,
/// pieces of the round are merged, mapped and routed on the import's threads, and their arcs,
/// counts and degrees are those of the one-edge-at-a-time merge (the arcs pushed in the same
/// order, the first error the same).
fn merge_in_memory<E: EdgeRecord, A: ArcRecord>(
    mut merged: Merged<E>,
    policy: DuplicatePolicy,
    router: &mut ArcRouter<'_, A>,
    progress: &mut Progress<'_>,
) -> Result<()> {
    let pool = router.pool.clone();
    let mut merged_count = 0u64;
    while let Some(mem) = merged.in_memory() {
        if mem.is_empty() {
            break;
        }
        // The records come from the end: the round is the tail of `mem`, its start moved down
        // past records of the key it would cut.
        let start = key_cut(mem, mem.len().saturating_sub(ROUND_RECORDS));
        let round = &mem[start..];
        let mut cuts = vec![round.len()];
        while let Some(&hi) = cuts.last() {
            if hi == 0 {
                break;
            }
            cuts.push(key_cut(round, hi.saturating_sub(PIECE_RECORDS)));
        }
        let pieces: Vec<Piece<A>> = {
            let r = router.piece_router();
            pool.install(|| {
                cuts.par_windows(2)
                    .map(|w| r.piece(&round[w[1]..w[0]], policy))
                    .collect()
            })
        };
        let taken = round.len() as u64;
        for p in pieces {
            router.counts.edges += p.counts.edges;
            router.counts.duplicates += p.counts.duplicates;
            router.counts.self_loops_kept += p.counts.self_loops_kept;
            router.counts.negative_weights += p.counts.negative_weights;
            router.arcs.again.extend_from_slice(&p.again)?;
            if let Some(out) = &mut router.arcs.out_again {
                out.extend_from_slice(&p.out)?;
            }
            if let Some(e) = p.error {
                return Err(e);
            }
        }
        merged.consume_in_memory(start);
        // Reports as the record-at-a-time merge does, every REPORT_EVERY records.
        let before = merged_count;
        merged_count += taken;
        let mut at = (before / super::REPORT_EVERY + 1) * super::REPORT_EVERY;
        while at <= merged_count {
            progress.record(ImportPhase::Sorting, at)?;
            at += super::REPORT_EVERY;
        }
    }
    Ok(())
}

/// The first index at or below `at` where the key of `records` changes (records of one key never
/// on both sides of it), or 0.
fn key_cut<E: EdgeRecord>(records: &[E], mut at: usize) -> usize {
    while at > 0 && at < records.len() && records[at - 1].key() == records[at].key() {
        at -= 1;
    }
    at
}
