//! The state every algorithm of a run shares: the store, the pool, the cancel flag, and the
//! per-iteration statistics PROFILE prints.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use planner::registry::Operator;
use storage::{Direction, GraphStore, IoStats, RemoteTraffic};

use crate::cluster::hubs::{Deal, Reschedule, HUB_DEGREE};
use crate::cluster::Split;
use crate::config::{Progress, RunConfig};
use crate::error::ExecError;
use crate::pool::Pool;
use crate::result::IterationStats;
use crate::state::{Placement, StateValue, VertexArray};
use crate::subset::VertexSubset;

/// Fewest vertices a window of a round's sources spans, whatever `cn_cache`
/// ([`RunContext::source_windows`]): 16 Ki vertices, at most 192 KiB of ids and values.
pub const SOURCE_WINDOW_FLOOR: u32 = 1 << 14;

/// One run: the store it reads, its configuration and workers, and what it has done so far.
pub struct RunContext<'a, S: GraphStore> {
    pub store: &'a S,
    pub cfg: &'a RunConfig,
    pub pool: Pool,
    placement: Placement<'a>,
    started: Instant,
    stats: Mutex<Vec<IterationStats>>,
    /// The operators called so far, as [`Operator::bit`]s.
    operators: AtomicU32,
    /// Split over several members: the hubs dealt out across them.
    reschedule: Reschedule,
    /// An error of a step that could not return it (a collective inside
    /// [`RunContext::frontier_sources`]), returned by the next [`RunContext::finish`].
    deferred: Mutex<Option<ExecError>>,
}

/// Where an iteration started: the store's counters, its remote traffic, and the clock.
#[derive(Debug, Clone, Copy)]
pub struct IterStart {
    io: IoStats,
    remote: RemoteTraffic,
    at: Instant,
}

impl<'a, S: GraphStore> RunContext<'a, S> {
    /// Starts the workers for a run of `cfg` over `store`.
    pub fn new(store: &'a S, cfg: &'a RunConfig) -> Result<Self, ExecError> {
        Ok(RunContext {
            store,
            cfg,
            pool: Pool::new(cfg.threads)?,
            placement: Placement::Local,
            started: Instant::now(),
            stats: Mutex::new(Vec::new()),
            operators: AtomicU32::new(0),
            reschedule: Reschedule::default(),
            deferred: Mutex::new(None),
        })
    }

    /// Decides where the run's per-vertex state lives from the kernel's state size: remote
    /// when the store offers remote memory and the state exceeds its budget. A run over
    /// several compute nodes keeps it remote whatever its size (every member reads and
    /// updates the same arrays), so it needs a store with remote memory.
    pub fn place_state(&mut self, bytes_per_vertex: u64) -> Result<(), ExecError> {
        let memory = self.store.remote_memory();
        self.placement = match (&self.cfg.cluster, memory) {
            (None, _) => Placement::decide(memory, bytes_per_vertex, self.n()),
            (Some(_), Some(memory)) => Placement::Remote(memory),
            (Some(_), None) => {
                return Err(ExecError::Other(
                    "compute_nodes: a run over several compute nodes keeps its state in the memory nodes, and this graph has no remote memory: run it on a DM graph, or SET compute_nodes = '' to run here alone".into(),
                ))
            }
        };
        Ok(())
    }

