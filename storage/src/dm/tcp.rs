//! The TCP transport: length-prefixed frames, many requests in flight per connection.
//!
//! Requests carry ids; a reader thread routes each reply to its ticket, so any number of threads
//! can share one connection (multiplexed) and each can pipeline batches. Whether one shared
//! connection or one per worker thread is faster is measured in docs/PERFORMANCE.md.
//!
//! Failure: when the connection breaks, every pending ticket fails at once and every later call
//! fails at submit, naming the node; a node that stops answering without closing is declared dead
//! after `request_timeout`. No call waits longer than that.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{bounded, Sender};

use super::protocol::{
    decode_frame, encode_frame, frame_body_len, read_frame_rest, Message, PROTOCOL_VERSION,
};
use super::stats::{StatsSnapshot, TransportStats};
use super::transport::{Connector, Ticket, Transport};
use crate::error::{Result, StoreError};

/// Timeouts of a TCP transport.
#[derive(Debug, Clone, Copy)]
pub struct TcpOptions {
    /// Bound on connecting and on the token handshake.
    pub connect_timeout: Duration,
    /// Bound on waiting for any one reply; past it the node is presumed dead. Default 4 s, so a
    /// dead node is reported within 5 s even when its host vanished without closing.
    pub request_timeout: Duration,
}

impl Default for TcpOptions {
    fn default() -> Self {
        TcpOptions {
            connect_timeout: Duration::from_secs(3),
            request_timeout: Duration::from_secs(4),
        }
    }
}

type ReplySender = Sender<Result<Message>>;

struct Pending {
    map: HashMap<u64, ReplySender>,
    /// Why the connection is unusable; set once, never cleared.
    dead: Option<String>,
}

struct Conn {
    name: Arc<str>,
    node_id: u16,
    epoch: u64,
    stream: TcpStream,
    writer: Mutex<(TcpStream, Vec<u8>)>,
    pending: Mutex<Pending>,
    next_id: AtomicU64,
    stats: TransportStats,
    request_timeout: Duration,
}

impl Conn {
    fn err(&self, message: String) -> StoreError {
        StoreError::Remote {
            node: self.name.to_string(),
            message,
        }
    }

    /// Marks the connection dead and fails every pending request with `why`.
    fn kill(&self, why: &str) {
        let drained: Vec<ReplySender> = {
            let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            if p.dead.is_none() {
                p.dead = Some(why.to_string());
            }
            p.map.drain().map(|(_, s)| s).collect()
        };
        let _ = self.stream.shutdown(Shutdown::Both);
        for s in drained {
            let _ = s.send(Err(self.err(format!("connection lost: {why}"))));
        }
    }

    fn reader(self: Arc<Self>, mut r: TcpStream) {
        let why = loop {
            let mut prefix = [0u8; 4];
            if let Err(e) = r.read_exact(&mut prefix) {
                break format!("read failed: {e}");
            }
            let len = match frame_body_len(prefix) {
                Ok(l) => l,
                Err(e) => break format!("bad reply frame: {e}"),
            };
            let buf = match read_frame_rest(&mut r, prefix, len) {
                Ok(b) => b,
                Err(e) => break format!("read failed: {e}"),
            };
            let frame = match decode_frame(&buf) {
                Ok(f) => f,
                Err(e) => break format!("bad reply frame: {e}"),
            };
            self.stats.record_reply(buf.len());
            let tx = self
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .map
                .remove(&frame.id);
            // No entry: the request timed out and its ticket is gone; drop the reply.
            if let Some(tx) = tx {
                let _ = tx.send(Ok(frame.msg));
            }
        };
        self.kill(&why);
    }
}

/// A connection to one memory node over TCP.
pub struct TcpTransport {
    conn: Arc<Conn>,
    reader: Option<JoinHandle<()>>,
}

