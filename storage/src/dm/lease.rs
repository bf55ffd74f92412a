//! Regions leased to a connection: what a loader allocates stays only if it commits.
//!
//! A loader killed mid-load (`kill -9` during `CREATE ... STORAGE dm`) never frees what it
//! allocated, and no catalog records it, so it would stay allocated forever. Regions allocated
//! with `ALLOC_LEASED` are therefore owned by the connection that asked for them: `COMMIT addr`
//! makes one permanent, and every region still leased when the connection ends (closed, cut,
//! or its process killed, which makes the kernel close the socket) is freed. No timers, no
//! owner bookkeeping across connections: the connection is the lease.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use super::addr::GlobalAddr;
use super::protocol::{ErrorCode, Message};
use super::region::MemoryNode;

/// The leases of one connection, in front of the node's request handler.
pub struct Leases {
    node: Arc<MemoryNode>,
    held: Mutex<HashSet<u64>>,
}

impl Leases {
    /// No leases yet, on `node`.
    pub fn new(node: Arc<MemoryNode>) -> Leases {
        Leases {
            node,
            held: Mutex::new(HashSet::new()),
        }
    }

    /// Answers one request: leasing calls here, everything else by the node.
    pub fn handle(&self, msg: Message) -> Message {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        match msg {
            Message::AllocLeased { size } => {
                let reply = self.node.handle(Message::Alloc { size });
                if let Message::Allocated { addr } = &reply {
                    held.insert(addr.raw());
                }
                reply
            }
            Message::AllocOwned { size, owner } => match self.node.alloc_owned(size, owner) {
                Ok(addr) => {
                    held.insert(addr.raw());
                    Message::Allocated { addr }
                }
                Err((code, message)) => Message::Error { code, message },
            },
            Message::Commit { addr } => {
                if held.remove(&addr.raw()) {
                    Message::Done
                } else {
                    Message::Error {
                        code: ErrorCode::BadRequest,
                        message: format!(
                            "region {addr} is not leased on this connection (committed already, freed, or allocated by another connection)"
                        ),
                    }
                }
            }
            // A region still leased here is this connection's own, whoever owns it later.
            Message::Free { addr } | Message::FreeOwned { addr, .. }
                if held.remove(&addr.raw()) =>
            {
                match self.node.free_leased(addr) {
                    Ok(()) => Message::Done,
                    Err((code, message)) => Message::Error { code, message },
                }
            }
            other => {
                drop(held);
                self.node.handle(other)
            }
        }
    }

    /// Regions leased and not yet committed.
    pub fn pending(&self) -> usize {
        self.held.lock().map(|h| h.len()).unwrap_or(0)
    }
}

impl Drop for Leases {
    /// The connection ended: every region it did not commit is freed.
    fn drop(&mut self) {
        let held = std::mem::take(self.held.get_mut().unwrap_or_else(|e| e.into_inner()));
        for raw in held {
            // Freed already by someone else is fine: the region is gone either way.
            let _ = self.node.free_leased(GlobalAddr::from_raw(raw));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr_of(m: Message) -> GlobalAddr {
        match m {
            Message::Allocated { addr } => addr,
            other => panic!("not allocated: {other:?}"),
        }
    }

    #[test]
    fn uncommitted_regions_are_freed_when_the_lease_ends() {
        let node = Arc::new(MemoryNode::new(1, 1 << 20));
        let leases = Leases::new(node.clone());
        let kept = addr_of(leases.handle(Message::AllocLeased { size: 4096 }));
        let lost = addr_of(leases.handle(Message::AllocLeased { size: 8192 }));
        assert_eq!(leases.handle(Message::Commit { addr: kept }), Message::Done);
        assert!(matches!(
            leases.handle(Message::Commit { addr: kept }),
            Message::Error { .. }
        ));
        assert_eq!(leases.pending(), 1);
        let with_both = node.used();
        drop(leases);
        assert_eq!(node.used(), with_both - 8192);
        assert!(node.free(lost).is_err(), "freed already");
        assert!(node.free(kept).is_ok(), "committed: still allocated");
        assert_eq!(node.used(), 0);
    }

    #[test]
    fn a_freed_lease_is_not_freed_twice() {
        let node = Arc::new(MemoryNode::new(1, 1 << 20));
        let leases = Leases::new(node.clone());
        let a = addr_of(leases.handle(Message::AllocLeased { size: 64 }));
        assert_eq!(leases.handle(Message::Free { addr: a }), Message::Done);
        assert_eq!(leases.pending(), 0);
        drop(leases);
        assert_eq!(node.used(), 0);
    }
}
