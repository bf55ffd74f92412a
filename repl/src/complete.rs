//! Tab completion by context: what may stand where the cursor is, judged from the words before
//! it. After RUN (or a `,` among a RUN's algorithms) the algorithms; after ON and GRAPH the
//! graphs; inside a quoted path after FROM, VERTICES or INTO the files; after an algorithm its
//! parameters and the clause words; after WHERE, ORDER BY, YIELD, RETURN, AND, OR, NOT or a `,`
//! in those clauses the columns of the algorithms in the statement; after SET the settings and
//! after HELP the topics. Elsewhere every word.

use std::path::Path;

use exec::algorithms::REGISTRY;
use planner::registry::SourceRule;

/// What completion may offer besides the fixed words: the catalog's graphs.
pub struct Context<'a> {
    pub graphs: &'a [String],
}

/// The start of the word being completed in `before` (the line up to the cursor) and the
/// candidates for it, sorted, without duplicates.
pub fn complete(before: &str, ctx: &Context<'_>) -> (usize, Vec<String>) {
    if let Some(open) = open_quote(before) {
        return (open + 1, paths(&before[open + 1..]));
    }
    let start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |i| i + 1);
    let prefix = &before[start..];
    // The statement being typed: the text after the last `;`.
    let statement = before[..start].rsplit(';').next().unwrap_or("");
    let words = tokens(statement);
    let candidates = candidates(&words, ctx);
    // Keywords follow the case of what is typed; with nothing typed yet, upper case.
    let upper = prefix.chars().next().is_none_or(|c| c.is_ascii_uppercase());
    let mut out: Vec<String> = candidates
        .into_iter()
        .filter(|w| w.len() >= prefix.len() && w[..prefix.len()].eq_ignore_ascii_case(prefix))
        .map(|w| {
            let keyword = w.chars().all(|c| !c.is_ascii_lowercase());
            if keyword && !upper {
                w.to_ascii_lowercase()
            } else {
                w
            }
        })
        .collect();
    out.sort();
    out.dedup();
    (start, out)
}

/// The byte offset of the quote that opens an unfinished string, if the cursor is inside one.
fn open_quote(before: &str) -> Option<usize> {
    let mut open = None;
    for (i, c) in before.char_indices() {
        if c == '\'' {
            open = if open.is_some() { None } else { Some(i) };
        }
    }
    open
}

