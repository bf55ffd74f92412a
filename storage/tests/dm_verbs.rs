//! The memory node's verbs, batches, atomics under concurrency, mailboxes and pass-by-value
//! updates, over TCP loopback (servers started here) and in-process.

use std::sync::Arc;

use storage::dm::{
    spawn_memnode_for_tests, Batch, CostModel, InProcTransport, MemoryNode, TcpOptions,
    TcpTransport, Transport, UpdateItem, UpdateOp, VerbReply,
};
use storage::ElementKind;

const TOKEN: &str = "test-token";

fn tcp(addr: std::net::SocketAddr) -> TcpTransport {
    TcpTransport::connect(addr, TOKEN, TcpOptions::default()).expect("connect")
}

fn every_verb(t: &dyn Transport) {
    let a = t.alloc(1000).unwrap();
    assert_eq!(a.node(), t.node_id());
    // WRITE / READ, unaligned and across words.
    let data: Vec<u8> = (0..=255u8).collect();
    t.write(a.checked_add(3).unwrap(), &data).unwrap();
    assert_eq!(t.read(a.checked_add(3).unwrap(), 256).unwrap(), data);
    assert_eq!(t.read(a, 3).unwrap(), vec![0, 0, 0]);
    // CAS: success then failure, returning the old value.
    let w = a.checked_add(512).unwrap();
    assert_eq!(t.cas(w, 0, 7).unwrap(), 0);
    assert_eq!(t.cas(w, 0, 9).unwrap(), 7);
    assert_eq!(t.read(w, 8).unwrap(), 7u64.to_le_bytes());
    // FAA wraps.
    assert_eq!(t.faa(w, 3).unwrap(), 7);
    assert_eq!(t.faa(w, u64::MAX).unwrap(), 10);
    assert_eq!(t.read(w, 8).unwrap(), 9u64.to_le_bytes());
    // Unaligned atomics are refused.
    assert!(t.cas(a.checked_add(4).unwrap(), 0, 1).is_err());
    assert!(t.faa(a.checked_add(1).unwrap(), 1).is_err());
    // Batch: in order, answered together, a failing verb does not stop the others.
    let mut b = Batch::new();
    b.write(a, 42u64.to_le_bytes().to_vec())
        .read(a, 8)
        .faa(a, 1)
        .read(a.checked_add(4096).unwrap(), 8)
        .cas(a, 43, 100)
        .read(a, 8);
    let r = t.batch(b).unwrap();
    assert_eq!(r.len(), 6);
    assert_eq!(r[0], VerbReply::Written);
    assert_eq!(r[1], VerbReply::Read(42u64.to_le_bytes().to_vec()));
    assert_eq!(r[2], VerbReply::Faa { old: 42 });
    assert!(matches!(r[3], VerbReply::Failed { .. }));
    assert_eq!(r[4], VerbReply::Cas { old: 43 });
    assert_eq!(r[5], VerbReply::Read(100u64.to_le_bytes().to_vec()));
    // Many batches in flight, collected later, in any order.
    let mut tickets = Vec::new();
    for i in 0..64u64 {
        let mut b = Batch::new();
        b.write(
            a.checked_add(8 * (i % 64)).unwrap(),
            i.to_le_bytes().to_vec(),
        )
        .read(a.checked_add(8 * (i % 64)).unwrap(), 8);
        tickets.push((i, t.submit_batch(b).unwrap()));
    }
    for (i, tk) in tickets.into_iter().rev() {
        let r = tk.wait_batch().unwrap();
        assert_eq!(r[1], VerbReply::Read(i.to_le_bytes().to_vec()));
    }
    let mut tk = t
        .submit_batch({
            let mut b = Batch::new();
            b.read(a, 8);
            b
        })
        .unwrap();
    let got = loop {
        if let Some(r) = tk.try_wait() {
            break r.unwrap();
        }
        std::thread::yield_now();
    };
    assert!(matches!(got, storage::dm::Message::BatchReply(_)));
    // FREE, then the region is gone.
    t.free(a).unwrap();
    assert!(t.read(a, 8).is_err());
    assert!(t.free(a).is_err());
    let s = t.stats();
    assert!(s.reads >= 68 && s.writes >= 65 && s.cas >= 3 && s.faa >= 3);
    assert!(s.batches >= 70 && s.round_trips >= s.batches + 2 && s.allocs == 1 && s.frees == 2);
    assert!(s.bytes_sent > 0 && s.bytes_received > 256);
    assert!(CostModel::default().estimate(&s, 1) > std::time::Duration::ZERO);
}

