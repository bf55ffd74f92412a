//! PROFILE's caption says how long threads waited for reads out of core (the run's I/O-bound
//! share), and says nothing of it when nothing was read.

use engine::{Output, Session};

/// The caption of PROFILE's iteration table in `out`.
fn profile_caption(out: &[Output]) -> String {
    out.iter()
        .find_map(|o| match o {
            Output::Caption(c) if c.starts_with("profile (") => Some(c.clone()),
            _ => None,
        })
        .expect("PROFILE's caption")
}

/// The seconds the caption gives for the waits, if it names them.
fn waited(caption: &str) -> Option<f64> {
    let rest = caption.split("threads waited for reads ").nth(1)?;
    rest.split(' ').next()?.parse().ok()
}

#[test]
fn profile_says_how_long_threads_waited_for_reads_out_of_core() {
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("ring.txt");
    let text: String = (0..20_000u32)
        .map(|i| format!("{i} {}\n", (i + 1) % 20_000))
        .collect();
    std::fs::write(&edges, text).unwrap();
    let mut s = Session::open(&dir.path().join("data"), false).unwrap();
    s.execute_text(&format!(
        "CREATE GRAPH ring FROM '{}' UNDIRECTED; CREATE GRAPH held FROM '{}' UNDIRECTED \
         STORAGE memory;",
        edges.display(),
        edges.display()
    ))
    .unwrap();

    let out = s
        .execute_text("SET cache = '8KB'; PROFILE RUN pagerank ON ring ITER 2 LIMIT 1;")
        .unwrap();
    let caption = profile_caption(&out);
    assert!(caption.contains("out of core"), "{caption}");
    assert!(waited(&caption).is_some(), "no waits named: {caption}");

    let out = s
        .execute_text("PROFILE RUN pagerank ON held ITER 2 LIMIT 1;")
        .unwrap();
    let caption = profile_caption(&out);
    assert!(!caption.contains("waited"), "{caption}");
}
