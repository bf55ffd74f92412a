//! RDMA transport (cargo feature `rdma`, via the `ibverbs` crate). UNTESTED HERE: these machines
//! have no RDMA device, so this module is built, never run. See docs/DM.md.
//!
//! What exists: device probing that treats an error from `ibverbs::devices()` (what it answers
//! where there is no RDMA) and an empty list alike as "no RDMA"; opening a device, a protection
//! domain, a completion queue, a registered buffer and an RC queue pair, to check a device is
//! usable. What does not: posting one-sided READ/WRITE/CAS/FAA work requests. `ibverbs` 0.9 only
//! wraps two-sided SEND/RECV (`post_send`/`post_receive`) and keeps the raw `ibv_qp` private;
//! one-sided verbs need `ibv_send_wr` with `IBV_WR_RDMA_READ`/`_WRITE`/`_ATOMIC_CMP_AND_SWP`/
//! `_ATOMIC_FETCH_AND_ADD` and `wr.rdma`/`wr.atomic` filled in, chained by `next` so a batch is
//! one doorbell, which means depending on `ibverbs-sys` directly. Until then `RdmaTransport::connect`
//! refuses with an error saying so, and callers fall back to TCP.

use std::net::SocketAddr;

use super::protocol::Message;
use super::stats::{StatsSnapshot, TransportStats};
use super::transport::{Ticket, Transport};
use crate::error::{Result, StoreError};

/// What a usable device looked like when probed.
#[derive(Debug, Clone)]
pub struct RdmaProbe {
    /// Device name (e.g. `mlx5_0`).
    pub device: String,
    /// Entries in the device's GID table.
    pub gids: usize,
    /// Local queue-pair number of the test QP.
    pub qp_num: u32,
}

/// Names of the RDMA devices present; an empty list when there is no RDMA, whether
/// `ibverbs::devices()` answered an error (no kernel support) or an empty list.
pub fn rdma_devices() -> Vec<String> {
    match ibverbs::devices() {
        Ok(list) => list
            .iter()
            .map(|d| {
                d.name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "unnamed".into())
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// True when at least one RDMA device exists.
pub fn rdma_available() -> bool {
    !rdma_devices().is_empty()
}

/// Opens the first device and builds the resources a connection needs (context, PD, CQ,
/// registered memory, an RC queue pair), then releases them: proves the device is usable.
pub fn probe() -> Result<RdmaProbe> {
    let none = || StoreError::Other("no RDMA device on this machine".into());
    let list = ibverbs::devices().map_err(|_| none())?;
    let dev = list.iter().next().ok_or_else(none)?;
    let name = dev
        .name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "unnamed".into());
    let err =
        |what: &str, e: std::io::Error| StoreError::Other(format!("RDMA {name}: {what}: {e}"));
    let ctx = dev.open().map_err(|e| err("open", e))?;
    let cq = ctx.create_cq(256, 0).map_err(|e| err("create CQ", e))?;
    let pd = ctx.alloc_pd().map_err(|e| err("alloc PD", e))?;
    let mr = pd
        .allocate::<u64>(512)
        .map_err(|e| err("register memory", e))?;
    let _rkey = mr.rkey();
    let mut builder = pd.create_qp(&cq, &cq, ibverbs::ibv_qp_type::IBV_QPT_RC);
    builder
        .set_max_send_wr(256)
        .set_max_rd_atomic(16)
        .allow_remote_rw();
    let qp = builder.build().map_err(|e| err("build QP", e))?;
    let ep = qp.endpoint();
    Ok(RdmaProbe {
        device: name.clone(),
        gids: ctx.gid_table().len(),
        qp_num: ep.num,
    })
}

/// The RDMA transport. Connecting fails until one-sided work requests are wired (see the
/// module documentation); the type exists so the pool can select transports uniformly.
pub struct RdmaTransport {
    name: String,
    node_id: u16,
    stats: TransportStats,
}

impl RdmaTransport {
    /// Connects to the memory node at `addr` over RDMA. Today: probes, then refuses with the
    /// reason, so the caller falls back to TCP.
    pub fn connect(addr: SocketAddr, _token: &str) -> Result<RdmaTransport> {
        let node = addr.to_string();
        if !rdma_available() {
            return Err(StoreError::Remote {
                node,
                message: "no RDMA device on this machine (use the TCP transport)".into(),
            });
        }
        let p = probe()?;
        Err(StoreError::Remote {
            node,
            message: format!(
                "RDMA device {} is usable, but one-sided verbs are not implemented: ibverbs 0.9 \
                 wraps only SEND/RECV (use the TCP transport)",
                p.device
            ),
        })
    }
}

impl Transport for RdmaTransport {
    fn node_id(&self) -> u16 {
        self.node_id
    }

    fn node_name(&self) -> &str {
        &self.name
    }

    fn submit(&self, msg: Message) -> Result<Ticket> {
        self.stats.record_request(&msg, msg.wire_len());
        Err(StoreError::Remote {
            node: self.name.clone(),
            message: "RDMA one-sided verbs are not implemented".into(),
        })
    }

    fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }
}
