//! The graph descriptor: what a compute node needs to open a DM graph with no local copy of it
//! (DMG §4.1: any compute node can join). Stored in the memory nodes at `CREATE ... STORAGE dm`,
//! committed with the graph's other regions, its address recorded in the layout (`descriptor`).
//!
//! ```text
//! header (40 bytes)
//!   8  magic "FRGDESC1"
//!   8  payload bytes
//!   4  CRC-32 of the shape and layout JSON
//!   4  CRC-32 of the out-degrees
//!   4  CRC-32 of the in-degrees (0 for undirected graphs)
//!   4  CRC-32 of the ids section
//!   8  reserved (zero)
//! payload
//!   4  vertices      8 arcs      8 edges      1 directed      1 weighted
//!   4  layout JSON bytes, then the JSON (the catalog's, without the descriptor itself)
//!   4·V out-degrees (u32), then, for directed graphs, 4·V in-degrees
//!   ids: 1 byte 0 (input id = internal id), or 1 then 8·V input ids (u64)
//! ```
//!
//! Input ids are there because kernels read them (CDLP's initial labels are the vertices' ids);
//! string keys are not: workers never print vertices. Decoding is a pure function that
//! checks every length against the bytes present before it allocates, and never panics.

use crc32fast::hash;

use super::addr::GlobalAddr;
use super::load::DmLayout;
use super::transport::Transport;
use crate::error::{Result, StoreError};
use crate::store::{Direction, GraphShape, GraphStore};

const MAGIC: &[u8; 8] = b"FRGDESC1";
/// Bytes of the header.
pub const HEADER_BYTES: usize = 40;
/// Largest piece written in one verb.
const PIECE: usize = 4 << 20;
/// Largest piece read at a time: a compute node's transient buffer while it opens a graph,
/// held three times over (the piece, the reply frame and its decoded payload), so it is part
/// of the constant in a worker's memory bound (docs/DM.md, "The bound"); 128 KiB keeps that
/// under 0.4 MiB for a few more round trips at open.
const READ_PIECE: usize = 128 << 10;
/// Longest layout a descriptor may carry (its JSON): far beyond the largest graph's (about 40
/// bytes per region, one region per 4096 vertices and direction), so a damaged or hostile
/// length is refused before it is read.
const MAX_LAYOUT_JSON: usize = 256 << 20;

/// A DM graph as a compute node without the block file sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphDescriptor {
    pub shape: GraphShape,
    pub layout: DmLayout,
    pub out_degrees: Vec<u32>,
    /// For directed graphs; undirected graphs answer `In` with the out-degrees.
    pub in_degrees: Option<Vec<u32>>,
    /// Each vertex's input id; `None` when it is the internal id.
    pub ids: Option<Vec<u64>>,
}

fn bad(what: &str) -> StoreError {
    StoreError::Other(format!(
        "the graph descriptor in the memory nodes is damaged ({what}); CREATE OR REPLACE the graph"
    ))
}

impl GraphDescriptor {
    /// The descriptor of `store` loaded as `layout`.
    pub fn of<S: GraphStore>(store: &S, layout: &DmLayout) -> GraphDescriptor {
        let shape = store.shape();
        let degrees = |dir| {
            (0..shape.vertices)
                .map(|v| store.degree(dir, v) as u32)
                .collect()
        };
        let ids: Vec<u64> = (0..shape.vertices).map(|v| store.input_id(v)).collect();
        let identity = ids.iter().enumerate().all(|(v, &id)| id == v as u64);
        GraphDescriptor {
            shape,
            layout: layout.clone(),
            out_degrees: degrees(Direction::Out),
            in_degrees: shape.directed.then(|| degrees(Direction::In)),
            ids: (!identity).then_some(ids),
        }
    }

