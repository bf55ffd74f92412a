//! The wire protocol between a session and a compute-node worker (`frontier compute`).
//!
//! One TCP connection per worker per session; little-endian frames `u32 len | u8 tag | payload`
//! (`len` counts the tag and payload, at most [`MAX_FRAME`]). The session sends `HELLO token
//! version` (answered `HELLO_OK` or `ERROR`), then one `JOB` per algorithm call, each answered
//! `DONE` or `ERROR`. While a job runs, a worker greeted with version 2 or more sends `ALIVE`
//! every [`ALIVE_EVERY`], so a session tells a frozen worker (its connection open, nothing
//! sent) from a busy one within [`SILENCE_LIMIT`]. A worker that sees the connection close
//! mid-job aborts the job. A frame is read within a deadline for the whole of it, into a buffer
//! that grows as its bytes arrive (a length prefix is a claim, not an allocation).
//!
//! Decoding is a pure function: every length is checked against the bytes present before
//! anything is allocated, trailing bytes are an error, and it never panics.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::ops::Range;
use std::time::{Duration, Instant};

use super::addr::GlobalAddr;
use super::collectives::JobRegion;
use super::stats::{StatsSnapshot, STATS_FIELDS};

/// Largest frame (tag and payload) either side accepts.
pub const MAX_FRAME: u32 = 1 << 20;
/// Largest HELLO frame: a stranger who has not shown the token cannot make a worker buffer more.
pub const MAX_HELLO_FRAME: u32 = 64 + 1024;
/// The protocol this build speaks. 1: the first. 2: HELLO carries the session's version, and
/// workers send `ALIVE` during a job to sessions of version 2 or more.
pub const PROTOCOL_VERSION: u16 = 2;
/// How often a worker says `ALIVE` while a job runs.
pub const ALIVE_EVERY: Duration = Duration::from_secs(1);
/// How long a session waits for any word of a running worker before it calls it frozen or
/// dead (as a memory node that stops answering: the same 4 s).
pub const SILENCE_LIMIT: Duration = Duration::from_secs(4);

/// Most members of one run a job may name.
pub const MAX_MEMBERS: u32 = 4096;
/// Largest collectives slot a job may name (words per member per round).
pub const MAX_SLOT_WORDS: u32 = 1 << 24;
/// Most worker threads a job may ask for (as `SET threads`).
pub const MAX_THREADS: u32 = 1024;

const TAG_HELLO: u8 = 1;
const TAG_HELLO_OK: u8 = 2;
const TAG_JOB: u8 = 3;
const TAG_DONE: u8 = 4;
const TAG_ERROR: u8 = 5;
const TAG_ALIVE: u8 = 6;

/// A parameter value of an algorithm call, as the planner checked it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JobValue {
    Int(u64),
    Float(f64),
}

/// Everything a worker needs to run its part of one algorithm call.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// `host:port` of every memory node of the graph.
    pub memory_nodes: Vec<String>,
    pub memory_token: String,
    /// `tcp` or `rdma`, as `SET memory_transport`.
    pub transport: String,
    /// The graph's name, for errors.
    pub graph: String,
    /// Where the graph descriptor is.
    pub descriptor: GlobalAddr,
    /// Where the run's collectives are.
    pub region: JobRegion,
    pub rank: u32,
    pub owned: Range<u32>,
    pub algorithm: String,
    /// The source vertex (internal id), for algorithms that take one.
    pub source: Option<u32>,
    pub params: Vec<(String, JobValue)>,
    pub threads: u32,
    /// `auto`, `push`, `block` or `pull`.
    pub mode: String,
    /// As `SET dm_update`.
    pub dm_update: String,
    pub cn_cache: u64,
    pub segmented_pull: bool,
}

/// What a worker reports after its part of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    pub iterations: u64,
    pub micros: u64,
    /// The worker process's peak resident set during this job (VmHWM, reset when the job
    /// starts where the kernel allows it), bytes.
    pub peak_rss: u64,
    /// The remote operations of the worker's store during the job (its collectives' barrier
    /// polling is not counted: it depends on timing), for PROFILE and the cost model.
    pub remote: StatsSnapshot,
}

/// One frame of the compute-node protocol.
#[derive(Debug, Clone, PartialEq)]
pub enum ComputeMessage {
    /// The token, and the session's protocol version (1 is sent as the first protocol did,
    /// with no version field).
    Hello {
        token: String,
        version: u16,
    },
    HelloOk,
    /// A running job's worker is alive (sent to sessions of version 2 or more).
    Alive,
    Job(Box<Job>),
    Done(Done),
    Error(String),
}

