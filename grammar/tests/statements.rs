//! Every statement form parses into the expected AST, with positions.

use grammar::*;

fn p(line: usize, col: usize) -> Pos {
    Pos { line, col }
}

fn id(name: &str, line: usize, col: usize) -> Ident {
    Ident {
        name: name.into(),
        pos: p(line, col),
    }
}

fn lit(value: Value, line: usize, col: usize) -> Literal {
    Literal {
        value,
        pos: p(line, col),
    }
}

fn one(text: &str) -> Statement {
    let mut stmts = parse(text).unwrap_or_else(|e| panic!("{text:?}: {}", e.render("test")));
    assert_eq!(stmts.len(), 1, "{text:?}");
    stmts.remove(0)
}

fn run_of(text: &str) -> (RunMode, Run) {
    match one(text).kind {
        StatementKind::Run { mode, run } => (mode, run),
        other => panic!("not a RUN: {other:?}"),
    }
}

fn create_of(text: &str) -> CreateGraph {
    match one(text).kind {
        StatementKind::CreateGraph(c) => c,
        other => panic!("not a CREATE: {other:?}"),
    }
}

fn set_value(text: &str) -> Value {
    match one(text).kind {
        StatementKind::Set { value, .. } => value.value,
        other => panic!("not a SET: {other:?}"),
    }
}

#[test]
fn empty_and_comment_only_scripts() {
    assert_eq!(parse("").unwrap(), vec![]);
    assert_eq!(parse("   \n\t\r\n").unwrap(), vec![]);
    assert_eq!(parse("-- nothing here\n  -- nor here").unwrap(), vec![]);
    assert_eq!(parse("--").unwrap(), vec![]);
}

#[test]
fn create_graph_minimal() {
    let stmt = one("CREATE GRAPH web FROM 'data/web.e';");
    assert_eq!(stmt.pos, p(1, 1));
    assert_eq!(
        stmt.kind,
        StatementKind::CreateGraph(CreateGraph {
            or_replace: false,
            name: id("web", 1, 14),
            source: "data/web.e".into(),
            source_pos: p(1, 23),
            format: None,
            directed: None,
            weighted: false,
            vertices: None,
            storage: None,
            options: vec![],
        })
    );
}

#[test]
fn create_graph_everything_in_any_order() {
    let text = "CREATE OR REPLACE GRAPH g FROM 'e.csv'\n  STORAGE memory WEIGHTED VERTICES 'v.csv' UNDIRECTED FORMAT csv\n  delimiter ';' src 'from' dst 'to' weight 'w' header false;";
    let c = create_of(text);
    assert!(c.or_replace);
    assert_eq!(c.name, id("g", 1, 25));
    assert_eq!(c.source, "e.csv");
    assert_eq!(c.source_pos, p(1, 32));
    assert_eq!(c.format, Some(InputFormat::Csv));
    assert_eq!(c.directed, Some(false));
    assert!(c.weighted);
    assert_eq!(c.vertices.as_deref(), Some("v.csv"));
    assert_eq!(c.storage, Some(StorageKind::Memory));
    let opts: Vec<(&str, &Value)> = c
        .options
        .iter()
        .map(|o| (o.key.name.as_str(), &o.value.value))
        .collect();
    assert_eq!(
        opts,
        vec![
            ("delimiter", &Value::Str(";".into())),
            ("src", &Value::Str("from".into())),
            ("dst", &Value::Str("to".into())),
            ("weight", &Value::Str("w".into())),
            ("header", &Value::Word("false".into())),
        ]
    );
    assert_eq!(c.options[0].key.pos, p(3, 3));
    assert_eq!(c.options[0].value.pos, p(3, 13));
    assert_eq!(c.options[4].value.pos, p(3, 55));
}

