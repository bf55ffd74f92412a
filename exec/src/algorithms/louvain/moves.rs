//! Local moving of one chunk of vertices: in parallel, with a result that depends only on the
//! chunk's order, not on the thread count.
//!
//! A chunk smaller than `PARALLEL_MIN` is moved one vertex after another (networkx's sweep).
//! A larger one is moved a batch of `BATCH` consecutive vertices at a time, synchronously:
//!
//! 1. in parallel, every vertex of the batch chooses its move against the state at the
//!    batch's start (its neighbours' communities and those communities' totals), noting its
//!    links to its own community and to the one chosen;
//! 2. in the batch's order, each move is applied unless a neighbour of the vertex has already
//!    moved in this batch (its links are then out of date: two neighbours swapping
//!    communities is how synchronous moves oscillate), or the gain, taken again with the
//!    totals as they now are, is no longer positive (many vertices of a batch joining one
//!    hub's community at once).
//!
//! So every move applied raises the modularity by the gain it was applied for, as a move of
//! the sequential sweep does, and the sweeps end; a vertex skipped has a neighbour that moved,
//! so the next sweep visits it again (`active.rs`). Step 2 reads the rows of the vertices that
//! choose to move and no more, on the calling thread; each choice is a function of the batch's
//! starting state and the moves are applied in a fixed order, so the partition is the same
//! whatever the thread count.

use rayon::prelude::*;

use crate::pool::Pool;

/// Chunks smaller than this are moved one vertex after another: splitting them costs more than
/// it saves, and small graphs keep the sequential sweep's result.
const PARALLEL_MIN: usize = 256;

/// Vertices moved synchronously at a time: the more, the fewer times the workers are started,
/// the more moves are chosen against an out-of-date state.
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

/// A vertex's choice: the community it goes to and its links to that community and to its
/// own (without itself).
#[derive(Clone, Copy)]
struct Choice {
    target: u32,
    to_target: f64,
    to_own: f64,
}

/// Where `m` moves given `comm` and `tot`: the neighbouring community of largest modularity
/// gain over staying, the smallest id on a tie, its own when no move gains (networkx's rule,
/// every gain multiplied by `m`). Leaves `s.weight` zero again.
fn choose(m: Mover<'_>, comm: &[u32], tot: &[f64], m2: f64, res: f64, s: &mut Scratch) -> Choice {
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
    let to_own = s.weight[own as usize];
    let stay = to_own - res * (tot[own as usize] - k) * k / m2;
    let mut best = (own, 0.0);
    for &c in &s.touched[1..] {
        let gain = s.weight[c as usize] - res * tot[c as usize] * k / m2 - stay;
        if gain > best.1 || (gain == best.1 && best.0 != own && c < best.0) {
            best = (c, gain);
        }
    }
    let to_target = s.weight[best.0 as usize];
    for &c in &s.touched {
        s.weight[c as usize] = 0.0;
    }
    Choice {
        target: best.0,
        to_target,
        to_own,
    }
}

