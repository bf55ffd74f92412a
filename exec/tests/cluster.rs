//! Several compute nodes in one process: N members (threads), each with its own store and
//! connections over the same in-process memory nodes, joined by `LocalCollectives`, each owning
//! a cost-balanced range of tiny chunks. The Graphalytics six run split and member 0 returns
//! the in-memory result (the others return no rows); a member that fails makes every member fail with its reason,
//! without hanging; an algorithm the operators cannot split is refused.

mod common;

use std::sync::Arc;

use common::members::{same_result, GraphData, Split, WrapCollectives};
use common::Lcg;
use exec::algorithms::call;
use exec::testing::{memory_nodes, VecGraph};
use exec::{run, ExecError, ResultTable, RunConfig};
use planner::{AlgoCall, DmUpdate};
use storage::cluster::{split_ranges, Collectives, LocalCollectives, Member};
use storage::{Direction, GraphStore, StoreError};

/// A random graph with weights, a few hubs and a second component.
fn graph_data(n: u64, directed: bool, seed: u64) -> GraphData {
    let ids: Vec<u64> = (0..n).map(|i| 5 + 2 * i).collect();
    let mut rng = Lcg(seed);
    let mut edges = std::collections::BTreeSet::new();
    let main = n - n / 10;
    for _ in 0..n * 4 {
        let (u, v) = (rng.below(main), rng.below(main));
        if u != v {
            edges.insert((u, v));
        }
    }
    for v in 1..main / 3 {
        edges.insert((0, v));
    }
    for u in main..n - 1 {
        edges.insert((u, u + 1));
    }
    if !directed {
        let sym: Vec<_> = edges.iter().map(|&(u, v)| (u.min(v), u.max(v))).collect();
        edges = sym.into_iter().collect();
    }
    let edges: Vec<(u64, u64)> = edges
        .into_iter()
        .map(|(u, v)| (ids[u as usize], ids[v as usize]))
        .collect();
    let weights = (0..edges.len())
        .map(|_| 1.0 + rng.below(9) as f64 / 4.0)
        .collect();
    (ids, edges, weights)
}

fn calls() -> Vec<AlgoCall> {
    vec![
        call("bfs").from(0),
        call("sssp").from(0),
        call("wcc"),
        call("cdlp").with("iter", 4u64),
        call("lcc"),
        call("pagerank").with("iter", 6u64),
        // The kernel's own write (the teleport to the source) is made once, by its owner.
        call("pagerank").with("iter", 4u64).from(3),
        call("pagerank").with("iter", 4u64).with("weights", 1u64),
    ]
}

/// Ranges of about equal `8(p−1)|V_i| + |E_i|` over chunks of 16 vertices.
fn owned_ranges(g: &VecGraph, members: usize) -> Vec<std::ops::Range<u32>> {
    let n = g.shape().vertices;
    let boundaries: Vec<u32> = (0..n).step_by(16).chain([n]).collect();
    let costs: Vec<u64> = boundaries
        .windows(2)
        .map(|w| {
            let edges: u64 = (w[0]..w[1]).map(|v| g.degree(Direction::Out, v)).sum();
            8 * (w[1] - w[0]) as u64 + edges
        })
        .collect();
    split_ranges(&boundaries, &costs, members)
}

/// Runs `c` on `members` threads, each its own graph over `nodes`; `wrap` may replace a
/// member's collectives (to inject a failure). Returns every member's outcome, in rank order.
fn run_split(
    data: &GraphData,
    directed: bool,
    budget: u64,
    members: usize,
    c: &AlgoCall,
    wrap: WrapCollectives,
) -> Vec<Result<ResultTable, ExecError>> {
    run_split_with(data, directed, budget, members, c, wrap, DmUpdate::Auto)
}

/// [`run_split`] with `SET dm_update = dm_update`.
fn run_split_with(
    data: &GraphData,
    directed: bool,
    budget: u64,
    members: usize,
    c: &AlgoCall,
    wrap: WrapCollectives,
    dm_update: DmUpdate,
) -> Vec<Result<ResultTable, ExecError>> {
    let g = VecGraph::new(data.0.clone(), data.1.clone(), directed, None);
    let split = Split {
        data,
        directed,
        budget,
        owned: owned_ranges(&g, members),
        dm_update,
    };
    split.run(c, wrap)
}

