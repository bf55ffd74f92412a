//! HELP text, built from the grammar's statement list, the algorithm registry and the settings
//! table: `HELP;` lists statements, algorithms and settings; `HELP name;` explains one algorithm
//! (its declaration) or one statement; `HELP SET;` every setting with its current value.

use exec::algorithms::REGISTRY;
use grammar::Ident;
use planner::registry::{AlgorithmSpec, Operator, ParamKind, SourceRule};
use planner::settings::SETTINGS;
use planner::{PlanError, Settings};

const RUN_SYNTAX: &str = "\
RUN algorithm [FROM vertex] [ITER n] [key value ...] [AS name], ... ON graph
    [YIELD item, ...] [WHERE condition] [ORDER BY expr [ASC|DESC], ...]
    [LIMIT n] [OFFSET n] [YIELD|RETURN item, ...] [INTO 'file.parquet'|'file.arrow'|'file.csv' [FORMAT ...]]
  item: a column or an expression, optionally named: rank * 1000 AS score";

/// The HELP text.
pub fn text() -> String {
    let mut s = String::from(
        "Statements (end each with ;):\n\
         \x20 CREATE [OR REPLACE] GRAPH name FROM 'path' [FORMAT edgelist|graphalytics|csv|parquet|mtx]\n\
         \x20        [DIRECTED|UNDIRECTED] [WEIGHTED] [VERTICES 'path'] [STORAGE blockfile|memory|dm] [key value ...]\n\
         \x20        [DUPLICATES first|min|max|sum] [SELF LOOPS keep|drop] [ON ERROR stop|skip]\n\
         \x20        [KEYS integer|string] [LAYOUT auto|key|degree|locality]\n\
         \x20 DROP GRAPH [IF EXISTS] name\n\
         \x20 SHOW GRAPHS\n\
         \x20 DESCRIBE GRAPH name\n\
         \x20 VERIFY GRAPH name\n\
         \x20 REPAIR CATALOG       rebuild the catalog from the graph files, with a report\n",
    );
    for line in RUN_SYNTAX.lines() {
        s.push_str(&format!("  {line}\n"));
    }
    s.push_str(
        "  EXPLAIN RUN ...      the plan, without reading edge data\n\
         \x20 PROFILE RUN ...      run, then per-iteration statistics\n\
         \x20 SET name = value     SHOW SETTINGS\n\
         \x20 HELP [algorithm | RUN | WHERE | SET]\n\nAlgorithms:\n",
    );
    for a in REGISTRY.iter() {
        let cols = a
            .columns
            .iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
            .join(", ");
        s.push_str(&format!(
            "  {:<44} → ({cols})\n      {}\n",
            a.usage(),
            a.summary
        ));
    }
    s.push_str("\nSettings:\n");
    for (name, meaning) in SETTINGS {
        s.push_str(&format!("  {name:<18} {meaning}\n"));
    }
    s
}

/// `HELP topic`: an algorithm, RUN, WHERE or SET; anything else gets a suggestion.
pub fn topic(topic: &Ident, settings: &Settings) -> Result<String, PlanError> {
    if let Some(spec) = REGISTRY.get(&topic.name) {
        return Ok(algorithm(spec));
    }
    match topic.name.to_ascii_lowercase().as_str() {
        "set" | "settings" => Ok(set(settings)),
        "run" | "explain" | "profile" | "select" => Ok(run()),
        "where" | "order" | "yield" | "return" | "limit" | "offset" => Ok(run()),
        _ => {
            let topics = REGISTRY
                .names()
                .chain(["RUN", "WHERE", "SET"])
                .collect::<Vec<_>>();
            Err(PlanError::new(
                topic.pos,
                format!(
                    "no help on `{}`{}; HELP knows the algorithms ({}), RUN, WHERE and SET",
                    topic.name,
                    planner::suggest::did_you_mean(&topic.name, topics.iter().copied()),
                    REGISTRY.names().collect::<Vec<_>>().join(", ")
                ),
            ))
        }
    }
}

