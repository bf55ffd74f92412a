//! The catalog: graph name → metadata, for one data directory.
//!
//! Layout of a data directory:
//!
//! ```text
//! DATA/lock                     writer lock (flock), held by the one process that may change DATA
//! DATA/catalog/catalog.json     the catalog: a checksummed JSON file, replaced whole on every commit
//! DATA/graphs/NAME-GEN.fgraph   immutable, self-describing graph files, one per CREATE
//! DATA/lost+found/              graph files the catalog did not list, moved aside (never deleted)
//! DATA/tmp/frontier-import-*    importer scratch space, removed at open
//! DATA/history                  REPL history
//! ```
//!
//! Design. The catalog is a small file rather than an embedded database, for three reasons:
//! - Safety: a catalog that is damaged (truncated, a flipped bit: its checksum fails) or missing
//!   is *known* to be so, and is rebuilt from the graph files, which describe themselves (graph
//!   name, generation, a random file id, directedness, weights, source, creation time; see
//!   [`crate::blockfile::format::FileIdentity`]). The damaged file is kept beside the new one as
//!   `catalog.json.damaged-SECS`. Nothing is ever deleted because the catalog does not know it:
//!   unlisted graph files are moved to `DATA/lost+found/` with a warning naming where.
//! - Read-only use: graph files are immutable and the catalog file is only replaced by a rename,
//!   so another process can read the last committed state without any lock. A session that
//!   finds the writer lock held (or is asked for `--read-only`) opens read-only: it reads the
//!   catalog file afresh at every lookup, and every change is refused with an error naming the
//!   lock.
//! - Identity: each entry records its file's random id, and [`Catalog::checked_path`] refuses a
//!   file carrying another id (another graph's file copied over this one) instead of answering
//!   with the wrong graph.
//!
//! Crash safety: a graph file is written under a temporary name, fsync'd and renamed before it is
//! registered; registration is one atomic replacement of the catalog file. A crash before it
//! leaves an unlisted file, which the next writer moves to `lost+found/` (it may be the new graph
//! of an interrupted CREATE OR REPLACE; `REPAIR CATALOG` takes back from there any graph the
//! catalog lacks). A
//! replaced or dropped graph's file is deleted only after the new catalog is durable.

mod file;
pub mod lock;
pub mod rebuild;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::blockfile::open::read_identity;
use crate::error::{Result, StoreError};
use file::{CatalogState, Loaded};
use lock::DirLock;
pub use rebuild::Finding;
use rebuild::Sources;

/// Where a graph's data lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StorageKind {
    /// A block file under `DATA/graphs`, read in memory or out of core by cache size.
    Blockfile,
    /// A block file that is always loaded whole into memory.
    Memory,
    /// A pool of remote memory nodes.
    Dm,
}

impl StorageKind {
    /// The keyword a user writes.
    pub fn name(self) -> &'static str {
        match self {
            StorageKind::Blockfile => "blockfile",
            StorageKind::Memory => "memory",
            StorageKind::Dm => "dm",
        }
    }
}

/// One catalog entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphMeta {
    pub name: String,
    /// The graph file, relative to the data directory (always `graphs/NAME-GEN.fgraph`).
    pub file: PathBuf,
    pub format_version: u32,
    pub vertices: u64,
    /// Edges as the user counts them (an undirected edge once).
    pub edges: u64,
    /// Stored arcs per direction.
    pub arcs: u64,
    pub directed: bool,
    pub weighted: bool,
    /// The path the graph was imported from.
    pub source: String,
    /// Seconds since the Unix epoch.
    pub created_at: u64,
    pub storage: StorageKind,
    pub file_bytes: u64,
    /// `host:port` of each memory node, for `STORAGE dm`.
    #[serde(default)]
    pub memory_nodes: Vec<String>,
    /// Store-specific extra metadata (e.g. DM tiny-chunk table), as JSON.
    #[serde(default)]
    pub extra: Option<serde_json::Value>,
    /// The random id in the file's `Identity` section; `None` for format 1 files, which have
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
    /// What the import read, kept, merged and skipped (empty for graphs made before it was
    /// recorded, and for graphs a catalog rebuild recovered from their files).
    #[serde(default)]
    pub import: crate::import::ImportReport,
    /// Bytes of the vertices' string keys in the file (their two sections); 0 when the
    /// vertices have integer ids.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub key_bytes: u64,
}

