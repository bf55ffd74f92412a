//! A small in-memory graph store for tests (of this crate and of crates above it) that does not
//! depend on the storage crate's readers: sorted adjacency lists, a switchable CSR view (so both
//! the slice fast paths and the generic callback paths get exercised), and `edge_block = v / 16`
//! so BlockPush grouping has something to group. It can offer remote memory on two in-process
//! memory nodes ([`VecGraph::with_remote_memory`]), so kernels run with remote state without a
//! DM graph.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use storage::dm::{InProcTransport, MemoryNode, NodeSet, RemoteArray, StatsSnapshot};
use storage::{
    CsrView, Direction, ElementKind, FetchOrder, GraphShape, GraphStore, IoStats, RemoteMemory,
    RemoteTraffic, RemoteVector, StoreError,
};

/// `count` in-process memory nodes of 1 GiB each, numbered from 1.
pub fn memory_nodes(count: u16) -> Vec<Arc<MemoryNode>> {
    (1..=count)
        .map(|id| Arc::new(MemoryNode::new(id, 1 << 30)))
        .collect()
}

/// Remote memory on in-process memory nodes, with a compute-node budget.
struct TestRemoteMemory {
    budget: u64,
    nodes: Arc<dyn NodeSet>,
}

impl std::fmt::Debug for TestRemoteMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TestRemoteMemory {{ budget: {} }}", self.budget)
    }
}

impl RemoteMemory for TestRemoteMemory {
    fn local_budget(&self) -> u64 {
        self.budget
    }

    fn alloc(
        &self,
        len: u64,
        kind: ElementKind,
        fill: u64,
    ) -> Result<Box<dyn RemoteVector>, StoreError> {
        let parts = self.nodes.count() as u64;
        let bounds = (0..=parts).map(|p| len * p / parts).collect();
        Ok(Box::new(RemoteArray::alloc(
            self.nodes.clone(),
            bounds,
            kind,
            fill,
        )?))
    }

    fn attach(&self, descriptor: &[u64]) -> Result<Box<dyn RemoteVector>, StoreError> {
        let parts = self.nodes.count() as u64;
        let len = RemoteArray::described_len(descriptor, parts as usize);
        let bounds: Vec<u64> = (0..=parts).map(|p| len * p / parts).collect();
        Ok(Box::new(RemoteArray::attach(
            self.nodes.clone(),
            &bounds,
            descriptor,
        )?))
    }

    fn traffic(&self) -> RemoteTraffic {
        let s = (0..self.nodes.count())
            .filter_map(|p| self.nodes.node(p))
            .fold(StatsSnapshot::default(), |sum, n| sum.plus(&n.stats()));
        RemoteTraffic {
            round_trips: s.round_trips,
            remote_ops: s.nic_ops(),
            bytes_sent: s.bytes_sent,
        }
    }
}

/// One direction's adjacency in CSR form (no gaps).
#[derive(Debug, Clone, Default)]
struct Adjacency {
    starts: Vec<u64>,
    degrees: Vec<u32>,
    targets: Vec<u32>,
    weights: Option<Vec<f64>>,
    /// [`CsrView::whole_weight_max`], found once when built.
    whole_weight_max: Option<u32>,
}

impl Adjacency {
    fn build(n: usize, arcs: &[(u32, u32, f64)], weighted: bool) -> Adjacency {
        let mut sorted = arcs.to_vec();
        sorted.sort_by_key(|a| (a.0, a.1));
        let mut degrees = vec![0u32; n];
        for a in &sorted {
            degrees[a.0 as usize] += 1;
        }
        let mut starts = Vec::with_capacity(n);
        let mut at = 0u64;
        for &d in &degrees {
            starts.push(at);
            at += d as u64;
        }
        let weights: Option<Vec<f64>> = weighted.then(|| sorted.iter().map(|a| a.2).collect());
        Adjacency {
            starts,
            degrees,
            targets: sorted.iter().map(|a| a.1).collect(),
            whole_weight_max: weights
                .as_deref()
                .map_or(Some(1), storage::weights::whole_max),
            weights,
        }
    }

