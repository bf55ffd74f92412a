use std::sync::atomic::AtomicBool;

use super::*;
use crate::blockfile::format::{FileIdentity, SectionKind, Superblock, BLOCK_SIZE, FORMAT_VERSION};
use crate::blockfile::open::GraphFile;
use crate::import::{import, ImportRequest, InputFormat};

/// An entry for file `file` (which need not exist), for format tests.
pub(crate) fn sample_meta(name: &str, file: &str) -> GraphMeta {
    GraphMeta {
        name: name.into(),
        file: file.into(),
        format_version: FORMAT_VERSION,
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
        key_bytes: 0,
        file_id: None,
    }
}

/// Imports a small real graph of `vertices` vertices as `name` and registers it.
fn create(c: &mut Catalog, name: &str, vertices: u64, replace: bool) -> GraphMeta {
    let new = c.new_graph_file(name).unwrap();
    let source = c.dir().join(format!("{name}.e"));
    let text: String = (0..vertices)
        .map(|v| format!("{v} {}\n", (v + 1) % vertices))
        .collect();
    std::fs::write(&source, text).unwrap();
    let identity = FileIdentity::new(
        name,
        new.generation,
        &source.display().to_string(),
        StorageKind::Blockfile,
    );
    let req = ImportRequest {
        source: source.clone(),
        format: InputFormat::Edgelist,
        directed: Some(true),
        weighted: false,
        vertices: None,
        // Key order, so that format_1_files_are_read_and_recovered_by_their_name can make a
        // format 1 file of it (degree order came with format 4).
        options: vec![("layout".into(), "key".into())],
        dest: c.dir().join(&new.file),
        memory_budget: 1 << 20,
        threads: 2,
        temp_dir: c.tmp_dir(),
        identity: identity.clone(),
    };
    let s = import(&req, &mut |_| {}, &AtomicBool::new(false)).unwrap();
    let meta = GraphMeta {
        name: name.into(),
        file: new.file,
        format_version: s.format_version,
        vertices: s.vertices,
        edges: s.edges,
        arcs: s.arcs,
        directed: s.directed,
        weighted: s.weighted,
        source: identity.source,
        created_at: identity.created_at,
        storage: StorageKind::Blockfile,
        file_bytes: s.file_bytes,
        memory_nodes: vec![],
        extra: None,
        import: Default::default(),
        key_bytes: 0,
        file_id: Some(identity.file_id),
    };
    c.register(&meta, replace).unwrap();
    meta
}