/// One algorithm from its declaration.
fn algorithm(a: &AlgorithmSpec) -> String {
    let mut s = format!("{} — {}\n\n  {}\n", a.name, a.summary, a.usage());
    if !a.semantics.is_empty() {
        s.push_str(&format!("\n{}\n", wrap(a.semantics, 96, "  ")));
    }
    s.push_str("\nFROM:\n");
    s.push_str(match a.source {
        SourceRule::Required => "  required: the input id of the start vertex\n",
        SourceRule::Optional => "  optional: the input id of the start vertex\n",
        SourceRule::NotAccepted => "  not accepted\n",
    });
    s.push_str("\nParameters:\n");
    if a.params.is_empty() {
        s.push_str("  none\n");
    }
    for p in a.params {
        let (range, default) = match p.kind {
            ParamKind::Int { min, max, default } => (format!("{min}..={max}"), default.to_string()),
            ParamKind::Float { min, max, default } => {
                (format!("{min}..={max}"), default.to_string())
            }
        };
        let iter = if Some(p.name) == a.iter_param {
            " (also ITER n)"
        } else {
            ""
        };
        s.push_str(&format!(
            "  {:<10} default {default}, range {range}{iter}: {}\n",
            p.name, p.doc
        ));
    }
    s.push_str("\nOutput columns:\n");
    for c in a.columns {
        s.push_str(&format!(
            "  {:<12} {}{}\n",
            c.name,
            c.ty.help_name(),
            if c.nullable {
                ", null when not reached"
            } else {
                ""
            }
        ));
    }
    if !a.summaries.is_empty() {
        s.push_str(
            "\nReported (RUN's status line, PROFILE, Parquet/Arrow metadata frontier.NAME.KEY):\n",
        );
        for r in a.summaries {
            s.push_str(&format!("  {:<12} {}, {}\n", r.name, r.ty.name(), r.doc));
        }
    }
    s.push_str(&format!(
        "\nWeights: {}\n",
        if a.uses_weights {
            "read (1 per edge on unweighted graphs)"
        } else {
            "ignored"
        }
    ));
    s.push_str(&format!(
        "\nCompute nodes: {}\n",
        if a.splits {
            "split over several (SET compute_nodes) on a DM graph"
        } else {
            "one (refused while SET compute_nodes names workers)"
        }
    ));
    if a.splits {
        s.push_str(&format!("  {}\n", hub_rescheduling(a)));
    }
    if !a.example.is_empty() {
        s.push_str(&format!("\nExample:\n  {}\n", a.example));
    }
    s
}

/// What run-time hub re-scheduling does for a split algorithm: push rounds (EdgeMap, the
/// edge reduce's push) deal a straggling member's hubs out; the other operators keep every
/// vertex's list with its owner.
fn hub_rescheduling(a: &AlgorithmSpec) -> &'static str {
    let pushes = a.program.iter().any(|step| {
        matches!(
            step.op,
            Some(Operator::EdgeMap) | Some(Operator::EdgeReduceSum)
        )
    });
    if pushes {
        "hubs (degree > 1024) of a compute node that examined over 1.2x the mean edges are dealt out across all of them from the next iteration (PROFILE: rescheduled)"
    } else {
        "each vertex's list is processed whole by the compute node that owns it: hubs are not dealt out"
    }
}

/// RUN's clauses.
fn run() -> String {
    let mut s = String::new();
    for line in RUN_SYNTAX.lines() {
        s.push_str(&format!("{line}\n"));
    }
    s.push_str(
        "\n\
Several algorithms run one after another on the graph loaded once, and their results are joined
by vertex: one `vertex` column, then each algorithm's columns in the order written. A column name
two algorithms share is qualified by the algorithm (`wcc.component`) or by the call's AS name.
Algorithms with one row per walk step (randomwalk) run alone.

WHERE keeps the rows whose condition is true: comparisons (= <> != < <= > >=), AND, OR, NOT,
IS [NOT] NULL, [NOT] IN (a, b, ...), and + - * / on columns and numbers (/ always divides in
floating point). A comparison with NULL is NULL, and such rows are dropped.
Then ORDER BY (several keys, nulls last; with LIMIT a bounded heap, not a full sort), OFFSET,
LIMIT, and YIELD (or RETURN) returns the listed items in that order. An ORDER BY key or a YIELD
item may be an expression with WHERE's operators (ORDER BY rank * out_degree DESC); a YIELD
expression is named by its AS name, else by its text (`rank * 1000`), and ORDER BY may use a
YIELD item's AS name.

Examples:
  RUN pagerank ITER 20, wcc, degree ON g WHERE component = 0 ORDER BY rank DESC LIMIT 10;
  RUN pagerank, degree ON g ORDER BY rank * out_degree DESC LIMIT 5
      YIELD vertex, rank * 1000 AS score;
",
    );
    s
}

/// Every setting, its current value and meaning.
fn set(settings: &Settings) -> String {
    let mut s = String::from(
        "SET name = value   (sizes as 1GB, 512MiB or '64KiB'; KB = 1000 bytes, KiB = 1024)\n\n",
    );
    for (name, value, meaning) in settings.rows() {
        s.push_str(&format!("  {name:<18} {value:<12} {meaning}\n"));
    }
    s
}

/// `text` wrapped at `width` columns, each line starting with `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut lines = Vec::new();
    let mut line = String::from(indent);
    for word in text.split_whitespace() {
        if line.len() > indent.len() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::replace(&mut line, String::from(indent)));
        }
        if line.len() > indent.len() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_says_which_algorithms_split_over_compute_nodes() {
        let spec = |name| REGISTRY.get(name).expect("a registered algorithm");
        assert!(algorithm(spec("bfs")).contains("Compute nodes: split over several"));
        assert!(algorithm(spec("kcore")).contains("Compute nodes: one (refused"));
        assert!(algorithm(spec("pagerank")).contains("are dealt out across all of them"));
        assert!(algorithm(spec("lcc")).contains("hubs are not dealt out"));
        assert!(algorithm(spec("cdlp")).contains("hubs are not dealt out"));
    }
}
