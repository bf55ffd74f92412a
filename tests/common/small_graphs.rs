//! Small generated test graphs, so tests that compare against networkx need no data files.

/// A small deterministic generator (xorshift).
pub struct Rng(pub u64);

impl Rng {
    /// The next value below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A test graph: its edge-list text, its vertex-file text, and how CREATE reads it.
pub struct Graph {
    pub name: &'static str,
    pub edges: String,
    pub vertices: String,
    pub options: &'static str,
}
