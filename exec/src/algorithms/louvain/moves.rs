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
    fn new(communities: usize) -> Scratch {
        Scratch {
            weight: vec![0.0; communities],
            touched: Vec::new(),
        }
    }
}

/// Where `m` moves given `comm` and `tot`: the neighbouring community of largest modularity
/// gain over staying, the smallest id on a tie, its own when no move gains (networkx's rule,
/// every gain multiplied by `m`). Leaves the communities it looked at, its own first, in
/// `s.touched`, and `s.weight` zero again.
fn choose(m: Mover<'_>, comm: &[u32], tot: &[f64], m2: f64, res: f64, s: &mut Scratch) -> u32 {
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
    let k = m.degree;
    let stay = s.weight[own as usize] - res * (tot[own as usize] - k) * k / m2;
    let mut best = (own, 0.0);
    for &c in &s.touched[1..] {
        let gain = s.weight[c as usize] - res * tot[c as usize] * k / m2 - stay;
        if gain > best.1 || (gain == best.1 && best.0 != own && c < best.0) {
            best = (c, gain);
        }
    }
    for &c in &s.touched {
        s.weight[c as usize] = 0.0;
    }
    best.0
}

/// A proposal of the parallel pass: the move and the communities it looked at.
struct Proposals {
    target: Vec<u32>,
    looked_end: Vec<u32>,
    looked: Vec<u32>,
}

/// Proposals for `movers` over the state as it is, computed on one thread.
fn propose(movers: &[Mover<'_>], state: &MoveState<'_>) -> Proposals {
    let mut s = Scratch::new(state.tot.len());
    let mut p = Proposals {
        target: Vec::with_capacity(movers.len()),
        looked_end: Vec::with_capacity(movers.len()),
        looked: Vec::new(),
    };
    for &m in movers {
        p.target.push(choose(
            m,
            state.comm,
            state.tot,
            state.m2,
            state.resolution,
            &mut s,
        ));
        p.looked.extend_from_slice(&s.touched);
        p.looked_end.push(p.looked.len() as u32);
    }
    p
}

/// Moves `movers` one after another in their order (each vertex at most once in a chunk),
/// using the pool for the proposals; returns the indices into `movers` of those that moved.
pub(crate) fn move_chunk(pool: &Pool, movers: &[Mover<'_>], state: &mut MoveState<'_>) -> Vec<u32> {
    let mut s = Scratch::new(state.tot.len());
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
        for (i, &m) in movers.iter().enumerate() {
            let target = choose(m, state.comm, state.tot, state.m2, state.resolution, &mut s);
            move_one(i, target, state);
        }
        return moved;
    }
    // Communities some vertex of the batch left or joined so far, and the list of them.
    let mut changed = vec![false; state.tot.len()];
    let mut dirty: Vec<u32> = Vec::new();
    for (first, batch) in (0..).step_by(BATCH).zip(movers.chunks(BATCH)) {
        let part = batch.len().div_ceil(pool.threads() * 2);
        let shared: &MoveState<'_> = state;
        let parts: Vec<Proposals> = pool.install(|| {
            batch
                .par_chunks(part)
                .map(|movers| propose(movers, shared))
                .collect()
        });
        let mut i = first;
        for p in &parts {
            let mut start = 0usize;
            for (&proposed, &end) in p.target.iter().zip(&p.looked_end) {
                let end = end as usize;
                let stale = p.looked[start..end].iter().any(|&c| changed[c as usize]);
                start = end;
                let target = if stale {
                    let m = movers[i];
                    choose(m, state.comm, state.tot, state.m2, state.resolution, &mut s)
                } else {
                    proposed
                };
                let own = move_one(i, target, state);
                if target != own {
                    for c in [own, target] {
                        if !changed[c as usize] {
                            changed[c as usize] = true;
                            dirty.push(c);
                        }
                    }
                }
                i += 1;
            }
        }
        for c in dirty.drain(..) {
            changed[c as usize] = false;
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
        choose(mover, comm, tot, 20.0, 1.0, &mut Scratch::new(tot.len()))
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
                move_chunk(&pool, &movers, &mut state);
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
