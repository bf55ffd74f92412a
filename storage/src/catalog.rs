//! The catalog: graph name → metadata, kept in sled under the data directory.
//!
//! Layout of a data directory:
//!
//! ```text
//! DATA/catalog/          sled database (locked by the process that has it open)
//! DATA/graphs/NAME-GEN.fgraph   immutable graph files, one generation per CREATE
//! DATA/tmp/              importer scratch space (spilled runs), emptied at open
//! DATA/history           REPL history
//! ```
//!
//! Crash safety: a graph file is written under a temporary name, fsync'd and renamed before it
//! is registered; registration is one sled insert followed by a flush. A crash before the flush
//! leaves an unreferenced file, which [`Catalog::open`] removes along with temporary files. A
//! replaced graph's old file is deleted only after the new entry is durable.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};

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
    /// The graph file, relative to the data directory.
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
    /// What the import read, kept, merged and skipped (empty for graphs made before it was
    /// recorded).
    #[serde(default)]
    pub import: crate::import::ImportReport,
}

/// The catalog of one data directory.
pub struct Catalog {
    dir: PathBuf,
    db: sled::Db,
}

const GRAPH_PREFIX: &[u8] = b"graph/";
const GENERATION_KEY: &[u8] = b"meta/generation";

impl Catalog {
    /// Opens (creating if needed) the catalog of data directory `dir`, and removes temporary
    /// and unreferenced graph files left by a crash. Fails at once with an error naming the
    /// directory when another process holds it.
    pub fn open(dir: &Path) -> Result<Catalog> {
        for sub in ["", "graphs", "tmp"] {
            let d = dir.join(sub);
            std::fs::create_dir_all(&d).map_err(|e| StoreError::io(&d, e))?;
        }
        let db_path = dir.join("catalog");
        let db = sled::Config::new()
            .path(&db_path)
            .mode(sled::Mode::LowSpace)
            .open()
            .map_err(|e| catalog_error(dir, e))?;
        let catalog = Catalog {
            dir: dir.to_path_buf(),
            db,
        };
        catalog.clean_leftovers()?;
        Ok(catalog)
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
    pub fn new_graph_file(&self, name: &str) -> Result<PathBuf> {
        let generation = self
            .db
            .update_and_fetch(GENERATION_KEY, |old| {
                let n = old
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_le_bytes)
                    .unwrap_or(0);
                Some((n + 1).to_le_bytes().to_vec())
            })
            .map_err(|e| catalog_error(&self.dir, e))?
            .and_then(|b| b.as_ref().try_into().ok())
            .map(u64::from_le_bytes)
            .unwrap_or(1);
        self.db.flush().map_err(|e| catalog_error(&self.dir, e))?;
        Ok(PathBuf::from("graphs").join(format!("{name}-{generation}.fgraph")))
    }

    /// The absolute path of a graph's file.
    pub fn graph_path(&self, meta: &GraphMeta) -> PathBuf {
        self.dir.join(&meta.file)
    }

    /// The entry of `name`.
    pub fn get(&self, name: &str) -> Result<Option<GraphMeta>> {
        let v = self
            .db
            .get(key(name))
            .map_err(|e| catalog_error(&self.dir, e))?;
        v.map(|bytes| decode(&self.dir, name, &bytes)).transpose()
    }

    /// All entries, by name.
    pub fn list(&self) -> Result<Vec<GraphMeta>> {
        let mut out = Vec::new();
        for item in self.db.scan_prefix(GRAPH_PREFIX) {
            let (k, v) = item.map_err(|e| catalog_error(&self.dir, e))?;
            let name = String::from_utf8_lossy(&k[GRAPH_PREFIX.len()..]).into_owned();
            out.push(decode(&self.dir, &name, &v)?);
        }
        Ok(out)
    }

    /// Registers `meta` durably. Without `replace`, an existing graph of that name is an error
    /// (and the new file is left for the caller to remove). With it, the old file is removed
    /// once the new entry is on disk.
    pub fn register(&self, meta: &GraphMeta, replace: bool) -> Result<()> {
        let k = key(&meta.name);
        let v = serde_json::to_vec(meta).map_err(|e| StoreError::Other(e.to_string()))?;
        let old = if replace {
            self.db
                .insert(k, v)
                .map_err(|e| catalog_error(&self.dir, e))?
        } else {
            match self
                .db
                .compare_and_swap(k, None as Option<&[u8]>, Some(v))
                .map_err(|e| catalog_error(&self.dir, e))?
            {
                Ok(()) => None,
                Err(_) => return Err(StoreError::GraphExists(meta.name.clone())),
            }
        };
        self.db.flush().map_err(|e| catalog_error(&self.dir, e))?;
        if let Some(old) = old {
            let old = decode(&self.dir, &meta.name, &old)?;
            if old.file != meta.file {
                remove_quietly(&self.graph_path(&old));
            }
        }
        Ok(())
    }

