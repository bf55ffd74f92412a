//! Measures how long writing a PageRank-shaped result (vertex UInt64, rank Float64) takes in
//! each output format, against writing the same bytes raw, so the cost of `INTO` can be weighed
//! against the run itself.
//!
//! `cargo run --release -p exec --example sink_write_4m -- [ROWS] [DIR]` (default 4194304 rows,
//! a temporary directory).

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{Float64Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use exec::sink::{write_result, Destination, ResultMeta};
use exec::{ResultTable, BATCH_ROWS};
use grammar::ast::OutputFormat;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let rows: u64 = match args.next() {
        Some(a) => a.parse()?,
        None => 4 << 20,
    };
    let tmp = tempfile::tempdir()?;
    let dir = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| tmp.path().to_path_buf());

    let schema = Arc::new(Schema::new(vec![
        Field::new("vertex", DataType::UInt64, false),
        Field::new("rank", DataType::Float64, true),
    ]));
    let started = Instant::now();
    let mut table = ResultTable::empty(schema.clone());
    let mut lo = 0u64;
    // Ranks that look like PageRank's: distinct, small, skewed.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    while lo < rows {
        let hi = (lo + BATCH_ROWS as u64).min(rows);
        let ranks: Vec<f64> = (lo..hi)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let u = (state >> 11) as f64 / (1u64 << 53) as f64;
                0.15 / rows as f64 + 1e-3 * u.powi(8)
            })
            .collect();
        table.batches.push(RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(UInt64Array::from_iter_values(lo..hi)),
                Arc::new(Float64Array::from(ranks)),
            ],
        )?);
        lo = hi;
    }
    println!(
        "built {rows} rows in {:.3} s",
        started.elapsed().as_secs_f64()
    );

    let meta = ResultMeta {
        algorithm: "pagerank".into(),
        parameters: vec![
            ("damping".into(), "0.85".into()),
            ("iter".into(), "10".into()),
        ],
        graph: "synthetic".into(),
        vertices: rows,
        edges: rows * 16,
        elapsed: Duration::from_secs(1),
        summaries: Vec::new(),
    };

    // Baseline: the same 16 bytes a row, written raw (and fsync'd like the sinks do).
    let raw_path = dir.join("raw.bin");
    let t = Instant::now();
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&raw_path)?);
        for b in &table.batches {
            for c in b.columns() {
                for buf in c.to_data().buffers() {
                    f.write_all(buf.as_slice())?;
                }
            }
        }
        f.into_inner()?.sync_all()?;
    }
    let raw = t.elapsed();
    println!(
        "raw     {:>10} bytes  {:.3} s",
        std::fs::metadata(&raw_path)?.len(),
        raw.as_secs_f64()
    );

    for (name, format) in [
        ("out.parquet", OutputFormat::Parquet),
        ("out.arrow", OutputFormat::Arrow),
        ("out.csv", OutputFormat::Csv),
        ("out-PR", OutputFormat::Graphalytics),
    ] {
        let dest = Destination::resolve(&dir.join(name), None)?;
        let s = write_result(&table, &dest, Some(format), &meta)?;
        println!(
            "{:<7} {:>10} bytes  {:.3} s  ({:.1}x raw)",
            exec::sink::format_name(format),
            s.bytes,
            s.elapsed.as_secs_f64(),
            s.elapsed.as_secs_f64() / raw.as_secs_f64().max(1e-9)
        );
    }
    Ok(())
}