/// Why bytes are not a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("truncated frame")]
    Truncated,
    #[error("unknown tag {0}")]
    UnknownTag(u8),
    #[error("{0} trailing bytes")]
    Trailing(usize),
    #[error("a string is not UTF-8")]
    NotUtf8,
    #[error("bad value: {0}")]
    Bad(&'static str),
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

impl ComputeMessage {
    /// The frame's bytes after the length prefix (tag and payload).
    pub fn encode_body(&self) -> Vec<u8> {
        let mut o = Vec::new();
        match self {
            ComputeMessage::Hello { token, version } => {
                o.push(TAG_HELLO);
                put_str(&mut o, token);
                if *version >= 2 {
                    o.extend_from_slice(&version.to_le_bytes());
                }
            }
            ComputeMessage::HelloOk => o.push(TAG_HELLO_OK),
            ComputeMessage::Alive => o.push(TAG_ALIVE),
            ComputeMessage::Job(j) => {
                o.push(TAG_JOB);
                o.extend_from_slice(&(j.memory_nodes.len() as u32).to_le_bytes());
                for n in &j.memory_nodes {
                    put_str(&mut o, n);
                }
                put_str(&mut o, &j.memory_token);
                put_str(&mut o, &j.transport);
                put_str(&mut o, &j.graph);
                o.extend_from_slice(&j.descriptor.raw().to_le_bytes());
                o.extend_from_slice(&j.region.addr.raw().to_le_bytes());
                o.extend_from_slice(&j.region.size.to_le_bytes());
                o.extend_from_slice(&j.region.slot_words.to_le_bytes());
                o.extend_from_slice(&j.rank.to_le_bytes());
                o.extend_from_slice(&j.owned.start.to_le_bytes());
                o.extend_from_slice(&j.owned.end.to_le_bytes());
                put_str(&mut o, &j.algorithm);
                match j.source {
                    Some(s) => {
                        o.push(1);
                        o.extend_from_slice(&s.to_le_bytes());
                    }
                    None => o.push(0),
                }
                o.extend_from_slice(&(j.params.len() as u32).to_le_bytes());
                for (name, v) in &j.params {
                    put_str(&mut o, name);
                    match v {
                        JobValue::Int(n) => {
                            o.push(0);
                            o.extend_from_slice(&n.to_le_bytes());
                        }
                        JobValue::Float(x) => {
                            o.push(1);
                            o.extend_from_slice(&x.to_bits().to_le_bytes());
                        }
                    }
                }
                o.extend_from_slice(&j.threads.to_le_bytes());
                put_str(&mut o, &j.mode);
                put_str(&mut o, &j.dm_update);
                o.extend_from_slice(&j.cn_cache.to_le_bytes());
                o.push(j.segmented_pull as u8);
            }
            ComputeMessage::Done(d) => {
                o.push(TAG_DONE);
                o.extend_from_slice(&d.iterations.to_le_bytes());
                o.extend_from_slice(&d.micros.to_le_bytes());
                o.extend_from_slice(&d.peak_rss.to_le_bytes());
                for x in d.remote.to_array() {
                    o.extend_from_slice(&x.to_le_bytes());
                }
            }
            ComputeMessage::Error(m) => {
                o.push(TAG_ERROR);
                put_str(&mut o, m);
            }
        }
        o
    }

    /// Decodes a frame body (tag and payload). Never panics.
    pub fn decode_body(bytes: &[u8]) -> Result<ComputeMessage, DecodeError> {
        let mut r = Cursor(bytes);
        let msg = match r.u8()? {
            TAG_HELLO => {
                let token = r.str()?;
                let version = if r.0.is_empty() {
                    1
                } else {
                    let b = r.take(2)?;
                    match u16::from_le_bytes([b[0], b[1]]) {
                        v if v >= 2 => v,
                        _ => return Err(DecodeError::Bad("protocol version below 2 sent")),
                    }
                };
                ComputeMessage::Hello { token, version }
            }
            TAG_HELLO_OK => ComputeMessage::HelloOk,
            TAG_ALIVE => ComputeMessage::Alive,
            TAG_JOB => {
                let n = r.u32()? as usize;
                // Every address takes at least its 4-byte length: no allocation beyond the input.
                if n > r.0.len() / 4 {
                    return Err(DecodeError::Truncated);
                }
                let mut memory_nodes = Vec::with_capacity(n);
                for _ in 0..n {
                    memory_nodes.push(r.str()?);
                }
                let memory_token = r.str()?;
                let transport = r.str()?;
                let graph = r.str()?;
                let descriptor = GlobalAddr::from_raw(r.u64()?);
                let region = JobRegion {
                    addr: GlobalAddr::from_raw(r.u64()?),
                    size: r.u32()?,
                    slot_words: r.u32()?,
                };
                let rank = r.u32()?;
                let owned = r.u32()?..r.u32()?;
                if region.size == 0
                    || region.size > MAX_MEMBERS
                    || rank >= region.size
                    || region.slot_words == 0
                    || region.slot_words > MAX_SLOT_WORDS
                {
                    return Err(DecodeError::Bad("rank, members or slot size"));
                }
                if owned.start > owned.end {
                    return Err(DecodeError::Bad("owned range"));
                }
                let algorithm = r.str()?;
                let source = match r.u8()? {
                    0 => None,
                    1 => Some(r.u32()?),
                    _ => return Err(DecodeError::Bad("source flag")),
                };
                let n = r.u32()? as usize;
                if n > r.0.len() / 13 {
                    return Err(DecodeError::Truncated);
                }
                let mut params = Vec::with_capacity(n);
                for _ in 0..n {
                    let name = r.str()?;
                    let v = match r.u8()? {
                        0 => JobValue::Int(r.u64()?),
                        1 => JobValue::Float(f64::from_bits(r.u64()?)),
                        _ => return Err(DecodeError::Bad("parameter kind")),
                    };
                    params.push((name, v));
                }
                let threads = r.u32()?;
                if threads == 0 || threads > MAX_THREADS {
                    return Err(DecodeError::Bad("threads"));
                }
                let mode = r.str()?;
                let dm_update = r.str()?;
                let cn_cache = r.u64()?;
                let segmented_pull = match r.u8()? {
                    0 => false,
                    1 => true,
                    _ => return Err(DecodeError::Bad("segmented_pull flag")),
                };
                ComputeMessage::Job(Box::new(Job {
                    memory_nodes,
                    memory_token,
                    transport,
                    graph,
                    descriptor,
                    region,
                    rank,
                    owned,
                    algorithm,
                    source,
                    params,
                    threads,
                    mode,
                    dm_update,
                    cn_cache,
                    segmented_pull,
                }))
            }
            TAG_DONE => ComputeMessage::Done(Done {
                iterations: r.u64()?,
                micros: r.u64()?,
                peak_rss: r.u64()?,
                remote: {
                    let mut a = [0u64; STATS_FIELDS];
                    for x in a.iter_mut() {
                        *x = r.u64()?;
                    }
                    StatsSnapshot::from_array(&a)
                },
            }),
            TAG_ERROR => ComputeMessage::Error(r.str()?),
            t => return Err(DecodeError::UnknownTag(t)),
        };
        if !r.0.is_empty() {
            return Err(DecodeError::Trailing(r.0.len()));
        }
        Ok(msg)
    }

    /// Writes the frame (length prefix, tag, payload) and flushes.
    pub fn write_to(&self, w: &mut impl Write) -> std::io::Result<()> {
        let body = self.encode_body();
        let mut frame = Vec::with_capacity(4 + body.len());
        frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
        frame.extend_from_slice(&body);
        w.write_all(&frame)?;
        w.flush()
    }

    /// Reads one frame. `Ok(None)` when the peer closed between frames; an error for a
    /// frame cut short, too long, or not decodable.
    pub fn read_from(r: &mut impl Read) -> std::io::Result<Option<ComputeMessage>> {
        let mut len = [0u8; 4];
        match r.read(&mut len[..1])? {
            0 => return Ok(None),
            _ => r.read_exact(&mut len[1..])?,
        }
        let len = checked_len(len, MAX_FRAME)?;
        // Grown as the bytes arrive: a lying prefix costs what was sent, not what it claims.
        let mut body = Vec::with_capacity(len.min(64 << 10));
        r.by_ref().take(len as u64).read_to_end(&mut body)?;
        if body.len() != len {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        decode(&body).map(Some)
    }
}

fn checked_len(prefix: [u8; 4], max: u32) -> std::io::Result<usize> {
    let len = u32::from_le_bytes(prefix);
    if len == 0 || len > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a frame of {len} bytes (at most {max})"),
        ));
    }
    Ok(len as usize)
}

