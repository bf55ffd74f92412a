//! Several compute nodes in one process, for the cluster tests: members as threads, each with
//! its own store and connections over the same in-process memory nodes, joined by
//! `LocalCollectives`; and the comparison of a member's result with the in-memory one.

use std::ops::Range;
use std::sync::Arc;

use exec::testing::{memory_nodes, VecGraph};
use exec::{run, ExecError, ResultTable, RunConfig};
use planner::{AlgoCall, DmUpdate};
use storage::cluster::{Collectives, LocalCollectives, Member};
use storage::dm::MemoryNode;

use super::{f64_col, i64_col, u64_col};

/// Input ids, edges and weights of a test graph.
pub type GraphData = (Vec<u64>, Vec<(u64, u64)>, Vec<f64>);

/// Wraps a member's collectives (by rank), e.g. to inject a failure.
pub type WrapCollectives<'a> =
    &'a (dyn Fn(usize, Arc<dyn Collectives>) -> Arc<dyn Collectives> + Sync);

/// One split run: the graph, where its state lives and how the members divide it.
pub struct Split<'a> {
    pub data: &'a GraphData,
    pub directed: bool,
    /// Each member's `cn_cache`.
    pub budget: u64,
    /// The member of each rank owns `owned[rank]`.
    pub owned: Vec<Range<u32>>,
    pub dm_update: DmUpdate,
}

impl Split<'_> {
    /// The graph as one member sees it, over `nodes`.
    fn graph(&self, nodes: &[Arc<MemoryNode>]) -> VecGraph {
        VecGraph::new(
            self.data.0.clone(),
            self.data.1.clone(),
            self.directed,
            Some(self.data.2.clone()),
        )
        .with_memory_nodes(self.budget, nodes)
    }

    /// Runs `c` on one thread per member over two fresh memory nodes; every member's outcome,
    /// in rank order. Checks that the run freed every remote array.
    pub fn run(&self, c: &AlgoCall, wrap: WrapCollectives) -> Vec<Result<ResultTable, ExecError>> {
        let nodes: Vec<Arc<MemoryNode>> = memory_nodes(2);
        let members = self.owned.len();
        let graphs: Vec<VecGraph> = (0..members).map(|_| self.graph(&nodes)).collect();
        let group = LocalCollectives::group(members);
        let outcomes = std::thread::scope(|s| {
            let handles: Vec<_> = group
                .into_iter()
                .zip(self.owned.iter().cloned())
                .zip(&graphs)
                .enumerate()
                .map(|(rank, ((collectives, owned), g))| {
                    let collectives = wrap(rank, Arc::new(collectives));
                    s.spawn(move || {
                        let cfg = RunConfig {
                            cluster: Some(Member { collectives, owned }),
                            dm_update: self.dm_update,
                            ..RunConfig::with_threads(2)
                        };
                        run(g, c, &cfg)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a member panicked"))
                .collect()
        });
        for n in &nodes {
            assert_eq!(n.used(), 0, "every array is freed once the run ends");
        }
        outcomes
    }
}

/// Asserts that `got` is the in-memory result `want` of algorithm `name` (PageRank within
/// floating-point summation order).
pub fn same_result(name: &str, got: &ResultTable, want: &ResultTable, what: &str) {
    match name {
        "bfs" => assert_eq!(i64_col(got, "depth"), i64_col(want, "depth"), "{what}"),
        "wcc" => assert_eq!(
            u64_col(got, "component"),
            u64_col(want, "component"),
            "{what}"
        ),
        "cdlp" => assert_eq!(u64_col(got, "label"), u64_col(want, "label"), "{what}"),
        "sssp" => assert_eq!(
            f64_col(got, "distance"),
            f64_col(want, "distance"),
            "{what}"
        ),
        "lcc" => assert_eq!(
            f64_col(got, "coefficient"),
            f64_col(want, "coefficient"),
            "{what}"
        ),
        "pagerank" => {
            for (i, (a, b)) in f64_col(got, "rank")
                .iter()
                .zip(f64_col(want, "rank"))
                .enumerate()
            {
                let (a, b) = (a.unwrap(), b.unwrap());
                assert!(
                    (a - b).abs() <= 1e-12 + 1e-9 * b.abs(),
                    "{what}: vertex {i}: {a} vs {b}"
                );
            }
        }
        other => panic!("no comparison for {other}"),
    }
}
