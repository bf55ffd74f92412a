//! Import throughput: generates an R-MAT edge list and imports it under a memory budget,
//! printing edges/s, MB/s and peak RSS.
//!
//! `cargo run --release -p storage --example import_bench -- [scale] [budget_mb] [dir]`

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use storage::import::{import, ImportRequest, InputFormat};

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let scale: u32 = args.get(1).map_or(Ok(20), |s| s.parse())?;
    let budget_mb: u64 = args.get(2).map_or(Ok(256), |s| s.parse())?;
    let dir = std::path::PathBuf::from(args.get(3).cloned().unwrap_or_else(|| "/tmp".into()));
    let src = dir.join(format!("rmat{scale}.txt"));
    if !src.exists() {
        let t = Instant::now();
        storage::gen::gen_rmat(scale, 16, 1, false, &src)?;
        println!("generated {} in {:.1?}", src.display(), t.elapsed());
    }
    let before = peak_rss_mb();
    for directed in [true, false] {
        let req = ImportRequest {
            source: src.clone(),
            format: InputFormat::Edgelist,
            directed: Some(directed),
            weighted: false,
            vertices: None,
            options: vec![],
            dest: dir.join(format!("rmat{scale}.frontier")),
            memory_budget: budget_mb << 20,
            threads: 0,
            temp_dir: dir.clone(),
            identity: storage::blockfile::format::FileIdentity::new(
                "g",
                1,
                &src.display().to_string(),
                storage::catalog::StorageKind::Blockfile,
            ),
        };
        let s = import(&req, &mut |_| {}, &AtomicBool::new(false))?;
        let secs = s.elapsed.as_secs_f64();
        println!(
            "directed={directed}: |V|={} |E|={} arcs={} dups={} runs={} file={:.0} MB in {secs:.1}s: {:.2} M input edges/s, {:.0} MB/s input; peak RSS {:.0} MB (before {before:.0} MB)",
            s.vertices,
            s.edges,
            s.arcs,
            s.duplicates_dropped,
            s.runs_spilled,
            s.file_bytes as f64 / 1e6,
            (s.edges + s.duplicates_dropped) as f64 / secs / 1e6,
            s.bytes_read as f64 / secs / 1e6,
            peak_rss_mb()
        );
        std::fs::remove_file(&req.dest)?;
    }
    Ok(())
}
