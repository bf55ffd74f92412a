//! The out-of-core reader's per-vertex lookups, compact so they fit inside its `cache` budget:
//! the vertex index (start slot and degree of each list) and the id map, bit-packed in groups of
//! 64 vertices ([`PackedU64s`]). They are built while the sections stream in, so opening never
//! holds the plain arrays (12 bytes per vertex per direction, 8 per id) even for a moment.
//!
//! Why this packs well: the writer packs short lists first-fit into a window of recently opened
//! blocks, so 64 consecutive vertices' lists start within a few dozen blocks of each other; the
//! ids are ascending with small gaps; degrees are small except at hubs, which widen only their
//! own group. Files from any writer still read correctly, only less compactly.

use std::path::Path;

use crate::blockfile::format::SLOTS_PER_BLOCK;
use crate::blockfile::id_runs::IdRuns;
use crate::blockfile::open::FileHeader;
use crate::blockfile::packed::{PackedBuilder, PackedU64s, GROUP};
use crate::error::Result;
use crate::store::Direction;

/// One direction's vertex index, compact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactIndex {
    starts: PackedU64s,
    degrees: PackedU64s,
    /// Vertices of degree 0 whose start slot is not 0, ascending (files from this writer have
    /// none). Other degree-0 vertices start at slot 0 and are stored as placeholders, so an
    /// empty list never widens its group.
    empty_starts: Vec<(u32, u64)>,
    max_degree: u32,
}

impl CompactIndex {
    /// Builds the index from (start, degree) pairs in vertex order.
    pub fn from_entries(entries: impl IntoIterator<Item = (u64, u32)>) -> CompactIndex {
        let mut b = CompactIndexBuilder::with_capacity(0);
        for (s, d) in entries {
            b.push(s, d);
        }
        b.finish()
    }

    /// Number of vertices.
    pub fn len(&self) -> u64 {
        self.degrees.len()
    }

    /// Whether there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.degrees.is_empty()
    }

    /// Start slot of `v`'s list within its edge section.
    #[inline]
    pub fn start(&self, v: u32) -> u64 {
        if self.degree(v) == 0 {
            return self.empty_start(v);
        }
        self.starts.get(v as u64)
    }

    /// Degree of `v`.
    #[inline]
    pub fn degree(&self, v: u32) -> u32 {
        self.degrees.get(v as u64) as u32
    }

    /// (start slot, degree) of `v`, reading the degree once.
    #[inline]
    pub fn entry(&self, v: u32) -> (u64, u32) {
        match self.degree(v) {
            0 => (self.empty_start(v), 0),
            d => (self.starts.get(v as u64), d),
        }
    }

    /// A reader of this index for vertices looked up in ascending order; `dense`: about a
    /// quarter or more of the vertices passed will be looked up, so whole groups are decoded.
    pub fn cursor(&self, dense: bool) -> IndexCursor<'_> {
        IndexCursor {
            idx: self,
            decode: dense,
            group: usize::MAX,
            starts: [0; GROUP],
            degrees: [0; GROUP],
        }
    }

    /// The edge block (relative to the edge section) holding the start of `v`'s list.
    #[inline]
    pub fn block_of(&self, v: u32) -> u64 {
        self.start(v) / SLOTS_PER_BLOCK as u64
    }

    /// The largest degree.
    pub fn max_degree(&self) -> u32 {
        self.max_degree
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> u64 {
        self.starts.heap_bytes()
            + self.degrees.heap_bytes()
            + (self.empty_starts.capacity() * std::mem::size_of::<(u32, u64)>()) as u64
    }

    fn empty_start(&self, v: u32) -> u64 {
        match self.empty_starts.binary_search_by_key(&v, |e| e.0) {
            Ok(i) => self.empty_starts[i].1,
            Err(_) => 0,
        }
    }
}

/// Reads a [`CompactIndex`] a group of [`GROUP`] entries at a time: a scan looks its lists up in
/// vertex order, and decoding a group in one pass costs a fraction of looking each of its
/// entries up on its own, but more than looking up a few. So a cursor decodes only when told
/// that most entries will be wanted ([`CompactIndex::cursor`]). Any order gives the same answers.
pub struct IndexCursor<'a> {
    idx: &'a CompactIndex,
    decode: bool,
    /// The group decoded into `starts` and `degrees` (`usize::MAX`: none yet).
    group: usize,
    starts: [u64; GROUP],
    degrees: [u64; GROUP],
}

