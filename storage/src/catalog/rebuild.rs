//! Rebuilding the catalog from the self-describing graph files, and tidying the data directory.
//!
//! Every graph file names its graph, generation and file id (the `Identity` section, see
//! [`crate::blockfile::format`]), so the catalog can always be recovered from `graphs/`: for each
//! graph name the newest readable file wins. Version 1 files, which predate the identity, are
//! recognised by their `NAME-GENERATION.fgraph` name. `REPAIR CATALOG` also looks in
//! `lost+found/` for graphs the catalog lacks, and moves what it adopts back into `graphs/`.
//!
//! Tidying never deletes a graph file the catalog does not know: it moves it to
//! `DATA/lost+found/` and says so. It deletes only frontier's own scratch files: a graph file's
//! temporary name (`*.fgraph.tmp-PID`, written before the rename that publishes it) and the
//! importer's `tmp/frontier-import-*` directories; both belong to the lock holder, so at open no
//! one else can be using them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::file::{graph_file, CatalogState};
use super::{GraphMeta, StorageKind};
use crate::blockfile::format::{SectionKind, FORMAT_VERSION};
use crate::blockfile::open::read_identity;
use crate::error::{Result, StoreError};

/// Graph files end in this.
pub const GRAPH_SUFFIX: &str = ".fgraph";
/// Where unlisted graph files are moved.
pub const LOST_AND_FOUND: &str = "lost+found";
/// The importer's scratch directories under `tmp/` start with this.
pub const IMPORT_SCRATCH_PREFIX: &str = "frontier-import-";

/// One thing a rebuild, repair or tidy found, for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The graph concerned, when known.
    pub graph: Option<String>,
    /// The file concerned, relative to the data directory.
    pub file: PathBuf,
    /// What was found and done, in words.
    pub action: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.graph {
            Some(g) => write!(f, "graph `{g}`: {}: {}", self.file.display(), self.action),
            None => write!(f, "{}: {}", self.file.display(), self.action),
        }
    }
}

/// A readable graph file found under `graphs/`.
struct Candidate {
    meta: GraphMeta,
    generation: u64,
    note: Option<String>,
    from_lost_and_found: bool,
}

impl Candidate {
    /// Which file of a graph wins: the newest generation, and among copies of one file the one
    /// still under the name it was written as (a copy under another graph's name loses).
    fn rank(&self) -> (u64, bool) {
        let own_name = format!("{}-{}{GRAPH_SUFFIX}", self.meta.name, self.generation);
        let named_as_written = self.meta.file.file_name() == Some(own_name.as_ref());
        (self.generation, named_as_written)
    }
}

/// Where [`rebuild`] looks for graph files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sources {
    /// `DATA/graphs` only (an automatic rebuild: what was moved aside stays aside).
    Graphs,
    /// `DATA/graphs`, then `DATA/lost+found` for graphs not found there (`REPAIR CATALOG`):
    /// such a file is moved back into `graphs/`.
    GraphsAndLostAndFound,
}

