//! The LDBC Graphalytics importer (`FORMAT graphalytics`) over arbitrary datasets.
//!
//! Input layout: `properties NUL vertex-file NUL edge-file`, written as `g.properties`, `g.v` and
//! `g.e` in one directory (a missing part is an empty file). The properties text chooses which
//! files it names; inputs whose properties contain `/` are skipped so that the importer only ever
//! opens files in that directory (never `/dev/zero` or a FIFO, which would hang the fuzzer rather
//! than find a bug).
#![no_main]

use frontier_fuzz::{put, run_import, scratch};
use libfuzzer_sys::fuzz_target;
use storage::import::{ImportRequest, InputFormat};

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let props = parts.next().unwrap_or(&[]);
    let vertices = parts.next().unwrap_or(&[]);
    let edges = parts.next().unwrap_or(&[]);
    if props.contains(&b'/') {
        return;
    }
    let dir = scratch();
    let ds = dir.join("ds");
    let source = put(&ds, "g.properties", props);
    put(&ds, "g.v", vertices);
    put(&ds, "g.e", edges);
    let req = ImportRequest {
        source,
        format: InputFormat::Graphalytics,
        directed: None,
        weighted: false,
        vertices: None,
        options: Vec::new(),
        dest: dir.join("g.graph"),
        memory_budget: 64 << 10,
        temp_dir: dir.join("tmp"),
        identity: storage::blockfile::format::FileIdentity::new(
            "g",
            1,
            "fuzz input",
            storage::catalog::StorageKind::Blockfile,
        ),
    };
    run_import(&req);
});