impl IndexCursor<'_> {
    /// (start slot, degree) of `v`, as [`CompactIndex::entry`] gives it.
    #[inline(always)]
    pub fn entry(&mut self, v: u32) -> (u64, u32) {
        match self.list(v) {
            Some(entry) => entry,
            None => (self.idx.empty_start(v), 0),
        }
    }

    /// (start slot, degree) of `v` when its list is not empty; `None` without looking up
    /// where an empty list sits (a search), for walks that skip empty lists.
    #[inline(always)]
    pub fn list(&mut self, v: u32) -> Option<(u64, u32)> {
        if !self.decode {
            return match self.idx.degree(v) {
                0 => None,
                d => Some((self.idx.starts.get(v as u64), d)),
            };
        }
        let g = v as usize / GROUP;
        if g != self.group {
            self.idx.starts.decode_group(g, &mut self.starts);
            self.idx.degrees.decode_group(g, &mut self.degrees);
            self.group = g;
        }
        let i = v as usize % GROUP;
        match self.degrees[i] as u32 {
            0 => None,
            d => Some((self.starts[i], d)),
        }
    }
}

/// Builds a [`CompactIndex`] from entries in vertex order.
struct CompactIndexBuilder {
    starts: PackedBuilder,
    degrees: PackedBuilder,
    empty_starts: Vec<(u32, u64)>,
    max_degree: u32,
    next: u32,
}

impl CompactIndexBuilder {
    fn with_capacity(n: u64) -> CompactIndexBuilder {
        CompactIndexBuilder {
            starts: PackedBuilder::with_capacity(n),
            degrees: PackedBuilder::with_capacity(n),
            empty_starts: Vec::new(),
            max_degree: 0,
            next: 0,
        }
    }

    fn push(&mut self, start: u64, degree: u32) {
        if degree == 0 {
            self.starts.push_any();
            if start != 0 {
                self.empty_starts.push((self.next, start));
            }
        } else {
            self.starts.push(start);
        }
        self.degrees.push(degree as u64);
        self.max_degree = self.max_degree.max(degree);
        self.next = self.next.wrapping_add(1);
    }

    fn finish(mut self) -> CompactIndex {
        self.empty_starts.shrink_to_fit();
        CompactIndex {
            starts: self.starts.finish(),
            degrees: self.degrees.finish(),
            empty_starts: self.empty_starts,
            max_degree: self.max_degree,
        }
    }
}

/// The id map, compact: nothing at all when the ids are contiguous, else packed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactIds {
    /// Ids `first .. first + n`.
    Contiguous { first: u64, n: u64 },
    /// Strictly ascending ids, bit-packed.
    Packed(PackedU64s),
    /// Ids in a few strictly ascending runs (a degree-ordered file), bit-packed.
    Runs(PackedU64s, IdRuns),
}

impl CompactIds {
    /// Builds the id map from strictly ascending ids.
    pub fn from_ascending(ids: impl IntoIterator<Item = u64>) -> CompactIds {
        let mut b = PackedBuilder::default();
        for id in ids {
            b.push(id);
        }
        let p = b.finish();
        let runs = IdRuns::single(p.len() as u32);
        Self::from_packed(p, runs)
    }

    fn from_packed(p: PackedU64s, runs: IdRuns) -> CompactIds {
        let n = p.len();
        if !runs.is_single() {
            return CompactIds::Runs(p, runs);
        }
        match n {
            0 => CompactIds::Contiguous { first: 0, n: 0 },
            _ if p.get(n - 1).checked_sub(p.get(0)) == Some(n - 1) => {
                CompactIds::Contiguous { first: p.get(0), n }
            }
            _ => CompactIds::Packed(p),
        }
    }

    /// Number of ids.
    pub fn len(&self) -> u64 {
        match self {
            CompactIds::Contiguous { n, .. } => *n,
            CompactIds::Packed(p) | CompactIds::Runs(p, _) => p.len(),
        }
    }

    /// Whether there are no ids.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The input id of internal vertex `v` (`v < len`).
    #[inline]
    pub fn input_id(&self, v: u32) -> u64 {
        match self {
            CompactIds::Contiguous { first, .. } => first + v as u64,
            CompactIds::Packed(p) | CompactIds::Runs(p, _) => p.get(v as u64),
        }
    }

    /// The internal id of input id `input`: O(1) when contiguous, else a binary search over
    /// the groups' first ids and then within one group.
    pub fn internal_id(&self, input: u64) -> Option<u32> {
        match self {
            CompactIds::Contiguous { first, n } => {
                let d = input.checked_sub(*first)?;
                (d < *n).then_some(d as u32)
            }
            CompactIds::Packed(p) => {
                // The last group whose base is at most `input`.
                let (mut first, mut past) = (0, p.groups());
                while first < past {
                    let mid = (first + past) / 2;
                    if p.group_base(mid) <= input {
                        first = mid + 1;
                    } else {
                        past = mid;
                    }
                }
                let g = first.checked_sub(1)?;
                let lo = (g * GROUP) as u64;
                let hi = (lo + GROUP as u64).min(p.len());
                let (mut a, mut b) = (lo, hi);
                while a < b {
                    let mid = (a + b) / 2;
                    match p.get(mid).cmp(&input) {
                        std::cmp::Ordering::Equal => return Some(mid as u32),
                        std::cmp::Ordering::Less => a = mid + 1,
                        std::cmp::Ordering::Greater => b = mid,
                    }
                }
                None
            }
            CompactIds::Runs(p, runs) => runs.find(input, |v| p.get(v as u64)),
        }
    }

