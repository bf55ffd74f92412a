//! The catalog file, `DATA/catalog/catalog.json`: one header line carrying a CRC-32 of the rest,
//! then the catalog as JSON.
//!
//! ```text
//! frontier-catalog 1 crc32=1a2b3c4d
//! { "next_generation": 4, "graphs": { "web": { ...GraphMeta... } } }
//! ```
//!
//! It is only ever replaced whole (temporary file, fsync, rename, fsync of the directory), so a
//! reader sees the last committed state or the one before, never a mixture; a truncated or
//! bit-flipped file fails its checksum and is reported as damaged rather than read as "no
//! graphs".

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::GraphMeta;
use crate::error::{Result, StoreError};

const MAGIC: &str = "frontier-catalog 1 crc32=";

/// Everything the catalog records.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CatalogState {
    /// The generation the next graph file gets: file names are never reused.
    pub next_generation: u64,
    /// Entries by graph name.
    pub graphs: BTreeMap<String, GraphMeta>,
}

/// What reading the catalog file found.
pub enum Loaded {
    /// A sound catalog.
    Sound(CatalogState),
    /// No catalog file.
    Missing,
    /// A catalog file that fails its checks, and why.
    Damaged(String),
}

/// Reads the catalog file at `path`.
pub fn load(path: &Path) -> Result<Loaded> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(match decode(&bytes) {
            Ok(state) => Loaded::Sound(state),
            Err(why) => Loaded::Damaged(why),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Loaded::Missing),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

/// Replaces the catalog file at `path` with `state`, durably and atomically.
pub fn store(path: &Path, state: &CatalogState) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let write = || -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(&encode(state))?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        StoreError::Catalog {
            path: path.to_path_buf(),
            message: format!(
                "cannot write the catalog: {e}; nothing was changed (free disk space or fix \
                 the directory's permissions, then retry)"
            ),
        }
    })
}

fn encode(state: &CatalogState) -> Vec<u8> {
    let body = serde_json::to_vec_pretty(state).expect("a catalog always serialises");
    let mut out = format!("{MAGIC}{:08x}\n", crc32fast::hash(&body)).into_bytes();
    out.extend_from_slice(&body);
    out.push(b'\n');
    out
}

fn decode(bytes: &[u8]) -> std::result::Result<CatalogState, String> {
    let newline = bytes
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("no header line (truncated?)")?;
    let header = std::str::from_utf8(&bytes[..newline]).map_err(|_| "the header is not text")?;
    let crc = header
        .strip_prefix(MAGIC)
        .and_then(|hex| u32::from_str_radix(hex, 16).ok())
        .ok_or("not a frontier catalog header")?;
    let mut body = &bytes[newline + 1..];
    if let Some(stripped) = body.strip_suffix(b"\n") {
        body = stripped;
    }
    if crc32fast::hash(body) != crc {
        return Err("checksum mismatch (truncated or altered)".into());
    }
    let state: CatalogState =
        serde_json::from_slice(body).map_err(|e| format!("unreadable entry: {e}"))?;
    for (name, meta) in &state.graphs {
        if *name != meta.name {
            return Err(format!("entry `{name}` names graph `{}`", meta.name));
        }
        if !is_graph_file_path(&meta.file) {
            return Err(format!(
                "entry `{name}` points outside graphs/: {}",
                meta.file.display()
            ));
        }
    }
    Ok(state)
}

/// Whether `rel` is `graphs/<one file name>`: the only files the catalog may own (and delete).
pub fn is_graph_file_path(rel: &Path) -> bool {
    let parts: Vec<Component> = rel.components().collect();
    matches!(parts.as_slice(), [Component::Normal(dir), Component::Normal(_)] if *dir == "graphs")
}

/// `graphs/<name>` relative to the data directory.
pub fn graph_file(name: &str) -> PathBuf {
    PathBuf::from("graphs").join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CatalogState {
        let mut s = CatalogState {
            next_generation: 3,
            ..Default::default()
        };
        let meta = crate::catalog::tests::sample_meta("web", "graphs/web-2.fgraph");
        s.graphs.insert("web".into(), meta);
        s
    }

    #[test]
    fn round_trips() {
        assert_eq!(decode(&encode(&sample())).unwrap(), sample());
    }

    #[test]
    fn every_truncation_and_many_bit_flips_are_damage() {
        let bytes = encode(&sample());
        for len in 0..bytes.len() - 1 {
            assert!(decode(&bytes[..len]).is_err(), "truncated to {len}");
        }
        for i in (0..bytes.len()).step_by(3) {
            let mut b = bytes.clone();
            b[i] ^= 0x04;
            assert!(decode(&b).is_err(), "flip at {i}");
        }
    }

    #[test]
    fn entries_outside_graphs_are_refused() {
        let mut s = sample();
        s.graphs.get_mut("web").unwrap().file = PathBuf::from("../../etc/passwd");
        assert!(decode(&encode(&s)).unwrap_err().contains("outside graphs/"));
        assert!(is_graph_file_path(Path::new("graphs/a-1.fgraph")));
        assert!(!is_graph_file_path(Path::new("graphs/../a")));
        assert!(!is_graph_file_path(Path::new("/graphs/a")));
    }
}
