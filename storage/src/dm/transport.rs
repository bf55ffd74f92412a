//! The `Transport` trait: how a compute node talks to one memory node, whatever the wire.
//!
//! Every call is a request answered later through a [`Ticket`], so a caller can keep many batches
//! in flight per thread (DMG §4.2.2 merges and batches reads, §4.5.1 overlaps them with
//! coroutines); the blocking helpers are `submit(...)?.wait()`.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};

use super::addr::GlobalAddr;
use super::protocol::{Message, UpdateItem, UpdateOp, Verb, VerbReply};
use super::stats::StatsSnapshot;
use crate::error::{Result, StoreError};
use crate::remote_memory::ElementKind;

/// A connection to one memory node.
pub trait Transport: Send + Sync {
    /// The memory node's id (high 16 bits of its addresses).
    fn node_id(&self) -> u16;

    /// A name for errors: address and id of the node.
    fn node_name(&self) -> &str;

    /// Sends a request; the reply is collected from the ticket. Fails at once when the node is
    /// known to be gone.
    fn submit(&self, msg: Message) -> Result<Ticket>;

    /// The operation counters of this transport.
    fn stats(&self) -> StatsSnapshot;

    /// Sends a request and waits for its reply.
    fn call(&self, msg: Message) -> Result<Message> {
        self.submit(msg)?.wait()
    }

    /// Allocates a zeroed region of at least `size` bytes (two-sided).
    fn alloc(&self, size: u64) -> Result<GlobalAddr> {
        match self.call(Message::Alloc { size })? {
            Message::Allocated { addr } => Ok(addr),
            Message::RegionKeyed { key } => Ok(key.start),
            m => Err(unexpected(self.node_name(), &m)),
        }
    }

    /// Allocates a region leased to this connection: freed when the connection ends unless
    /// [`commit`](Transport::commit)ted first (two-sided).
    fn alloc_leased(&self, size: u64) -> Result<GlobalAddr> {
        match self.call(Message::AllocLeased { size })? {
            Message::Allocated { addr } => Ok(addr),
            Message::RegionKeyed { key } => Ok(key.start),
            m => Err(unexpected(self.node_name(), &m)),
        }
    }

    /// [`alloc_leased`](Transport::alloc_leased), the region tagged with `owner`: once
    /// committed, only [`free_owned`](Transport::free_owned) naming the same owner and the
    /// node's epoch frees it (two-sided).
    fn alloc_owned(&self, size: u64, owner: u64) -> Result<GlobalAddr> {
        match self.call(Message::AllocOwned { size, owner })? {
            Message::Allocated { addr } => Ok(addr),
            Message::RegionKeyed { key } => Ok(key.start),
            m => Err(unexpected(self.node_name(), &m)),
        }
    }

    /// Frees the region at `addr` if the node, in its life `epoch`, allocated it for `owner`;
    /// the node refuses (`NotOwner`) otherwise and keeps it (two-sided).
    fn free_owned(&self, addr: GlobalAddr, epoch: u64, owner: u64) -> Result<()> {
        expect_done(
            self.node_name(),
            self.call(Message::FreeOwned { addr, epoch, owner })?,
        )
    }

    /// Makes a region this connection leased permanent (two-sided).
    fn commit(&self, addr: GlobalAddr) -> Result<()> {
        expect_done(self.node_name(), self.call(Message::Commit { addr })?)
    }

    /// Frees the region that starts at `addr` (two-sided).
    fn free(&self, addr: GlobalAddr) -> Result<()> {
        expect_done(self.node_name(), self.call(Message::Free { addr })?)
    }

    /// Submits a batch of verbs, executed in order and answered together (doorbell batching).
    fn submit_batch(&self, batch: Batch) -> Result<Ticket> {
        self.submit(Message::Batch(batch.verbs))
    }

    /// Runs a batch and returns one reply per verb; a failed verb is a `VerbReply::Failed`
    /// rather than an error, as the others still ran.
    fn batch(&self, batch: Batch) -> Result<Vec<VerbReply>> {
        self.submit_batch(batch)?.wait_batch()
    }

    /// One-sided READ.
    fn read(&self, addr: GlobalAddr, len: u32) -> Result<Vec<u8>> {
        match single(self, Verb::Read { addr, len })? {
            VerbReply::Read(d) => Ok(d),
            r => Err(bad_verb(self.node_name(), r)),
        }
    }

    /// One-sided WRITE.
    fn write(&self, addr: GlobalAddr, data: &[u8]) -> Result<()> {
        match single(
            self,
            Verb::Write {
                addr,
                data: data.to_vec(),
            },
        )? {
            VerbReply::Written => Ok(()),
            r => Err(bad_verb(self.node_name(), r)),
        }
    }