    fn view(&self) -> CsrView<'_> {
        CsrView {
            starts: &self.starts,
            degrees: &self.degrees,
            targets: &self.targets,
            weights: self.weights.as_deref().map(storage::WeightSlice::Wide),
            whole_weight_max: self.whole_weight_max,
        }
    }
}

/// A graph held in vectors, implementing [`GraphStore`].
#[derive(Debug)]
pub struct VecGraph {
    ids: Vec<u64>,
    index: HashMap<u64, u32>,
    out: Adjacency,
    inn: Adjacency,
    directed: bool,
    edges: u64,
    csr: bool,
    clustered: bool,
    remote: Option<TestRemoteMemory>,
    lists_fetched: AtomicU64,
    blocks_read: AtomicU64,
    bytes_read: AtomicU64,
}

impl VecGraph {
    /// A graph with vertices `input_ids` (internal id = position) and `edges` between input
    /// ids; an undirected edge is listed once and stored both ways. `weights`, when given, runs
    /// parallel to `edges`. Edges naming an unknown vertex are dropped. The CSR view is on.
    pub fn new(
        input_ids: Vec<u64>,
        edges: Vec<(u64, u64)>,
        directed: bool,
        weights: Option<Vec<f64>>,
    ) -> VecGraph {
        let index: HashMap<u64, u32> = input_ids
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i as u32))
            .collect();
        let n = input_ids.len();
        let weighted = weights.is_some();
        let mut out_arcs = Vec::new();
        let mut in_arcs = Vec::new();
        let mut kept = 0u64;
        for (i, &(s, d)) in edges.iter().enumerate() {
            let (Some(&s), Some(&d)) = (index.get(&s), index.get(&d)) else {
                continue;
            };
            let w = weights
                .as_ref()
                .and_then(|w| w.get(i).copied())
                .unwrap_or(1.0);
            kept += 1;
            out_arcs.push((s, d, w));
            in_arcs.push((d, s, w));
            if !directed {
                out_arcs.push((d, s, w));
                in_arcs.push((s, d, w));
            }
        }
        VecGraph {
            ids: input_ids,
            index,
            out: Adjacency::build(n, &out_arcs, weighted),
            inn: Adjacency::build(n, &in_arcs, weighted),
            directed,
            edges: kept,
            csr: true,
            clustered: false,
            remote: None,
            lists_fetched: AtomicU64::new(0),
            blocks_read: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
        }
    }

    /// Turns the CSR view on or off (off: algorithms take their out-of-core paths).
    pub fn with_csr(mut self, on: bool) -> VecGraph {
        self.csr = on;
        self
    }

    /// Says the ids are clustered (`GraphStore::clustered`), its blocks being 16 vertices:
    /// traversals without the CSR view then take their spreading paths.
    pub fn with_clustered(mut self, on: bool) -> VecGraph {
        self.clustered = on;
        self
    }

    /// Offers remote memory on two in-process memory nodes with a compute-node budget of
    /// `budget` bytes: kernels whose state exceeds it keep their state there.
    pub fn with_remote_memory(self, budget: u64) -> VecGraph {
        self.with_memory_nodes(budget, &memory_nodes(2))
    }

    /// Remote memory on `nodes` with a compute-node budget of `budget` bytes: several graphs
    /// over the same nodes are the compute nodes of one run (each with its own connections).
    pub fn with_memory_nodes(mut self, budget: u64, nodes: &[Arc<MemoryNode>]) -> VecGraph {
        let nodes: Vec<InProcTransport> = nodes
            .iter()
            .map(|node| InProcTransport::new(node.clone()))
            .collect();
        self.remote = Some(TestRemoteMemory {
            budget,
            nodes: Arc::new(nodes),
        });
        self
    }

    /// How many lists `for_each_list`/`scan_lists` have delivered so far.
    pub fn lists_fetched(&self) -> u64 {
        self.lists_fetched.load(Ordering::Relaxed)
    }

    fn adj(&self, dir: Direction) -> &Adjacency {
        match dir {
            Direction::Out => &self.out,
            Direction::In => &self.inn,
        }
    }

    fn deliver<F>(&self, dir: Direction, v: u32, want_weights: bool, visit: &mut F)
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        let view = self.adj(dir).view();
        if (v as usize) >= self.ids.len() {
            return;
        }
        let ns = view.neighbours(v);
        let mut scratch = Vec::new();
        let ws = if want_weights {
            view.weights_f64(v, &mut scratch)
        } else {
            None
        };
        self.lists_fetched.fetch_add(1, Ordering::Relaxed);
        self.bytes_read
            .fetch_add(4 * ns.len() as u64, Ordering::Relaxed);
        visit(v, ns, ws);
    }
}

