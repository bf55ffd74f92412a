//! `LAYOUT auto|key|degree|locality`: the order of internal ids, and so of the lists in the
//! block file and of the per-vertex values of every run.
//!
//! - `key`: internal id = rank of the input id (or string key).
//! - `degree`: vertices grouped by degree bucket (bucket `b` holds degrees in `[2^(b-1), 2^b)`,
//!   bucket 0 the isolated vertices), the bucket of the largest degrees first, key order within
//!   each bucket: degree-based grouping (Faldu et al., "A Closer Look at Lightweight Graph
//!   Reordering", 2019). The hubs' lists and per-vertex values then share a few blocks and cache
//!   lines, and the low-degree tail, which a bottom-up traversal's late levels still want, is
//!   packed at the end of the file instead of spread over every block. Key order within a bucket
//!   keeps the id map a few ascending runs, so it still packs and is still searched by bisection.
//! - `locality`: vertices grouped in clusters of neighbours, each grown greedily (the candidate
//!   with the most links into the cluster first) until its lists fill about one edge block,
//!   each cluster seeded next to the one before, key order within a cluster. A traversal of a graph without hubs (a road network, a mesh) then
//!   finds a vertex's neighbours in its own block and its own cache lines, and a level's
//!   frontier, a thin band of the graph, in a few neighbouring blocks. Each cluster is one
//!   ascending run of the id map.
//! - `auto` (the default): `degree` when the degrees are skewed (a tenth of the vertices hold
//!   more than [`SKEWED_SHARE`] of the arcs: hubs dominate every access); otherwise `locality`
//!   when its adjacency fits the import's memory and the graph has locality to keep (clusters
//!   grown from a sample of seeds keep at least [`MIN_COHESION`] of their arcs inside: a mesh
//!   or road network does, a uniform random graph does not), else `degree`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet, VecDeque};

use crate::blockfile::format::{IdOrder, SLOTS_PER_BLOCK};
use crate::error::{Result, StoreError};

/// The `LAYOUT` an import was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Chosen from the degrees once they are known ([`choose`]).
    Auto,
    /// This order, whatever the graph.
    Forced(IdOrder),
}

impl Layout {
    /// The `LAYOUT` option of an import (the last one given wins); `auto` when absent.
    pub(crate) fn from_options(options: &[(String, String)]) -> Result<Layout> {
        let mut layout = Layout::Auto;
        for (k, v) in options {
            if !k.eq_ignore_ascii_case("layout") {
                continue;
            }
            layout = match v.to_ascii_lowercase().as_str() {
                "auto" => Layout::Auto,
                "key" => Layout::Forced(IdOrder::Key),
                "degree" => Layout::Forced(IdOrder::Degree),
                "locality" => Layout::Forced(IdOrder::Locality),
                _ => {
                    return Err(StoreError::Other(format!(
                        "LAYOUT must be auto, key, degree or locality, found `{v}`"
                    )))
                }
            };
        }
        Ok(layout)
    }

    /// Whether vertices are renumbered after the merge (so their degrees must be counted).
    pub(crate) fn renumbers(self) -> bool {
        self != Layout::Forced(IdOrder::Key)
    }
}

/// The share of all arcs the tenth of the vertices with the largest degrees must exceed for the
/// degrees to count as skewed: three times their share of the vertices. A uniform random graph
/// (Poisson degrees) or a grid gives 0.12–0.14, R-MAT and social graphs 0.5 and more.
pub const SKEWED_SHARE: f64 = 0.3;

/// The share of the arcs held by the tenth of the vertices with the largest degrees
/// (`degrees` counts both directions).
pub fn top_tenth_share(degrees: &[u32]) -> f64 {
    let total: u64 = degrees.iter().map(|&d| d as u64).sum();
    if total == 0 {
        return 0.0;
    }
    let k = degrees.len().div_ceil(10);
    let mut copy = degrees.to_vec();
    let (top, nth, _) = copy.select_nth_unstable_by(k - 1, |a, b| b.cmp(a));
    let top: u64 = top.iter().map(|&d| d as u64).sum::<u64>() + *nth as u64;
    top as f64 / total as f64
}

/// Bytes [`locality_order`] holds for a graph of `n` vertices and `arcs` arcs counted in both
/// directions: the adjacency (offsets and neighbours) and four per-vertex arrays.
pub fn locality_bytes(n: u64, arcs: u64) -> u64 {
    4 * (n + 1) + 4 * arcs + 16 * n
}

