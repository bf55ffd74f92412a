//! The memory-node wire protocol: length-prefixed binary frames, little-endian.
//!
//! A frame is `u32 len | u64 request id | u8 tag | payload`, where `len` counts everything after
//! itself. Requests and replies share one [`Message`] enum so that the in-process transport and the
//! TCP transport run the same server code. [`decode_frame`] is a pure function over untrusted bytes:
//! it never panics and never allocates more than the frame itself justifies (a fuzz target calls it).

use super::addr::GlobalAddr;
use super::rdma_wire::{
    decode_endpoint, decode_region_key, encode_endpoint, encode_region_key, QpEndpoint, RegionKey,
    ENDPOINT_BYTES, REGION_KEY_BYTES,
};
use crate::remote_memory::ElementKind;

/// Largest frame either side accepts; a longer length prefix closes the connection.
pub const MAX_FRAME: usize = 64 << 20;
/// Largest total of READ bytes answered by one batch, so the reply still fits in a frame.
pub const MAX_BATCH_READ: u64 = 48 << 20;
/// Largest token accepted in a HELLO; tokens are short secrets, not payloads.
pub const MAX_TOKEN: usize = 1024;
/// Bytes before the payload: length prefix, request id, tag.
pub const HEADER: usize = 4 + 8 + 1;
/// The protocol this build speaks. 1: the first (HELLO carried only the token). 2: HELLO
/// carries the client's version and HELLO_OK the node's epoch; owned regions
/// (`ALLOC_OWNED`, `FREE_OWNED`). A node answers a version-1 HELLO as version 1 did.
pub const PROTOCOL_VERSION: u16 = 2;

/// Why a frame was rejected. Any of these closes the connection it came on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Fewer bytes than the header or a field needs.
    #[error("frame truncated: {0}")]
    Truncated(&'static str),
    /// The length prefix exceeds [`MAX_FRAME`] or disagrees with the bytes given.
    #[error("bad frame length {0}")]
    BadLength(u64),
    /// An unknown message or verb tag.
    #[error("unknown tag {0}")]
    UnknownTag(u8),
    /// A field with an impossible value (bad UTF-8, unknown enum value, trailing bytes...).
    #[error("malformed frame: {0}")]
    Malformed(&'static str),
}

/// Error codes carried by [`Message::Error`] and [`VerbReply::Failed`], so clients can react
/// without parsing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum ErrorCode {
    /// Wrong or missing token.
    Unauthorized = 1,
    /// An address outside every region this server allocated.
    OutOfBounds = 2,
    /// Allocation or mailbox beyond `--capacity`.
    Capacity = 3,
    /// A request that makes no sense (zero-size alloc, reply-only message...).
    BadRequest = 4,
    /// CAS/FAA/attribute address not aligned to its width.
    Unaligned = 5,
    /// The address names another memory node.
    WrongNode = 6,
    /// The reply would exceed the frame limit.
    TooLarge = 7,
    /// A free of a region the caller does not own: another owner's, or one made in an earlier
    /// life of the node (its epoch differs).
    NotOwner = 8,
    /// Anything else.
    Other = 99,
}

impl ErrorCode {
    fn from_u16(v: u16) -> ErrorCode {
        match v {
            1 => ErrorCode::Unauthorized,
            2 => ErrorCode::OutOfBounds,
            3 => ErrorCode::Capacity,
            4 => ErrorCode::BadRequest,
            5 => ErrorCode::Unaligned,
            6 => ErrorCode::WrongNode,
            7 => ErrorCode::TooLarge,
            8 => ErrorCode::NotOwner,
            _ => ErrorCode::Other,
        }
    }
}

/// One one-sided verb inside a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verb {
    /// Read `len` bytes at `addr`.
    Read { addr: GlobalAddr, len: u32 },
    /// Write `data` at `addr`.
    Write { addr: GlobalAddr, data: Vec<u8> },
    /// Compare-and-swap the aligned 8-byte word at `addr`; the reply carries the old value.
    Cas {
        addr: GlobalAddr,
        expected: u64,
        new: u64,
    },
    /// Fetch-and-add on the aligned 8-byte word at `addr` (wrapping); the reply carries the old value.
    Faa { addr: GlobalAddr, delta: u64 },
}

