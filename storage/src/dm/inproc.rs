//! The in-process transport: the server's region logic called directly. For tests and
//! single-machine runs; counts the same bytes a TCP transport would send, so profiles agree.

use std::collections::HashMap;
use std::sync::Arc;

use super::lease::Leases;
use super::protocol::Message;
use super::region::MemoryNode;
use super::stats::{StatsSnapshot, TransportStats};
use super::transport::{Connector, Ticket, Transport};
use crate::error::{Result, StoreError};

/// A transport to a [`MemoryNode`] in this process.
pub struct InProcTransport {
    node: Arc<MemoryNode>,
    /// This transport plays one connection: its uncommitted leased regions go with it.
    leases: Leases,
    name: Arc<str>,
    stats: TransportStats,
}

impl InProcTransport {
    /// A transport to `node`; several transports may share one node.
    pub fn new(node: Arc<MemoryNode>) -> InProcTransport {
        let name: Arc<str> = format!("in-process node {}", node.node_id()).into();
        InProcTransport {
            leases: Leases::new(node.clone()),
            node,
            name,
            stats: TransportStats::default(),
        }
    }

    /// The node behind this transport.
    pub fn node(&self) -> &Arc<MemoryNode> {
        &self.node
    }
}

impl Transport for InProcTransport {
    fn node_id(&self) -> u16 {
        self.node.node_id()
    }

    fn node_name(&self) -> &str {
        &self.name
    }

    fn submit(&self, msg: Message) -> Result<Ticket> {
        let req_len = msg.wire_len();
        self.stats.record_request(&msg, req_len);
        // The request is consumed by the handler; count it before.
        let reply = self.leases.handle(msg);
        self.stats.record_reply(reply.wire_len());
        Ok(Ticket::ready(self.name.clone(), Ok(reply)))
    }

    fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }
}

/// Opens [`InProcTransport`]s to memory nodes of this process by the names they were added
/// under, so a [`DmStore`](super::graph_store::DmStore) runs over in-process nodes in tests.
#[derive(Default, Clone)]
pub struct InProcConnector {
    nodes: HashMap<String, Arc<MemoryNode>>,
}

impl InProcConnector {
    /// A connector that knows no node yet.
    pub fn new() -> InProcConnector {
        InProcConnector::default()
    }

    /// Makes `node` reachable as `name` (what the layout's node addresses say).
    pub fn add(&mut self, name: &str, node: Arc<MemoryNode>) -> &mut Self {
        self.nodes.insert(name.to_string(), node);
        self
    }
}

impl Connector for InProcConnector {
    type Transport = InProcTransport;

    fn connect(&self, addr: &str) -> Result<InProcTransport> {
        match self.nodes.get(addr) {
            Some(n) => Ok(InProcTransport::new(n.clone())),
            None => Err(StoreError::Remote {
                node: addr.to_string(),
                message: "no in-process memory node of that name".into(),
            }),
        }
    }

    fn transport_name(&self) -> &'static str {
        "in-process"
    }
}
