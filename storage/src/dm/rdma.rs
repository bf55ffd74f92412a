//! The RDMA transport (cargo feature `rdma`): one-sided READ / WRITE / CMP_AND_SWP /
//! FETCH_AND_ADD over a reliable-connected queue pair, two-sided calls over the TCP link it
//! was set up on. UNTESTED HERE: these machines have no RDMA device, so this module compiles
//! in CI and has never run (docs/DM.md says how to run it where a device exists).
//!
//! The logic that needs no device lives beside it and is tested without the feature:
//! [`rdma_wire`](super::rdma_wire) (endpoint and region-key encodings),
//! [`rdma_plan`](super::rdma_plan) (bounds checks, doorbell chains, completion routing). What is
//! here is the thin layer of `ibverbs-sys` calls: open a device, create and connect queue pairs,
//! register memory, post chains, poll completions.
//!
//! - Client ([`RdmaTransport`]): connects over TCP (token handshake), sends `RDMA_CONNECT`
//!   with its queue pair's endpoint, brings the queue pair to RTS against the node's answer,
//!   and from then on posts every `Batch` as one-sided work requests; a poller thread maps
//!   completions to the batches' tickets. Region keys come with `ALLOC` on this connection,
//!   or are looked up once per region with `REGION_KEY_OF`.
//! - Memory node ([`RdmaServer`]): opens the first device at start (none: TCP only), answers
//!   `RDMA_CONNECT` with a queue pair of its own per connection, and registers a region when
//!   its key is first asked for (one memory region per region; the registration holds the
//!   region's memory, so a region freed while registered is unmapped only after deregistration).
//!
//! Caveat to check on hardware: the atomics' old words are decoded little-endian, as the memory
//! node stores words; some adapters return them in network order.

use std::collections::HashMap;
use std::ffi::CStr;
use std::net::ToSocketAddrs;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Sender};
use ibverbs_sys as ffi;

use super::addr::GlobalAddr;
use super::protocol::{ErrorCode, Message, Verb};
use super::rdma_plan::{
    plan, CompletionRouter, DoorbellPlan, RegionTable, Routed, WorkOp, WorkRequest,
};
use super::rdma_wire::{QpEndpoint, RegionKey};
use super::region::{MemoryNode, RegionMemory};
use super::stats::{StatsSnapshot, TransportStats};
use super::tcp::{TcpOptions, TcpTransport};
use super::transport::{unexpected, Connector, Ticket, Transport};
use crate::error::{Result, StoreError};

/// The device port every queue pair uses.
const PORT: u8 = 1;
/// Send-queue depth of a queue pair: work requests posted and not yet known complete.
const SQ_DEPTH: u32 = 2048;
/// Most work requests in one chain (one doorbell, one signalled completion).
const MAX_CHAIN: usize = 64;
/// Outstanding RDMA reads and atomics per queue pair, each way.
const RD_ATOMIC: u8 = 16;

/// Names of the RDMA devices present; empty when there is no RDMA (no kernel support, no
/// device, or the verbs library finds no provider).
pub fn rdma_devices() -> Vec<String> {
    let mut n = 0i32;
    // SAFETY: the list is read within its length and freed once.
    unsafe {
        let list = ffi::ibv_get_device_list(&mut n);
        if list.is_null() {
            return Vec::new();
        }
        let names = (0..n.max(0) as usize)
            .map(|i| device_name(*list.add(i)))
            .collect();
        ffi::ibv_free_device_list(list);
        names
    }
}

/// True when at least one RDMA device exists.
pub fn rdma_available() -> bool {
    !rdma_devices().is_empty()
}

