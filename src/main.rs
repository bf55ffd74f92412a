//! The `frontier` command line: the REPL, query files, `-c` statements and piped stdin, plus
//! the `gen`, `memnode`, `compute` and `calibrate` tools.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};
use repl::{run_script, BatchOutcome, OutputStyle, Session};

#[derive(Parser)]
#[command(
    name = "frontier",
    version,
    about = "A graph analytics engine with a small query language",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    /// Data directory holding the catalog and graph files
    /// [default: $FRONTIER_DATA, else ./frontier-data]
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Statements to run instead of a file or the REPL
    #[arg(short = 'c', value_name = "STATEMENTS")]
    command: Option<String>,
    /// How results are printed
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Open the data directory without changing it (also automatic while another process holds it)
    #[arg(long)]
    read_only: bool,
    /// Query files (.fq) to run in order
    files: Vec<PathBuf>,
    #[command(subcommand)]
    tool: Option<Tool>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Csv,
    Json,
}

#[derive(Subcommand)]
enum Tool {
    /// Generate a synthetic graph as an edge-list text file
    Gen {
        #[command(subcommand)]
        kind: GenKind,
    },
    /// Run a memory node of the disaggregated store
    Memnode {
        /// Address to listen on (loopback unless told otherwise)
        #[arg(long, default_value = "127.0.0.1:7070")]
        listen: std::net::SocketAddr,
        /// Memory this node may hand out, e.g. 4GiB
        #[arg(long)]
        capacity: String,
        /// File holding the shared token clients must present
        #[arg(long)]
        token_file: Option<PathBuf>,
        /// This node's 16-bit id in global addresses
        #[arg(long, default_value_t = 0)]
        node_id: u16,
    },
    /// Run a compute-node worker: sessions with `SET compute_nodes` send it its share of RUN
    /// on graphs in memory nodes
    Compute {
        /// Address to listen on (loopback unless told otherwise)
        #[arg(long, default_value = "127.0.0.1:7170")]
        listen: std::net::SocketAddr,
        /// File holding the shared token sessions must present
        /// (sessions read it from compute_token_file, else memory_token_file)
        #[arg(long)]
        token_file: PathBuf,
    },
    /// Probe the device under the data directory (4 KiB O_DIRECT random reads at depths
    /// 1..256 and sequential 1 MiB reads, two submitting threads, medians of several samples
    /// after a warm-up) and store its concurrency as the default `io_depth` in DIR/device.json
    Calibrate {
        /// Data directory to probe and to write device.json into
        /// [default: $FRONTIER_DATA, else ./frontier-data]
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Seconds of reads at each depth (split into the samples)
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
        /// Samples per figure; the median is kept
        #[arg(long, default_value_t = 5)]
        samples: u32,
        /// Size of the temporary probe file, in MiB
        #[arg(long, default_value_t = 1024)]
        file_mib: u64,
        /// Comma-separated depths to probe
        #[arg(long, default_value = "1,2,4,8,16,32,64,128,256")]
        depths: String,
    },
}

