//! Mailboxes of a remote array (DMG §4.3.1, collaborative update): buffers of redistribution
//! items left on the memory node that holds a window of the array, for the compute node that
//! owns the window to pull and apply.
//!
//! A mailbox lives on the node holding the element it is addressed `at` (so the owner pulls
//! from the node it will write the window back to) and is named by a 16-bit number the caller
//! chooses (a window), which the array widens into a node-wide 64-bit id with the offset of its
//! own region there: regions are never reused, so two arrays — two queries, two compute nodes
//! — can never read each other's mail. The array remembers every mailbox it pushed to and
//! drains those it was not asked to pull when it is freed or dropped; a compute node killed
//! outright leaves its region leased, and the memory node drops the region's mailboxes with it
//! when the lease ends.

use std::collections::VecDeque;

use super::attrs::{RemoteArray, DEPTH};
use super::protocol::Message;
use super::transport::{unexpected, Ticket};
use crate::error::Result;
use crate::remote_memory::RemoteVector;

/// Bytes asked for per pull when draining.
const PULL_BYTES: u32 = 8 << 20;

/// Largest mailbox number a caller may use: the rest of the 64-bit id is the region's offset.
pub const MAX_MAILBOX: u32 = 0xffff;

impl RemoteArray {
    /// The node-wide id of this array's mailbox `mailbox` on partition `p`'s node.
    fn mailbox_id(&self, p: usize, mailbox: u32) -> Result<u64> {
        if mailbox > MAX_MAILBOX {
            return Err(crate::error::StoreError::Other(format!(
                "mailbox number {mailbox} is beyond {MAX_MAILBOX}"
            )));
        }
        Ok((self.region_base(p)?.offset() << 16) | mailbox as u64)
    }

    /// Appends each `(at, mailbox, data)` buffer to mailbox `mailbox` on the node holding
    /// element `at`, up to [`DEPTH`] pushes in flight.
    pub(crate) fn push_mail(&self, buffers: Vec<(u64, u32, Vec<u8>)>) -> Result<()> {
        let mut q: VecDeque<(usize, Ticket)> = VecDeque::new();
        let wait = |(p, t): (usize, Ticket)| -> Result<()> {
            match t.wait()? {
                Message::Done => Ok(()),
                m => Err(unexpected(&self.node_name(p), &m)),
            }
        };
        for (at, mailbox, data) in buffers {
            if at >= self.len() {
                return Err(self.out_of_range(at));
            }
            let p = self.partition_of(at);
            let id = self.mailbox_id(p, mailbox)?;
            self.note_mailbox(p, mailbox);
            if q.len() >= DEPTH {
                if let Some(f) = q.pop_front() {
                    wait(f)?;
                }
            }
            let t = self
                .node(p)?
                .submit(Message::MailboxPush { mailbox: id, data })?;
            q.push_back((p, t));
        }
        while let Some(f) = q.pop_front() {
            wait(f)?;
        }
        Ok(())
    }

    /// The oldest buffers waiting in mailbox `mailbox` on the node holding element `at`, up to
    /// `max_bytes` (at least one if any waits); empty once the mailbox is.
    pub(crate) fn pull_mail(&self, at: u64, mailbox: u32, max_bytes: u32) -> Result<Vec<Vec<u8>>> {
        if at >= self.len() {
            return Err(self.out_of_range(at));
        }
        let p = self.partition_of(at);
        let got = self
            .node(p)?
            .mailbox_pull(self.mailbox_id(p, mailbox)?, max_bytes)?;
        if got.is_empty() {
            self.forget_mailbox(p, mailbox);
        }
        Ok(got)
    }

    /// Empties every mailbox pushed to and not pulled since, best effort.
    pub(crate) fn drain_mailboxes(&self) {
        for (p, mailbox) in self.take_mailboxes() {
            if let (Ok(node), Ok(id)) = (self.node(p), self.mailbox_id(p, mailbox)) {
                while matches!(node.mailbox_pull(id, PULL_BYTES), Ok(b) if !b.is_empty()) {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::dm::attrs::NodeSet;
    use crate::dm::{InProcTransport, MemoryNode};
    use crate::remote_memory::ElementKind;

    fn nodes() -> (Vec<Arc<MemoryNode>>, Arc<dyn NodeSet>) {
        let mems: Vec<Arc<MemoryNode>> = (1..=2)
            .map(|id| Arc::new(MemoryNode::new(id, 1 << 20)))
            .collect();
        let set: Vec<InProcTransport> = mems
            .iter()
            .map(|m| InProcTransport::new(m.clone()))
            .collect();
        (mems, Arc::new(set))
    }

    #[test]
    fn buffers_go_to_the_node_of_their_element_and_come_back_in_order() {
        let (mems, set) = nodes();
        let a = RemoteArray::alloc(set, vec![0, 4, 10], ElementKind::U64, 0).unwrap();
        a.mailbox_push(vec![(1, 7, vec![1]), (5, 7, vec![2]), (2, 7, vec![3])])
            .unwrap();
        assert_eq!(a.mailbox_pull(0, 7, 1).unwrap(), vec![vec![1]]);
        assert_eq!(a.mailbox_pull(3, 7, 1 << 20).unwrap(), vec![vec![3]]);
        assert_eq!(a.mailbox_pull(9, 7, 1 << 20).unwrap(), vec![vec![2]]);
        assert!(a.mailbox_pull(0, 7, 1 << 20).unwrap().is_empty());
        assert!(a.mailbox_push(vec![(10, 7, vec![1])]).is_err());
        let before: Vec<u64> = mems.iter().map(|m| m.used()).collect();
        a.mailbox_push(vec![(0, 9, vec![0; 100])]).unwrap();
        assert!(mems[0].used() > before[0]);
        drop(a);
        assert_eq!(
            mems[0].used(),
            0,
            "an array's unpulled mail is drained when it goes"
        );
    }

    #[test]
    fn two_arrays_never_read_each_others_mail() {
        let (_mems, set) = nodes();
        let a = RemoteArray::alloc(set.clone(), vec![0, 4, 10], ElementKind::U64, 0).unwrap();
        let b = RemoteArray::alloc(set, vec![0, 4, 10], ElementKind::U64, 0).unwrap();
        a.mailbox_push(vec![(1, 3, vec![1])]).unwrap();
        b.mailbox_push(vec![(1, 3, vec![2])]).unwrap();
        assert_eq!(b.mailbox_pull(0, 3, 1 << 20).unwrap(), vec![vec![2]]);
        assert_eq!(a.mailbox_pull(0, 3, 1 << 20).unwrap(), vec![vec![1]]);
        assert!(a.mailbox_push(vec![(1, MAX_MAILBOX + 1, vec![1])]).is_err());
    }
}
