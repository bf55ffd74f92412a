//! Turns a pest failure into a message in words.
//!
//! pest says "at byte 17, expected one of [graph_name]". A user wants "expected a graph name after
//! ON, found `;`". The grammar is written so that the rule names pest reports are meaningful slots
//! (see the header of `frontier.pest`); this module names each slot, takes the context ("after ON")
//! and the offending token ("found `;`") from the [`scan`](crate::scan) tokens around the failure,
//! and handles the few cases that read better as a sentence of their own (a missing `;`, an
//! unknown statement, an unterminated string, a parameter without a value).

use crate::parser::Rule;
use crate::scan::{Tok, TokKind};
use crate::KEYWORDS;

/// The keywords a statement can start with, in the order the messages list them.
pub(crate) const STATEMENT_KEYWORDS: &[&str] = &[
    "CREATE", "DROP", "SHOW", "DESCRIBE", "VERIFY", "REPAIR", "RUN", "EXPLAIN", "PROFILE", "SET",
    "HELP",
];

/// A syntax error in words and the byte offset it points at.
pub(crate) struct Worded {
    pub offset: usize,
    pub message: String,
}

/// What a rule stands for in a message ("expected {this}"), or `None` for rules that never need
/// naming on their own.
fn describe(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::graph_name => "a graph name",
        Rule::algorithm => "an algorithm name",
        Rule::setting => "a setting name",
        Rule::param_key => "a parameter name",
        Rule::column => "a column name",
        Rule::alias_name => "a name",
        Rule::help_topic => "an algorithm or statement name",
        Rule::condition
        | Rule::conjunction
        | Rule::negation
        | Rule::predicate
        | Rule::operand
        | Rule::factor
        | Rule::sum
        | Rule::product => "a column, number or string",
        Rule::compare_op => "a comparison (=, <>, <, <=, >, >=)",
        Rule::add_op => "+ or -",
        Rule::mul_op => "* or /",
        Rule::open => "`(`",
        Rule::close => "`)`",
        Rule::comma => "`,`",
        Rule::size => "a size",
        Rule::kw_where => "WHERE",
        Rule::kw_yield => "YIELD",
        Rule::kw_return => "RETURN",
        Rule::kw_offset => "OFFSET",
        Rule::kw_as => "AS",
        Rule::kw_and => "AND",
        Rule::kw_not => "NOT",
        Rule::kw_is => "IS",
        Rule::kw_in => "IN",
        Rule::kw_null => "NULL",
        Rule::path => "a quoted path",
        Rule::vertex => "a vertex id",
        Rule::number | Rule::count => "a number",
        Rule::param_value | Rule::set_value => "a value",
        Rule::input_format => "a format (edgelist, graphalytics, csv, parquet or mtx)",
        Rule::output_format => "a format (parquet, arrow, csv or graphalytics)",
        Rule::storage_kind => "a storage kind (blockfile, memory or dm)",
        Rule::eq => "`=`",
        Rule::semi => "`;`",
        Rule::direction => "ASC or DESC",
        Rule::kw_create => "CREATE",
        Rule::kw_or => "OR REPLACE",
        Rule::kw_replace => "REPLACE",
        Rule::kw_graph => "GRAPH",
        Rule::kw_graphs => "GRAPHS",
        Rule::kw_from => "FROM",
        Rule::kw_format => "FORMAT",
        Rule::kw_directed => "DIRECTED",
        Rule::kw_undirected => "UNDIRECTED",
        Rule::kw_weighted => "WEIGHTED",
        Rule::kw_vertices => "VERTICES",
        Rule::kw_storage => "STORAGE",
        Rule::kw_drop => "DROP",
        Rule::kw_if => "IF EXISTS",
        Rule::kw_exists => "EXISTS",
        Rule::kw_show => "SHOW",
        Rule::kw_describe => "DESCRIBE",
        Rule::kw_verify => "VERIFY",
        Rule::kw_settings => "SETTINGS",
        Rule::kw_help => "HELP",
        Rule::kw_run => "RUN",
        Rule::kw_on => "ON",
        Rule::kw_iter => "ITER",
        Rule::kw_order => "ORDER BY",
        Rule::kw_by => "BY",
        Rule::kw_asc => "ASC",
        Rule::kw_desc => "DESC",
        Rule::kw_limit => "LIMIT",
        Rule::kw_into => "INTO",
        Rule::kw_explain => "EXPLAIN",
        Rule::kw_profile => "PROFILE",
        Rule::kw_set => "SET",
        Rule::kw_repair => "REPAIR",
        Rule::kw_catalog => "CATALOG",
        Rule::kw_self => "SELF LOOPS",
        Rule::policy => "a policy (SELF LOOPS keep|drop, ON ERROR stop|skip)",
        Rule::kw_loops => "LOOPS",
        Rule::kw_error => "ERROR",
        _ => return None,
    })
}