/// Rebuilds the catalog from the graph files. An entry of `previous` whose file is still there
/// with the same id is kept as it is (it may carry what no file records, such as a memory-node
/// layout); every other graph gets an entry made from its file.
pub fn rebuild(
    dir: &Path,
    previous: &CatalogState,
    sources: Sources,
) -> Result<(CatalogState, Vec<Finding>)> {
    let mut findings = Vec::new();
    let mut best: BTreeMap<String, Candidate> = BTreeMap::new();
    let mut next_generation = previous.next_generation;
    for (rel, path) in graph_files(dir)? {
        let candidate = match candidate(&rel, &path, &rel) {
            Ok(c) => c,
            Err(why) => {
                findings.push(Finding {
                    graph: None,
                    file: rel,
                    action: format!("not a readable graph file ({why})"),
                });
                continue;
            }
        };
        next_generation = next_generation.max(candidate.generation + 1);
        let name = candidate.meta.name.clone();
        match best.get(&name) {
            Some(b) if b.rank() >= candidate.rank() => {}
            _ => {
                best.insert(name, candidate);
            }
        }
    }
    if sources == Sources::GraphsAndLostAndFound {
        for (rel, path) in lost_and_found_files(dir)? {
            let Ok(c) = candidate(&rel, &path, &rel) else {
                continue;
            };
            let newer = best
                .get(&c.meta.name)
                .is_none_or(|b| b.from_lost_and_found && b.rank() < c.rank());
            if newer {
                next_generation = next_generation.max(c.generation + 1);
                best.insert(
                    c.meta.name.clone(),
                    Candidate {
                        from_lost_and_found: true,
                        ..c
                    },
                );
            }
        }
        for c in best.values_mut().filter(|c| c.from_lost_and_found) {
            let found = c.meta.file.clone();
            let back = graph_file(&format!("{}-{}{GRAPH_SUFFIX}", c.meta.name, c.generation));
            if dir.join(&back).exists() {
                findings.push(Finding {
                    graph: Some(c.meta.name.clone()),
                    file: found,
                    action: format!("left in place: {} is taken", back.display()),
                });
                c.meta.file = PathBuf::new();
                continue;
            }
            std::fs::rename(dir.join(&found), dir.join(&back))
                .map_err(|e| StoreError::io(dir.join(&found), e))?;
            let note = format!("moved back from {}", found.display());
            c.note = Some(match c.note.take() {
                Some(n) => format!("{note}; {n}"),
                None => note,
            });
            c.meta.file = back;
        }
        best.retain(|_, c| !c.meta.file.as_os_str().is_empty());
    }
    let mut state = CatalogState {
        next_generation,
        graphs: BTreeMap::new(),
    };
    for (name, c) in best {
        let kept = previous
            .graphs
            .get(&name)
            .filter(|old| old.file == c.meta.file && old.file_id == c.meta.file_id);
        let (meta, action) = match kept {
            Some(old) => (old.clone(), "listed, unchanged".to_string()),
            None => {
                let mut action = "recovered from the file".to_string();
                if let Some(n) = &c.note {
                    action.push_str(&format!(" ({n})"));
                }
                (c.meta, action)
            }
        };
        findings.push(Finding {
            graph: Some(name.clone()),
            file: meta.file.clone(),
            action,
        });
        state.graphs.insert(name, meta);
    }
    for (name, old) in &previous.graphs {
        if !state.graphs.contains_key(name) {
            findings.push(Finding {
                graph: Some(name.clone()),
                file: old.file.clone(),
                action: "removed from the catalog: graphs/ holds no readable file of this graph"
                    .into(),
            });
        }
    }
    Ok((state, findings))
}

/// The catalog entry the graph file at `path` (`rel` to the data directory) describes; `named`
/// is the name it was given, for format 1 files that carry no identity.
fn candidate(rel: &Path, path: &Path, named: &Path) -> std::result::Result<Candidate, String> {
    let (sb, identity) = read_identity(path).map_err(|e| short_reason(&e))?;
    let file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mut note = None;
    let (name, generation, file_id, source, created_at, storage) = match identity {
        Some(id) => {
            let storage = if id.storage == StorageKind::Dm {
                note = Some(
                    "it was STORAGE dm; its memory-node layout was only in the catalog, so it \
                     is read from this file until CREATE OR REPLACE ... STORAGE dm loads it again"
                        .to_string(),
                );
                StorageKind::Blockfile
            } else {
                id.storage
            };
            (
                id.graph,
                id.generation,
                Some(id.file_id),
                id.source,
                id.created_at,
                storage,
            )
        }
        None => {
            let (name, generation) = name_and_generation(named)
                .ok_or("a format 1 file whose name is not NAME-GENERATION.fgraph")?;
            note = Some("a format 1 file without identity: name taken from the file name".into());
            let created_at = std::fs::metadata(path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs())
                .unwrap_or(0);
            (
                name,
                generation,
                None,
                String::new(),
                created_at,
                StorageKind::Blockfile,
            )
        }
    };
    Ok(Candidate {
        meta: GraphMeta {
            name,
            file: rel.to_path_buf(),
            format_version: sb.version.min(FORMAT_VERSION),
            vertices: sb.vertices,
            edges: sb.edges,
            arcs: sb.arcs,
            directed: sb.directed,
            weighted: sb.weighted,
            source,
            created_at,
            storage,
            file_bytes,
            memory_nodes: Vec::new(),
            extra: None,
            import: Default::default(),
            file_id,
            key_bytes: [SectionKind::KeyOffsets, SectionKind::KeyBytes]
                .iter()
                .filter_map(|&k| sb.section(k))
                .map(|s| s.length)
                .sum(),
        },
        generation,
        note,
        from_lost_and_found: false,
    })
}

/// The reason part of a storage error, without the path the finding already names.
fn short_reason(e: &StoreError) -> String {
    match e {
        StoreError::Corrupt { why, .. } => why.clone(),
        StoreError::Io { source, .. } => source.to_string(),
        other => other.to_string(),
    }
}

/// `(name, generation)` from `graphs/NAME-GENERATION.fgraph`.
fn name_and_generation(rel: &Path) -> Option<(String, u64)> {
    let stem = rel.file_name()?.to_str()?.strip_suffix(GRAPH_SUFFIX)?;
    let (name, generation) = stem.rsplit_once('-')?;
    let generation = generation.parse().ok()?;
    (!name.is_empty()).then(|| (name.to_string(), generation))
}

