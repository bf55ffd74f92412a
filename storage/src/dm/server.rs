//! The memory-node TCP server (`frontier memnode`): thread per connection, token handshake,
//! bounds-checked verbs through [`MemoryNode`], clean shutdown on SIGTERM/SIGINT.
//!
//! A peer can only hurt its own connection: a malformed or oversized frame closes that connection,
//! a refused address is an error reply, and nothing a peer sends panics the server.

use std::collections::HashMap;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::lease::Leases;
use super::protocol::{
    decode_frame, encode_frame, frame_body_len, ErrorCode, Frame, Message, MAX_TOKEN,
};
use super::region::MemoryNode;
use super::token::SecretToken;
use crate::error::{Result, StoreError};

/// Where a memory node listens when not told: loopback, so nothing is exposed by accident.
pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 7878);
/// Largest frame accepted before the token is checked: a stranger cannot make us buffer much.
const MAX_HELLO_FRAME: usize = 64 + MAX_TOKEN;
/// How long a new connection has to present its token.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// How often blocked reads and the accept loop look at the stop flag.
const POLL: Duration = Duration::from_millis(50);
/// Connections served at once; more are closed on accept (each costs a thread).
const MAX_CONNECTIONS: usize = 4096;

/// Settings of one memory node; the `frontier memnode` command line fills them.
#[derive(Debug, Clone)]
pub struct MemnodeOptions {
    /// Address to listen on; use a loopback address unless other machines must connect.
    pub listen: SocketAddr,
    /// Bytes of regions and mailbox buffers this node will hold at most.
    pub capacity: u64,
    /// The shared token, given directly (tests, embedding).
    pub token: Option<String>,
    /// A file whose trimmed content is the shared token (`--token-file`); wins over `token`.
    pub token_file: Option<PathBuf>,
    /// This node's id, the high 16 bits of the addresses it hands out.
    pub node_id: u16,
}

impl MemnodeOptions {
    /// Loopback on the default port, no token yet (one is generated and printed at start).
    pub fn new(capacity: u64) -> MemnodeOptions {
        MemnodeOptions {
            listen: DEFAULT_LISTEN,
            capacity,
            token: None,
            token_file: None,
            node_id: 0,
        }
    }
}

/// Set by the SIGTERM/SIGINT handler; only `run_memnode` looks at it.
static SIGNALED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    SIGNALED.store(true, Ordering::SeqCst);
}

fn install_signal_handlers() -> Result<()> {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; the handler only
        // stores to an atomic, which is async-signal-safe; the old action is not needed (null).
        let rc = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(StoreError::Other(format!(
                "memnode: cannot install signal handler: {}",
                io::Error::last_os_error()
            )));
        }
    }
    Ok(())
}

/// Installs the SIGTERM/SIGINT handlers and returns the flag they raise, for other servers of
/// this binary (`frontier compute`) that shut down the way a memory node does.
pub fn stop_on_signals() -> Result<&'static AtomicBool> {
    install_signal_handlers()?;
    Ok(&SIGNALED)
}

fn random_token() -> Result<String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| StoreError::io("/dev/urandom", e))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

fn resolve_token(opts: &MemnodeOptions) -> Result<(String, bool)> {
    if let Some(p) = &opts.token_file {
        let t = std::fs::read_to_string(p).map_err(|e| StoreError::io(p, e))?;
        let t = t.trim().to_string();
        if t.is_empty() || t.len() > MAX_TOKEN {
            return Err(StoreError::Other(format!(
                "{}: the token must be 1 to {MAX_TOKEN} bytes",
                p.display()
            )));
        }
        return Ok((t, false));
    }
    match &opts.token {
        Some(t) if !t.is_empty() && t.len() <= MAX_TOKEN => Ok((t.clone(), false)),
        Some(_) => Err(StoreError::Other(format!(
            "memnode: the token must be 1 to {MAX_TOKEN} bytes"
        ))),
        None => Ok((random_token()?, true)),
    }
}

