//! Turns the pest parse tree into the typed AST of [`crate::ast`].
//!
//! The grammar has already decided the shape; what is left here are the checks a PEG cannot
//! express well and that still belong to syntax rather than meaning: numbers that do not fit,
//! unknown string escapes, sizes, and clauses given twice. Each such error carries the byte offset
//! of the token to blame.

use pest::iterators::Pair;

use crate::ast::*;
use crate::location::LineIndex;
use crate::nesting::MAX_EXPR_DEPTH;
use crate::parser::Rule;

/// A syntax error found while building: where (byte offset) and what, in words.
#[derive(Debug)]
pub(crate) struct BuildError {
    pub offset: usize,
    pub message: String,
}

type Result<T> = std::result::Result<T, BuildError>;

fn err<T>(offset: usize, message: impl Into<String>) -> Result<T> {
    Err(BuildError {
        offset,
        message: message.into(),
    })
}

/// Builds the statements of a parsed `script` pair.
pub(crate) fn script(pair: Pair<'_, Rule>, lines: &LineIndex<'_>) -> Result<Vec<Statement>> {
    let b = Builder { lines };
    pair.into_inner()
        .filter(|p| p.as_rule() == Rule::statement)
        .map(|p| b.statement(p))
        .collect()
}

struct Builder<'i, 'a> {
    lines: &'i LineIndex<'a>,
}

impl Builder<'_, '_> {
    fn pos(&self, pair: &Pair<'_, Rule>) -> Pos {
        self.lines.pos(pair.as_span().start())
    }

    fn ident(&self, pair: &Pair<'_, Rule>) -> Ident {
        Ident {
            name: pair.as_str().to_string(),
            pos: self.pos(pair),
        }
    }