/// Member 0 returns the rows; the others return none (they do not read the result back).
fn result_on_member_0(rank: usize, name: &str, got: &ResultTable, want: &ResultTable, what: &str) {
    if rank == 0 {
        same_result(name, got, want, what);
    } else {
        let rows: usize = got.batches.iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows, 0, "{what}: only member 0 returns rows");
    }
}

fn same_everywhere(directed: bool) {
    same_under(directed, DmUpdate::Auto, 1..=3, &[1 << 30, 16]);
}

/// Every call of [`calls`] on `members` members, under `dm_update`, with each `budget`, gives
/// every member the in-memory result.
fn same_under(
    directed: bool,
    dm_update: DmUpdate,
    members: std::ops::RangeInclusive<usize>,
    budgets: &[u64],
) {
    let data = graph_data(700, directed, if directed { 3 } else { 4 });
    let local = VecGraph::new(
        data.0.clone(),
        data.1.clone(),
        directed,
        Some(data.2.clone()),
    );
    for c in calls() {
        let name = c.spec.name;
        let want = run(&local, &c, &RunConfig::with_threads(2)).unwrap();
        for members in members.clone() {
            for &budget in budgets {
                let outcomes =
                    run_split_with(&data, directed, budget, members, &c, &|_, c| c, dm_update);
                for (rank, got) in outcomes.into_iter().enumerate() {
                    let what = format!(
                        "{name}, {members} members, cn_cache {budget}, dm_update {}, member {rank}",
                        dm_update.name()
                    );
                    let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                    result_on_member_0(rank, name, &got, &want, &what);
                    let it = got.iterations.last().expect("iterations are recorded");
                    assert_eq!(it.member_times.len(), members, "{what}");
                    assert_eq!(it.imbalance().is_some(), members > 1, "{what}");
                }
            }
        }
    }
}

/// Collaborative update split over the members: each pushes its updates into the mailboxes
/// of the pieces they fall in, and the owner of each piece applies them.
#[test]
fn split_collaborative_update_gives_the_in_memory_result() {
    for directed in [true, false] {
        for dm_update in [DmUpdate::ValRd, DmUpdate::RefRd] {
            same_under(directed, dm_update, 2..=3, &[16]);
        }
    }
}

/// PROFILE names the strategy each split round used, and ValRD's combining sends fewer remote
/// operations, round trips and bytes than direct updates for the same PageRank (the counts
/// include the kernel's other operators, which both strategies share).
#[test]
fn split_valrd_sends_fewer_remote_operations_than_direct() {
    let data = graph_data(2000, true, 11);
    let c = call("pagerank").with("iter", 3u64);
    let traffic = |dm_update: DmUpdate| -> (u64, u64, u64) {
        let got = run_split_with(&data, true, 16, 2, &c, &|_, c| c, dm_update)
            .remove(0)
            .unwrap();
        let want = match dm_update {
            DmUpdate::Direct => "remote direct",
            _ => "remote valrd",
        };
        let mut ops = 0;
        let mut trips = 0;
        let mut bytes = 0;
        let mut named = 0;
        for it in &got.iterations {
            ops += it.remote_ops;
            trips += it.round_trips;
            bytes += it.bytes_sent;
            named += (it.strategy == want) as usize;
        }
        assert!(named > 0, "{}: {:?}", want, got.iterations);
        (ops, trips, bytes)
    };
    let direct = traffic(DmUpdate::Direct);
    let valrd = traffic(DmUpdate::ValRd);
    assert!(
        valrd.0 * 2 < direct.0 && valrd.1 * 2 < direct.1 && valrd.2 < direct.2,
        "(remote operations, round trips, bytes sent): valrd {valrd:?}, direct {direct:?}"
    );
    assert_eq!(
        traffic(DmUpdate::Auto),
        valrd,
        "auto sends dense PageRank rounds by value"
    );
}

#[test]
fn the_graphalytics_six_give_the_in_memory_result_on_member_0_directed() {
    same_everywhere(true);
}

#[test]
fn the_graphalytics_six_give_the_in_memory_result_on_member_0_undirected() {
    same_everywhere(false);
}

