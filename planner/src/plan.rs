//! The plan handed from the planner to the executor: a validated algorithm call with typed
//! parameters (internal vertex ids already resolved), and how operators should run.

/// EdgeMap strategy, chosen per iteration (`Auto`) or forced with `SET mode = ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Ligra's rule: out-degree sum of the frontier > |E|/20 ⇒ dense pull, else sparse push.
    Auto,
    /// SparsePush (CAVE ProcessQueue).
    Push,
    /// BlockPush (CAVE ProcessQueueBlock).
    Block,
    /// DensePull.
    Pull,
}

impl Mode {
    /// The setting's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Push => "push",
            Mode::Block => "block",
            Mode::Pull => "pull",
        }
    }
}

/// A validated algorithm call. Vertex fields are internal ids.
#[derive(Debug, Clone, PartialEq)]
pub enum AlgoCall {
    Bfs {
        source: u32,
    },
    PageRank {
        iterations: u32,
        damping: f64,
    },
    Wcc,
    Sssp {
        source: u32,
    },
    Cdlp {
        iterations: u32,
    },
    Lcc,
    RandomWalk {
        start: Option<u32>,
        walks: u64,
        length: u32,
        seed: u64,
    },
    Dfs {
        source: u32,
    },
    Degree,
}