#[test]
fn every_verb_over_tcp() {
    let node = spawn_memnode_for_tests(5, 1 << 20, TOKEN).unwrap();
    let t = tcp(node.addr());
    assert_eq!(t.node_id(), 5);
    every_verb(&t);
}

#[test]
fn every_verb_in_process() {
    let t = InProcTransport::new(Arc::new(MemoryNode::new(9, 1 << 20)));
    every_verb(&t);
}

#[test]
fn tcp_and_inproc_count_the_same_bytes() {
    let node = spawn_memnode_for_tests(1, 1 << 20, TOKEN).unwrap();
    let t = tcp(node.addr());
    let i = InProcTransport::new(Arc::new(MemoryNode::new(1, 1 << 20)));
    for tr in [&t as &dyn Transport, &i] {
        let a = tr.alloc(64).unwrap();
        let mut b = Batch::new();
        b.write(a, vec![1; 16]).read(a, 16).cas(a, 0, 1).faa(a, 1);
        tr.batch(b).unwrap();
    }
    let (x, y) = (t.stats(), i.stats());
    assert_eq!(
        (x.bytes_sent, x.bytes_received),
        (y.bytes_sent, y.bytes_received)
    );
    assert_eq!(
        (x.round_trips, x.batches, x.verbs()),
        (y.round_trips, y.batches, y.verbs())
    );
}

#[test]
fn capacity_is_enforced_not_an_abort() {
    let node = spawn_memnode_for_tests(1, 4096, TOKEN).unwrap();
    let t = tcp(node.addr());
    let a = t.alloc(4000).unwrap();
    let e = t.alloc(200).unwrap_err().to_string();
    assert!(e.contains("capacity"), "{e}");
    assert!(t.alloc(u64::MAX).is_err());
    assert!(t.alloc(0).is_err());
    assert_eq!(t.info().unwrap(), (4096, 4000));
    t.free(a).unwrap();
    t.alloc(4096).unwrap();
}

/// Several clients hammer one word with FAA and another with CAS-increment loops, some sharing a
/// connection, some with their own: no update may be lost.
#[test]
fn concurrent_cas_and_faa_lose_no_update() {
    let node = spawn_memnode_for_tests(2, 1 << 20, TOKEN).unwrap();
    let shared = Arc::new(tcp(node.addr()));
    let base = shared.alloc(64).unwrap();
    let (faa_w, cas_w) = (base, base.checked_add(8).unwrap());
    const THREADS: u64 = 6;
    const N: u64 = 300;
    let mut hs = Vec::new();
    for k in 0..THREADS {
        let own: Arc<dyn Transport> = if k % 2 == 0 {
            shared.clone()
        } else {
            Arc::new(tcp(node.addr()))
        };
        hs.push(std::thread::spawn(move || {
            for _ in 0..N {
                own.faa(faa_w, 1).unwrap();
                let mut cur = 0;
                loop {
                    let old = own.cas(cas_w, cur, cur + 1).unwrap();
                    if old == cur {
                        break;
                    }
                    cur = old;
                }
            }
        }));
    }
    for h in hs {
        h.join().unwrap();
    }
    let v = shared.read(base, 16).unwrap();
    let faa = u64::from_le_bytes(v[..8].try_into().unwrap());
    let cas = u64::from_le_bytes(v[8..].try_into().unwrap());
    assert_eq!(faa, THREADS * N);
    assert_eq!(cas, THREADS * N);
}