/// Each member examines only its own part of each round: the members' edges add up to those
/// of the same round run by one member, where doing all the work would count them thrice.
#[test]
fn split_rounds_push_directly_and_divide_the_edges() {
    let data = graph_data(700, true, 5);
    let calls = [
        call("pagerank").with("iter", 2u64),
        call("bfs").from(0),
        call("sssp").from(0),
        call("wcc"),
    ];
    for c in &calls {
        let alone = run_split_with(&data, true, 1 << 30, 1, c, &|_, c| c, DmUpdate::Direct)
            .remove(0)
            .unwrap();
        for got in run_split_with(&data, true, 1 << 30, 3, c, &|_, c| c, DmUpdate::Direct) {
            let got = got.unwrap();
            assert_eq!(
                got.iterations.len(),
                alone.iterations.len(),
                "{}",
                c.spec.name
            );
            for (g, w) in got.iterations.iter().zip(&alone.iterations) {
                assert_eq!(g.strategy, "remote direct", "{}", c.spec.name);
                assert_eq!(
                    g.edges, w.edges,
                    "{}: iteration {}",
                    c.spec.name, g.iteration
                );
            }
        }
    }
}

/// Collectives that abort the run on their `after`th call, as a compute node that dies
/// mid-run would.
struct FailingAfter {
    inner: Arc<dyn Collectives>,
    calls: std::sync::atomic::AtomicUsize,
    after: usize,
}

impl FailingAfter {
    fn tick(&self) -> storage::Result<()> {
        let k = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if k == self.after {
            self.inner.abort("compute node 10.0.0.7:9000 died");
            return Err(StoreError::Other(
                "lost its link to the memory nodes".into(),
            ));
        }
        Ok(())
    }
}

impl Collectives for FailingAfter {
    fn size(&self) -> usize {
        self.inner.size()
    }
    fn rank(&self) -> usize {
        self.inner.rank()
    }
    fn barrier(&self) -> storage::Result<()> {
        self.tick()?;
        self.inner.barrier()
    }
    fn sum_f64(&self, x: f64) -> storage::Result<f64> {
        self.tick()?;
        self.inner.sum_f64(x)
    }
    fn sum_u64(&self, x: u64) -> storage::Result<u64> {
        self.tick()?;
        self.inner.sum_u64(x)
    }
    fn gather(&self, x: u64) -> storage::Result<Vec<u64>> {
        self.tick()?;
        self.inner.gather(x)
    }
    fn or_words(&self, words: &mut [u64]) -> storage::Result<()> {
        self.tick()?;
        self.inner.or_words(words)
    }
    fn broadcast(&self, words: Option<&[u64]>) -> storage::Result<Vec<u64>> {
        self.tick()?;
        self.inner.broadcast(words)
    }
    fn abort(&self, reason: &str) {
        self.inner.abort(reason)
    }
}

#[test]
fn one_member_failing_fails_every_member_with_the_reason() {
    let data = graph_data(700, true, 6);
    for c in [call("bfs").from(0), call("pagerank").with("iter", 5u64)] {
        for after in [0, 3, 9] {
            let wrap = move |rank: usize, inner: Arc<dyn Collectives>| -> Arc<dyn Collectives> {
                if rank == 1 {
                    Arc::new(FailingAfter {
                        inner,
                        calls: Default::default(),
                        after,
                    })
                } else {
                    inner
                }
            };
            let outcomes = run_split(&data, true, 16, 3, &c, &wrap);
            for (rank, o) in outcomes.into_iter().enumerate() {
                let e = o.err().unwrap_or_else(|| {
                    panic!(
                        "{}: member {rank} succeeded after member 1 failed",
                        c.spec.name
                    )
                });
                let text = e.to_string();
                assert!(
                    text.contains("10.0.0.7:9000 died") || text.contains("lost its link"),
                    "{}, call {after}, member {rank}: {text}",
                    c.spec.name
                );
            }
        }
    }
}