    /// The header and payload, ready to write.
    pub fn encode(&self) -> Vec<u8> {
        let json = serde_json::to_vec(&self.layout.to_json()).unwrap_or_default();
        let mut head = Vec::with_capacity(26 + json.len());
        head.extend_from_slice(&self.shape.vertices.to_le_bytes());
        head.extend_from_slice(&self.shape.arcs.to_le_bytes());
        head.extend_from_slice(&self.shape.edges.to_le_bytes());
        head.push(self.shape.directed as u8);
        head.push(self.shape.weighted as u8);
        head.extend_from_slice(&(json.len() as u32).to_le_bytes());
        head.extend_from_slice(&json);
        let out = degree_bytes(&self.out_degrees);
        let inn = self.in_degrees.as_deref().map(degree_bytes);
        let mut ids = Vec::new();
        match &self.ids {
            None => ids.push(0),
            Some(list) => {
                ids.push(1);
                ids.extend(list.iter().flat_map(|x| x.to_le_bytes()));
            }
        }
        let payload = head.len() + out.len() + inn.as_ref().map_or(0, Vec::len) + ids.len();
        let mut bytes = Vec::with_capacity(HEADER_BYTES + payload);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(payload as u64).to_le_bytes());
        bytes.extend_from_slice(&hash(&head).to_le_bytes());
        bytes.extend_from_slice(&hash(&out).to_le_bytes());
        bytes.extend_from_slice(&inn.as_deref().map_or(0, hash).to_le_bytes());
        bytes.extend_from_slice(&hash(&ids).to_le_bytes());
        bytes.extend_from_slice(&[0; 8]);
        bytes.extend_from_slice(&head);
        bytes.extend_from_slice(&out);
        if let Some(inn) = &inn {
            bytes.extend_from_slice(inn);
        }
        bytes.extend_from_slice(&ids);
        bytes
    }

    /// The payload's length from a header (to know how much to read), checked for the magic.
    pub fn payload_len(header: &[u8]) -> Result<u64> {
        if header.len() < HEADER_BYTES || &header[..8] != MAGIC {
            return Err(bad("no descriptor header"));
        }
        Ok(u64_at(header, 8).unwrap_or(0))
    }

    /// Decodes header and payload, checking lengths and checksums. Never panics.
    pub fn decode(bytes: &[u8]) -> Result<GraphDescriptor> {
        let payload_len = GraphDescriptor::payload_len(bytes)?;
        let payload = &bytes[HEADER_BYTES..];
        if payload.len() as u64 != payload_len {
            return Err(bad("wrong length"));
        }
        GraphDescriptor::read_payload(bytes, &mut SliceSource(payload))
    }

    /// Reads the shape and the layout, the payload's first part, checked against the header.
    fn read_head(header: &[u8], src: &mut dyn Source) -> Result<(GraphShape, DmLayout)> {
        let head_crc = u32_at(header, 16).unwrap_or(0);
        let fixed = src.take(26)?;
        let mut r = Reader(&fixed);
        let vertices = r.u32()?;
        let arcs = r.u64()?;
        let edges = r.u64()?;
        let directed = r.flag()?;
        let weighted = r.flag()?;
        let json_len = r.u32()? as usize;
        if json_len > MAX_LAYOUT_JSON {
            return Err(bad("a layout longer than any graph's"));
        }
        let json = src.take(json_len)?;
        let mut head = crc32fast::Hasher::new();
        head.update(&fixed);
        head.update(&json);
        if head.finalize() != head_crc {
            return Err(bad("the layout fails its checksum"));
        }
        let value: serde_json::Value =
            serde_json::from_slice(&json).map_err(|_| bad("unreadable layout"))?;
        let layout = DmLayout::from_json(&value)?;
        if layout.vertices != vertices || layout.directed != directed || layout.weighted != weighted
        {
            return Err(bad("the layout does not match the shape"));
        }
        let shape = GraphShape {
            vertices,
            arcs,
            edges,
            directed,
            weighted,
        };
        Ok((shape, layout))
    }

    /// Decodes the payload from `src` section by section, checking each length against what
    /// is left before allocating. The degree and id arrays are read in pieces of at most
    /// [`READ_PIECE`] bytes, so a compute node holds them once, not also their bytes.
    fn read_payload(header: &[u8], src: &mut dyn Source) -> Result<GraphDescriptor> {
        let crc = |at: usize| u32_at(header, at).unwrap_or(0);
        let (out_crc, in_crc, ids_crc) = (crc(20), crc(24), crc(28));
        let (shape, layout) = GraphDescriptor::read_head(header, src)?;
        let (vertices, directed) = (shape.vertices, shape.directed);
        let n = vertices as usize;
        let out_degrees = read_array(src, n, 4, out_crc, u32_from)
            .map_err(|e| e.unwrap_or_else(|| bad("the out-degrees fail their checksum")))?;
        let in_degrees = if directed {
            Some(
                read_array(src, n, 4, in_crc, u32_from)
                    .map_err(|e| e.unwrap_or_else(|| bad("the in-degrees fail their checksum")))?,
            )
        } else if in_crc != 0 {
            return Err(bad("in-degree checksum on an undirected graph"));
        } else {
            None
        };
        // The ids' checksum covers every byte left, the kind byte included.
        let kind = src.take(1)?;
        let mut ids_hash = crc32fast::Hasher::new();
        ids_hash.update(&kind);
        let ids = match kind[0] {
            0 => None,
            1 => Some(read_hashed(src, n, 8, &mut ids_hash, u64_from)?),
            _ => return Err(bad("unknown ids kind")),
        };
        if src.left() != 0 {
            return Err(bad("trailing bytes"));
        }
        if ids_hash.finalize() != ids_crc {
            return Err(bad("the input ids fail their checksum"));
        }
        Ok(GraphDescriptor {
            shape,
            layout,
            out_degrees,
            in_degrees,
            ids,
        })
    }

    /// Writes the descriptor into a fresh region leased to `transport`'s connection (the caller
    /// commits it with the graph's other regions) and owned by `owner` (the load's nonce);
    /// returns its address and size.
    pub fn store(&self, transport: &dyn Transport, owner: u64) -> Result<(GlobalAddr, u64)> {
        let bytes = self.encode();
        let addr = transport.alloc_owned(bytes.len() as u64, owner)?;
        for (i, piece) in bytes.chunks(PIECE).enumerate() {
            let at = addr
                .checked_add((i * PIECE) as u64)
                .ok_or_else(|| bad("beyond its node"))?;
            transport.write(at, piece)?;
        }
        Ok((addr, bytes.len() as u64))
    }

    /// Reads and checks the descriptor at `addr` over `transport` (a connection to its node).
    pub fn fetch(transport: &dyn Transport, addr: GlobalAddr) -> Result<GraphDescriptor> {
        let header = transport.read(addr, HEADER_BYTES as u32)?;
        let left = GraphDescriptor::payload_len(&header)?;
        let at = addr
            .checked_add(HEADER_BYTES as u64)
            .ok_or_else(|| bad("beyond its node"))?;
        GraphDescriptor::read_payload(
            &header,
            &mut RemoteSource {
                transport,
                at,
                left,
            },
        )
    }
}