    /// Removes `name` from the catalog, then its file. Returns the removed entry.
    pub fn drop_graph(&self, name: &str) -> Result<Option<GraphMeta>> {
        let old = self
            .db
            .remove(key(name))
            .map_err(|e| catalog_error(&self.dir, e))?;
        self.db.flush().map_err(|e| catalog_error(&self.dir, e))?;
        match old {
            None => Ok(None),
            Some(bytes) => {
                let meta = decode(&self.dir, name, &bytes)?;
                remove_quietly(&self.graph_path(&meta));
                Ok(Some(meta))
            }
        }
    }

    /// Removes temporary files and graph files no entry refers to.
    fn clean_leftovers(&self) -> Result<()> {
        let referenced: HashSet<PathBuf> = self.list()?.into_iter().map(|m| m.file).collect();
        let graphs = self.dir.join("graphs");
        let entries = std::fs::read_dir(&graphs).map_err(|e| StoreError::io(&graphs, e))?;
        for entry in entries.flatten() {
            let rel = PathBuf::from("graphs").join(entry.file_name());
            if !referenced.contains(&rel) {
                remove_quietly(&entry.path());
            }
        }
        let tmp = self.tmp_dir();
        if let Ok(entries) = std::fs::read_dir(&tmp) {
            for entry in entries.flatten() {
                let p = entry.path();
                if p.is_dir() {
                    let _ = std::fs::remove_dir_all(&p);
                } else {
                    remove_quietly(&p);
                }
            }
        }
        Ok(())
    }
}

/// Seconds since the Unix epoch, for `created_at`.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn key(name: &str) -> Vec<u8> {
    let mut k = GRAPH_PREFIX.to_vec();
    k.extend_from_slice(name.as_bytes());
    k
}

fn decode(dir: &Path, name: &str, bytes: &[u8]) -> Result<GraphMeta> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Catalog {
        path: dir.join("catalog"),
        message: format!("entry of graph `{name}` is unreadable: {e}"),
    })
}

fn remove_quietly(path: &Path) {
    if let Err(e) = std::fs::remove_file(path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            eprintln!("warning: could not remove {}: {e}", path.display());
        }
    }
}

fn catalog_error(dir: &Path, e: sled::Error) -> StoreError {
    let message = match &e {
        sled::Error::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock => {
            "the data directory is in use by another frontier process".to_string()
        }
        sled::Error::Io(io) if io.to_string().contains("could not acquire lock") => {
            "the data directory is in use by another frontier process".to_string()
        }
        other => other.to_string(),
    };
    StoreError::Catalog {
        path: dir.to_path_buf(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(c: &Catalog, name: &str) -> GraphMeta {
        let file = c.new_graph_file(name).unwrap();
        std::fs::write(c.dir().join(&file), b"x").unwrap();
        GraphMeta {
            name: name.into(),
            file,
            format_version: 1,
            vertices: 3,
            edges: 2,
            arcs: 2,
            directed: true,
            weighted: false,
            source: "/x".into(),
            created_at: now_secs(),
            storage: StorageKind::Blockfile,
            file_bytes: 1,
            memory_nodes: vec![],
            extra: None,
            import: Default::default(),
        }
    }

    #[test]
    fn register_get_list_drop() {
        let d = tempfile::tempdir().unwrap();
        let c = Catalog::open(d.path()).unwrap();
        let m = meta(&c, "web");
        c.register(&m, false).unwrap();
        assert_eq!(c.get("web").unwrap(), Some(m.clone()));
        assert!(matches!(
            c.register(&meta(&c, "web"), false),
            Err(StoreError::GraphExists(_))
        ));
        let m2 = meta(&c, "web");
        c.register(&m2, true).unwrap();
        assert!(!c.graph_path(&m).exists(), "old file removed on replace");
        assert_eq!(c.list().unwrap().len(), 1);
        assert!(c.drop_graph("web").unwrap().is_some());
        assert!(!c.graph_path(&m2).exists());
        assert!(c.get("web").unwrap().is_none());
    }

    #[test]
    fn leftovers_are_cleaned_at_open() {
        let d = tempfile::tempdir().unwrap();
        {
            let c = Catalog::open(d.path()).unwrap();
            let m = meta(&c, "kept");
            c.register(&m, false).unwrap();
            std::fs::write(d.path().join("graphs/orphan-9.fgraph"), b"x").unwrap();
            std::fs::write(d.path().join("graphs/kept-7.fgraph.tmp-1"), b"x").unwrap();
            std::fs::write(d.path().join("tmp/run-0"), b"x").unwrap();
        }
        let c = Catalog::open(d.path()).unwrap();
        let names: Vec<_> = std::fs::read_dir(d.path().join("graphs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(c.get("kept").unwrap().is_some());
        assert_eq!(std::fs::read_dir(d.path().join("tmp")).unwrap().count(), 0);
    }

    #[test]
    fn a_second_opener_gets_a_clear_error() {
        let d = tempfile::tempdir().unwrap();
        let _c = Catalog::open(d.path()).unwrap();
        let err = match Catalog::open(d.path()) {
            Ok(_) => panic!("second open succeeded"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("in use by another frontier process"), "{err}");
        assert!(err.contains(&d.path().display().to_string()), "{err}");
    }
}
