//! The device-independent half of the RDMA transport: which work requests a batch of verbs
//! becomes, and how their completions come back to a [`Ticket`](super::transport::Ticket).
//!
//! - [`RegionTable`]: the regions of one memory node whose registration (address, rkey) the
//!   client knows; every verb is checked against it *before* anything is posted (right node,
//!   inside one region, atomics 8-aligned), so a bad address fails that verb alone, as over TCP,
//!   instead of breaking the queue pair.
//! - [`plan`]: one doorbell batch becomes chains of work requests of at most `max_chain` each,
//!   only the last of each chain signalled (a reliable connection completes a queue's requests
//!   in order, so that completion vouches for the whole chain), with one local staging buffer:
//!   WRITE data copied in, READ data and atomics' old values landing there.
//! - [`DoorbellPlan::assemble`]: the staging buffer after completion → one `VerbReply` per verb.
//! - [`CompletionRouter`]: work-request id → the batch waiting for it; a batch is answered when
//!   all its chains completed, failed at its first failed completion.
//!
//! No `ibverbs` call here: this compiles and is tested without the `rdma` feature.

use std::collections::{BTreeMap, HashMap};

use super::addr::GlobalAddr;
use super::protocol::{ErrorCode, Verb, VerbReply};
use super::rdma_wire::RegionKey;

/// Why a verb is refused before posting: the code and message the memory node would give.
pub type Refusal = (ErrorCode, String);

/// The registered regions of one memory node, by start offset.
#[derive(Debug, Clone)]
pub struct RegionTable {
    node: u16,
    regions: BTreeMap<u64, RegionKey>,
}

impl RegionTable {
    /// No region known yet on node `node`.
    pub fn new(node: u16) -> RegionTable {
        RegionTable {
            node,
            regions: BTreeMap::new(),
        }
    }

    /// Records a region's registration. A key for another node is ignored (a confused peer
    /// must not make this node's table point elsewhere).
    pub fn insert(&mut self, key: RegionKey) {
        if key.start.node() == self.node {
            self.regions.insert(key.start.offset(), key);
        }
    }

    /// Forgets the region that starts at `start` (freed).
    pub fn remove(&mut self, start: GlobalAddr) {
        self.regions.remove(&start.offset());
    }

    /// The region holding `addr`, if known.
    pub fn find(&self, addr: GlobalAddr) -> Option<&RegionKey> {
        if addr.node() != self.node {
            return None;
        }
        let (_, k) = self.regions.range(..=addr.offset()).next_back()?;
        (addr.offset() - k.start.offset() < k.len).then_some(k)
    }

    /// The distinct addresses of `verbs` on this node that no known region holds: what to
    /// look up (two-sided) before planning.
    pub fn missing(&self, verbs: &[Verb]) -> Vec<GlobalAddr> {
        let mut out: Vec<GlobalAddr> = Vec::new();
        for v in verbs {
            let a = verb_addr(v);
            if a.node() == self.node && self.find(a).is_none() && !out.contains(&a) {
                out.push(a);
            }
        }
        out
    }

    /// The device address and rkey for `len` bytes at `addr`, or why the memory node would
    /// refuse them. `atomic` verbs need an 8-aligned word.
    pub fn target(&self, addr: GlobalAddr, len: u64, atomic: bool) -> Result<(u64, u32), Refusal> {
        if addr.node() != self.node {
            return Err((
                ErrorCode::WrongNode,
                format!(
                    "address {addr} names node {}, not {}",
                    addr.node(),
                    self.node
                ),
            ));
        }
        if atomic && !addr.offset().is_multiple_of(8) {
            return Err((
                ErrorCode::Unaligned,
                format!("atomic verb at {addr}: not 8-byte aligned"),
            ));
        }
        let out_of_bounds = || {
            (
                ErrorCode::OutOfBounds,
                format!("{len} bytes at {addr}: outside every registered region"),
            )
        };
        let k = self.find(addr).ok_or_else(out_of_bounds)?;
        let off = addr.offset() - k.start.offset();
        if len > k.len - off {
            return Err(out_of_bounds());
        }
        Ok((k.remote_va + off, k.rkey))
    }
}

fn verb_addr(v: &Verb) -> GlobalAddr {
    match v {
        Verb::Read { addr, .. }
        | Verb::Write { addr, .. }
        | Verb::Cas { addr, .. }
        | Verb::Faa { addr, .. } => *addr,
    }
}

/// The operation of one work request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkOp {
    /// `IBV_WR_RDMA_READ` into the staging buffer.
    Read,
    /// `IBV_WR_RDMA_WRITE` from the staging buffer.
    Write,
    /// `IBV_WR_ATOMIC_CMP_AND_SWP`; the old word lands in the staging buffer.
    CompareSwap { expected: u64, new: u64 },
    /// `IBV_WR_ATOMIC_FETCH_AND_ADD`; the old word lands in the staging buffer.
    FetchAdd { delta: u64 },
}

