//! Session settings (`SET name = value`, `SHOW SETTINGS`): one table of names, meanings and
//! validators, so that SET, SHOW SETTINGS, completion and the docs agree.

use std::path::PathBuf;

/// Settings show sizes the way the whole project does; re-exported for their readers.
pub use base::format_size;

use grammar::{Ident, Literal, Value};

use crate::error::PlanError;
use crate::plan::Mode;
use crate::suggest::did_you_mean;

/// The settings of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Worker threads.
    pub threads: usize,
    /// Block cache / in-memory budget for graph data, in bytes.
    pub cache: u64,
    /// Reads kept in flight by the I/O engine.
    pub io_depth: u32,
    /// EdgeMap strategy.
    pub mode: Mode,
    /// Working memory of an import, in bytes.
    pub import_memory: u64,
    /// `host:port` of each memory node.
    pub memory_nodes: Vec<String>,
    /// Shared secret presented to memory nodes.
    pub memory_token_file: Option<PathBuf>,
    /// This compute node's budget for DM data and attributes, in bytes.
    pub cn_cache: u64,
    /// How the compute node reaches memory nodes: TCP, or one-sided verbs over RDMA.
    pub memory_transport: storage::dm::TransportKind,
    /// Memory a RUN may use for its graph copy, attribute arrays and results, in bytes; a
    /// statement estimated to need more is refused before it starts.
    pub memory_limit: u64,
    /// How updates to remote state travel (DM graphs whose state exceeds `cn_cache`).
    pub dm_update: DmUpdate,
    /// `host:port` of each compute-node worker (`frontier compute`) RUN on a DM graph splits
    /// its work with; empty runs every query in this process alone.
    pub compute_nodes: Vec<String>,
    /// Shared secret presented to compute nodes; `None` uses `memory_token_file`.
    pub compute_token_file: Option<PathBuf>,
}

/// How a round's updates reach vertex state kept in the memory nodes (DMG §4.3): `Auto` picks
/// per iteration by the cost rule, the others force one strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmUpdate {
    Auto,
    /// One-sided verbs (CAS, FAA) and the nodes' pass-by-value apply, per batch of updates.
    Direct,
    /// Updates combined per destination on the compute node, sent by value into the owner's
    /// mailbox, applied by the owner to its window of the state.
    ValRd,
    /// As ValRD, but a long run of edges into one window is sent as a reference (source and
    /// value) whose list the owner reads itself.
    RefRd,
}

impl DmUpdate {
    /// The setting's spelling.
    pub fn name(self) -> &'static str {
        match self {
            DmUpdate::Auto => "auto",
            DmUpdate::Direct => "direct",
            DmUpdate::ValRd => "valrd",
            DmUpdate::RefRd => "refrd",
        }
    }
}

/// Name and one-line meaning of every setting, in display order.
pub const SETTINGS: &[(&str, &str)] = &[
    ("threads", "worker threads, for queries and the sorts of an import"),
    (
        "cache",
        "budget for graph data: a larger graph is read out of core, through a block cache and scan buffers within it",
    ),
    ("io_depth", "reads kept in flight by the I/O engine"),
    ("mode", "EdgeMap strategy: auto, push, block or pull"),
    (
        "import_memory",
        "working memory of an import; beyond it, external sort",
    ),
    ("memory_nodes", "host:port,... of the disaggregated store"),
    (
        "memory_token_file",
        "shared secret presented to memory nodes",
    ),
    (
        "cn_cache",
        "this compute node's budget for DM data and attributes",
    ),
    (
        "memory_transport",
        "tcp, or rdma: one-sided verbs over an RDMA device (TCP when there is none)",
    ),
    (
        "memory_limit",
        "memory a RUN may use; a statement estimated to need more is refused before it starts",
    ),
    (
        "dm_update",
        "how updates reach remote state: auto, direct, valrd or refrd",
    ),
    (
        "compute_nodes",
        "host:port,... of compute-node workers that share RUN on DM graphs ('' = this process only)",
    ),
    (
        "compute_token_file",
        "shared secret presented to compute nodes ('' = memory_token_file's)",
    ),
];