/// The answer to one verb, in batch order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerbReply {
    /// The bytes read.
    Read(Vec<u8>),
    /// The write is done.
    Written,
    /// The word before the CAS; the swap happened iff it equals `expected`.
    Cas { old: u64 },
    /// The word before the add.
    Faa { old: u64 },
    /// This verb failed; the others in the batch still ran.
    Failed { code: ErrorCode, message: String },
}

/// The wire code of the element kind a pass-by-value update applies to. On the memory node a
/// `U32` is 4 bytes, 4-aligned; `U64` and `F64` are 8 bytes, 8-aligned.
fn kind_code(kind: ElementKind) -> u8 {
    match kind {
        ElementKind::U32 => 1,
        ElementKind::U64 => 2,
        ElementKind::F64 => 3,
    }
}

/// The update a pass-by-value item applies: `min` for BFS/SSSP/WCC-like kernels, `add` for
/// PageRank-like ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateOp {
    /// attr = min(attr, value).
    Min = 1,
    /// attr = attr + value (wrapping for integers).
    Add = 2,
}

/// One pass-by-value update: the attribute at `base + index * width` receives `value` (the low
/// 32 bits for `U32`, the IEEE bits for `F64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpdateItem {
    /// Vertex index relative to the attribute array's base.
    pub index: u64,
    /// The value, as raw bits.
    pub value: u64,
}

/// Every request and reply of the protocol.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// First frame of a connection: the shared token and the client's protocol version (1 is
    /// sent as the first protocol did, with no version field).
    Hello { token: String, version: u16 },
    /// Accepted: who the server is. `epoch` (protocol 2 on, answered only to a client that said
    /// 2 or more) is drawn at random each time the node starts: an address recorded with one
    /// epoch means nothing to a node with another.
    HelloOk {
        node_id: u16,
        capacity: u64,
        epoch: Option<u64>,
    },
    /// Allocate a region of `size` bytes (two-sided).
    Alloc { size: u64 },
    /// The new region's address (8-byte aligned, zero-filled).
    Allocated { addr: GlobalAddr },
    /// Release the region starting at `addr`.
    Free { addr: GlobalAddr },
    /// Generic success of a call without a result.
    Done,
    /// Verbs executed in order and answered together (doorbell batching).
    Batch(Vec<Verb>),
    /// The answers, one per verb.
    BatchReply(Vec<VerbReply>),
    /// Append a buffer of redistribution items to mailbox `mailbox`.
    MailboxPush { mailbox: u64, data: Vec<u8> },
    /// Take buffers from mailbox `mailbox`, at most `max_bytes` (but always one if any waits).
    MailboxPull { mailbox: u64, max_bytes: u32 },
    /// Buffers pulled, oldest first.
    Pulled(Vec<Vec<u8>>),
    /// Execute pass-by-value updates locally on the memory node.
    Apply {
        base: GlobalAddr,
        attr: ElementKind,
        op: UpdateOp,
        items: Vec<UpdateItem>,
    },
    /// How many attributes changed value.
    Applied { changed: u64 },
    /// Ask for the node's capacity and use.
    Info,
    /// The node's capacity and use.
    InfoReply {
        node_id: u16,
        capacity: u64,
        used: u64,
        regions: u64,
    },
    /// The request failed as a whole.
    Error { code: ErrorCode, message: String },
    /// Allocate a region leased to this connection: freed when the connection closes unless
    /// committed first (a loader killed mid-load leaves nothing behind). Answered `Allocated`.
    AllocLeased { size: u64 },
    /// Make a region this connection leased permanent (freed only by `Free`). Answered `Done`.
    Commit { addr: GlobalAddr },
    /// `AllocLeased`, the region tagged with `owner` (a graph load's nonce): only a
    /// `FreeOwned` naming the same owner and the node's current epoch frees it once committed.
    AllocOwned { size: u64, owner: u64 },
    /// Free the region starting at `addr` if it was allocated in `epoch` of this node by
    /// `owner`; refused (`NotOwner`) otherwise, and the region is left as it is.
    FreeOwned {
        addr: GlobalAddr,
        epoch: u64,
        owner: u64,
    },
    /// Open an RDMA queue pair on the memory node connected to the client's `endpoint`, for
    /// one-sided verbs beside this TCP link. Answered `RdmaAccept`, or an error when the node
    /// has no RDMA device.
    RdmaConnect { endpoint: QpEndpoint },
    /// The memory node's queue pair, already ready to send.
    RdmaAccept { endpoint: QpEndpoint },
    /// Which region holds `addr`, and its registration (address and rkey) for one-sided verbs.
    /// Answered `RegionKeyed`.
    RegionKeyOf { addr: GlobalAddr },
    /// A region's registration: the answer to `RegionKeyOf`, and to `Alloc` / `AllocLeased` on
    /// a connection that sent `RdmaConnect` (the new region's address is `key.start`).
    RegionKeyed { key: RegionKey },
}