#[test]
fn an_algorithm_the_operators_cannot_split_is_refused() {
    let data = graph_data(100, true, 7);
    let g = VecGraph::new(data.0, data.1, true, None).with_remote_memory(1 << 30);
    for name in ["kcore", "betweenness", "louvain"] {
        // Fresh collectives per run, as every split call gets: a refusal aborts its run's.
        let cfg = RunConfig {
            cluster: Some(Member {
                collectives: Arc::new(LocalCollectives::group(1).remove(0)),
                owned: 0..100,
            }),
            ..RunConfig::with_threads(1)
        };
        let e = run(&g, &call(name), &cfg).unwrap_err().to_string();
        assert!(
            e.contains(&format!("{name} runs on one compute node")),
            "{e}"
        );
        assert!(e.contains("SET compute_nodes = ''"), "{e}");
    }
    let splits: Vec<&str> = exec::algorithms::REGISTRY
        .iter()
        .filter(|s| s.splits)
        .map(|s| s.name)
        .collect();
    let mut expected = vec!["bfs", "cdlp", "lcc", "pagerank", "sssp", "wcc"];
    let mut got = splits.clone();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
}

#[test]
fn a_split_run_needs_remote_memory() {
    let data = graph_data(100, true, 8);
    let g = VecGraph::new(data.0, data.1, true, None);
    let cfg = RunConfig {
        cluster: Some(Member {
            collectives: Arc::new(LocalCollectives::group(1).remove(0)),
            owned: 0..100,
        }),
        ..RunConfig::with_threads(1)
    };
    let e = run(&g, &call("wcc"), &cfg).unwrap_err().to_string();
    assert!(
        e.contains("compute_nodes") && e.contains("remote memory"),
        "{e}"
    );
}

