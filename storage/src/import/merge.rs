//! Phase 2: merges phase 1's sorted runs into distinct edges (duplicates combined by the
//! policy), maps input ids to internal ids, and routes every arc to where it waits for phase 4:
//! a directed graph's out-lists are written as the merge produces them when it comes in
//! internal-id order, every other arc goes to a sorter that orders it again.

use std::path::Path;

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

/// Takes each distinct edge of the merge, maps its ids and routes its arcs.
pub(super) struct ArcRouter<'m, A: ArcRecord> {
    mapper: &'m InternalIds,
    directed: bool,
    weighted: bool,
    arcs: Routed<A>,
    /// Both directions' degrees by key-order id, kept when the vertices are renumbered: they
    /// choose and compute the order.
    degrees: Vec<u32>,
    counts: MergeCounts,
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
                vec![0; n as usize]
            } else {
                Vec::new()
            },
            counts: MergeCounts::default(),
        })
    }

    /// One distinct edge, its duplicates merged: counts it, maps its ids and passes its arcs on.
    #[inline]
    fn edge<E: EdgeRecord>(&mut self, e: E) -> Result<()> {
        let (src, dst, weight) = (e.src(), e.dst(), e.weight());
        self.counts.edges += 1;
        if src == dst {
            self.counts.self_loops_kept += 1;
        }
        if self.weighted && weight < 0.0 {
            self.counts.negative_weights += 1;
        }
        let a = self.mapper.map(src).ok_or_else(|| unknown(src))?;
        let b = self.mapper.map(dst).ok_or_else(|| unknown(dst))?;
        if !self.degrees.is_empty() {
            self.degrees[a as usize] = self.degrees[a as usize].saturating_add(1);
            if a != b || self.directed {
                self.degrees[b as usize] = self.degrees[b as usize].saturating_add(1);
            }
        }
        self.arcs.push(a, b, weight, self.weighted)
    }

    /// The routed arcs, the degrees (empty unless the vertices are renumbered) and the counts.
    pub(super) fn finish(self) -> (Routed<A>, Vec<u32>, MergeCounts) {
        (self.arcs, self.degrees, self.counts)
    }
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
    let mut merged_count = 0u64;
    // The edge being merged with its duplicates.
    let mut pending: Option<E> = None;
    while let Some(e) = merged.next()? {
        merged_count += 1;
        progress.record(ImportPhase::Sorting, merged_count)?;
        if let Some(p) = &mut pending {
            if p.key() == e.key() {
                router.counts.duplicates += 1;
                p.set_weight(policy.combine(p.weight(), e.weight()));
                continue;
            }
        }
        if let Some(p) = pending.replace(e) {
            router.edge(p)?;
        }
    }
    if let Some(p) = pending.take() {
        router.edge(p)?;
    }
    Ok(())
}