fn decode(body: &[u8]) -> std::io::Result<ComputeMessage> {
    ComputeMessage::decode_body(body)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))
}

/// What waiting on a connection for the next frame gave.
#[derive(Debug)]
pub enum Awaited {
    Frame(ComputeMessage),
    /// The peer closed the connection between frames.
    Closed,
    /// `stop` said to stop waiting.
    Stopped,
}

/// How often a wait looks at its stop condition.
const POLL: Duration = Duration::from_millis(50);
/// How long the whole of a frame may take once its first byte arrived.
const FRAME_TIMEOUT: Duration = Duration::from_secs(10);

/// Waits for the next frame on `stream`, looking at `stop` every 50 ms, so neither a silent
/// peer nor a long job keeps the caller from noticing a cancel, a signal, or a closed peer.
/// Once a frame's first byte is in, the whole frame must follow within 10 s.
pub fn await_frame(stream: &TcpStream, stop: &dyn Fn() -> bool) -> std::io::Result<Awaited> {
    await_frame_within(stream, stop, None, MAX_FRAME)
}

/// [`await_frame`] with a `deadline` for the whole frame, from now (a HELLO: a peer that
/// trickles its bytes is cut off at the deadline, not kept while each byte comes in time),
/// and a smaller largest frame `max`.
pub fn await_frame_within(
    stream: &TcpStream,
    stop: &dyn Fn() -> bool,
    deadline: Option<Instant>,
    max: u32,
) -> std::io::Result<Awaited> {
    let late = |d: Option<Instant>| d.is_some_and(|d| Instant::now() >= d);
    let mut probe = [0u8; 1];
    loop {
        if stop() {
            return Ok(Awaited::Stopped);
        }
        if late(deadline) {
            return Err(timed_out());
        }
        stream.set_read_timeout(Some(POLL))?;
        match stream.peek(&mut probe) {
            Ok(0) => return Ok(Awaited::Closed),
            Ok(_) => break,
            Err(e) if retry(&e) => {}
            Err(e) => return Err(e),
        }
    }
    let deadline = deadline.unwrap_or_else(|| Instant::now() + FRAME_TIMEOUT);
    let mut prefix = [0u8; 4];
    if !fill(stream, &mut prefix, deadline, stop)? {
        return Ok(Awaited::Stopped);
    }
    let len = checked_len(prefix, max)?;
    let mut body = Vec::with_capacity(len.min(64 << 10));
    while body.len() < len {
        let at = body.len();
        let step = (len - at).min(64 << 10);
        body.resize(at + step, 0);
        if !fill(stream, &mut body[at..], deadline, stop)? {
            return Ok(Awaited::Stopped);
        }
    }
    decode(&body).map(Awaited::Frame)
}