    /// One-sided CAS on an aligned word; returns the old value (swapped iff `== expected`).
    fn cas(&self, addr: GlobalAddr, expected: u64, new: u64) -> Result<u64> {
        match single(
            self,
            Verb::Cas {
                addr,
                expected,
                new,
            },
        )? {
            VerbReply::Cas { old } => Ok(old),
            r => Err(bad_verb(self.node_name(), r)),
        }
    }

    /// One-sided FAA on an aligned word; returns the old value.
    fn faa(&self, addr: GlobalAddr, delta: u64) -> Result<u64> {
        match single(self, Verb::Faa { addr, delta })? {
            VerbReply::Faa { old } => Ok(old),
            r => Err(bad_verb(self.node_name(), r)),
        }
    }

    /// Appends a buffer of redistribution items to another compute node's mailbox.
    fn mailbox_push(&self, mailbox: u64, data: Vec<u8>) -> Result<()> {
        expect_done(
            self.node_name(),
            self.call(Message::MailboxPush { mailbox, data })?,
        )
    }

    /// Pulls waiting buffers of `mailbox`, up to `max_bytes` (at least one if any waits).
    fn mailbox_pull(&self, mailbox: u64, max_bytes: u32) -> Result<Vec<Vec<u8>>> {
        match self.call(Message::MailboxPull { mailbox, max_bytes })? {
            Message::Pulled(b) => Ok(b),
            m => Err(unexpected(self.node_name(), &m)),
        }
    }

    /// Has the memory node apply pass-by-value updates locally; returns how many changed.
    fn apply_updates(
        &self,
        base: GlobalAddr,
        attr: ElementKind,
        op: UpdateOp,
        items: Vec<UpdateItem>,
    ) -> Result<u64> {
        match self.call(Message::Apply {
            base,
            attr,
            op,
            items,
        })? {
            Message::Applied { changed } => Ok(changed),
            m => Err(unexpected(self.node_name(), &m)),
        }
    }

    /// Capacity and use of the node: `(capacity, used)`.
    fn info(&self) -> Result<(u64, u64)> {
        match self.call(Message::Info)? {
            Message::InfoReply { capacity, used, .. } => Ok((capacity, used)),
            m => Err(unexpected(self.node_name(), &m)),
        }
    }
}

/// Opens connections of one transport kind to memory nodes by address. A [`DmStore`] is generic
/// over its connector, so list reads and attribute updates call the transport's `submit`
/// without dynamic dispatch; connecting happens once per connection set and goes through here.
///
/// [`DmStore`]: super::graph_store::DmStore
pub trait Connector: Send + Sync + 'static {
    /// The connections this connector opens.
    type Transport: Transport + 'static;

    /// Connects to the memory node at `addr` (`host:port`, or a name the connector knows).
    fn connect(&self, addr: &str) -> Result<Self::Transport>;

    /// The transport's name for status lines and PROFILE (`tcp`, `rdma`, `in-process`).
    fn transport_name(&self) -> &'static str;

    /// The transport as PROFILE's caption names it: its name, and why it differs from the one
    /// requested when it does.
    fn describe(&self) -> String {
        self.transport_name().into()
    }
}

fn single<T: Transport + ?Sized>(t: &T, v: Verb) -> Result<VerbReply> {
    let mut r = t.batch(Batch { verbs: vec![v] })?;
    match r.pop() {
        Some(VerbReply::Failed { code, message }) => Err(StoreError::Remote {
            node: t.node_name().to_string(),
            message: format!("{message} ({code:?})"),
        }),
        Some(x) if r.is_empty() => Ok(x),
        _ => Err(StoreError::Remote {
            node: t.node_name().to_string(),
            message: "wrong number of verb replies".into(),
        }),
    }
}

fn bad_verb(node: &str, r: VerbReply) -> StoreError {
    StoreError::Remote {
        node: node.to_string(),
        message: format!("unexpected verb reply {r:?}"),
    }
}

fn expect_done(node: &str, m: Message) -> Result<()> {
    match m {
        Message::Done => Ok(()),
        m => Err(unexpected(node, &m)),
    }
}

/// Error for a reply of the wrong kind (a confused or hostile peer).
pub(crate) fn unexpected(node: &str, m: &Message) -> StoreError {
    let mut s = format!("{m:?}");
    s.truncate(120);
    StoreError::Remote {
        node: node.to_string(),
        message: format!("unexpected reply {s}"),
    }
}