/// Where a checked descriptor's per-vertex sections are in the memory node: what a compute
/// node pages degrees and ids from instead of holding them
/// ([`DescriptorPages`](super::descriptor_pages::DescriptorPages)).
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub shape: GraphShape,
    pub layout: DmLayout,
    /// The out-degrees, `u32` each.
    pub out_degrees: GlobalAddr,
    /// The in-degrees of a directed graph.
    pub in_degrees: Option<GlobalAddr>,
    /// The input ids (`u64` each), when they are not the internal ids.
    pub ids: Option<GlobalAddr>,
}

impl GraphDescriptor {
    /// Checks the descriptor at `addr` like [`GraphDescriptor::fetch`], streaming each section
    /// through its checksum in pieces of at most [`READ_PIECE`] bytes without keeping it, and
    /// returns where the sections are.
    pub fn locate(transport: &dyn Transport, addr: GlobalAddr) -> Result<Located> {
        let header = transport.read(addr, HEADER_BYTES as u32)?;
        let left = GraphDescriptor::payload_len(&header)?;
        let at = addr
            .checked_add(HEADER_BYTES as u64)
            .ok_or_else(|| bad("beyond its node"))?;
        let src = &mut RemoteSource {
            transport,
            at,
            left,
        };
        let crc = |at: usize| u32_at(&header, at).unwrap_or(0);
        let (shape, layout) = GraphDescriptor::read_head(&header, src)?;
        let n = shape.vertices as u64;
        let section = |src: &mut RemoteSource, width: u64, crc: u32, what: &str| {
            let at = src.at;
            let mut hasher = crc32fast::Hasher::new();
            skip_hashed(src, n * width, &mut hasher)?;
            if hasher.finalize() != crc {
                return Err(bad(what));
            }
            Ok(at)
        };
        let out_degrees = section(src, 4, crc(20), "the out-degrees fail their checksum")?;
        let in_degrees = if shape.directed {
            Some(section(
                src,
                4,
                crc(24),
                "the in-degrees fail their checksum",
            )?)
        } else if crc(24) != 0 {
            return Err(bad("in-degree checksum on an undirected graph"));
        } else {
            None
        };
        let kind = (src as &mut dyn Source).take(1)?;
        let mut ids_hash = crc32fast::Hasher::new();
        ids_hash.update(&kind);
        let ids_at = src.at;
        let ids = match kind[0] {
            0 => None,
            1 => {
                skip_hashed(src, n * 8, &mut ids_hash)?;
                Some(ids_at)
            }
            _ => return Err(bad("unknown ids kind")),
        };
        if src.left != 0 {
            return Err(bad("trailing bytes"));
        }
        if ids_hash.finalize() != crc(28) {
            return Err(bad("the input ids fail their checksum"));
        }
        Ok(Located {
            shape,
            layout,
            out_degrees,
            in_degrees,
            ids,
        })
    }
}