/// Slots that take a name: a keyword or a quoted string found there gets a hint.
fn is_name_slot(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::graph_name
            | Rule::algorithm
            | Rule::setting
            | Rule::param_key
            | Rule::column
            | Rule::alias_name
    )
}

fn is_keyword(word: &str) -> bool {
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word))
}

/// A token as quoted in a message: at most 40 characters, control characters escaped.
fn quote(text: &str) -> String {
    let mut shown = String::new();
    for c in text.chars().take(40) {
        if c.is_control() {
            shown.extend(c.escape_debug());
        } else {
            shown.push(c);
        }
    }
    if text.chars().count() > 40 {
        shown.push('…');
    }
    // A backtick inside would end the quoting early.
    if shown.contains('`') {
        format!("'{shown}'")
    } else {
        format!("`{shown}`")
    }
}

/// The token before the failure, as the message's "after ...".
fn context(text: &str, prev: Option<&Tok>) -> Option<String> {
    let tok = prev?;
    let t = tok.text(text);
    Some(match tok.kind {
        TokKind::Word if is_keyword(t) => match t.to_ascii_uppercase().as_str() {
            "BY" => "ORDER BY".to_string(),
            "REPLACE" => "OR REPLACE".to_string(),
            "EXISTS" => "IF EXISTS".to_string(),
            upper => upper.to_string(),
        },
        _ => quote(t),
    })
}

/// The token at the failure, as the message's "found ...".
fn found(text: &str, tok: &Tok) -> String {
    let t = tok.text(text);
    match tok.kind {
        TokKind::Word if is_keyword(t) => format!("the keyword {}", t.to_ascii_uppercase()),
        _ => quote(t),
    }
}

/// Whether the statement the failure is in is a RUN (possibly under EXPLAIN or PROFILE).
fn in_run(text: &str, tokens: &[Tok], at: usize) -> bool {
    let start = tokens
        .iter()
        .rposition(|t| t.end <= at && t.is_semi(text))
        .map_or(0, |i| i + 1);
    tokens.get(start).is_some_and(|t| {
        ["RUN", "EXPLAIN", "PROFILE"]
            .iter()
            .any(|k| k.eq_ignore_ascii_case(t.text(text)))
    })
}

/// The clause keywords of RUN after the graph name, for "did you mean".
const RUN_CLAUSES: &[&str] = &[
    "FROM", "ITER", "WHERE", "ORDER", "LIMIT", "OFFSET", "YIELD", "RETURN", "INTO", "FORMAT",
];

/// The order RUN's clauses come in, for messages.
const RUN_ORDER: &str = "the clauses of RUN come in this order: FROM, ITER and parameters, then \
    YIELD, WHERE, ORDER BY, LIMIT, OFFSET, YIELD (or RETURN), INTO ... FORMAT, each at most once";

/// `" (did you mean ORDER?)"` when `word` is a plausible typo of one of `keywords`, else empty.
fn keyword_hint(word: &str, keywords: &[&str]) -> String {
    match base::suggest::nearest(
        word,
        keywords.iter().map(|k| k.split(' ').next().unwrap_or(k)),
    ) {
        Some(k) if !k.eq_ignore_ascii_case(word) => format!(" (did you mean {k}?)"),
        _ => String::new(),
    }
}