#[test]
fn mailboxes_deliver_in_order_in_batches() {
    let node = spawn_memnode_for_tests(3, 1 << 20, TOKEN).unwrap();
    let sender = tcp(node.addr());
    let receiver = tcp(node.addr());
    // Mailboxes belong to a region: id = region offset << 16 | number.
    let region = sender.alloc(64).unwrap();
    let used = sender.info().unwrap().1;
    let boxes = region.offset() << 16;
    for i in 0..10u8 {
        sender.mailbox_push(boxes | 7, vec![i; 100]).unwrap();
    }
    sender.mailbox_push(boxes | 8, vec![99; 10]).unwrap();
    assert_eq!(sender.info().unwrap().1, used + 1010);
    let first = receiver.mailbox_pull(boxes | 7, 350).unwrap();
    assert_eq!(first.len(), 3);
    let mut all = first;
    loop {
        let b = receiver.mailbox_pull(boxes | 7, 1 << 20).unwrap();
        if b.is_empty() {
            break;
        }
        all.extend(b);
    }
    assert_eq!(all.len(), 10);
    for (i, b) in all.iter().enumerate() {
        assert_eq!(b, &vec![i as u8; 100]);
    }
    // A buffer larger than max_bytes still comes out (at least one per pull).
    assert_eq!(
        receiver.mailbox_pull(boxes | 8, 1).unwrap(),
        vec![vec![99; 10]]
    );
    assert_eq!(receiver.info().unwrap().1, used);
    // Mailbox bytes count against the capacity.
    assert!(sender.mailbox_push(boxes | 1, vec![0; 2 << 20]).is_err());
    // Mail for no region is refused; freeing a region drops its unpulled mail.
    assert!(sender.mailbox_push(7, vec![1]).is_err());
    sender.mailbox_push(boxes | 2, vec![5; 500]).unwrap();
    sender.free(region).unwrap();
    assert_eq!(sender.info().unwrap().1, 0);
    assert!(sender.mailbox_push(boxes | 2, vec![1]).is_err());
}

#[test]
fn pass_by_value_updates_min_and_add() {
    let node = spawn_memnode_for_tests(4, 1 << 20, TOKEN).unwrap();
    let t = tcp(node.addr());
    let it = |index, value| UpdateItem { index, value };
    // u32 min (BFS-like): start at u32::MAX.
    let a = t.alloc(4 * 8).unwrap();
    t.write(a, &[0xFF; 32]).unwrap();
    let n = t
        .apply_updates(
            a,
            ElementKind::U32,
            UpdateOp::Min,
            vec![it(1, 5), it(1, 7), it(6, 2), it(1, 3)],
        )
        .unwrap();
    assert_eq!(n, 3);
    let v = t.read(a, 32).unwrap();
    let u = |i: usize| u32::from_le_bytes(v[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!((u(0), u(1), u(6), u(7)), (u32::MAX, 3, 2, u32::MAX));
    // u64 add.
    let b = t.alloc(8 * 4).unwrap();
    t.apply_updates(
        b,
        ElementKind::U64,
        UpdateOp::Add,
        vec![it(2, 10), it(2, 5), it(0, 1)],
    )
    .unwrap();
    let v = t.read(b, 24).unwrap();
    assert_eq!(u64::from_le_bytes(v[16..24].try_into().unwrap()), 15);
    assert_eq!(u64::from_le_bytes(v[..8].try_into().unwrap()), 1);
    // f64 add (PageRank-like) and min (SSSP-like).
    let c = t.alloc(8 * 2).unwrap();
    let f = |x: f64| x.to_bits();
    t.apply_updates(
        c,
        ElementKind::F64,
        UpdateOp::Add,
        vec![it(0, f(0.25)), it(0, f(0.5))],
    )
    .unwrap();
    t.write(c.checked_add(8).unwrap(), &f64::INFINITY.to_le_bytes())
        .unwrap();
    assert_eq!(
        t.apply_updates(
            c,
            ElementKind::F64,
            UpdateOp::Min,
            vec![it(1, f(3.5)), it(1, f(4.0))]
        )
        .unwrap(),
        1
    );
    let v = t.read(c, 16).unwrap();
    assert_eq!(f64::from_le_bytes(v[..8].try_into().unwrap()), 0.75);
    assert_eq!(f64::from_le_bytes(v[8..].try_into().unwrap()), 3.5);
    // An out-of-range vertex refuses the whole call, changing nothing.
    assert!(t
        .apply_updates(
            c,
            ElementKind::F64,
            UpdateOp::Add,
            vec![it(0, f(1.0)), it(2, f(1.0))]
        )
        .is_err());
    assert_eq!(
        f64::from_le_bytes(t.read(c, 8).unwrap().try_into().unwrap()),
        0.75
    );
    let s = t.stats();
    assert_eq!((s.applies, s.apply_items), (5, 13));
}
