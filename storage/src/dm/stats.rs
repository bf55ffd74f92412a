//! Accounting of remote operations, kept by every transport, and the cost model that turns the
//! counts into the time the same work would take on an RDMA network (loopback TCP is not one).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::protocol::{Message, Verb};

/// Live counters of one transport, updated lock-free from any thread.
#[derive(Debug, Default)]
pub struct TransportStats {
    reads: AtomicU64,
    writes: AtomicU64,
    cas: AtomicU64,
    faa: AtomicU64,
    allocs: AtomicU64,
    frees: AtomicU64,
    mailbox_pushes: AtomicU64,
    mailbox_pulls: AtomicU64,
    applies: AtomicU64,
    apply_items: AtomicU64,
    other_calls: AtomicU64,
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
    round_trips: AtomicU64,
    batches: AtomicU64,
}

/// How many counters a [`StatsSnapshot`] holds.
pub const STATS_FIELDS: usize = 15;

/// A copy of the counters at one moment; subtract two to get the work of an interval (PROFILE
/// prints per-iteration differences).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// One-sided READ verbs.
    pub reads: u64,
    /// One-sided WRITE verbs.
    pub writes: u64,
    /// One-sided CAS verbs.
    pub cas: u64,
    /// One-sided FAA verbs.
    pub faa: u64,
    /// Two-sided ALLOC calls.
    pub allocs: u64,
    /// Two-sided FREE calls.
    pub frees: u64,
    /// Mailbox appends.
    pub mailbox_pushes: u64,
    /// Mailbox pulls.
    pub mailbox_pulls: u64,
    /// Pass-by-value calls.
    pub applies: u64,
    /// Pass-by-value items carried by those calls.
    pub apply_items: u64,
    /// Other two-sided calls (HELLO, INFO).
    pub other_calls: u64,
    /// Bytes sent to memory nodes (whole frames).
    pub bytes_sent: u64,
    /// Bytes received from memory nodes (whole frames).
    pub bytes_received: u64,
    /// Request/reply exchanges; a batch is one.
    pub round_trips: u64,
    /// Batches of one-sided verbs (a single verb is a batch of one).
    pub batches: u64,
}

impl StatsSnapshot {
    /// One-sided verbs of all kinds.
    pub fn verbs(&self) -> u64 {
        self.reads + self.writes + self.cas + self.faa
    }

    /// Operations a NIC would execute: every verb, plus one per two-sided call.
    pub fn nic_ops(&self) -> u64 {
        self.verbs()
            + self.allocs
            + self.frees
            + self.mailbox_pushes
            + self.mailbox_pulls
            + self.applies
            + self.other_calls
    }

    /// Calls a memory node's CPU executes (everything but the one-sided verbs).
    pub fn two_sided_calls(&self) -> u64 {
        self.nic_ops() - self.verbs()
    }

    /// The counters in a fixed order, for the wire ([`StatsSnapshot::from_array`] reads them back).
    pub fn to_array(&self) -> [u64; STATS_FIELDS] {
        let mut out = [0; STATS_FIELDS];
        let mut i = 0;
        self.zip(self, |a, _| {
            out[i] = a;
            i += 1;
            a
        });
        out
    }

    /// The counters from [`StatsSnapshot::to_array`]'s order.
    pub fn from_array(a: &[u64; STATS_FIELDS]) -> StatsSnapshot {
        let mut i = 0;
        StatsSnapshot::default().zip(&StatsSnapshot::default(), |_, _| {
            i += 1;
            a[i - 1]
        })
    }

    /// Counter-wise difference `self - earlier` (saturating).
    pub fn since(&self, earlier: &StatsSnapshot) -> StatsSnapshot {
        self.zip(earlier, u64::saturating_sub)
    }

    /// Counter-wise sum, to total several transports (one per memory node).
    pub fn plus(&self, o: &StatsSnapshot) -> StatsSnapshot {
        self.zip(o, |a, b| a + b)
    }

