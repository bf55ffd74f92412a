//! Freeing a DM graph's regions (DROP GRAPH, CREATE OR REPLACE) and saying what was not freed.
//!
//! Every region of a graph is owned by its load's nonce and was allocated in one life (epoch)
//! of its memory node, both recorded in the layout. A free names both, and the node refuses
//! any region that is not the caller's: a node restarted since the load hands out the same
//! addresses again, and freeing by address alone would free another graph's lists. What could
//! not be freed (the node unreachable, no token) is reported per node with its regions and
//! bytes, since once the catalog forgets the graph nothing else refers to them.

use std::fmt::Write as _;

use super::addr::GlobalAddr;
use super::load::{DmLayout, PoolConfig};
use super::protocol::ErrorCode;
use super::tcp::TcpTransport;
use super::transport::Transport;
use crate::error::StoreError;

/// What happened to a graph's regions on one memory node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeOutcome {
    /// Every region there was freed (or was gone already).
    Freed,
    /// The node restarted since the load: the regions went with its previous life, and the
    /// addresses, reused since, were left alone.
    Restarted,
    /// Some regions were refused as not this graph's (left as they are).
    Refused { regions: usize },
    /// The regions could not be freed and stay allocated; `why` says what stopped it.
    Left { why: String },
}

/// One memory node's part of a graph and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFree {
    /// `host:port` as the layout records it.
    pub addr: String,
    pub id: u16,
    /// The graph's regions on this node.
    pub regions: usize,
    /// Their bytes, when the layout recorded sizes.
    pub bytes: Option<u64>,
    pub outcome: NodeOutcome,
}

/// What freeing a graph's regions did, node by node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FreeReport {
    pub nodes: Vec<NodeFree>,
}

impl FreeReport {
    /// True when nothing stays allocated and nothing was refused.
    pub fn clean(&self) -> bool {
        self.nodes
            .iter()
            .all(|n| matches!(n.outcome, NodeOutcome::Freed | NodeOutcome::Restarted))
    }

    /// One line per node that needs saying (left allocated, refused, restarted), for the
    /// statement's output; none when every region was freed.
    pub fn lines(&self, graph: &str) -> Vec<String> {
        self.nodes
            .iter()
            .filter_map(|n| {
                let mut what = format!("{} region{}", n.regions, plural(n.regions));
                if let Some(b) = n.bytes {
                    let _ = write!(what, " ({b} bytes)");
                }
                let node = format!("memory node {} (id {})", n.addr, n.id);
                match &n.outcome {
                    NodeOutcome::Freed => None,
                    NodeOutcome::Restarted => Some(format!(
                        "{node} restarted since graph {graph} was loaded: its {what} there went with it; nothing freed there (the addresses belong to what was loaded since)"
                    )),
                    NodeOutcome::Refused { regions } => Some(format!(
                        "{node} refused to free {regions} of graph {graph}'s {what}: they are not its own (another graph's, or allocated in another life of the node); left as they are"
                    )),
                    NodeOutcome::Left { why } => Some(format!(
                        "{node}: {what} of graph {graph} left allocated ({why}); restarting that memory node frees them, with every other graph on it"
                    )),
                }
            })
            .collect()
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The graph's regions on each of its nodes: (regions, bytes when recorded).
fn per_node(layout: &DmLayout) -> Vec<(usize, Option<u64>)> {
    let sized = layout.region_bytes.len() == layout.regions.len();
    layout
        .nodes
        .iter()
        .map(|n| {
            let mine: Vec<usize> = (0..layout.regions.len())
                .filter(|&i| GlobalAddr::from_raw(layout.regions[i]).node() == n.id)
                .collect();
            let bytes = sized.then(|| mine.iter().map(|&i| layout.region_bytes[i]).sum());
            (mine.len(), bytes)
        })
        .collect()
}

/// The report for a graph none of whose nodes could be asked (`why`: no token, no nodes set).
pub fn left_everywhere(layout: &DmLayout, why: &str) -> FreeReport {
    FreeReport {
        nodes: layout
            .nodes
            .iter()
            .zip(per_node(layout))
            .map(|(n, (regions, bytes))| NodeFree {
                addr: n.addr.clone(),
                id: n.id,
                regions,
                bytes,
                outcome: NodeOutcome::Left {
                    why: why.to_string(),
                },
            })
            .collect(),
    }
}

/// Frees every region of a DM graph that is still its own, node by node, and reports the rest.
pub fn free_layout(layout: &DmLayout, cfg: &PoolConfig) -> FreeReport {
    let counts = per_node(layout);
    let mut report = FreeReport::default();
    for (n, (regions, bytes)) in layout.nodes.iter().zip(counts) {
        let outcome = free_on_node(layout, n.id, n.epoch, &n.addr, cfg);
        report.nodes.push(NodeFree {
            addr: n.addr.clone(),
            id: n.id,
            regions,
            bytes,
            outcome,
        });
    }
    report
}

fn free_on_node(
    layout: &DmLayout,
    id: u16,
    epoch: Option<u64>,
    addr: &str,
    cfg: &PoolConfig,
) -> NodeOutcome {
    let Some(epoch) = epoch else {
        return NodeOutcome::Left {
            why: "the graph was loaded by an earlier frontier that did not record the node's epoch, so its regions cannot be told from another graph's".into(),
        };
    };
    let t = match TcpTransport::connect(addr, &cfg.token, cfg.tcp) {
        Ok(t) => t,
        Err(e) => {
            return NodeOutcome::Left {
                why: format!("cannot reach it: {}", short(&e)),
            }
        }
    };
    if t.node_id() != id {
        return NodeOutcome::Left {
            why: format!("{addr} now answers as node id {}", t.node_id()),
        };
    }
    if t.epoch() != epoch {
        return NodeOutcome::Restarted;
    }
    let mut refused = 0;
    for &r in &layout.regions {
        let a = GlobalAddr::from_raw(r);
        if a.node() != id {
            continue;
        }
        match t.free_owned(a, epoch, layout.nonce) {
            Ok(()) => {}
            Err(StoreError::Remote { message, .. }) if is_code(&message, ErrorCode::NotOwner) => {
                refused += 1
            }
            // Not allocated: freed already (an earlier DROP that was cut short).
            Err(StoreError::Remote { message, .. })
                if is_code(&message, ErrorCode::OutOfBounds) => {}
            Err(e) => {
                return NodeOutcome::Left {
                    why: format!("freeing failed: {}", short(&e)),
                }
            }
        }
    }
    if refused > 0 {
        NodeOutcome::Refused { regions: refused }
    } else {
        NodeOutcome::Freed
    }
}

/// Whether a remote error's message carries `code` (as `Transport` formats it: "... (Code)").
fn is_code(message: &str, code: ErrorCode) -> bool {
    message.ends_with(&format!("({code:?})"))
}

fn short(e: &StoreError) -> String {
    match e {
        StoreError::Remote { message, .. } => message.clone(),
        e => e.to_string(),
    }
}