impl GraphMeta {
    /// Bytes the graph takes loaded whole (in memory): at least its file, more when the file
    /// packs what memory holds plainly (see [`crate::blockfile::memory::loaded_bytes`]).
    pub fn loaded_bytes(&self) -> u64 {
        let plain = crate::blockfile::memory::loaded_bytes(
            self.vertices,
            self.arcs,
            self.directed,
            self.weighted,
        )
        .saturating_add(self.key_bytes);
        plain.max(self.file_bytes)
    }

    /// Whether the graph's vertices have string keys.
    pub fn string_keys(&self) -> bool {
        self.key_bytes > 0
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Why a session cannot change the data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOnlyReason {
    /// The user asked for it (`--read-only`).
    Requested,
    /// Another process holds the writer lock.
    Locked { lock: PathBuf, holder: Option<u32> },
    /// This process may not write in the directory (permissions, a read-only file system).
    Unwritable { path: PathBuf, why: String },
}

impl std::fmt::Display for ReadOnlyReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadOnlyReason::Requested => write!(f, "it was opened with --read-only"),
            ReadOnlyReason::Locked { lock, holder } => {
                write!(f, "another frontier process")?;
                if let Some(pid) = holder {
                    write!(f, " (pid {pid})")?;
                }
                write!(
                    f,
                    " holds the data directory's lock {}; close that session to make changes",
                    lock.display()
                )
            }
            ReadOnlyReason::Unwritable { path, why } => write!(
                f,
                "this process cannot write {} ({why}); give it write access to the data \
                 directory, or use another --data, to make changes",
                path.display()
            ),
        }
    }
}

/// A fresh graph file name handed out by [`Catalog::new_graph_file`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGraphFile {
    /// `graphs/NAME-GEN.fgraph`, relative to the data directory.
    pub file: PathBuf,
    /// The generation in that name.
    pub generation: u64,
}

/// How a session may use the directory.
enum Access {
    /// The writer: holds the lock; the committed state is kept in memory.
    Write { _lock: DirLock, state: CatalogState },
    /// A reader: no lock; the catalog file is read at every lookup.
    Read { why: ReadOnlyReason },
}

/// The catalog of one data directory.
pub struct Catalog {
    dir: PathBuf,
    access: Access,
}

/// The catalog file of data directory `dir`.
pub fn catalog_path(dir: &Path) -> PathBuf {
    dir.join("catalog").join("catalog.json")
}

impl Catalog {
    /// Opens (creating if needed) data directory `dir` for writing. A damaged or missing catalog
    /// is rebuilt from the graph files; unlisted graph files are moved to `lost+found/` and
    /// scratch files removed. Returns the catalog and warnings for the user. When another
    /// process holds the directory the error is [`StoreError::Locked`], at once.
    pub fn open(dir: &Path) -> Result<(Catalog, Vec<String>)> {
        for sub in ["", "graphs", "tmp", "catalog"] {
            let d = dir.join(sub);
            std::fs::create_dir_all(&d).map_err(|e| StoreError::io(&d, e))?;
        }
        let lock = DirLock::acquire(dir)?;
        let path = catalog_path(dir);
        let mut warnings = Vec::new();
        let state = match file::load(&path)? {
            Loaded::Sound(state) => state,
            Loaded::Missing if !rebuild::has_graph_files(dir)? => {
                let state = CatalogState::default();
                file::store(&path, &state)?;
                state
            }
            loaded => {
                let problem = match loaded {
                    Loaded::Damaged(why) => {
                        let kept = keep_damaged(&path)?;
                        format!(
                            "catalog {} is damaged ({why}); kept it as {}",
                            path.display(),
                            kept.display()
                        )
                    }
                    _ if has_legacy_catalog(dir) => format!(
                        "catalog {} is missing ({} holds the catalog of an older frontier, \
                         which this build does not read; it is left as it is)",
                        path.display(),
                        dir.join("catalog").display()
                    ),
                    _ => format!("catalog {} is missing", path.display()),
                };
                let (state, findings) =
                    rebuild::rebuild(dir, &CatalogState::default(), Sources::Graphs)?;
                file::store(&path, &state)?;
                warnings.push(format!(
                    "{problem}; rebuilt it from the graph files in {}: {}",
                    dir.join("graphs").display(),
                    summary(&findings)
                ));
                warnings.extend(findings.iter().map(|f| f.to_string()));
                state
            }
        };
        let tidied = rebuild::tidy(dir, &state)?;
        warnings.extend(tidied.iter().map(|f| f.to_string()));
        for meta in state.graphs.values() {
            if !dir.join(&meta.file).exists() {
                warnings.push(format!(
                    "graph `{}`: its file {} is missing; put it back, or run REPAIR CATALOG \
                     to remove the entry",
                    meta.name,
                    dir.join(&meta.file).display()
                ));
            }
        }
        let catalog = Catalog {
            dir: dir.to_path_buf(),
            access: Access::Write { _lock: lock, state },
        };
        Ok((catalog, warnings))
    }