/// Turns `Message::Error` into `StoreError::Remote` naming the node, so every failure a caller
/// sees says which memory node refused.
pub(crate) fn remote_result(node: &str, m: Message) -> Result<Message> {
    match m {
        Message::Error { code, message } => Err(StoreError::Remote {
            node: node.to_string(),
            message: format!("{message} ({code:?})"),
        }),
        m => Ok(m),
    }
}

/// Verbs to send in one round trip (the doorbell-batching unit). Batches go to one memory node,
/// as doorbell batching requires one queue pair.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    /// The verbs, executed in this order.
    pub verbs: Vec<Verb>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }
    /// Adds a READ.
    pub fn read(&mut self, addr: GlobalAddr, len: u32) -> &mut Self {
        self.verbs.push(Verb::Read { addr, len });
        self
    }
    /// Adds a WRITE.
    pub fn write(&mut self, addr: GlobalAddr, data: Vec<u8>) -> &mut Self {
        self.verbs.push(Verb::Write { addr, data });
        self
    }
    /// Adds a CAS.
    pub fn cas(&mut self, addr: GlobalAddr, expected: u64, new: u64) -> &mut Self {
        self.verbs.push(Verb::Cas {
            addr,
            expected,
            new,
        });
        self
    }
    /// Adds a FAA.
    pub fn faa(&mut self, addr: GlobalAddr, delta: u64) -> &mut Self {
        self.verbs.push(Verb::Faa { addr, delta });
        self
    }
    /// Verbs so far.
    pub fn len(&self) -> usize {
        self.verbs.len()
    }
    /// True when no verb was added.
    pub fn is_empty(&self) -> bool {
        self.verbs.is_empty()
    }
}

/// Called when a pending reply times out: the transport marks its node dead so later calls fail
/// at once instead of waiting again.
pub(crate) type TimeoutHook = Arc<dyn Fn() + Send + Sync>;

enum Inner {
    Ready(Option<Result<Message>>),
    Pending {
        rx: Receiver<Result<Message>>,
        timeout: Duration,
        on_timeout: TimeoutHook,
    },
}

/// A reply to come. `wait` blocks (bounded by the transport's request timeout, so a dead node
/// yields an error, not a hang); `try_wait` polls, for callers that keep many tickets.
pub struct Ticket {
    node: Arc<str>,
    inner: Inner,
}

impl Ticket {
    /// A ticket whose reply is already known (in-process transport, or an immediate failure).
    pub fn ready(node: Arc<str>, r: Result<Message>) -> Ticket {
        Ticket {
            node,
            inner: Inner::Ready(Some(r)),
        }
    }

    pub(crate) fn pending(
        node: Arc<str>,
        rx: Receiver<Result<Message>>,
        timeout: Duration,
        on_timeout: TimeoutHook,
    ) -> Ticket {
        Ticket {
            node,
            inner: Inner::Pending {
                rx,
                timeout,
                on_timeout,
            },
        }
    }

    fn lost(&self) -> StoreError {
        StoreError::Remote {
            node: self.node.to_string(),
            message: "connection lost before the reply".into(),
        }
    }

    /// Waits for the reply; a `Message::Error` becomes `StoreError::Remote`.
    pub fn wait(self) -> Result<Message> {
        let node = self.node.clone();
        let r = match self.inner {
            Inner::Ready(Some(r)) => r,
            Inner::Ready(None) => {
                return Err(StoreError::Remote {
                    node: node.to_string(),
                    message: "reply already taken".into(),
                })
            }
            Inner::Pending {
                ref rx,
                timeout,
                ref on_timeout,
            } => match rx.recv_timeout(timeout) {
                Ok(r) => r,
                Err(RecvTimeoutError::Timeout) => {
                    on_timeout();
                    Err(StoreError::Remote {
                        node: node.to_string(),
                        message: format!("no reply within {timeout:?}; node presumed dead"),
                    })
                }
                Err(RecvTimeoutError::Disconnected) => Err(self.lost()),
            },
        };
        remote_result(&node, r?)
    }

    /// The reply if it has arrived, without blocking; `None` while still pending.
    pub fn try_wait(&mut self) -> Option<Result<Message>> {
        let r = match &mut self.inner {
            Inner::Ready(r) => r.take()?,
            Inner::Pending { rx, .. } => match rx.try_recv() {
                Ok(r) => r,
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => Err(self.lost()),
            },
        };
        Some(r.and_then(|m| remote_result(&self.node, m)))
    }

    /// Waits for a batch's replies.
    pub fn wait_batch(self) -> Result<Vec<VerbReply>> {
        let node = self.node.clone();
        match self.wait()? {
            Message::BatchReply(r) => Ok(r),
            m => Err(unexpected(&node, &m)),
        }
    }
}
