//! A length a peer declares is a claim, not an allocation: hostile peers on loopback declare
//! frames far longer than what they send, and the largest single allocation this process makes
//! while reading them stays small (a global allocator that records it). One test function, so
//! no other test's allocations run beside the measurement.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use storage::dm::compute_protocol::{await_frame, ComputeMessage};
use storage::dm::protocol::{decode_frame, encode_frame, frame_body_len, MAX_FRAME};
use storage::dm::{Message, TcpOptions, TcpTransport, Transport};

/// The system allocator, recording the largest single request.
struct Recording;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; only a counter is updated besides.
unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: Recording = Recording;

/// Far below any frame limit, far above what the peers below really send.
const SMALL: usize = 256 << 10;

/// Reads one memory-node frame from `s`.
fn read_frame(s: &mut TcpStream) -> Vec<u8> {
    let mut p = [0u8; 4];
    s.read_exact(&mut p).unwrap();
    let mut b = vec![0u8; 4 + frame_body_len(p).unwrap()];
    b[..4].copy_from_slice(&p);
    s.read_exact(&mut b[4..]).unwrap();
    b
}

/// A "memory node" that greets properly, then answers the first request with a frame that
/// declares nearly the 64 MiB limit and sends 100 bytes of it.
fn lying_memory_node() -> std::net::SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let hello = decode_frame(&read_frame(&mut s)).unwrap();
        let mut out = Vec::new();
        let ok = Message::HelloOk {
            node_id: 1,
            capacity: 1,
            epoch: Some(7),
        };
        encode_frame(hello.id, &ok, &mut out).unwrap();
        s.write_all(&out).unwrap();
        let _request = read_frame(&mut s);
        let mut lie = ((MAX_FRAME - 4) as u32).to_le_bytes().to_vec();
        lie.extend_from_slice(&[0u8; 100]);
        s.write_all(&lie).unwrap();
        // Hold the connection open, sending nothing more, until the client gives up.
        let mut sink = [0u8; 256];
        while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    });
    addr
}

/// A "compute node" that answers with a frame declaring the 1 MiB limit, sends 10 bytes of it
/// and closes.
fn lying_worker() -> std::net::SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut lie = storage::dm::compute_protocol::MAX_FRAME
            .to_le_bytes()
            .to_vec();
        lie.extend_from_slice(&[4u8; 10]);
        s.write_all(&lie).unwrap();
    });
    addr
}

#[test]
fn declared_lengths_do_not_drive_allocations() {
    // Memory-node client: the reply never completes, the request times out.
    let addr = lying_memory_node();
    let opts = TcpOptions {
        request_timeout: Duration::from_millis(500),
        ..TcpOptions::default()
    };
    let t = TcpTransport::connect(addr, "token", opts).unwrap();
    LARGEST.store(0, Ordering::Relaxed);
    assert!(t.info().is_err());
    drop(t);
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(
        largest < SMALL,
        "a memory node declaring a 64 MiB reply and sending 100 bytes made this process allocate {largest} bytes at once"
    );

    // Compute-node session: the frame is cut short, the wait fails.
    let addr = lying_worker();
    let s = TcpStream::connect(addr).unwrap();
    LARGEST.store(0, Ordering::Relaxed);
    assert!(await_frame(&s, &|| false).is_err());
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(
        largest < SMALL,
        "a worker declaring a 1 MiB frame and sending 10 bytes made this process allocate {largest} bytes at once"
    );
    let mut lie = storage::dm::compute_protocol::MAX_FRAME
        .to_le_bytes()
        .to_vec();
    lie.extend_from_slice(&[4u8; 10]);
    LARGEST.store(0, Ordering::Relaxed);
    assert!(ComputeMessage::read_from(&mut &lie[..]).is_err());
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(
        largest < SMALL,
        "read_from allocated {largest} bytes at once"
    );
}
