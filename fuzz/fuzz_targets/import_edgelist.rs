//! The edge-list importer (`FORMAT edgelist`) over arbitrary file contents.
//!
//! Input layout: byte 0 configures the request, the rest is the edge file.
//!   bits 0-1  DIRECTED: 0/3 the default, 1 DIRECTED, 2 UNDIRECTED
//!   bit  2    WEIGHTED
//!   bits 3-4  memory budget: 4 KiB (forces external-sort spills), 64 KiB, 1 MiB, 64 MiB
//!   bit  5    VERTICES: the rest is split at its first NUL byte into edge file / vertex file
#![no_main]

use frontier_fuzz::{put, run_import, scratch};
use libfuzzer_sys::fuzz_target;
use storage::import::{ImportRequest, InputFormat};

const BUDGETS: [u64; 4] = [4 << 10, 64 << 10, 1 << 20, 64 << 20];

fuzz_target!(|data: &[u8]| {
    let Some((&cfg, rest)) = data.split_first() else {
        return;
    };
    let dir = scratch();
    let input = dir.join("in");
    let (edges, vertices) = if cfg & 0x20 != 0 {
        match rest.iter().position(|&b| b == 0) {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, Some(&[][..])),
        }
    } else {
        (rest, None)
    };
    let req = ImportRequest {
        source: put(&input, "edges.txt", edges),
        format: InputFormat::Edgelist,
        directed: match cfg & 3 {
            1 => Some(true),
            2 => Some(false),
            _ => None,
        },
        weighted: cfg & 4 != 0,
        vertices: vertices.map(|v| put(&input, "vertices.txt", v)),
        options: Vec::new(),
        dest: dir.join("g.graph"),
        memory_budget: BUDGETS[((cfg >> 3) & 3) as usize],
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
