//! A dead or silent memory node makes pending and later calls fail with an error naming the node,
//! never hang. Each scenario runs under a watchdog with a generous bound that only catches hangs.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use storage::dm::protocol::{decode_frame, encode_frame};
use storage::dm::{spawn_memnode_for_tests, Batch, Message, TcpOptions, TcpTransport, Transport};

const TOKEN: &str = "t";

/// Runs `f` on a thread; fails the test only if it has not finished after `bound`.
fn within(bound: Duration, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(bound) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The closure panicked: surface its message.
            if let Err(p) = h.join() {
                std::panic::resume_unwind(p);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("hung for more than {bound:?}"),
    }
}

#[test]
fn killed_node_fails_pending_and_next_calls() {
    within(Duration::from_secs(60), || {
        let node = spawn_memnode_for_tests(7, 64 << 20, TOKEN).unwrap();
        let addr = node.addr().to_string();
        let t = TcpTransport::connect(node.addr(), TOKEN, TcpOptions::default()).unwrap();
        let a = t.alloc(32 << 20).unwrap();
        // Keep big batches in flight while the node dies.
        let mut tickets = Vec::new();
        for _ in 0..32 {
            let mut b = Batch::new();
            b.read(a, 16 << 20);
            tickets.push(t.submit_batch(b).unwrap());
        }
        node.kill();
        let mut failed = 0;
        for tk in tickets {
            if let Err(e) = tk.wait() {
                let e = e.to_string();
                assert!(e.contains(&addr) && e.contains("id 7"), "{e}");
                failed += 1;
            }
        }
        let _ = failed; // some may have been answered before the kill
        let e = t.read(a, 8).unwrap_err().to_string();
        assert!(e.contains(&addr), "{e}");
        // And a new connection is refused.
        assert!(TcpTransport::connect(addr.as_str(), TOKEN, TcpOptions::default()).is_err());
    });
}

/// A node that accepts, authenticates, then never answers (a frozen host).
#[test]
fn silent_node_times_out_and_is_marked_dead() {
    within(Duration::from_secs(60), || {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut p = [0u8; 4];
            s.read_exact(&mut p).unwrap();
            let mut b = vec![0u8; 4 + u32::from_le_bytes(p) as usize];
            b[..4].copy_from_slice(&p);
            s.read_exact(&mut b[4..]).unwrap();
            let id = decode_frame(&b).unwrap().id;
            let mut out = Vec::new();
            encode_frame(
                id,
                &Message::HelloOk {
                    node_id: 3,
                    capacity: 1,
                    epoch: Some(1),
                },
                &mut out,
            )
            .unwrap();
            s.write_all(&out).unwrap();
            // Swallow everything, answer nothing, until the client hangs up.
            let mut sink = [0u8; 4096];
            while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
        });
        let opts = TcpOptions {
            request_timeout: Duration::from_millis(500),
            ..TcpOptions::default()
        };
        let t = TcpTransport::connect(addr, TOKEN, opts).unwrap();
        let pending = t.submit(Message::Info).unwrap();
        let e = t.alloc(8).unwrap_err().to_string();
        assert!(
            e.contains(&addr.to_string()) && e.contains("no reply"),
            "{e}"
        );
        let e = pending.wait().unwrap_err().to_string();
        assert!(e.contains(&addr.to_string()), "{e}");
        let e = t.alloc(8).unwrap_err().to_string();
        assert!(e.contains("unavailable"), "{e}");
        drop(t);
        server.join().unwrap();
    });
}

#[test]
fn clean_shutdown_ends_connections() {
    within(Duration::from_secs(60), || {
        let node = spawn_memnode_for_tests(1, 1 << 20, TOKEN).unwrap();
        let t = TcpTransport::connect(node.addr(), TOKEN, TcpOptions::default()).unwrap();
        t.alloc(8).unwrap();
        node.shutdown();
        assert!(t.alloc(8).is_err());
    });
}
