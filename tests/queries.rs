//! The query-file regression suite: every `tests/queries/*.fq` runs through the real binary
//! (`frontier --format csv FILE.fq`) and its exit code, stdout, stderr and the files it wrote
//! must match `tests/queries/NAME.expected`. See tests/queries/README.md.
//!
//! After a deliberate change of output, regenerate the expected files and review the diff:
//! `FRONTIER_BLESS=1 cargo test --test queries`. `FRONTIER_QUERY=word` runs only the cases whose
//! name contains `word`.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use arrow_array::RecordBatch;
use regex::Regex;

const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/queries");
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

#[test]
fn query_files() {
    let bless = std::env::var_os("FRONTIER_BLESS").is_some_and(|v| !v.is_empty() && v != "0");
    let only = std::env::var("FRONTIER_QUERY").unwrap_or_default();
    let masks = Masks::new();
    let mut cases: Vec<PathBuf> = fs::read_dir(SUITE)
        .expect("tests/queries exists")
        .map(|e| e.expect("tests/queries is readable").path())
        .filter(|p| p.extension().is_some_and(|x| x == "fq"))
        .filter(|p| file_name(p).contains(&only))
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no .fq case in {SUITE} matches {only:?}");

    let mut failures = Vec::new();
    for case in &cases {
        let actual = run_case(case, &masks);
        let expected_path = case.with_extension("expected");
        if bless {
            fs::write(&expected_path, &actual).expect("the expected file is writable");
            continue;
        }
        match fs::read_to_string(&expected_path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{} differs from {}:\n{}",
                file_name(case),
                file_name(&expected_path),
                similar::TextDiff::from_lines(&expected, &actual)
                    .unified_diff()
                    .context_radius(3)
                    .header("expected", "actual")
            )),
            Err(_) => failures.push(format!(
                "{} has no {} (write it with FRONTIER_BLESS=1 cargo test --test queries); it printed:\n{actual}",
                file_name(case),
                file_name(&expected_path),
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} query files failed (if the change is deliberate: FRONTIER_BLESS=1 cargo test --test queries, then review the diff):\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Runs one case in fresh directories and renders everything it produced as the expected file.
///
/// The binary runs in a temporary work folder holding a copy of the case and a link `data` to
/// tests/data, so paths in a case (`'data/graphalytics/...'`) are the same on every machine and
/// `INTO 'out.csv'` writes into the work folder, never into the repository.
fn run_case(case: &Path, masks: &Masks) -> String {
    let name = file_name(case);
    let work = tempfile::tempdir().expect("a temporary work folder");
    let data_dir = tempfile::tempdir().expect("a temporary data directory");
    fs::copy(case, work.path().join(&name)).expect("the case is copied");
    std::os::unix::fs::symlink(DATA, work.path().join("data")).expect("the data link is made");

    let out = Command::new(common::BIN)
        .current_dir(work.path())
        .env_remove("FRONTIER_DATA")
        .arg("--data")
        .arg(data_dir.path())
        .args(["--format", "csv"])
        .arg(&name)
        .stdin(Stdio::null())
        .output()
        .expect("the frontier binary runs");

    let exit = match out.status.code() {
        Some(code) => code.to_string(),
        None => "killed by a signal".to_string(),
    };
    let mut rendered = format!(
        "# frontier --format csv {name}\nexit: {exit}\n--- stdout\n{}--- stderr\n{}",
        ended(&common::text(&out.stdout)),
        ended(&common::text(&out.stderr)),
    );
    for written in written_files(work.path(), &name) {
        let shown = written
            .strip_prefix(work.path())
            .unwrap_or(&written)
            .display()
            .to_string();
        rendered.push_str(&format!(
            "--- file {shown}\n{}",
            ended(&show_file(&written))
        ));
    }
    masks.apply(
        &rendered,
        &[(work.path(), "<WORK>"), (data_dir.path(), "<DATA>")],
    )
}

/// Files the case wrote into its work folder (not the case itself, not the data link), sorted.
fn written_files(work: &Path, case_name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![work.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() || (dir == work && file_name(&path) == case_name) {
                continue;
            }
            if kind.is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// A written file as text: Parquet and Arrow IPC files as their schema and rows in CSV, any
/// other file as it is (a CSV result, a Graphalytics text file).
fn show_file(path: &Path) -> String {
    let extension = path
        .extension()
        .map(|x| x.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let batches = match extension.as_str() {
        "parquet" => read_parquet(path),
        "arrow" | "ipc" | "feather" => read_arrow(path),
        _ => {
            return match fs::read(path) {
                Ok(bytes) => common::text(&bytes),
                Err(e) => format!("(unreadable: {e})"),
            }
        }
    };
    match batches {
        Ok(batches) => render_batches(&batches),
        Err(e) => format!("(not a readable {extension} file: {e})"),
    }
}

fn read_parquet(path: &Path) -> Result<Vec<RecordBatch>, String> {
    let file = fs::File::open(path).map_err(|e| e.to_string())?;
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.build())
        .map_err(|e| e.to_string())?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

fn read_arrow(path: &Path) -> Result<Vec<RecordBatch>, String> {
    let file = fs::File::open(path).map_err(|e| e.to_string())?;
    arrow_ipc::reader::FileReader::try_new(file, None)
        .map_err(|e| e.to_string())?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

/// `schema: name type[?], ...` (`?` marks a nullable column), then the rows as CSV.
fn render_batches(batches: &[RecordBatch]) -> String {
    let Some(first) = batches.first() else {
        return "(no record batch)\n".to_string();
    };
    let fields: Vec<String> = first
        .schema()
        .fields()
        .iter()
        .map(|f| {
            let nullable = if f.is_nullable() { "?" } else { "" };
            format!("{} {}{nullable}", f.name(), f.data_type())
        })
        .collect();
    let mut csv = Vec::new();
    {
        let mut writer = arrow_csv::WriterBuilder::new()
            .with_header(true)
            .build(&mut csv);
        for batch in batches {
            if let Err(e) = writer.write(batch) {
                return format!("(rows not renderable: {e})\n");
            }
        }
    }
    format!("schema: {}\n{}", fields.join(", "), common::text(&csv))
}

/// What varies from run to run, replaced by a fixed word: temporary paths, durations and
/// rates. Everything else must be deterministic; a case whose output is not belongs fixed in
/// the engine (or pinned with `SET threads = 1`), not masked here.
struct Masks {
    durations: Regex,
    rates: Regex,
    file_ids: Regex,
}

impl Masks {
    fn new() -> Masks {
        Masks {
            // `12 ms`, `0.4 s`, `3.2s`, `850µs`, `1m 3s`, as elapsed lines and PROFILE print them.
            durations: Regex::new(r"\b\d+(\.\d+)?\s?(ns|µs|us|ms|s|min)\b").expect("a valid regex"),
            // `12.3 MB/s`, `4500 edges/s`.
            rates: Regex::new(r"\b(\d+(\.\d+)?|inf|NaN)\s?[A-Za-z]*/s\b").expect("a valid regex"),
            // A graph file's random id, as DESCRIBE prints it.
            file_ids: Regex::new(r"\b[0-9a-f]{32}\b").expect("a valid regex"),
        }
    }

    fn apply(&self, text: &str, paths: &[(&Path, &str)]) -> String {
        let mut text = text.to_string();
        for (path, word) in paths {
            for form in [path.to_path_buf(), path.canonicalize().unwrap_or_default()] {
                let shown = form.display().to_string();
                if !shown.is_empty() {
                    text = text.replace(&shown, word);
                }
            }
        }
        let text = self.file_ids.replace_all(&text, "<FILE-ID>");
        let text = self.rates.replace_all(&text, "<RATE>");
        let text = self.durations.replace_all(&text, "<TIME>");
        mask_time_columns(&text)
    }
}

/// Masks the cells of CSV columns that hold durations (PROFILE's `time ms`): a header line with
/// such a column starts a table, and the table's rows are the following lines with as many
/// fields. Cells are split at commas, which is enough for the tables that carry times.
fn mask_time_columns(text: &str) -> String {
    let is_time = |name: &str| {
        let name = name.trim().to_ascii_lowercase();
        name == "time" || name.starts_with("time ") || name.starts_with("elapsed")
    };
    let mut out = String::with_capacity(text.len());
    let mut table: Option<(usize, Vec<usize>)> = None;
    for line in text.split_inclusive('\n') {
        let fields: Vec<&str> = line.trim_end_matches('\n').split(',').collect();
        match &table {
            Some((width, columns)) if fields.len() == *width => {
                let masked: Vec<&str> = fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| if columns.contains(&i) { "<TIME>" } else { f })
                    .collect();
                out.push_str(&masked.join(","));
                out.push_str(&line[line.trim_end_matches('\n').len()..]);
                continue;
            }
            _ => table = None,
        }
        let columns: Vec<usize> = (0..fields.len()).filter(|&i| is_time(fields[i])).collect();
        if fields.len() > 1 && !columns.is_empty() {
            table = Some((fields.len(), columns));
        }
        out.push_str(line);
    }
    out
}

/// `text` ending with exactly one newline (none when empty), so sections stay apart.
fn ended(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n(no newline at end)\n")
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The masks hide what varies between runs and nothing else.
#[test]
fn masks_hide_only_what_varies() {
    let masks = Masks::new();
    let work = Path::new("/tmp/work-xyz");
    let text = "created graph g: 10 vertices, 44.0 KiB in 0.01 s (1234 edges/s)\n\
                file,/tmp/work-xyz/out.csv\n\
                vertex,rank\n1,0.5 s\n\
                iteration,active,time ms\n0,1,0.313\n1,2,0.050\n\
                vertex,depth\n1,0\n\
                file id,dfdb9e0e238c56ca319a57fe8c96a033\n";
    assert_eq!(
        masks.apply(text, &[(work, "<WORK>")]),
        "created graph g: 10 vertices, 44.0 KiB in <TIME> (<RATE>)\n\
         file,<WORK>/out.csv\n\
         vertex,rank\n1,<TIME>\n\
         iteration,active,time ms\n0,1,<TIME>\n1,2,<TIME>\n\
         vertex,depth\n1,0\n\
         file id,<FILE-ID>\n"
    );
}