/// Runs a memory node until SIGTERM or SIGINT. Prints its listen address and capacity first
/// (and the token when none was given, since clients need it).
pub fn run_memnode(opts: MemnodeOptions) -> Result<()> {
    run_memnode_notify(opts, |_| {})
}

/// `run_memnode`, calling `ready` with the bound address once it accepts connections (useful
/// with port 0).
pub fn run_memnode_notify(opts: MemnodeOptions, ready: impl FnOnce(SocketAddr)) -> Result<()> {
    let (token, generated) = resolve_token(&opts)?;
    install_signal_handlers()?;
    let listener = TcpListener::bind(opts.listen).map_err(|e| StoreError::Remote {
        node: opts.listen.to_string(),
        message: format!("cannot listen: {e}"),
    })?;
    let addr = listener.local_addr().map_err(|e| StoreError::Remote {
        node: opts.listen.to_string(),
        message: e.to_string(),
    })?;
    println!(
        "memnode {} listening on {addr}, capacity {} bytes",
        opts.node_id, opts.capacity
    );
    if generated {
        println!("memnode token (no --token-file given): {token}");
    }
    if !addr.ip().is_loopback() {
        eprintln!("memnode: listening on a non-loopback address; only the token protects it");
    }
    let _ = io::stdout().flush();
    let token = SecretToken::new(&token).ok_or_else(|| {
        StoreError::Other(format!("memnode: the token must be 1 to {MAX_TOKEN} bytes"))
    })?;
    let server = Arc::new(Server::new(opts.node_id, opts.capacity, token, true));
    #[cfg(feature = "rdma")]
    if let Some(r) = &server.rdma {
        println!(
            "memnode {}: one-sided verbs also over RDMA device {}",
            opts.node_id,
            r.device_name()
        );
    }
    ready(addr);
    server.serve(listener);
    println!("memnode {} shut down", opts.node_id);
    Ok(())
}

struct Server {
    node: Arc<MemoryNode>,
    token: SecretToken,
    stop: AtomicBool,
    watch_signals: bool,
    next_conn: AtomicU64,
    live: AtomicUsize,
    conns: Mutex<HashMap<u64, TcpStream>>,
    /// The node's RDMA device, when it has one: one-sided verbs beside the TCP links.
    #[cfg(feature = "rdma")]
    rdma: Option<super::rdma::RdmaServer>,
}