/// Whether the statement holding byte `at` has its ON before `at`.
fn on_seen(text: &str, tokens: &[Tok], at: usize) -> bool {
    let start = tokens
        .iter()
        .rposition(|t| t.end <= at && t.is_semi(text))
        .map_or(0, |i| i + 1);
    tokens[start..]
        .iter()
        .take_while(|t| t.end <= at)
        .any(|t| t.kind == TokKind::Word && t.text(text).eq_ignore_ascii_case("ON"))
}

/// Words a list as "A", "A or B", "A, B or C".
fn one_of(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Words the failure of pest at byte `at`, where it tried `positives`.
pub(crate) fn syntax_error(text: &str, tokens: &[Tok], at: usize, positives: &[Rule]) -> Worded {
    // An unterminated string swallows the rest of the text, so whatever pest says about the
    // failure, the string is the real problem.
    if let Some(open) = tokens
        .iter()
        .find(|t| t.kind == TokKind::Str { terminated: false } && t.start <= at)
    {
        let p = crate::location::LineIndex::new(text).pos(open.start);
        return Worded {
            offset: open.start,
            message: format!(
                "unterminated string (started at line {}, column {})",
                p.line, p.col
            ),
        };
    }

    // The parser may stop inside what the scanner saw as one token (`1.5.3` stops at `.3`): then
    // only the part from the failure on is "found".
    let found_tok = tokens.iter().find(|t| t.end > at).map(|t| Tok {
        start: t.start.max(at),
        ..*t
    });
    let found_tok = found_tok.as_ref();
    let prev = tokens.iter().rev().find(|t| t.end <= at);
    // A missing token at the end of the text is blamed just after the last token, on its line.
    let eoi_offset = prev.map_or(at, |p| p.end);
    let offset = if found_tok.is_some() { at } else { eoi_offset };
    let found_text = found_tok.map(|t| t.text(text)).unwrap_or("");
    let after = context(text, prev);
    let after_str = after.as_deref().unwrap_or("");
    let has = |r: Rule| positives.contains(&r);
    let only = |r: Rule| positives.iter().all(|&p| p == r) && !positives.is_empty();
    let message = |offset: usize, message: String| Worded { offset, message };

    // At the very start of the text pest folds everything into `script`; elsewhere a statement
    // start shows as `statement` (and `EOI`).
    if has(Rule::statement) || has(Rule::script) || has(Rule::EOI) {
        let list = STATEMENT_KEYWORDS.join(", ");
        return match found_tok {
            Some(t) if t.kind == TokKind::Word => message(
                offset,
                format!(
                    "unknown statement {}{}: expected one of {list}",
                    quote(found_text),
                    keyword_hint(found_text, STATEMENT_KEYWORDS)
                ),
            ),
            Some(t) if t.is_semi(text) => message(
                offset,
                format!("empty statement: `;` with nothing before it (expected one of {list})"),
            ),
            Some(_) => message(
                offset,
                format!(
                    "unexpected {}: expected a statement, one of {list}",
                    quote(found_text)
                ),
            ),
            None => message(offset, format!("expected a statement, one of {list}")),
        };
    }

    if has(Rule::semi) {
        const END: &str = "expected `;` at the end of the statement";
        return match found_tok {
            None => message(eoi_offset, END.to_string()),
            Some(t)
                if t.kind == TokKind::Word
                    && STATEMENT_KEYWORDS
                        .iter()
                        .any(|k| k.eq_ignore_ascii_case(found_text)) =>
            {
                // Most likely the `;` of the previous line was forgotten: point there.
                message(
                    eoi_offset,
                    format!("{END} (before {})", found_text.to_ascii_uppercase()),
                )
            }
            Some(t) => {
                let clause = RUN_CLAUSES
                    .iter()
                    .any(|k| k.eq_ignore_ascii_case(found_text));
                let run = t.kind == TokKind::Word && in_run(text, tokens, at);
                let hint = if clause && run {
                    format!(" ({RUN_ORDER})")
                } else if run && t.kind == TokKind::Word {
                    keyword_hint(found_text, RUN_CLAUSES)
                } else {
                    String::new()
                };
                message(
                    offset,
                    format!("unexpected {}: {END}{hint}", quote(found_text)),
                )
            }
        };
    }

    let suffix = match found_tok {
        None => String::new(),
        Some(t) => {
            let mut s = format!(", found {}", found(text, t));
            let name_slot = positives.iter().any(|&r| is_name_slot(r));
            match t.kind {
                TokKind::Word if name_slot && is_keyword(found_text) => {
                    s.push_str(" (a reserved keyword cannot be used as a name)")
                }
                TokKind::Word
                    if is_keyword(found_text)
                        && (has(Rule::param_value)
                            || has(Rule::set_value)
                            || has(Rule::vertex)) =>
                {
                    s.push_str(&format!(
                        " (a reserved keyword cannot be a bare-word value; quote it: '{}')",
                        found_text.to_ascii_lowercase()
                    ))
                }
                TokKind::Str { .. } if name_slot => {
                    s.push_str(" (names are written without quotes)")
                }
                TokKind::Word | TokKind::Number if has(Rule::path) => {
                    s.push_str(" (paths are written in single quotes: 'like/this')")
                }
                _ => {}
            }
            s
        }
    };

    if only(Rule::param_value) {
        // `ODER BY rank` reads as a parameter `ODER` missing its value: the word before is the
        // real mistake when it is close to a clause keyword.
        if let Some(p) = prev.filter(|p| p.kind == TokKind::Word && in_run(text, tokens, at)) {
            // Before ON, a lone word after the algorithm is most likely a graph name without ON.
            if !on_seen(text, tokens, at) {
                let algo = tokens.iter().rev().find(|t| t.end <= p.start);
                if let Some(algo) = algo.filter(|a| a.kind == TokKind::Word) {
                    return message(
                        p.start,
                        format!(
                            "expected ON after the algorithm name {}, found {}",
                            quote(algo.text(text)),
                            quote(p.text(text))
                        ),
                    );
                }
            }
            let word = p.text(text);
            if let Some(k) = base::suggest::nearest(word, RUN_CLAUSES.iter().copied()) {
                return message(
                    p.start,
                    format!(
                        "unknown clause {}: did you mean {k}? ({RUN_ORDER})",
                        quote(word)
                    ),
                );
            }
        }
        let hint = if found_text == "=" {
            " (parameters are written `name value`, without `=`)"
        } else {
            ""
        };
        return message(
            offset,
            format!("expected a value after parameter {after_str}{suffix}{hint}"),
        );
    }
    if only(Rule::kw_on) {
        return message(
            offset,
            format!("expected ON after the algorithm name {after_str}{suffix}"),
        );
    }
    if only(Rule::eq) {
        return message(
            offset,
            format!(
                "expected `=` after the setting name {after_str}{suffix} (write SET {} = value)",
                prev.map_or("name", |p| p.text(text))
            ),
        );
    }
    if only(Rule::kw_from) {
        return message(
            offset,
            format!("expected FROM 'path' after the graph name {after_str}{suffix}"),
        );
    }

    let mut expected: Vec<&str> = Vec::new();
    for d in positives.iter().filter_map(|&r| describe(r)) {
        if !expected.contains(&d) {
            expected.push(d);
        }
    }
    let what = if expected.is_empty() {
        "something else".to_string()
    } else {
        one_of(&expected)
    };
    let after = after.map(|a| format!(" after {a}")).unwrap_or_default();
    // A misspelt keyword where a keyword was expected: suggest the nearest one.
    let keywords: Vec<&str> = positives
        .iter()
        .filter(|r| format!("{r:?}").starts_with("kw_"))
        .filter_map(|&r| describe(r))
        .collect();
    let typo = match found_tok {
        Some(t) if t.kind == TokKind::Word && !is_keyword(found_text) => {
            keyword_hint(found_text, &keywords)
        }
        _ => String::new(),
    };
    message(offset, format!("expected {what}{after}{suffix}{typo}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_as_english() {
        assert_eq!(one_of(&["A"]), "A");
        assert_eq!(one_of(&["A", "B"]), "A or B");
        assert_eq!(one_of(&["A", "B", "C"]), "A, B or C");
    }

    #[test]
    fn quoting_is_bounded_and_escaped() {
        assert_eq!(quote("a\0b"), "`a\\0b`");
        assert_eq!(quote(&"x".repeat(50)).chars().count(), 43);
        assert_eq!(quote("a`b"), "'a`b'");
    }
}