#[derive(Subcommand)]
enum GenKind {
    /// Graph500 R-MAT (a=0.57, b=0.19, c=0.19), deterministic for a seed
    Rmat {
        #[arg(long)]
        scale: u32,
        #[arg(long, default_value_t = 16)]
        edge_factor: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Add uniform random weights in (0, 1]
        #[arg(long)]
        weighted: bool,
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
    },
    /// Uniformly random edges
    Uniform {
        #[arg(long)]
        vertices: u64,
        #[arg(long)]
        edges: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        weighted: bool,
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
    },
    /// Road-like graph: a 2-D grid with a fraction of its edges removed, ids randomly permuted
    #[command(group = clap::ArgGroup::new("size").required(true).args(["vertices", "scale"]))]
    Grid {
        /// Number of vertices (the grid is ⌈√N⌉ wide)
        #[arg(long)]
        vertices: Option<u64>,
        /// 2^S vertices (instead of --vertices)
        #[arg(long)]
        scale: Option<u32>,
        /// Fraction of the grid's edges removed at random
        #[arg(long, default_value_t = 0.2)]
        remove: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Add uniform random integer weights in 1..=255
        #[arg(long)]
        weighted: bool,
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.tool {
        Some(Tool::Gen { kind }) => return gen(kind),
        Some(Tool::Memnode {
            listen,
            capacity,
            token_file,
            node_id,
        }) => return memnode(listen, &capacity, token_file, node_id),
        Some(Tool::Compute { listen, token_file }) => return compute(listen, &token_file),
        Some(Tool::Calibrate {
            dir,
            seconds,
            samples,
            file_mib,
            depths,
        }) => {
            let dir = dir
                .or_else(|| cli.data.clone())
                .or_else(|| std::env::var_os("FRONTIER_DATA").map(PathBuf::from))
                .unwrap_or_else(|| PathBuf::from("frontier-data"));
            return calibrate(&dir, seconds, samples, file_mib, &depths);
        }
        None => {}
    }
    let data = cli
        .data
        .or_else(|| std::env::var_os("FRONTIER_DATA").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("frontier-data"));
    let style = match cli.format {
        Format::Table => OutputStyle::Table,
        Format::Csv => OutputStyle::Csv,
        Format::Json => OutputStyle::Json,
    };
    let mut session = match Session::open(&data, style, cli.read_only) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let interactive =
        cli.command.is_none() && cli.files.is_empty() && std::io::stdin().is_terminal();
    install_ctrl_c(session.engine.cancel.clone(), interactive);
    session.set_progress(std::io::stderr().is_terminal() && style == OutputStyle::Table);

    let stdout = std::io::stdout();
    // stderr is not locked for the batch: the progress bar's timer thread draws on it too.
    let run = |session: &mut Session, text: &str, source: &str| -> BatchOutcome {
        run_script(
            session,
            text,
            source,
            &mut stdout.lock(),
            &mut std::io::stderr(),
        )
    };
    if let Some(text) = &cli.command {
        // Like `duckdb -c`, a lone statement need not end with `;`.
        let mut text = text.clone();
        if grammar::missing_final_semicolon(&text) {
            text.push_str("\n;");
        }
        return code(run(&mut session, &text, "-c"));
    }
    if !cli.files.is_empty() {
        for file in &cli.files {
            let text = match std::fs::read_to_string(file) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: {}: {e}", file.display());
                    return ExitCode::from(1);
                }
            };
            let outcome = run(&mut session, &text, &file.display().to_string());
            if outcome != BatchOutcome::Ok {
                return code(outcome);
            }
        }
        return ExitCode::SUCCESS;
    }
    if std::io::stdin().is_terminal() {
        let rc = repl::interactive::run_repl(&mut session);
        let _ = std::io::stdout().flush();
        return ExitCode::from(rc as u8);
    }
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("error: <stdin>: {e}");
        return ExitCode::from(1);
    }
    code(run(&mut session, &text, "<stdin>"))
}

/// Ctrl-C sets the session's cancel flag, which the running statement checks. In a batch, a
/// second Ctrl-C while the first is still unanswered ends the process at once (exit 130), so
/// a batch can always be stopped; the REPL keeps running and returns to its prompt.
fn install_ctrl_c(cancel: Arc<AtomicBool>, interactive: bool) {
    let result = ctrlc::set_handler(move || {
        if !interactive && cancel.swap(true, Ordering::SeqCst) {
            let _ = std::io::stderr().write_all(b"\ninterrupted\n");
            std::process::exit(130);
        }
        cancel.store(true, Ordering::SeqCst);
    });
    if let Err(e) = result {
        eprintln!("warning: Ctrl-C will not cancel statements: {e}");
    }
}

fn code(outcome: BatchOutcome) -> ExitCode {
    ExitCode::from(outcome.exit_code() as u8)
}