    /// Opens `dir` read-only: nothing under it is created, changed or removed. A damaged or
    /// missing catalog is not repaired; the graphs are listed from the graph files instead, with
    /// a warning.
    pub fn open_read_only(dir: &Path, why: ReadOnlyReason) -> Result<(Catalog, Vec<String>)> {
        if !dir.is_dir() {
            return Err(StoreError::Catalog {
                path: dir.to_path_buf(),
                message: "no such data directory (a read-only session does not create one)".into(),
            });
        }
        let path = catalog_path(dir);
        let mut warnings = Vec::new();
        let problem = match file::load(&path)? {
            Loaded::Sound(_) => None,
            Loaded::Missing if !rebuild::has_graph_files(dir)? => None,
            Loaded::Missing => Some("is missing".to_string()),
            Loaded::Damaged(why) => Some(format!("is damaged ({why})")),
        };
        if let Some(problem) = problem {
            warnings.push(format!(
                "catalog {} {problem}; this read-only session lists the graphs from the graph \
                 files in {}; open the directory for writing (no --read-only, no other frontier \
                 process) to rebuild it",
                path.display(),
                dir.join("graphs").display()
            ));
        }
        let catalog = Catalog {
            dir: dir.to_path_buf(),
            access: Access::Read { why },
        };
        Ok((catalog, warnings))
    }

    /// Why this session cannot make changes, or `None` when it can.
    pub fn read_only(&self) -> Option<&ReadOnlyReason> {
        match &self.access {
            Access::Write { .. } => None,
            Access::Read { why } => Some(why),
        }
    }