impl Settings {
    /// Defaults for this machine: `io_depth` is the device's probed concurrency when known.
    pub fn defaults(probed_io_depth: Option<u32>) -> Settings {
        let ram = total_memory_bytes().unwrap_or(8 << 30);
        Settings {
            threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            cache: ram / 4,
            io_depth: probed_io_depth.unwrap_or(32),
            mode: Mode::Auto,
            import_memory: ram / 4,
            memory_nodes: Vec::new(),
            memory_token_file: None,
            cn_cache: 64 << 20,
            memory_transport: storage::dm::TransportKind::Tcp,
            memory_limit: ram / 4 * 3,
            dm_update: DmUpdate::Auto,
            compute_nodes: Vec::new(),
            compute_token_file: None,
        }
    }

    /// Applies `SET name = value`, validating the value.
    pub fn set(&mut self, name: &Ident, value: &Literal) -> Result<(), PlanError> {
        let bad = |what: &str| {
            PlanError::new(
                value.pos,
                format!("bad value for setting `{}`: {what}", name.name),
            )
        };
        match name.name.to_ascii_lowercase().as_str() {
            "threads" => {
                self.threads = int_in(value, 1, 1024).map_err(|e| bad(&e))? as usize;
            }
            "cache" => self.cache = size(value, 4096).map_err(|e| bad(&e))?,
            "io_depth" => self.io_depth = int_in(value, 1, 4096).map_err(|e| bad(&e))? as u32,
            "mode" => {
                let w = word(value).map_err(|e| bad(&e))?;
                self.mode = match w.to_ascii_lowercase().as_str() {
                    "auto" => Mode::Auto,
                    "push" => Mode::Push,
                    "block" => Mode::Block,
                    "pull" => Mode::Pull,
                    other => {
                        return Err(bad(&format!(
                            "`{other}` is not a mode; expected auto, push, block or pull{}",
                            did_you_mean(other, ["auto", "push", "block", "pull"])
                        )))
                    }
                };
            }
            "import_memory" => self.import_memory = size(value, 1 << 20).map_err(|e| bad(&e))?,
            "memory_nodes" => {
                self.memory_nodes =
                    host_ports(&word(value).map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
            }
            "memory_token_file" => {
                self.memory_token_file = optional_path(&word(value).map_err(|e| bad(&e))?);
            }
            "compute_nodes" => {
                let nodes = host_ports(&word(value).map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
                if let Some(dup) = nodes
                    .iter()
                    .enumerate()
                    .find_map(|(i, n)| nodes[..i].contains(n).then_some(n))
                {
                    return Err(bad(&format!("`{dup}` is named twice")));
                }
                self.compute_nodes = nodes;
            }
            "compute_token_file" => {
                self.compute_token_file = optional_path(&word(value).map_err(|e| bad(&e))?);
            }
            // As low as 16 bytes, so that even a test graph of ten vertices can have its
            // kernel state pushed out to remote memory.
            "cn_cache" => self.cn_cache = size(value, 16).map_err(|e| bad(&e))?,
            "memory_limit" => self.memory_limit = size(value, 1 << 20).map_err(|e| bad(&e))?,
            "memory_transport" => {
                let w = word(value).map_err(|e| bad(&e))?;
                let names = storage::dm::TransportKind::ALL.map(|k| k.name());
                self.memory_transport = storage::dm::TransportKind::parse(&w).ok_or_else(|| {
                    bad(&format!(
                        "`{w}` is not a transport; expected tcp or rdma{}",
                        did_you_mean(&w, names)
                    ))
                })?;
            }
            "dm_update" => {
                let w = word(value).map_err(|e| bad(&e))?;
                let all = [
                    DmUpdate::Auto,
                    DmUpdate::Direct,
                    DmUpdate::ValRd,
                    DmUpdate::RefRd,
                ];
                self.dm_update = all
                    .into_iter()
                    .find(|u| u.name().eq_ignore_ascii_case(&w))
                    .ok_or_else(|| {
                        bad(&format!(
                            "`{w}` is not an update strategy; expected auto, direct, valrd or refrd{}",
                            did_you_mean(&w, all.map(DmUpdate::name))
                        ))
                    })?;
            }
            other => {
                return Err(PlanError::new(
                    name.pos,
                    format!(
                        "unknown setting `{other}`{}; SHOW SETTINGS lists them",
                        did_you_mean(other, SETTINGS.iter().map(|(n, _)| *n))
                    ),
                ))
            }
        }
        Ok(())
    }

    /// `(name, value, meaning)` rows for SHOW SETTINGS.
    pub fn rows(&self) -> Vec<(String, String, String)> {
        SETTINGS
            .iter()
            .map(|(name, meaning)| {
                let value = match *name {
                    "threads" => self.threads.to_string(),
                    "cache" => format_size(self.cache),
                    "io_depth" => self.io_depth.to_string(),
                    "mode" => self.mode.name().to_string(),
                    "import_memory" => format_size(self.import_memory),
                    "memory_nodes" => self.memory_nodes.join(","),
                    "memory_token_file" => self
                        .memory_token_file
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                    "cn_cache" => format_size(self.cn_cache),
                    "memory_transport" => self.memory_transport.name().to_string(),
                    "memory_limit" => format_size(self.memory_limit),
                    "dm_update" => self.dm_update.name().to_string(),
                    "compute_nodes" => self.compute_nodes.join(","),
                    "compute_token_file" => self
                        .compute_token_file
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                (name.to_string(), value, meaning.to_string())
            })
            .collect()
    }
}

/// A comma-separated list of `host:port` (empty parts ignored, so '' is no address).
fn host_ports(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let ok = part
            .rsplit_once(':')
            .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok());
        if !ok {
            return Err(format!("`{part}` is not host:port"));
        }
        out.push(part.to_string());
    }
    Ok(out)
}

/// A path setting: '' means none.
fn optional_path(s: &str) -> Option<PathBuf> {
    (!s.is_empty()).then(|| PathBuf::from(s))
}

fn int_in(v: &Literal, min: i64, max: i64) -> Result<i64, String> {
    match &v.value {
        Value::Int(n) if (min..=max).contains(n) => Ok(*n),
        Value::Int(n) => Err(format!("{n} is out of range {min}..={max}")),
        Value::BigInt(n) => Err(format!("{n} is out of range {min}..={max}")),
        other => Err(format!("expected a whole number, got {}", describe(other))),
    }
}

fn size(v: &Literal, min: u64) -> Result<u64, String> {
    let n = match &v.value {
        Value::Size(n) => *n,
        Value::Int(n) if *n >= 0 => *n as u64,
        other => {
            return Err(format!(
                "expected a size such as '64MB' or '2GiB', got {}",
                describe(other)
            ))
        }
    };
    if n < min {
        // '4KB' (4000 bytes) under a 4 KiB minimum is the classic slip: say how units count.
        let hint = if n >= min / 2 && min >= 1024 {
            format!(
                " (KB, MB and GB count powers of 1000, so '4KB' is 4000 bytes; KiB, MiB and GiB count \
                 powers of 1024, so '4KiB' is 4096 bytes): write at least {}",
                binary_text(min)
            )
        } else {
            format!(": write at least {}", binary_text(min))
        };
        return Err(format!(
            "{} is below the minimum {}{hint}",
            if n < 1024 {
                format_size(n)
            } else {
                format!("{n} bytes")
            },
            format_size(min)
        ));
    }
    Ok(n)
}

/// A size as the shortest exact binary-unit text: `4KiB`, `1MiB`, `16B`.
fn binary_text(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.trailing_zeros() >= shift {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

fn word(v: &Literal) -> Result<String, String> {
    match &v.value {
        Value::Word(w) | Value::Str(w) => Ok(w.clone()),
        other => Err(format!(
            "expected a word or a quoted string, got {}",
            describe(other)
        )),
    }
}

/// A literal as an error message shows it.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Int(n) => format!("the number {n}"),
        Value::BigInt(n) => format!("the number {n}"),
        Value::Float(f) => format!("the number {f}"),
        Value::Str(s) => format!("the string '{s}'"),
        Value::Size(n) => format!("the size {}", format_size(*n)),
        Value::Word(w) => format!("`{w}`"),
    }
}

/// Total RAM from /proc/meminfo, where there is one.
fn total_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use grammar::Pos;

