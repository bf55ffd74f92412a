//! All 14 Graphalytics validation datasets (copies under tests/data) import, with |V| and |E|
//! equal to their meta.vertices / meta.edges, and match their .v/.e files exactly.

mod common;

use common::*;
use storage::blockfile::memory::MemoryStore;
use storage::import::InputFormat;
use storage::GraphStore;

#[test]
fn all_graphalytics_datasets_import() {
    let root = graphalytics_dir();
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            e.file_type()
                .unwrap()
                .is_dir()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), 14, "{names:?}");
    let tmp = tempfile::tempdir().unwrap();
    for (i, name) in names.iter().enumerate() {
        let dir = root.join(name);
        let props = dir.join(format!("{name}.properties"));
        let ds =
            storage::import::graphalytics::read_properties(&props, &Default::default()).unwrap();
        let dest = tmp.path().join(format!("{name}.frontier"));
        // Alternate between naming the properties file and the dataset directory.
        let source = if i % 2 == 0 {
            props.clone()
        } else {
            dir.clone()
        };
        let mut req = request(&source, InputFormat::Graphalytics, &dest, tmp.path());
        req.memory_budget = if i % 3 == 0 { 200 } else { 1 << 20 };
        let s = run(&req).unwrap();
        assert_eq!(Some(s.vertices), ds.meta_vertices, "{name}");
        assert_eq!(Some(s.edges), ds.meta_edges, "{name}");
        assert_eq!(s.directed, ds.directed, "{name}");
        assert_eq!(s.weighted, ds.weighted, "{name}");

        // Exact adjacency against the text files.
        let vtext = std::fs::read_to_string(&ds.vertex_file).unwrap();
        let want_ids: Vec<u64> = vtext.lines().map(|l| l.trim().parse().unwrap()).collect();
        let etext = std::fs::read_to_string(&ds.edge_file).unwrap();
        let edges: Vec<(u64, u64, f64)> = etext
            .lines()
            .map(|l| {
                let t: Vec<&str> = l.split_whitespace().collect();
                let w = if ds.weighted {
                    t[2].parse().unwrap()
                } else {
                    0.0
                };
                (t[0].parse().unwrap(), t[1].parse().unwrap(), w)
            })
            .collect();
        let (want_out, want_in, _) = expected(&edges, ds.directed, ds.weighted);
        let store = MemoryStore::load(&dest).unwrap();
        let (ids, out, inn) = read_back(&store);
        assert_eq!(ids, want_ids, "{name}");
        assert_eq!(out, want_out, "{name}");
        assert_eq!(inn, want_in, "{name}");
        assert_eq!(store.describe_reader(), "memory");
    }
}
