//! The disaggregated-memory pool (DMG §2.2, §3.3): memory nodes that own regions addressed by a
//! 16-bit node id and a 48-bit offset, serving one-sided verbs (READ, WRITE, CAS, FAA, batched)
//! and a few two-sided calls (ALLOC/FREE, mailboxes for redistribution buffers, pass-by-value
//! updates executed on the node).
//!
//! Layers: [`protocol`] (frames), [`region`] (the server's memory and its checks), [`server`]
//! (`frontier memnode`), [`transport`] (the client trait) with [`inproc`], [`tcp`] and, behind
//! feature `rdma`, `rdma`; [`stats`] counts every operation and projects it onto an RDMA network.
//! The graph store on top: [`layout`] (32-byte index entries), [`load`] (block file → pool) and
//! [`graph_store`] (`DmStore`, merged and batched retrieval, every entry and list checked against
//! its checksum as it arrives), [`free`] (DROP's frees, checked by owner and epoch), [`verify`] (`VERIFY GRAPH` of the remote copy), and [`attrs`]
//! (vertex attribute arrays kept remote, updated by direct remote update). [`lease`]: regions a
//! connection allocates are freed when it ends unless committed.
//! See docs/DM.md.

pub mod addr;
pub mod attrs;
pub mod collectives;
pub mod compute_protocol;
pub mod descriptor;
pub mod descriptor_pages;
pub mod free;
pub mod graph_store;
pub mod inproc;
pub mod layout;
pub mod lease;
pub mod load;
pub mod mailbox;
pub mod protocol;
#[cfg(feature = "rdma")]
pub mod rdma;
pub mod rdma_plan;
pub mod rdma_wire;
pub mod region;
pub mod select;
pub mod server;
pub mod stats;
pub mod tcp;
pub mod token;
pub mod transport;
pub mod verify;

pub use addr::GlobalAddr;
pub use attrs::{NodeSet, RemoteArray};
pub use collectives::{JobRegion, MnCollectives};
pub use graph_store::{DmOptions, DmStore};
pub use inproc::{InProcConnector, InProcTransport};
pub use load::{DmLayout, PoolConfig};
pub use protocol::{
    decode_frame, ErrorCode, Frame, FrameError, Message, UpdateItem, UpdateOp, Verb, VerbReply,
};
pub use region::MemoryNode;
pub use select::{DmConnector, DmTransport, TransportKind};
pub use server::{
    run_memnode, spawn_memnode_for_tests, stop_on_signals, MemnodeHandle, MemnodeOptions,
};
pub use stats::{CostModel, StatsSnapshot, TransportStats};
pub use tcp::{TcpConnector, TcpOptions, TcpTransport};
pub use transport::{Batch, Connector, Ticket, Transport};
