//! Drives the REPL through a pseudo-terminal, as a person does: a statement over two lines,
//! tab completion, history recall, Ctrl-C during a long statement, and Ctrl-D to leave.

use std::process::Command;

use rexpect::session::{spawn_command, PtySession};

const BIN: &str = env!("CARGO_BIN_EXE_frontier");

/// Types `s` and makes sure the REPL sees it at once.
fn keys(p: &mut PtySession, s: &str) -> Result<(), rexpect::error::Error> {
    p.send(s)?;
    p.flush()
}

#[test]
fn a_person_at_the_repl() {
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("g.txt");
    let status = Command::new(BIN)
        .args([
            "gen",
            "uniform",
            "--vertices",
            "20000",
            "--edges",
            "200000",
            "--seed",
            "3",
            "-o",
        ])
        .arg(&edges)
        .status()
        .unwrap();
    assert!(status.success());

    let mut cmd = Command::new(BIN);
    cmd.arg("--data").arg(dir.path().join("data"));
    cmd.env("TERM", "xterm");
    let mut p = spawn_command(cmd, Some(60_000)).unwrap();
    p.exp_string("frontier> ").unwrap();

    // A statement over two lines: the first line alone is not run.
    p.send_line(&format!("CREATE GRAPH g FROM '{}'", edges.display()))
        .unwrap();
    p.exp_string("... ").unwrap();
    p.send_line("  FORMAT edgelist;").unwrap();
    p.exp_string("created graph g").unwrap();
    p.exp_string("frontier> ").unwrap();

    // Tab completion: `pager` completes to `pagerank`, or the statement would fail.
    keys(&mut p, "RUN pager").unwrap();
    keys(&mut p, "\t").unwrap();
    p.exp_string("ank").unwrap();
    keys(&mut p, " ON g ITER 2 ORDER BY rank DESC LIMIT 3;\r").unwrap();
    p.exp_string("3 rows").unwrap();
    p.exp_string("frontier> ").unwrap();

    // History recall: the up arrow brings the last statement back.
    keys(&mut p, "\x1b[A").unwrap();
    p.exp_string("LIMIT 3;").unwrap();
    keys(&mut p, "\r").unwrap();
    p.exp_string("3 rows").unwrap();
    p.exp_string("frontier> ").unwrap();

    // Completion by context: after WHERE, only the columns of the statement's algorithms, so
    // `ra` is `rank` (not also `randomwalk`).
    keys(&mut p, "RUN pagerank, wcc ON g WHERE ra").unwrap();
    keys(&mut p, "\t").unwrap();
    p.exp_string("nk").unwrap();
    keys(&mut p, " > 0 LIMIT 1;\r").unwrap();
    p.exp_string("1 row").unwrap();
    p.exp_string("frontier> ").unwrap();

    // Ctrl-C on a half-typed line drops it.
    keys(&mut p, "RUN bfs ON").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("frontier> ").unwrap();

    // Ctrl-C cancels a long statement and returns to the prompt; the session stays usable.
    p.send_line("RUN pagerank ON g ITER 1000000;").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    p.send_control('c').unwrap();
    p.exp_string("cancelled").unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_line("SHOW GRAPHS;").unwrap();
    p.exp_string("blockfile").unwrap();
    p.exp_string("frontier> ").unwrap();

    // Ctrl-D leaves.
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();

    // History is kept in the data directory.
    let history = std::fs::read_to_string(dir.path().join("data/history")).unwrap();
    assert!(history.contains("SHOW GRAPHS;"), "{history}");
}

/// Lines that arrive together (typed ahead, or pasted where the terminal does not mark pastes)
/// are each run: the line editor keeps what it read past the first line for the next prompt.
#[test]
fn lines_typed_ahead_are_each_run() {
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("g.txt");
    std::fs::write(&edges, "0 1\n1 2\n2 0\n").unwrap();
    let mut cmd = Command::new(BIN);
    cmd.arg("--data").arg(dir.path().join("data"));
    cmd.env("TERM", "xterm");
    let mut p = spawn_command(cmd, Some(60_000)).unwrap();
    p.exp_string("frontier> ").unwrap();
    // One write: the editor reads both lines at once.
    keys(
        &mut p,
        &format!(
            "CREATE GRAPH g FROM '{}' FORMAT edgelist;\rSHOW GRAPHS;\r",
            edges.display()
        ),
    )
    .unwrap();
    p.exp_string("created graph g").unwrap();
    p.exp_string("blockfile").unwrap();
    p.exp_string("frontier> ").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}
