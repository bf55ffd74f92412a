//! The LDBC Graphalytics validation suite through the real binary: every reference output in
//! tests/data/graphalytics must pass the official validation rules (exact, epsilon 1e-4
//! relative, equivalence), from memory and out of core (`SET cache = '8KB'`:
//! the small graphs' files are larger than that).

mod common;

use common::graphalytics::run_suite;

#[test]
fn all_reference_outputs_pass_from_memory() {
    assert_eq!(run_suite("SET cache = '1GB';", "", |_, _| {}), 24);
}

#[test]
fn all_reference_outputs_pass_out_of_core() {
    assert_eq!(
        run_suite("SET cache = '8KB'; SET io_depth = 8;", "", |_, _| {}),
        24
    );
}

#[test]
fn results_do_not_depend_on_threads_or_mode() {
    for settings in [
        "SET threads = 1; SET mode = push;",
        "SET threads = 2; SET mode = block; SET cache = '8KB';",
        "SET threads = 2; SET mode = pull;",
    ] {
        assert_eq!(run_suite(settings, "", |_, _| {}), 24, "{settings}");
    }
}

#[test]
fn graphs_in_degree_order_give_the_reference_outputs_in_memory_and_out_of_core() {
    for prelude in ["SET cache = '1GB';", "SET cache = '8KB'; SET io_depth = 8;"] {
        assert_eq!(
            run_suite(prelude, "LAYOUT degree", |_, _| {}),
            24,
            "{prelude}"
        );
    }
}