    /// The error every change in a read-only session gets.
    pub fn read_only_error(&self, what: &str) -> Option<StoreError> {
        self.read_only().map(|why| StoreError::ReadOnly {
            dir: self.dir.clone(),
            what: what.to_string(),
            why: why.to_string(),
        })
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Scratch space for importers.
    pub fn tmp_dir(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    /// A fresh, never-used path for a new graph file of `name`.
    pub fn new_graph_file(&mut self, name: &str) -> Result<NewGraphFile> {
        let dir = self.dir.clone();
        self.commit("CREATE GRAPH", |state| loop {
            let generation = state.next_generation.max(1);
            state.next_generation = generation + 1;
            let file = file::graph_file(&format!("{name}-{generation}.fgraph"));
            if !dir.join(&file).exists() {
                return Ok(NewGraphFile { file, generation });
            }
        })
    }

    /// The absolute path of a graph's file, unchecked (see [`Catalog::checked_path`]).
    pub fn graph_path(&self, meta: &GraphMeta) -> PathBuf {
        self.dir.join(&meta.file)
    }

    /// The absolute path of a graph's file, after checking that the file there is the one the
    /// entry registered (same file id). Another graph's file copied over it is an error naming
    /// both, never that graph's answers.
    pub fn checked_path(&self, meta: &GraphMeta) -> Result<PathBuf> {
        let path = self.graph_path(meta);
        let Some(expected) = &meta.file_id else {
            return Ok(path);
        };
        let (_, identity) = read_identity(&path)?;
        let found = match identity {
            Some(id) if id.file_id == *expected => return Ok(path),
            Some(id) => format!(
                "it carries file id {} of graph `{}` (generation {}), the catalog registered \
                 file id {expected}",
                id.file_id, id.graph, id.generation
            ),
            None => format!(
                "it is a format 1 file without a file id, the catalog registered file id \
                 {expected}"
            ),
        };
        Err(StoreError::WrongFile {
            graph: meta.name.clone(),
            path,
            found,
        })
    }

    /// The entry of `name`.
    pub fn get(&self, name: &str) -> Result<Option<GraphMeta>> {
        Ok(self.state()?.graphs.get(name).cloned())
    }

    /// All entries, by name.
    pub fn list(&self) -> Result<Vec<GraphMeta>> {
        Ok(self.state()?.graphs.values().cloned().collect())
    }

    /// Registers `meta` durably. Without `replace`, an existing graph of that name is an error
    /// (and the new file is left for the caller to remove). With it, the old file is removed
    /// once the new entry is on disk.
    pub fn register(&mut self, meta: &GraphMeta, replace: bool) -> Result<()> {
        let old = self.commit("CREATE GRAPH", |state| {
            if !replace && state.graphs.contains_key(&meta.name) {
                return Err(StoreError::GraphExists(meta.name.clone()));
            }
            Ok(state.graphs.insert(meta.name.clone(), meta.clone()))
        })?;
        if let Some(old) = old {
            if old.file != meta.file {
                rebuild::remove_quietly(&self.graph_path(&old));
            }
        }
        Ok(())
    }

    /// Removes `name` from the catalog, then its file. Returns the removed entry.
    pub fn drop_graph(&mut self, name: &str) -> Result<Option<GraphMeta>> {
        if let Some(e) = self.read_only_error("DROP GRAPH") {
            return Err(e);
        }
        if self.get(name)?.is_none() {
            return Ok(None);
        }
        let old = self.commit("DROP GRAPH", |state| Ok(state.graphs.remove(name)))?;
        if let Some(old) = &old {
            rebuild::remove_quietly(&self.graph_path(old));
        }
        Ok(old)
    }

    /// `REPAIR CATALOG`: rebuilds the catalog from the graph files (keeping entries whose file
    /// is still theirs, and taking back from `lost+found/` graphs the catalog lacks), moves
    /// unlisted files aside, and reports what it found.
    pub fn repair(&mut self) -> Result<Vec<Finding>> {
        let dir = self.dir.clone();
        let mut findings = self.commit("REPAIR CATALOG", |state| {
            let (rebuilt, findings) =
                rebuild::rebuild(&dir, state, Sources::GraphsAndLostAndFound)?;
            *state = rebuilt;
            Ok(findings)
        })?;
        let state = self.state()?;
        findings.extend(rebuild::tidy(&self.dir, &state)?);
        Ok(findings)
    }

    /// The committed state: the writer's copy, or for a reader the catalog file as it is now
    /// (or, when that is damaged or missing, what the graph files describe).
    fn state(&self) -> Result<Cow<'_, CatalogState>> {
        match &self.access {
            Access::Write { state, .. } => Ok(Cow::Borrowed(state)),
            Access::Read { .. } => match file::load(&catalog_path(&self.dir))? {
                Loaded::Sound(state) => Ok(Cow::Owned(state)),
                Loaded::Missing | Loaded::Damaged(_) => Ok(Cow::Owned(
                    rebuild::rebuild(&self.dir, &CatalogState::default(), Sources::Graphs)?.0,
                )),
            },
        }
    }

    /// Applies `change` to a copy of the state, writes it durably, and only then makes it the
    /// state: a failed write changes nothing. `what` names the statement for read-only errors.
    fn commit<T>(
        &mut self,
        what: &str,
        change: impl FnOnce(&mut CatalogState) -> Result<T>,
    ) -> Result<T> {
        if let Some(e) = self.read_only_error(what) {
            return Err(e);
        }
        let path = catalog_path(&self.dir);
        let Access::Write { state, .. } = &mut self.access else {
            unreachable!("read-only sessions were refused above")
        };
        let mut next = state.clone();
        let out = change(&mut next)?;
        file::store(&path, &next)?;
        *state = next;
        Ok(out)
    }
}

/// Whether `DATA/catalog` holds the embedded database older builds kept the catalog in.
fn has_legacy_catalog(dir: &Path) -> bool {
    ["conf", "db"]
        .iter()
        .any(|f| dir.join("catalog").join(f).is_file())
}

/// Renames a damaged catalog file out of the way (never deletes it); returns its new path.
fn keep_damaged(path: &Path) -> Result<PathBuf> {
    let mut kept = path.with_extension(format!("json.damaged-{}", now_secs()));
    let mut n = 1;
    while kept.exists() {
        kept = path.with_extension(format!("json.damaged-{}-{n}", now_secs()));
        n += 1;
    }
    std::fs::rename(path, &kept).map_err(|e| StoreError::io(path, e))?;
    Ok(kept)
}

/// "2 graphs (a, b)" for a rebuild's findings.
fn summary(findings: &[Finding]) -> String {
    let names: Vec<&str> = findings
        .iter()
        .filter(|f| f.action.starts_with("recovered") || f.action.starts_with("listed"))
        .filter_map(|f| f.graph.as_deref())
        .collect();
    match names.len() {
        0 => "found no readable graph file".to_string(),
        1 => format!("found 1 graph ({})", names[0]),
        n => format!("found {n} graphs ({})", names.join(", ")),
    }
}

/// Seconds since the Unix epoch, for `created_at`.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod tests;
