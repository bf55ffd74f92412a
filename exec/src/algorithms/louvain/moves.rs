//! Local moving of one chunk of vertices, in parallel and with the sequential result.
//!
//! The vertices of a chunk are moved one after another in the chunk's order (networkx's rule,
//! so the partition depends only on the order, drawn from `SEED`). The work is split in two:
//!
//! 1. in parallel, every vertex's best move is computed against the state at the start of its
//!    batch (a fixed number of consecutive vertices of the chunk), with the communities it
//!    looked at (its own and its neighbours');
//! 2. in the chunk's order, each proposal is kept when none of the communities it looked at
//!    changed since the batch's start (no vertex left or joined them), and recomputed over the
//!    current state otherwise; then the move is applied.
//!
//! A vertex's best move depends only on its neighbours' communities and the totals of those
//! communities and its own, so a proposal whose communities are all unchanged is the move the
//! sequential sweep makes: the result is the sequential one whatever the thread count, and
//! only the vertices near earlier moves of the same batch are computed twice.

use rayon::prelude::*;

use crate::pool::Pool;

/// Chunks smaller than this are moved on one thread: splitting them costs more than it saves.
const PARALLEL_MIN: usize = 256;

/// Vertices proposed for at a time: the fewer, the fewer proposals an earlier move of the same
/// batch makes stale, the more often the workers are started.
const BATCH: usize = 1024;

/// The state the moves read and change: per vertex its community, per community its total
/// degree, and the constants of the gain.
pub(crate) struct MoveState<'a> {
    /// Per vertex (the indices the rows' entries use), its community.
    pub comm: &'a mut [u32],
    /// Per community, the sum of its members' degrees.
    pub tot: &'a mut [f64],
    /// Twice the total edge weight.
    pub m2: f64,
    pub resolution: f64,
}

/// One vertex's view for choosing its move: its index, degree and row of
/// `(neighbour, weight)` entries (entries of the vertex itself are skipped).
#[derive(Clone, Copy)]
pub(crate) struct Mover<'r> {
    pub vertex: u32,
    pub degree: f64,
    pub row: &'r [(u32, f64)],
}

/// Per-thread scratch for choosing moves: the weight to each community (dense, zero outside
/// a choice) and the communities touched.
struct Scratch {
    weight: Vec<f64>,
    touched: Vec<u32>,
}

impl Scratch {
    /// Scratch for `communities` ids, growing the weights kept from earlier chunks (they are
    /// zero again after every choice, so they are reused as they are).
    fn fit(&mut self, communities: usize) {
        if self.weight.len() < communities {
            self.weight.resize(communities, 0.0);
        }
    }
}

/// Where `m` moves given `comm` and `tot`: the neighbouring community of largest modularity
/// gain over staying, the smallest id on a tie, its own when no move gains (networkx's rule,
/// every gain multiplied by `m`). Leaves the communities it looked at, its own first, in
/// `s.touched`, and `s.weight` zero again; `keep` receives the weight to each community of
/// `s.touched`, in that order.
fn choose(
    m: Mover<'_>,
    comm: &[u32],
    tot: &[f64],
    m2: f64,
    res: f64,
    s: &mut Scratch,
    keep: Option<&mut Vec<f64>>,
) -> u32 {
    let own = comm[m.vertex as usize];
    s.touched.clear();
    s.touched.push(own);
    // The weights to one community add up in the row's order, as a stable sort would.
    for &(u, w) in m.row {
        if u == m.vertex {
            continue;
        }
        let c = comm[u as usize];
        let slot = &mut s.weight[c as usize];
        // Weights are not negative, so a slot is zero until its community is first seen (a
        // community reached only through zero weights may be listed twice, which is harmless).
        if *slot == 0.0 && c != own {
            s.touched.push(c);
        }
        *slot += w;
    }
    if let Some(keep) = keep {
        keep.extend(s.touched.iter().map(|&c| s.weight[c as usize]));
    }
    let best = best_of(
        m.degree,
        &s.touched,
        |_, c| s.weight[c as usize],
        tot,
        m2,
        res,
    );
    for &c in &s.touched {
        s.weight[c as usize] = 0.0;
    }
    best
}

/// The choice of [`choose`] from the communities looked at (`looked`, the vertex's own first)
/// and the weight to each (`weight` of its position in `looked` and its id), for a vertex of
/// degree `k`, with the totals `tot`.
#[inline]
fn best_of(
    k: f64,
    looked: &[u32],
    weight: impl Fn(usize, u32) -> f64,
    tot: &[f64],
    m2: f64,
    res: f64,
) -> u32 {
    let own = looked[0];
    let stay = weight(0, own) - res * (tot[own as usize] - k) * k / m2;
    let mut best = (own, 0.0);
    for (j, &c) in looked.iter().enumerate().skip(1) {
        let gain = weight(j, c) - res * tot[c as usize] * k / m2 - stay;
        if gain > best.1 || (gain == best.1 && best.0 != own && c < best.0) {
            best = (c, gain);
        }
    }
    best.0
}