/// The order an import writes and why, from the request and the graph's degrees (both
/// directions); `memory` is what the import may still hold for [`locality_order`].
pub fn choose(layout: Layout, degrees: &[u32], memory: u64) -> Result<(IdOrder, String)> {
    let n = degrees.len() as u64;
    let arcs: u64 = degrees.iter().map(|&d| d as u64).sum();
    let need = locality_bytes(n, arcs);
    match layout {
        Layout::Forced(IdOrder::Locality) if need > memory => Err(StoreError::Other(format!(
            "LAYOUT locality needs about {} MiB to order {n} vertices, more than import_memory \
             leaves ({} MiB); SET import_memory higher or use LAYOUT degree",
            need.div_ceil(1 << 20),
            memory >> 20
        ))),
        Layout::Forced(order) => Ok((order, "LAYOUT given".into())),
        Layout::Auto => {
            let share = top_tenth_share(degrees);
            let why = format!(
                "the tenth of the vertices with the largest degrees hold {:.0} % of the arcs",
                100.0 * share
            );
            Ok(if share > SKEWED_SHARE {
                (IdOrder::Degree, format!("chosen: {why} (skewed)"))
            } else if need > memory {
                (
                    IdOrder::Degree,
                    format!(
                        "chosen: {why} (not skewed), but ordering by locality needs {} MiB, \
                         more than import_memory leaves",
                        need.div_ceil(1 << 20)
                    ),
                )
            } else {
                (IdOrder::Locality, format!("chosen: {why} (not skewed)"))
            })
        }
    }
}

/// The least share of their arcs that clusters grown from sampled seeds must keep inside for
/// `LAYOUT auto` to order by locality: below it neighbours land in other clusters anyway, and
/// the order would cost its time at import for nothing.
pub const MIN_COHESION: f64 = 0.5;

/// Clusters sampled by [`cluster_cohesion`].
const COHESION_SAMPLES: u32 = 64;

/// `LAYOUT auto`'s second question once the degrees are not skewed: whether clusters of
/// neighbours keep most of their arcs inside. Returns the order and why (`reason` extended).
pub(crate) fn confirm_locality(
    layout: Layout,
    adj: &Adjacency,
    degrees: &[u32],
    capacity: u64,
    reason: String,
) -> (IdOrder, String) {
    if layout != Layout::Auto {
        return (IdOrder::Locality, reason);
    }
    let cohesion = cluster_cohesion(adj, degrees, capacity, COHESION_SAMPLES);
    let why = format!(
        "{reason}; clusters of neighbours keep {:.0} % of their arcs inside",
        100.0 * cohesion
    );
    if cohesion >= MIN_COHESION {
        (IdOrder::Locality, why)
    } else {
        (IdOrder::Degree, format!("{why}, too few for locality"))
    }
}

/// The share of the arcs of `samples` clusters, each grown breadth-first from a seed spread
/// over the ids until its arcs reach `capacity`, whose other end is in the same cluster.
pub(crate) fn cluster_cohesion(
    adj: &Adjacency,
    degrees: &[u32],
    capacity: u64,
    samples: u32,
) -> f64 {
    let n = adj.len() as u64;
    let (mut inside, mut all) = (0u64, 0u64);
    let mut members: Vec<u32> = Vec::new();
    let mut queue: VecDeque<u32> = VecDeque::new();
    let mut seen: HashSet<u32> = HashSet::new();
    for i in 0..samples as u64 {
        let seed = (i * n / samples as u64) as u32;
        if n == 0 || degrees[seed as usize] == 0 {
            continue;
        }
        members.clear();
        queue.clear();
        seen.clear();
        seen.insert(seed);
        queue.push_back(seed);
        let mut arcs = 0u64;
        while let Some(v) = queue.pop_front() {
            let d = degrees[v as usize] as u64;
            if !members.is_empty() && arcs + d > capacity {
                break;
            }
            arcs += d;
            members.push(v);
            for &w in adj.of(v) {
                if seen.insert(w) {
                    queue.push_back(w);
                }
            }
        }
        let set: HashSet<u32> = members.iter().copied().collect();
        for &v in &members {
            let list = adj.of(v);
            all += list.len() as u64;
            inside += list.iter().filter(|w| set.contains(w)).count() as u64;
        }
    }
    if all == 0 {
        return 0.0;
    }
    inside as f64 / all as f64
}

/// The degree bucket of a vertex: 0 for degree 0, else the bit length of the degree.
#[inline]
fn bucket(degree: u32) -> usize {
    (u32::BITS - degree.leading_zeros()) as usize
}

