//! [`MnCollectives`]: the collectives of a run over several compute nodes, held in a memory node
//! (DMG §4.1: an iteration ends at a barrier of FAA counters in the pool, not through the session).
//!
//! The session allocates one *job region* per run, leased to its connection, so the region goes
//! when the session does (and with it every worker's collectives, which then fail). Its words:
//!
//! ```text
//! 0     abort flag         0 = running; set once any member aborts
//! 8     reason claim       CAS 0 → rank+1 by the first member to abort, which writes the reason
//! 16    barrier counter    FAA +1 per member per barrier; generation g is done at g × size
//! 24    reason length      bytes of the reason (written before the abort flag)
//! 64    reason             up to REASON_BYTES of UTF-8
//! 1088  slots              2 banks × size members × (1 + slot_words) words
//! ```
//!
//! A collective that exchanges values writes the member's slot (a length word, then the data) in
//! the bank of its barrier generation's parity, passes the barrier, and reads every slot. Two
//! banks are enough: a member can write bank `g % 2` again only at generation `g + 2`, which it
//! reaches only after everyone passed barrier `g + 1`, i.e. after everyone read generation `g`.
//! Values longer than a slot go in several rounds (every member passes the same length).
//!
//! Waiting members poll the counter and the abort flag with one READ, backing off from a busy
//! poll to 1 ms, and stop when the member's local cancel flag is raised (a compute node whose
//! session went away), so no wait outlives the run.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::addr::GlobalAddr;
use super::protocol::VerbReply;
use super::transport::{Batch, Transport};
use crate::cluster::Collectives;
use crate::error::{Result, StoreError};

const ABORT_WORD: u64 = 0;
const CLAIM_WORD: u64 = 8;
const COUNTER_WORD: u64 = 16;
const REASON_LEN_WORD: u64 = 24;
const REASON_AT: u64 = 64;
/// Longest abort reason kept (longer ones are cut at a character boundary).
pub const REASON_BYTES: u64 = 1024;
const SLOTS_AT: u64 = REASON_AT + REASON_BYTES;
/// Longest pause between two polls of a barrier.
const MAX_BACKOFF: Duration = Duration::from_millis(1);
/// How long a member that saw the abort flag waits for the first aborter's reason.
const REASON_WAIT: Duration = Duration::from_secs(1);

/// Bytes of a job region for `size` members exchanging at most `slot_words` words per round.
pub fn region_bytes(size: usize, slot_words: usize) -> u64 {
    SLOTS_AT + 2 * size as u64 * (1 + slot_words as u64) * 8
}

/// Where a run's collectives live and how big their slots are: what a job sends to a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRegion {
    pub addr: GlobalAddr,
    pub size: u32,
    pub slot_words: u32,
}

impl JobRegion {
    /// Allocates a job region on `transport`'s node, leased to that connection: it is freed when
    /// the connection closes (the session's run ends or its process dies).
    pub fn allocate(
        transport: &dyn Transport,
        size: usize,
        slot_words: usize,
    ) -> Result<JobRegion> {
        let size32 = u32::try_from(size)
            .map_err(|_| StoreError::Other(format!("{size} compute nodes is too many")))?;
        let slots32 = u32::try_from(slot_words.max(1))
            .map_err(|_| StoreError::Other(format!("slots of {slot_words} words are too big")))?;
        let addr = transport.alloc_leased(region_bytes(size, slots32 as usize))?;
        Ok(JobRegion {
            addr,
            size: size32,
            slot_words: slots32,
        })
    }
}

/// One member's view of collectives held in a memory node.
pub struct MnCollectives {
    transport: Arc<dyn Transport>,
    region: JobRegion,
    rank: usize,
    /// Barriers this member has passed (every collective is one or more barriers).
    generation: AtomicU64,
    /// Raised locally to stop waiting (the run is being torn down on this compute node).
    cancel: Arc<AtomicBool>,
}

impl MnCollectives {
    /// Member `rank` of the run whose region is `region`, reached over `transport` (a connection
    /// to the region's memory node). `cancel` stops any wait when raised.
    pub fn new(
        transport: Arc<dyn Transport>,
        region: JobRegion,
        rank: usize,
        cancel: Arc<AtomicBool>,
    ) -> Result<MnCollectives> {
        if transport.node_id() != region.addr.node() {
            return Err(StoreError::Other(format!(
                "the job region {} is not on {}",
                region.addr,
                transport.node_name()
            )));
        }
        if rank >= region.size as usize {
            return Err(StoreError::Other(format!(
                "member {rank} of a run of {} members",
                region.size
            )));
        }
        Ok(MnCollectives {
            transport,
            region,
            rank,
            generation: AtomicU64::new(0),
            cancel,
        })
    }

