//! Leiden communities (Traag, Waltman & van Eck 2019): Louvain's local moving, then a
//! refinement of each community into well-connected sub-communities (`leiden/refine.rs`), then
//! aggregation of the sub-communities into one vertex each, the vertices of the aggregated
//! graph starting in the communities of the moving phase; level after level.
//!
//! The graph optimised, the modularity and the local moving are Louvain's (`louvain.rs`, whose
//! first level, store reading and in-memory levels this file calls): the first level moves
//! over the store with its state in run arrays, and the coarser levels run on the aggregated
//! graph in memory. The refinement is the greedy variant of the paper's: each vertex still
//! alone joins the well-connected sub-community of largest positive gain (ties to the smallest
//! id) rather than one drawn with probability `exp(gain / θ)`; it visits the vertices one after
//! another in the level's order drawn from `SEED`, over the store a chunk of lists at a time on
//! the first level (its state in memory), so the result depends on the seed only, not on the
//! thread count or the store.
//!
//! The levels go on while the aggregated graph shrinks and either the modularity gained more
//! than `TOLERANCE` or the refinement left a community in several pieces. The partition
//! reported is that of the moving phase, each community split into its connected pieces on
//! the last aggregated graph (a split never lowers modularity), so every community is
//! connected whatever stopped the levels.

mod refine;

use base::Xoshiro256;
use planner::registry::{AlgorithmSpec, Operator, Step};
use planner::AlgoCall;
use storage::GraphStore;

use super::louvain::coarse::{renumber, Coarse};
use super::louvain::{self, Communities, Config, Louvain, CHUNK};
use super::Algorithm;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::result::{ResultTable, SummaryValue};
use refine::Refiner;

/// Leiden community detection.
pub struct Leiden;

impl Algorithm for Leiden {
    const SPEC: AlgorithmSpec = AlgorithmSpec {
        name: "leiden",
        summary: "Leiden communities (Louvain with refinement: connected communities), directions ignored",
        semantics: "Leiden community detection (Traag, Waltman & van Eck 2019) over Louvain's local moving: per level, sweeps of local moving as louvain's (order drawn from SEED, at most ITER sweeps), then a refinement of every community: its vertices start alone and, in the level's order, a vertex still alone and well connected to its community (E(v, S−v) ≥ RESOLUTION·k_v·(K_S−k_v)/2m) joins the sub-community of largest positive modularity gain among those well connected likewise (greedy, ties to the smallest id), then the sub-communities become the vertices of a smaller graph, each starting in its community. At most LEVELS levels, while the graph shrinks and a level gains more than TOLERANCE modularity or the refinement split a community. The partition reported is the moving phase's, each community split into its connected pieces: every community is connected. The graph optimised, the modularity and the numbering of the communities are louvain's; the result depends on SEED only, not on THREADS or the store. Reports modularity, levels and communities.",
        example: "RUN leiden SEED 7 ON g ORDER BY community;",
        iter_param: Some("iter"),
        params: louvain::PARAMS,
        columns: louvain::COLUMNS,
        program: &[
            louvain::DEGREES,
            louvain::MOVES,
            Step::call(Operator::ListFetch, "all, in+out, links of each vertex to the rest of its community"),
            Step::call(Operator::ListFetch, "chunks of the SEED order, in+out, a vertex still alone joins the well-connected sub-community of largest gain"),
            Step::call(Operator::ListFetch, "all, in+out, the sub-communities aggregated into a graph in memory"),
            Step::setup("levels 2..LEVELS: local moving, refinement and aggregation on the graph in memory; communities split into connected pieces"),
        ],
        dense: true,
        uses_weights: true,
        needs_nonnegative_weights: true,
        // louvain's run arrays (33), then in memory for the refinement: community, order and
        // sub-community (u32 each), degree, community total, sub-community total, its outer
        // links and a scratch weight (f64 each) and whether alone (a byte)
        state_bytes: 33 + 12 + 40 + 1,
        passes: Some("local moving as louvain's; refinement over chunks of the seeded order, lists fetched a chunk at a time, sequential; coarser levels in memory"),
        summaries: louvain::SUMMARIES,
        ..AlgorithmSpec::BASE
    };
    type Config = Config;
    type Output = Communities;

    fn config(call: &AlgoCall) -> Config {
        Louvain::config(call)
    }

    fn compute<S: GraphStore>(
        ctx: &RunContext<'_, S>,
        cfg: &Config,
    ) -> Result<Communities, ExecError> {
        compute(ctx, cfg)
    }

    fn batches<S: GraphStore>(
        store: &S,
        schema: &arrow_schema::SchemaRef,
        out: &Communities,
    ) -> Result<Vec<arrow_array::RecordBatch>, ExecError> {
        Louvain::batches(store, schema, out)
    }

    fn summaries(out: &Communities) -> Vec<(&'static str, SummaryValue)> {
        Louvain::summaries(out)
    }

    fn verify<S: GraphStore>(store: &S, cfg: &Config, table: &ResultTable) -> Result<(), String> {
        Louvain::verify(store, cfg, table)?;
        super::checks::louvain::connected(store, table)
    }
}

/// Refines `community` (per vertex of a graph of degrees `degree`): one pass noting each
/// vertex's links to its community, then one visiting the vertices in `order`. `rows` calls
/// its closure on each vertex of a chunk with the vertex's row and returns the entries read.
fn refine<R>(
    community: &[u32],
    degree: &[f64],
    m2: f64,
    resolution: f64,
    order: &[u32],
    mut rows: R,
) -> Result<(Vec<u32>, u64), ExecError>
where
    R: FnMut(&[u32], &mut dyn FnMut(u32, &[(u32, f64)])) -> Result<u64, ExecError>,
{
    let mut refiner = Refiner::new(community, degree, m2, resolution);
    let mut entries = 0;
    let all: Vec<u32> = (0..community.len() as u32).collect();
    for chunk in all.chunks(CHUNK) {
        entries += rows(chunk, &mut |v, row| refiner.note(v, row))?;
    }
    for chunk in order.chunks(CHUNK) {
        entries += rows(chunk, &mut |v, row| {
            refiner.visit(v, row);
        })?;
    }
    Ok((refiner.finish(), entries))
}