#[test]
fn create_graph_import_policies_become_options() {
    let c =
        create_of("CREATE GRAPH g FROM 'x' DUPLICATES sum self loops DROP ON ERROR skip WEIGHTED;");
    let opts: Vec<(String, String)> = c
        .options
        .iter()
        .map(|p| match &p.value.value {
            Value::Word(w) => (p.key.name.to_ascii_lowercase(), w.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        opts,
        vec![
            ("duplicates".to_string(), "sum".to_string()),
            ("self_loops".to_string(), "DROP".to_string()),
            ("on_error".to_string(), "skip".to_string()),
        ]
    );
    assert!(c.weighted);
    // The policy words are not reserved.
    assert!(parse("DESCRIBE GRAPH self;").is_ok());
    assert!(parse("DESCRIBE GRAPH error;").is_ok());
    let e = parse("CREATE GRAPH g FROM 'x' ON ERROR skip ON ERROR stop;").unwrap_err();
    assert!(e.to_string().contains("ON ERROR is given twice"), "{e}");
}

#[test]
fn create_graph_formats_and_storage_kinds() {
    for (word, format) in [
        ("edgelist", InputFormat::Edgelist),
        ("GRAPHALYTICS", InputFormat::Graphalytics),
        ("Csv", InputFormat::Csv),
        ("parquet", InputFormat::Parquet),
        ("MTX", InputFormat::Mtx),
    ] {
        let c = create_of(&format!("CREATE GRAPH g FROM 'x' FORMAT {word};"));
        assert_eq!(c.format, Some(format));
    }
    for (word, kind) in [
        ("blockfile", StorageKind::Blockfile),
        ("MEMORY", StorageKind::Memory),
        ("dm", StorageKind::Dm),
    ] {
        let c = create_of(&format!("CREATE GRAPH g FROM 'x' STORAGE {word} DIRECTED;"));
        assert_eq!(c.storage, Some(kind));
        assert_eq!(c.directed, Some(true));
    }
}

#[test]
fn paths_stay_strings_even_when_they_look_like_sizes() {
    let c = create_of("CREATE GRAPH g FROM '64KB' VERTICES '2GiB' bufsize '2GiB';");
    assert_eq!(c.source, "64KB");
    assert_eq!(c.vertices.as_deref(), Some("2GiB"));
    assert_eq!(c.options[0].value.value, Value::Size(2 << 30));
    let (_, run) = run_of("RUN pr ON g FROM '1KB' INTO '1MB';");
    assert_eq!(
        run.calls[0].from.as_ref().unwrap().value,
        Value::Str("1KB".into())
    );
    assert_eq!(run.into.as_deref(), Some("1MB"));
}

#[test]
fn drop_show_describe_verify_help() {
    let stmt = one("DROP GRAPH web;");
    assert_eq!(
        stmt.kind,
        StatementKind::DropGraph {
            name: id("web", 1, 12),
            if_exists: false
        }
    );
    assert_eq!(
        one("  drop graph if exists web ;").kind,
        StatementKind::DropGraph {
            name: id("web", 1, 24),
            if_exists: true
        }
    );
    assert_eq!(one("SHOW GRAPHS;").kind, StatementKind::ShowGraphs);
    assert_eq!(one("show settings;").kind, StatementKind::ShowSettings);
    assert_eq!(
        one("DESCRIBE GRAPH g1;").kind,
        StatementKind::DescribeGraph {
            name: id("g1", 1, 16)
        }
    );
    assert_eq!(
        one("VERIFY GRAPH _g;").kind,
        StatementKind::VerifyGraph {
            name: id("_g", 1, 14)
        }
    );
    let repair = one("  repair  Catalog ;");
    assert_eq!(repair.kind, StatementKind::RepairCatalog);
    assert_eq!(repair.pos, p(1, 3));
    // REPAIR and CATALOG are not reserved: graphs may carry those names.
    assert_eq!(
        one("DROP GRAPH catalog;").kind,
        StatementKind::DropGraph {
            name: id("catalog", 1, 12),
            if_exists: false
        }
    );
    assert_eq!(
        one("VERIFY GRAPH repair;").kind,
        StatementKind::VerifyGraph {
            name: id("repair", 1, 14)
        }
    );
    let help = one("\n\n   help;");
    assert_eq!(help.kind, StatementKind::Help { topic: None });
    assert_eq!(help.pos, p(3, 4));
}

#[test]
fn keys_is_an_ordinary_option_and_stays_a_name() {
    for (text, want) in [
        ("CREATE GRAPH g FROM 'x' KEYS string;", "string"),
        (
            "CREATE GRAPH g FROM 'x' WEIGHTED keys INTEGER DIRECTED;",
            "INTEGER",
        ),
    ] {
        let c = create_of(text);
        assert_eq!(c.options.len(), 1, "{text}");
        assert_eq!(c.options[0].key.name.to_ascii_lowercase(), "keys");
        assert_eq!(c.options[0].value.value, Value::Word(want.into()), "{text}");
    }
    // Not reserved: a graph, an algorithm parameter or a setting may be called `keys`.
    assert!(parse("DESCRIBE GRAPH keys;").is_ok());
    assert!(parse("RUN bfs ON keys FROM 1;").is_ok());
    assert!(parse("SET keys = 1;").is_ok());
}

#[test]
fn from_takes_ids_above_i64_and_quoted_or_bare_keys() {
    let (_, run) = run_of("RUN bfs ON g FROM 9223372036854775813;");
    assert_eq!(
        run.calls[0].from.clone().unwrap().value,
        Value::BigInt((1 << 63) + 5)
    );
    let (_, run) = run_of("RUN bfs ON g FROM 18446744073709551615;");
    assert_eq!(
        run.calls[0].from.clone().unwrap().value,
        Value::BigInt(u64::MAX)
    );
    assert!(parse("RUN bfs ON g FROM 18446744073709551616;").is_err());
    let (_, run) = run_of("RUN bfs ON g FROM 'alice';");
    assert_eq!(
        run.calls[0].from.clone().unwrap().value,
        Value::Str("alice".into())
    );
    let (_, run) = run_of("RUN bfs ON g FROM v00017;");
    assert_eq!(
        run.calls[0].from.clone().unwrap().value,
        Value::Word("v00017".into())
    );
}

#[test]
fn run_minimal() {
    let (mode, run) = run_of("RUN pagerank ON web;");
    assert_eq!(mode, RunMode::Run);
    assert_eq!(
        run,
        Run {
            calls: vec![AlgorithmCall {
                algorithm: id("pagerank", 1, 5),
                from: None,
                iter: None,
                params: vec![],
                alias: None,
            }],
            graph: id("web", 1, 17),
            columns: None,
            filter: None,
            order_by: vec![],
            limit: None,
            offset: None,
            into: None,
            into_pos: None,
            into_format: None,
        }
    );
}

#[test]
fn run_everything() {
    let text = "RUN sssp ON roads FROM 42 ITER 10 damping 0.85 mode push\n\
                ORDER BY distance DESC LIMIT 20 INTO 'out/d.arrow' FORMAT arrow;";
    let (_, run) = run_of(text);
    assert_eq!(run.calls[0].algorithm, id("sssp", 1, 5));
    assert_eq!(run.graph, id("roads", 1, 13));
    assert_eq!(run.calls[0].from, Some(lit(Value::Int(42), 1, 24)));
    assert_eq!(run.calls[0].iter, Some(lit(Value::Int(10), 1, 32)));
    assert_eq!(
        run.calls[0].params,
        vec![
            Param {
                key: id("damping", 1, 35),
                value: lit(Value::Float(0.85), 1, 43)
            },
            Param {
                key: id("mode", 1, 48),
                value: lit(Value::Word("push".into()), 1, 53)
            },
        ]
    );
    assert_eq!(
        run.order_by,
        vec![OrderBy {
            key: Expr::Column(id("distance", 2, 10)),
            descending: true
        }]
    );
    assert_eq!(run.limit, Some(lit(Value::Int(20), 2, 30)));
    assert_eq!(run.into.as_deref(), Some("out/d.arrow"));
    assert_eq!(run.into_pos, Some(p(2, 38)));
    assert_eq!(run.into_format, Some(OutputFormat::Arrow));
}

#[test]
fn run_clauses_before_order_by_in_any_order() {
    let (_, a) = run_of("RUN bfs ON g FROM 1 ITER 3 seed 7;");
    let (_, b) = run_of("RUN bfs ON g seed 7 ITER 3 FROM 1;");
    let (a, b) = (&a.calls[0], &b.calls[0]);
    assert_eq!(
        a.from.as_ref().unwrap().value,
        b.from.as_ref().unwrap().value
    );
    assert_eq!(
        a.iter.as_ref().unwrap().value,
        b.iter.as_ref().unwrap().value
    );
    assert_eq!(a.params[0].value.value, b.params[0].value.value);
}

#[test]
fn run_order_by_directions_and_formats() {
    let (_, run) = run_of("RUN degree ON g ORDER BY degree;");
    assert!(!run.order_by[0].descending);
    let (_, run) = run_of("RUN degree ON g ORDER BY degree asc;");
    assert!(!run.order_by[0].descending);
    for (word, format) in [
        ("parquet", OutputFormat::Parquet),
        ("arrow", OutputFormat::Arrow),
        ("CSV", OutputFormat::Csv),
        ("graphalytics", OutputFormat::Graphalytics),
    ] {
        let (_, run) = run_of(&format!("RUN wcc ON g INTO 'o' FORMAT {word};"));
        assert_eq!(run.into_format, Some(format));
    }
    let (_, run) = run_of("RUN wcc ON g INTO 'o.csv';");
    assert_eq!(run.into_format, None);
}

#[test]
fn explain_and_profile() {
    let stmt = one("EXPLAIN RUN bfs ON g FROM 0;");
    assert_eq!(stmt.pos, p(1, 1));
    let StatementKind::Run { mode, run } = stmt.kind else {
        panic!()
    };
    assert_eq!(mode, RunMode::Explain);
    assert_eq!(run.calls[0].algorithm, id("bfs", 1, 13));
    let (mode, _) = run_of("profile run bfs on g;");
    assert_eq!(mode, RunMode::Profile);
}

#[test]
fn set_statements() {
    assert_eq!(
        one("SET threads = 8;").kind,
        StatementKind::Set {
            name: id("threads", 1, 5),
            value: lit(Value::Int(8), 1, 15)
        }
    );
    assert_eq!(set_value("SET cache='2GiB';"), Value::Size(2 << 30));
    assert_eq!(set_value("SET mode = auto;"), Value::Word("auto".into()));
    assert_eq!(
        set_value("SET memory_nodes = 'a:1,b:2';"),
        Value::Str("a:1,b:2".into())
    );
}

#[test]
fn keywords_are_case_insensitive_names_keep_their_case() {
    let (mode, run) = run_of("eXpLaIn rUn PageRank oN Web iTeR 3 OrDeR bY Rank dEsC lImIt 1;");
    assert_eq!(mode, RunMode::Explain);
    assert_eq!(run.calls[0].algorithm.name, "PageRank");
    assert_eq!(run.graph.name, "Web");
    assert!(matches!(&run.order_by[0].key, Expr::Column(c) if c.name == "Rank"));
    assert_eq!(
        one("create GRAPH g from 'x' Format EdgeList;").kind,
        one("CREATE GRAPH g FROM 'x' FORMAT edgelist;").kind
    );
}

#[test]
fn names_may_start_with_keywords() {
    let (_, run) = run_of("RUN order_stats ON ongoing iter_count 3 fromage 1;");
    assert_eq!(run.calls[0].algorithm.name, "order_stats");
    assert_eq!(run.graph.name, "ongoing");
    assert_eq!(run.calls[0].params.len(), 2);
    assert_eq!(run.calls[0].iter, None);
}

#[test]
fn comments_anywhere() {
    let text = "-- leading\nRUN -- between\n  bfs ON g -- after\n  FROM 1; -- trailing\n-- end";
    let stmts = parse(text).unwrap();
    assert_eq!(stmts.len(), 1);
    assert_eq!(stmts[0].pos, p(2, 1));
    let StatementKind::Run { run, .. } = &stmts[0].kind else {
        panic!()
    };
    assert_eq!(run.calls[0].algorithm, id("bfs", 3, 3));
    assert_eq!(run.calls[0].from.as_ref().unwrap().pos, p(4, 8));
    // `--` inside a string is not a comment.
    let (_, run) = run_of("RUN x ON g tag 'a -- b';");
    assert_eq!(
        run.calls[0].params[0].value.value,
        Value::Str("a -- b".into())
    );
}

#[test]
fn multi_statement_scripts_keep_whole_text_positions() {
    let text = "SET threads = 2; SHOW GRAPHS;\n\nRUN wcc ON g\n  LIMIT 5;\nHELP;";
    let stmts = parse(text).unwrap();
    let at: Vec<Pos> = stmts.iter().map(|s| s.pos).collect();
    assert_eq!(at, vec![p(1, 1), p(1, 18), p(3, 1), p(5, 1)]);
    let StatementKind::Run { run, .. } = &stmts[2].kind else {
        panic!()
    };
    assert_eq!(run.limit.as_ref().unwrap().pos, p(4, 9));
}

#[test]
fn positions_count_characters_not_bytes() {
    let (_, run) = run_of("RUN x ON g label 'héllo' k 1;");
    assert_eq!(run.calls[0].params[1].key.pos, p(1, 26));
}

#[test]
fn string_escapes() {
    let (_, run) = run_of(r"RUN x ON g a 'it\'s' b 'c:\\dir' c 'l1\nl2\tx' d 'don''t' e '';");
    let values: Vec<&Value> = run.calls[0].params.iter().map(|p| &p.value.value).collect();
    assert_eq!(
        values,
        vec![
            &Value::Str("it's".into()),
            &Value::Str("c:\\dir".into()),
            &Value::Str("l1\nl2\tx".into()),
            &Value::Str("don't".into()),
            &Value::Str(String::new()),
        ]
    );
    let c = create_of(r"CREATE GRAPH g FROM 'my \'graph\'.e';");
    assert_eq!(c.source, "my 'graph'.e");
    // A string may span lines; positions after it stay right.
    let (_, run) = run_of("RUN x ON g a 'one\ntwo' b 2;");
    assert_eq!(
        run.calls[0].params[0].value.value,
        Value::Str("one\ntwo".into())
    );
    assert_eq!(run.calls[0].params[1].value.pos, p(2, 8));
}

#[test]
fn sizes_in_value_positions() {
    for (text, bytes) in [
        ("'64KB'", 64_000u64),
        ("'64kb'", 64_000),
        ("'2GiB'", 2 << 30),
        ("'512 MB'", 512_000_000),
        ("'100B'", 100),
        ("'1.5GB'", 1_500_000_000),
        ("'3TiB'", 3 << 40),
        ("'1tb'", 1_000_000_000_000),
        ("'4MiB'", 4 << 20),
    ] {
        assert_eq!(
            set_value(&format!("SET cache = {text};")),
            Value::Size(bytes),
            "{text}"
        );
        let (_, run) = run_of(&format!("RUN x ON g budget {text};"));
        assert_eq!(
            run.calls[0].params[0].value.value,
            Value::Size(bytes),
            "{text}"
        );
    }
    // Not sizes: plain strings.
    for text in ["'64'", "'KB'", "'64 KBs'", "'big'"] {
        assert!(
            matches!(set_value(&format!("SET x = {text};")), Value::Str(_)),
            "{text}"
        );
    }
}

#[test]
fn numbers() {
    for (text, value) in [
        ("0", Value::Int(0)),
        ("-1", Value::Int(-1)),
        ("9223372036854775807", Value::Int(i64::MAX)),
        ("-9223372036854775808", Value::Int(i64::MIN)),
        ("0.85", Value::Float(0.85)),
        ("1e-7", Value::Float(1e-7)),
        ("1.5E+3", Value::Float(1500.0)),
        ("-0.5", Value::Float(-0.5)),
        ("2e3", Value::Float(2000.0)),
    ] {
        assert_eq!(set_value(&format!("SET x = {text};")), value, "{text}");
    }
    let (_, run) = run_of("RUN x ON g ITER -3 LIMIT -1;");
    assert_eq!(run.calls[0].iter.as_ref().unwrap().value, Value::Int(-3));
    assert_eq!(run.limit.unwrap().value, Value::Int(-1));
}

#[test]
fn bare_words() {
    assert_eq!(set_value("SET x = true;"), Value::Word("true".into()));
    assert_eq!(set_value("SET x = TRUE;"), Value::Word("TRUE".into()));
    // Format and storage words are not reserved.
    assert_eq!(set_value("SET x = memory;"), Value::Word("memory".into()));
    let (_, run) = run_of("RUN x ON csv FROM alice;");
    assert_eq!(run.graph.name, "csv");
    assert_eq!(
        run.calls[0].from.as_ref().unwrap().value,
        Value::Word("alice".into())
    );
}

#[test]
fn statement_complete_decides_multi_line_entries() {
    assert!(statement_complete("SHOW GRAPHS;"));
    assert!(statement_complete("SHOW GRAPHS;  \n"));
    assert!(statement_complete("SHOW GRAPHS; -- done\n"));
    assert!(statement_complete("RUN x\nON g;"));
    assert!(statement_complete("FOO;"));
    assert!(statement_complete("SHOW GRAPHS; HELP;"));
    assert!(!statement_complete(""));
    assert!(!statement_complete("   \n"));
    assert!(!statement_complete("-- only a comment;"));
    assert!(!statement_complete("RUN x ON g"));
    assert!(!statement_complete("SHOW GRAPHS; HELP"));
    assert!(!statement_complete("SET x = 'a;"));
    assert!(!statement_complete("SET x = 'a;'"));
    assert!(statement_complete("SET x = 'a;';"));
    assert!(!statement_complete("SET x = 'it''s;"));
    assert!(!statement_complete("RUN x ON g -- ;"));
}

#[test]
fn keywords_list_matches_the_grammar() {
    for kw in KEYWORDS {
        assert_eq!(kw.to_ascii_uppercase(), *kw);
        // Every listed keyword is reserved: not usable as a graph name...
        assert!(parse(&format!("DESCRIBE GRAPH {kw};")).is_err(), "{kw}");
        // ...while a name that merely starts with it is fine.
        assert!(parse(&format!("DESCRIBE GRAPH {kw}x;")).is_ok(), "{kw}");
    }
    for word in INPUT_FORMATS
        .iter()
        .chain(OUTPUT_FORMATS)
        .chain(STORAGE_KINDS)
    {
        assert!(parse(&format!("DESCRIBE GRAPH {word};")).is_ok(), "{word}");
        assert!(!KEYWORDS.contains(&word.to_ascii_uppercase().as_str()));
    }
}

#[test]
fn run_several_algorithms_keep_their_own_clauses() {
    let (_, run) = run_of(
        "RUN pagerank ITER 20 damping 0.9, wcc, bfs FROM 3 AS b ON g WHERE component = 0 \
         ORDER BY rank DESC, vertex LIMIT 10 OFFSET 5 YIELD vertex, rank;",
    );
    let names: Vec<&str> = run
        .calls
        .iter()
        .map(|c| c.algorithm.name.as_str())
        .collect();
    assert_eq!(names, ["pagerank", "wcc", "bfs"]);
    assert_eq!(run.calls[0].iter.as_ref().unwrap().value, Value::Int(20));
    assert_eq!(run.calls[0].params[0].key.name, "damping");
    assert!(run.calls[1].params.is_empty() && run.calls[1].iter.is_none());
    assert_eq!(run.calls[2].from.as_ref().unwrap().value, Value::Int(3));
    assert_eq!(run.calls[2].alias.as_ref().unwrap().name, "b");
    assert_eq!(run.order_by.len(), 2);
    assert!(run.order_by[0].descending && !run.order_by[1].descending);
    assert_eq!(run.limit.unwrap().value, Value::Int(10));
    assert_eq!(run.offset.unwrap().value, Value::Int(5));
    let cols: Vec<String> = run
        .columns
        .unwrap()
        .into_iter()
        .map(|c| match c.expr {
            Expr::Column(c) => c.name,
            other => panic!("not a column: {other:?}"),
        })
        .collect();
    assert_eq!(cols, ["vertex", "rank"]);
}

#[test]
fn clauses_after_the_graph_belong_to_a_single_algorithm_only() {
    let (_, run) = run_of("RUN pagerank damping 0.9 ON g ITER 3;");
    assert_eq!(run.calls[0].iter.as_ref().unwrap().value, Value::Int(3));
    assert_eq!(run.calls[0].params.len(), 1);
    let e = grammar::parse("RUN pagerank, wcc ON g ITER 3;").unwrap_err();
    assert_eq!((e.line, e.col), (1, 24));
    assert!(e.message.contains("after its name"), "{}", e.message);
    let e = grammar::parse("RUN pagerank ITER 2 ON g ITER 3;").unwrap_err();
    assert!(e.message.contains("ITER is given twice"), "{}", e.message);
}

#[test]
fn where_conditions_bind_as_in_sql() {
    let (_, run) = run_of(
        "RUN pagerank ON g WHERE NOT rank * 1000 + 1 > 2 AND vertex IN (1, 2) OR rank IS NOT NULL;",
    );
    let Some(Expr::Binary {
        op: BinaryOp::Or,
        left,
        right,
        ..
    }) = run.filter
    else {
        panic!("OR binds loosest: {:?}", run.filter)
    };
    assert!(matches!(*right, Expr::IsNull { negated: true, .. }));
    let Expr::Binary {
        op: BinaryOp::And,
        left: not,
        right: inlist,
        ..
    } = *left
    else {
        panic!("AND under OR")
    };
    assert!(matches!(*inlist, Expr::InList { negated: false, ref list, .. } if list.len() == 2));
    let Expr::Not { expr, .. } = *not else {
        panic!("NOT first")
    };
    let Expr::Binary {
        op: BinaryOp::Gt,
        left: sum,
        ..
    } = *expr
    else {
        panic!("comparison under NOT")
    };
    let Expr::Binary {
        op: BinaryOp::Add,
        left: product,
        ..
    } = *sum
    else {
        panic!("+ under >")
    };
    assert!(matches!(
        *product,
        Expr::Binary {
            op: BinaryOp::Mul,
            ..
        }
    ));
}

#[test]
fn where_operands_and_positions() {
    let (_, run) = run_of("RUN bfs FROM 1 ON g WHERE depth <> -1 AND -(depth) < 3 AND depth NOT IN (4) AND x.y = 'a' AND depth IS NULL;");
    let text = format!("{:?}", run.filter.unwrap());
    for piece in [
        "NotEq",
        "Int(1)",
        "Negate",
        "negated: true",
        "\"x.y\"",
        "Str(\"a\")",
        "IsNull",
    ] {
        assert!(text.contains(piece), "{piece} in {text}");
    }
    let (_, run) = run_of("RUN degree ON g\nWHERE degree >= 2;");
    let Some(Expr::Binary { pos, left, .. }) = run.filter else {
        panic!()
    };
    assert_eq!(pos, p(2, 14));
    assert_eq!(left.pos(), p(2, 7));
}

#[test]
fn new_clause_words_stay_usable_as_names() {
    for name in [
        "where", "yield", "offset", "as", "and", "not", "is", "in", "null", "return",
    ] {
        let (_, run) = run_of(&format!("RUN degree ON {name};"));
        assert_eq!(run.graph.name, name);
    }
    let (_, run) = run_of("RUN degree ON g WHERE in = 1;");
    assert!(matches!(run.filter, Some(Expr::Binary { .. })));
}

#[test]
fn help_takes_a_topic() {
    for (text, topic) in [
        ("HELP;", None),
        ("help pagerank;", Some("pagerank")),
        ("HELP SET;", Some("SET")),
    ] {
        let StatementKind::Help { topic: t } = one(text).kind else {
            panic!()
        };
        assert_eq!(t.map(|t| t.name).as_deref(), topic);
    }
}

#[test]
fn sizes_without_quotes() {
    let StatementKind::Set { value, .. } = one("SET cache = 1GB;").kind else {
        panic!()
    };
    assert_eq!(value.value, Value::Size(1_000_000_000));
    let StatementKind::Set { value, .. } = one("SET cache = 4KiB;").kind else {
        panic!()
    };
    assert_eq!(value.value, Value::Size(4096));
    let StatementKind::Set { value, .. } = one("SET threads = 4;").kind else {
        panic!()
    };
    assert_eq!(value.value, Value::Int(4));
}

#[test]
fn offset_may_come_before_limit_and_yield_before_where() {
    let (_, a) = run_of("RUN degree ON g ORDER BY vertex OFFSET 2 LIMIT 3;");
    let (_, b) = run_of("RUN degree ON g ORDER BY vertex LIMIT 3 OFFSET 2;");
    assert_eq!(a.limit.unwrap().value, b.limit.unwrap().value);
    assert_eq!(a.offset.unwrap().value, b.offset.unwrap().value);
    let (_, run) = run_of("RUN degree ON g RETURN vertex WHERE vertex > 1;");
    assert!(matches!(&run.columns.unwrap()[0].expr, Expr::Column(c) if c.name == "vertex"));
    assert!(run.filter.is_some());
    let e = grammar::parse("RUN degree ON g YIELD vertex LIMIT 1 RETURN vertex;").unwrap_err();
    assert!(
        e.message.contains("YIELD (or RETURN) is given twice"),
        "{}",
        e.message
    );
}

#[test]
fn order_by_and_yield_take_expressions_and_yield_names_them() {
    let (_, run) = run_of(
        "RUN pagerank, degree ON g ORDER BY rank * degree DESC, vertex \
         YIELD vertex, rank * 1000 AS score, -degree;",
    );
    assert_eq!(run.order_by.len(), 2);
    match &run.order_by[0].key {
        Expr::Binary {
            op: BinaryOp::Mul,
            left,
            right,
            pos,
        } => {
            assert!(matches!(&**left, Expr::Column(c) if c.name == "rank"));
            assert!(matches!(&**right, Expr::Column(c) if c.name == "degree"));
            assert_eq!(*pos, p(1, 41));
        }
        other => panic!("not a product: {other:?}"),
    }
    assert!(run.order_by[0].descending);
    let items = run.columns.unwrap();
    assert_eq!(items.len(), 3);
    assert!(items[0].alias.is_none());
    assert_eq!(items[1].alias.as_ref().unwrap().name, "score");
    assert!(matches!(
        items[1].expr,
        Expr::Binary {
            op: BinaryOp::Mul,
            ..
        }
    ));
    assert!(matches!(items[2].expr, Expr::Negate { .. }));
    assert!(items[2].alias.is_none());
    // An expression is still followed by the clause words, which are not reserved.
    let (_, run) = run_of("RUN degree ON g YIELD degree + 1 AS d WHERE degree > 0 LIMIT 2;");
    assert!(run.filter.is_some() && run.limit.is_some());
    let e = grammar::parse("RUN degree ON g ORDER BY degree * DESC;").unwrap_err();
    assert_eq!((e.line, e.col), (1, 35), "{}", e.message);
}