/// One work request, device-independent: what `ibv_send_wr` will carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkRequest {
    /// The verb of the batch it answers.
    pub verb: usize,
    pub op: WorkOp,
    /// Where on the memory node (its device's address) and with which rkey.
    pub remote_va: u64,
    pub rkey: u32,
    /// Where in the staging buffer, and how many bytes.
    pub local_offset: usize,
    pub len: u32,
    /// Only the last request of a chain asks for a completion.
    pub signalled: bool,
}

/// A batch of verbs as work requests, ready to post chain by chain (one doorbell per chain).
#[derive(Debug, Clone)]
pub struct DoorbellPlan {
    /// Chains in posting order; each non-empty, its last request signalled.
    pub chains: Vec<Vec<WorkRequest>>,
    /// The staging buffer to register: WRITE data, READ destinations, atomics' old values.
    pub local: Vec<u8>,
    /// Per verb, its reply when known without the device (refused, or empty).
    early: Vec<Option<VerbReply>>,
}

/// Plans `verbs` against `table`: refused verbs get their `Failed` reply at once, the others
/// become work requests in order, cut into chains of at most `max_chain` (≥ 1).
pub fn plan(verbs: &[Verb], table: &RegionTable, max_chain: usize) -> DoorbellPlan {
    let max_chain = max_chain.max(1);
    let mut local = Vec::new();
    let mut early = Vec::with_capacity(verbs.len());
    let mut requests = Vec::new();
    for (i, v) in verbs.iter().enumerate() {
        let (addr, len, atomic) = match v {
            Verb::Read { addr, len } => (*addr, *len as u64, false),
            Verb::Write { addr, data } => (*addr, data.len() as u64, false),
            Verb::Cas { addr, .. } | Verb::Faa { addr, .. } => (*addr, 8, true),
        };
        if len == 0 {
            early.push(Some(match v {
                Verb::Read { .. } => VerbReply::Read(Vec::new()),
                _ => VerbReply::Written,
            }));
            continue;
        }
        let (remote_va, rkey) = match table.target(addr, len, atomic) {
            Ok(t) => t,
            Err((code, message)) => {
                early.push(Some(VerbReply::Failed { code, message }));
                continue;
            }
        };
        // Atomics write their 8-byte result at an 8-aligned local address.
        if atomic {
            local.resize(local.len().next_multiple_of(8), 0);
        }
        let local_offset = local.len();
        let op = match v {
            Verb::Read { .. } => {
                local.resize(local_offset + len as usize, 0);
                WorkOp::Read
            }
            Verb::Write { data, .. } => {
                local.extend_from_slice(data);
                WorkOp::Write
            }
            Verb::Cas { expected, new, .. } => {
                local.resize(local_offset + 8, 0);
                WorkOp::CompareSwap {
                    expected: *expected,
                    new: *new,
                }
            }
            Verb::Faa { delta, .. } => {
                local.resize(local_offset + 8, 0);
                WorkOp::FetchAdd { delta: *delta }
            }
        };
        early.push(None);
        requests.push(WorkRequest {
            verb: i,
            op,
            remote_va,
            rkey,
            local_offset,
            len: len as u32,
            signalled: false,
        });
    }
    let chains: Vec<Vec<WorkRequest>> = requests
        .chunks(max_chain)
        .map(|c| {
            let mut c = c.to_vec();
            if let Some(last) = c.last_mut() {
                last.signalled = true;
            }
            c
        })
        .collect();
    DoorbellPlan {
        chains,
        local,
        early,
    }
}

impl DoorbellPlan {
    /// Work requests to post (all chains).
    pub fn work_requests(&self) -> usize {
        self.chains.iter().map(Vec::len).sum()
    }

    /// The replies, one per verb, once every chain completed and the staging buffer holds the
    /// results. Atomics' old words are read little-endian, the memory node's word order.
    pub fn assemble(self) -> Vec<VerbReply> {
        let mut replies = self.early;
        for wr in self.chains.iter().flatten() {
            let bytes = &self.local[wr.local_offset..wr.local_offset + wr.len as usize];
            let word = || {
                let mut a = [0u8; 8];
                a.copy_from_slice(&bytes[..8]);
                u64::from_le_bytes(a)
            };
            replies[wr.verb] = Some(match wr.op {
                WorkOp::Read => VerbReply::Read(bytes.to_vec()),
                WorkOp::Write => VerbReply::Written,
                WorkOp::CompareSwap { .. } => VerbReply::Cas { old: word() },
                WorkOp::FetchAdd { .. } => VerbReply::Faa { old: word() },
            });
        }
        replies
            .into_iter()
            .map(|r| {
                r.unwrap_or(VerbReply::Failed {
                    code: ErrorCode::Other,
                    message: "no work request answered this verb".into(),
                })
            })
            .collect()
    }
}