impl Server {
    fn new(node_id: u16, capacity: u64, token: SecretToken, watch_signals: bool) -> Server {
        Server {
            node: Arc::new(MemoryNode::new(node_id, capacity)),
            token,
            stop: AtomicBool::new(false),
            watch_signals,
            next_conn: AtomicU64::new(0),
            live: AtomicUsize::new(0),
            conns: Mutex::new(HashMap::new()),
            #[cfg(feature = "rdma")]
            rdma: super::rdma::RdmaServer::open(),
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || (self.watch_signals && SIGNALED.load(Ordering::SeqCst))
    }

    fn close_all(&self) {
        for s in self
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// The accept loop: non-blocking accept polled every [`POLL`] so a stop request is seen
    /// promptly; joins every connection thread before returning.
    fn serve(self: &Arc<Self>, listener: TcpListener) {
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        if let Err(e) = listener.set_nonblocking(true) {
            eprintln!("memnode: cannot make the listener non-blocking: {e}");
            return;
        }
        while !self.stopped() {
            match listener.accept() {
                Ok((stream, peer)) => {
                    if self.live.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                        eprintln!("memnode: too many connections, closing {peer}");
                        continue;
                    }
                    let id = self.next_conn.fetch_add(1, Ordering::SeqCst);
                    if let Ok(c) = stream.try_clone() {
                        self.conns
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .insert(id, c);
                    }
                    self.live.fetch_add(1, Ordering::SeqCst);
                    let me = self.clone();
                    let t = std::thread::Builder::new()
                        .name(format!("memnode-conn-{id}"))
                        .spawn(move || {
                            if let Err(e) = me.connection(stream) {
                                eprintln!("memnode: connection from {peer} closed: {e}");
                            }
                            me.conns
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .remove(&id);
                            me.live.fetch_sub(1, Ordering::SeqCst);
                        });
                    match t {
                        Ok(t) => threads.push(t),
                        Err(e) => {
                            eprintln!("memnode: cannot start a connection thread: {e}");
                            self.live.fetch_sub(1, Ordering::SeqCst);
                        }
                    }
                    threads.retain(|t| !t.is_finished());
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    eprintln!("memnode: accept failed: {e}");
                    std::thread::sleep(POLL);
                }
            }
        }
        drop(listener);
        self.close_all();
        for t in threads {
            let _ = t.join();
        }
    }

    /// Reads one frame; `Ok(None)` on a clean end (peer closed between frames, or stop).
    fn read_frame(
        &self,
        r: &mut impl Read,
        max: usize,
        deadline: Option<Instant>,
    ) -> std::result::Result<Option<Vec<u8>>, String> {
        let mut prefix = [0u8; 4];
        if !self.fill(r, &mut prefix, deadline, true)? {
            return Ok(None);
        }
        let len = frame_body_len(prefix).map_err(|e| e.to_string())?;
        if len + 4 > max {
            return Err(format!("frame of {} bytes exceeds {max}", len + 4));
        }
        let mut buf = Vec::new();
        buf.extend_from_slice(&prefix);
        // Grow as bytes arrive, so a lying length prefix costs at most one chunk.
        let mut got = 0usize;
        while got < len {
            let chunk = (len - got).min(1 << 20);
            buf.resize(4 + got + chunk, 0);
            if !self.fill(r, &mut buf[4 + got..4 + got + chunk], deadline, false)? {
                return Ok(None);
            }
            got += chunk;
        }
        Ok(Some(buf))
    }

    /// Fills `buf` completely, riding out read timeouts (used to poll the stop flag). Returns
    /// false on stop, or on EOF before the first byte when `eof_ok`.
    fn fill(
        &self,
        r: &mut impl Read,
        buf: &mut [u8],
        deadline: Option<Instant>,
        eof_ok: bool,
    ) -> std::result::Result<bool, String> {
        let mut got = 0;
        while got < buf.len() {
            match r.read(&mut buf[got..]) {
                Ok(0) if got == 0 && eof_ok => return Ok(false),
                Ok(0) => return Err("peer closed mid-frame".into()),
                Ok(n) => got += n,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) =>
                {
                    if self.stopped() {
                        return Ok(false);
                    }
                    if deadline.is_some_and(|d| Instant::now() > d) {
                        return Err("no token presented in time".into());
                    }
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(true)
    }

    fn connection(&self, stream: TcpStream) -> std::result::Result<(), String> {
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(POLL))
            .map_err(|e| e.to_string())?;
        let mut reader =
            BufReader::with_capacity(1 << 16, stream.try_clone().map_err(|e| e.to_string())?);
        let mut writer = BufWriter::with_capacity(1 << 16, stream);
        let mut out = Vec::new();
        // Handshake: the first frame must be HELLO with the token.
        let Some(buf) = self.read_frame(
            &mut reader,
            MAX_HELLO_FRAME,
            Some(Instant::now() + HELLO_TIMEOUT),
        )?
        else {
            return Ok(());
        };
        let hello = decode_frame(&buf).map_err(|e| e.to_string())?;
        let (ok, version) = match &hello.msg {
            Message::Hello { token, version } => (self.token.matches(token.as_bytes()), *version),
            _ => (false, 1),
        };
        let reply = if ok {
            Message::HelloOk {
                node_id: self.node.node_id(),
                capacity: self.node.capacity(),
                // A client of the first protocol reads no epoch.
                epoch: (version >= 2).then(|| self.node.epoch()),
            }
        } else {
            Message::Error {
                code: ErrorCode::Unauthorized,
                message: "wrong or missing token".into(),
            }
        };
        send(&mut writer, &mut out, hello.id, &reply, true)?;
        if !ok {
            return Err("refused: wrong or missing token".into());
        }
        // Dropped on every way out of this function: regions this connection leased and did
        // not commit are freed when it ends, however it ends.
        let leases = Leases::new(self.node.clone());
        // This connection's RDMA queue pair, once the client asked for one.
        #[cfg(feature = "rdma")]
        let mut rdma_qp: Option<super::rdma::ServerQp> = None;
        loop {
            let Some(buf) = self.read_frame(&mut reader, super::protocol::MAX_FRAME, None)? else {
                return Ok(());
            };
            let Frame { id, msg } = decode_frame(&buf).map_err(|e| e.to_string())?;
            drop(buf);
            #[cfg(feature = "rdma")]
            let reply = match (&self.rdma, msg) {
                (Some(r), Message::RdmaConnect { endpoint }) => {
                    let (qp, reply) = r.accept(&endpoint);
                    rdma_qp = qp.or(rdma_qp.take());
                    reply
                }
                (Some(r), Message::RegionKeyOf { addr }) => r.key_of(&self.node, addr),
                (
                    Some(r),
                    m @ (Message::Alloc { .. }
                    | Message::AllocLeased { .. }
                    | Message::AllocOwned { .. }),
                ) if rdma_qp.is_some() => match leases.handle(m) {
                    Message::Allocated { addr } => r.key_of(&self.node, addr),
                    other => other,
                },
                (_, m) => leases.handle(m),
            };
            #[cfg(not(feature = "rdma"))]
            let reply = leases.handle(msg);
            // Flush only when no further request is already buffered: pipelined requests get
            // their replies coalesced into fewer writes.
            let flush = reader.buffer().is_empty();
            send(&mut writer, &mut out, id, &reply, flush)?;
        }
    }
}

fn send(
    w: &mut impl Write,
    out: &mut Vec<u8>,
    id: u64,
    m: &Message,
    flush: bool,
) -> std::result::Result<(), String> {
    out.clear();
    if encode_frame(id, m, out).is_err() {
        out.clear();
        let e = Message::Error {
            code: ErrorCode::TooLarge,
            message: "reply exceeds the frame limit".into(),
        };
        encode_frame(id, &e, out).map_err(|e| e.to_string())?;
    }
    w.write_all(out).map_err(|e| e.to_string())?;
    if flush {
        w.flush().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A memory node running on a thread of this process, for tests and benchmarks.
pub struct MemnodeHandle {
    addr: SocketAddr,
    server: Arc<Server>,
    thread: Option<JoinHandle<()>>,
}

impl MemnodeHandle {
    /// Where it listens (127.0.0.1 and an ephemeral port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's memory, to inspect from a test.
    pub fn node(&self) -> &Arc<MemoryNode> {
        &self.server.node
    }

    /// Connections open right now (a test waits for a closed client to be noticed).
    pub fn connections(&self) -> usize {
        self.server.live.load(Ordering::SeqCst)
    }

    /// Clean shutdown: stop accepting, let connections finish their current request, join.
    pub fn shutdown(mut self) {
        self.server.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Simulates the node dying: every connection is cut at once (as the kernel does when the
    /// process is killed) and the listener closes.
    pub fn kill(mut self) {
        self.server.stop.store(true, Ordering::SeqCst);
        self.server.close_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for MemnodeHandle {
    fn drop(&mut self) {
        self.server.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts a memory node on 127.0.0.1 with an ephemeral port, in this process. Does not touch
/// signal handlers (the test process owns those).
pub fn spawn_memnode_for_tests(node_id: u16, capacity: u64, token: &str) -> Result<MemnodeHandle> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(|e| StoreError::Other(format!("memnode: cannot bind 127.0.0.1:0: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| StoreError::Other(e.to_string()))?;
    let token = SecretToken::new(token).ok_or_else(|| {
        StoreError::Other(format!("memnode: the token must be 1 to {MAX_TOKEN} bytes"))
    })?;
    let server = Arc::new(Server::new(node_id, capacity, token, false));
    let s = server.clone();
    let thread = std::thread::Builder::new()
        .name(format!("memnode-{node_id}"))
        .spawn(move || s.serve(listener))
        .map_err(|e| StoreError::Other(format!("memnode: cannot start thread: {e}")))?;
    Ok(MemnodeHandle {
        addr,
        server,
        thread: Some(thread),
    })
}
