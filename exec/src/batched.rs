//! The remote-state strategy of the operators: a push round whose updates are buffered and
//! sent to the memory nodes in batches (DMG §4.3.2, direct remote update).
//!
//! The frontier is split over the workers; each fetches its lists through the store's batched
//! retrieval and turns every edge into an update in its buffer; a full buffer (or the end of
//! the chunk) is sent as one batched remote operation — per memory node one or more doorbell
//! batches, several in flight — and what the updates changed forms the next frontier. Remote
//! rounds always push: a pull round would read every vertex's remote state.

use rayon::prelude::*;
use storage::{Direction, FetchOrder, GraphStore};

use crate::cluster::hubs::Deal;
use crate::context::RunContext;
use crate::error::ExecError;

/// The name PROFILE prints for a round whose updates went to remote state.
pub const STRATEGY: &str = "remote direct";

/// The lists one batched push round reads.
#[derive(Debug, Clone, Copy)]
pub struct RoundLists<'f> {
    /// The active vertices, sorted, no duplicates.
    pub frontier: &'f [u32],
    /// Every direction is pushed along, in order.
    pub dirs: &'f [Direction],
    pub want_weights: bool,
    /// Updates buffered per worker before they are sent.
    pub buffer_len: usize,
    /// Hubs dealt out across compute nodes: only this member's slice of their lists is pushed.
    pub deal: &'f Deal,
}

/// Fewest entries the list of what a round changed may reach before it is compacted, whatever
/// `cn_cache`: below it compacting would cost more than it saves.
pub const COMPACT_FLOOR: usize = 64 << 10;

/// What a round changed, compacted whenever it reaches its limit, so it grows with the
/// distinct vertices changed, not with the updates (a min-update round reports a vertex
/// once per update that lowered it).
struct Changed<'c, A> {
    items: Vec<A>,
    /// Compact when this many entries are held: at least the first limit, and twice what the
    /// last compaction kept (so compacting stays linear in the updates overall).
    limit: usize,
    compact: &'c (dyn Fn(&mut Vec<A>) + Sync),
}

impl<A> Changed<'_, A> {
    fn extend(&mut self, more: impl IntoIterator<Item = A>) {
        for a in more {
            self.items.push(a);
            if self.items.len() >= self.limit {
                (self.compact)(&mut self.items);
                self.limit = self.limit.max(2 * self.items.len());
            }
        }
    }
}

/// One push round over `lists.frontier` (of a dealt hub, only this member's slice of its
/// list). For each fetched list, `per_src(v)` is evaluated once
/// and `emit(&that, dst, weight)` once per edge; emitted updates are buffered and
/// `flush(buffer)` sends them (and must empty the buffer), returning what they changed.
/// Returns everything changed, in no particular order, and the number of edges examined.
/// What changed is collected in a list that `compact` shrinks (e.g. sorts and keeps one entry
/// per vertex) whenever it reaches `max(buffer_len, COMPACT_FLOOR)` entries or twice what the
/// last compaction kept; `compact` must keep what the caller needs of the entries it drops.
pub fn push<S, P, U, A>(
    ctx: &RunContext<'_, S>,
    lists: RoundLists<'_>,
    per_src: impl Fn(u32) -> P + Sync,
    emit: impl Fn(&P, u32, f64) -> Option<U> + Sync,
    flush: impl Fn(&mut Vec<U>) -> Result<Vec<A>, ExecError> + Sync,
    compact: impl Fn(&mut Vec<A>) + Sync,
) -> Result<(Vec<A>, u64), ExecError>
where
    S: GraphStore,
    U: Send,
    A: Send,
{
    let store = ctx.store;
    let RoundLists {
        frontier,
        dirs,
        want_weights,
        buffer_len,
        deal,
    } = lists;
    let chunk = ctx.pool.chunk_len(frontier.len(), 16, 4096);
    let first_limit = buffer_len.max(COMPACT_FLOOR);
    let changed = || Changed {
        items: Vec::new(),
        limit: first_limit,
        compact: &compact,
    };
    let (all, edges) = ctx.pool.install(|| {
        frontier
            .par_chunks(chunk)
            .map(|chunk| {
                ctx.check()?;
                let mut buf: Vec<U> = Vec::with_capacity(buffer_len);
                let mut out = changed();
                let mut edges = 0u64;
                let mut failed: Option<ExecError> = None;
                for &dir in dirs {
                    store.for_each_list(
                        dir,
                        chunk,
                        FetchOrder::AsGiven,
                        want_weights,
                        |v, ns, ws| {
                            if failed.is_some() {
                                return;
                            }
                            let part = deal.part(v, ns.len());
                            let (first, ns) = (part.start, &ns[part]);
                            edges += ns.len() as u64;
                            let p = per_src(v);
                            for (k, &dst) in ns.iter().enumerate() {
                                let w = ws.and_then(|w| w.get(first + k)).copied().unwrap_or(1.0);
                                if let Some(u) = emit(&p, dst, w) {
                                    buf.push(u);
                                }
                                if buf.len() >= buffer_len {
                                    match flush(&mut buf) {
                                        Ok(a) => out.extend(a),
                                        Err(e) => {
                                            failed = Some(e);
                                            return;
                                        }
                                    }
                                }
                            }
                        },
                    )?;
                    if let Some(e) = failed.take() {
                        return Err(e);
                    }
                }
                if !buf.is_empty() {
                    out.extend(flush(&mut buf)?);
                }
                Ok((out, edges))
            })
            .try_reduce(
                || (changed(), 0),
                |(mut a, x), (b, y)| {
                    a.extend(b.items);
                    Ok((a, x + y))
                },
            )
    })?;
    Ok((all.items, edges))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sort_distinct(v: &mut Vec<u32>) {
        v.sort_unstable();
        v.dedup();
    }

    #[test]
    fn what_changed_grows_with_the_distinct_vertices_not_with_the_updates() {
        let mut c = Changed {
            items: Vec::new(),
            limit: 100,
            compact: &sort_distinct,
        };
        // A million updates to 50 vertices, as a min-update round reports them.
        c.extend((0..1_000_000u32).map(|i| i % 50));
        assert!(c.items.len() < 100, "{} held", c.items.len());
        let mut got = c.items.clone();
        sort_distinct(&mut got);
        assert_eq!(got, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn distinct_changes_beyond_the_limit_are_all_kept() {
        let mut c = Changed {
            items: Vec::new(),
            limit: 100,
            compact: &sort_distinct,
        };
        c.extend((0..10_000u32).rev());
        c.extend(0..10_000u32);
        let mut got = c.items.clone();
        sort_distinct(&mut got);
        assert_eq!(got, (0..10_000).collect::<Vec<_>>());
        assert!(c.items.len() <= 2 * 10_000, "{} held", c.items.len());
    }
}