/// Feeds the next `bytes` of `src` to `hasher` in pieces, keeping none of them.
fn skip_hashed(src: &mut dyn Source, bytes: u64, hasher: &mut crc32fast::Hasher) -> Result<()> {
    if bytes > src.left() {
        return Err(bad("truncated"));
    }
    let mut left = bytes;
    while left > 0 {
        let k = left.min(READ_PIECE as u64);
        hasher.update(&src.take(k as usize)?);
        left -= k;
    }
    Ok(())
}

/// Where a payload is read from, in order.
trait Source {
    /// Bytes not read yet.
    fn left(&self) -> u64;
    /// The next `n` bytes (at most [`READ_PIECE`] or a small section); an error when fewer
    /// are left.
    fn next(&mut self, n: usize) -> Result<Vec<u8>>;
}

impl dyn Source + '_ {
    /// The next `n` bytes, refused before anything is allocated when fewer are left.
    fn take(&mut self, n: usize) -> Result<Vec<u8>> {
        if (n as u64) > self.left() {
            return Err(bad("truncated"));
        }
        self.next(n)
    }
}

/// A payload in memory.
struct SliceSource<'a>(&'a [u8]);

impl Source for SliceSource<'_> {
    fn left(&self) -> u64 {
        self.0.len() as u64
    }
    fn next(&mut self, n: usize) -> Result<Vec<u8>> {
        let mut r = Reader(self.0);
        let piece = r.take(n)?.to_vec();
        self.0 = r.0;
        Ok(piece)
    }
}

/// A payload in a memory node, read piece by piece.
struct RemoteSource<'a> {
    transport: &'a dyn Transport,
    at: GlobalAddr,
    left: u64,
}