    fn lit(value: Value) -> Literal {
        Literal {
            value,
            pos: Pos { line: 1, col: 9 },
        }
    }
    fn ident(name: &str) -> Ident {
        Ident {
            name: name.into(),
            pos: Pos { line: 1, col: 5 },
        }
    }

    #[test]
    fn valid_values_apply() {
        let mut s = Settings::defaults(None);
        s.set(&ident("threads"), &lit(Value::Int(2))).unwrap();
        s.set(&ident("cache"), &lit(Value::Size(65536))).unwrap();
        s.set(&ident("MODE"), &lit(Value::Word("block".into())))
            .unwrap();
        s.set(
            &ident("memory_nodes"),
            &lit(Value::Str("127.0.0.1:7000, h:1".into())),
        )
        .unwrap();
        assert_eq!((s.threads, s.cache, s.mode), (2, 65536, Mode::Block));
        assert_eq!(s.memory_nodes, vec!["127.0.0.1:7000", "h:1"]);
    }

    #[test]
    fn update_strategies_are_words_with_a_suggestion() {
        let mut s = Settings::defaults(None);
        assert_eq!(s.dm_update, DmUpdate::Auto);
        s.set(&ident("dm_update"), &lit(Value::Word("ValRD".into())))
            .unwrap();
        assert_eq!(s.dm_update, DmUpdate::ValRd);
        let e = s
            .set(&ident("dm_update"), &lit(Value::Word("refrdd".into())))
            .unwrap_err();
        assert!(e.message.contains("did you mean `refrd`"), "{}", e.message);
        assert!(s
            .rows()
            .iter()
            .any(|r| r.0 == "dm_update" && r.1 == "valrd"));
    }