/// A decoded frame: request id and message.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Chosen by the client; the reply carries the same id (pipelining).
    pub id: u64,
    /// The message.
    pub msg: Message,
}

mod tag {
    pub const HELLO: u8 = 1;
    pub const HELLO_OK: u8 = 2;
    pub const ALLOC: u8 = 3;
    pub const ALLOCATED: u8 = 4;
    pub const FREE: u8 = 5;
    pub const DONE: u8 = 6;
    pub const BATCH: u8 = 7;
    pub const BATCH_REPLY: u8 = 8;
    pub const PUSH: u8 = 9;
    pub const PULL: u8 = 10;
    pub const PULLED: u8 = 11;
    pub const APPLY: u8 = 12;
    pub const APPLIED: u8 = 13;
    pub const INFO: u8 = 14;
    pub const INFO_REPLY: u8 = 15;
    pub const ERROR: u8 = 16;
    pub const ALLOC_LEASED: u8 = 17;
    pub const COMMIT: u8 = 18;
    pub const RDMA_CONNECT: u8 = 19;
    pub const RDMA_ACCEPT: u8 = 20;
    pub const REGION_KEY_OF: u8 = 21;
    pub const REGION_KEYED: u8 = 22;
    pub const ALLOC_OWNED: u8 = 23;
    pub const FREE_OWNED: u8 = 24;
    pub const V_READ: u8 = 1;
    pub const V_WRITE: u8 = 2;
    pub const V_CAS: u8 = 3;
    pub const V_FAA: u8 = 4;
    pub const V_FAILED: u8 = 5;
}