/// Words and commas of a statement, upper-cased keywords left as written.
fn tokens(statement: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_string = false;
    for c in statement.chars() {
        if c == '\'' {
            in_string = !in_string;
            if !in_string {
                out.push("'…'".to_string());
            }
            continue;
        }
        if in_string {
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            word.push(c);
        } else {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

fn is(word: &str, keyword: &str) -> bool {
    word.eq_ignore_ascii_case(keyword)
}

/// The words that may come after `words`.
fn candidates(words: &[String], ctx: &Context<'_>) -> Vec<String> {
    let last = words.last().map(String::as_str).unwrap_or("");
    let first = words.first().map(String::as_str).unwrap_or("");
    let in_run = words.iter().take(2).any(|w| is(w, "RUN"));
    let on_at = words.iter().position(|w| is(w, "ON"));
    let algorithms: Vec<String> = REGISTRY.names().map(String::from).collect();
    let graphs: Vec<String> = ctx.graphs.to_vec();
    if words.is_empty() {
        return grammar_statements();
    }
    if is(last, "RUN") || (in_run && on_at.is_none() && last == ",") {
        return algorithms;
    }
    if is(last, "ON") && in_run || is(last, "GRAPH") && !is(first, "CREATE") {
        return graphs;
    }
    if is(last, "SET") {
        return planner::settings::SETTINGS
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
    }
    if is(last, "HELP") {
        let mut topics = algorithms;
        topics.extend(["RUN", "WHERE", "SET"].map(String::from));
        return topics;
    }
    if in_run {
        let called: Vec<_> = words
            .iter()
            .take(on_at.unwrap_or(words.len()))
            .filter_map(|w| REGISTRY.get(w))
            .collect();
        let column_slot = words
            .iter()
            .rev()
            .take_while(|w| !is(w, "LIMIT") && !is(w, "OFFSET") && !is(w, "INTO"))
            .any(|w| ["WHERE", "BY", "YIELD", "RETURN"].iter().any(|k| is(w, k)));
        let after_operand = [
            "WHERE", "BY", "YIELD", "RETURN", "AND", "OR", "NOT", ",", "(", "=",
        ]
        .iter()
        .any(|k| is(last, k))
            || ["<", ">", "+", "-", "*", "/"].contains(&last);
        if on_at.is_some() && column_slot && after_operand {
            let mut columns: Vec<String> = Vec::new();
            for spec in &called {
                columns.extend(spec.columns.iter().map(|c| c.name.to_string()));
                if called.len() > 1 {
                    columns.extend(
                        spec.columns
                            .iter()
                            .map(|c| format!("{}.{}", spec.name, c.name)),
                    );
                }
            }
            return columns;
        }
        if on_at.is_none() {
            // After an algorithm (or its clauses): its parameters, FROM, ITER, AS, ON.
            if let Some(spec) = words.iter().rev().find_map(|w| REGISTRY.get(w)) {
                let mut out: Vec<String> = spec.params.iter().map(|p| p.name.to_string()).collect();
                if spec.source != SourceRule::NotAccepted {
                    out.push("FROM".into());
                }
                if spec.iter_param.is_some() {
                    out.push("ITER".into());
                }
                out.extend(["AS", "ON"].map(String::from));
                return out;
            }
        } else {
            // Parameters may follow the graph name only before the first clause word.
            let clause_seen = on_at.is_some_and(|on| {
                words[on..].iter().any(|w| {
                    [
                        "WHERE", "ORDER", "LIMIT", "OFFSET", "YIELD", "RETURN", "INTO",
                    ]
                    .iter()
                    .any(|k| is(w, k))
                })
            });
            let mut out: Vec<String> = if clause_seen {
                Vec::new()
            } else {
                called
                    .iter()
                    .flat_map(|s| s.params.iter().map(|p| p.name.to_string()))
                    .collect()
            };
            out.extend(
                [
                    "WHERE", "ORDER", "BY", "ASC", "DESC", "LIMIT", "OFFSET", "YIELD", "RETURN",
                    "INTO", "FORMAT", "AND", "OR", "NOT", "IS", "NULL", "IN",
                ]
                .map(String::from),
            );
            return out;
        }
    }
    // Anything: keywords, algorithms, settings, columns, graphs.
    let mut out: Vec<String> = grammar::KEYWORDS.iter().map(|k| k.to_string()).collect();
    out.extend(algorithms);
    out.extend(
        planner::settings::SETTINGS
            .iter()
            .map(|(n, _)| n.to_string()),
    );
    out.extend(
        REGISTRY
            .iter()
            .flat_map(|a| a.columns)
            .map(|c| c.name.to_string()),
    );
    out.extend(graphs);
    out
}

/// The keywords a statement starts with.
fn grammar_statements() -> Vec<String> {
    [
        "CREATE", "DROP", "SHOW", "DESCRIBE", "VERIFY", "REPAIR", "RUN", "EXPLAIN", "PROFILE",
        "SET", "HELP",
    ]
    .map(String::from)
    .to_vec()
}

/// Files and folders whose path starts with `typed` (folders end with `/`).
fn paths(typed: &str) -> Vec<String> {
    let (dir, name) = match typed.rfind('/') {
        Some(i) => (&typed[..=i], &typed[i + 1..]),
        None => ("", typed),
    };
    let Ok(entries) = std::fs::read_dir(if dir.is_empty() {
        Path::new(".")
    } else {
        Path::new(dir)
    }) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let file = e.file_name().into_string().ok()?;
            if !file.starts_with(name) || (file.starts_with('.') && !name.starts_with('.')) {
                return None;
            }
            let slash = if e.path().is_dir() { "/" } else { "" };
            Some(format!("{dir}{file}{slash}"))
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered(line: &str) -> Vec<String> {
        let graphs = vec!["web".to_string(), "roads".to_string()];
        complete(line, &Context { graphs: &graphs }).1
    }

    #[test]
    fn after_run_the_algorithms_after_on_the_graphs() {
        assert_eq!(offered("RUN pa"), ["pagerank"]);
        assert!(offered("RUN ").contains(&"wcc".to_string()));
        assert!(!offered("RUN ").contains(&"web".to_string()));
        assert_eq!(offered("RUN pagerank, w"), ["wcc"]);
        assert_eq!(offered("RUN pagerank ON "), ["roads", "web"]);
        assert_eq!(offered("describe graph w"), ["web"]);
    }

    #[test]
    fn after_an_algorithm_its_parameters() {
        let got = offered("RUN pagerank ");
        for w in ["damping", "iter", "ITER", "AS", "ON"] {
            assert!(got.contains(&w.to_string()), "{w} in {got:?}");
        }
        // pagerank takes an optional FROM (personalised), wcc none.
        assert!(got.contains(&"FROM".to_string()), "{got:?}");
        assert!(!offered("RUN wcc ").contains(&"FROM".to_string()));
        assert_eq!(offered("RUN pagerank da"), ["damping"]);
        assert!(offered("RUN bfs ").contains(&"FROM".to_string()));
    }

    #[test]
    fn in_where_order_by_and_yield_the_columns_of_the_statement() {
        assert_eq!(offered("RUN pagerank, wcc ON web WHERE c"), ["component"]);
        assert_eq!(offered("RUN pagerank ON web ORDER BY r"), ["rank"]);
        assert_eq!(
            offered("RUN pagerank ON web WHERE rank > 1 AND v"),
            ["vertex"]
        );
        assert_eq!(
            offered("RUN pagerank, wcc ON web YIELD vertex, wcc."),
            ["wcc.component", "wcc.vertex"]
        );
        assert_eq!(offered("run pagerank on web order by rank d"), ["desc"]);
        // Inside an expression of ORDER BY or YIELD, after an operator.
        assert_eq!(
            offered("RUN pagerank, degree ON web ORDER BY rank * o"),
            ["out_degree"]
        );
        assert_eq!(
            offered("RUN pagerank, degree ON web YIELD vertex, (rank + i"),
            ["in_degree"]
        );
    }

    #[test]
    fn inside_a_quoted_path_the_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("edges.el"), "").unwrap();
        std::fs::create_dir(dir.path().join("edges-dir")).unwrap();
        let typed = format!("CREATE GRAPH g FROM '{}/edg", dir.path().display());
        let (start, got) = complete(&typed, &Context { graphs: &[] });
        assert_eq!(start, typed.find('\'').unwrap() + 1);
        let base = dir.path().display();
        assert_eq!(
            got,
            [format!("{base}/edges-dir/"), format!("{base}/edges.el")]
        );
    }

    #[test]
    fn set_and_help_complete_their_topics() {
        assert_eq!(offered("SET memory_l"), ["memory_limit"]);
        assert_eq!(offered("HELP pag"), ["pagerank"]);
        assert!(offered("").contains(&"RUN".to_string()));
    }
}
