//! `run_memnode` shuts down cleanly on SIGTERM. Its own test binary, since the signal handler is
//! process-wide.

use std::sync::mpsc;
use std::time::Duration;

use storage::dm::server::run_memnode_notify;
use storage::dm::{MemnodeOptions, TcpOptions, TcpTransport, Transport};

#[test]
fn sigterm_stops_the_memnode_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("token");
    std::fs::write(&tf, "sig-token\n").unwrap();
    let mut opts = MemnodeOptions::new(1 << 20);
    opts.listen = "127.0.0.1:0".parse().unwrap();
    opts.token_file = Some(tf);
    opts.node_id = 11;
    let (atx, arx) = mpsc::channel();
    let (dtx, drx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = run_memnode_notify(opts, move |a| {
            let _ = atx.send(a);
        });
        let _ = dtx.send(r.map_err(|e| e.to_string()));
    });
    let addr = arx
        .recv_timeout(Duration::from_secs(30))
        .expect("memnode did not start");
    let t = TcpTransport::connect(addr, "sig-token", TcpOptions::default()).unwrap();
    assert_eq!(t.node_id(), 11);
    t.alloc(64).unwrap();
    // SAFETY-free libc call: sends SIGTERM to this process, whose handler run_memnode installed.
    assert_eq!(unsafe { libc::kill(libc::getpid(), libc::SIGTERM) }, 0);
    let r = drx
        .recv_timeout(Duration::from_secs(30))
        .expect("memnode did not stop on SIGTERM");
    assert_eq!(r, Ok(()));
    assert!(t.alloc(64).is_err());
}
