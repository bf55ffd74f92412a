//! The typed syntax tree of the frontier language.
//!
//! Every node a later stage may need to blame carries a [`Pos`], so that the planner can
//! report "line 3, column 17: unknown parameter `dampign`" without re-parsing.

/// A 1-based line and column in the statement text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

/// An identifier (graph name, algorithm name, parameter key, setting name) with where it stood.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub name: String,
    pub pos: Pos,
}

/// A literal value as written: sizes are already converted to bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A whole number, possibly negative (`-1` is parsed so the planner can reject it by name).
    Int(i64),
    /// A whole number above `i64::MAX` (vertex ids go up to 2^64-1).
    BigInt(u64),
    /// A floating-point number such as `0.85` or `1e-7`.
    Float(f64),
    /// A quoted string that is not a size, escapes resolved.
    Str(String),
    /// A quoted size such as `'64KB'` or `'2GiB'`, in bytes (KB = 1000, KiB = 1024).
    Size(u64),
    /// A bare word such as `auto` or `true`.
    Word(String),
}

/// A literal with where it stood.
#[derive(Debug, Clone, PartialEq)]
pub struct Literal {
    pub value: Value,
    pub pos: Pos,
}

/// A `key value` pair of a RUN or CREATE statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub key: Ident,
    pub value: Literal,
}

/// Input formats of `CREATE GRAPH ... FORMAT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    Edgelist,
    Graphalytics,
    Csv,
    Parquet,
    /// Matrix Market coordinate files (`%%MatrixMarket matrix coordinate ...`).
    Mtx,
}

/// Where a graph lives (`STORAGE ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageKind {
    Blockfile,
    Memory,
    Dm,
}

/// `CREATE [OR REPLACE] GRAPH name FROM 'path' ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateGraph {
    pub or_replace: bool,
    pub name: Ident,
    pub source: String,
    pub source_pos: Pos,
    pub format: Option<InputFormat>,
    /// `Some(true)` for DIRECTED, `Some(false)` for UNDIRECTED, `None` when not said.
    pub directed: Option<bool>,
    pub weighted: bool,
    pub vertices: Option<String>,
    pub storage: Option<StorageKind>,
    /// Importer options, e.g. `delimiter ';'` or `src 'from'` for CSV.
    pub options: Vec<Param>,
}

/// Output formats of `RUN ... INTO 'path' [FORMAT ...]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Parquet,
    Arrow,
    Csv,
    Graphalytics,
}

/// One key of `ORDER BY key [ASC|DESC], ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderBy {
    /// A column as written, possibly qualified (`wcc.component`), or an expression over columns
    /// (`rank * degree`).
    pub key: Expr,
    pub descending: bool,
}

/// One item of `YIELD item, ...`: a column or an expression, optionally named.
#[derive(Debug, Clone, PartialEq)]
pub struct YieldItem {
    pub expr: Expr,
    /// `AS name`.
    pub alias: Option<Ident>,
}

/// One algorithm of a RUN with its own clauses: `pagerank ITER 20 damping 0.9 AS pr`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlgorithmCall {
    pub algorithm: Ident,
    /// `FROM vertex`: an input vertex id.
    pub from: Option<Literal>,
    /// `ITER n`.
    pub iter: Option<Literal>,
    pub params: Vec<Param>,
    /// `AS name`: the prefix of this algorithm's columns when they clash with another's.
    pub alias: Option<Ident>,
}

/// A binary operator of an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    And,
    Or,
}

impl BinaryOp {
    /// The operator as written (`=`, `AND`, ...).
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
        }
    }

    /// Whether the operator compares two values (its result is true, false or null).
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq
                | BinaryOp::NotEq
                | BinaryOp::Lt
                | BinaryOp::LtEq
                | BinaryOp::Gt
                | BinaryOp::GtEq
        )
    }
}

/// An expression of WHERE, ORDER BY or YIELD; every node carries where it stood.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A result column, possibly qualified (`wcc.component`).
    Column(Ident),
    /// A number or a string.
    Literal(Literal),
    /// `NULL`.
    Null(Pos),
    /// `-operand`.
    Negate { expr: Box<Expr>, pos: Pos },
    /// `NOT condition`.
    Not { expr: Box<Expr>, pos: Pos },
    /// `left op right`; `pos` is the operator's.
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
        pos: Pos,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        expr: Box<Expr>,
        negated: bool,
        pos: Pos,
    },
    /// `expr [NOT] IN (item, ...)`.
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
        pos: Pos,
    },
}

impl Expr {
    /// Where the expression starts.
    pub fn pos(&self) -> Pos {
        match self {
            Expr::Column(c) => c.pos,
            Expr::Literal(l) => l.pos,
            Expr::Null(pos) | Expr::Negate { pos, .. } | Expr::Not { pos, .. } => *pos,
            Expr::Binary { left, .. } => left.pos(),
            Expr::IsNull { expr, .. } | Expr::InList { expr, .. } => expr.pos(),
        }
    }

    /// The depth of the expression's tree (a column or literal is 1). The parser keeps it
    /// within about [`crate::MAX_EXPR_DEPTH`], which is what makes this recursion safe.
    pub fn depth(&self) -> usize {
        match self {
            Expr::Column(_) | Expr::Literal(_) | Expr::Null(_) => 1,
            Expr::Negate { expr, .. } | Expr::Not { expr, .. } | Expr::IsNull { expr, .. } => {
                1 + expr.depth()
            }
            Expr::Binary { left, right, .. } => 1 + left.depth().max(right.depth()),
            Expr::InList { expr, list, .. } => {
                1 + list
                    .iter()
                    .map(Expr::depth)
                    .chain([expr.depth()])
                    .max()
                    .unwrap_or(0)
            }
        }
    }
}

/// `RUN call, ... ON graph ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The algorithms, at least one, in the order written (and run).
    pub calls: Vec<AlgorithmCall>,
    pub graph: Ident,
    /// `YIELD item, ...` or `RETURN item, ...`: the columns to return, in this order.
    pub columns: Option<Vec<YieldItem>>,
    /// `WHERE condition`.
    pub filter: Option<Expr>,
    /// `ORDER BY key, ...`, empty when absent.
    pub order_by: Vec<OrderBy>,
    pub limit: Option<Literal>,
    pub offset: Option<Literal>,
    pub into: Option<String>,
    pub into_pos: Option<Pos>,
    pub into_format: Option<OutputFormat>,
}

/// What a RUN statement is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    Run,
    Explain,
    Profile,
}

/// One statement of the language.
///
/// `Run` is much larger than the other variants; statements are few and short-lived, so the
/// size does not matter and the fields stay unboxed for the planner's pattern matches.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum StatementKind {
    CreateGraph(CreateGraph),
    DropGraph {
        name: Ident,
        if_exists: bool,
    },
    ShowGraphs,
    DescribeGraph {
        name: Ident,
    },
    VerifyGraph {
        name: Ident,
    },
    /// `REPAIR CATALOG`: rebuild the catalog from the graph files.
    RepairCatalog,
    Run {
        mode: RunMode,
        run: Run,
    },
    Set {
        name: Ident,
        value: Literal,
    },
    ShowSettings,
    /// `HELP [topic]`: an algorithm, a statement keyword (`SET`, `RUN`, ...).
    Help {
        topic: Option<Ident>,
    },
}

/// A statement with the position of its first token.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub kind: StatementKind,
    pub pos: Pos,
}