/// The same on the disaggregated store itself: the graph loaded into two memory nodes, each
/// member opening its own `DmStore` with its own connections to them, arrays shared through
/// `DmStore`'s descriptors.
#[test]
fn members_on_their_own_dm_stores_give_the_in_memory_result() {
    use storage::blockfile::memory::MemoryStore;
    use storage::dm::load::{load, PoolConfig};
    use storage::dm::{spawn_memnode_for_tests, DmOptions, DmStore, InProcConnector, TcpOptions};
    use storage::import::{import, ImportRequest, InputFormat};

    const TOKEN: &str = "exec-cluster-test";
    let tmp = tempfile::tempdir().unwrap();
    let (ids, edges, weights) = graph_data(500, true, 9);
    let mut text = String::new();
    for (&(u, v), w) in edges.iter().zip(&weights) {
        text.push_str(&format!("{u} {v} {w:?}\n"));
    }
    let src = tmp.path().join("g.txt");
    std::fs::write(&src, text).unwrap();
    let vertices = tmp.path().join("v.txt");
    let list: Vec<String> = ids.iter().map(u64::to_string).collect();
    std::fs::write(&vertices, list.join("\n")).unwrap();
    let file = tmp.path().join("g.fgraph");
    let req = ImportRequest {
        source: src,
        format: InputFormat::Edgelist,
        directed: Some(true),
        weighted: true,
        vertices: Some(vertices),
        options: vec![],
        dest: file.clone(),
        memory_budget: 64 << 20,
        threads: 2,
        temp_dir: tmp.path().to_path_buf(),
        identity: storage::blockfile::format::FileIdentity::new(
            "g",
            1,
            "test input",
            storage::catalog::StorageKind::Blockfile,
        ),
    };
    import(
        &req,
        &mut |_| {},
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    let mem = MemoryStore::load(&file).unwrap();
    let a = spawn_memnode_for_tests(1, 64 << 20, TOKEN).unwrap();
    let b = spawn_memnode_for_tests(2, 64 << 20, TOKEN).unwrap();
    let pool = PoolConfig {
        nodes: vec![a.addr().to_string(), b.addr().to_string()],
        token: TOKEN.into(),
        tcp: TcpOptions::default(),
    };
    let layout = load(&mem, &pool, 2).unwrap();
    let loaded = a.node().used() + b.node().used();
    for budget in [1u64 << 30, 16] {
        let opts = DmOptions {
            graph: "g".into(),
            pool: pool.clone(),
            cn_cache: budget,
            threads: 1,
        };
        let members = 3;
        let stores: Vec<_> = (0..members)
            .map(|_| {
                let mut connector = InProcConnector::new();
                connector
                    .add(&pool.nodes[0], a.node().clone())
                    .add(&pool.nodes[1], b.node().clone());
                DmStore::open_with(&file, layout.clone(), &opts, connector).unwrap()
            })
            .collect();
        let n = mem.shape().vertices;
        let ranges = split_ranges(&[0, n / 4, n / 2, n], &[1, 1, 1], members);
        for c in calls() {
            let want = run(&mem, &c, &RunConfig::with_threads(2)).unwrap();
            let group = LocalCollectives::group(members);
            let outcomes: Vec<_> = std::thread::scope(|s| {
                let handles: Vec<_> = group
                    .into_iter()
                    .zip(ranges.clone())
                    .zip(&stores)
                    .map(|((collectives, owned), store)| {
                        let c = &c;
                        s.spawn(move || {
                            let cfg = RunConfig {
                                cluster: Some(Member {
                                    collectives: Arc::new(collectives),
                                    owned,
                                }),
                                ..RunConfig::with_threads(2)
                            };
                            run(store, c, &cfg)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (rank, got) in outcomes.into_iter().enumerate() {
                let what = format!("DM, {}, cn_cache {budget}, member {rank}", c.spec.name);
                let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                result_on_member_0(rank, c.spec.name, &got, &want, &what);
            }
            assert_eq!(
                a.node().used() + b.node().used(),
                loaded,
                "{}: the state arrays are freed",
                c.spec.name
            );
        }
    }
}

/// A member that fails before its first collective (here: its store has no remote memory)
/// still releases the others, who would otherwise wait for it at the first allocation.
#[test]
fn a_member_failing_before_any_collective_releases_the_others() {
    let data = graph_data(200, true, 10);
    let nodes = memory_nodes(2);
    let graphs: Vec<VecGraph> = (0..3)
        .map(|rank| {
            let g = VecGraph::new(data.0.clone(), data.1.clone(), true, None);
            if rank == 2 {
                g
            } else {
                g.with_memory_nodes(1 << 30, &nodes)
            }
        })
        .collect();
    let ranges = owned_ranges(&graphs[0], 3);
    let c = call("wcc");
    let outcomes: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = LocalCollectives::group(3)
            .into_iter()
            .zip(ranges)
            .zip(&graphs)
            .map(|((collectives, owned), g)| {
                let c = &c;
                s.spawn(move || {
                    let cfg = RunConfig {
                        cluster: Some(Member {
                            collectives: Arc::new(collectives),
                            owned,
                        }),
                        ..RunConfig::with_threads(1)
                    };
                    run(g, c, &cfg)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (rank, o) in outcomes.into_iter().enumerate() {
        let e = o.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("no remote memory"), "member {rank}: {e}");
    }
    for n in &nodes {
        assert_eq!(n.used(), 0);
    }
}

/// A round whose changes to other members' vertices fill the list of marks several times over
/// sends them to their owners mid-round (vertex 0 in the first member's range joined to
/// every vertex of the second's, and the second's last vertex to most of the first's):
/// every member still returns the in-memory result, directly and collaboratively.
#[test]
fn changes_beyond_the_list_of_marks_reach_their_owners() {
    use exec::cluster::marks::MARKS_FLOOR;
    let half = 3 * MARKS_FLOOR as u64;
    let n = 2 * half;
    let ids: Vec<u64> = (0..n).map(|i| 7 + 3 * i).collect();
    let mut edges: Vec<(u64, u64)> = (half..n).map(|v| (0, v)).collect();
    edges.extend((2..half).map(|v| (n - 1, v)));
    edges.extend((0..half - 1).step_by(7).map(|v| (v, v + 1)));
    let edges: Vec<(u64, u64)> = edges
        .into_iter()
        .map(|(u, v)| (ids[u as usize], ids[v as usize]))
        .collect();
    let weights: Vec<f64> = (0..edges.len()).map(|i| 1.0 + (i % 5) as f64).collect();
    let data: GraphData = (ids, edges, weights);
    let local = VecGraph::new(data.0.clone(), data.1.clone(), false, Some(data.2.clone()));
    for c in [call("bfs").from(0), call("wcc"), call("sssp").from(0)] {
        let name = c.spec.name;
        let want = run(&local, &c, &RunConfig::with_threads(2)).unwrap();
        for dm_update in [DmUpdate::Direct, DmUpdate::Auto] {
            let split = Split {
                data: &data,
                directed: false,
                budget: 16,
                owned: vec![0..half as u32, half as u32..n as u32],
                dm_update,
            };
            for (rank, got) in split.run(&c, &|_, c| c).into_iter().enumerate() {
                let what = format!("{name}, dm_update {}, member {rank}", dm_update.name());
                let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                result_on_member_0(rank, name, &got, &want, &what);
            }
        }
    }
}