impl Message {
    /// Bytes this message takes on the wire, header included; the in-process transport counts
    /// this too so that statistics agree across transports.
    pub fn wire_len(&self) -> usize {
        HEADER
            + match self {
                Message::Hello { token, version } => {
                    2 + token.len() + if *version >= 2 { 2 } else { 0 }
                }
                Message::HelloOk { epoch, .. } => 10 + if epoch.is_some() { 8 } else { 0 },
                Message::AllocOwned { .. } => 16,
                Message::FreeOwned { .. } => 24,
                Message::Alloc { .. }
                | Message::Allocated { .. }
                | Message::Free { .. }
                | Message::AllocLeased { .. }
                | Message::Commit { .. }
                | Message::RegionKeyOf { .. } => 8,
                Message::RdmaConnect { .. } | Message::RdmaAccept { .. } => ENDPOINT_BYTES,
                Message::RegionKeyed { .. } => REGION_KEY_BYTES,
                Message::Done | Message::Info => 0,
                Message::Batch(v) => {
                    4 + v
                        .iter()
                        .map(|v| match v {
                            Verb::Read { .. } => 13,
                            Verb::Write { data, .. } => 13 + data.len(),
                            Verb::Cas { .. } => 25,
                            Verb::Faa { .. } => 17,
                        })
                        .sum::<usize>()
                }
                Message::BatchReply(v) => {
                    4 + v
                        .iter()
                        .map(|r| match r {
                            VerbReply::Read(d) => 5 + d.len(),
                            VerbReply::Written => 1,
                            VerbReply::Cas { .. } | VerbReply::Faa { .. } => 9,
                            VerbReply::Failed { message, .. } => 5 + message.len(),
                        })
                        .sum::<usize>()
                }
                Message::MailboxPush { data, .. } => 12 + data.len(),
                Message::MailboxPull { .. } => 12,
                Message::Pulled(b) => 4 + b.iter().map(|d| 4 + d.len()).sum::<usize>(),
                Message::Apply { items, .. } => 14 + 16 * items.len(),
                Message::Applied { .. } => 8,
                Message::InfoReply { .. } => 26,
                Message::Error { message, .. } => 4 + message.len(),
            }
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    // Strings are bounded when built (tokens, error messages); clamp defensively.
    let b = &s.as_bytes()[..s.len().min(u16::MAX as usize)];
    out.extend_from_slice(&(b.len() as u16).to_le_bytes());
    out.extend_from_slice(b);
}

/// Appends the encoding of one frame to `out`. Fails only if the frame would exceed
/// [`MAX_FRAME`], so a caller never sends what the peer must reject.
pub fn encode_frame(id: u64, msg: &Message, out: &mut Vec<u8>) -> Result<(), FrameError> {
    let len = msg.wire_len();
    if len > MAX_FRAME {
        return Err(FrameError::BadLength(len as u64));
    }
    out.reserve(len);
    out.extend_from_slice(&((len - 4) as u32).to_le_bytes());
    out.extend_from_slice(&id.to_le_bytes());
    let u64le = |out: &mut Vec<u8>, v: u64| out.extend_from_slice(&v.to_le_bytes());
    let u32le = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    match msg {
        Message::Hello { token, version } => {
            out.push(tag::HELLO);
            put_str(out, token);
            if *version >= 2 {
                out.extend_from_slice(&version.to_le_bytes());
            }
        }
        Message::HelloOk {
            node_id,
            capacity,
            epoch,
        } => {
            out.push(tag::HELLO_OK);
            out.extend_from_slice(&node_id.to_le_bytes());
            u64le(out, *capacity);
            if let Some(e) = epoch {
                u64le(out, *e);
            }
        }
        Message::AllocOwned { size, owner } => {
            out.push(tag::ALLOC_OWNED);
            u64le(out, *size);
            u64le(out, *owner);
        }
        Message::FreeOwned { addr, epoch, owner } => {
            out.push(tag::FREE_OWNED);
            u64le(out, addr.raw());
            u64le(out, *epoch);
            u64le(out, *owner);
        }
        Message::Alloc { size } => {
            out.push(tag::ALLOC);
            u64le(out, *size);
        }
        Message::Allocated { addr } => {
            out.push(tag::ALLOCATED);
            u64le(out, addr.raw());
        }
        Message::Free { addr } => {
            out.push(tag::FREE);
            u64le(out, addr.raw());
        }
        Message::AllocLeased { size } => {
            out.push(tag::ALLOC_LEASED);
            u64le(out, *size);
        }
        Message::Commit { addr } => {
            out.push(tag::COMMIT);
            u64le(out, addr.raw());
        }
        Message::RdmaConnect { endpoint } => {
            out.push(tag::RDMA_CONNECT);
            encode_endpoint(endpoint, out);
        }
        Message::RdmaAccept { endpoint } => {
            out.push(tag::RDMA_ACCEPT);
            encode_endpoint(endpoint, out);
        }
        Message::RegionKeyOf { addr } => {
            out.push(tag::REGION_KEY_OF);
            u64le(out, addr.raw());
        }
        Message::RegionKeyed { key } => {
            out.push(tag::REGION_KEYED);
            encode_region_key(key, out);
        }
        Message::Done => out.push(tag::DONE),
        Message::Info => out.push(tag::INFO),
        Message::Batch(verbs) => {
            out.push(tag::BATCH);
            u32le(out, verbs.len() as u32);
            for v in verbs {
                match v {
                    Verb::Read { addr, len } => {
                        out.push(tag::V_READ);
                        u64le(out, addr.raw());
                        u32le(out, *len);
                    }
                    Verb::Write { addr, data } => {
                        out.push(tag::V_WRITE);
                        u64le(out, addr.raw());
                        u32le(out, data.len() as u32);
                        out.extend_from_slice(data);
                    }
                    Verb::Cas {
                        addr,
                        expected,
                        new,
                    } => {
                        out.push(tag::V_CAS);
                        u64le(out, addr.raw());
                        u64le(out, *expected);
                        u64le(out, *new);
                    }
                    Verb::Faa { addr, delta } => {
                        out.push(tag::V_FAA);
                        u64le(out, addr.raw());
                        u64le(out, *delta);
                    }
                }
            }
        }
        Message::BatchReply(replies) => {
            out.push(tag::BATCH_REPLY);
            u32le(out, replies.len() as u32);
            for r in replies {
                match r {
                    VerbReply::Read(d) => {
                        out.push(tag::V_READ);
                        u32le(out, d.len() as u32);
                        out.extend_from_slice(d);
                    }
                    VerbReply::Written => out.push(tag::V_WRITE),
                    VerbReply::Cas { old } => {
                        out.push(tag::V_CAS);
                        u64le(out, *old);
                    }
                    VerbReply::Faa { old } => {
                        out.push(tag::V_FAA);
                        u64le(out, *old);
                    }
                    VerbReply::Failed { code, message } => {
                        out.push(tag::V_FAILED);
                        out.extend_from_slice(&(*code as u16).to_le_bytes());
                        put_str(out, message);
                    }
                }
            }
        }
        Message::MailboxPush { mailbox, data } => {
            out.push(tag::PUSH);
            u64le(out, *mailbox);
            u32le(out, data.len() as u32);
            out.extend_from_slice(data);
        }
        Message::MailboxPull { mailbox, max_bytes } => {
            out.push(tag::PULL);
            u64le(out, *mailbox);
            u32le(out, *max_bytes);
        }
        Message::Pulled(bufs) => {
            out.push(tag::PULLED);
            u32le(out, bufs.len() as u32);
            for b in bufs {
                u32le(out, b.len() as u32);
                out.extend_from_slice(b);
            }
        }
        Message::Apply {
            base,
            attr,
            op,
            items,
        } => {
            out.push(tag::APPLY);
            u64le(out, base.raw());
            out.push(kind_code(*attr));
            out.push(*op as u8);
            u32le(out, items.len() as u32);
            for it in items {
                u64le(out, it.index);
                u64le(out, it.value);
            }
        }
        Message::Applied { changed } => {
            out.push(tag::APPLIED);
            u64le(out, *changed);
        }
        Message::InfoReply {
            node_id,
            capacity,
            used,
            regions,
        } => {
            out.push(tag::INFO_REPLY);
            out.extend_from_slice(&node_id.to_le_bytes());
            u64le(out, *capacity);
            u64le(out, *used);
            u64le(out, *regions);
        }
        Message::Error { code, message } => {
            out.push(tag::ERROR);
            out.extend_from_slice(&(*code as u16).to_le_bytes());
            put_str(out, message);
        }
    }
    Ok(())
}

/// A bounds-checked cursor over untrusted bytes.
struct Cur<'a> {
    b: &'a [u8],
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], FrameError> {
        if self.b.len() < n {
            return Err(FrameError::Truncated(what));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u8(&mut self, what: &'static str) -> Result<u8, FrameError> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &'static str) -> Result<u16, FrameError> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, FrameError> {
        let mut a = [0u8; 4];
        a.copy_from_slice(self.take(4, what)?);
        Ok(u32::from_le_bytes(a))
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, FrameError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(a))
    }
    fn string(&mut self, what: &'static str) -> Result<String, FrameError> {
        let n = self.u16(what)? as usize;
        let b = self.take(n, what)?;
        String::from_utf8(b.to_vec()).map_err(|_| FrameError::Malformed("string is not UTF-8"))
    }
    fn bytes32(&mut self, what: &'static str) -> Result<Vec<u8>, FrameError> {
        let n = self.u32(what)? as usize;
        Ok(self.take(n, what)?.to_vec())
    }
    /// A count of items each at least `min_size` bytes: refused if the rest cannot hold them, so
    /// a lying count never drives a huge allocation.
    fn count(&mut self, min_size: usize, what: &'static str) -> Result<usize, FrameError> {
        let n = self.u32(what)? as usize;
        if n.saturating_mul(min_size) > self.b.len() {
            return Err(FrameError::Truncated(what));
        }
        Ok(n)
    }
}