    #[test]
    fn compute_nodes_are_checked_host_ports() {
        let mut s = Settings::defaults(None);
        assert!(s.compute_nodes.is_empty());
        s.set(
            &ident("compute_nodes"),
            &lit(Value::Str("127.0.0.1:7100,h:2".into())),
        )
        .unwrap();
        assert_eq!(s.compute_nodes, vec!["127.0.0.1:7100", "h:2"]);
        assert!(s
            .rows()
            .iter()
            .any(|r| r.0 == "compute_nodes" && r.1 == "127.0.0.1:7100,h:2"));
        for bad in ["h:99999", "a:1,a:1", ":5"] {
            let e = s
                .set(&ident("compute_nodes"), &lit(Value::Str(bad.into())))
                .unwrap_err();
            assert!(e.message.contains("compute_nodes"), "{}", e.message);
        }
        s.set(&ident("compute_nodes"), &lit(Value::Str("".into())))
            .unwrap();
        assert!(s.compute_nodes.is_empty());
        s.set(&ident("compute_token_file"), &lit(Value::Str("/t".into())))
            .unwrap();
        assert_eq!(s.compute_token_file, Some(PathBuf::from("/t")));
    }

    #[test]
    fn unknown_names_suggest_the_nearest() {
        let mut s = Settings::defaults(None);
        let e = s.set(&ident("thraeds"), &lit(Value::Int(2))).unwrap_err();
        assert!(
            e.message.contains("did you mean `threads`"),
            "{}",
            e.message
        );
        assert_eq!(e.pos.col, 5);
    }

    #[test]
    fn a_decimal_size_under_a_binary_minimum_is_explained() {
        let mut s = Settings::defaults(None);
        let e = s.set(&ident("cache"), &lit(Value::Size(4000))).unwrap_err();
        assert!(
            e.message
                .contains("4000 bytes is below the minimum 4.0 KiB"),
            "{}",
            e.message
        );
        assert!(e.message.contains("'4KiB' is 4096 bytes"), "{}", e.message);
        assert!(e.message.ends_with("write at least 4KiB"), "{}", e.message);
        let e = s
            .set(&ident("memory_limit"), &lit(Value::Size(1_000_000)))
            .unwrap_err();
        assert!(e.message.ends_with("write at least 1MiB"), "{}", e.message);
        s.set(&ident("cache"), &lit(Value::Size(4096))).unwrap();
    }

    #[test]
    fn bad_values_name_the_setting() {
        let mut s = Settings::defaults(None);
        for (name, v) in [
            ("threads", Value::Int(0)),
            ("threads", Value::Str("x".into())),
            ("cache", Value::Int(10)),
            ("mode", Value::Word("puhs".into())),
            ("memory_nodes", Value::Str("nohostport".into())),
        ] {
            let e = s.set(&ident(name), &lit(v)).unwrap_err();
            assert!(e.message.contains(name), "{}", e.message);
            assert_eq!(e.pos.col, 9);
        }
    }
}