impl Source for RemoteSource<'_> {
    fn left(&self) -> u64 {
        self.left
    }
    fn next(&mut self, n: usize) -> Result<Vec<u8>> {
        if n as u64 > self.left {
            return Err(bad("truncated"));
        }
        // Grown piece by piece as the node answers: the header's lengths are claims, and a
        // lying one costs what the node really sends, not what it claimed.
        let mut out = Vec::new();
        while out.len() < n {
            let len = (n - out.len()).min(READ_PIECE);
            out.try_reserve(len).map_err(|_| bad("too large"))?;
            out.extend_from_slice(&self.transport.read(self.at, len as u32)?);
            self.at = self
                .at
                .checked_add(len as u64)
                .ok_or_else(|| bad("beyond its node"))?;
        }
        if out.len() != n {
            return Err(bad("a short read"));
        }
        self.left -= n as u64;
        Ok(out)
    }
}

/// `n` elements of `width` bytes checked against `crc`; `Err(None)` when only the checksum
/// fails (the caller names the section).
fn read_array<T>(
    src: &mut dyn Source,
    n: usize,
    width: usize,
    crc: u32,
    from: fn(&[u8]) -> T,
) -> std::result::Result<Vec<T>, Option<StoreError>> {
    let mut hasher = crc32fast::Hasher::new();
    let out = read_hashed(src, n, width, &mut hasher, from).map_err(Some)?;
    if hasher.finalize() != crc {
        return Err(None);
    }
    Ok(out)
}

/// `n` elements of `width` bytes, read in pieces and fed to `hasher`.
fn read_hashed<T>(
    src: &mut dyn Source,
    n: usize,
    width: usize,
    hasher: &mut crc32fast::Hasher,
    from: fn(&[u8]) -> T,
) -> Result<Vec<T>> {
    let bytes = n
        .checked_mul(width)
        .ok_or_else(|| bad("too many vertices"))?;
    if bytes as u64 > src.left() {
        return Err(bad("truncated"));
    }
    // Grown as the pieces arrive, not reserved for the count the header claims.
    let mut out = Vec::new();
    let per_piece = READ_PIECE / width;
    while out.len() < n {
        let k = (n - out.len()).min(per_piece);
        let piece = src.take(k * width)?;
        out.try_reserve(k).map_err(|_| bad("too large"))?;
        hasher.update(&piece);
        out.extend(piece.chunks_exact(width).map(from));
    }
    Ok(out)
}

fn u32_from(c: &[u8]) -> u32 {
    u32_at(c, 0).unwrap_or(0)
}

fn u64_from(c: &[u8]) -> u64 {
    u64_at(c, 0).unwrap_or(0)
}