/// The choices of `movers` against the state as it is, computed on one thread.
fn propose(movers: &[Mover<'_>], state: &MoveState<'_>) -> Vec<Choice> {
    let mut s = Scratch::new(state.tot.len());
    movers
        .iter()
        .map(|&m| choose(m, state.comm, state.tot, state.m2, state.resolution, &mut s))
        .collect()
}

/// Moves `m` to `target` (from its community); returns whether it changed community.
fn apply(m: Mover<'_>, target: u32, state: &mut MoveState<'_>) -> bool {
    let own = state.comm[m.vertex as usize];
    if target == own {
        return false;
    }
    state.tot[own as usize] -= m.degree;
    state.tot[target as usize] += m.degree;
    state.comm[m.vertex as usize] = target;
    true
}

/// Moves `movers` (each vertex at most once in a chunk), one after another when fewer than
/// `PARALLEL_MIN`, else a batch at a time synchronously, using the pool for the choices;
/// returns the indices into `movers` of those that moved.
pub(crate) fn move_chunk(pool: &Pool, movers: &[Mover<'_>], state: &mut MoveState<'_>) -> Vec<u32> {
    let mut moved = Vec::new();
    if movers.len() < PARALLEL_MIN {
        let mut s = Scratch::new(state.tot.len());
        for (i, &m) in movers.iter().enumerate() {
            let c = choose(m, state.comm, state.tot, state.m2, state.resolution, &mut s);
            if apply(m, c.target, state) {
                moved.push(i as u32);
            }
        }
        return moved;
    }
    // Vertices of the batch that moved so far, and the list of them.
    let mut moved_now = vec![false; state.comm.len()];
    let mut dirty: Vec<u32> = Vec::new();
    let (m2, res) = (state.m2, state.resolution);
    for (first, batch) in (0..).step_by(BATCH).zip(movers.chunks(BATCH)) {
        let shared: &MoveState<'_> = state;
        let choices: Vec<Choice> = if pool.threads() == 1 {
            propose(batch, shared)
        } else {
            let part = batch.len().div_ceil(pool.threads() * 2);
            let parts: Vec<Vec<Choice>> = pool.install(|| {
                batch
                    .par_chunks(part)
                    .map(|movers| propose(movers, shared))
                    .collect()
            });
            parts.concat()
        };
        for (i, (&m, c)) in (first..).zip(batch.iter().zip(choices)) {
            let own = state.comm[m.vertex as usize];
            if c.target == own || m.row.iter().any(|&(u, _)| moved_now[u as usize]) {
                continue;
            }
            let k = m.degree;
            let gain = c.to_target
                - res * state.tot[c.target as usize] * k / m2
                - (c.to_own - res * (state.tot[own as usize] - k) * k / m2);
            if gain <= 0.0 {
                continue;
            }
            apply(m, c.target, state);
            moved.push(i as u32);
            moved_now[m.vertex as usize] = true;
            dirty.push(m.vertex);
        }
        for v in dirty.drain(..) {
            moved_now[v as usize] = false;
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
        choose(mover, comm, tot, 20.0, 1.0, &mut Scratch::new(tot.len())).target
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

    /// Thirty sweeps of `move_chunk` over chunks of `chunk` vertices of one order, on `threads`.
    fn sweep(rows: &[Vec<(u32, f64)>], threads: usize, chunk: usize) -> (Vec<u32>, Vec<f64>) {
        let pool = Pool::new(threads).unwrap();
        let k: Vec<f64> = rows.iter().map(|r| r.iter().map(|e| e.1).sum()).collect();
        let m2: f64 = k.iter().sum();
        let mut comm: Vec<u32> = (0..rows.len() as u32).collect();
        let mut tot = k.clone();
        let mut order: Vec<u32> = (0..rows.len() as u32).collect();
        order.reverse();
        for _ in 0..30 {
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

    /// The modularity of `comm` on the graph of `rows`.
    fn modularity(rows: &[Vec<(u32, f64)>], comm: &[u32]) -> f64 {
        let k: Vec<f64> = rows.iter().map(|r| r.iter().map(|e| e.1).sum()).collect();
        let m2: f64 = k.iter().sum();
        let mut tot = vec![0.0; rows.len()];
        let mut inside = 0.0;
        for (v, row) in rows.iter().enumerate() {
            tot[comm[v] as usize] += k[v];
            for &(u, w) in row {
                if comm[u as usize] == comm[v] {
                    inside += w;
                }
            }
        }
        inside / m2 - tot.iter().map(|t| (t / m2) * (t / m2)).sum::<f64>()
    }

    #[test]
    fn synchronous_batches_give_one_partition_whatever_the_threads_and_lose_little() {
        let rows = planted(3000, 11);
        // One chunk below the parallel threshold at a time: plainly sequential. Synchronous
        // moves need more sweeps to settle.
        let sequential = sweep(&rows, 1, 100);
        assert!(
            sequential.0.iter().zip(0..).any(|(&c, v)| c != v),
            "nothing moved"
        );
        let q = modularity(&rows, &sequential.0);
        let bits = |t: &[f64]| t.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for chunk in [300, 1024, 3000] {
            let one = sweep(&rows, 1, chunk);
            assert_ne!(one.0, sequential.0, "chunks of {chunk}: moved one by one");
            for threads in [2, 3] {
                let got = sweep(&rows, threads, chunk);
                assert_eq!(got.0, one.0, "{threads} threads, chunks of {chunk}");
                assert_eq!(bits(&got.1), bits(&one.1), "{threads} threads, {chunk}");
            }
            let synchronous = modularity(&rows, &one.0);
            assert!(
                synchronous >= q - 0.02,
                "chunks of {chunk}: {synchronous} against the sequential {q}"
            );
        }
    }

    #[test]
    fn two_vertices_of_a_batch_do_not_swap_communities() {
        // 300 pairs (2i, 2i+1), each linked by one edge: in one synchronous batch both ends
        // choose the other's community; only the first of each pair in the order moves.
        let n = 600u32;
        let rows: Vec<Vec<(u32, f64)>> = (0..n).map(|v| vec![(v ^ 1, 1.0)]).collect();
        let (comm, _) = sweep(&rows, 2, n as usize);
        // The order is descending, so the odd end of each pair comes first and joins the even.
        for v in (0..n).step_by(2) {
            assert_eq!((comm[v as usize], comm[v as usize + 1]), (v, v), "pair {v}");
        }
    }
}
