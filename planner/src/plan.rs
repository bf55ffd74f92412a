//! The plan handed from the planner to the executor: a validated algorithm call with typed
//! parameters (internal vertex ids already resolved), and how operators should run.

use crate::registry::{AlgorithmSpec, ParamValue};

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

/// A validated algorithm call: the algorithm, its source vertex (an internal id) and every
/// parameter in the order the algorithm declares them, defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct AlgoCall {
    pub spec: &'static AlgorithmSpec,
    pub source: Option<u32>,
    values: Vec<ParamValue>,
}

impl AlgoCall {
    /// A call of `spec` with every parameter at its default and no source.
    pub fn new(spec: &'static AlgorithmSpec) -> AlgoCall {
        AlgoCall {
            spec,
            source: None,
            values: spec.params.iter().map(|p| p.default_value()).collect(),
        }
    }

    /// The same call from `source`.
    pub fn from(mut self, source: u32) -> AlgoCall {
        self.source = Some(source);
        self
    }

    /// The same call with parameter `name` set to `value` (a checked value: the planner checks
    /// statements; programs calling this directly pass values of the declared kind). A name the
    /// algorithm does not declare changes nothing.
    pub fn with(mut self, name: &str, value: impl Into<ParamValue>) -> AlgoCall {
        if let Some(i) = self.spec.params.iter().position(|p| p.name == name) {
            self.values[i] = value.into();
        }
        self
    }

    /// The same call from `source`, or from nowhere in particular.
    pub fn with_source(mut self, source: Option<u32>) -> AlgoCall {
        self.source = source;
        self
    }

    /// The value of the whole-number parameter `name` (0 if the algorithm has no such one).
    pub fn int(&self, name: &str) -> u64 {
        match self.index(name).map(|i| self.values[i]) {
            Some(ParamValue::Int(n)) => n,
            Some(ParamValue::Float(x)) => x as u64,
            None => 0,
        }
    }

    /// The value of the real parameter `name` (0 if the algorithm has no such one).
    pub fn float(&self, name: &str) -> f64 {
        match self.index(name).map(|i| self.values[i]) {
            Some(ParamValue::Float(x)) => x,
            Some(ParamValue::Int(n)) => n as f64,
            None => 0.0,
        }
    }

    /// Every parameter and its value, in declaration order.
    pub fn params(&self) -> impl Iterator<Item = (&'static str, ParamValue)> + '_ {
        self.spec
            .params
            .iter()
            .zip(&self.values)
            .map(|(p, v)| (p.name, *v))
    }

    fn index(&self, name: &str) -> Option<usize> {
        let i = self.spec.params.iter().position(|p| p.name == name);
        // A kernel asking for a parameter its declaration lacks is a bug the tests must catch.
        debug_assert!(
            i.is_some(),
            "{} declares no parameter `{name}`",
            self.spec.name
        );
        i
    }
}