fn open(dir: &Path) -> (Catalog, Vec<String>) {
    Catalog::open(dir).unwrap()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn register_get_list_drop() {
    let d = tempfile::tempdir().unwrap();
    let (mut c, warnings) = open(d.path());
    assert!(warnings.is_empty(), "{warnings:?}");
    let m = create(&mut c, "web", 5, false);
    assert_eq!(c.get("web").unwrap(), Some(m.clone()));
    let again = c.new_graph_file("web").unwrap();
    assert!(matches!(
        c.register(&sample_meta("web", again.file.to_str().unwrap()), false),
        Err(StoreError::GraphExists(_))
    ));
    let m2 = create(&mut c, "web", 6, true);
    assert!(!c.graph_path(&m).exists(), "old file removed on replace");
    assert_eq!(c.list().unwrap(), vec![m2.clone()]);
    assert!(c.drop_graph("web").unwrap().is_some());
    assert!(!c.graph_path(&m2).exists());
    assert!(c.get("web").unwrap().is_none());
    drop(c);
    let (c, _) = open(d.path());
    assert!(c.list().unwrap().is_empty(), "the drop was durable");
}

#[test]
fn unlisted_files_are_moved_aside_and_only_scratch_is_removed() {
    let d = tempfile::tempdir().unwrap();
    {
        let (mut c, _) = open(d.path());
        create(&mut c, "kept", 4, false);
        std::fs::write(d.path().join("graphs/orphan-9.fgraph"), b"x").unwrap();
        std::fs::write(d.path().join("graphs/kept-7.fgraph.tmp-1"), b"x").unwrap();
        std::fs::write(d.path().join("graphs/notes.txt"), b"mine").unwrap();
        std::fs::create_dir_all(d.path().join("tmp/frontier-import-abc")).unwrap();
        std::fs::write(d.path().join("tmp/frontier-import-abc/run-0"), b"x").unwrap();
        std::fs::write(d.path().join("tmp/user-file"), b"mine").unwrap();
    }
    let (c, warnings) = open(d.path());
    assert_eq!(
        names(&d.path().join("graphs")),
        ["kept-1.fgraph", "notes.txt"]
    );
    assert_eq!(names(&d.path().join("lost+found")), ["orphan-9.fgraph"]);
    assert!(
        warnings.iter().any(|w| w.contains("orphan-9.fgraph")
            && w.contains(&d.path().join("lost+found").display().to_string())),
        "{warnings:?}"
    );
    assert_eq!(names(&d.path().join("tmp")), ["user-file"]);
    assert!(c.get("kept").unwrap().is_some());
}

#[test]
fn a_second_opener_is_told_the_directory_is_locked() {
    let d = tempfile::tempdir().unwrap();
    let _c = open(d.path());
    let err = match Catalog::open(d.path()) {
        Ok(_) => panic!("second open succeeded"),
        Err(e) => e,
    };
    assert!(matches!(err, StoreError::Locked { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("in use by another frontier process"),
        "{text}"
    );
    assert!(
        text.contains(&d.path().join("lock").display().to_string()),
        "{text}"
    );
}

#[test]
fn damaged_and_missing_catalogs_are_rebuilt_from_the_files() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = {
        let (mut c, _) = open(d.path());
        (create(&mut c, "a", 4, false), create(&mut c, "b", 7, false))
    };
    let path = catalog_path(d.path());
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let (c, warnings) = open(d.path());
    assert!(warnings[0].contains("is damaged"), "{warnings:?}");
    assert!(
        warnings[0].contains("found 2 graphs (a, b)"),
        "{warnings:?}"
    );
    assert_eq!(c.list().unwrap(), vec![a.clone(), b.clone()]);
    drop(c);
    assert!(names(&d.path().join("catalog"))
        .iter()
        .any(|n| n.starts_with("catalog.json.damaged-")));

    std::fs::remove_dir_all(d.path().join("catalog")).unwrap();
    let (mut c, warnings) = open(d.path());
    assert!(warnings[0].contains("is missing"), "{warnings:?}");
    assert_eq!(c.list().unwrap(), vec![a, b]);
    // Generations keep counting past the recovered files.
    assert_eq!(c.new_graph_file("c").unwrap().generation, 3);
}

#[test]
fn another_graphs_file_copied_over_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let (mut c, _) = open(d.path());
    let a = create(&mut c, "a", 4, false);
    let b = create(&mut c, "b", 9, false);
    assert_eq!(c.checked_path(&a).unwrap(), c.graph_path(&a));
    std::fs::copy(c.graph_path(&b), c.graph_path(&a)).unwrap();
    let err = c.checked_path(&a).unwrap_err().to_string();
    assert!(err.contains("graph `a`"), "{err}");
    assert!(err.contains("of graph `b`"), "{err}");
    assert!(err.contains("a-1.fgraph"), "{err}");
}

#[test]
fn readers_see_commits_and_cannot_change_anything() {
    let d = tempfile::tempdir().unwrap();
    let (mut w, _) = open(d.path());
    let why = match Catalog::open(d.path()) {
        Err(StoreError::Locked { lock, holder }) => ReadOnlyReason::Locked { lock, holder },
        _ => panic!("not locked"),
    };
    let (mut r, warnings) = Catalog::open_read_only(d.path(), why).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(r.list().unwrap().is_empty());
    let a = create(&mut w, "a", 4, false);
    assert_eq!(r.get("a").unwrap(), Some(a));
    let err = r.drop_graph("a").unwrap_err().to_string();
    assert!(err.contains("read-only"), "{err}");
    assert!(
        err.contains(&format!("pid {}", std::process::id())),
        "{err}"
    );
    assert!(r.new_graph_file("x").is_err());
    assert!(r.repair().is_err());
    assert!(w.get("a").unwrap().is_some());
}

#[test]
fn repair_lists_files_put_back_and_forgets_missing_ones() {
    let d = tempfile::tempdir().unwrap();
    let (mut c, _) = open(d.path());
    let a = create(&mut c, "a", 4, false);
    let b = create(&mut c, "b", 5, false);
    let g = create(&mut c, "g", 6, false);
    std::fs::remove_file(c.graph_path(&b)).unwrap();
    drop(c);
    let (mut c, warnings) = open(d.path());
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("graph `b`") && w.contains("is missing")),
        "{warnings:?}"
    );
    // g's file is set aside, g dropped, and the file put back: REPAIR lists it again.
    let aside = d.path().join("aside.fgraph");
    std::fs::rename(c.graph_path(&g), &aside).unwrap();
    c.drop_graph("g").unwrap();
    std::fs::rename(&aside, c.graph_path(&g)).unwrap();
    let report: Vec<String> = c.repair().unwrap().iter().map(|f| f.to_string()).collect();
    let says = |graph: &str, action: &str| {
        report
            .iter()
            .any(|t| t.contains(&format!("graph `{graph}`")) && t.contains(action))
    };
    assert!(says("a", "unchanged"), "{report:?}");
    assert!(says("b", "removed from the catalog"), "{report:?}");
    assert!(says("g", "recovered from the file"), "{report:?}");
    assert_eq!(c.list().unwrap(), vec![a, g]);
}

