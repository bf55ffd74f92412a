//! A compute-node worker's view of a graph's degrees and input ids: pages of the descriptor's
//! sections ([`Located`]) read from the memory node on demand and kept in a small cache charged
//! to `cn_cache`, so a worker does not hold 4 bytes per vertex per direction (and 8 more for
//! input ids) of the whole graph: per-vertex arrays of the whole graph would make every compute
//! node's memory grow with |V| rather than with its share.
//!
//! The kernels ask for degrees in vertex order (a vertex map over the owned range, a round's
//! sorted sources, a hub range), so a pass over |V| vertices reads each page once: the traffic
//! stays O(|V|) per iteration. The sections were checked against their checksums when the
//! worker located them; a page is not checked again when read.
//!
//! `GraphStore::degree` cannot fail, so a failed page read answers 0 and is kept: the store
//! returns it from its next list read, which every kernel makes, so the job fails naming the
//! memory node instead of going on with a wrong degree.

use std::collections::HashMap;
use std::sync::Mutex;

use super::addr::GlobalAddr;
use super::descriptor::Located;
use super::stats::StatsSnapshot;
use super::transport::Transport;
use crate::error::StoreError;
use crate::store::Direction;

/// Bytes of one page.
const PAGE: u64 = 16 << 10;
/// Fewest pages cached, whatever `cn_cache` (a scan per direction and a few threads' sources).
const MIN_PAGES: usize = 16;
/// Most pages cached (8 MiB): a pass reads each page once, more does not save traffic.
const MAX_PAGES: usize = 512;

/// Which per-vertex section a page belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Section {
    Out,
    In,
    Ids,
}

/// A graph's degrees and input ids, paged from its descriptor.
pub struct DescriptorPages {
    transport: Box<dyn Transport>,
    vertices: u32,
    out_degrees: GlobalAddr,
    in_degrees: Option<GlobalAddr>,
    ids: Option<GlobalAddr>,
    cache: Mutex<Cache>,
    /// The first failed page read, returned by the store's next list read.
    failure: Mutex<Option<StoreError>>,
}

/// The cached pages, least recently used evicted first.
struct Cache {
    capacity: usize,
    slots: Vec<Slot>,
    by_key: HashMap<(Section, u32), usize>,
    clock: u64,
}

struct Slot {
    key: (Section, u32),
    bytes: Vec<u8>,
    used: u64,
}

impl DescriptorPages {
    /// Pages `located`'s sections over `transport` (a connection to the descriptor's node),
    /// caching an eighth of `cn_cache` (at least [`MIN_PAGES`], at most [`MAX_PAGES`] pages).
    pub fn new(transport: Box<dyn Transport>, located: &Located, cn_cache: u64) -> Self {
        let capacity = ((cn_cache / 8 / PAGE) as usize).clamp(MIN_PAGES, MAX_PAGES);
        DescriptorPages {
            transport,
            vertices: located.shape.vertices,
            out_degrees: located.out_degrees,
            in_degrees: located.in_degrees,
            ids: located.ids,
            cache: Mutex::new(Cache {
                capacity,
                slots: Vec::new(),
                by_key: HashMap::new(),
                clock: 0,
            }),
            failure: Mutex::new(None),
        }
    }

    /// Bytes the cache holds at most.
    pub fn capacity_bytes(&self) -> u64 {
        self.lock().capacity as u64 * PAGE
    }

    /// The degree of `v` along `dir` (undirected graphs: `In` is `Out`); 0 out of range or
    /// when its page could not be read (see [`DescriptorPages::take_failure`]).
    pub fn degree(&self, dir: Direction, v: u32) -> u32 {
        let section = match (dir, self.in_degrees) {
            (Direction::In, Some(_)) => Section::In,
            _ => Section::Out,
        };
        let mut b = [0u8; 4];
        match self.element(section, v, &mut b) {
            true => u32::from_le_bytes(b),
            false => 0,
        }
    }

    /// Whether input ids differ from internal ids (then [`DescriptorPages::input_id`] pages).
    pub fn has_ids(&self) -> bool {
        self.ids.is_some()
    }

    /// The input id of `v`: `v` itself when the graph keeps none, `u64::MAX` out of range or
    /// when its page could not be read.
    pub fn input_id(&self, v: u32) -> u64 {
        if self.ids.is_none() {
            return if v < self.vertices {
                v as u64
            } else {
                u64::MAX
            };
        }
        let mut b = [0u8; 8];
        match self.element(Section::Ids, v, &mut b) {
            true => u64::from_le_bytes(b),
            false => u64::MAX,
        }
    }