/// Every regular `*.fgraph` file under `DATA/graphs`, as (relative, absolute) paths.
fn graph_files(dir: &Path) -> Result<Vec<(PathBuf, PathBuf)>> {
    let graphs = dir.join("graphs");
    let entries = match std::fs::read_dir(&graphs) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(&graphs, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| StoreError::io(&graphs, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if name.ends_with(GRAPH_SUFFIX) && entry.file_type().is_ok_and(|t| t.is_file()) {
            out.push((graph_file(&name), entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Every regular file under `DATA/lost+found`, as (relative, absolute) paths.
fn lost_and_found_files(dir: &Path) -> Result<Vec<(PathBuf, PathBuf)>> {
    let lost = dir.join(LOST_AND_FOUND);
    let entries = match std::fs::read_dir(&lost) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(&lost, e)),
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            out.push((
                PathBuf::from(LOST_AND_FOUND).join(entry.file_name()),
                entry.path(),
            ));
        }
    }
    out.sort();
    Ok(out)
}

/// Whether `DATA/graphs` holds any graph file.
pub fn has_graph_files(dir: &Path) -> Result<bool> {
    Ok(!graph_files(dir)?.is_empty())
}

/// Moves graph files `state` does not list to `DATA/lost+found/`, and removes frontier's own
/// scratch files. Returns what it moved.
pub fn tidy(dir: &Path, state: &CatalogState) -> Result<Vec<Finding>> {
    let listed: std::collections::HashSet<&PathBuf> =
        state.graphs.values().map(|m| &m.file).collect();
    let mut findings = Vec::new();
    for (rel, path) in graph_files(dir)? {
        if listed.contains(&rel) {
            continue;
        }
        let graph = read_identity(&path)
            .ok()
            .and_then(|(_, id)| id.map(|i| i.graph))
            .or_else(|| name_and_generation(&rel).map(|(n, _)| n));
        let dest = move_aside(dir, &path)?;
        findings.push(Finding {
            graph,
            file: rel,
            action: format!(
                "not in the catalog; moved to {} (REPAIR CATALOG lists it again if no graph \
                 of its name exists; or delete it)",
                dest.display()
            ),
        });
    }
    remove_scratch(dir);
    Ok(findings)
}

/// Moves `path` into `DATA/lost+found/` under a name not yet taken there.
fn move_aside(dir: &Path, path: &Path) -> Result<PathBuf> {
    let lost = dir.join(LOST_AND_FOUND);
    std::fs::create_dir_all(&lost).map_err(|e| StoreError::io(&lost, e))?;
    let name = path.file_name().unwrap_or_default().to_os_string();
    let mut dest = lost.join(&name);
    let mut n = 1;
    while dest.exists() {
        let mut numbered = name.clone();
        numbered.push(format!(".{n}"));
        dest = lost.join(numbered);
        n += 1;
    }
    std::fs::rename(path, &dest).map_err(|e| StoreError::io(path, e))?;
    Ok(dest)
}

/// Removes graph-file temporaries (`graphs/*.fgraph.tmp-PID`) and the importer's scratch
/// directories (`tmp/frontier-import-*`). Nothing else is touched.
fn remove_scratch(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir.join("graphs")) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if is_graph_temp_name(name) && entry.file_type().is_ok_and(|t| t.is_file()) {
                remove_quietly(&entry.path());
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir.join("tmp")) {
        for entry in entries.flatten() {
            let is_scratch = entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(IMPORT_SCRATCH_PREFIX));
            if is_scratch && entry.file_type().is_ok_and(|t| t.is_dir()) {
                if let Err(e) = std::fs::remove_dir_all(entry.path()) {
                    eprintln!("warning: could not remove {}: {e}", entry.path().display());
                }
            }
        }
    }
}

/// `NAME.fgraph.tmp-PID`: the writer's temporary name (see `blockfile::writer::temp_name`).
fn is_graph_temp_name(name: &str) -> bool {
    name.rsplit_once(".fgraph.tmp-").is_some_and(|(stem, pid)| {
        !stem.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
    })
}

/// Removes a file, warning (not failing) when that is impossible.
pub fn remove_quietly(path: &Path) {
    if let Err(e) = std::fs::remove_file(path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            eprintln!("warning: could not remove {}: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_temp_names() {
        assert_eq!(
            name_and_generation(Path::new("graphs/my-web-12.fgraph")),
            Some(("my-web".into(), 12))
        );
        assert_eq!(name_and_generation(Path::new("graphs/web.fgraph")), None);
        assert!(is_graph_temp_name("web-3.fgraph.tmp-4242"));
        assert!(!is_graph_temp_name("web-3.fgraph"));
        assert!(!is_graph_temp_name("notes.fgraph.tmp-x"));
        assert!(!is_graph_temp_name(".fgraph.tmp-1"));
    }
}