/// What a completion meant for its batch.
#[derive(Debug, PartialEq, Eq)]
pub enum Routed<T> {
    /// The batch's last chain completed: answer it.
    Done(T),
    /// A request of the batch failed: fail it (the queue pair is in error now).
    Failed(T, String),
    /// More chains of the batch are still out.
    Waiting,
    /// No batch waits for this id (already failed, or a stray completion): ignore.
    Unknown,
}

/// Routes completions to the batches that posted them. A batch's work requests all carry its
/// id, so an error completion of an unsignalled request still finds its batch.
#[derive(Debug)]
pub struct CompletionRouter<T> {
    next: u64,
    waiting: HashMap<u64, (usize, T)>,
}

impl<T> Default for CompletionRouter<T> {
    fn default() -> Self {
        CompletionRouter {
            next: 1,
            waiting: HashMap::new(),
        }
    }
}

impl<T> CompletionRouter<T> {
    /// A batch of `chains` signalled chains (≥ 1) starts waiting; returns the work-request id
    /// its requests carry.
    pub fn register(&mut self, chains: usize, payload: T) -> u64 {
        let id = self.next;
        self.next += 1;
        self.waiting.insert(id, (chains.max(1), payload));
        id
    }

    /// One completion for `wr_id`: `Ok` for success, `Err(status)` for a failed request.
    pub fn complete(&mut self, wr_id: u64, status: Result<(), String>) -> Routed<T> {
        match status {
            Err(why) => match self.waiting.remove(&wr_id) {
                Some((_, p)) => Routed::Failed(p, why),
                None => Routed::Unknown,
            },
            Ok(()) => {
                let Some((left, _)) = self.waiting.get_mut(&wr_id) else {
                    return Routed::Unknown;
                };
                *left -= 1;
                if *left > 0 {
                    return Routed::Waiting;
                }
                match self.waiting.remove(&wr_id) {
                    Some((_, p)) => Routed::Done(p),
                    None => Routed::Unknown,
                }
            }
        }
    }

    /// Every waiting batch, removed (the connection is gone).
    pub fn fail_all(&mut self) -> Vec<T> {
        self.waiting.drain().map(|(_, (_, p))| p).collect()
    }

