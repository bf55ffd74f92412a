//! Compute-node workers that stall, through the real binary and real workers on loopback: a
//! worker frozen mid-query (SIGSTOP) fails the query naming it, as a silent memory node does,
//! and Ctrl-C during such a query blames no healthy worker; a stranger who trickles the bytes
//! of a HELLO is cut off at the HELLO deadline, and sessions beyond the cap are refused.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::compute::ComputeNode;
use common::memnode::pool;
use common::BIN;
use rexpect::session::spawn_command;
use storage::dm::compute_protocol::{ComputeMessage, PROTOCOL_VERSION};

fn gen_graph(dir: &Path) -> std::path::PathBuf {
    let edges = dir.join("g.txt");
    let status = Command::new(BIN)
        .args(["gen", "rmat", "--scale", "12", "--seed", "5", "-o"])
        .arg(&edges)
        .status()
        .unwrap();
    assert!(status.success());
    edges
}

fn signal(child: &std::process::Child, sig: libc::c_int) {
    // SAFETY: kill(2) on our own child's pid; no memory is shared.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    assert_eq!(rc, 0, "kill({sig})");
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = ".+*?()|[]{}^$\\".contains(c);
            special.then_some('\\').into_iter().chain(Some(c))
        })
        .collect()
}

#[test]
fn a_frozen_worker_fails_the_query_naming_it_and_ctrl_c_blames_no_healthy_one() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    let token = work.path().join("token");
    let workers = [ComputeNode::start(&token), ComputeNode::start(&token)];
    let edges = gen_graph(work.path());
    let mut cmd = Command::new(BIN);
    cmd.arg("--data").arg(work.path().join("data"));
    cmd.env("TERM", "xterm");
    // A bound that only catches a hang: every expectation below normally takes well under it.
    let mut p = spawn_command(cmd, Some(90_000)).unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_line(&format!(
        "{set} CREATE GRAPH g FROM '{}' FORMAT edgelist STORAGE dm;",
        edges.display()
    ))
    .unwrap();
    p.exp_string("created graph g").unwrap();
    p.exp_string("frontier> ").unwrap();
    let (healthy, victim) = (&workers[0], &workers[1]);
    p.send_line(&format!(
        "SET compute_nodes = '{},{}';",
        healthy.addr, victim.addr
    ))
    .unwrap();
    p.exp_string("frontier> ").unwrap();

    // Frozen mid-query: its connection stays open, it sends nothing.
    p.send_line("RUN pagerank ON g ITER 1000000;").unwrap();
    p.exp_string("iteration ").unwrap();
    signal(&victim.child, libc::SIGSTOP);
    let frozen = format!(
        r"compute node {}: no reply within 4s",
        regex_escape(&victim.addr)
    );
    p.exp_regex(&frozen).unwrap();
    p.exp_string("frontier> ").unwrap();
    signal(&victim.child, libc::SIGCONT);

    // Ctrl-C while a worker is frozen: the statement is cancelled, and the healthy worker (which
    // reports the abort that follows) is not named as its cause.
    p.send_line("RUN pagerank ON g ITER 1000000;").unwrap();
    p.exp_string("iteration ").unwrap();
    signal(&victim.child, libc::SIGSTOP);
    p.send_control('c').unwrap();
    let said = p.exp_string("frontier> ").unwrap();
    signal(&victim.child, libc::SIGCONT);
    assert!(
        said.contains("cancelled") || said.contains(&format!("compute node {}", victim.addr)),
        "{said}"
    );
    assert!(
        !said.contains(&format!("compute node {}", healthy.addr)),
        "the healthy worker was blamed: {said}"
    );
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

/// Whether the worker has closed `s` (EOF or reset), looking without blocking for long.
fn closed(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let mut b = [0u8; 64];
    match s.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

/// One byte of a HELLO every 250 ms, in time for any per-read timeout but 10 s in all: the
/// worker closes the connection at its 5 s HELLO deadline, before the HELLO is whole.
#[test]
fn a_trickled_hello_is_cut_off_before_it_completes() {
    let work = tempfile::tempdir().unwrap();
    let token = work.path().join("token");
    std::fs::write(&token, "stall-token\n").unwrap();
    let worker = ComputeNode::start(&token);
    let body = ComputeMessage::Hello {
        token: "x".repeat(35),
        version: PROTOCOL_VERSION,
    }
    .encode_body();
    let mut frame = (body.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&body);
    let mut s = TcpStream::connect(&worker.addr).unwrap();
    let mut cut_off = false;
    for (i, byte) in frame.iter().enumerate() {
        if s.write_all(&[*byte]).is_err() || closed(&mut s) {
            cut_off = true;
            assert!(i > 0, "closed before the first byte");
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(
        cut_off || closed(&mut s),
        "the whole trickled HELLO was taken"
    );
    assert!(cut_off, "the worker waited for all {} bytes", frame.len());
}

/// Sessions beyond the worker's cap are closed at once, without an answer to their HELLO.
#[test]
fn sessions_beyond_the_cap_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let token = work.path().join("token");
    std::fs::write(&token, "cap-token\n").unwrap();
    let worker = ComputeNode::start(&token);
    let hello = |s: &mut TcpStream| {
        ComputeMessage::Hello {
            token: "cap-token".into(),
            version: PROTOCOL_VERSION,
        }
        .write_to(s)
        .and_then(|_| {
            s.set_read_timeout(Some(Duration::from_secs(30)))?;
            ComputeMessage::read_from(s)
        })
    };
    let cap = engine::compute_node::MAX_SESSIONS;
    // Greeted sessions stay open (a session waits for its next JOB as long as it likes).
    let held: Vec<TcpStream> = (0..cap)
        .map(|i| {
            let mut s = TcpStream::connect(&worker.addr).unwrap();
            let r = hello(&mut s);
            assert!(
                matches!(r, Ok(Some(ComputeMessage::HelloOk))),
                "session {i}: {r:?}"
            );
            s
        })
        .collect();
    let mut extra = TcpStream::connect(&worker.addr).unwrap();
    let r = hello(&mut extra);
    assert!(
        !matches!(r, Ok(Some(ComputeMessage::HelloOk))),
        "session {} of a cap of {cap} was served",
        cap + 1
    );
    // One goes, and a newcomer is served again.
    drop(held);
    let mut again = None;
    for _ in 0..200 {
        let mut s = TcpStream::connect(&worker.addr).unwrap();
        if let Ok(Some(ComputeMessage::HelloOk)) = hello(&mut s) {
            again = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(again.is_some(), "no session served after the others closed");
}
