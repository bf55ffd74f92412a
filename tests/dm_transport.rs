//! `SET memory_transport` through the real binary: asking for RDMA on a machine without an
//! RDMA device (or a build without the `rdma` feature) runs over TCP, gives the same answer,
//! and says in PROFILE's caption which transport it used and why; a bad value names the
//! setting and its choices.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::memnode::pool;
use common::BIN;

fn frontier(data: &Path, script: &str) -> Output {
    Command::new(BIN)
        .arg("--data")
        .arg(data)
        .args(["-c", script])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stdout_of(o: &Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn rdma_requested_without_a_device_falls_back_to_tcp_and_says_so() {
    let work = tempfile::tempdir().unwrap();
    let (_a, _b, set) = pool(work.path());
    let edges = work.path().join("g.txt");
    std::fs::write(&edges, "1 2\n2 3\n3 4\n4 1\n2 5\n").unwrap();
    let data = work.path().join("data");
    let create = format!(
        "{set} CREATE GRAPH g FROM '{}' FORMAT edgelist STORAGE dm;",
        edges.display()
    );
    stdout_of(&frontier(&data, &create), "create");
    // Rows only (CSV), so timings cannot differ.
    let query = "RUN bfs ON g FROM 1 ORDER BY vertex;";
    let rows = |transport: &str| {
        let o = Command::new(BIN)
            .arg("--data")
            .arg(&data)
            .args(["--format", "csv", "-c"])
            .arg(format!(
                "{set} SET memory_transport = '{transport}'; {query}"
            ))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        stdout_of(&o, transport)
    };
    let over_tcp = rows("tcp");
    let asked_rdma = rows("rdma");
    assert_eq!(asked_rdma, over_tcp, "the same answer over the fallback");
    assert!(over_tcp.contains('5'), "{over_tcp}");

    let profile = stdout_of(
        &frontier(
            &data,
            &format!("{set} SET memory_transport = 'rdma'; PROFILE RUN bfs ON g FROM 1;"),
        ),
        "profile",
    );
    assert!(
        profile.contains("disaggregated memory over tcp (RDMA requested, not available: "),
        "{profile}"
    );
    let plain = stdout_of(
        &frontier(&data, &format!("{set} PROFILE RUN bfs ON g FROM 1;")),
        "profile over tcp",
    );
    assert!(plain.contains("disaggregated memory over tcp ("), "{plain}");
    assert!(!plain.contains("RDMA requested"), "{plain}");

    let settings = stdout_of(
        &frontier(&data, "SET memory_transport = 'RDMA'; SHOW SETTINGS;"),
        "show settings",
    );
    assert!(
        settings
            .lines()
            .any(|l| l.contains("memory_transport") && l.contains("rdma")),
        "{settings}"
    );
}

#[test]
fn a_bad_transport_names_the_setting_and_its_choices() {
    let work = tempfile::tempdir().unwrap();
    let o = frontier(&work.path().join("data"), "SET memory_transport = 'rdmaa';");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("memory_transport"), "{err}");
    assert!(err.contains("expected tcp or rdma"), "{err}");
    assert!(err.contains("rdma"), "{err}");
}