fn degree_bytes(d: &[u32]) -> Vec<u8> {
    d.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// A cursor that refuses to read past the end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(bad("truncated"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32_at(self.take(4)?, 0).unwrap_or(0))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64_at(self.take(8)?, 0).unwrap_or(0))
    }
    fn flag(&mut self) -> Result<bool> {
        match self.take(1)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(bad("a flag is neither 0 nor 1")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dm::load::{DirLayout, NodeMeta, TinyChunk, LAYOUT_VERSION};

    fn sample(directed: bool) -> GraphDescriptor {
        let dir = DirLayout {
            index: vec![1 << 48 | 4096],
            in_place: 2,
            out_of_place_bytes: 64,
        };
        GraphDescriptor {
            shape: GraphShape {
                vertices: 3,
                arcs: 5,
                edges: 5,
                directed,
                weighted: false,
            },
            layout: DmLayout {
                version: LAYOUT_VERSION,
                nonce: 42,
                vertices: 3,
                directed,
                weighted: false,
                nodes: vec![NodeMeta {
                    addr: "127.0.0.1:7000".into(),
                    id: 1,
                    epoch: None,
                }],
                bounds: vec![0, 3],
                out: dir.clone(),
                inn: directed.then_some(dir),
                tiny_chunks: vec![TinyChunk {
                    first: 0,
                    vertices: 3,
                    edges: 5,
                }],
                regions: vec![1 << 48 | 4096],
                region_bytes: vec![],
                descriptor: None,
            },
            out_degrees: vec![2, 0, 3],
            in_degrees: directed.then(|| vec![1, 4, 0]),
            ids: directed.then(|| vec![10, 30, 20]),
        }
    }

    #[test]
    fn a_descriptor_reads_back_as_written() {
        for directed in [false, true] {
            let d = sample(directed);
            assert_eq!(GraphDescriptor::decode(&d.encode()).unwrap(), d);
        }
    }

    #[test]
    fn truncated_extended_or_flipped_bytes_are_refused() {
        for directed in [false, true] {
            let bytes = sample(directed).encode();
            for cut in 0..bytes.len() {
                assert!(
                    GraphDescriptor::decode(&bytes[..cut]).is_err(),
                    "cut at {cut}"
                );
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(GraphDescriptor::decode(&longer).is_err());
            for at in 8..bytes.len() {
                let mut flipped = bytes.clone();
                flipped[at] ^= 0x10;
                // Reserved header bytes are not checked; every other byte is.
                if (32..40).contains(&at) {
                    continue;
                }
                assert!(GraphDescriptor::decode(&flipped).is_err(), "flip at {at}");
            }
        }
    }

    #[test]
    fn a_descriptor_fetched_in_pieces_equals_the_decoded_one() {
        use crate::dm::inproc::InProcTransport;
        use crate::dm::region::MemoryNode;
        let t = InProcTransport::new(std::sync::Arc::new(MemoryNode::new(1, 64 << 20)));
        for directed in [false, true] {
            let mut d = sample(directed);
            // Enough vertices that every array spans several read pieces.
            let n = 3 * READ_PIECE / 4 + 5;
            d.shape.vertices = n as u32;
            d.layout.vertices = n as u32;
            d.layout.bounds = vec![0, n as u32];
            d.layout.tiny_chunks[0].vertices = n as u32;
            d.out_degrees = (0..n as u32).collect();
            d.in_degrees = directed.then(|| (0..n as u32).rev().collect());
            d.ids = directed.then(|| (0..n as u64).map(|v| v * 7).collect());
            let (addr, _) = d.store(&t, 1).unwrap();
            assert_eq!(GraphDescriptor::fetch(&t, addr).unwrap(), d);
            let located = GraphDescriptor::locate(&t, addr).unwrap();
            assert_eq!((located.shape, &located.layout), (d.shape, &d.layout));
            assert_eq!(located.in_degrees.is_some(), directed);
            assert_eq!(located.ids.is_some(), directed);
            let first = t.read(located.out_degrees, 8).unwrap();
            assert_eq!(first, [0, 0, 0, 0, 1, 0, 0, 0]);
            assert_eq!(GraphDescriptor::decode(&d.encode()).unwrap(), d);
            // A flipped byte in the last piece of the arrays is caught when fetched too.
            let last = addr.checked_add(d.encode().len() as u64 - 3).unwrap();
            let byte = t.read(last, 1).unwrap()[0];
            t.write(last, &[byte ^ 0x10]).unwrap();
            assert!(GraphDescriptor::fetch(&t, addr).is_err());
            assert!(GraphDescriptor::locate(&t, addr).is_err());
        }
    }

    #[test]
    fn garbage_never_panics() {
        let mut r = base::Xoshiro256::new(9);
        let good = sample(true).encode();
        for _ in 0..2000 {
            let mut b: Vec<u8> = (0..r.below(200)).map(|_| r.below(256) as u8).collect();
            if r.below(2) == 0 {
                b.splice(0..0, good[..40].iter().copied());
            }
            let _ = GraphDescriptor::decode(&b);
        }
    }
}
