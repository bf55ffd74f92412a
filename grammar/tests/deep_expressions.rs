//! Expressions nested to the limit parse; past it they are refused with a position, never a
//! stack overflow; long flat chains parse into shallow trees.

use grammar::{parse, Expr, StatementKind, MAX_EXPR_DEPTH};

fn where_of(text: &str) -> Expr {
    let stmts = parse(text).unwrap_or_else(|e| panic!("{e}"));
    match &stmts[0].kind {
        StatementKind::Run { run, .. } => run.filter.clone().expect("a WHERE"),
        other => panic!("not a RUN: {other:?}"),
    }
}

/// Runs `f` on a thread with the stack a program's main thread has (8 MiB), as the binary does.
fn on_main_sized_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn_scoped(s, f)
            .expect("spawn")
            .join()
            .expect("no panic")
    })
}

#[test]
fn nesting_up_to_the_limit_parses_and_past_it_is_refused() {
    on_main_sized_stack(|| {
        let levels = MAX_EXPR_DEPTH - 2;
        let ok = format!(
            "RUN degree ON g WHERE {}vertex = 1{};",
            "(".repeat(levels),
            ")".repeat(levels)
        );
        assert!(where_of(&ok).depth() >= 2);

        let deep = format!(
            "RUN degree ON g WHERE {}vertex = 1{};",
            "(".repeat(10 * MAX_EXPR_DEPTH),
            ")".repeat(10 * MAX_EXPR_DEPTH)
        );
        let err = parse(&deep).unwrap_err();
        assert_eq!((err.line, err.col), (1, 23 + MAX_EXPR_DEPTH));
        assert!(err.message.contains("nests more than 1000 levels"), "{err}");
        assert!(
            err.snippet.len() < 400,
            "the snippet is cut: {}",
            err.snippet.len()
        );

        for prefix in ["NOT ", "- "] {
            let text = format!(
                "RUN degree ON g WHERE {}vertex = 1;",
                prefix.repeat(100 * MAX_EXPR_DEPTH)
            );
            let err = parse(&text).unwrap_err();
            assert!(err.message.contains("nests more than"), "{prefix}: {err}");
        }
    });
}

#[test]
fn long_chains_parse_into_shallow_trees_or_are_refused() {
    on_main_sized_stack(|| {
        let terms = 5 * MAX_EXPR_DEPTH;
        for op in ["OR", "AND"] {
            let chain = (0..terms)
                .map(|i| format!("vertex = {i}"))
                .collect::<Vec<_>>()
                .join(&format!(" {op} "));
            let e = where_of(&format!("RUN degree ON g WHERE {chain};"));
            assert!(e.depth() <= 2 + (terms as f64).log2().ceil() as usize + 1);
        }
        // Arithmetic keeps its order, so each operator is a level: refused past the limit.
        let sum = format!("RUN degree ON g WHERE vertex{} > 1;", " + 0".repeat(terms));
        let err = parse(&sum).unwrap_err();
        assert!(err.message.contains("nests more than"), "{err}");
        let ok = format!(
            "RUN degree ON g WHERE vertex{} > 1;",
            " + 0".repeat(MAX_EXPR_DEPTH - 2)
        );
        where_of(&ok);
    });
}