impl TcpTransport {
    /// Connects and presents `token`; fails (naming the node) on a refused token or timeout.
    pub fn connect(
        addr: impl ToSocketAddrs,
        token: &str,
        opts: TcpOptions,
    ) -> Result<TcpTransport> {
        let addrs: Vec<SocketAddr> = addr
            .to_socket_addrs()
            .map_err(|e| StoreError::Other(format!("memory node address: {e}")))?
            .collect();
        let Some(&sa) = addrs.first() else {
            return Err(StoreError::Other(
                "memory node address resolves to nothing".into(),
            ));
        };
        let fail = |message: String| StoreError::Remote {
            node: sa.to_string(),
            message,
        };
        let mut stream = TcpStream::connect_timeout(&sa, opts.connect_timeout)
            .map_err(|e| fail(format!("cannot connect: {e}")))?;
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(opts.connect_timeout))
            .map_err(|e| fail(e.to_string()))?;
        stream
            .set_write_timeout(Some(opts.request_timeout))
            .map_err(|e| fail(e.to_string()))?;
        let mut out = Vec::new();
        encode_frame(
            0,
            &Message::Hello {
                token: token.to_string(),
                version: PROTOCOL_VERSION,
            },
            &mut out,
        )
        .map_err(|e| fail(format!("token: {e}")))?;
        stream
            .write_all(&out)
            .map_err(|e| fail(format!("handshake: {e}")))?;
        let mut prefix = [0u8; 4];
        stream.read_exact(&mut prefix).map_err(|e| {
            fail(if e.kind() == std::io::ErrorKind::UnexpectedEof {
                format!("closed the connection at the handshake: it may run an older frontier (memory-node protocol 1; this one speaks {PROTOCOL_VERSION}): restart it with this build's `frontier memnode`")
            } else {
                format!("handshake refused or timed out: {e}")
            })
        })?;
        let len = frame_body_len(prefix).map_err(|e| fail(format!("handshake: {e}")))?;
        if len > 4096 {
            return Err(fail("handshake reply too long".into()));
        }
        let mut buf = vec![0u8; 4 + len];
        buf[..4].copy_from_slice(&prefix);
        stream
            .read_exact(&mut buf[4..])
            .map_err(|e| fail(format!("handshake: {e}")))?;
        let (node_id, epoch) = match decode_frame(&buf)
            .map_err(|e| fail(format!("handshake: {e}")))?
            .msg
        {
            Message::HelloOk {
                node_id,
                epoch: Some(epoch),
                ..
            } => (node_id, epoch),
            Message::HelloOk { epoch: None, .. } => {
                return Err(fail(format!("speaks memory-node protocol 1 (no epoch; this frontier speaks {PROTOCOL_VERSION}): restart it with this build's `frontier memnode`")))
            }
            Message::Error { message, .. } => return Err(fail(format!("refused: {message}"))),
            m => return Err(fail(format!("handshake: unexpected {m:?}"))),
        };
        stream
            .set_read_timeout(None)
            .map_err(|e| fail(e.to_string()))?;
        let clone = |s: &TcpStream| s.try_clone().map_err(|e| fail(e.to_string()));
        let conn = Arc::new(Conn {
            name: format!("{sa} (id {node_id})").into(),
            node_id,
            epoch,
            writer: Mutex::new((clone(&stream)?, Vec::with_capacity(1 << 16))),
            stream: clone(&stream)?,
            pending: Mutex::new(Pending {
                map: HashMap::new(),
                dead: None,
            }),
            next_id: AtomicU64::new(1),
            stats: TransportStats::default(),
            request_timeout: opts.request_timeout,
        });
        let c = conn.clone();
        let reader = std::thread::Builder::new()
            .name(format!("dm-tcp-reader-{node_id}"))
            .spawn(move || c.reader(stream))
            .map_err(|e| fail(format!("cannot start reader thread: {e}")))?;
        Ok(TcpTransport {
            conn,
            reader: Some(reader),
        })
    }

    /// The node's epoch: drawn when it started, so a restarted node answers another one.
    pub fn epoch(&self) -> u64 {
        self.conn.epoch
    }

    /// Requests sent and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.conn.pending.lock().map(|p| p.map.len()).unwrap_or(0)
    }
}

impl Transport for TcpTransport {
    fn node_id(&self) -> u16 {
        self.conn.node_id
    }

    fn node_name(&self) -> &str {
        &self.conn.name
    }

    fn submit(&self, msg: Message) -> Result<Ticket> {
        let c = &self.conn;
        let id = c.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = bounded(1);
        {
            let mut p = c.pending.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(why) = &p.dead {
                return Err(c.err(format!("unavailable: {why}")));
            }
            p.map.insert(id, tx);
        }
        let sent = {
            let mut w = c.writer.lock().unwrap_or_else(|e| e.into_inner());
            let (stream, buf) = &mut *w;
            buf.clear();
            match encode_frame(id, &msg, buf) {
                Ok(()) => stream
                    .write_all(buf)
                    .map(|_| buf.len())
                    .map_err(|e| (true, format!("send failed: {e}"))),
                Err(e) => Err((false, format!("request not sent: {e}"))),
            }
        };
        match sent {
            Ok(n) => c.stats.record_request(&msg, n),
            Err((fatal, why)) => {
                c.pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .map
                    .remove(&id);
                if fatal {
                    c.kill(&why);
                }
                return Err(c.err(why));
            }
        }
        let hook_conn = Arc::downgrade(c);
        Ok(Ticket::pending(
            c.name.clone(),
            rx,
            c.request_timeout,
            Arc::new(move || {
                if let Some(c) = hook_conn.upgrade() {
                    c.kill("a reply timed out");
                }
            }),
        ))
    }

    fn stats(&self) -> StatsSnapshot {
        self.conn.stats.snapshot()
    }
}

/// Opens [`TcpTransport`]s with one token and one set of timeouts.
#[derive(Debug, Clone)]
pub struct TcpConnector {
    /// The shared secret every memory node was started with.
    pub token: String,
    /// Timeouts of each connection.
    pub opts: TcpOptions,
}

impl Connector for TcpConnector {
    type Transport = TcpTransport;

    fn connect(&self, addr: &str) -> Result<TcpTransport> {
        TcpTransport::connect(addr, &self.token, self.opts)
    }

    fn transport_name(&self) -> &'static str {
        "tcp"
    }
}

impl Drop for TcpTransport {
    fn drop(&mut self) {
        self.conn.kill("transport closed");
        if let Some(t) = self.reader.take() {
            let _ = t.join();
        }
    }
}
