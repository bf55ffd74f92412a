//! The `frontier` command line: the REPL, query files, `-c` statements and piped stdin, plus
//! the `gen`, `memnode` and `calibrate` tools.

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
    let mut session = match Session::open(&data, style) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let cancel: Arc<AtomicBool> = session.cancel.clone();
    if let Err(e) = ctrlc::set_handler(move || cancel.store(true, Ordering::SeqCst)) {
        eprintln!("warning: Ctrl-C will not cancel statements: {e}");
    }
    session.show_progress = std::io::stderr().is_terminal() && style == OutputStyle::Table;

    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let run = |session: &mut Session, text: &str, source: &str| -> BatchOutcome {
        run_script(
            session,
            text,
            source,
            &mut stdout.lock(),
            &mut stderr.lock(),
        )
    };
    if let Some(text) = &cli.command {
        return code(run(&mut session, text, "-c"));
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
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn memnode(
    listen: std::net::SocketAddr,
    capacity: &str,
    token_file: Option<PathBuf>,
    node_id: u16,
) -> ExitCode {
    let capacity = match storage::dm::parse_size(capacity) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: --capacity: {e}");
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