/// The new internal id of every vertex, indexed by its key-order id: buckets of larger degree
/// first, key order within a bucket. `degrees` counts both directions of directed graphs.
pub(crate) fn degree_order(degrees: &[u32]) -> Vec<u32> {
    const BUCKETS: usize = u32::BITS as usize + 1;
    let mut counts = [0u32; BUCKETS];
    for &d in degrees {
        counts[bucket(d)] += 1;
    }
    // Where each bucket starts: the largest bucket first.
    let mut next = [0u32; BUCKETS];
    let mut at = 0u32;
    for b in (0..BUCKETS).rev() {
        next[b] = at;
        at += counts[b];
    }
    degrees
        .iter()
        .map(|&d| {
            let b = bucket(d);
            let id = next[b];
            next[b] += 1;
            id
        })
        .collect()
}

/// An undirected adjacency over key-order ids, both directions of every arc: what
/// [`locality_order`] walks. Filled arc by arc after the degrees are known.
pub(crate) struct Adjacency {
    offsets: Vec<u32>,
    /// Where the next neighbour of each vertex goes, then (once full) unused.
    fill: Vec<u32>,
    neighbours: Vec<u32>,
}

impl Adjacency {
    /// Room for `degrees[v]` neighbours of every `v`.
    pub(crate) fn with_degrees(degrees: &[u32]) -> Adjacency {
        let mut offsets = Vec::with_capacity(degrees.len() + 1);
        let mut at = 0u32;
        offsets.push(0);
        for &d in degrees {
            at = at.saturating_add(d);
            offsets.push(at);
        }
        Adjacency {
            fill: offsets[..degrees.len()].to_vec(),
            neighbours: vec![0; at as usize],
            offsets,
        }
    }

    /// Adds `to` to the neighbours of `from` (ignored past its counted degree).
    #[inline]
    pub(crate) fn add(&mut self, from: u32, to: u32) {
        let f = from as usize;
        if self.fill[f] < self.offsets[f + 1] {
            self.neighbours[self.fill[f] as usize] = to;
            self.fill[f] += 1;
        }
    }

    fn of(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.neighbours[self.offsets[v] as usize..self.fill[v] as usize]
    }

    fn len(&self) -> usize {
        self.fill.len()
    }
}

/// The new internal id of every vertex, indexed by its key-order id, in locality order (see
/// the module doc). `capacity`: the arcs (as `degrees` counts them) of one cluster.
pub(crate) fn locality_order(adj: &Adjacency, degrees: &[u32], capacity: u64) -> Vec<u32> {
    const NONE: u32 = u32::MAX;
    let n = adj.len();
    // Clusters, grown greedily: the next member is the candidate with the most neighbours in
    // the cluster already (the earliest met among equals), which keeps a cluster round rather
    // than a strip. The next seed is the free vertex with the most links into the last cluster
    // (it fills corners before they become fragments, and the clusters follow each other
    // through the graph), or, when the last cluster has no free neighbour, the first free
    // vertex in key order.
    let mut placed = vec![NONE; n];
    let mut links = vec![0u32; n];
    let mut new_id = vec![NONE; n];
    let mut next = 0u32;
    let mut members: Vec<u32> = Vec::new();
    let mut touched: Vec<u32> = Vec::new();
    let mut heap: BinaryHeap<(u32, Reverse<u64>, u32)> = BinaryHeap::new();
    let mut met = 0u64;
    let mut cursor = 0usize;
    let mut seed: Option<u32> = None;
    loop {
        let s = match seed.take() {
            Some(s) => s,
            None => {
                while cursor < n && (placed[cursor] != NONE || degrees[cursor] == 0) {
                    cursor += 1;
                }
                if cursor == n {
                    break;
                }
                cursor as u32
            }
        };
        members.clear();
        heap.clear();
        let mut arcs = 0u64;
        heap.push((1, Reverse(met), s));
        met += 1;
        while let Some((l, _, v)) = heap.pop() {
            if placed[v as usize] != NONE || l != links[v as usize].max(1) {
                continue;
            }
            let d = degrees[v as usize] as u64;
            if !members.is_empty() && arcs + d > capacity {
                if arcs >= capacity {
                    break;
                }
                continue;
            }
            arcs += d;
            placed[v as usize] = 0;
            members.push(v);
            for &w in adj.of(v) {
                if placed[w as usize] == NONE {
                    if links[w as usize] == 0 {
                        touched.push(w);
                    }
                    links[w as usize] += 1;
                    heap.push((links[w as usize], Reverse(met), w));
                    met += 1;
                }
            }
        }
        // The next seed: the free neighbour with the most links into this cluster.
        seed = None;
        while let Some((l, _, w)) = heap.pop() {
            if placed[w as usize] == NONE && l == links[w as usize] {
                seed = Some(w);
                break;
            }
        }
        for &w in &touched {
            links[w as usize] = 0;
        }
        touched.clear();
        members.sort_unstable();
        for &v in &members {
            new_id[v as usize] = next;
            next += 1;
        }
    }
    // Isolated vertices last, in key order.
    for id in new_id.iter_mut().filter(|id| **id == NONE) {
        *id = next;
        next += 1;
    }
    new_id
}