unsafe fn device_name(d: *mut ffi::ibv_device) -> String {
    let p = ffi::ibv_get_device_name(d);
    if p.is_null() {
        "unnamed".into()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

fn os_err(what: &str) -> StoreError {
    StoreError::Other(format!("RDMA: {what}: {}", std::io::Error::last_os_error()))
}

/// An opened device with one protection domain and its port's addressing.
struct Device {
    name: String,
    ctx: *mut ffi::ibv_context,
    pd: *mut ffi::ibv_pd,
    lid: u16,
    mtu: u8,
    /// GID index 0 when the port needs global routing (RoCE), else none.
    gid: Option<[u8; 16]>,
}

// SAFETY: verbs objects may be used from any thread (libibverbs is thread safe).
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

impl Device {
    /// Opens the first device.
    fn open_first() -> Result<Arc<Device>> {
        let mut n = 0i32;
        // SAFETY: each pointer is checked before use; the list is freed after opening.
        unsafe {
            let list = ffi::ibv_get_device_list(&mut n);
            if list.is_null() || n <= 0 {
                if !list.is_null() {
                    ffi::ibv_free_device_list(list);
                }
                return Err(StoreError::Other("no RDMA device on this machine".into()));
            }
            let dev = *list;
            let name = device_name(dev);
            let ctx = ffi::ibv_open_device(dev);
            ffi::ibv_free_device_list(list);
            if ctx.is_null() {
                return Err(os_err(&format!("open {name}")));
            }
            let pd = ffi::ibv_alloc_pd(ctx);
            if pd.is_null() {
                ffi::ibv_close_device(ctx);
                return Err(os_err(&format!("{name}: allocate a protection domain")));
            }
            let mut attr: ffi::ibv_port_attr = std::mem::zeroed();
            let rc = ffi::ibv_query_port(ctx, PORT, &mut attr as *mut ffi::ibv_port_attr as *mut _);
            let device = Device {
                name: name.clone(),
                ctx,
                pd,
                lid: attr.lid,
                mtu: attr.active_mtu.clamp(1, 5) as u8,
                gid: None,
            };
            if rc != 0 {
                return Err(StoreError::Other(format!(
                    "RDMA {name}: query port {PORT}: {}",
                    std::io::Error::from_raw_os_error(rc)
                )));
            }
            let mut device = device;
            if attr.link_layer == ffi::IBV_LINK_LAYER_ETHERNET as u8 {
                let mut gid: ffi::ibv_gid = std::mem::zeroed();
                if ffi::ibv_query_gid(ctx, PORT, 0, &mut gid) != 0 {
                    return Err(os_err(&format!("{name}: query GID 0")));
                }
                device.gid = Some(gid.raw);
            }
            Ok(Arc::new(device))
        }
    }

    /// Registers `len` bytes at `addr` with `access`.
    fn register(self: &Arc<Self>, addr: *mut u8, len: usize, access: u32) -> Result<Mr> {
        // SAFETY: the caller keeps the memory alive and in place until the `Mr` is dropped.
        let mr = unsafe { ffi::ibv_reg_mr(self.pd, addr.cast(), len, access as i32) };
        if mr.is_null() {
            return Err(os_err(&format!("{}: register {len} bytes", self.name)));
        }
        Ok(Mr {
            mr,
            _device: self.clone(),
        })
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: every queue pair, CQ and MR holds an `Arc<Device>`, so none outlives these.
        unsafe {
            ffi::ibv_dealloc_pd(self.pd);
            ffi::ibv_close_device(self.ctx);
        }
    }
}

/// A registered memory region, deregistered on drop.
struct Mr {
    mr: *mut ffi::ibv_mr,
    _device: Arc<Device>,
}

// SAFETY: see `Device`.
unsafe impl Send for Mr {}
unsafe impl Sync for Mr {}

impl Mr {
    fn lkey(&self) -> u32 {
        // SAFETY: `mr` is valid until drop.
        unsafe { (*self.mr).lkey }
    }
    fn rkey(&self) -> u32 {
        // SAFETY: as above.
        unsafe { (*self.mr).rkey }
    }
}

impl Drop for Mr {
    fn drop(&mut self) {
        // SAFETY: registered by `Device::register`, deregistered once.
        unsafe {
            ffi::ibv_dereg_mr(self.mr);
        }
    }
}

fn access_all() -> u32 {
    (ffi::ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
        | ffi::ibv_access_flags::IBV_ACCESS_REMOTE_READ
        | ffi::ibv_access_flags::IBV_ACCESS_REMOTE_WRITE
        | ffi::ibv_access_flags::IBV_ACCESS_REMOTE_ATOMIC)
        .0
}

/// A reliable-connected queue pair with its own completion queue.
struct Qp {
    qp: *mut ffi::ibv_qp,
    cq: *mut ffi::ibv_cq,
    psn: u32,
    device: Arc<Device>,
}

// SAFETY: see `Device`; posting and polling are thread safe in libibverbs.
unsafe impl Send for Qp {}
unsafe impl Sync for Qp {}

impl Qp {
    fn create(device: &Arc<Device>) -> Result<Qp> {
        // SAFETY: pointers are checked; on failure what was created is destroyed.
        unsafe {
            let cq = ffi::ibv_create_cq(
                device.ctx,
                SQ_DEPTH as i32,
                ptr::null_mut(),
                ptr::null_mut(),
                0,
            );
            if cq.is_null() {
                return Err(os_err("create a completion queue"));
            }
            let mut init: ffi::ibv_qp_init_attr = std::mem::zeroed();
            init.send_cq = cq;
            init.recv_cq = cq;
            init.cap.max_send_wr = SQ_DEPTH;
            init.cap.max_recv_wr = 1;
            init.cap.max_send_sge = 1;
            init.cap.max_recv_sge = 1;
            init.qp_type = ffi::ibv_qp_type::IBV_QPT_RC;
            init.sq_sig_all = 0;
            let qp = ffi::ibv_create_qp(device.pd, &mut init);
            if qp.is_null() {
                ffi::ibv_destroy_cq(cq);
                return Err(os_err("create a queue pair"));
            }
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let psn = (nanos ^ (*qp).qp_num) & 0xff_ffff;
            Ok(Qp {
                qp,
                cq,
                psn,
                device: device.clone(),
            })
        }
    }

    fn endpoint(&self) -> QpEndpoint {
        QpEndpoint {
            lid: self.device.lid,
            // SAFETY: `qp` is valid until drop.
            qp_num: unsafe { (*self.qp).qp_num },
            psn: self.psn,
            mtu: self.device.mtu,
            gid: self.device.gid.unwrap_or([0; 16]),
        }
    }

    /// INIT → RTR (against `remote`) → RTS.
    fn connect(&self, remote: &QpEndpoint) -> Result<()> {
        use ffi::ibv_qp_attr_mask as m;
        let modify = |attr: &mut ffi::ibv_qp_attr, mask: ffi::ibv_qp_attr_mask, step: &str| {
            // SAFETY: `qp` is valid; `attr` lives across the call.
            let rc = unsafe { ffi::ibv_modify_qp(self.qp, attr, mask.0 as i32) };
            if rc == 0 {
                Ok(())
            } else {
                Err(StoreError::Other(format!(
                    "RDMA {}: queue pair to {step}: {}",
                    self.device.name,
                    std::io::Error::from_raw_os_error(rc)
                )))
            }
        };
        // SAFETY: plain C structs, zero is a valid starting value.
        let mut a: ffi::ibv_qp_attr = unsafe { std::mem::zeroed() };
        a.qp_state = ffi::ibv_qp_state::IBV_QPS_INIT;
        a.pkey_index = 0;
        a.port_num = PORT;
        a.qp_access_flags = access_all();
        modify(
            &mut a,
            m::IBV_QP_STATE | m::IBV_QP_PKEY_INDEX | m::IBV_QP_PORT | m::IBV_QP_ACCESS_FLAGS,
            "INIT",
        )?;
        // SAFETY: as above.
        let mut a: ffi::ibv_qp_attr = unsafe { std::mem::zeroed() };
        a.qp_state = ffi::ibv_qp_state::IBV_QPS_RTR;
        a.path_mtu = remote.mtu.min(self.device.mtu) as ffi::ibv_mtu;
        a.dest_qp_num = remote.qp_num;
        a.rq_psn = remote.psn;
        a.max_dest_rd_atomic = RD_ATOMIC;
        a.min_rnr_timer = 12;
        a.ah_attr.dlid = remote.lid;
        a.ah_attr.port_num = PORT;
        if remote.has_gid() {
            a.ah_attr.is_global = 1;
            a.ah_attr.grh.dgid = ffi::ibv_gid { raw: remote.gid };
            a.ah_attr.grh.hop_limit = 0xff;
            a.ah_attr.grh.sgid_index = 0;
        }
        modify(
            &mut a,
            m::IBV_QP_STATE
                | m::IBV_QP_AV
                | m::IBV_QP_PATH_MTU
                | m::IBV_QP_DEST_QPN
                | m::IBV_QP_RQ_PSN
                | m::IBV_QP_MAX_DEST_RD_ATOMIC
                | m::IBV_QP_MIN_RNR_TIMER,
            "RTR",
        )?;
        // SAFETY: as above.
        let mut a: ffi::ibv_qp_attr = unsafe { std::mem::zeroed() };
        a.qp_state = ffi::ibv_qp_state::IBV_QPS_RTS;
        a.sq_psn = self.psn;
        a.timeout = 14;
        a.retry_cnt = 7;
        a.rnr_retry = 7;
        a.max_rd_atomic = RD_ATOMIC;
        modify(
            &mut a,
            m::IBV_QP_STATE
                | m::IBV_QP_SQ_PSN
                | m::IBV_QP_TIMEOUT
                | m::IBV_QP_RETRY_CNT
                | m::IBV_QP_RNR_RETRY
                | m::IBV_QP_MAX_QP_RD_ATOMIC,
            "RTS",
        )
    }

    /// Posts one chain as one linked list of work requests (one doorbell), all carrying
    /// `wr_id`, the staging buffer at `local` registered as `lkey`.
    fn post_chain(
        &self,
        chain: &[WorkRequest],
        wr_id: u64,
        local: *mut u8,
        lkey: u32,
    ) -> Result<()> {
        let mut sges: Vec<ffi::ibv_sge> = chain
            .iter()
            .map(|w| ffi::ibv_sge {
                // SAFETY (of the later post): offsets are inside the staging buffer (planned).
                addr: local as u64 + w.local_offset as u64,
                length: w.len,
                lkey,
            })
            .collect();
        // SAFETY: zeroed work requests are valid; every field used is set below.
        let mut wrs: Vec<ffi::ibv_send_wr> = (0..chain.len())
            .map(|_| unsafe { std::mem::zeroed() })
            .collect();
        let base = wrs.as_mut_ptr();
        for (i, w) in chain.iter().enumerate() {
            let wr = &mut wrs[i];
            wr.wr_id = wr_id;
            wr.sg_list = &mut sges[i];
            wr.num_sge = 1;
            wr.send_flags = if w.signalled {
                ffi::ibv_send_flags::IBV_SEND_SIGNALED.0
            } else {
                0
            };
            // SAFETY: `base` points into `wrs`, which is not resized from here on.
            wr.next = if i + 1 < chain.len() {
                unsafe { base.add(i + 1) }
            } else {
                ptr::null_mut()
            };
            match w.op {
                WorkOp::Read | WorkOp::Write => {
                    wr.opcode = if w.op == WorkOp::Read {
                        ffi::ibv_wr_opcode::IBV_WR_RDMA_READ
                    } else {
                        ffi::ibv_wr_opcode::IBV_WR_RDMA_WRITE
                    };
                    wr.wr.rdma = ffi::ibv_send_wr__bindgen_ty_2__bindgen_ty_1 {
                        remote_addr: w.remote_va,
                        rkey: w.rkey,
                    };
                }
                WorkOp::CompareSwap { expected, new } => {
                    wr.opcode = ffi::ibv_wr_opcode::IBV_WR_ATOMIC_CMP_AND_SWP;
                    wr.wr.atomic = ffi::ibv_send_wr__bindgen_ty_2__bindgen_ty_2 {
                        remote_addr: w.remote_va,
                        compare_add: expected,
                        swap: new,
                        rkey: w.rkey,
                    };
                }
                WorkOp::FetchAdd { delta } => {
                    wr.opcode = ffi::ibv_wr_opcode::IBV_WR_ATOMIC_FETCH_AND_ADD;
                    wr.wr.atomic = ffi::ibv_send_wr__bindgen_ty_2__bindgen_ty_2 {
                        remote_addr: w.remote_va,
                        compare_add: delta,
                        swap: 0,
                        rkey: w.rkey,
                    };
                }
            }
        }
        let mut bad: *mut ffi::ibv_send_wr = ptr::null_mut();
        // SAFETY: `qp` is valid; the list and its SGEs live across the call (the device copies
        // work requests when posted); the staging buffer stays registered until completion.
        let rc = unsafe {
            let ops = &mut (*(*self.qp).context).ops;
            match ops.post_send {
                Some(post) => post(self.qp, base, &mut bad),
                None => -1,
            }
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(StoreError::Other(format!(
                "RDMA {}: post_send: {}",
                self.device.name,
                std::io::Error::from_raw_os_error(rc.abs())
            )))
        }
    }

    /// Polls up to `out.len()` completions without blocking.
    fn poll(&self, out: &mut [ffi::ibv_wc]) -> Result<usize> {
        // SAFETY: `cq` is valid; `out` has room for `len` completions.
        let n = unsafe {
            let ops = &mut (*(*self.cq).context).ops;
            match ops.poll_cq {
                Some(poll) => poll(self.cq, out.len() as i32, out.as_mut_ptr()),
                None => -1,
            }
        };
        if n < 0 {
            Err(StoreError::Other(format!(
                "RDMA {}: polling the completion queue failed",
                self.device.name
            )))
        } else {
            Ok(n as usize)
        }
    }
}

impl Drop for Qp {
    fn drop(&mut self) {
        // SAFETY: created by `Qp::create`, destroyed once, the QP before its CQ.
        unsafe {
            ffi::ibv_destroy_qp(self.qp);
            ffi::ibv_destroy_cq(self.cq);
        }
    }
}

/// A batch posted and not yet answered: its plan (whose staging buffer the device fills), the
/// registration of that buffer, where the reply goes, and the send-queue slots it holds.
struct InFlight {
    plan: DoorbellPlan,
    _mr: Mr,
    reply: Sender<Result<Message>>,
    slots: u32,
    reply_bytes: usize,
}

struct Shared {
    name: Arc<str>,
    qp: Qp,
    table: Mutex<RegionTable>,
    router: Mutex<CompletionRouter<InFlight>>,
    /// Send-queue slots in use, and a wake-up when some are released.
    slots: (Mutex<u32>, Condvar),
    dead: Mutex<Option<String>>,
    stop: AtomicBool,
    stats: TransportStats,
    request_timeout: Duration,
}

impl Shared {
    fn err(&self, message: String) -> StoreError {
        StoreError::Remote {
            node: self.name.to_string(),
            message,
        }
    }

    /// Marks the queue pair dead and fails every batch waiting on it.
    fn kill(&self, why: &str) {
        self.dead
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(|| why.to_string());
        let waiting = self
            .router
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fail_all();
        for f in waiting {
            let _ = f
                .reply
                .send(Err(self.err(format!("RDMA connection lost: {why}"))));
        }
        self.slots.1.notify_all();
    }

    fn release(&self, n: u32) {
        let mut used = self.slots.0.lock().unwrap_or_else(|e| e.into_inner());
        *used = used.saturating_sub(n);
        self.slots.1.notify_all();
    }

    /// Waits (bounded) until `n` send-queue slots are free and takes them.
    fn acquire(&self, n: u32) -> Result<()> {
        let deadline = Instant::now() + self.request_timeout;
        let mut used = self.slots.0.lock().unwrap_or_else(|e| e.into_inner());
        while *used + n > SQ_DEPTH {
            if let Some(why) = &*self.dead.lock().unwrap_or_else(|e| e.into_inner()) {
                return Err(self.err(format!("unavailable: {why}")));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.err("the send queue stayed full; node presumed dead".into()));
            }
            used = self
                .slots
                .1
                .wait_timeout(used, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *used += n;
        Ok(())
    }

    /// The poller: completions → batches → tickets. Spins while batches wait, naps when idle.
    fn poll_loop(&self) {
        // SAFETY: `ibv_wc` is plain data; zero is valid.
        let mut wcs: Vec<ffi::ibv_wc> = (0..32).map(|_| unsafe { std::mem::zeroed() }).collect();
        let mut idle = 0u32;
        while !self.stop.load(Ordering::Acquire) {
            let n = match self.qp.poll(&mut wcs) {
                Ok(n) => n,
                Err(e) => {
                    self.kill(&e.to_string());
                    return;
                }
            };
            if n == 0 {
                idle = idle.saturating_add(1);
                // Spin right after traffic, then back off so an idle connection costs little.
                if idle > 20_000 {
                    std::thread::sleep(Duration::from_millis(1));
                } else if idle > 1000 {
                    std::thread::sleep(Duration::from_micros(50));
                } else {
                    std::hint::spin_loop();
                }
                continue;
            }
            idle = 0;
            for wc in &wcs[..n] {
                let status = match wc.error() {
                    None => Ok(()),
                    Some((status, vendor)) => Err(format!(
                        "work completion status {status} (vendor error {vendor})"
                    )),
                };
                let failed = status.is_err();
                let routed = self
                    .router
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .complete(wc.wr_id(), status);
                match routed {
                    Routed::Done(f) => {
                        self.release(f.slots);
                        self.stats.record_reply(f.reply_bytes);
                        let replies = f.plan.assemble();
                        let _ = f.reply.send(Ok(Message::BatchReply(replies)));
                    }
                    Routed::Failed(f, why) => {
                        self.release(f.slots);
                        let _ = f.reply.send(Err(self.err(format!("RDMA: {why}"))));
                    }
                    Routed::Waiting | Routed::Unknown => {}
                }
                if failed {
                    // A failed request leaves the queue pair in the error state.
                    self.kill("a work request failed");
                }
            }
        }
    }
}

/// A connection to one memory node: one-sided verbs over RDMA, two-sided calls over TCP.
pub struct RdmaTransport {
    tcp: TcpTransport,
    shared: Arc<Shared>,
    poller: Option<JoinHandle<()>>,
}

impl RdmaTransport {
    /// Connects over TCP (token handshake), then sets up a queue pair with the node. Fails,
    /// naming the node, when this machine or the node has no RDMA device.
    pub fn connect(
        addr: impl ToSocketAddrs,
        token: &str,
        opts: TcpOptions,
    ) -> Result<RdmaTransport> {
        let tcp = TcpTransport::connect(addr, token, opts)?;
        let name: Arc<str> = format!("{} over RDMA", tcp.node_name()).into();
        let fail = |message: String| StoreError::Remote {
            node: tcp.node_name().to_string(),
            message,
        };
        let device = Device::open_first().map_err(|e| fail(e.to_string()))?;
        let qp = Qp::create(&device).map_err(|e| fail(e.to_string()))?;
        let remote = match tcp.call(Message::RdmaConnect {
            endpoint: qp.endpoint(),
        })? {
            Message::RdmaAccept { endpoint } => endpoint,
            m => return Err(unexpected(tcp.node_name(), &m)),
        };
        qp.connect(&remote).map_err(|e| fail(e.to_string()))?;
        let shared = Arc::new(Shared {
            name,
            qp,
            table: Mutex::new(RegionTable::new(tcp.node_id())),
            router: Mutex::new(CompletionRouter::default()),
            slots: (Mutex::new(0), Condvar::new()),
            dead: Mutex::new(None),
            stop: AtomicBool::new(false),
            stats: TransportStats::default(),
            request_timeout: opts.request_timeout,
        });
        let s = shared.clone();
        let poller = std::thread::Builder::new()
            .name(format!("dm-rdma-poll-{}", tcp.node_id()))
            .spawn(move || s.poll_loop())
            .map_err(|e| fail(format!("cannot start the completion poller: {e}")))?;
        Ok(RdmaTransport {
            tcp,
            shared,
            poller: Some(poller),
        })
    }

    /// Learns the keys of regions `verbs` touch that this connection has not seen (one
    /// two-sided call per region, once); an unknown region stays unknown and its verbs fail.
    fn learn_keys(&self, verbs: &[Verb]) {
        let missing = self
            .shared
            .table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .missing(verbs);
        for addr in missing {
            if let Ok(Message::RegionKeyed { key }) = self.tcp.call(Message::RegionKeyOf { addr }) {
                self.shared
                    .table
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(key);
            }
        }
    }

    fn submit_verbs(&self, verbs: Vec<Verb>) -> Result<Ticket> {
        let s = &self.shared;
        if let Some(why) = &*s.dead.lock().unwrap_or_else(|e| e.into_inner()) {
            return Err(s.err(format!("unavailable: {why}")));
        }
        self.learn_keys(&verbs);
        let mut p = {
            let table = s.table.lock().unwrap_or_else(|e| e.into_inner());
            plan(&verbs, &table, MAX_CHAIN)
        };
        let reply_bytes = p.local.len() + 8 * verbs.len();
        let request = Message::Batch(verbs);
        s.stats.record_request(&request, request.wire_len());
        if p.chains.is_empty() {
            let reply = Message::BatchReply(p.assemble());
            s.stats.record_reply(reply.wire_len());
            return Ok(Ticket::ready(s.name.clone(), Ok(reply)));
        }
        let local = p.local.as_mut_ptr();
        let mr = s.qp.device.register(local, p.local.len(), access_all())?;
        let lkey = mr.lkey();
        let chains = p.chains.clone();
        let slots = p.work_requests() as u32;
        if slots > SQ_DEPTH {
            return Err(s.err(format!(
                "a batch of {slots} one-sided verbs exceeds the send queue ({SQ_DEPTH}); split it"
            )));
        }
        s.acquire(slots)?;
        let (tx, rx) = bounded(1);
        let id = s.router.lock().unwrap_or_else(|e| e.into_inner()).register(
            chains.len(),
            InFlight {
                plan: p,
                _mr: mr,
                reply: tx,
                slots,
                reply_bytes,
            },
        );
        for chain in &chains {
            if let Err(e) = s.qp.post_chain(chain, id, local, lkey) {
                s.kill(&e.to_string());
                return Err(s.err(e.to_string()));
            }
        }
        let hook = Arc::downgrade(s);
        Ok(Ticket::pending(
            s.name.clone(),
            rx,
            s.request_timeout,
            Arc::new(move || {
                if let Some(s) = hook.upgrade() {
                    s.kill("a reply timed out");
                }
            }),
        ))
    }

    fn alloc_keyed(&self, msg: Message) -> Result<GlobalAddr> {
        match self.tcp.call(msg)? {
            Message::RegionKeyed { key } => {
                self.shared
                    .table
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(key);
                Ok(key.start)
            }
            Message::Allocated { addr } => Ok(addr),
            m => Err(unexpected(self.tcp.node_name(), &m)),
        }
    }
}

impl Transport for RdmaTransport {
    fn node_id(&self) -> u16 {
        self.tcp.node_id()
    }

    fn node_name(&self) -> &str {
        &self.shared.name
    }

    fn submit(&self, msg: Message) -> Result<Ticket> {
        match msg {
            Message::Batch(verbs) => self.submit_verbs(verbs),
            other => self.tcp.submit(other),
        }
    }

    fn stats(&self) -> StatsSnapshot {
        self.tcp.stats().plus(&self.shared.stats.snapshot())
    }

    fn alloc(&self, size: u64) -> Result<GlobalAddr> {
        self.alloc_keyed(Message::Alloc { size })
    }

    fn alloc_leased(&self, size: u64) -> Result<GlobalAddr> {
        self.alloc_keyed(Message::AllocLeased { size })
    }

    fn free(&self, addr: GlobalAddr) -> Result<()> {
        self.tcp.free(addr)?;
        self.shared
            .table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(addr);
        Ok(())
    }
}

impl Drop for RdmaTransport {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.poller.take() {
            let _ = t.join();
        }
        self.shared.kill("transport closed");
    }
}

/// Opens [`RdmaTransport`]s with one token and one set of timeouts.
#[derive(Debug, Clone)]
pub struct RdmaConnector {
    /// The shared secret every memory node was started with.
    pub token: String,
    /// Timeouts of the TCP link and of each reply.
    pub opts: TcpOptions,
}

impl Connector for RdmaConnector {
    type Transport = RdmaTransport;

    fn connect(&self, addr: &str) -> Result<RdmaTransport> {
        RdmaTransport::connect(addr, &self.token, self.opts)
    }

    fn transport_name(&self) -> &'static str {
        "rdma"
    }
}

/// The memory node's side: its device, and the registrations of the regions whose keys were
/// asked for.
pub struct RdmaServer {
    device: Arc<Device>,
    registered: Mutex<HashMap<u64, (RegionMemory, Mr)>>,
}

/// One connection's queue pair on the memory node, kept while the connection lives.
pub struct ServerQp(#[allow(dead_code)] Qp);

impl RdmaServer {
    /// Opens the first device; `None` (TCP only) when there is none or it cannot be opened.
    pub fn open() -> Option<RdmaServer> {
        if !rdma_available() {
            return None;
        }
        match Device::open_first() {
            Ok(device) => Some(RdmaServer {
                device,
                registered: Mutex::new(HashMap::new()),
            }),
            Err(e) => {
                eprintln!("memnode: RDMA unavailable, serving TCP only: {e}");
                None
            }
        }
    }

    /// The device's name, for the start-up line.
    pub fn device_name(&self) -> &str {
        &self.device.name
    }

    /// Answers `RDMA_CONNECT`: a queue pair connected to the client's, and its endpoint.
    pub fn accept(&self, client: &QpEndpoint) -> (Option<ServerQp>, Message) {
        let made = Qp::create(&self.device).and_then(|qp| {
            qp.connect(client)?;
            Ok(qp)
        });
        match made {
            Ok(qp) => {
                let endpoint = qp.endpoint();
                (Some(ServerQp(qp)), Message::RdmaAccept { endpoint })
            }
            Err(e) => (
                None,
                Message::Error {
                    code: ErrorCode::Other,
                    message: e.to_string(),
                },
            ),
        }
    }

    /// The key of the region holding `addr`, registering the region on first use. Drops the
    /// registrations of regions freed since.
    pub fn key_of(&self, node: &MemoryNode, addr: GlobalAddr) -> Message {
        let Some(mem) = node.region_memory(addr) else {
            return Message::Error {
                code: ErrorCode::OutOfBounds,
                message: format!("no region holds {addr}"),
            };
        };
        let mut reg = self.registered.lock().unwrap_or_else(|e| e.into_inner());
        reg.retain(|_, (m, _)| m.is_live(node));
        let start = mem.start();
        let (m, mr) = match reg.entry(start.raw()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                match self
                    .device
                    .register(mem.as_ptr(), mem.len() as usize, access_all())
                {
                    Ok(mr) => e.insert((mem, mr)),
                    Err(e) => {
                        return Message::Error {
                            code: ErrorCode::Other,
                            message: e.to_string(),
                        }
                    }
                }
            }
        };
        Message::RegionKeyed {
            key: RegionKey {
                start,
                len: m.len(),
                remote_va: m.as_ptr() as u64,
                rkey: mr.rkey(),
            },
        }
    }
}