    /// `op` applied to each pair of counters; the one place that lists every field.
    /// Fields are visited in declaration order (struct expressions evaluate in source order).
    fn zip(&self, o: &StatsSnapshot, mut op: impl FnMut(u64, u64) -> u64) -> StatsSnapshot {
        macro_rules! each {
            ($($f:ident),*) => { StatsSnapshot { $($f: op(self.$f, o.$f)),* } };
        }
        each!(
            reads,
            writes,
            cas,
            faa,
            allocs,
            frees,
            mailbox_pushes,
            mailbox_pulls,
            applies,
            apply_items,
            other_calls,
            bytes_sent,
            bytes_received,
            round_trips,
            batches
        )
    }
}

impl TransportStats {
    /// Counts one request and its reply: kinds from the request, bytes both ways.
    pub fn record(&self, req: &Message, req_bytes: usize, reply_bytes: usize) {
        self.record_request(req, req_bytes);
        self.record_reply(reply_bytes);
    }

    /// Counts the bytes of a reply; separate from the request because a pipelined transport
    /// learns them later, on its reader thread.
    pub fn record_reply(&self, reply_bytes: usize) {
        self.bytes_received
            .fetch_add(reply_bytes as u64, Ordering::Relaxed);
    }

    /// Counts a request when it is sent: its kinds, its bytes, one round trip.
    pub fn record_request(&self, req: &Message, req_bytes: usize) {
        let add = |c: &AtomicU64, n: u64| {
            c.fetch_add(n, Ordering::Relaxed);
        };
        match req {
            Message::Batch(verbs) => {
                add(&self.batches, 1);
                let (mut r, mut w, mut c, mut f) = (0, 0, 0, 0);
                for v in verbs {
                    match v {
                        Verb::Read { .. } => r += 1,
                        Verb::Write { .. } => w += 1,
                        Verb::Cas { .. } => c += 1,
                        Verb::Faa { .. } => f += 1,
                    }
                }
                add(&self.reads, r);
                add(&self.writes, w);
                add(&self.cas, c);
                add(&self.faa, f);
            }
            Message::Alloc { .. } | Message::AllocLeased { .. } | Message::AllocOwned { .. } => {
                add(&self.allocs, 1)
            }
            Message::Free { .. } | Message::FreeOwned { .. } => add(&self.frees, 1),
            Message::MailboxPush { .. } => add(&self.mailbox_pushes, 1),
            Message::MailboxPull { .. } => add(&self.mailbox_pulls, 1),
            Message::Apply { items, .. } => {
                add(&self.applies, 1);
                add(&self.apply_items, items.len() as u64);
            }
            _ => add(&self.other_calls, 1),
        }
        add(&self.bytes_sent, req_bytes as u64);
        add(&self.round_trips, 1);
    }

    /// A consistent-enough copy of the counters (each read is atomic; the set is not).
    pub fn snapshot(&self) -> StatsSnapshot {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        StatsSnapshot {
            reads: l(&self.reads),
            writes: l(&self.writes),
            cas: l(&self.cas),
            faa: l(&self.faa),
            allocs: l(&self.allocs),
            frees: l(&self.frees),
            mailbox_pushes: l(&self.mailbox_pushes),
            mailbox_pulls: l(&self.mailbox_pulls),
            applies: l(&self.applies),
            apply_items: l(&self.apply_items),
            other_calls: l(&self.other_calls),
            bytes_sent: l(&self.bytes_sent),
            bytes_received: l(&self.bytes_received),
            round_trips: l(&self.round_trips),
            batches: l(&self.batches),
        }
    }
}