/// Reads the length prefix of a frame: how many bytes follow it. Errors when the frame is too
/// short to be a frame or longer than [`MAX_FRAME`], so a reader can refuse before buffering.
pub fn frame_body_len(prefix: [u8; 4]) -> Result<usize, FrameError> {
    let len = u32::from_le_bytes(prefix) as usize;
    if len < HEADER - 4 || len + 4 > MAX_FRAME {
        return Err(FrameError::BadLength(len as u64));
    }
    Ok(len)
}

/// Reads the `len` bytes of a frame after its `prefix` (as [`frame_body_len`] gave them) and
/// returns the whole frame. The buffer grows as bytes arrive, so a length prefix that claims
/// more than the peer sends costs what it sent, not what it claimed.
pub fn read_frame_rest(
    r: &mut impl std::io::Read,
    prefix: [u8; 4],
    len: usize,
) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(4 + len.min(64 << 10));
    buf.extend_from_slice(&prefix);
    use std::io::Read as _;
    r.by_ref().take(len as u64).read_to_end(&mut buf)?;
    if buf.len() != 4 + len {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("frame cut short: {} of {len} bytes", buf.len() - 4),
        ));
    }
    Ok(buf)
}

/// Decodes exactly one complete frame (length prefix included). Pure and panic-free over any
/// input: this is what stands between the network and the server's memory.
pub fn decode_frame(buf: &[u8]) -> Result<Frame, FrameError> {
    if buf.len() < 4 {
        return Err(FrameError::Truncated("length prefix"));
    }
    let len = frame_body_len([buf[0], buf[1], buf[2], buf[3]])?;
    if len != buf.len() - 4 {
        return Err(FrameError::BadLength(len as u64));
    }
    let mut c = Cur { b: &buf[4..] };
    let id = c.u64("request id")?;
    let t = c.u8("tag")?;
    let addr = |c: &mut Cur<'_>| c.u64("address").map(GlobalAddr::from_raw);
    let msg = match t {
        tag::HELLO => {
            let token = c.string("token")?;
            if token.len() > MAX_TOKEN {
                return Err(FrameError::Malformed("token too long"));
            }
            // Protocol 1 sent no version; 2 on append theirs.
            let version = if c.b.is_empty() {
                1
            } else {
                match c.u16("protocol version")? {
                    v if v >= 2 => v,
                    _ => return Err(FrameError::Malformed("protocol version below 2 sent")),
                }
            };
            Message::Hello { token, version }
        }
        tag::HELLO_OK => Message::HelloOk {
            node_id: c.u16("node id")?,
            capacity: c.u64("capacity")?,
            epoch: if c.b.is_empty() {
                None
            } else {
                Some(c.u64("epoch")?)
            },
        },
        tag::ALLOC_OWNED => Message::AllocOwned {
            size: c.u64("size")?,
            owner: c.u64("owner")?,
        },
        tag::FREE_OWNED => Message::FreeOwned {
            addr: addr(&mut c)?,
            epoch: c.u64("epoch")?,
            owner: c.u64("owner")?,
        },
        tag::ALLOC => Message::Alloc {
            size: c.u64("size")?,
        },
        tag::ALLOCATED => Message::Allocated {
            addr: addr(&mut c)?,
        },
        tag::FREE => Message::Free {
            addr: addr(&mut c)?,
        },
        tag::ALLOC_LEASED => Message::AllocLeased {
            size: c.u64("size")?,
        },
        tag::COMMIT => Message::Commit {
            addr: addr(&mut c)?,
        },
        tag::RDMA_CONNECT => Message::RdmaConnect {
            endpoint: decode_endpoint(c.take(ENDPOINT_BYTES, "queue-pair endpoint")?)?,
        },
        tag::RDMA_ACCEPT => Message::RdmaAccept {
            endpoint: decode_endpoint(c.take(ENDPOINT_BYTES, "queue-pair endpoint")?)?,
        },
        tag::REGION_KEY_OF => Message::RegionKeyOf {
            addr: addr(&mut c)?,
        },
        tag::REGION_KEYED => Message::RegionKeyed {
            key: decode_region_key(c.take(REGION_KEY_BYTES, "region key")?)?,
        },
        tag::DONE => Message::Done,
        tag::INFO => Message::Info,
        tag::BATCH => {
            let n = c.count(13, "batch")?;
            let mut verbs = Vec::with_capacity(n);
            for _ in 0..n {
                let v = match c.u8("verb tag")? {
                    tag::V_READ => Verb::Read {
                        addr: addr(&mut c)?,
                        len: c.u32("read length")?,
                    },
                    tag::V_WRITE => Verb::Write {
                        addr: addr(&mut c)?,
                        data: c.bytes32("write data")?,
                    },
                    tag::V_CAS => Verb::Cas {
                        addr: addr(&mut c)?,
                        expected: c.u64("cas expected")?,
                        new: c.u64("cas new")?,
                    },
                    tag::V_FAA => Verb::Faa {
                        addr: addr(&mut c)?,
                        delta: c.u64("faa delta")?,
                    },
                    other => return Err(FrameError::UnknownTag(other)),
                };
                verbs.push(v);
            }
            Message::Batch(verbs)
        }
        tag::BATCH_REPLY => {
            let n = c.count(1, "batch reply")?;
            let mut replies = Vec::with_capacity(n);
            for _ in 0..n {
                let r = match c.u8("reply tag")? {
                    tag::V_READ => VerbReply::Read(c.bytes32("read data")?),
                    tag::V_WRITE => VerbReply::Written,
                    tag::V_CAS => VerbReply::Cas {
                        old: c.u64("cas old")?,
                    },
                    tag::V_FAA => VerbReply::Faa {
                        old: c.u64("faa old")?,
                    },
                    tag::V_FAILED => VerbReply::Failed {
                        code: ErrorCode::from_u16(c.u16("error code")?),
                        message: c.string("error message")?,
                    },
                    other => return Err(FrameError::UnknownTag(other)),
                };
                replies.push(r);
            }
            Message::BatchReply(replies)
        }
        tag::PUSH => Message::MailboxPush {
            mailbox: c.u64("mailbox")?,
            data: c.bytes32("mailbox data")?,
        },
        tag::PULL => Message::MailboxPull {
            mailbox: c.u64("mailbox")?,
            max_bytes: c.u32("max bytes")?,
        },
        tag::PULLED => {
            let n = c.count(4, "pulled buffers")?;
            let mut bufs = Vec::with_capacity(n);
            for _ in 0..n {
                bufs.push(c.bytes32("pulled buffer")?);
            }
            Message::Pulled(bufs)
        }
        tag::APPLY => {
            let base = addr(&mut c)?;
            let attr = match c.u8("attribute kind")? {
                1 => ElementKind::U32,
                2 => ElementKind::U64,
                3 => ElementKind::F64,
                _ => return Err(FrameError::Malformed("unknown attribute kind")),
            };
            let op = match c.u8("update op")? {
                1 => UpdateOp::Min,
                2 => UpdateOp::Add,
                _ => return Err(FrameError::Malformed("unknown update op")),
            };
            let n = c.count(16, "update items")?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(UpdateItem {
                    index: c.u64("item index")?,
                    value: c.u64("item value")?,
                });
            }
            Message::Apply {
                base,
                attr,
                op,
                items,
            }
        }
        tag::APPLIED => Message::Applied {
            changed: c.u64("changed")?,
        },
        tag::INFO_REPLY => Message::InfoReply {
            node_id: c.u16("node id")?,
            capacity: c.u64("capacity")?,
            used: c.u64("used")?,
            regions: c.u64("regions")?,
        },
        tag::ERROR => Message::Error {
            code: ErrorCode::from_u16(c.u16("error code")?),
            message: c.string("error message")?,
        },
        other => return Err(FrameError::UnknownTag(other)),
    };
    if !c.b.is_empty() {
        return Err(FrameError::Malformed("trailing bytes"));
    }
    Ok(Frame { id, msg })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(n: u64) -> GlobalAddr {
        GlobalAddr::new(3, n).unwrap()
    }

    fn all() -> Vec<Message> {
        vec![
            Message::Hello {
                token: "s3cret".into(),
                version: 1,
            },
            Message::Hello {
                token: "s3cret".into(),
                version: PROTOCOL_VERSION,
            },
            Message::HelloOk {
                node_id: 3,
                capacity: 1 << 30,
                epoch: None,
            },
            Message::HelloOk {
                node_id: 3,
                capacity: 1 << 30,
                epoch: Some(0xdead_beef),
            },
            Message::AllocOwned {
                size: 4096,
                owner: 77,
            },
            Message::FreeOwned {
                addr: a(4096),
                epoch: 5,
                owner: 77,
            },
            Message::Alloc { size: 4096 },
            Message::Allocated { addr: a(4096) },
            Message::Free { addr: a(4096) },
            Message::AllocLeased { size: 64 },
            Message::Commit { addr: a(4096) },
            Message::Done,
            Message::Info,
            Message::Batch(vec![
                Verb::Read {
                    addr: a(8),
                    len: 32,
                },
                Verb::Write {
                    addr: a(16),
                    data: vec![1, 2, 3],
                },
                Verb::Cas {
                    addr: a(24),
                    expected: 1,
                    new: 2,
                },
                Verb::Faa {
                    addr: a(32),
                    delta: u64::MAX,
                },
            ]),
            Message::BatchReply(vec![
                VerbReply::Read(vec![9; 7]),
                VerbReply::Written,
                VerbReply::Cas { old: 5 },
                VerbReply::Faa { old: 6 },
                VerbReply::Failed {
                    code: ErrorCode::OutOfBounds,
                    message: "no".into(),
                },
            ]),
            Message::MailboxPush {
                mailbox: 2,
                data: vec![5; 100],
            },
            Message::MailboxPull {
                mailbox: 2,
                max_bytes: 1 << 20,
            },
            Message::Pulled(vec![vec![1], vec![], vec![2, 3]]),
            Message::Apply {
                base: a(4096),
                attr: ElementKind::F64,
                op: UpdateOp::Add,
                items: vec![UpdateItem {
                    index: 3,
                    value: 1.5f64.to_bits(),
                }],
            },
            Message::Applied { changed: 12 },
            Message::InfoReply {
                node_id: 3,
                capacity: 10,
                used: 5,
                regions: 1,
            },
            Message::Error {
                code: ErrorCode::Capacity,
                message: "full".into(),
            },
            Message::RdmaConnect {
                endpoint: QpEndpoint {
                    lid: 1,
                    qp_num: 77,
                    psn: 5,
                    mtu: 3,
                    gid: [0; 16],
                },
            },
            Message::RdmaAccept {
                endpoint: QpEndpoint {
                    lid: 0,
                    qp_num: 78,
                    psn: 9,
                    mtu: 5,
                    gid: [1; 16],
                },
            },
            Message::RegionKeyOf { addr: a(4100) },
            Message::RegionKeyed {
                key: RegionKey {
                    start: a(4096),
                    len: 64,
                    remote_va: 0x1000,
                    rkey: 42,
                },
            },
        ]
    }

    #[test]
    fn every_message_round_trips_and_wire_len_is_exact() {
        for (i, m) in all().into_iter().enumerate() {
            let mut buf = Vec::new();
            encode_frame(i as u64, &m, &mut buf).unwrap();
            assert_eq!(buf.len(), m.wire_len(), "{m:?}");
            let f = decode_frame(&buf).unwrap();
            assert_eq!(f.id, i as u64);
            assert_eq!(f.msg, m);
        }
    }

    #[test]
    fn truncations_and_garbage_are_errors_not_panics() {
        for m in all() {
            let mut buf = Vec::new();
            encode_frame(1, &m, &mut buf).unwrap();
            for cut in 0..buf.len() {
                let mut b = buf[..cut].to_vec();
                if b.len() >= 4 {
                    let l = (b.len() - 4) as u32;
                    b[..4].copy_from_slice(&l.to_le_bytes());
                }
                match decode_frame(&b) {
                    Err(_) => {}
                    // A version-2 HELLO or HELLO_OK without its tail is the version-1 form.
                    Ok(f) => assert!(
                        matches!(
                            (&m, &f.msg),
                            (Message::Hello { .. }, Message::Hello { version: 1, .. })
                                | (
                                    Message::HelloOk { .. },
                                    Message::HelloOk { epoch: None, .. }
                                )
                        ),
                        "{m:?} cut at {cut} decoded as {:?}",
                        f.msg
                    ),
                }
            }
        }
        // A batch claiming 2^32-1 verbs in a tiny frame must not allocate for them.
        let mut b = vec![0u8; 4];
        b.extend_from_slice(&7u64.to_le_bytes());
        b.push(7);
        b.extend_from_slice(&u32::MAX.to_le_bytes());
        let l = (b.len() - 4) as u32;
        b[..4].copy_from_slice(&l.to_le_bytes());
        assert!(decode_frame(&b).is_err());
        assert!(frame_body_len(u32::MAX.to_le_bytes()).is_err());
        // Pseudo-random bytes.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            let n = (x % 64) as usize;
            let mut b = Vec::with_capacity(n);
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b.push(x as u8);
            }
            if b.len() >= 4 {
                let l = (b.len() - 4) as u32;
                b[..4].copy_from_slice(&l.to_le_bytes());
            }
            let _ = decode_frame(&b);
        }
    }
}
