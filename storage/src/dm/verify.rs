//! `VERIFY GRAPH` for a DM graph: reads every index entry and every out-of-place list (with
//! its weights) from the memory nodes, so every byte of every region the graph owns is checked
//! against its checksum, and every degree against the durable block file.

use super::graph_store::DmStore;
use super::layout;
use super::transport::Connector;
use crate::error::Result;
use crate::store::{Direction, GraphStore};

/// What a remote check read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteReport {
    /// Memory nodes holding the graph.
    pub nodes: usize,
    /// Index entries checked (one per vertex and direction).
    pub entries_checked: u64,
    /// Out-of-place lists checked.
    pub lists_checked: u64,
    /// Bytes received from the memory nodes.
    pub bytes_read: u64,
}

/// Checks the whole remote copy of `store`; the first damaged entry or list is the error
/// (naming graph, memory node and region).
pub fn verify_remote<C: Connector>(store: &DmStore<C>) -> Result<RemoteReport> {
    let l = store.layout();
    let before = store.remote_stats();
    let dirs: &[Direction] = if l.directed {
        &[Direction::Out, Direction::In]
    } else {
        &[Direction::Out]
    };
    let cap = layout::in_place_capacity(l.weighted) as usize;
    let mut entries = 0u64;
    let mut lists = 0u64;
    for &dir in dirs {
        store.scan_lists(dir, 0..l.vertices, l.weighted, |_, targets, _| {
            entries += 1;
            if targets.len() > cap {
                lists += 1;
            }
        })?;
    }
    Ok(RemoteReport {
        nodes: l.nodes.len(),
        entries_checked: entries,
        lists_checked: lists,
        bytes_read: store.remote_stats().since(&before).bytes_received,
    })
}
