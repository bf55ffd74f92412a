//! What a round split over several members changed — its next frontier — kept without a
//! bitmap over |V|: a member marks the changes to its own vertices in a set over its owned
//! range ([`OwnedSet`]: bits when they fit `cn_cache`, else words in the memory nodes), and
//! lists the changes to other members' vertices, which it sends to their owners' mailboxes
//! whenever the list fills its share of `cn_cache` and at the round's end. After a barrier
//! every owner pulls its mailbox into its set, and the members sum their counts. So the union
//! of a round costs a member a bounded list (and, when they fit, bits over its owned range),
//! and the network 4 B per change that crosses members (instead of every member OR-ing |V|
//! bits).
//!
//! Mailboxes are the state array's last [`MAX_MEMBERS`] (one per member, see
//! [`FIRST_MARKS_MAILBOX`]), addressed beside the owner's first vertex, so an owner pulls from
//! the memory node holding the start of its range.

use std::ops::Range;
use std::sync::Mutex;

use storage::dm::compute_protocol::MAX_MEMBERS;
use storage::dm::mailbox::MAX_MAILBOX;
use storage::remote_memory::{RemoteMemory, RemoteVector};

use super::Split;
use crate::collab::mail::{self, Mail, MARK_BYTES};
use crate::error::ExecError;
use crate::remote_part::OwnedSet;
use crate::subset::VertexSubset;

/// The first mailbox of an array that carries marks: member `r`'s is this plus `r`.
pub const FIRST_MARKS_MAILBOX: u32 = MAX_MAILBOX + 1 - MAX_MEMBERS;

/// Fewest other members' vertices a member lists before sending them, whatever `cn_cache`
/// (64 KiB; part of the constant of the bound, docs/DM.md).
pub const MARKS_FLOOR: usize = 16 << 10;

/// Most marks in one mailbox buffer (64 KiB).
const MARKS_PER_BUFFER: usize = 16 << 10;
/// Bytes asked for per pull of a marks mailbox: one buffer, held as the reply, its payload
/// and the decoded marks while they are set (part of the constant of the bound).
const MARKS_PULL_BYTES: u32 = (MARKS_PER_BUFFER * MARK_BYTES) as u32;

/// Who owns which vertices and the tag of the run's marks: learnt once per run, by a
/// collective every member calls at the same point (its first split round).
#[derive(Debug, Clone)]
pub struct Owners {
    /// Each member's first owned vertex, in member order.
    starts: Vec<u32>,
    rank: usize,
    /// Member 0's random number; each round's tag adds the round's number to it.
    tag: u64,
    /// Split rounds marked so far (the same count on every member).
    rounds: u64,
}

impl Owners {
    /// Gathers every member's owned start and member 0's tag.
    pub fn learn(split: &Split<'_>) -> Result<Owners, ExecError> {
        let Some(c) = split.collectives() else {
            return Ok(Owners {
                starts: vec![0],
                rank: 0,
                tag: 0,
                rounds: 0,
            });
        };
        if c.size() > MAX_MEMBERS as usize {
            return Err(ExecError::Other(format!(
                "compute_nodes: {} members exceed the {MAX_MEMBERS} a run can have",
                c.size()
            )));
        }
        let starts = c.gather(split.owned().start as u64)?;
        if starts.windows(2).any(|s| s[0] > s[1]) {
            return Err(ExecError::Other(format!(
                "the compute nodes' vertex ranges are not in member order (they start at \
                 {starts:?}); run the query again"
            )));
        }
        let mine = std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), c.rank());
        let tag = c
            .broadcast((c.rank() == 0).then_some(&[mine][..]))?
            .first()
            .copied()
            .ok_or_else(|| ExecError::Other("member 0 sent no tag for the run".into()))?;
        Ok(Owners {
            starts: starts
                .into_iter()
                .map(|s| s.min(u32::MAX as u64) as u32)
                .collect(),
            rank: c.rank(),
            tag,
            rounds: 0,
        })
    }

    /// The member that owns `v`: the last whose range starts at or before it.
    fn owner(&self, v: u32) -> usize {
        self.starts.partition_point(|&s| s <= v).saturating_sub(1)
    }

    /// The tag of the next round (advances the count).
    fn next_tag(&mut self) -> u64 {
        self.rounds += 1;
        self.tag.wrapping_add(self.rounds)
    }
}

/// The changes of one split round (see the module documentation).
pub struct Marks<'r> {
    n: u32,
    owned: Range<u32>,
    own: OwnedSet,
    /// Other members' vertices changed, not yet sent.
    others: Mutex<Vec<u32>>,
    /// List this many before compacting and sending.
    limit: usize,
    remote: Option<&'r dyn RemoteVector>,
    owners: &'r Owners,
    tag: u64,
    /// The first error of a send made while marking (reported by [`Marks::finish`]).
    failed: Mutex<Option<ExecError>>,
}