/// The RDMA network the counts are projected onto. Defaults: 2 µs per round trip, 100 Gb/s,
/// 60 M operations/s per NIC (DMG's testbed class, Figure 6), and for the calls a memory node's
/// CPU executes (ALLOC, FREE, mailbox push and pull, pass-by-value APPLY) 1 µs each plus 10 ns
/// per APPLY item, on one core per memory node: one-sided verbs cost no memory-node CPU, two-sided
/// calls do, and that is what separates the update strategies on a real network.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Latency of one round trip, in microseconds.
    pub round_trip_us: f64,
    /// Link bandwidth in gigabits per second (each direction).
    pub bandwidth_gbps: f64,
    /// Operations per second one NIC executes.
    pub nic_ops_per_sec: f64,
    /// A memory node's CPU time per two-sided call, in microseconds.
    pub mn_call_us: f64,
    /// A memory node's CPU time per pass-by-value item, in nanoseconds.
    pub mn_item_ns: f64,
    /// Memory nodes sharing the two-sided work (one core each).
    pub memory_nodes: u32,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            round_trip_us: 2.0,
            bandwidth_gbps: 100.0,
            nic_ops_per_sec: 60e6,
            mn_call_us: 1.0,
            mn_item_ns: 10.0,
            memory_nodes: 1,
        }
    }
}

impl CostModel {
    /// Time the counted work would take with `in_flight` round trips overlapped (threads ×
    /// batches in flight; 1 = strictly one after the other). The latency term is divided by the
    /// overlap; the throughput terms (NIC operations, bytes over the busier direction) are not,
    /// and the larger of latency and throughput bounds wins. The memory nodes' CPU time for
    /// two-sided calls, spread over `memory_nodes`, is one more throughput bound.
    pub fn estimate(&self, s: &StatsSnapshot, in_flight: u32) -> Duration {
        let overlap = in_flight.max(1) as f64;
        let latency = s.round_trips as f64 * self.round_trip_us * 1e-6 / overlap;
        let ops = s.nic_ops() as f64 / self.nic_ops_per_sec;
        let bytes = s.bytes_sent.max(s.bytes_received) as f64 * 8.0 / (self.bandwidth_gbps * 1e9);
        let mn_cpu = (s.two_sided_calls() as f64 * self.mn_call_us * 1e-6
            + s.apply_items as f64 * self.mn_item_ns * 1e-9)
            / self.memory_nodes.max(1) as f64;
        Duration::from_secs_f64(latency.max(ops).max(bytes).max(mn_cpu))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_model_picks_the_binding_limit() {
        let m = CostModel::default();
        // 1000 serial round trips of one READ each: latency bound, 2 ms.
        let s = StatsSnapshot {
            reads: 1000,
            round_trips: 1000,
            batches: 1000,
            ..Default::default()
        };
        assert_eq!(m.estimate(&s, 1).as_micros(), 2000);
        // The same with 1000 in flight: the NIC's 60 Mops/s bounds it (16.67 µs).
        assert!((16_660..=16_670).contains(&m.estimate(&s, 1000).as_nanos()));
        // 1.25 GB received: bandwidth bound, 100 ms.
        let s = StatsSnapshot {
            bytes_received: 1_250_000_000,
            round_trips: 1,
            ..Default::default()
        };
        assert_eq!(m.estimate(&s, 1).as_millis(), 100);
        // 10 000 APPLY calls of 100 items each, 1000 in flight: the memory node's CPU bounds it
        // (10 ms of calls + 10 ms of items on one node; half on two).
        let s = StatsSnapshot {
            applies: 10_000,
            apply_items: 1_000_000,
            round_trips: 10_000,
            ..Default::default()
        };
        assert_eq!(m.estimate(&s, 1000).as_millis(), 20);
        let two = CostModel {
            memory_nodes: 2,
            ..m
        };
        assert_eq!(two.estimate(&s, 1000).as_millis(), 10);
    }

    #[test]
    fn snapshots_round_trip_through_arrays() {
        let mut a = [0u64; STATS_FIELDS];
        for (i, x) in a.iter_mut().enumerate() {
            *x = 1000 + i as u64;
        }
        let s = StatsSnapshot::from_array(&a);
        assert_eq!(s.reads, 1000);
        assert_eq!(s.batches, 1000 + STATS_FIELDS as u64 - 1);
        assert_eq!(s.to_array(), a);
        assert_eq!(s.two_sided_calls(), s.nic_ops() - s.verbs());
    }
}
