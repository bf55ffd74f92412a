//! Phase 3, when `LAYOUT` is `degree`, `locality` or `auto`: chooses the vertex order from the
//! degrees phase 2 counted and, unless key order is kept, renames every arc waiting to be
//! sorted and reorders the input ids under the new internal ids.

use super::external_sort::{ArcRecord, Sorter};
use super::layout::{self, Layout};
use super::merge::Routed;
use super::{ImportJob, ImportPhase, Progress};
use crate::blockfile::format::IdOrder;
use crate::error::Result;

/// The vertex order an import writes, why, and the arcs and input ids under it.
pub(super) struct Renumbered<A: ArcRecord> {
    pub(super) routed: Routed<A>,
    /// The input id (for string keys, the key's rank) of each internal vertex.
    pub(super) ids: Vec<u64>,
    pub(super) order: IdOrder,
    pub(super) reason: String,
}

/// Chooses the order (`memory`: what the order's computation may use) and renumbers under it.
pub(super) fn renumber<A: ArcRecord>(
    job: &ImportJob<'_>,
    routed: Routed<A>,
    degrees: Vec<u32>,
    ids: Vec<u64>,
    memory: u64,
    progress: &mut Progress<'_>,
    runs_spilled: &mut u64,
) -> Result<Renumbered<A>> {
    let (order, reason) = if job.layout.renumbers() {
        layout::choose(job.layout, &degrees, memory)?
    } else {
        (IdOrder::Key, "LAYOUT given".to_string())
    };
    if order == IdOrder::Key {
        return Ok(Renumbered {
            routed,
            ids,
            order,
            reason,
        });
    }
    progress.report(ImportPhase::Renumbering, 0);
    let (order, reason, new_id) = if order == IdOrder::Locality {
        locality(
            job.layout,
            &routed,
            &degrees,
            job.directed,
            reason,
            progress,
        )?
    } else {
        (order, reason, None)
    };
    let new_id = new_id.unwrap_or_else(|| layout::degree_order(&degrees));
    drop(degrees);
    let routed = routed.relabel(&new_id, job.directed, progress, runs_spilled)?;
    Ok(Renumbered {
        routed,
        ids: by_new_id(&ids, &new_id),
        order,
        reason,
    })
}

/// Locality order: clusters of neighbours grown over the undirected adjacency (every arc once
/// from each end), unless they turn out too loose to pay (then degree order, and why; no ids).
fn locality<A: ArcRecord>(
    layout: Layout,
    routed: &Routed<A>,
    degrees: &[u32],
    directed: bool,
    reason: String,
    progress: &mut Progress<'_>,
) -> Result<(IdOrder, String, Option<Vec<u32>>)> {
    let mut adj = layout::Adjacency::with_degrees(degrees);
    routed.again.for_each(|a| adj.add(a.from(), a.to()))?;
    if let Some(out) = &routed.out_again {
        out.for_each(|a| adj.add(a.from(), a.to()))?;
    }
    progress.check_cancel()?;
    let capacity = layout::cluster_capacity(directed);
    let (order, reason) = layout::confirm_locality(layout, &adj, degrees, capacity, reason);
    let new_id =
        (order == IdOrder::Locality).then(|| layout::locality_order(&adj, degrees, capacity));
    Ok((order, reason, new_id))
}

impl<A: ArcRecord> Routed<A> {
    /// The arcs waiting to be sorted, renamed under `new_id` (indexed by key-order id).
    fn relabel(
        self,
        new_id: &[u32],
        directed: bool,
        progress: &mut Progress<'_>,
        runs_spilled: &mut u64,
    ) -> Result<Routed<A>> {
        let name = if directed {
            "in-degree-order"
        } else {
            "both-degree-order"
        };
        let again = relabel(self.again, name, new_id, progress, runs_spilled)?;
        let out_again = self
            .out_again
            .map(|s| relabel(s, "out-degree-order", new_id, progress, runs_spilled))
            .transpose()?;
        Ok(Routed {
            again,
            out_again,
            out_written: self.out_written,
        })
    }
}

/// The arcs of `s` renamed under `new_id`, in new runs named `name`.
fn relabel<A: ArcRecord>(
    s: Sorter<A>,
    name: &str,
    new_id: &[u32],
    progress: &mut Progress<'_>,
    runs_spilled: &mut u64,
) -> Result<Sorter<A>> {
    // Arcs that never left memory are renamed where they lie, on the import's threads.
    let mut s = s;
    if s.remap_in_memory(name, |a| {
        A::arc(
            new_id[a.from() as usize],
            new_id[a.to() as usize],
            a.weight(),
        )
    }) {
        progress.report(ImportPhase::Renumbering, s.len());
        progress.check_cancel()?;
        return Ok(s);
    }
    let mut count = 0u64;
    s.remap(name, runs_spilled, |a| {
        count += 1;
        progress.record(ImportPhase::Renumbering, count)?;
        Ok(A::arc(
            new_id[a.from() as usize],
            new_id[a.to() as usize],
            a.weight(),
        ))
    })
}

/// `ids` (indexed by key-order id) indexed by new id instead.
fn by_new_id(ids: &[u64], new_id: &[u32]) -> Vec<u64> {
    let mut by_new = vec![0u64; ids.len()];
    for (rank, &id) in ids.iter().enumerate() {
        by_new[new_id[rank] as usize] = id;
    }
    by_new
}