impl<'r> Marks<'r> {
    /// The marks of the next round of a run over `n` vertices whose member owns `owned`,
    /// sending through the mailboxes of `remote` (the round's state array), listing at most
    /// `budget / 32 / 4` (at least [`MARKS_FLOOR`]) other members' vertices at a time, and
    /// keeping its own in `memory` when their bits do not fit `budget`.
    pub fn new(
        n: u32,
        owned: Range<u32>,
        remote: Option<&'r dyn RemoteVector>,
        memory: Option<&dyn RemoteMemory>,
        owners: &'r mut Owners,
        budget: u64,
    ) -> Result<Marks<'r>, ExecError> {
        let tag = owners.next_tag();
        let limit = (budget / 32 / MARK_BYTES as u64).clamp(MARKS_FLOOR as u64, 1 << 26) as usize;
        Ok(Marks {
            n,
            own: OwnedSet::new(owned.clone(), budget, memory)?,
            owned,
            others: Mutex::new(Vec::new()),
            limit,
            remote,
            owners,
            tag,
            failed: Mutex::new(None),
        })
    }

    /// Marks each of `changed` (vertices below |V|).
    pub fn add(&self, changed: impl IntoIterator<Item = u32>) {
        let (mut mine, mut theirs) = (Vec::new(), Vec::new());
        for v in changed {
            if self.owned.contains(&v) {
                mine.push(v);
            } else if v < self.n {
                theirs.push(v);
            }
        }
        self.own.add_all(&mine);
        if theirs.is_empty() {
            return;
        }
        let full = {
            let mut others = self.others.lock().unwrap_or_else(|p| p.into_inner());
            others.append(&mut theirs);
            if others.len() < self.limit {
                None
            } else {
                // Compacted, a list still half full goes to the owners; else it keeps filling.
                others.sort_unstable();
                others.dedup();
                (others.len() > self.limit / 2).then(|| std::mem::take(&mut *others))
            }
        };
        if let Some(list) = full {
            if let Err(e) = self.send(&list) {
                let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
                failed.get_or_insert(e);
            }
        }
    }

    /// Sends the sorted `list` of other members' vertices to their owners' mailboxes.
    fn send(&self, list: &[u32]) -> Result<(), ExecError> {
        if list.is_empty() {
            return Ok(());
        }
        let remote = self.remote.ok_or_else(|| {
            ExecError::Other("a split round's changes need the state's remote memory".into())
        })?;
        let mut buffers = Vec::new();
        let mut i = 0;
        while i < list.len() {
            let owner = self.owners.owner(list[i]);
            let end = match self.owners.starts.get(owner + 1) {
                Some(&next) => i + list[i..].partition_point(|&v| v < next),
                None => list.len(),
            };
            for piece in list[i..end].chunks(MARKS_PER_BUFFER) {
                buffers.push((
                    self.owners.starts[owner] as u64,
                    FIRST_MARKS_MAILBOX + owner as u32,
                    mail::encode_marks(self.tag, piece),
                ));
            }
            i = end;
        }
        Ok(remote.mailbox_push(buffers)?)
    }

    /// Ends the round on every member: sends what is left, waits for every member's sends,
    /// pulls this member's mailbox into its set, and returns its part of the next frontier
    /// (with the size of the whole).
    pub fn finish(self, split: &Split<'_>) -> Result<VertexSubset, ExecError> {
        let failed = self.failed.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(e) = failed {
            return Err(e);
        }
        let mut others =
            std::mem::take(&mut *self.others.lock().unwrap_or_else(|p| p.into_inner()));
        others.sort_unstable();
        others.dedup();
        self.send(&others)?;
        drop(others);
        split.settle()?;
        if !self.owned.is_empty() && self.owners.starts.len() > 1 {
            let remote = self.remote.ok_or_else(|| {
                ExecError::Other("a split round's changes need the state's remote memory".into())
            })?;
            let what = format!(
                "the marks mailbox of vertices {}..{}",
                self.owned.start, self.owned.end
            );
            let mailbox = FIRST_MARKS_MAILBOX + self.owners.rank as u32;
            loop {
                let got =
                    remote.mailbox_pull(self.owned.start as u64, mailbox, MARKS_PULL_BYTES)?;
                if got.is_empty() {
                    break;
                }
                for buf in got {
                    let Mail::Marks(items) = mail::decode(&buf, self.tag, &what)? else {
                        return Err(ExecError::Other(format!(
                            "{what}: a buffer of updates among the marks; the memory node's \
                             mailbox holds foreign data: run the query again"
                        )));
                    };
                    if let Some(v) = items.iter().find(|v| !self.owned.contains(v)) {
                        return Err(ExecError::Other(format!(
                            "{what}: a mark for vertex {v}, which another member owns; run \
                             the query again"
                        )));
                    }
                    self.own.add_all(&items);
                }
            }
        }
        let (bits, mine) = self.own.finish()?;
        let count = split.sum_u64(mine)?;
        Ok(VertexSubset::from_part_bits(self.n, bits, count))
    }
}
