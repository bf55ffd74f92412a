//! HELP text, built from the grammar's statement list and the algorithm registry.

use exec::algorithms::REGISTRY;
use planner::settings::SETTINGS;

/// The HELP text.
pub fn text() -> String {
    let mut s = String::from(
        "Statements (end each with ;):\n\
         \x20 CREATE [OR REPLACE] GRAPH name FROM 'path' [FORMAT edgelist|graphalytics|csv|parquet|mtx]\n\
         \x20        [DIRECTED|UNDIRECTED] [WEIGHTED] [VERTICES 'path'] [STORAGE blockfile|memory|dm] [key value ...]\n\
         \x20        [DUPLICATES first|min|max|sum] [SELF LOOPS keep|drop] [ON ERROR stop|skip]\n\
         \x20 DROP GRAPH [IF EXISTS] name\n\
         \x20 SHOW GRAPHS\n\
         \x20 DESCRIBE GRAPH name\n\
         \x20 VERIFY GRAPH name\n\
         \x20 REPAIR CATALOG       rebuild the catalog from the graph files, with a report\n\
         \x20 RUN algorithm ON name [FROM vertex] [ITER n] [key value ...]\n\
         \x20     [ORDER BY column [ASC|DESC]] [LIMIT n] [INTO 'file.parquet'|'file.arrow'|'file.csv' [FORMAT ...]]\n\
         \x20 EXPLAIN RUN ...      the plan, without reading edge data\n\
         \x20 PROFILE RUN ...      run, then per-iteration statistics\n\
         \x20 SET name = value     SHOW SETTINGS\n\
         \x20 HELP\n\nAlgorithms:\n",
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