fn gen(kind: GenKind) -> ExitCode {
    let result = match &kind {
        GenKind::Rmat {
            scale,
            edge_factor,
            seed,
            weighted,
            output,
        } => storage::gen::gen_rmat(*scale, *edge_factor, *seed, *weighted, output),
        GenKind::Uniform {
            vertices,
            edges,
            seed,
            weighted,
            output,
        } => storage::gen::gen_uniform(*vertices, *edges, *seed, *weighted, output),
        GenKind::Grid {
            vertices,
            scale,
            remove,
            seed,
            weighted,
            output,
        } => grid_vertices(*vertices, *scale)
            .and_then(|n| storage::gen::gen_grid(n, *remove, *seed, *weighted, output)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// The vertex count `gen grid` was asked for: `--vertices N` or `--scale S` (2^S).
fn grid_vertices(vertices: Option<u64>, scale: Option<u32>) -> storage::Result<u64> {
    match (vertices, scale) {
        (Some(n), _) => Ok(n),
        (None, Some(s)) if s < 63 => Ok(1u64 << s),
        (None, s) => Err(storage::StoreError::Other(format!(
            "--scale {} is too large: give at most 32",
            s.unwrap_or_default()
        ))),
    }
}

fn memnode(
    listen: std::net::SocketAddr,
    capacity: &str,
    token_file: Option<PathBuf>,
    node_id: u16,
) -> ExitCode {
    let capacity = match base::parse_size(capacity) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: --capacity '{capacity}': {e}");
            return ExitCode::from(2);
        }
    };
    let opts = storage::dm::MemnodeOptions {
        listen,
        capacity,
        token: None,
        token_file,
        node_id,
    };
    match storage::dm::run_memnode(opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn compute(listen: std::net::SocketAddr, token_file: &std::path::Path) -> ExitCode {
    let token = match std::fs::read_to_string(token_file) {
        Ok(t) => t.trim().to_string(),
        Err(e) => {
            eprintln!("error: --token-file '{}': {e}", token_file.display());
            return ExitCode::from(2);
        }
    };
    let stop = match storage::dm::stop_on_signals() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let opts = engine::compute_node::ComputeNodeOptions {
        listen,
        token,
        log: Arc::new(|m: &str| eprintln!("{m}")),
    };
    let ready = |addr| {
        println!("compute node listening on {addr}");
        let _ = std::io::stdout().flush();
    };
    match engine::compute_node::run_compute_node(opts, stop, ready) {
        Ok(()) => {
            println!("compute node shut down");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn calibrate(
    dir: &std::path::Path,
    seconds: f64,
    samples: u32,
    file_mib: u64,
    depths: &str,
) -> ExitCode {
    let depths: Result<Vec<u32>, _> = depths
        .split(',')
        .filter(|d| !d.trim().is_empty())
        .map(|d| d.trim().parse::<u32>())
        .collect();
    let depths = match depths {
        Ok(d) if !d.is_empty() && d.iter().all(|&x| (1..=4096).contains(&x)) => d,
        _ => {
            eprintln!("error: --depths: expected comma-separated depths in 1..=4096");
            return ExitCode::from(2);
        }
    };
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 600.0) {
        eprintln!("error: --seconds: expected a number of seconds in (0, 600]");
        return ExitCode::from(2);
    }
    if !(1..=100).contains(&samples) {
        eprintln!("error: --samples: expected a number of samples in 1..=100");
        return ExitCode::from(2);
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("error: {}: {e}", dir.display());
        return ExitCode::from(1);
    }
    let file_bytes = file_mib.max(1).saturating_mul(1 << 20);
    let opts = storage::io::ProbeOptions {
        depths,
        file_bytes,
        seconds_per_depth: seconds,
        samples,
        ..storage::io::ProbeOptions::default()
    };
    eprintln!(
        "probing {} with a {} MiB file, {seconds} s per depth in {samples} samples, {} \
         submitting threads ...",
        dir.display(),
        file_bytes >> 20,
        opts.submitters
    );
    let report = match storage::io::probe_device(dir, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    println!(
        "engine: {}{}",
        report.engine,
        if report.direct {
            ""
        } else {
            " (not O_DIRECT: figures include the page cache)"
        }
    );
    println!("random 4 KiB reads (median of {} samples):", report.samples);
    println!(
        "{:>6} {:>12} {:>10} {:>8} {:>14}",
        "depth", "reads/s", "MB/s", "spread", "CPU us/read"
    );
    for r in &report.results {
        println!(
            "{:>6} {:>12.0} {:>10.1} {:>7.0}% {:>14.1}",
            r.depth,
            r.reads_per_sec,
            r.mb_per_sec,
            100.0 * r.spread,
            r.cpu_us_per_read
        );
    }
    let seq = &report.sequential;
    println!(
        "sequential {} KiB reads, depth {}: {:.1} MB/s (spread {:.0}%, {:.1} CPU us/read)",
        seq.read_bytes >> 10,
        seq.depth,
        seq.mb_per_sec,
        100.0 * seq.spread,
        seq.cpu_us_per_read
    );
    println!(
        "concurrency (saturation depth): {}; random-read peak {:.0} reads/s = {:.1} MB/s",
        report.saturation_depth, report.peak_reads_per_sec, report.peak_mb_per_sec
    );
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    let text = device_json(&report, seconds);
    let path = dir.join("device.json");
    let tmp = dir.join("device.json.tmp");
    if let Err(e) = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &path)) {
        eprintln!("error: {}: {e}", path.display());
        return ExitCode::from(1);
    }
    println!(
        "wrote {} (io_depth {} is now the default for this data directory)",
        path.display(),
        report.saturation_depth
    );
    ExitCode::SUCCESS
}

/// DATA/device.json: the probe's figures (the engine reads `io_depth`; bench/run.sh and cost
/// models read the rest).
fn device_json(report: &storage::io::ProbeReport, seconds: f64) -> String {
    let results: Vec<String> = report
        .results
        .iter()
        .map(|r| {
            format!(
                "    {{\"depth\": {}, \"reads_per_sec\": {:.1}, \"mb_per_sec\": {:.2}, \"spread\": {:.3}, \"cpu_us_per_read\": {:.2}}}",
                r.depth, r.reads_per_sec, r.mb_per_sec, r.spread, r.cpu_us_per_read
            )
        })
        .collect();
    let seq = &report.sequential;
    let warnings: Vec<String> = report
        .warnings
        .iter()
        .map(|w| format!("\"{}\"", json_escape(w)))
        .collect();
    format!(
        "{{\n  \"io_depth\": {},\n  \"peak_reads_per_sec\": {:.1},\n  \"peak_mb_per_sec\": {:.2},\n  \"seq_mb_per_sec\": {:.2},\n  \"seq_read_bytes\": {},\n  \"seq_depth\": {},\n  \"seq_cpu_us_per_read\": {:.2},\n  \"engine\": \"{}\",\n  \"direct\": {},\n  \"file_bytes\": {},\n  \"seconds_per_depth\": {},\n  \"samples\": {},\n  \"submitters\": {},\n  \"load_before\": {:.2},\n  \"load_after\": {:.2},\n  \"cores\": {},\n  \"warnings\": [{}],\n  \"results\": [\n{}\n  ]\n}}\n",
        report.saturation_depth,
        report.peak_reads_per_sec,
        report.peak_mb_per_sec,
        seq.mb_per_sec,
        seq.read_bytes,
        seq.depth,
        seq.cpu_us_per_read,
        json_escape(&report.engine),
        report.direct,
        report.file_bytes,
        seconds,
        report.samples,
        report.submitters,
        report.load_before,
        report.load_after,
        report.cores,
        warnings.join(", "),
        results.join(",\n")
    )
}

/// Escapes `s` for a JSON string literal.
fn json_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}