    fn at(&self, offset: u64) -> Result<GlobalAddr> {
        self.region.addr.checked_add(offset).ok_or_else(|| {
            StoreError::Other(format!(
                "job region {} overflows its node",
                self.region.addr
            ))
        })
    }

    fn slot_at(&self, bank: u64, member: usize) -> Result<GlobalAddr> {
        let slot_bytes = (1 + self.region.slot_words as u64) * 8;
        self.at(SLOTS_AT + (bank * self.region.size as u64 + member as u64) * slot_bytes)
    }

    fn remote(&self, message: String) -> StoreError {
        StoreError::Remote {
            node: self.transport.node_name().to_string(),
            message,
        }
    }

    /// The error every member reports once the run was aborted: the first aborter's reason.
    fn aborted_error(&self) -> StoreError {
        let deadline = Instant::now() + REASON_WAIT;
        loop {
            if let Ok(reason) = self.read_reason() {
                if !reason.is_empty() {
                    return aborted(&reason);
                }
            }
            if Instant::now() >= deadline || self.cancel.load(Ordering::Relaxed) {
                return aborted("a member aborted without a reason");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn read_reason(&self) -> Result<String> {
        let len = u64::from_le_bytes(word(&self.transport.read(self.at(REASON_LEN_WORD)?, 8)?)?);
        if len == 0 {
            return Ok(String::new());
        }
        let bytes = self
            .transport
            .read(self.at(REASON_AT)?, len.min(REASON_BYTES) as u32)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Arrives at the next barrier and waits until every member did, the run was aborted, or the
    /// local cancel flag was raised. Returns the generation just passed.
    fn pass_barrier(&self) -> Result<u64> {
        let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        let target = generation * self.region.size as u64;
        self.transport.faa(self.at(COUNTER_WORD)?, 1)?;
        let mut backoff = Duration::from_micros(0);
        loop {
            // The abort flag and the counter in one READ.
            let got = self.transport.read(self.at(ABORT_WORD)?, 24)?;
            let abort = u64::from_le_bytes(word(&got[0..8])?);
            let count = u64::from_le_bytes(word(got.get(16..24).unwrap_or_default())?);
            if abort != 0 {
                return Err(self.aborted_error());
            }
            if count >= target {
                return Ok(generation);
            }
            if self.cancel.load(Ordering::Relaxed) {
                return Err(StoreError::Cancelled);
            }
            if backoff.is_zero() {
                std::thread::yield_now();
                backoff = Duration::from_micros(20);
            } else {
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }

    /// One round: writes `mine` (at most `slot_words` words) to this member's slot, passes the
    /// barrier, and reads up to `read_words` data words of every member's slot.
    fn round(&self, mine: &[u64], read_words: usize) -> Result<Vec<Vec<u64>>> {
        let cap = self.region.slot_words as usize;
        debug_assert!(mine.len() <= cap && read_words <= cap);
        let bank = (self.generation.load(Ordering::Relaxed) + 1) % 2;
        let mut bytes = Vec::with_capacity((mine.len() + 1) * 8);
        bytes.extend_from_slice(&(mine.len() as u64).to_le_bytes());
        for w in mine {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        self.transport
            .write(self.slot_at(bank, self.rank)?, &bytes)?;
        self.pass_barrier()?;
        let mut batch = Batch::new();
        for m in 0..self.region.size as usize {
            batch.read(self.slot_at(bank, m)?, ((1 + read_words) * 8) as u32);
        }
        let replies = self.transport.batch(batch)?;
        let mut out = Vec::with_capacity(replies.len());
        for reply in replies {
            let data = match reply {
                VerbReply::Read(d) => d,
                VerbReply::Failed { code, message } => {
                    return Err(self.remote(format!("{message} ({code:?})")))
                }
                r => return Err(self.remote(format!("unexpected verb reply {r:?}"))),
            };
            let words: Vec<u64> = data
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect();
            let len = words.first().copied().unwrap_or(0) as usize;
            let end = (1 + len).min(words.len());
            out.push(words.get(1..end).unwrap_or_default().to_vec());
        }
        Ok(out)
    }
}

fn word(bytes: &[u8]) -> Result<[u8; 8]> {
    bytes
        .try_into()
        .map_err(|_| StoreError::Other("a memory node answered a short READ".into()))
}

fn aborted(reason: &str) -> StoreError {
    StoreError::Other(format!("the run was aborted: {reason}"))
}

impl Collectives for MnCollectives {
    fn size(&self) -> usize {
        self.region.size as usize
    }

    fn rank(&self) -> usize {
        self.rank
    }

    fn barrier(&self) -> Result<()> {
        self.pass_barrier().map(|_| ())
    }

    fn sum_f64(&self, x: f64) -> Result<f64> {
        let all = self.round(&[x.to_bits()], 1)?;
        Ok(all
            .iter()
            .map(|w| f64::from_bits(w.first().copied().unwrap_or(0)))
            .sum())
    }

    fn sum_u64(&self, x: u64) -> Result<u64> {
        let all = self.round(&[x], 1)?;
        Ok(all
            .iter()
            .fold(0u64, |a, w| a.wrapping_add(w.first().copied().unwrap_or(0))))
    }

    fn gather(&self, x: u64) -> Result<Vec<u64>> {
        let all = self.round(&[x], 1)?;
        Ok(all
            .iter()
            .map(|w| w.first().copied().unwrap_or(0))
            .collect())
    }

    fn or_words(&self, words: &mut [u64]) -> Result<()> {
        let cap = self.region.slot_words as usize;
        // A zero-length call still meets the others once, as a barrier.
        if words.is_empty() {
            return self.barrier();
        }
        for piece in words.chunks_mut(cap) {
            let all = self.round(piece, piece.len())?;
            for (i, w) in piece.iter_mut().enumerate() {
                *w = all
                    .iter()
                    .fold(0, |a, m| a | m.get(i).copied().unwrap_or(0));
            }
        }
        Ok(())
    }

    fn broadcast(&self, words: Option<&[u64]>) -> Result<Vec<u64>> {
        let cap = self.region.slot_words as usize;
        let source = if self.rank == 0 {
            words.unwrap_or_default()
        } else {
            &[]
        };
        // The first round carries the total length, then as much data as fits beside it.
        let mut first = Vec::with_capacity(cap.min(source.len() + 1));
        first.push(source.len() as u64);
        first.extend_from_slice(&source[..source.len().min(cap - 1)]);
        let all = self.round(if self.rank == 0 { &first } else { &[] }, cap)?;
        let head = all.into_iter().next().unwrap_or_default();
        let total = head.first().copied().unwrap_or(0) as usize;
        let mut out = head.get(1..).unwrap_or_default().to_vec();
        while out.len() < total {
            let sent = out.len();
            let piece = if self.rank == 0 {
                &source[sent..(sent + cap).min(source.len())]
            } else {
                &[]
            };
            let all = self.round(piece, cap.min(total - sent))?;
            let got = all.into_iter().next().unwrap_or_default();
            if got.is_empty() {
                return Err(self.remote("a broadcast round carried no data".into()));
            }
            out.extend_from_slice(&got);
        }
        out.truncate(total);
        Ok(out)
    }

    fn abort(&self, reason: &str) {
        // Best effort: a member that cannot reach the memory node fails on its own anyway.
        let Ok(claim) = self.at(CLAIM_WORD) else {
            return;
        };
        if let Ok(0) = self.transport.cas(claim, 0, self.rank as u64 + 1) {
            let mut cut = reason.len().min(REASON_BYTES as usize);
            while !reason.is_char_boundary(cut) {
                cut -= 1;
            }
            if let (Ok(at), Ok(len_at)) = (self.at(REASON_AT), self.at(REASON_LEN_WORD)) {
                let _ = self.transport.write(at, &reason.as_bytes()[..cut]);
                let _ = self.transport.write(len_at, &(cut as u64).to_le_bytes());
            }
        }
        if let Ok(flag) = self.at(ABORT_WORD) {
            let _ = self.transport.write(flag, &1u64.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dm::inproc::InProcTransport;
    use crate::dm::region::MemoryNode;

    /// `size` members over one in-process memory node, each with its own connection; the first
    /// connection holds the lease (the session's).
    fn group(size: usize, slot_words: usize) -> (Vec<MnCollectives>, Vec<Arc<AtomicBool>>) {
        let node = Arc::new(MemoryNode::new(3, 64 << 20));
        let session: Arc<dyn Transport> = Arc::new(InProcTransport::new(node.clone()));
        let region = JobRegion::allocate(session.as_ref(), size, slot_words).unwrap();
        let mut members = Vec::new();
        let mut cancels = Vec::new();
        for rank in 0..size {
            let t: Arc<dyn Transport> = if rank == 0 {
                session.clone()
            } else {
                Arc::new(InProcTransport::new(node.clone()))
            };
            let cancel = Arc::new(AtomicBool::new(false));
            members.push(MnCollectives::new(t, region, rank, cancel.clone()).unwrap());
            cancels.push(cancel);
        }
        (members, cancels)
    }

    #[test]
    fn every_collective_combines_every_member() {
        // Slots of 3 words: the 7-word OR and the 8-word broadcast take several rounds.
        let (members, _) = group(3, 3);
        let out: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = members
                .iter()
                .map(|c| {
                    s.spawn(move || {
                        let r = c.rank() as u64;
                        for _ in 0..5 {
                            c.barrier().unwrap();
                        }
                        let f = c.sum_f64(0.1 * (r + 1) as f64).unwrap();
                        let u = c.sum_u64(r + 10).unwrap();
                        let g = c.gather(r * 2).unwrap();
                        let mut bits = vec![0u64; 7];
                        bits[r as usize * 3] = 1 << r;
                        c.or_words(&mut bits).unwrap();
                        let sent: Vec<u64> = (100..108).collect();
                        let b = c.broadcast((r == 0).then_some(&sent[..])).unwrap();
                        let empty = c.broadcast((r == 0).then_some(&[][..])).unwrap();
                        let mut none: Vec<u64> = Vec::new();
                        c.or_words(&mut none).unwrap();
                        // Repeated sums reuse both banks.
                        let again: Vec<u64> = (0..6).map(|i| c.sum_u64(i * r).unwrap()).collect();
                        (f, u, g, bits, b, empty, again)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let expected_f = [0.1f64, 0.2, 0.30000000000000004]
            .iter()
            .fold(0.0, |a, x| a + x);
        for (f, u, g, bits, b, empty, again) in out {
            assert_eq!(f.to_bits(), expected_f.to_bits());
            assert_eq!(u, 33);
            assert_eq!(g, vec![0, 2, 4]);
            assert_eq!(bits, vec![1, 0, 0, 2, 0, 0, 4]);
            assert_eq!(b, (100..108).collect::<Vec<u64>>());
            assert!(empty.is_empty());
            assert_eq!(again, (0..6).map(|i| i * 3).collect::<Vec<u64>>());
        }
    }

    #[test]
    fn an_abort_releases_waiting_members_with_the_first_reason() {
        let (members, _) = group(3, 4);
        std::thread::scope(|s| {
            let w1 = s.spawn(|| members[1].barrier());
            let w2 = s.spawn(|| members[2].sum_u64(1));
            std::thread::sleep(Duration::from_millis(30));
            members[0].abort("compute node 127.0.0.1:9 died: connection reset");
            members[1].abort("a later reason");
            for r in [w1.join().unwrap().map(|_| 0), w2.join().unwrap()] {
                let err = r.unwrap_err().to_string();
                assert!(err.contains("127.0.0.1:9 died"), "{err}");
            }
        });
        // Later calls fail at once with the same reason.
        let err = members[0].barrier().unwrap_err().to_string();
        assert!(err.contains("127.0.0.1:9 died"), "{err}");
    }

    #[test]
    fn a_raised_cancel_flag_stops_a_wait() {
        let (members, cancels) = group(2, 1);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| members[1].barrier());
            std::thread::sleep(Duration::from_millis(20));
            cancels[1].store(true, Ordering::Relaxed);
            assert!(matches!(waiter.join().unwrap(), Err(StoreError::Cancelled)));
        });
    }

    #[test]
    fn a_freed_region_fails_the_members() {
        let node = Arc::new(MemoryNode::new(1, 1 << 20));
        let session = InProcTransport::new(node.clone());
        let region = JobRegion::allocate(&session, 2, 1).unwrap();
        let worker: Arc<dyn Transport> = Arc::new(InProcTransport::new(node));
        let c = MnCollectives::new(worker, region, 1, Arc::new(AtomicBool::new(false))).unwrap();
        // The session's connection ends: its leased region is freed.
        drop(session);
        assert!(c.barrier().is_err());
    }

    #[test]
    fn members_are_checked_against_the_region() {
        let node = Arc::new(MemoryNode::new(1, 1 << 20));
        let t: Arc<dyn Transport> = Arc::new(InProcTransport::new(node));
        let region = JobRegion::allocate(t.as_ref(), 2, 1).unwrap();
        let cancel = Arc::new(AtomicBool::new(false));
        assert!(MnCollectives::new(t.clone(), region, 2, cancel.clone()).is_err());
        let other: Arc<dyn Transport> =
            Arc::new(InProcTransport::new(Arc::new(MemoryNode::new(2, 1 << 20))));
        assert!(MnCollectives::new(other, region, 0, cancel).is_err());
    }
}
