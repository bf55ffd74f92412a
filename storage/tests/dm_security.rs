//! Memory-node hardening: tokens, bounds checks, garbage frames. None of these may panic the
//! server or disturb other clients.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use storage::dm::protocol::encode_frame;
use storage::dm::{
    spawn_memnode_for_tests, GlobalAddr, Message, TcpOptions, TcpTransport, Transport,
};

const TOKEN: &str = "right-token";

fn opts() -> TcpOptions {
    TcpOptions::default()
}

/// True when the server closed the connection (EOF or reset) within the read timeout.
fn closed(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 256];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue, // an error reply may come first
            Err(e) => {
                return e.kind() != std::io::ErrorKind::WouldBlock
                    && e.kind() != std::io::ErrorKind::TimedOut
            }
        }
    }
}

fn authed_raw(addr: std::net::SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut out = Vec::new();
    encode_frame(
        0,
        &Message::Hello {
            token: TOKEN.into(),
            version: 1,
        },
        &mut out,
    )
    .unwrap();
    s.write_all(&out).unwrap();
    let mut reply = [0u8; 4 + 8 + 1 + 10];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(reply[12], 2, "expected HelloOk");
    s
}

#[test]
fn wrong_or_missing_token_is_refused() {
    let node = spawn_memnode_for_tests(1, 1 << 20, TOKEN).unwrap();
    let e = TcpTransport::connect(node.addr(), "wrong", opts())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("refused") && e.contains(&node.addr().to_string()),
        "{e}"
    );
    assert!(TcpTransport::connect(node.addr(), "", opts()).is_err());
    // Tokens are compared zero-padded to a fixed size: padding must not make these equal.
    for near in [
        format!("{TOKEN}\0"),
        format!("{TOKEN}x"),
        TOKEN[..TOKEN.len() - 1].to_string(),
    ] {
        assert!(
            TcpTransport::connect(node.addr(), &near, opts()).is_err(),
            "{near:?}"
        );
    }
    // Skipping HELLO: a request as first frame is refused and the connection closed.
    let mut s = TcpStream::connect(node.addr()).unwrap();
    let mut out = Vec::new();
    encode_frame(1, &Message::Alloc { size: 64 }, &mut out).unwrap();
    s.write_all(&out).unwrap();
    assert!(closed(&mut s));
    assert_eq!(node.node().used(), 0);
    // The server still serves a correct client.
    let t = TcpTransport::connect(node.addr(), TOKEN, opts()).unwrap();
    t.alloc(64).unwrap();
}

#[test]
fn out_of_bounds_is_refused_and_the_server_keeps_serving() {
    let node = spawn_memnode_for_tests(1, 1 << 20, TOKEN).unwrap();
    let t = TcpTransport::connect(node.addr(), TOKEN, opts()).unwrap();
    let other = TcpTransport::connect(node.addr(), TOKEN, opts()).unwrap();
    let a = t.alloc(64).unwrap();
    let cases = [
        (a.checked_add(60).unwrap(), 8u32),           // straddles the end
        (a.checked_add(64).unwrap(), 1),              // just past
        (GlobalAddr::new(1, 0).unwrap(), 8),          // before every region
        (GlobalAddr::new(1, 1 << 40).unwrap(), 8),    // far away
        (GlobalAddr::new(2, a.offset()).unwrap(), 8), // another node's id
        (a, u32::MAX),                                // huge length
    ];
    for (addr, len) in cases {
        let e = t.read(addr, len).unwrap_err().to_string();
        assert!(e.contains(&node.addr().to_string()), "{e}");
        assert!(t.write(addr, &vec![1; len.min(64) as usize + 8]).is_err());
    }
    assert!(t.faa(GlobalAddr::from_raw(!7), 1).is_err());
    // Same connection and another client still work.
    t.write(a, &[7; 64]).unwrap();
    assert_eq!(other.read(a, 64).unwrap(), vec![7; 64]);
}

#[test]
fn garbage_frames_close_only_that_connection() {
    let node = spawn_memnode_for_tests(1, 1 << 20, TOKEN).unwrap();
    let good = TcpTransport::connect(node.addr(), TOKEN, opts()).unwrap();
    let a = good.alloc(64).unwrap();
    let garbage: Vec<Vec<u8>> = vec![
        vec![0xFF; 64],                                // length prefix far beyond the limit
        vec![9, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 200], // unknown tag
        {
            // A batch claiming 4 billion verbs.
            let mut b = vec![0u8; 4];
            b.extend_from_slice(&1u64.to_le_bytes());
            b.push(7);
            b.extend_from_slice(&u32::MAX.to_le_bytes());
            let l = (b.len() - 4) as u32;
            b[..4].copy_from_slice(&l.to_le_bytes());
            b
        },
        vec![1, 0, 0, 0, 0], // shorter than a header
    ];
    for g in &garbage {
        // After authentication.
        let mut s = authed_raw(node.addr());
        s.write_all(g).unwrap();
        assert!(closed(&mut s), "garbage {g:?} did not close the connection");
        // Before authentication.
        let mut s = TcpStream::connect(node.addr()).unwrap();
        s.write_all(g).unwrap();
        assert!(closed(&mut s));
    }
    // A stream that hangs up mid-frame.
    let mut s = authed_raw(node.addr());
    s.write_all(&[100, 0, 0, 0, 1, 2]).unwrap();
    drop(s);
    // The good client never noticed.
    good.write(a, &[3; 8]).unwrap();
    assert_eq!(good.read(a, 8).unwrap(), vec![3; 8]);
    let late = TcpTransport::connect(node.addr(), TOKEN, opts()).unwrap();
    assert_eq!(late.read(a, 8).unwrap(), vec![3; 8]);
}
