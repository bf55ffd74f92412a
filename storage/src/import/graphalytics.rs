//! LDBC Graphalytics datasets: a `.properties` file naming the vertex and edge files (relative
//! to its folder), whether the graph is directed, whether edges carry a weight, and the
//! expected |V| and |E|, which are checked against what was read.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::input::for_each_line;
use crate::error::{Result, StoreError};

/// The largest properties file read (they are a few hundred bytes).
const MAX_PROPERTIES: usize = 1 << 20;

/// What a Graphalytics `.properties` file says about its graph.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphalyticsDataset {
    /// The properties file (named in every error about it).
    pub properties: PathBuf,
    /// The `<name>` of its `graph.<name>.*` keys.
    pub name: String,
    pub vertex_file: PathBuf,
    pub edge_file: PathBuf,
    pub directed: bool,
    pub weighted: bool,
    pub meta_vertices: Option<u64>,
    pub meta_edges: Option<u64>,
    /// `edge-properties.names`: the columns after `src dst` in the edge file.
    pub property_names: Vec<String>,
}

fn err(path: &Path, line: u64, message: impl Into<String>) -> StoreError {
    StoreError::Input {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// Finds the properties file: `source` itself, or the only `.properties` file in the
/// directory `source`.
pub fn find_properties(source: &Path) -> Result<PathBuf> {
    let meta = std::fs::metadata(source).map_err(|e| StoreError::io(source, e))?;
    if !meta.is_dir() {
        return Ok(source.to_path_buf());
    }
    let mut found = Vec::new();
    for e in std::fs::read_dir(source).map_err(|e| StoreError::io(source, e))? {
        let p = e.map_err(|e| StoreError::io(source, e))?.path();
        if p.extension().is_some_and(|x| x == "properties") {
            found.push(p);
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(err(source, 0, "the directory holds no .properties file")),
        n => Err(err(
            source,
            0,
            format!("the directory holds {n} .properties files; name one"),
        )),
    }
}

/// Parses a Graphalytics properties file.
pub fn read_properties(path: &Path, cancel: &AtomicBool) -> Result<GraphalyticsDataset> {
    let mut props: Vec<(String, String, u64)> = Vec::new();
    let mut size = 0usize;
    for_each_line(path, cancel, |line, raw, n| {
        size += n;
        if size > MAX_PROPERTIES {
            return Err(err(
                path,
                line,
                "a properties file larger than 1 MiB: is this the right file?",
            ));
        }
        let raw = std::str::from_utf8(raw).map_err(|_| {
            err(
                path,
                line,
                "binary data (not UTF-8 text) in a properties file",
            )
        })?;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with('!') {
            return Ok(());
        }
        let Some(sep) = l.find(['=', ':']) else {
            return Err(err(
                path,
                line,
                format!("expected `key = value`, found `{l}`"),
            ));
        };
        props.push((
            l[..sep].trim().to_string(),
            l[sep + 1..].trim().to_string(),
            line,
        ));
        Ok(())
    })?;
    let name = props
        .iter()
        .find_map(|(k, _, _)| {
            k.strip_prefix("graph.")
                .and_then(|r| r.strip_suffix(".vertex-file"))
                .map(str::to_string)
        })
        .ok_or_else(|| err(path, 0, "no `graph.<name>.vertex-file` key"))?;
    let get = |key: &str| {
        let full = format!("graph.{name}.{key}");
        props
            .iter()
            .rev()
            .find(|(k, _, _)| *k == full)
            .map(|(_, v, l)| (v.clone(), *l))
    };
    let need =
        |key: &str| get(key).ok_or_else(|| err(path, 0, format!("no `graph.{name}.{key}` key")));
    let folder = path.parent().unwrap_or(Path::new("."));
    let vertex_file = folder.join(need("vertex-file")?.0);
    let edge_file = folder.join(need("edge-file")?.0);
    let directed = match need("directed")? {
        (v, _) if v.eq_ignore_ascii_case("true") => true,
        (v, _) if v.eq_ignore_ascii_case("false") => false,
        (v, l) => {
            return Err(err(
                path,
                l,
                format!("`directed` must be true or false, found `{v}`"),
            ))
        }
    };
    let property_names: Vec<String> = get("edge-properties.names")
        .map(|(v, _)| {
            v.split(',')
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let weighted = property_names.iter().any(|n| n == "weight");
    let num = |key: &str| -> Result<Option<u64>> {
        match get(key) {
            None => Ok(None),
            Some((v, l)) => v
                .parse()
                .map(Some)
                .map_err(|_| err(path, l, format!("`{key}` must be a count, found `{v}`"))),
        }
    };
    Ok(GraphalyticsDataset {
        properties: path.to_path_buf(),
        name: name.clone(),
        vertex_file,
        edge_file,
        directed,
        weighted,
        meta_vertices: num("meta.vertices")?,
        meta_edges: num("meta.edges")?,
        property_names,
    })
}

/// Edge property columns after `src dst`, per `edge-properties.names`.
pub(crate) fn edge_property_count(ds: &GraphalyticsDataset) -> usize {
    ds.property_names.len()
}

/// The 0-based column of the weight in the edge file, when the graph is weighted.
pub(crate) fn weight_column(ds: &GraphalyticsDataset) -> Option<usize> {
    ds.property_names
        .iter()
        .position(|n| n == "weight")
        .map(|p| p + 2)
}
