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

/// `ORDER BY column [ASC|DESC]`.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderBy {
    pub column: Ident,
    pub descending: bool,
}

/// `RUN algorithm ON graph ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub algorithm: Ident,
    pub graph: Ident,
    /// `FROM vertex`: an input vertex id.
    pub from: Option<Literal>,
    /// `ITER n`.
    pub iter: Option<Literal>,
    pub params: Vec<Param>,
    pub order_by: Option<OrderBy>,
    pub limit: Option<Literal>,
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
    Help,
}

/// A statement with the position of its first token.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub kind: StatementKind,
    pub pos: Pos,
}