/// The proposals of one part of a batch, computed in parallel: per vertex its move, the
/// communities it looked at and the weight to each.
#[derive(Default)]
struct Proposals {
    target: Vec<u32>,
    looked_end: Vec<u32>,
    looked: Vec<u32>,
    weight: Vec<f64>,
}

/// One worker's part of the parallel pass: its scratch and its proposals.
struct Part {
    scratch: Scratch,
    proposals: Proposals,
}

impl Part {
    fn new() -> Part {
        Part {
            scratch: Scratch {
                weight: Vec::new(),
                touched: Vec::new(),
            },
            proposals: Proposals::default(),
        }
    }

    /// Proposals for `movers` over the state as it is.
    fn propose(&mut self, movers: &[Mover<'_>], state: &MoveState<'_>) {
        let (s, p) = (&mut self.scratch, &mut self.proposals);
        s.fit(state.tot.len());
        p.target.clear();
        p.looked_end.clear();
        p.looked.clear();
        p.weight.clear();
        for &m in movers {
            p.target.push(choose(
                m,
                state.comm,
                state.tot,
                state.m2,
                state.resolution,
                s,
                Some(&mut p.weight),
            ));
            p.looked.extend_from_slice(&s.touched);
            p.looked_end.push(p.looked.len() as u32);
        }
    }
}

/// What moving chunks keeps from one chunk to the next so as not to allocate it again: the
/// workers' scratch and proposals, and per community and per vertex the marks of the batch.
pub(crate) struct Workspace {
    parts: Vec<Part>,
    /// Per community, whether some vertex of the batch left or joined it so far.
    changed: Vec<bool>,
    /// The communities marked in `changed`.
    dirty: Vec<u32>,
    /// Per vertex, whether a neighbour of it moved in the batch so far.
    near_move: Vec<bool>,
    /// The vertices marked in `near_move`.
    near: Vec<u32>,
}

impl Workspace {
    pub(crate) fn new() -> Workspace {
        Workspace {
            parts: Vec::new(),
            changed: Vec::new(),
            dirty: Vec::new(),
            near_move: Vec::new(),
            near: Vec::new(),
        }
    }
}

/// Moves `movers` one after another in their order (each vertex at most once in a chunk),
/// using the pool for the proposals; returns the indices into `movers` of those that moved.
///
/// A proposal is taken as it is when none of the communities it looked at changed since the
/// batch's start. When some did but no neighbour of the vertex moved, its neighbours'
/// communities and the weight to each are those of the proposal, and only the totals
/// differ: the choice is made again from the proposal's weights with the current totals,
/// which is what `choose` gives over the current state. Otherwise it is recomputed in full.
pub(crate) fn move_chunk(
    pool: &Pool,
    movers: &[Mover<'_>],
    state: &mut MoveState<'_>,
    ws: &mut Workspace,
) -> Vec<u32> {
    if ws.parts.is_empty() {
        ws.parts.push(Part::new());
    }
    ws.parts[0].scratch.fit(state.tot.len());
    let mut moved = Vec::new();
    let mut move_one = |i: usize, target: u32, state: &mut MoveState<'_>| {
        let m = movers[i];
        let own = state.comm[m.vertex as usize];
        if target != own {
            state.tot[own as usize] -= m.degree;
            state.tot[target as usize] += m.degree;
            state.comm[m.vertex as usize] = target;
            moved.push(i as u32);
        }
        own
    };
    if movers.len() < PARALLEL_MIN || pool.threads() == 1 {
        let s = &mut ws.parts[0].scratch;
        for (i, &m) in movers.iter().enumerate() {
            let target = choose(
                m,
                state.comm,
                state.tot,
                state.m2,
                state.resolution,
                s,
                None,
            );
            move_one(i, target, state);
        }
        return moved;
    }
    let workers = pool.threads() * 2;
    while ws.parts.len() < workers + 1 {
        ws.parts.push(Part::new());
    }
    if ws.changed.len() < state.tot.len() {
        ws.changed.resize(state.tot.len(), false);
    }
    if ws.near_move.len() < state.comm.len() {
        ws.near_move.resize(state.comm.len(), false);
    }
    // The last part's scratch recomputes stale proposals on the calling thread.
    let (parts, own) = ws.parts.split_at_mut(workers);
    let s = &mut own[0].scratch;
    s.fit(state.tot.len());
    let (changed, dirty) = (&mut ws.changed, &mut ws.dirty);
    let (near_move, near) = (&mut ws.near_move, &mut ws.near);
    for (first, batch) in (0..).step_by(BATCH).zip(movers.chunks(BATCH)) {
        let size = batch.len().div_ceil(workers);
        let shared: &MoveState<'_> = state;
        pool.install(|| {
            parts
                .par_iter_mut()
                .zip(batch.par_chunks(size))
                .for_each(|(part, movers)| part.propose(movers, shared))
        });
        let mut i = first;
        for part in parts.iter().take(batch.len().div_ceil(size)) {
            let p = &part.proposals;
            let mut start = 0usize;
            for (&proposed, &end) in p.target.iter().zip(&p.looked_end) {
                let end = end as usize;
                let looked = &p.looked[start..end];
                let stale = looked.iter().any(|&c| changed[c as usize]);
                let m = movers[i];
                let target = if !stale {
                    proposed
                } else if near_move[m.vertex as usize] {
                    choose(
                        m,
                        state.comm,
                        state.tot,
                        state.m2,
                        state.resolution,
                        s,
                        None,
                    )
                } else {
                    let weight = &p.weight[start..end];
                    best_of(
                        m.degree,
                        looked,
                        |j, _| weight[j],
                        state.tot,
                        state.m2,
                        state.resolution,
                    )
                };
                start = end;
                let own = move_one(i, target, state);
                if target != own {
                    for c in [own, target] {
                        if !changed[c as usize] {
                            changed[c as usize] = true;
                            dirty.push(c);
                        }
                    }
                    for &(u, _) in m.row {
                        if !near_move[u as usize] {
                            near_move[u as usize] = true;
                            near.push(u);
                        }
                    }
                }
                i += 1;
            }
        }
        for c in dirty.drain(..) {
            changed[c as usize] = false;
        }
        for u in near.drain(..) {
            near_move[u as usize] = false;
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use base::Xoshiro256;

    use super::*;

    fn chosen(vertex: u32, degree: f64, row: &[(u32, f64)], comm: &[u32], tot: &[f64]) -> u32 {
        let mover = Mover {
            vertex,
            degree,
            row,
        };
        let mut s = Scratch {
            weight: Vec::new(),
            touched: Vec::new(),
        };
        s.fit(tot.len());
        choose(mover, comm, tot, 20.0, 1.0, &mut s, None)
    }

    #[test]
    fn a_vertex_joins_the_community_it_is_tied_to_and_ties_go_to_the_smallest() {
        // Vertex 0 of degree 2 in community 5, linked once to community 7 and once to 3.
        let comm = [5, 7, 3, 5];
        let tot = [2.0; 8];
        assert_eq!(chosen(0, 2.0, &[(1, 1.0), (2, 1.0)], &comm, &tot), 3);
        // Staying is better when its own community holds the links.
        let row = [(3, 1.0), (3, 1.0), (2, 1.0), (0, 4.0)];
        assert_eq!(chosen(0, 3.0, &row, &comm, &[3.0; 8]), 5);
        // No links: stays.
        assert_eq!(chosen(0, 0.0, &[], &comm, &tot), 5);
    }

    /// A random graph of `n` vertices with planted groups of 16, as symmetric rows.
    fn planted(n: u32, seed: u64) -> Vec<Vec<(u32, f64)>> {
        let mut rng = Xoshiro256::new(seed);
        let mut rows = vec![Vec::new(); n as usize];
        for _ in 0..n * 6 {
            let a = rng.below(n as u64) as u32;
            let b = if rng.below(4) == 0 {
                rng.below(n as u64) as u32
            } else {
                (a / 16) * 16 + rng.below(16) as u32 % (n - (a / 16) * 16).min(16)
            };
            let w = 1.0 + rng.below(3) as f64;
            rows[a as usize].push((b, w));
            rows[b as usize].push((a, w));
        }
        rows
    }

    /// Sweeps of `move_chunk` over chunks of `chunk` vertices of one order, on `threads`.
    fn sweep(rows: &[Vec<(u32, f64)>], threads: usize, chunk: usize) -> (Vec<u32>, Vec<f64>) {
        let pool = Pool::new(threads).unwrap();
        let k: Vec<f64> = rows.iter().map(|r| r.iter().map(|e| e.1).sum()).collect();
        let m2: f64 = k.iter().sum();
        let mut comm: Vec<u32> = (0..rows.len() as u32).collect();
        let mut tot = k.clone();
        let mut ws = Workspace::new();
        let mut order: Vec<u32> = (0..rows.len() as u32).collect();
        order.reverse();
        for _ in 0..3 {
            for part in order.chunks(chunk) {
                let movers: Vec<Mover<'_>> = part
                    .iter()
                    .map(|&v| Mover {
                        vertex: v,
                        degree: k[v as usize],
                        row: &rows[v as usize],
                    })
                    .collect();
                let mut state = MoveState {
                    comm: &mut comm,
                    tot: &mut tot,
                    m2,
                    resolution: 1.0,
                };
                move_chunk(&pool, &movers, &mut state, &mut ws);
            }
        }
        (comm, tot)
    }

    #[test]
    fn parallel_proposals_give_the_sequential_moves_whatever_the_threads_and_chunks() {
        let rows = planted(3000, 11);
        // One chunk below the parallel threshold at a time: plainly sequential.
        let sequential = sweep(&rows, 1, 100);
        assert!(
            sequential.0.iter().zip(0..).any(|(&c, v)| c != v),
            "nothing moved"
        );
        for threads in [1, 2, 3] {
            for chunk in [300, 1024, 3000] {
                let got = sweep(&rows, threads, chunk);
                assert_eq!(got.0, sequential.0, "{threads} threads, chunks of {chunk}");
                let bits = |t: &[f64]| t.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&got.1),
                    bits(&sequential.1),
                    "{threads} threads, {chunk}"
                );
            }
        }
    }
}
