//! Builds graph files for the out-of-core tests with the block-file writer, and reads every list
//! back through a store for comparison.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use storage::blockfile::writer::{write_graph_file, GraphFileContents, ListWriter, MAX_OPEN_AGE};
use storage::{Direction, FetchOrder, GraphStore};

/// The project's generator, re-exported for the tests that share this module.
pub use base::Xoshiro256;

/// Adjacency: sorted, de-duplicated lists with weights.
pub type Adj = Vec<Vec<(u32, f64)>>;

/// A random graph of `n` vertices with mostly small lists, some isolated vertices, a few lists
/// of 1000–3000 and `hubs` lists longer than 4096.
pub fn random_adjacency(n: u32, hubs: u32, seed: u64) -> Adj {
    let mut rng = Xoshiro256::new(seed);
    let mut adj: Vec<BTreeMap<u32, f64>> = vec![BTreeMap::new(); n as usize];
    for v in 0..n {
        let deg = match rng.below(100) {
            0..=9 => 0,
            10..=94 => rng.below(40),
            _ => 1000 + rng.below(2000),
        };
        for _ in 0..deg {
            let u = rng.below(n as u64) as u32;
            adj[v as usize].insert(u, (rng.below(1000) as f64) / 8.0 + 0.5);
        }
    }
    for h in 0..hubs {
        let v = rng.below(n as u64) as usize;
        let want = 4100 + rng.below(2000) + h as u64;
        while (adj[v].len() as u64) < want.min(n as u64) {
            let u = rng.below(n as u64) as u32;
            adj[v].insert(u, rng.below(100) as f64 + 0.25);
        }
    }
    adj.into_iter().map(|m| m.into_iter().collect()).collect()
}

/// Makes `adj` symmetric (undirected), weights taken from the smaller endpoint's list.
pub fn symmetrise(adj: &Adj) -> Adj {
    let mut m: Vec<BTreeMap<u32, f64>> = vec![BTreeMap::new(); adj.len()];
    for (v, l) in adj.iter().enumerate() {
        for &(u, w) in l {
            m[v].entry(u).or_insert(w);
            m[u as usize].entry(v as u32).or_insert(w);
        }
    }
    m.into_iter().map(|x| x.into_iter().collect()).collect()
}

pub fn transpose(adj: &Adj) -> Adj {
    let mut t: Adj = vec![Vec::new(); adj.len()];
    for (v, l) in adj.iter().enumerate() {
        for &(u, w) in l {
            t[u as usize].push((v as u32, w));
        }
    }
    t
}

fn write_lists(
    dir: &Path,
    name: &str,
    adj: &Adj,
    weighted: bool,
    max_open_age: u64,
) -> storage::blockfile::writer::WrittenLists {
    let mut w = ListWriter::new(dir, name, adj.len() as u32, weighted)
        .unwrap()
        .with_max_open_age(max_open_age);
    for (v, l) in adj.iter().enumerate() {
        let ns: Vec<u32> = l.iter().map(|x| x.0).collect();
        let ws: Vec<f64> = l.iter().map(|x| x.1).collect();
        w.push(v as u32, &ns, weighted.then_some(&ws[..])).unwrap();
    }
    w.finish().unwrap()
}

/// Writes a graph file: `adj` is the out-adjacency (symmetric when undirected).
pub fn write_graph(dir: &Path, name: &str, adj: &Adj, directed: bool, weighted: bool) -> PathBuf {
    write_graph_packed(dir, name, adj, directed, weighted, MAX_OPEN_AGE)
}

/// [`write_graph`] with the writer keeping open blocks for `max_open_age` blocks.
pub fn write_graph_packed(
    dir: &Path,
    name: &str,
    adj: &Adj,
    directed: bool,
    weighted: bool,
    max_open_age: u64,
) -> PathBuf {
    let out = write_lists(dir, &format!("{name}-out"), adj, weighted, max_open_age);
    let inn = directed.then(|| {
        write_lists(
            dir,
            &format!("{name}-in"),
            &transpose(adj),
            weighted,
            max_open_age,
        )
    });
    let arcs: u64 = adj.iter().map(|l| l.len() as u64).sum();
    let dest = dir.join(format!("{name}.frontier"));
    write_graph_file(
        &dest,
        &GraphFileContents {
            order: storage::blockfile::format::IdOrder::Key,
            identity: storage::blockfile::format::FileIdentity::new(
                name,
                1,
                "test adjacency",
                storage::catalog::StorageKind::Blockfile,
            ),
            // Gapped input ids, so input and internal ids differ.
            ids: (0..adj.len() as u64).map(|i| 10 + 3 * i).collect(),
            keys: None,
            edges: if directed { arcs } else { arcs / 2 },
            directed,
            weighted,
            out,
            inn,
        },
    )
    .unwrap();
    dest
}