/// Rewrites a graph file as format 1: version 1 in the superblock and no Identity section (its
/// blocks stay, unreferenced, as padding a version 1 reader never looks at).
fn make_format_1(path: &Path) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut block = vec![0u8; BLOCK_SIZE];
    file.read_exact_at(&mut block, 0).unwrap();
    let len = file.metadata().unwrap().len();
    let mut sb = Superblock::decode(&block, path, len).unwrap();
    sb.version = 1;
    sb.sections.retain(|s| s.kind != SectionKind::Identity);
    file.write_all_at(&sb.encode(), 0).unwrap();
}

#[test]
fn format_1_files_are_read_and_recovered_by_their_name() {
    let d = tempfile::tempdir().unwrap();
    let path = {
        let (mut c, _) = open(d.path());
        // Plain lookups (format 3), as format 1 had.
        let g =
            crate::blockfile::writer::writing_version(3, || create(&mut c, "old_graph", 5, false));
        c.graph_path(&g)
    };
    make_format_1(&path);
    let gf = GraphFile::open(&path).unwrap();
    assert_eq!(gf.superblock.version, 1);
    assert!(gf.identity.is_none());
    // The catalog registered an id the file cannot show: refused, not trusted.
    let (c, _) = open(d.path());
    let meta = c.get("old_graph").unwrap().unwrap();
    let err = c.checked_path(&meta).unwrap_err().to_string();
    assert!(err.contains("format 1 file without a file id"), "{err}");
    drop(c);
    // Rebuilt from the file, the graph is known by its file name and has no id to check.
    std::fs::remove_dir_all(d.path().join("catalog")).unwrap();
    let (c, warnings) = open(d.path());
    assert!(
        warnings.iter().any(|w| w.contains("format 1 file")),
        "{warnings:?}"
    );
    let meta = c.get("old_graph").unwrap().unwrap();
    assert_eq!((meta.vertices, meta.file_id.clone()), (5, None));
    assert_eq!(c.checked_path(&meta).unwrap(), path);
}

#[test]
fn an_older_catalog_database_is_named_and_left_alone() {
    let d = tempfile::tempdir().unwrap();
    {
        let (mut c, _) = open(d.path());
        create(&mut c, "g", 4, false);
    }
    std::fs::remove_file(catalog_path(d.path())).unwrap();
    std::fs::write(d.path().join("catalog/conf"), b"segment_size: 524288").unwrap();
    let (c, warnings) = open(d.path());
    assert!(warnings[0].contains("an older frontier"), "{warnings:?}");
    assert!(c.get("g").unwrap().is_some());
    assert!(d.path().join("catalog/conf").exists());
}