    /// This member's part of a run over several compute nodes (the whole run otherwise):
    /// what the operators split their work by.
    pub fn split(&self) -> Split<'a> {
        Split::new(self.cfg.cluster.as_ref(), self.n())
    }

    /// The sources this member pushes from in a round from `frontier` along `dirs`, sorted,
    /// and the deal saying which slice of each hub's list is this member's. Without a cluster:
    /// the whole frontier, nothing dealt. Over several members: its owned part plus the hubs
    /// dealt out (a collective once any member's hubs are dealt: every member calls this at
    /// the same points of a round).
    pub fn frontier_sources(
        &self,
        frontier: &VertexSubset,
        dirs: &[Direction],
    ) -> (Vec<u32>, Deal) {
        let split = self.split();
        if !split.is_cluster() {
            let mut list = frontier.to_list();
            if !list.is_sorted() {
                list.sort_unstable();
            }
            return (list, Deal::none());
        }
        let foreign = self.foreign_hubs(frontier, dirs);
        self.window_sources(frontier, dirs, split.owned(), &foreign, true)
    }

    /// The owned range cut into windows of at most [`RunContext::source_window`] vertices
    /// (at least one window, possibly empty), so that a round lists and reads the sources of
    /// one window at a time: a member's memory for a round's sources does not grow with its
    /// owned range.
    pub fn source_windows(&self) -> Vec<std::ops::Range<u32>> {
        let owned = self.split().owned();
        let w = self.source_window();
        let mut out: Vec<std::ops::Range<u32>> = (owned.start..owned.end)
            .step_by(w as usize)
            .map(|a| a..a.saturating_add(w).min(owned.end))
            .collect();
        if out.is_empty() {
            out.push(owned.start..owned.start);
        }
        out
    }

    /// Vertices per window of [`RunContext::source_windows`]: a quarter of `cn_cache` over a
    /// source's bytes (its id and a min-update's value, 12 B), at least
    /// [`SOURCE_WINDOW_FLOOR`] (part of the constant of the bound, docs/DM.md).
    pub fn source_window(&self) -> u32 {
        let per = self.placement.budget() / 4 / 12;
        per.clamp(SOURCE_WINDOW_FLOOR as u64, u32::MAX as u64 / 2) as u32
    }

    /// The hubs of other members' parts of `frontier` dealt out this round, which this member
    /// processes a slice of (sorted, distinct; none unless a member's hubs are dealt). A
    /// collective once any member's hubs are dealt: every member calls this at the same
    /// points of a round. A failed exchange is reported by the iteration's finish.
    pub fn foreign_hubs(&self, frontier: &VertexSubset, dirs: &[Direction]) -> Vec<u32> {
        let split = self.split();
        let dealt = self.reschedule.dealt_ranges();
        if !split.is_cluster() || dealt.is_empty() {
            return Vec::new();
        }
        let owned = split.owned();
        let degree = |v: u32| dirs.iter().map(|&d| self.store.degree(d, v)).sum::<u64>();
        // A member holds only its own part of a split frontier, so the hubs dealt out travel:
        // each member names those of its part (the same rounds on every member, as the deals
        // are the same), a short list.
        let mut own_hubs: Vec<u32> = Vec::new();
        if dealt.contains(&owned) {
            for w in self.source_windows() {
                match frontier.ones_in(w) {
                    Ok(ones) => {
                        own_hubs.extend(ones.into_iter().filter(|&v| degree(v) > HUB_DEGREE))
                    }
                    // Reported when the iteration is recorded; the round's work is void (the
                    // exchange below still runs, so the members' collectives line up).
                    Err(e) => self.defer(e),
                }
            }
        }
        match split.all_gather(&own_hubs) {
            Ok(all) => all.into_iter().filter(|v| !owned.contains(v)).collect(),
            Err(e) => {
                // Reported when the iteration is recorded; the round's work is void.
                self.defer(e);
                Vec::new()
            }
        }
    }

    /// The sources of one window of this member's part of `frontier` (a range inside its
    /// owned range) plus `foreign` (the dealt hubs of [`RunContext::foreign_hubs`], given
    /// with one window only), sorted, and their deal. `note` counts the window's hubs for the
    /// iteration's figures (once per round per window).
    pub fn window_sources(
        &self,
        frontier: &VertexSubset,
        dirs: &[Direction],
        window: std::ops::Range<u32>,
        foreign: &[u32],
        note: bool,
    ) -> (Vec<u32>, Deal) {
        let mine = frontier.ones_in(window).unwrap_or_else(|e| {
            // Reported when the iteration is recorded; the round's work is void.
            self.defer(e);
            Vec::new()
        });
        self.reschedule.sources(
            self.store,
            mine,
            foreign,
            dirs,
            self.split().size_rank(),
            note,
        )
    }

    /// Keeps the first error of a step that cannot return one, for [`RunContext::finish`].
    fn defer(&self, e: ExecError) {
        let mut d = self.deferred.lock().unwrap_or_else(|p| p.into_inner());
        d.get_or_insert(e);
    }

    /// [`RunContext::frontier_sources`] for a round from every vertex, as sorted spans (see
    /// [`crate::collab::sources::Sources`]): a sum over all edges lists no owned vertex.
    pub fn push_spans_all(&self, dirs: &[Direction]) -> (Vec<std::ops::Range<u32>>, Deal) {
        let split = self.split();
        if !split.is_cluster() {
            return (vec![split.owned()], Deal::none());
        }
        self.reschedule
            .all_spans(self.store, split.owned(), dirs, split.size_rank())
    }

    /// Where this run's vertex arrays live.
    pub fn placement(&self) -> Placement<'a> {
        self.placement
    }

    /// A new per-vertex array, every element `fill`, placed as the run decided. Over several
    /// compute nodes this is collective: member 0 allocates, the others attach to it.
    pub fn vertex_array<T: StateValue>(&self, fill: T) -> Result<VertexArray<T>, ExecError> {
        match (&self.cfg.cluster, self.placement) {
            (Some(member), Placement::Remote(memory)) => {
                let mut member = member.clone();
                member.owned = self.split().owned();
                VertexArray::shared(memory, member, self.n(), fill)
            }
            (None, Placement::Remote(memory)) => VertexArray::in_remote(memory, self.n(), fill),
            (_, Placement::Local) => Ok(VertexArray::from_cells(
                self.pool.filled_vec(self.n() as usize, |_| T::cell(fill)),
            )),
        }
    }

    /// `Err(Cancelled)` once the cancel flag is up: call it between iterations and chunks.
    #[inline]
    pub fn check(&self) -> Result<(), ExecError> {
        if self.cfg.cancel.load(Ordering::Relaxed) {
            Err(ExecError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Notes that the kernel called `op` (each operator notes itself when called).
    #[inline]
    pub fn record(&self, op: Operator) {
        self.operators.fetch_or(op.bit(), Ordering::Relaxed);
    }

    /// The operators called so far, in [`Operator::ALL`] order.
    pub fn operators_called(&self) -> Vec<Operator> {
        let bits = self.operators.load(Ordering::Relaxed);
        Operator::ALL
            .into_iter()
            .filter(|op| bits & op.bit() != 0)
            .collect()
    }

    /// Marks the start of an iteration.
    pub fn begin(&self) -> IterStart {
        IterStart {
            io: self.store.io_stats(),
            remote: self.remote_traffic(),
            at: Instant::now(),
        }
    }

    /// The store's remote traffic so far; zero for a store without remote memory.
    fn remote_traffic(&self) -> RemoteTraffic {
        self.store
            .remote_memory()
            .map(|m| m.traffic())
            .unwrap_or_default()
    }

    /// Records a finished iteration (numbered in order of recording), reports progress, and
    /// checks for cancellation.
    pub fn finish(
        &self,
        start: IterStart,
        active: u64,
        edges: u64,
        strategy: &'static str,
        of: Option<u32>,
    ) -> Result<(), ExecError> {
        if let Some(e) = self
            .deferred
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            return Err(e);
        }
        let io = self.store.io_stats().since(&start.io);
        let remote = self.remote_traffic().since(&start.remote);
        let elapsed = start.at.elapsed();
        let (whole_hubs, hubs_dealt) = self.reschedule.take_counts();
        let owned = self.split().owned();
        let all = self.split().gather_iteration([
            elapsed.as_micros().min(u64::MAX as u128) as u64,
            edges,
            remote.round_trips,
            remote.remote_ops,
            remote.bytes_sent,
            whole_hubs,
            owned.start as u64,
            owned.end as u64,
        ])?;
        // Every member holds the same figures, so every member decides the same.
        self.reschedule
            .decide(&all.member_edges, &all.whole_hubs, &all.owned);
        let iteration = {
            let mut stats = self.stats.lock().unwrap_or_else(|p| p.into_inner());
            let iteration = stats.len() as u32;
            stats.push(IterationStats {
                iteration,
                active,
                edges: all.edges,
                strategy,
                blocks_read: io.blocks_read,
                hit_rate: io.hit_rate(),
                bytes_read: io.bytes_read,
                round_trips: all.round_trips,
                remote_ops: all.remote_ops,
                bytes_sent: all.bytes_sent,
                elapsed,
                member_times: all.micros.into_iter().map(Duration::from_micros).collect(),
                member_edges: all.member_edges,
                hubs_dealt,
            });
            iteration
        };
        if let Some(progress) = &self.cfg.progress {
            progress(Progress {
                iteration: iteration + 1,
                of,
                frontier: active,
                elapsed: self.started.elapsed(),
            });
        }
        self.check()
    }

    /// The statistics recorded so far, consuming the context.
    pub fn into_stats(self) -> Vec<IterationStats> {
        self.stats.into_inner().unwrap_or_else(|p| p.into_inner())
    }

    /// |V| of the store.
    pub fn n(&self) -> u32 {
        self.store.shape().vertices
    }
}