/// One visited list.
pub type Seen = BTreeMap<u32, (Vec<u32>, Option<Vec<f64>>)>;

/// Fetches `vertices` through `store`, checking each is visited exactly once.
pub fn fetch<S: GraphStore>(
    store: &S,
    dir: Direction,
    vertices: &[u32],
    order: FetchOrder,
    want_weights: bool,
) -> Seen {
    let mut seen = Seen::new();
    let mut count = 0usize;
    store
        .for_each_list(dir, vertices, order, want_weights, |v, ns, ws| {
            count += 1;
            seen.insert(v, (ns.to_vec(), ws.map(|w| w.to_vec())));
        })
        .unwrap();
    assert_eq!(count, vertices.len(), "every vertex visited exactly once");
    seen
}

/// Visits the lists of everything reachable from `seeds` by spreading calls (each vertex
/// pushed once, when first met; what a call leaves is handed to the next), checking each list
/// is visited once per push.
pub fn spread<S: GraphStore>(store: &S, dir: Direction, seeds: &[u32], want_weights: bool) -> Seen {
    let mut seen = Seen::new();
    let mut met: std::collections::HashSet<u32> = seeds.iter().copied().collect();
    let mut visits = 0usize;
    let mut todo = seeds.to_vec();
    while !todo.is_empty() {
        let mut left = Vec::new();
        store
            .for_each_list_spreading(
                dir,
                &todo,
                want_weights,
                |v, ns, ws, more| {
                    visits += 1;
                    seen.insert(v, (ns.to_vec(), ws.map(|w| w.to_vec())));
                    for &d in ns {
                        if met.insert(d) {
                            more.push(d);
                        }
                    }
                },
                &mut left,
            )
            .unwrap();
        todo = left;
    }
    assert_eq!(
        visits,
        met.len(),
        "every vertex pushed visited exactly once"
    );
    assert_eq!(seen.len(), met.len());
    seen
}

/// Scans `range`, checking the vertex order.
pub fn scan<S: GraphStore>(
    store: &S,
    dir: Direction,
    range: std::ops::Range<u32>,
    want_weights: bool,
) -> Seen {
    let mut seen = Seen::new();
    let mut last: Option<u32> = None;
    store
        .scan_lists(dir, range.clone(), want_weights, |v, ns, ws| {
            assert!(last.is_none_or(|l| l + 1 == v), "scan out of order at {v}");
            last = Some(v);
            seen.insert(v, (ns.to_vec(), ws.map(|w| w.to_vec())));
        })
        .unwrap();
    assert_eq!(seen.len(), range.len());
    seen
}

/// A random subset of `0..n` in random order (distinct).
pub fn random_subset(n: u32, k: usize, rng: &mut Xoshiro256) -> Vec<u32> {
    let mut all: Vec<u32> = (0..n).collect();
    for i in (1..all.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        all.swap(i, j);
    }
    all.truncate(k);
    all
}

/// One pass with `workers` threads sharing the reads ([`GraphStore::scan_all_shared`]),
/// checking each vertex is visited exactly once; `None` when the store has no such pass.
pub fn shared_pass<S: GraphStore + Sync>(
    store: &S,
    dir: Direction,
    want_weights: bool,
    workers: usize,
) -> Option<Seen> {
    let seen = std::sync::Mutex::new(Seen::new());
    let twice = std::sync::atomic::AtomicUsize::new(0);
    let ran = store
        .scan_all_shared(
            dir,
            want_weights,
            &on_threads(workers),
            &|| false,
            &|v, ns, ws| {
                let old = seen
                    .lock()
                    .unwrap()
                    .insert(v, (ns.to_vec(), ws.map(|w| w.to_vec())));
                if old.is_some() {
                    twice.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            },
        )
        .unwrap();
    assert_eq!(twice.into_inner(), 0, "a vertex was visited twice");
    ran.then(|| seen.into_inner().unwrap())
}

/// Runs a shared pass's job on `workers` threads of its own (a pool stand-in).
pub fn on_threads(workers: usize) -> impl Fn(&storage::WorkerJob<'_>) + Sync {
    move |job| {
        std::thread::scope(|s| {
            for w in 0..workers {
                s.spawn(move || job(w));
            }
        })
    }
}