    fn statement(&self, pair: Pair<'_, Rule>) -> Result<Statement> {
        let pos = self.pos(&pair);
        let Some(inner) = pair.into_inner().next() else {
            return err(0, "internal error: empty statement");
        };
        let kind = match inner.as_rule() {
            Rule::create_graph => StatementKind::CreateGraph(self.create_graph(inner)?),
            Rule::drop_graph => {
                let mut if_exists = false;
                let mut name = None;
                for p in inner.into_inner() {
                    match p.as_rule() {
                        Rule::if_exists => if_exists = true,
                        Rule::graph_name => name = Some(self.ident(&p)),
                        _ => {}
                    }
                }
                StatementKind::DropGraph {
                    name: required(name, "graph name")?,
                    if_exists,
                }
            }
            Rule::show_graphs => StatementKind::ShowGraphs,
            Rule::show_settings => StatementKind::ShowSettings,
            Rule::describe_graph => StatementKind::DescribeGraph {
                name: self.graph_name_in(inner)?,
            },
            Rule::verify_graph => StatementKind::VerifyGraph {
                name: self.graph_name_in(inner)?,
            },
            Rule::repair_catalog => StatementKind::RepairCatalog,
            Rule::run_stmt => {
                let (mode, run) = self.run(inner)?;
                StatementKind::Run { mode, run }
            }
            Rule::set_stmt => {
                let mut name = None;
                let mut value = None;
                for p in inner.into_inner() {
                    match p.as_rule() {
                        Rule::setting => name = Some(self.ident(&p)),
                        Rule::set_value => value = Some(self.value(p, true)?),
                        _ => {}
                    }
                }
                StatementKind::Set {
                    name: required(name, "setting name")?,
                    value: required(value, "setting value")?,
                }
            }
            Rule::help => StatementKind::Help {
                topic: inner
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::help_topic)
                    .map(|p| self.ident(&p)),
            },
            other => return err(0, format!("internal error: unexpected rule {other:?}")),
        };
        Ok(Statement { kind, pos })
    }

    fn graph_name_in(&self, pair: Pair<'_, Rule>) -> Result<Ident> {
        let name = pair
            .into_inner()
            .find(|p| p.as_rule() == Rule::graph_name)
            .map(|p| self.ident(&p));
        required(name, "graph name")
    }

    fn create_graph(&self, pair: Pair<'_, Rule>) -> Result<CreateGraph> {
        let mut or_replace = false;
        let mut name = None;
        let mut source = None;
        let mut format = None;
        let mut directed = None;
        let mut weighted = false;
        let mut vertices = None;
        let mut storage = None;
        let mut options: Vec<Param> = Vec::new();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::or_replace => or_replace = true,
                Rule::graph_name => name = Some(self.ident(&p)),
                Rule::path => source = Some((self.string(&p)?, self.pos(&p))),
                Rule::create_clause => {
                    let Some(clause) = p.into_inner().next() else {
                        continue;
                    };
                    let at = clause.as_span().start();
                    match clause.as_rule() {
                        Rule::format_clause => {
                            once(&format, at, "FORMAT")?;
                            format = last_inner(clause).map(|f| input_format(f.as_str()));
                        }
                        Rule::kw_directed | Rule::kw_undirected => {
                            if directed.is_some() {
                                return err(at, "DIRECTED or UNDIRECTED is given twice");
                            }
                            directed = Some(clause.as_rule() == Rule::kw_directed);
                        }
                        Rule::kw_weighted => {
                            if weighted {
                                return err(at, "WEIGHTED is given twice");
                            }
                            weighted = true;
                        }
                        Rule::vertices_clause => {
                            once(&vertices, at, "VERTICES")?;
                            if let Some(path) = last_inner(clause) {
                                vertices = Some(self.string(&path)?);
                            }
                        }
                        Rule::storage_clause => {
                            once(&storage, at, "STORAGE")?;
                            storage = last_inner(clause).map(|s| storage_kind(s.as_str()));
                        }
                        Rule::self_loops_clause => {
                            self.push_policy(&mut options, clause, "self_loops", "SELF LOOPS")?
                        }
                        Rule::on_error_clause => {
                            self.push_policy(&mut options, clause, "on_error", "ON ERROR")?
                        }
                        Rule::param => self.push_param(&mut options, clause, "option")?,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        let (source, source_pos) = required(source, "source path")?;
        Ok(CreateGraph {
            or_replace,
            name: required(name, "graph name")?,
            source,
            source_pos,
            format,
            directed,
            weighted,
            vertices,
            storage,
            options,
        })
    }

    fn run(&self, pair: Pair<'_, Rule>) -> Result<(RunMode, Run)> {
        let mut mode = RunMode::Run;
        let mut calls = Vec::new();
        let mut graph = None;
        // Clauses written after the graph name, and where the first of them stood.
        let mut trailing = AlgorithmCall {
            algorithm: Ident {
                name: String::new(),
                pos: Pos::default(),
            },
            from: None,
            iter: None,
            params: Vec::new(),
            alias: None,
        };
        let mut trailing_at = None;
        let mut columns = None;
        let mut filter = None;
        let mut order_by = Vec::new();
        let mut limit = None;
        let mut offset = None;
        let mut into = None;
        let mut into_pos = None;
        let mut into_format = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::run_mode => {
                    if let Some(m) = p.into_inner().next() {
                        mode = if m.as_rule() == Rule::kw_explain {
                            RunMode::Explain
                        } else {
                            RunMode::Profile
                        };
                    }
                }
                Rule::algo_call => calls.push(self.algo_call(p)?),
                Rule::graph_name => graph = Some(self.ident(&p)),
                Rule::run_clause => {
                    trailing_at.get_or_insert(p.as_span().start());
                    self.run_clause(&mut trailing, p)?;
                }
                Rule::projection => {
                    once(&columns, p.as_span().start(), "YIELD (or RETURN)")?;
                    let mut items = Vec::new();
                    for item in p.into_inner().filter(|q| q.as_rule() == Rule::yield_item) {
                        let mut expr = None;
                        let mut alias = None;
                        for q in item.into_inner() {
                            match q.as_rule() {
                                Rule::condition => expr = Some(self.expr(q)?),
                                Rule::alias => {
                                    alias = q
                                        .into_inner()
                                        .find(|a| a.as_rule() == Rule::alias_name)
                                        .map(|a| self.ident(&a))
                                }
                                _ => {}
                            }
                        }
                        items.push(YieldItem {
                            expr: required(expr, "expression")?,
                            alias,
                        });
                    }
                    columns = Some(items);
                }
                Rule::where_clause => {
                    if let Some(c) = last_inner(p) {
                        filter = Some(self.expr(c)?);
                    }
                }
                Rule::order_by => {
                    for key in p.into_inner().filter(|q| q.as_rule() == Rule::order_key) {
                        let mut expr = None;
                        let mut descending = false;
                        for q in key.into_inner() {
                            match q.as_rule() {
                                Rule::condition => expr = Some(self.expr(q)?),
                                Rule::direction => {
                                    descending = q.into_inner().next().map(|d| d.as_rule())
                                        == Some(Rule::kw_desc)
                                }
                                _ => {}
                            }
                        }
                        order_by.push(OrderBy {
                            key: required(expr, "expression")?,
                            descending,
                        });
                    }
                }
                Rule::limit => {
                    if let Some(c) = last_inner(p) {
                        limit = Some(self.count(c, "LIMIT")?);
                    }
                }
                Rule::offset => {
                    if let Some(c) = last_inner(p) {
                        offset = Some(self.count(c, "OFFSET")?);
                    }
                }
                Rule::into => {
                    for q in p.into_inner() {
                        match q.as_rule() {
                            Rule::path => {
                                into_pos = Some(self.pos(&q));
                                into = Some(self.string(&q)?);
                            }
                            Rule::output_format => into_format = Some(output_format(q.as_str())),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(at) = trailing_at {
            match calls.as_mut_slice() {
                [only] => merge_clauses(only, trailing, at)?,
                _ => {
                    return err(
                        at,
                        "with several algorithms, write each one's FROM, ITER and parameters \
                         after its name: RUN pagerank ITER 20, bfs FROM 1 ON g",
                    )
                }
            }
        }
        if calls.is_empty() {
            return err(0, "internal error: missing algorithm");
        }
        let run = Run {
            calls,
            graph: required(graph, "graph name")?,
            columns,
            filter,
            order_by,
            limit,
            offset,
            into,
            into_pos,
            into_format,
        };
        Ok((mode, run))
    }

    /// One `algorithm [clauses] [AS name]` of a RUN.
    fn algo_call(&self, pair: Pair<'_, Rule>) -> Result<AlgorithmCall> {
        let mut call = AlgorithmCall {
            algorithm: Ident {
                name: String::new(),
                pos: Pos::default(),
            },
            from: None,
            iter: None,
            params: Vec::new(),
            alias: None,
        };
        let mut named = false;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::algorithm => {
                    call.algorithm = self.ident(&p);
                    named = true;
                }
                Rule::run_clause => self.run_clause(&mut call, p)?,
                Rule::alias => {
                    call.alias = p
                        .into_inner()
                        .find(|q| q.as_rule() == Rule::alias_name)
                        .map(|q| self.ident(&q))
                }
                _ => {}
            }
        }
        if !named {
            return err(0, "internal error: missing algorithm");
        }
        Ok(call)
    }

    /// Adds a `FROM v`, `ITER n` or `key value` clause to `call`, refusing repeats.
    fn run_clause(&self, call: &mut AlgorithmCall, pair: Pair<'_, Rule>) -> Result<()> {
        let Some(clause) = pair.into_inner().next() else {
            return Ok(());
        };
        let at = clause.as_span().start();
        match clause.as_rule() {
            Rule::from_vertex => {
                once(&call.from, at, "FROM")?;
                if let Some(v) = last_inner(clause) {
                    call.from = Some(self.value(v, false)?);
                }
            }
            Rule::iter => {
                once(&call.iter, at, "ITER")?;
                if let Some(c) = last_inner(clause) {
                    call.iter = Some(self.count(c, "ITER")?);
                }
            }
            Rule::param => self.push_param(&mut call.params, clause, "parameter")?,
            _ => {}
        }
        Ok(())
    }

    /// A `condition` (or any level below it) as an [`Expr`].
    fn expr(&self, pair: Pair<'_, Rule>) -> Result<Expr> {
        self.expr_at(pair).map(|(e, _)| e)
    }

    /// An expression and the depth of its tree. `AND` and `OR` chains become balanced trees
    /// (both are associative, also over NULL), so a chain of any length stays shallow;
    /// arithmetic chains keep their left-to-right order and each operator adds a level, which
    /// is refused past [`MAX_EXPR_DEPTH`] before the tree gets deep enough to overflow a stack.
    fn expr_at(&self, pair: Pair<'_, Rule>) -> Result<(Expr, usize)> {
        match pair.as_rule() {
            Rule::condition | Rule::conjunction => {
                let mut inner = pair.into_inner();
                let Some(first) = inner.next() else {
                    return err(0, "internal error: empty expression");
                };
                let mut terms = vec![self.expr_at(first)?];
                let mut ops = Vec::new();
                while let (Some(op), Some(right)) = (inner.next(), inner.next()) {
                    ops.push((binary_op(op.as_str()), self.pos(&op)));
                    terms.push(self.expr_at(right)?);
                }
                Ok(balanced(terms, &ops))
            }
            Rule::sum | Rule::product => {
                let mut inner = pair.into_inner();
                let Some(first) = inner.next() else {
                    return err(0, "internal error: empty expression");
                };
                let (mut left, mut depth) = self.expr_at(first)?;
                while let (Some(op), Some(right)) = (inner.next(), inner.next()) {
                    let at = op.as_span().start();
                    let pos = self.pos(&op);
                    let op = binary_op(op.as_str());
                    let (right, right_depth) = self.expr_at(right)?;
                    depth = depth.max(right_depth) + 1;
                    if depth > MAX_EXPR_DEPTH {
                        return err(at, too_deep_message());
                    }
                    left = Expr::Binary {
                        op,
                        left: Box::new(left),
                        right: Box::new(right),
                        pos,
                    };
                }
                Ok((left, depth))
            }
            Rule::negation | Rule::factor => {
                let mut inner = pair.into_inner();
                let Some(first) = inner.next() else {
                    return err(0, "internal error: empty expression");
                };
                match first.as_rule() {
                    Rule::kw_not | Rule::minus => {
                        let pos = self.pos(&first);
                        let is_not = first.as_rule() == Rule::kw_not;
                        let Some(operand) = inner.next() else {
                            return err(0, "internal error: operator without operand");
                        };
                        let (expr, depth) = self.expr_at(operand)?;
                        let expr = Box::new(expr);
                        let node = if is_not {
                            Expr::Not { expr, pos }
                        } else {
                            Expr::Negate { expr, pos }
                        };
                        Ok((node, depth + 1))
                    }
                    _ => self.expr_at(first),
                }
            }
            Rule::predicate => {
                let mut inner = pair.into_inner();
                let Some(first) = inner.next() else {
                    return err(0, "internal error: empty expression");
                };
                let (left, mut depth) = self.expr_at(first)?;
                let Some(test) = inner.next() else {
                    return Ok((left, depth));
                };
                let left = Box::new(left);
                let pos = self.pos(&test);
                let node = match test.as_rule() {
                    Rule::is_null => Expr::IsNull {
                        expr: left,
                        negated: test.into_inner().any(|q| q.as_rule() == Rule::kw_not),
                        pos,
                    },
                    Rule::in_list => {
                        let mut negated = false;
                        let mut list = Vec::new();
                        for q in test.into_inner() {
                            match q.as_rule() {
                                Rule::kw_not => negated = true,
                                Rule::sum => {
                                    let (item, item_depth) = self.expr_at(q)?;
                                    depth = depth.max(item_depth);
                                    list.push(item);
                                }
                                _ => {}
                            }
                        }
                        Expr::InList {
                            expr: left,
                            list,
                            negated,
                            pos,
                        }
                    }
                    _ => {
                        let mut parts = test.into_inner();
                        let (Some(op), Some(right)) = (parts.next(), parts.next()) else {
                            return err(0, "internal error: malformed comparison");
                        };
                        let (right, right_depth) = self.expr_at(right)?;
                        depth = depth.max(right_depth);
                        Expr::Binary {
                            op: binary_op(op.as_str()),
                            left,
                            right: Box::new(right),
                            pos: self.pos(&op),
                        }
                    }
                };
                Ok((node, depth + 1))
            }
            Rule::operand => {
                let mut inner = pair.into_inner();
                let Some(first) = inner.next() else {
                    return err(0, "internal error: empty operand");
                };
                let leaf = match first.as_rule() {
                    Rule::open => {
                        return match inner.next() {
                            Some(c) => self.expr_at(c),
                            None => err(0, "internal error: empty parentheses"),
                        }
                    }
                    Rule::number => Expr::Literal(Literal {
                        value: number(first.as_str(), first.as_span().start())?,
                        pos: self.pos(&first),
                    }),
                    Rule::string => Expr::Literal(Literal {
                        value: Value::Str(self.string(&first)?),
                        pos: self.pos(&first),
                    }),
                    Rule::kw_null => Expr::Null(self.pos(&first)),
                    _ => Expr::Column(self.ident(&first)),
                };
                Ok((leaf, 1))
            }
            other => err(
                pair.as_span().start(),
                format!("internal error: unexpected rule {other:?} in a condition"),
            ),
        }
    }

    /// Adds a `key value` pair, refusing a key given twice (a later value silently winning
    /// would hide a typo in a long statement).
    fn push_param(&self, params: &mut Vec<Param>, pair: Pair<'_, Rule>, what: &str) -> Result<()> {
        let mut inner = pair.into_inner();
        let (Some(key), Some(value)) = (inner.next(), inner.next()) else {
            return err(0, "internal error: malformed parameter");
        };
        let key_at = key.as_span().start();
        let key = self.ident(&key);
        if params
            .iter()
            .any(|p| p.key.name.eq_ignore_ascii_case(&key.name))
        {
            return err(key_at, format!("{what} `{}` is given twice", key.name));
        }
        let value = self.value(value, true)?;
        params.push(Param { key, value });
        Ok(())
    }

    /// A two-word policy clause (`SELF LOOPS drop`) as the importer option `key`.
    fn push_policy(
        &self,
        options: &mut Vec<Param>,
        clause: Pair<'_, Rule>,
        key: &str,
        shown: &str,
    ) -> Result<()> {
        let at = clause.as_span().start();
        let pos = self.pos(&clause);
        let Some(word) = clause.into_inner().last() else {
            return err(at, "internal error: empty policy");
        };
        if options.iter().any(|p| p.key.name.eq_ignore_ascii_case(key)) {
            return err(at, format!("{shown} is given twice"));
        }
        options.push(Param {
            key: Ident {
                name: key.to_string(),
                pos,
            },
            value: Literal {
                value: Value::Word(word.as_str().to_string()),
                pos: self.pos(&word),
            },
        });
        Ok(())
    }

    /// A literal of a `vertex`, `param_value` or `set_value` slot. `sizes` says whether a quoted
    /// size such as `'64KB'` becomes [`Value::Size`] (value slots) or stays a string.
    fn value(&self, pair: Pair<'_, Rule>, sizes: bool) -> Result<Literal> {
        let Some(token) = pair.into_inner().next() else {
            return err(0, "internal error: empty value");
        };
        let pos = self.pos(&token);
        let at = token.as_span().start();
        let value = match token.as_rule() {
            Rule::size => match parse_size(token.as_str()) {
                Some(Some(bytes)) => Value::Size(bytes),
                _ => return err(at, format!("size {} is out of range", token.as_str())),
            },
            Rule::number => number(token.as_str(), at)?,
            Rule::string => {
                let s = self.string(&token)?;
                match sizes.then(|| parse_size(&s)).flatten() {
                    Some(Some(bytes)) => Value::Size(bytes),
                    Some(None) => return err(at, format!("size '{s}' is out of range")),
                    None => Value::Str(s),
                }
            }
            _ => Value::Word(token.as_str().to_string()),
        };
        Ok(Literal { value, pos })
    }

    /// The whole number of `ITER n` or `LIMIT n` (negative ones are left to the planner).
    fn count(&self, pair: Pair<'_, Rule>, after: &str) -> Result<Literal> {
        let token = pair.clone().into_inner().next().unwrap_or(pair);
        let at = token.as_span().start();
        let value = number(token.as_str(), at)?;
        if !matches!(value, Value::Int(_) | Value::BigInt(_)) {
            return err(
                at,
                format!(
                    "expected a whole number after {after}, found `{}`",
                    token.as_str()
                ),
            );
        }
        Ok(Literal {
            value,
            pos: self.pos(&token),
        })
    }

    /// The contents of a `string` or `path` token, escapes resolved.
    fn string(&self, pair: &Pair<'_, Rule>) -> Result<String> {
        unescape(pair.as_str(), pair.as_span().start())
    }
}

/// Unwraps a part the grammar guarantees; a `None` here is a bug in the grammar, reported as an
/// error rather than a panic.
fn required<T>(value: Option<T>, what: &str) -> Result<T> {
    match value {
        Some(v) => Ok(v),
        None => err(0, format!("internal error: missing {what}")),
    }
}

/// Moves the clauses written after the graph name into the one algorithm call, refusing a
/// clause given on both sides (`RUN pagerank ITER 5 ON g ITER 10`).
fn merge_clauses(call: &mut AlgorithmCall, trailing: AlgorithmCall, at: usize) -> Result<()> {
    if let Some(from) = trailing.from {
        once(&call.from, at, "FROM")?;
        call.from = Some(from);
    }
    if let Some(iter) = trailing.iter {
        once(&call.iter, at, "ITER")?;
        call.iter = Some(iter);
    }
    for p in trailing.params {
        if call
            .params
            .iter()
            .any(|q| q.key.name.eq_ignore_ascii_case(&p.key.name))
        {
            return err(at, format!("parameter `{}` is given twice", p.key.name));
        }
        call.params.push(p);
    }
    Ok(())
}

/// A chain of one associative operator (`AND` or `OR`) over `terms` as a balanced tree, each
/// node keeping its own operator's position, and the tree's depth.
fn balanced(mut terms: Vec<(Expr, usize)>, ops: &[(BinaryOp, Pos)]) -> (Expr, usize) {
    if terms.len() == 1 {
        return terms.pop().expect("one term");
    }
    let mid = terms.len() / 2;
    let right_terms = terms.split_off(mid);
    let (op, pos) = ops[mid - 1];
    let (left, left_depth) = balanced(terms, &ops[..mid - 1]);
    let (right, right_depth) = balanced(right_terms, &ops[mid..]);
    let node = Expr::Binary {
        op,
        left: Box::new(left),
        right: Box::new(right),
        pos,
    };
    (node, left_depth.max(right_depth) + 1)
}

/// What an expression nested past [`MAX_EXPR_DEPTH`] is told.
pub(crate) fn too_deep_message() -> String {
    format!(
        "this expression nests more than {MAX_EXPR_DEPTH} levels deep (parentheses, NOT, unary \
         minus and chained arithmetic each add one); split it into simpler ones"
    )
}

/// The operator of a `compare_op`, `add_op`, `mul_op`, `kw_and` or `kw_or` token.
fn binary_op(text: &str) -> BinaryOp {
    match text.to_ascii_lowercase().as_str() {
        "+" => BinaryOp::Add,
        "-" => BinaryOp::Sub,
        "*" => BinaryOp::Mul,
        "/" => BinaryOp::Div,
        "=" => BinaryOp::Eq,
        "<>" | "!=" => BinaryOp::NotEq,
        "<" => BinaryOp::Lt,
        "<=" => BinaryOp::LtEq,
        ">" => BinaryOp::Gt,
        ">=" => BinaryOp::GtEq,
        "and" => BinaryOp::And,
        _ => BinaryOp::Or,
    }
}

/// Refuses a clause given twice.
fn once<T>(seen: &Option<T>, at: usize, clause: &str) -> Result<()> {
    if seen.is_some() {
        return err(at, format!("{clause} is given twice"));
    }
    Ok(())
}

fn last_inner(pair: Pair<'_, Rule>) -> Option<Pair<'_, Rule>> {
    pair.into_inner().last()
}

fn input_format(word: &str) -> InputFormat {
    match word.to_ascii_lowercase().as_str() {
        "graphalytics" => InputFormat::Graphalytics,
        "csv" => InputFormat::Csv,
        "parquet" => InputFormat::Parquet,
        "mtx" => InputFormat::Mtx,
        _ => InputFormat::Edgelist,
    }
}

fn output_format(word: &str) -> OutputFormat {
    match word.to_ascii_lowercase().as_str() {
        "arrow" => OutputFormat::Arrow,
        "csv" => OutputFormat::Csv,
        "graphalytics" => OutputFormat::Graphalytics,
        _ => OutputFormat::Parquet,
    }
}

fn storage_kind(word: &str) -> StorageKind {
    match word.to_ascii_lowercase().as_str() {
        "memory" => StorageKind::Memory,
        "dm" => StorageKind::Dm,
        _ => StorageKind::Blockfile,
    }
}

/// A `number` token: an integer when written without `.` or exponent, else a float.
fn number(text: &str, at: usize) -> Result<Value> {
    let out_of_range = || err(at, format!("number {text} is out of range"));
    if text.contains(['.', 'e', 'E']) {
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float(f)),
            _ => out_of_range(),
        }
    } else {
        match (text.parse::<i64>(), text.parse::<u64>()) {
            (Ok(i), _) => Ok(Value::Int(i)),
            (_, Ok(u)) => Ok(Value::BigInt(u)),
            _ => out_of_range(),
        }
    }
}

/// Resolves the escapes of a quoted string token (quotes included in `raw`, which starts at byte
/// `at` of the text): `\'`, `\\`, `\n`, `\t` and `''`. Any other escape is an error pointing at
/// its backslash, because silently keeping or dropping it would change a path behind the user's
/// back.
pub(crate) fn unescape(raw: &str, at: usize) -> Result<String> {
    let body = raw
        .strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .unwrap_or(raw);
    let mut out = String::with_capacity(body.len());
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next().map(|(_, e)| e) {
                Some('\'') => out.push('\''),
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                other => {
                    let shown: String = other
                        .map(|e| e.escape_debug().collect())
                        .unwrap_or_default();
                    return err(
                        at + 1 + i,
                        format!(
                            "unknown escape `\\{shown}` in string: the escapes are \\' \\\\ \\n \\t (write \\\\ for a backslash)"
                        ),
                    );
                }
            },
            '\'' => {
                // The grammar only lets `''` through inside a string.
                chars.next_if(|&(_, q)| q == '\'');
                out.push('\'');
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}

/// Reads a quoted literal as a size when it is written as one with a unit (`'64KB'`, `'1.5GiB'`,
/// `'64k'`); see [`base::parse_size`].
///
/// Returns `None` when `text` is not a size with a unit (it then stays a string: `'64'` is a
/// string, as a bare `64` is a number), `Some(None)` when it is but does not fit in 64 bits, and
/// `Some(Some(bytes))` otherwise.
pub(crate) fn parse_size(text: &str) -> Option<Option<u64>> {
    if !text.trim_end().ends_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    match base::parse_size(text) {
        Ok(bytes) => Some(Some(bytes)),
        Err(base::SizeError::TooLarge) => Some(None),
        Err(base::SizeError::NotASize) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_need_a_unit_to_leave_strings() {
        assert_eq!(parse_size("64KB"), Some(Some(64_000)));
        assert_eq!(parse_size("1.5GiB"), Some(Some(3 << 29)));
        assert_eq!(parse_size("64 k"), Some(Some(64 << 10)));
        assert_eq!(parse_size(" 100b "), Some(Some(100)));
        assert_eq!(parse_size("99999999999TB"), Some(None));
        for not_a_size in [
            "64", "1.5", "KB", "1.KB", "x64KB", "64KBs", "", "-1KB", "web",
        ] {
            assert_eq!(parse_size(not_a_size), None, "{not_a_size:?}");
        }
    }

    #[test]
    fn escapes() {
        assert_eq!(
            unescape(r"'a\'b\\c\nd\te''f'", 0).unwrap(),
            "a'b\\c\nd\te'f"
        );
        let e = unescape(r"'C:\data'", 10).unwrap_err();
        assert_eq!(e.offset, 13);
        assert!(e.message.contains(r"unknown escape `\d`"), "{}", e.message);
    }

    #[test]
    fn numbers() {
        assert_eq!(number("-5", 0).unwrap(), Value::Int(-5));
        assert_eq!(number("1.5E+3", 0).unwrap(), Value::Float(1500.0));
        assert_eq!(number("1e-7", 0).unwrap(), Value::Float(1e-7));
        assert!(number("1e999", 0).is_err());
        assert_eq!(
            number("9223372036854775813", 0).unwrap(),
            Value::BigInt((1 << 63) + 5)
        );
        assert!(number("18446744073709551616", 0).is_err());
        assert_eq!(
            number("-9223372036854775808", 0).unwrap(),
            Value::Int(i64::MIN)
        );
    }
}