/// Per vertex of the graph aggregating `node_of` (`count` vertices), the community of its
/// members in `community` (ids renumbered dense), and the number of communities.
fn communities_of_nodes(node_of: &[u32], community: &[u32], count: u32) -> (Vec<u32>, u32) {
    let (dense, communities) = renumber(community);
    let mut of_node = vec![0; count as usize];
    for (&node, &c) in node_of.iter().zip(&dense) {
        of_node[node as usize] = c;
    }
    (of_node, communities)
}

/// Union-find over `0..n` (path halving, the smaller root kept): the pieces the links joined.
pub(crate) struct Pieces {
    parent: Vec<u32>,
}

impl Pieces {
    /// Every element its own piece.
    pub(crate) fn new(n: u32) -> Pieces {
        Pieces {
            parent: (0..n).collect(),
        }
    }

    /// The smallest element of `a`'s piece.
    pub(crate) fn root(&mut self, mut a: u32) -> u32 {
        while self.parent[a as usize] != a {
            let up = self.parent[self.parent[a as usize] as usize];
            self.parent[a as usize] = up;
            a = up;
        }
        a
    }

    /// Joins the pieces of `a` and `b`.
    pub(crate) fn join(&mut self, a: u32, b: u32) {
        let (x, y) = (self.root(a), self.root(b));
        self.parent[x.max(y) as usize] = x.min(y);
    }
}

/// The connected pieces of the communities `community` of `graph`'s vertices: per vertex its
/// piece (dense ids by smallest vertex), and the number of pieces.
fn connected_pieces(graph: &Coarse, community: &[u32]) -> (Vec<u32>, u32) {
    let mut pieces = Pieces::new(graph.len());
    for a in 0..graph.len() {
        for &(b, _) in graph.row(a) {
            if community[a as usize] == community[b as usize] {
                pieces.join(a, b);
            }
        }
    }
    let roots: Vec<u32> = (0..graph.len()).map(|a| pieces.root(a)).collect();
    renumber(&roots)
}

/// The whole run: the first level through the store, the others in memory.
fn compute<S: GraphStore>(ctx: &RunContext<'_, S>, cfg: &Config) -> Result<Communities, ExecError> {
    let n = ctx.n();
    let resolution = cfg.resolution;
    let mut rng = Xoshiro256::new(cfg.seed);
    let first = louvain::first_level(ctx, cfg, &mut rng, true)?;
    let m2 = first.m2;
    let (degree, order) = first.kept.unwrap_or_default();
    let refined = if first.moved_any {
        let start = ctx.begin();
        let (refined, entries) = refine(
            &first.community,
            &degree,
            m2,
            resolution,
            &order,
            |chunk, visit| {
                ctx.check()?;
                let (lists, read) = louvain::neighbourhoods(ctx, chunk)?;
                for (&v, row) in chunk.iter().zip(lists.iter()) {
                    visit(v, row);
                }
                Ok(read)
            },
        )?;
        ctx.finish(start, n as u64, entries, "refine", None)?;
        refined
    } else {
        (0..n).collect()
    };
    drop((degree, order));
    let (mut node_of, count) = renumber(&refined);
    drop(refined);
    let mut graph = louvain::aggregated(ctx, &node_of, count)?;
    let (mut within, mut communities) = communities_of_nodes(&node_of, &first.community, count);
    drop(first.community);

    let q = |graph: &Coarse, partition: &[u32]| {
        if m2 > 0.0 {
            graph.modularity_of(partition, m2, resolution)
        } else {
            0.0
        }
    };
    let mut modularity = q(&graph, &within);
    let mut levels = 1;
    let mut go_on =
        count < n && (modularity - first.singletons > cfg.tolerance || communities < count);
    while go_on && levels < cfg.levels {
        let start = ctx.begin();
        let order = louvain::shuffled(graph.len(), &mut rng);
        let (moved, sweeps) = graph.local_moving(
            &ctx.pool,
            &order,
            within,
            m2,
            resolution,
            cfg.sweeps,
            || ctx.check(),
        )?;
        levels += 1;
        let degree = graph.degrees();
        let (refined, _) = refine(&moved, &degree, m2, resolution, &order, |chunk, visit| {
            for &a in chunk {
                visit(a, graph.row(a));
            }
            Ok(0)
        })?;
        let (node, count) = renumber(&refined);
        let next = graph.aggregate(&ctx.pool, &node, count);
        ctx.finish(
            start,
            graph.len() as u64,
            graph.entries() * (sweeps as u64 + 2),
            "local moves and refinement (in memory)",
            None,
        )?;
        for a in &mut node_of {
            *a = node[*a as usize];
        }
        (within, communities) = communities_of_nodes(&node, &moved, count);
        let gained = q(&next, &within) - modularity;
        modularity += gained;
        go_on = count < graph.len() && (gained > cfg.tolerance || communities < count);
        graph = next;
    }

    let (pieces, count) = connected_pieces(&graph, &within);
    if count != communities {
        modularity = q(&graph, &pieces);
    }
    let per_vertex: Vec<u32> = node_of.iter().map(|&a| pieces[a as usize]).collect();
    Ok(Communities {
        community: louvain::numbered_in_key_order(ctx.store, &per_vertex, count as usize),
        modularity,
        levels,
        count: count as u64,
    })
}