/// The arcs of one cluster in the writer's units: `degrees` counts both directions, a directed
/// graph's out- and in-lists go to two edge sections, so a cluster of twice a block's arcs
/// fills about one block of each.
pub(crate) fn cluster_capacity(directed: bool) -> u64 {
    SLOTS_PER_BLOCK as u64 * if directed { 2 } else { 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hubs_come_first_and_key_order_holds_within_a_bucket() {
        // Key-order ids 0..8 with these degrees: buckets 5 (16..31), 3 (4..7), 2 (2..3),
        // 1 (1), 0 (isolated).
        let degrees = [1, 20, 0, 5, 3, 1, 6, 2];
        let new = degree_order(&degrees);
        assert_eq!(new, vec![5, 0, 7, 1, 3, 6, 2, 4]);
        let mut seen = new.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..8).collect::<Vec<u32>>(), "a permutation");
    }

    #[test]
    fn the_option_is_read_and_checked() {
        let o = |v: &str| vec![("LAYOUT".to_string(), v.to_string())];
        assert_eq!(Layout::from_options(&[]).unwrap(), Layout::Auto);
        assert_eq!(
            Layout::from_options(&o("Degree")).unwrap(),
            Layout::Forced(IdOrder::Degree)
        );
        assert_eq!(
            Layout::from_options(&o("key")).unwrap(),
            Layout::Forced(IdOrder::Key)
        );
        assert_eq!(
            Layout::from_options(&o("LOCALITY")).unwrap(),
            Layout::Forced(IdOrder::Locality)
        );
        let err = Layout::from_options(&o("random")).unwrap_err().to_string();
        assert!(
            err.contains("LAYOUT must be auto, key, degree or locality"),
            "{err}"
        );
    }

    /// The degrees and adjacency of `n` vertices joined by `edges`, both directions.
    fn undirected(n: u32, edges: &[(u32, u32)]) -> (Vec<u32>, Adjacency) {
        let mut degrees = vec![0u32; n as usize];
        for &(a, b) in edges {
            degrees[a as usize] += 1;
            degrees[b as usize] += 1;
        }
        let mut adj = Adjacency::with_degrees(&degrees);
        for &(a, b) in edges {
            adj.add(a, b);
            adj.add(b, a);
        }
        (degrees, adj)
    }

    /// A `w` x `h` grid's adjacency over ids numbered by a multiplicative scramble, and the
    /// scramble's inverse (id -> cell).
    fn scrambled_grid(w: u32, h: u32) -> (Vec<u32>, Adjacency, Vec<u32>) {
        let n = w * h;
        // Cell c gets id (c * 7919) mod n; n is not a multiple of 7919, a prime, so this is a
        // permutation.
        let id = |c: u32| ((c as u64 * 7919) % n as u64) as u32;
        let mut cell = vec![0; n as usize];
        for c in 0..n {
            cell[id(c) as usize] = c;
        }
        let mut arcs = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let c = y * w + x;
                if x + 1 < w {
                    arcs.push((id(c), id(c + 1)));
                }
                if y + 1 < h {
                    arcs.push((id(c), id(c + w)));
                }
            }
        }
        let (degrees, adj) = undirected(n, &arcs);
        (degrees, adj, cell)
    }

    #[test]
    fn locality_order_is_a_permutation_of_compact_ascending_clusters() {
        let (w, h) = (60, 50);
        let (mut degrees, adj, cell) = scrambled_grid(w, h);
        // Two isolated vertices beyond the grid.
        degrees.extend([0, 0]);
        let mut adj2 = Adjacency::with_degrees(&degrees);
        for v in 0..w * h {
            for &u in adj.of(v) {
                adj2.add(v, u);
            }
        }
        let capacity = 64;
        let new = locality_order(&adj2, &degrees, capacity);
        let mut seen = new.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..w * h + 2).collect::<Vec<u32>>(), "a permutation");
        // Isolated vertices last, in key order.
        assert_eq!(&new[(w * h) as usize..], &[w * h, w * h + 1]);
        // Neighbours are close in the new order: most grid edges join vertices less than two
        // clusters apart, where the scrambled ids put them anywhere.
        let cluster_vertices = capacity / 4;
        let mut near = 0;
        let mut edges = 0;
        for v in 0..w * h {
            for &u in adj.of(v) {
                edges += 1;
                if (new[v as usize] as i64 - new[u as usize] as i64).unsigned_abs()
                    < 2 * cluster_vertices
                {
                    near += 1;
                }
            }
        }
        assert!(near * 10 >= edges * 6, "{near} of {edges} arcs near");
        // The vertices of each block of new ids sit in a compact patch of the grid.
        let mut by_new = vec![0u32; (w * h) as usize];
        for v in 0..w * h {
            by_new[new[v as usize] as usize] = v;
        }
        // Clusters are the runs of ascending key-order ids.
        let mut clusters: Vec<Vec<u32>> = Vec::new();
        for (i, &v) in by_new.iter().enumerate() {
            if i == 0 || v < by_new[i - 1] {
                clusters.push(Vec::new());
            }
            clusters.last_mut().unwrap().push(v);
        }
        let mut spans = Vec::new();
        for chunk in &clusters {
            let xs = chunk.iter().map(|&v| cell[v as usize] % w);
            let ys = chunk.iter().map(|&v| cell[v as usize] / w);
            let span = |it: &mut dyn Iterator<Item = u32>| {
                let v: Vec<u32> = it.collect();
                v.iter().max().unwrap() - v.iter().min().unwrap()
            };
            spans.push(span(&mut xs.into_iter()) + span(&mut ys.into_iter()));
        }
        spans.sort_unstable();
        // 16 vertices: a 4 x 4 square spans 6, a diamond 8.
        let median = spans[spans.len() / 2];
        assert!(median <= 10, "median cluster span {median}: {spans:?}");
    }

    #[test]
    fn a_grid_keeps_its_arcs_in_clusters_and_a_random_graph_does_not() {
        let (degrees, adj, _) = scrambled_grid(80, 80);
        let grid = cluster_cohesion(&adj, &degrees, 256, 16);
        assert!(grid >= 0.7, "grid cohesion {grid}");
        let (order, why) = confirm_locality(Layout::Auto, &adj, &degrees, 256, "r".into());
        assert_eq!(order, IdOrder::Locality, "{why}");
        // A random graph of the same size and degree.
        let n = 6400u64;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n) as u32
        };
        let arcs: Vec<(u32, u32)> = (0..2 * n).map(|_| (next(), next())).collect();
        let (degrees, adj) = undirected(n as u32, &arcs);
        let random = cluster_cohesion(&adj, &degrees, 256, 16);
        assert!(random < MIN_COHESION, "random cohesion {random}");
        let (order, why) = confirm_locality(Layout::Auto, &adj, &degrees, 256, "r".into());
        assert_eq!(order, IdOrder::Degree, "{why}");
        assert!(why.contains("too few for locality"), "{why}");
        let forced = confirm_locality(
            Layout::Forced(IdOrder::Locality),
            &adj,
            &degrees,
            256,
            "r".into(),
        );
        assert_eq!(forced.0, IdOrder::Locality);
    }

    #[test]
    fn auto_chooses_from_the_degrees_and_the_memory() {
        let flat = vec![3u32; 1000];
        let (order, why) = choose(Layout::Auto, &flat, u64::MAX).unwrap();
        assert_eq!(order, IdOrder::Locality, "{why}");
        assert!(why.contains("10 %"), "{why}");
        let (order, why) = choose(Layout::Auto, &flat, 1000).unwrap();
        assert_eq!(order, IdOrder::Degree, "{why}");
        assert!(why.contains("import_memory"), "{why}");
        let mut skewed = vec![1u32; 1000];
        for d in skewed.iter_mut().take(100) {
            *d = 50;
        }
        let (order, why) = choose(Layout::Auto, &skewed, u64::MAX).unwrap();
        assert_eq!(order, IdOrder::Degree, "{why}");
        assert!(why.contains("skewed"), "{why}");
        let err = choose(Layout::Forced(IdOrder::Locality), &flat, 1000).unwrap_err();
        assert!(err.to_string().contains("SET import_memory"), "{err}");
        assert_eq!(
            choose(Layout::Forced(IdOrder::Key), &skewed, 0).unwrap().0,
            IdOrder::Key
        );
        assert_eq!(top_tenth_share(&[]), 0.0);
        assert_eq!(top_tenth_share(&[0, 0]), 0.0);
    }
}