    /// The first page read that failed since the last call, if any.
    pub fn take_failure(&self) -> Option<StoreError> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// The page reads' traffic.
    pub fn stats(&self) -> StatsSnapshot {
        self.transport.stats()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Copies element `v` of `section` into `out` (its width); false when there is none.
    fn element(&self, section: Section, v: u32, out: &mut [u8]) -> bool {
        if v >= self.vertices {
            return false;
        }
        let width = out.len() as u64;
        let at = v as u64 * width;
        let (page, offset) = ((at / PAGE) as u32, (at % PAGE) as usize);
        let mut cache = self.lock();
        cache.clock += 1;
        let now = cache.clock;
        if let Some(&i) = cache.by_key.get(&(section, page)) {
            let slot = &mut cache.slots[i];
            slot.used = now;
            return copy(&slot.bytes, offset, out);
        }
        let bytes = match self.read_page(section, page) {
            Ok(b) => b,
            Err(e) => {
                let mut f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
                f.get_or_insert(e);
                return false;
            }
        };
        let found = copy(&bytes, offset, out);
        let slot = Slot {
            key: (section, page),
            bytes,
            used: now,
        };
        if cache.slots.len() < cache.capacity {
            let i = cache.slots.len();
            cache.slots.push(slot);
            cache.by_key.insert((section, page), i);
        } else if let Some(i) = (0..cache.slots.len()).min_by_key(|&i| cache.slots[i].used) {
            let old = cache.slots[i].key;
            cache.by_key.remove(&old);
            cache.slots[i] = slot;
            cache.by_key.insert((section, page), i);
        }
        found
    }

    /// Reads page `page` of `section` (the last one may be short).
    fn read_page(&self, section: Section, page: u32) -> Result<Vec<u8>, StoreError> {
        let (base, width) = match section {
            Section::Out => (Some(self.out_degrees), 4),
            Section::In => (self.in_degrees, 4),
            Section::Ids => (self.ids, 8),
        };
        let base = base.ok_or_else(|| StoreError::Other("no such descriptor section".into()))?;
        let total = self.vertices as u64 * width;
        let start = page as u64 * PAGE;
        let len = PAGE.min(total.saturating_sub(start));
        let at = base.checked_add(start).ok_or_else(|| {
            StoreError::Other("the graph descriptor reaches beyond its node".into())
        })?;
        let bytes = self.transport.read(at, len as u32)?;
        if bytes.len() as u64 != len {
            return Err(StoreError::Remote {
                node: self.transport.node_name().to_string(),
                message: "a short read of the graph descriptor".into(),
            });
        }
        Ok(bytes)
    }
}

fn copy(page: &[u8], offset: usize, out: &mut [u8]) -> bool {
    match page.get(offset..offset + out.len()) {
        Some(b) => {
            out.copy_from_slice(b);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dm::descriptor::GraphDescriptor;
    use crate::dm::inproc::InProcTransport;
    use crate::dm::load::{DirLayout, DmLayout, NodeMeta, TinyChunk, LAYOUT_VERSION};
    use crate::dm::region::MemoryNode;
    use crate::store::GraphShape;
    use std::sync::Arc;

    /// A descriptor whose sections span many pages, stored in an in-process memory node.
    fn stored(directed: bool, n: u32) -> (InProcTransport, GraphDescriptor, Located) {
        let t = InProcTransport::new(Arc::new(MemoryNode::new(1, 64 << 20)));
        let dir = DirLayout {
            index: vec![1 << 48 | 4096],
            in_place: 2,
            out_of_place_bytes: 64,
        };
        let d = GraphDescriptor {
            shape: GraphShape {
                vertices: n,
                arcs: 5,
                edges: 5,
                directed,
                weighted: false,
            },
            layout: DmLayout {
                version: LAYOUT_VERSION,
                nonce: 42,
                vertices: n,
                directed,
                weighted: false,
                nodes: vec![NodeMeta {
                    addr: "127.0.0.1:7000".into(),
                    id: 1,
                    epoch: None,
                }],
                bounds: vec![0, n],
                out: dir.clone(),
                inn: directed.then_some(dir),
                tiny_chunks: vec![TinyChunk {
                    first: 0,
                    vertices: n,
                    edges: 5,
                }],
                regions: vec![1 << 48 | 4096],
                region_bytes: vec![],
                descriptor: None,
            },
            out_degrees: (0..n).map(|v| v * 3 + 1).collect(),
            in_degrees: directed.then(|| (0..n).map(|v| n - v).collect()),
            ids: directed.then(|| (0..n as u64).map(|v| v * 7 + 5).collect()),
        };
        let (addr, _) = d.store(&t, 1).unwrap();
        let located = GraphDescriptor::locate(&t, addr).unwrap();
        (t, d, located)
    }

    #[test]
    fn paged_degrees_and_ids_equal_the_descriptors_in_any_order() {
        for directed in [false, true] {
            let n = 100_003;
            let (t, d, located) = stored(directed, n);
            let pages = DescriptorPages::new(Box::new(t), &located, 16);
            assert_eq!(pages.capacity_bytes(), MIN_PAGES as u64 * PAGE);
            let mut r = base::Xoshiro256::new(3);
            let order = (0..n).chain((0..50_000).map(|_| r.below(n as u64) as u32));
            for v in order {
                let i = v as usize;
                assert_eq!(pages.degree(Direction::Out, v), d.out_degrees[i]);
                let inn = d.in_degrees.as_ref().map_or(d.out_degrees[i], |x| x[i]);
                assert_eq!(pages.degree(Direction::In, v), inn);
                let id = d.ids.as_ref().map_or(v as u64, |x| x[i]);
                assert_eq!(pages.input_id(v), id);
            }
            assert_eq!(pages.degree(Direction::Out, n), 0);
            assert_eq!(pages.input_id(n), u64::MAX);
            assert!(pages.take_failure().is_none());
        }
    }

    #[test]
    fn a_pass_in_vertex_order_reads_each_page_once() {
        let n = 200_000;
        let (t, _, located) = stored(false, n);
        let pages = DescriptorPages::new(Box::new(t), &located, 16);
        let before = pages.stats();
        for v in 0..n {
            pages.degree(Direction::Out, v);
        }
        let got = pages.stats().since(&before).bytes_received;
        let section = n as u64 * 4;
        assert!(
            got >= section && got < section + 4096,
            "{got} for {section}"
        );
    }

    #[test]
    fn a_page_that_cannot_be_read_answers_zero_and_is_reported() {
        let (t, _, mut located) = stored(false, 10);
        located.out_degrees = GlobalAddr::new(1, 60 << 20).unwrap();
        let pages = DescriptorPages::new(Box::new(t), &located, 16);
        assert_eq!(pages.degree(Direction::Out, 3), 0);
        assert!(pages.take_failure().is_some());
        assert!(pages.take_failure().is_none());
    }
}