    /// The internal ids in runs of ascending input ids (see `GraphStore::key_runs`).
    pub fn key_runs(&self) -> Vec<std::ops::Range<u32>> {
        match self {
            CompactIds::Runs(_, runs) => runs.ranges().collect(),
            _ => IdRuns::single(self.len() as u32).ranges().collect(),
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> u64 {
        match self {
            CompactIds::Contiguous { .. } => 0,
            CompactIds::Packed(p) | CompactIds::Runs(p, _) => p.heap_bytes(),
        }
    }
}

/// A graph file opened for the out-of-core reader: the checked header plus the compact id map
/// and indexes.
#[derive(Debug, Clone)]
pub struct CompactFile {
    header: FileHeader,
    /// Input id of each internal vertex.
    pub ids: CompactIds,
    /// Out-adjacency index.
    pub out: CompactIndex,
    /// In-adjacency index; `None` for undirected graphs (in-lists are the out-lists).
    pub inn: Option<CompactIndex>,
}

/// The superblock, identity and checksums are shared with [`GraphFile`]; `CompactFile` only
/// adds the compact lookups.
///
/// [`GraphFile`]: crate::blockfile::open::GraphFile
impl std::ops::Deref for CompactFile {
    type Target = FileHeader;
    fn deref(&self) -> &FileHeader {
        &self.header
    }
}

impl CompactFile {
    /// Opens `path` with every check of [`GraphFile::open`], building the compact lookups as
    /// the sections stream in.
    ///
    /// [`GraphFile::open`]: crate::blockfile::open::GraphFile::open
    pub fn open(path: impl AsRef<Path>) -> Result<CompactFile> {
        let (header, file) = FileHeader::open(path)?;
        let n = header.superblock.vertices;
        let mut ids = PackedBuilder::with_capacity(n);
        let runs = header.read_ids(&file, |id| ids.push(id))?;
        let ids = CompactIds::from_packed(ids.finish(), runs);
        let read = |dir| -> Result<CompactIndex> {
            let mut b = CompactIndexBuilder::with_capacity(n);
            header.read_index(&file, dir, |s, d| b.push(s, d))?;
            Ok(b.finish())
        };
        let out = read(Direction::Out)?;
        let inn = if header.superblock.directed {
            Some(read(Direction::In)?)
        } else {
            None
        };
        Ok(CompactFile {
            header,
            ids,
            out,
            inn,
        })
    }

    /// The vertex index of `dir` (undirected graphs answer `In` with the out-index).
    pub fn vertex_index(&self, dir: Direction) -> &CompactIndex {
        match dir {
            Direction::In => self.inn.as_ref().unwrap_or(&self.out),
            Direction::Out => &self.out,
        }
    }

    /// Bytes of memory the per-vertex lookups and block checksums hold: what the out-of-core
    /// reader takes out of its cache budget before sizing the block cache.
    pub fn lookup_bytes(&self) -> u64 {
        self.ids.heap_bytes()
            + self.out.heap_bytes()
            + self.inn.as_ref().map_or(0, CompactIndex::heap_bytes)
            + (self.block_crcs.capacity() * 4) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_answers_as_the_index_in_any_order() {
        // Hubs, empty lists (one with a start slot of its own) and a ragged last group.
        let entries: Vec<(u64, u32)> = (0..200u64)
            .map(|v| match v % 7 {
                0 => (0, 0),
                3 => (v * 1000, 5000),
                _ => (v * 11, (v % 5) as u32 + 1),
            })
            .chain([(7777, 0), (9999, 3)])
            .collect();
        let idx = CompactIndex::from_entries(entries.iter().copied());
        for dense in [true, false] {
            let mut ascending = idx.cursor(dense);
            for (v, &e) in entries.iter().enumerate() {
                assert_eq!(ascending.entry(v as u32), e, "vertex {v}");
            }
            let mut jumping = idx.cursor(dense);
            for v in [201u32, 0, 130, 64, 63, 200, 5, 201] {
                assert_eq!(jumping.entry(v), entries[v as usize], "vertex {v}");
                assert_eq!(idx.entry(v), entries[v as usize], "vertex {v}");
            }
            // `list` is `entry` for non-empty lists and nothing for empty ones.
            let mut lists = idx.cursor(dense);
            for (v, &(start, deg)) in entries.iter().enumerate() {
                let want = (deg > 0).then_some((start, deg));
                assert_eq!(lists.list(v as u32), want, "vertex {v}");
            }
        }
    }
}