impl GraphStore for VecGraph {
    fn shape(&self) -> GraphShape {
        GraphShape {
            vertices: self.ids.len() as u32,
            arcs: self.out.targets.len() as u64,
            edges: self.edges,
            directed: self.directed,
            weighted: self.out.weights.is_some(),
        }
    }

    fn degree(&self, dir: Direction, v: u32) -> u64 {
        self.adj(dir).degrees.get(v as usize).copied().unwrap_or(0) as u64
    }

    fn input_id(&self, v: u32) -> u64 {
        self.ids.get(v as usize).copied().unwrap_or(u64::MAX)
    }

    fn internal_id(&self, id: u64) -> Option<u32> {
        self.index.get(&id).copied()
    }

    fn for_each_list<F>(
        &self,
        dir: Direction,
        vertices: &[u32],
        order: FetchOrder,
        want_weights: bool,
        mut visit: F,
    ) -> Result<(), StoreError>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        match order {
            FetchOrder::AsGiven => {
                self.blocks_read
                    .fetch_add(vertices.len() as u64, Ordering::Relaxed);
                for &v in vertices {
                    self.deliver(dir, v, want_weights, &mut visit);
                }
            }
            FetchOrder::ByBlock => {
                let mut sorted = vertices.to_vec();
                sorted.sort_by_key(|&v| (self.edge_block(dir, v), v));
                let mut blocks: Vec<u64> =
                    sorted.iter().map(|&v| self.edge_block(dir, v)).collect();
                blocks.dedup();
                self.blocks_read
                    .fetch_add(blocks.len() as u64, Ordering::Relaxed);
                for v in sorted {
                    self.deliver(dir, v, want_weights, &mut visit);
                }
            }
        }
        Ok(())
    }

    fn scan_lists<F>(
        &self,
        dir: Direction,
        range: Range<u32>,
        want_weights: bool,
        mut visit: F,
    ) -> Result<(), StoreError>
    where
        F: FnMut(u32, &[u32], Option<&[f64]>),
    {
        let end = range.end.min(self.ids.len() as u32);
        for v in range.start..end {
            self.deliver(dir, v, want_weights, &mut visit);
        }
        Ok(())
    }

    fn csr(&self, dir: Direction) -> Option<CsrView<'_>> {
        self.csr.then(|| self.adj(dir).view())
    }

    fn edge_block(&self, _dir: Direction, v: u32) -> u64 {
        v as u64 / 16
    }

    fn clustered(&self) -> bool {
        self.clustered
    }

    fn io_stats(&self) -> IoStats {
        let blocks = self.blocks_read.load(Ordering::Relaxed);
        IoStats {
            blocks_read: blocks,
            cache_hits: 0,
            cache_misses: blocks,
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            ..IoStats::default()
        }
    }

    fn describe_reader(&self) -> String {
        format!("test vectors (csr {})", if self.csr { "on" } else { "off" })
    }

    fn remote_memory(&self) -> Option<&dyn RemoteMemory> {
        self.remote.as_ref().map(|m| m as &dyn RemoteMemory)
    }
}