fn retry(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}

fn timed_out() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "the frame did not arrive whole in time",
    )
}

/// Fills `buf` from `stream` by `deadline`, looking at `stop` between reads; false on stop.
fn fill(
    mut stream: &TcpStream,
    buf: &mut [u8],
    deadline: Instant,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        if stop() {
            return Ok(false);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out());
        }
        stream.set_read_timeout(Some(left.min(POLL)))?;
        match stream.read(&mut buf[got..]) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if retry(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Whether the peer of `stream` has closed it (data waiting, or none yet, is "open").
pub fn peer_closed(stream: &TcpStream) -> bool {
    let mut probe = [0u8; 1];
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let closed = match stream.peek(&mut probe) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
        ),
    };
    let _ = stream.set_nonblocking(false);
    closed
}

/// A cursor that refuses to read past the end.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError::Truncated);
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        let b = self.take(8)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        Ok(u64::from_le_bytes(w))
    }
    fn str(&mut self) -> Result<String, DecodeError> {
        let n = self.u32()? as usize;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| DecodeError::NotUtf8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Job {
            memory_nodes: vec!["127.0.0.1:7001".into(), "127.0.0.1:7002".into()],
            memory_token: "secret".into(),
            transport: "tcp".into(),
            graph: "g".into(),
            descriptor: GlobalAddr::new(1, 4096).unwrap(),
            region: JobRegion {
                addr: GlobalAddr::new(1, 8192).unwrap(),
                size: 3,
                slot_words: 512,
            },
            rank: 2,
            owned: 100..250,
            algorithm: "pagerank".into(),
            source: Some(7),
            params: vec![
                ("iterations".into(), JobValue::Int(10)),
                ("damping".into(), JobValue::Float(0.85)),
            ],
            threads: 2,
            mode: "auto".into(),
            dm_update: "valrd".into(),
            cn_cache: 16,
            segmented_pull: true,
        }
    }

    fn every_message() -> Vec<ComputeMessage> {
        vec![
            ComputeMessage::Hello {
                token: "tok".into(),
                version: 1,
            },
            ComputeMessage::Hello {
                token: "tok".into(),
                version: PROTOCOL_VERSION,
            },
            ComputeMessage::HelloOk,
            ComputeMessage::Alive,
            ComputeMessage::Job(Box::new(job())),
            ComputeMessage::Job(Box::new(Job {
                source: None,
                params: vec![],
                memory_nodes: vec![],
                ..job()
            })),
            ComputeMessage::Done(Done {
                iterations: 3,
                micros: 4,
                peak_rss: 5,
                remote: StatsSnapshot {
                    reads: 6,
                    round_trips: 7,
                    bytes_sent: u64::MAX,
                    ..Default::default()
                },
            }),
            ComputeMessage::Error("wrong".into()),
        ]
    }

    #[test]
    fn every_message_reads_back_as_written() {
        for m in every_message() {
            let mut wire = Vec::new();
            m.write_to(&mut wire).unwrap();
            let back = ComputeMessage::read_from(&mut &wire[..]).unwrap().unwrap();
            assert_eq!(back, m);
        }
        assert!(ComputeMessage::read_from(&mut &[][..]).unwrap().is_none());
    }

    #[test]
    fn every_truncation_and_extension_is_refused() {
        for m in every_message() {
            let body = m.encode_body();
            for cut in 0..body.len() {
                match ComputeMessage::decode_body(&body[..cut]) {
                    Err(_) => {}
                    // A version-2 HELLO without its version is the version-1 form.
                    Ok(back) => assert!(
                        matches!(
                            (&m, &back),
                            (
                                ComputeMessage::Hello { version: 2, .. },
                                ComputeMessage::Hello { version: 1, .. }
                            )
                        ),
                        "{m:?} cut at {cut} read as {back:?}"
                    ),
                }
            }
            let mut longer = body.clone();
            longer.push(0);
            assert!(ComputeMessage::decode_body(&longer).is_err());
            let mut wire = Vec::new();
            m.write_to(&mut wire).unwrap();
            for cut in 1..wire.len() {
                assert!(ComputeMessage::read_from(&mut &wire[..cut]).is_err());
            }
        }
    }

    #[test]
    fn impossible_values_are_refused() {
        let bad =
            |j: Job| ComputeMessage::decode_body(&ComputeMessage::Job(Box::new(j)).encode_body());
        assert!(bad(Job { rank: 3, ..job() }).is_err());
        assert!(bad(Job {
            threads: 0,
            ..job()
        })
        .is_err());
        assert!(bad(Job {
            threads: 5000,
            ..job()
        })
        .is_err());
        let huge = JobRegion {
            slot_words: u32::MAX,
            ..job().region
        };
        assert!(bad(Job {
            region: huge,
            ..job()
        })
        .is_err());
        // A range that ends before it starts.
        let (start, end) = (9, 3);
        assert!(bad(Job {
            owned: start..end,
            ..job()
        })
        .is_err());
        let mut body = ComputeMessage::Hello {
            token: "ab".into(),
            version: 1,
        }
        .encode_body();
        body[5] = 0xff;
        assert_eq!(
            ComputeMessage::decode_body(&body),
            Err(DecodeError::NotUtf8)
        );
        // A count of a billion addresses in a short frame allocates nothing.
        let mut lying = vec![TAG_JOB];
        lying.extend_from_slice(&1_000_000_000u32.to_le_bytes());
        assert_eq!(
            ComputeMessage::decode_body(&lying),
            Err(DecodeError::Truncated)
        );
        let mut huge = Vec::new();
        huge.extend_from_slice(&(MAX_FRAME + 1).to_le_bytes());
        assert!(ComputeMessage::read_from(&mut &huge[..]).is_err());
    }

    #[test]
    fn garbage_never_panics() {
        let mut r = base::Xoshiro256::new(3);
        let good = ComputeMessage::Job(Box::new(job())).encode_body();
        for _ in 0..5000 {
            let mut b = good.clone();
            for _ in 0..1 + r.below(4) {
                let at = r.below(b.len() as u64) as usize;
                b[at] = r.below(256) as u8;
            }
            b.truncate(r.below(b.len() as u64 + 1) as usize);
            let _ = ComputeMessage::decode_body(&b);
        }
    }
}