    /// Batches waiting.
    pub fn in_flight(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(off: u64) -> GlobalAddr {
        GlobalAddr::new(2, off).unwrap()
    }

    fn table() -> RegionTable {
        let mut t = RegionTable::new(2);
        t.insert(RegionKey {
            start: at(4096),
            len: 256,
            remote_va: 0x10_0000,
            rkey: 11,
        });
        t.insert(RegionKey {
            start: at(8192),
            len: 64,
            remote_va: 0x20_0000,
            rkey: 22,
        });
        t
    }

    #[test]
    fn addresses_map_to_device_addresses_and_rkeys_within_bounds() {
        let t = table();
        assert_eq!(t.target(at(4096), 256, false), Ok((0x10_0000, 11)));
        assert_eq!(t.target(at(4100), 4, false), Ok((0x10_0004, 11)));
        assert_eq!(t.target(at(8192 + 56), 8, true), Ok((0x20_0038, 22)));
        let code = |r: Result<(u64, u32), Refusal>| r.unwrap_err().0;
        assert_eq!(code(t.target(at(4096), 257, false)), ErrorCode::OutOfBounds);
        assert_eq!(
            code(t.target(at(4096 + 256), 1, false)),
            ErrorCode::OutOfBounds
        );
        assert_eq!(code(t.target(at(4000), 8, false)), ErrorCode::OutOfBounds);
        assert_eq!(code(t.target(at(4100), 8, true)), ErrorCode::Unaligned);
        let other = GlobalAddr::new(3, 4096).unwrap();
        assert_eq!(code(t.target(other, 8, false)), ErrorCode::WrongNode);
        // A huge length never wraps past the region.
        assert_eq!(
            code(t.target(at(4104), u64::MAX, false)),
            ErrorCode::OutOfBounds
        );
    }

    #[test]
    fn keys_of_other_nodes_are_ignored_and_missing_addresses_listed_once() {
        let mut t = table();
        t.insert(RegionKey {
            start: GlobalAddr::new(9, 4096).unwrap(),
            len: 1 << 20,
            remote_va: 1,
            rkey: 1,
        });
        assert!(t.find(GlobalAddr::new(9, 4096).unwrap()).is_none());
        let verbs = vec![
            Verb::Read {
                addr: at(4096),
                len: 8,
            },
            Verb::Read {
                addr: at(20000),
                len: 8,
            },
            Verb::Faa {
                addr: at(20000),
                delta: 1,
            },
            Verb::Read {
                addr: GlobalAddr::new(5, 4096).unwrap(),
                len: 8,
            },
        ];
        assert_eq!(t.missing(&verbs), vec![at(20000)]);
        t.remove(at(4096));
        assert!(t.find(at(4096)).is_none());
    }

    fn verbs() -> Vec<Verb> {
        vec![
            Verb::Write {
                addr: at(4096),
                data: vec![1, 2, 3],
            },
            Verb::Read {
                addr: at(4096),
                len: 16,
            },
            Verb::Cas {
                addr: at(4104),
                expected: 0,
                new: 5,
            },
            Verb::Read {
                addr: at(99_999),
                len: 8,
            },
            Verb::Faa {
                addr: at(8192),
                delta: 3,
            },
            Verb::Read {
                addr: at(4096),
                len: 0,
            },
        ]
    }

    #[test]
    fn a_batch_becomes_chains_with_only_each_last_request_signalled() {
        let p = plan(&verbs(), &table(), 2);
        assert_eq!(
            p.work_requests(),
            4,
            "the bad READ and the empty one post nothing"
        );
        let shape: Vec<Vec<(usize, bool)>> = p
            .chains
            .iter()
            .map(|c| c.iter().map(|w| (w.verb, w.signalled)).collect())
            .collect();
        assert_eq!(
            shape,
            vec![vec![(0, false), (1, true)], vec![(2, false), (4, true)]]
        );
        let all: Vec<&WorkRequest> = p.chains.iter().flatten().collect();
        assert_eq!(all[0].op, WorkOp::Write);
        assert_eq!(&p.local[all[0].local_offset..][..3], &[1, 2, 3]);
        assert_eq!(
            all[2].op,
            WorkOp::CompareSwap {
                expected: 0,
                new: 5
            }
        );
        assert_eq!((all[2].remote_va, all[2].rkey), (0x10_0008, 11));
        for w in &all {
            if matches!(w.op, WorkOp::CompareSwap { .. } | WorkOp::FetchAdd { .. }) {
                assert_eq!(w.local_offset % 8, 0, "atomic results are 8-aligned");
            }
        }
        // One chain when the limit allows: a single doorbell, one completion.
        let one = plan(&verbs(), &table(), 64);
        assert_eq!(one.chains.len(), 1);
        assert_eq!(one.chains[0].iter().filter(|w| w.signalled).count(), 1);
        assert!(one.chains[0].last().unwrap().signalled);
    }

    #[test]
    fn replies_are_assembled_from_the_staging_buffer_in_verb_order() {
        let mut p = plan(&verbs(), &table(), 64);
        let reqs: Vec<WorkRequest> = p.chains.iter().flatten().copied().collect();
        // What the device would leave: read bytes and the old words of the atomics.
        p.local[reqs[1].local_offset..][..16].copy_from_slice(&[7; 16]);
        p.local[reqs[2].local_offset..][..8].copy_from_slice(&41u64.to_le_bytes());
        p.local[reqs[3].local_offset..][..8].copy_from_slice(&9u64.to_le_bytes());
        let r = p.assemble();
        assert_eq!(r.len(), 6);
        assert_eq!(r[0], VerbReply::Written);
        assert_eq!(r[1], VerbReply::Read(vec![7; 16]));
        assert_eq!(r[2], VerbReply::Cas { old: 41 });
        assert!(matches!(
            &r[3],
            VerbReply::Failed {
                code: ErrorCode::OutOfBounds,
                ..
            }
        ));
        assert_eq!(r[4], VerbReply::Faa { old: 9 });
        assert_eq!(r[5], VerbReply::Read(Vec::new()));
    }

    #[test]
    fn completions_answer_a_batch_after_its_last_chain_and_fail_it_at_the_first_error() {
        let mut r: CompletionRouter<&str> = CompletionRouter::default();
        let a = r.register(2, "a");
        let b = r.register(1, "b");
        let c = r.register(3, "c");
        assert_ne!(a, b);
        assert_eq!(r.complete(a, Ok(())), Routed::Waiting);
        assert_eq!(r.complete(b, Ok(())), Routed::Done("b"));
        assert_eq!(r.complete(a, Ok(())), Routed::Done("a"));
        assert_eq!(r.complete(a, Ok(())), Routed::Unknown, "answered once");
        assert_eq!(
            r.complete(c, Err("remote access error".into())),
            Routed::Failed("c", "remote access error".into())
        );
        assert_eq!(r.complete(c, Err("flushed".into())), Routed::Unknown);
        assert_eq!(r.complete(12345, Ok(())), Routed::Unknown);
        let d = r.register(1, "d");
        assert_eq!(r.in_flight(), 1);
        assert_eq!(r.fail_all(), vec!["d"]);
        assert_eq!(r.complete(d, Ok(())), Routed::Unknown);
    }
}
