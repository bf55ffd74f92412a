//! The interactive REPL: multi-line statements until `;`, history in the data directory, tab
//! completion of keywords, algorithm names, settings and graph names, Ctrl-C to cancel the
//! running statement (or the line being typed), Ctrl-D to leave.

use std::borrow::Cow;
use std::io::Write;

use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};

use crate::session::Session;

/// Completion words: refreshed before each prompt so new graphs complete at once.
struct FrontierHelper {
    words: Vec<String>,
}

impl Completer for FrontierHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map(|i| i + 1)
            .unwrap_or(0);
        let prefix = &before[start..];
        if prefix.is_empty() {
            return Ok((start, Vec::new()));
        }
        let upper = prefix
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_uppercase());
        let mut seen = std::collections::BTreeSet::new();
        for w in &self.words {
            if w.len() >= prefix.len() && w[..prefix.len()].eq_ignore_ascii_case(prefix) {
                let is_keyword = grammar::KEYWORDS.contains(&w.to_ascii_uppercase().as_str())
                    && w.chars().all(|c| !c.is_ascii_lowercase());
                let text = if is_keyword && !upper {
                    w.to_ascii_lowercase()
                } else {
                    w.clone()
                };
                seen.insert(text);
            }
        }
        let pairs = seen
            .into_iter()
            .map(|w| Pair {
                display: w.clone(),
                replacement: w,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for FrontierHelper {
    type Hint = String;
}

impl Highlighter for FrontierHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}

impl Validator for FrontierHelper {}
impl Helper for FrontierHelper {}

fn completion_words(session: &Session) -> Vec<String> {
    let mut words: Vec<String> = grammar::KEYWORDS.iter().map(|k| k.to_string()).collect();
    words.extend(exec::algorithms::REGISTRY.names().map(String::from));
    words.extend(
        planner::settings::SETTINGS
            .iter()
            .map(|(n, _)| n.to_string()),
    );
    for col in exec::algorithms::REGISTRY.iter().flat_map(|a| a.columns) {
        words.push(col.name.to_string());
    }
    if let Ok(graphs) = session.engine.catalog.list() {
        words.extend(graphs.into_iter().map(|g| g.name));
    }
    words
}

/// Runs the REPL until Ctrl-D. Returns the process exit code.
pub fn run_repl(session: &mut Session) -> i32 {
    let mut editor: Editor<FrontierHelper, DefaultHistory> = match Editor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot start the line editor: {e}");
            return 1;
        }
    };
    let history = session.engine.data_dir().join("history");
    let _ = editor.load_history(&history);
    // A read-only session changes nothing in the data directory, its history included.
    let keep_history = session.engine.catalog.read_only().is_none();
    let save = |editor: &mut Editor<FrontierHelper, DefaultHistory>| {
        if keep_history {
            let _ = editor.save_history(&history);
        }
    };
    println!(
        "frontier {} — type HELP; for the statements, Ctrl-D to leave.",
        env!("CARGO_PKG_VERSION")
    );
    let mut buffer = String::new();
    loop {
        editor.set_helper(Some(FrontierHelper {
            words: completion_words(session),
        }));
        let prompt = if buffer.is_empty() {
            "frontier> "
        } else {
            "      ... "
        };
        match editor.readline(prompt) {
            Ok(line) => {
                if !buffer.is_empty() {
                    buffer.push('\n');
                }
                buffer.push_str(&line);
                let trimmed = buffer.trim();
                let bare_help = trimmed.eq_ignore_ascii_case("help")
                    || trimmed.eq_ignore_ascii_case("exit")
                    || trimmed.eq_ignore_ascii_case("quit");
                if !grammar::statement_complete(&buffer) && !bare_help {
                    if trimmed.is_empty() {
                        buffer.clear();
                    }
                    continue;
                }
                let text = std::mem::take(&mut buffer);
                let _ = editor.add_history_entry(text.as_str());
                save(&mut editor);
                if bare_help {
                    match text.trim().to_ascii_lowercase().as_str() {
                        "help" => print!("{}", engine::help::text()),
                        _ => break,
                    }
                    continue;
                }
                run_entry(session, &text);
            }
            Err(ReadlineError::Interrupted) => {
                if !buffer.is_empty() {
                    println!("(cancelled)");
                }
                buffer.clear();
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        }
    }
    save(&mut editor);
    0
}

fn run_entry(session: &mut Session, text: &str) {
    let statements = match grammar::parse(text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{}", engine::StatementError::from(e).render("input"));
            return;
        }
    };
    let stdout = std::io::stdout();
    for stmt in &statements {
        let mut out = stdout.lock();
        let result = session.execute(stmt, &mut out);
        let _ = out.flush();
        drop(out);
        if let Err(e) = result {
            if e.cancelled {
                eprintln!("cancelled");
            } else {
                eprintln!("{}", e.render("input"));
            }
            return;
        }
    }
}
