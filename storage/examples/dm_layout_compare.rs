//! DMG Figure 24 on this store: level-synchronous BFS over a Graph500 R-MAT graph held in two
//! memory nodes (in-process, loopback TCP), read three ways from the same pool:
//!
//! 1. the DM layout (`DmStore`: 32-byte index entries with in-place lists, merged and batched);
//! 2. a plain CSR written into the pool here (per partition a `u64` offsets array and a `u32`
//!    targets array, range-partitioned like the DM index), read naively: per active vertex one
//!    READ of its two offsets, then, dependent on it, one READ of its list;
//! 3. the same CSR, batched per BFS level: one doorbell batch of offset reads per node (runs
//!    merged across gaps ≤ 256 bytes), then one batch of list reads per node (merged likewise).
//!
//! Prints round trips, round trips per active vertex, remote ops, bytes, loopback wall time and
//! the cost model's RDMA estimate, and checks that every way gives the same BFS depths (and the
//! same as a BFS over the local block file).
//!
//! Run: `cargo run --release -p storage --example dm_layout_compare [-- SCALE]` (default 18).

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use storage::blockfile::memory::MemoryStore;
use storage::dm::load::{load, PoolConfig};
use storage::dm::{
    spawn_memnode_for_tests, Batch, CostModel, DmLayout, DmOptions, DmStore, GlobalAddr,
    StatsSnapshot, TcpOptions, TcpTransport, Transport, VerbReply,
};
use storage::import::{import, ImportRequest, InputFormat};
use storage::{Direction, FetchOrder, GraphStore};

const TOKEN: &str = "dm-layout-compare";
/// Gap up to which two reads on one node merge (as in `DmStore`).
const MERGE_GAP: u64 = 256;
/// Largest single READ (as in `DmStore`).
const READ_PIECE: u64 = 4 << 20;
/// Largest total of READ bytes per batch (as in `DmStore`, under the protocol's limit).
const BATCH_BYTES: u64 = 32 << 20;
/// `SET cn_cache` default.
const CN_CACHE: u64 = 64 << 20;
const UNVISITED: u32 = u32::MAX;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// A plain CSR in the pool: partition `p` (vertices `bounds[p]..bounds[p+1]`) on node `p`, with
/// `count + 1` local `u64` offsets at `offsets[p]` and its lists, back to back, at `targets[p]`.
struct PoolCsr {
    bounds: Vec<u32>,
    offsets: Vec<GlobalAddr>,
    targets: Vec<GlobalAddr>,
}

impl PoolCsr {
    fn partition_of(&self, v: u32) -> usize {
        self.bounds[1..].partition_point(|&b| b <= v)
    }

    /// Where `v`'s two offsets are: (node, address).
    fn offsets_addr(&self, v: u32) -> (usize, GlobalAddr) {
        let p = self.partition_of(v);
        let a = self.offsets[p]
            .checked_add(8 * (v - self.bounds[p]) as u64)
            .expect("address");
        (p, a)
    }

    fn list_addr(&self, p: usize, start: u64) -> GlobalAddr {
        self.targets[p].checked_add(4 * start).expect("address")
    }
}

fn write_all(t: &TcpTransport, base: GlobalAddr, bytes: &[u8]) -> Res<()> {
    for (i, chunk) in bytes.chunks(8 << 20).enumerate() {
        t.write(base.checked_add((i as u64) << 23).expect("address"), chunk)?;
    }
    Ok(())
}

/// Writes the out-lists of `mem` into the pool as a plain CSR, partitioned by `bounds`.
fn write_csr(mem: &MemoryStore, conns: &[TcpTransport], bounds: &[u32]) -> Res<PoolCsr> {
    let mut csr = PoolCsr {
        bounds: bounds.to_vec(),
        offsets: Vec::new(),
        targets: Vec::new(),
    };
    for (p, t) in conns.iter().enumerate() {
        let (a, b) = (bounds[p], bounds[p + 1]);
        let mut offs: Vec<u8> = Vec::with_capacity(8 * (b - a + 1) as usize);
        let mut tgts: Vec<u8> = Vec::new();
        offs.extend_from_slice(&0u64.to_le_bytes());
        mem.scan_lists(Direction::Out, a..b, false, |_, ns, _| {
            for &x in ns {
                tgts.extend_from_slice(&x.to_le_bytes());
            }
            offs.extend_from_slice(&((tgts.len() / 4) as u64).to_le_bytes());
        })?;
        assert_eq!(offs.len(), 8 * (b - a + 1) as usize);
        let oa = t.alloc(offs.len() as u64)?;
        let ta = t.alloc((tgts.len() as u64).max(8))?;
        write_all(t, oa, &offs)?;
        write_all(t, ta, &tgts)?;
        csr.offsets.push(oa);
        csr.targets.push(ta);
    }
    Ok(csr)
}

fn total_stats(conns: &[TcpTransport]) -> StatsSnapshot {
    conns
        .iter()
        .fold(StatsSnapshot::default(), |a, c| a.plus(&c.stats()))
}

/// Reads `(node, addr, len)` spans: per node, doorbell batches of READs (pieces ≤ 4 MiB, ≤ 32 MiB
/// a batch), all submitted before any is waited for. Returns the spans' bytes, in order.
fn fetch_spans(conns: &[TcpTransport], spans: &[(usize, GlobalAddr, u64)]) -> Res<Vec<Vec<u8>>> {
    // Per node: batches, each with its pieces (span index, offset in span) and its READ bytes.
    type Pending = (Batch, Vec<(usize, u64)>, u64);
    let mut per_node: Vec<Vec<Pending>> = (0..conns.len()).map(|_| Vec::new()).collect();
    for (i, &(node, addr, len)) in spans.iter().enumerate() {
        let mut off = 0;
        while off < len {
            let piece = READ_PIECE.min(len - off);
            let list = &mut per_node[node];
            if list.last().is_none_or(|(_, _, b)| b + piece > BATCH_BYTES) {
                list.push((Batch::new(), Vec::new(), 0));
            }
            let (batch, pieces, bytes) = list.last_mut().expect("a batch");
            batch.read(addr.checked_add(off).expect("address"), piece as u32);
            pieces.push((i, off));
            *bytes += piece;
            off += piece;
        }
    }
    let mut tickets = Vec::new();
    for (node, list) in per_node.into_iter().enumerate() {
        for (batch, pieces, _) in list {
            tickets.push((conns[node].submit_batch(batch)?, pieces));
        }
    }
    let mut out: Vec<Vec<u8>> = spans
        .iter()
        .map(|s| Vec::with_capacity(s.2 as usize))
        .collect();
    for (ticket, pieces) in tickets {
        for (reply, (i, off)) in ticket.wait_batch()?.into_iter().zip(pieces) {
            match reply {
                VerbReply::Read(d) => {
                    assert_eq!(out[i].len() as u64, off, "pieces arrive in order");
                    out[i].extend_from_slice(&d);
                }
                r => return Err(format!("READ failed: {r:?}").into()),
            }
        }
    }
    Ok(out)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn targets_of(b: &[u8]) -> impl Iterator<Item = u32> + '_ {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
}

/// What one BFS did.
struct Run {
    depths: Vec<u32>,
    active: u64,
    levels: u32,
    /// Per level: frontier size and the remote work of that level.
    per_level: Vec<(usize, StatsSnapshot)>,
    stats: StatsSnapshot,
    wall: Duration,
    rdma: Duration,
}

/// Depths, active vertices, levels, and per level the frontier size and remote work.
type Bfs = (Vec<u32>, u64, u32, Vec<(usize, StatsSnapshot)>);

/// Level-synchronous BFS; `expand(frontier, visit)` must call `visit(v, neighbours)` once for
/// every vertex of the (sorted) frontier. `stats` reads the remote counters.
fn bfs<E>(n: u32, src: u32, stats: &dyn Fn() -> StatsSnapshot, mut expand: E) -> Res<Bfs>
where
    E: FnMut(&[u32], &mut dyn FnMut(u32, &mut dyn Iterator<Item = u32>)) -> Res<()>,
{
    let mut per_level = Vec::new();
    let mut depth = vec![UNVISITED; n as usize];
    depth[src as usize] = 0;
    let mut frontier = vec![src];
    let (mut active, mut level) = (0u64, 0u32);
    while !frontier.is_empty() {
        active += frontier.len() as u64;
        let mut next = Vec::new();
        let mut visited = 0u64;
        let before = stats();
        expand(&frontier, &mut |_, ns| {
            visited += 1;
            for t in ns {
                if depth[t as usize] == UNVISITED {
                    depth[t as usize] = level + 1;
                    next.push(t);
                }
            }
        })?;
        assert_eq!(
            visited,
            frontier.len() as u64,
            "every frontier vertex visited once"
        );
        per_level.push((frontier.len(), stats().since(&before)));
        next.sort_unstable();
        frontier = next;
        level += 1;
    }
    Ok((depth, active, level, per_level))
}

fn bfs_dm(dm: &DmStore, n: u32, src: u32) -> Res<Run> {
    let before = dm.remote_stats();
    let t = Instant::now();
    let (depths, active, levels, per_level) =
        bfs(n, src, &|| dm.remote_stats(), |frontier, visit| {
            dm.for_each_list(
                Direction::Out,
                frontier,
                FetchOrder::AsGiven,
                false,
                |v, ns, _| visit(v, &mut ns.iter().copied()),
            )?;
            Ok(())
        })?;
    let wall = t.elapsed();
    let stats = dm.remote_stats().since(&before);
    Ok(Run {
        depths,
        active,
        levels,
        per_level,
        stats,
        wall,
        rdma: dm.rdma_estimate(&stats),
    })
}

fn bfs_csr_naive(conns: &[TcpTransport], csr: &PoolCsr, n: u32, src: u32) -> Res<Run> {
    let before = total_stats(conns);
    let t = Instant::now();
    let (depths, active, levels, per_level) =
        bfs(n, src, &|| total_stats(conns), |frontier, visit| {
            for &v in frontier {
                let (p, oa) = csr.offsets_addr(v);
                let o = conns[p].read(oa, 16)?;
                let (s, e) = (u64_at(&o, 0), u64_at(&o, 8));
                if e > s {
                    let l = conns[p].read(csr.list_addr(p, s), (4 * (e - s)) as u32)?;
                    visit(v, &mut targets_of(&l));
                } else {
                    visit(v, &mut std::iter::empty());
                }
            }
            Ok(())
        })?;
    let wall = t.elapsed();
    let stats = total_stats(conns).since(&before);
    Ok(Run {
        depths,
        active,
        levels,
        per_level,
        stats,
        wall,
        // Strictly one dependent round trip after the other.
        rdma: CostModel::default().estimate(&stats, 1),
    })
}

/// Appends `(node, addr, len)` to `spans`, merging with the last span when on the same node and
/// at most `MERGE_GAP` bytes after it; returns (span index, offset of the data in the span).
fn push_merged(
    spans: &mut Vec<(usize, GlobalAddr, u64)>,
    node: usize,
    addr: GlobalAddr,
    len: u64,
) -> (usize, usize) {
    if let Some((sn, sa, sl)) = spans.last_mut() {
        let end = sa.offset() + *sl;
        if *sn == node && addr.offset() >= sa.offset() && addr.offset() <= end + MERGE_GAP {
            let at = addr.offset() - sa.offset();
            *sl = (*sl).max(at + len);
            return (spans.len() - 1, at as usize);
        }
    }
    spans.push((node, addr, len));
    (spans.len() - 1, 0)
}

fn bfs_csr_batched(conns: &[TcpTransport], csr: &PoolCsr, n: u32, src: u32) -> Res<Run> {
    let before = total_stats(conns);
    let t = Instant::now();
    let (depths, active, levels, per_level) =
        bfs(n, src, &|| total_stats(conns), |frontier, visit| {
            // Stage 1: every frontier vertex's two offsets, runs merged, one batch per node.
            let mut spans = Vec::new();
            let locs: Vec<(usize, usize)> = frontier
                .iter()
                .map(|&v| {
                    let (p, a) = csr.offsets_addr(v);
                    push_merged(&mut spans, p, a, 16)
                })
                .collect();
            let bufs = fetch_spans(conns, &spans)?;
            // Stage 2: the non-empty lists, adjacent ones merged, one batch per node.
            let mut lists = Vec::new();
            let mut where_: Vec<Option<(usize, usize, usize)>> = Vec::with_capacity(frontier.len());
            for (&v, &(si, at)) in frontier.iter().zip(&locs) {
                let (s, e) = (u64_at(&bufs[si], at), u64_at(&bufs[si], at + 8));
                if e > s {
                    let p = csr.partition_of(v);
                    let len = 4 * (e - s);
                    let (li, lat) = push_merged(&mut lists, p, csr.list_addr(p, s), len);
                    where_.push(Some((li, lat, len as usize)));
                } else {
                    where_.push(None);
                }
            }
            let data = fetch_spans(conns, &lists)?;
            for (&v, w) in frontier.iter().zip(&where_) {
                match *w {
                    Some((li, at, len)) => visit(v, &mut targets_of(&data[li][at..at + len])),
                    None => visit(v, &mut std::iter::empty()),
                }
            }
            Ok(())
        })?;
    let wall = t.elapsed();
    let stats = total_stats(conns).since(&before);
    Ok(Run {
        depths,
        active,
        levels,
        per_level,
        stats,
        wall,
        // One batch per node in flight at once.
        rdma: CostModel::default().estimate(&stats, conns.len() as u32),
    })
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
}

fn row(graph: &str, layout: &str, r: &Run) {
    let s = &r.stats;
    println!(
        "| {graph} | {layout} | {} | {:.3} | {} | {} / {} | {:.3} s | {:.2} ms |",
        s.round_trips,
        s.round_trips as f64 / r.active as f64,
        s.verbs(),
        mib(s.bytes_sent),
        mib(s.bytes_received),
        r.wall.as_secs_f64(),
        r.rdma.as_secs_f64() * 1e3,
    );
}

fn main() -> Res<()> {
    let scale: u32 = std::env::args().nth(1).map_or(Ok(18), |s| s.parse())?;
    let tmp = tempfile::tempdir()?;
    let src_file = tmp.path().join(format!("rmat{scale}.txt"));
    let t = Instant::now();
    storage::gen::gen_rmat(scale, 16, 1, false, &src_file)?;
    eprintln!("generated R-MAT scale {scale} in {:.1?}", t.elapsed());

    let a = spawn_memnode_for_tests(1, 1 << 30, TOKEN)?;
    let b = spawn_memnode_for_tests(2, 1 << 30, TOKEN)?;
    let nodes = vec![a.addr().to_string(), b.addr().to_string()];
    let cfg = PoolConfig {
        nodes: nodes.clone(),
        token: TOKEN.into(),
        tcp: TcpOptions::default(),
    };

    let mut notes = Vec::new();
    let mut per_level = Vec::new();
    println!("| graph | layout | round trips | round trips / active vertex | remote ops (READs) | bytes sent / received | wall time, loopback | RDMA estimate |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for directed in [true, false] {
        let dest = tmp.path().join(format!("rmat{scale}-{directed}.fgraph"));
        let req = ImportRequest {
            source: src_file.clone(),
            format: InputFormat::Edgelist,
            directed: Some(directed),
            weighted: false,
            vertices: None,
            options: vec![],
            dest: dest.clone(),
            memory_budget: 256 << 20,
            threads: 0,
            temp_dir: tmp.path().to_path_buf(),
            identity: storage::blockfile::format::FileIdentity::new(
                "g",
                1,
                &src_file.display().to_string(),
                storage::catalog::StorageKind::Blockfile,
            ),
        };
        import(&req, &mut |_| {}, &AtomicBool::new(false))?;
        let mem = MemoryStore::load(&dest)?;
        let sh = mem.shape();
        let n = sh.vertices;

        let layout: DmLayout = load(&mem, &cfg, 2)?;
        let dm = DmStore::open(
            &dest,
            layout.clone(),
            &DmOptions {
                graph: "g".into(),
                pool: cfg.clone(),
                cn_cache: CN_CACHE,
                threads: 1,
            },
        )?;
        let conns: Vec<TcpTransport> = nodes
            .iter()
            .map(|addr| TcpTransport::connect(addr.as_str(), TOKEN, TcpOptions::default()))
            .collect::<Result<_, _>>()?;
        let csr = write_csr(&mem, &conns, &layout.bounds)?;

        // Source: input id 1 (as in docs/DM.md), else the first vertex with out-edges.
        let src = mem
            .internal_id(1)
            .filter(|&v| mem.degree(Direction::Out, v) > 0)
            .or_else(|| (0..n).find(|&v| mem.degree(Direction::Out, v) > 0))
            .ok_or("no vertex has out-edges")?;
        let reference = bfs(n, src, &StatsSnapshot::default, |frontier, visit| {
            mem.for_each_list(
                Direction::Out,
                frontier,
                FetchOrder::AsGiven,
                false,
                |v, ns, _| visit(v, &mut ns.iter().copied()),
            )?;
            Ok(())
        })?;

        let runs = [
            ("DM layout (`DmStore`)", bfs_dm(&dm, n, src)?),
            (
                "plain CSR, naive (2 dependent READs / vertex)",
                bfs_csr_naive(&conns, &csr, n, src)?,
            ),
            (
                "plain CSR, batched per level",
                bfs_csr_batched(&conns, &csr, n, src)?,
            ),
        ];
        let graph = format!(
            "scale {scale}, {}",
            if directed { "directed" } else { "undirected" }
        );
        for (name, r) in &runs {
            assert_eq!(r.depths, reference.0, "{graph}, {name}: depths differ");
            assert_eq!((r.active, r.levels), (reference.1, reference.2));
            row(&graph, name, r);
        }
        let mut t = format!(
            "\n{graph}, per level (round trips / READs / MiB received):\n\n\
             | level | frontier | DM layout | plain CSR, naive | plain CSR, batched |\n\
             |---:|---:|---:|---:|---:|\n"
        );
        for l in 0..reference.2 as usize {
            let cell = |r: &Run| {
                let s = &r.per_level[l].1;
                format!(
                    "{} / {} / {:.2}",
                    s.round_trips,
                    s.verbs(),
                    s.bytes_received as f64 / (1 << 20) as f64
                )
            };
            t += &format!(
                "| {l} | {} | {} | {} | {} |\n",
                runs[0].1.per_level[l].0,
                cell(&runs[0].1),
                cell(&runs[1].1),
                cell(&runs[2].1)
            );
        }
        per_level.push(t);
        notes.push(format!(
            "{graph}: |V| = {n}, arcs = {}, BFS from input id {} reaches {} active vertices in {} levels; \
             {:.1} % of out-lists in place",
            sh.arcs,
            mem.input_id(src),
            reference.1,
            reference.2,
            100.0 * layout.in_place_fraction(Direction::Out),
        ));
        drop(dm);
        for (p, t) in conns.iter().enumerate() {
            t.free(csr.offsets[p])?;
            t.free(csr.targets[p])?;
        }
        let freed = storage::dm::free::free_layout(&layout, &cfg);
        if !freed.clean() {
            eprintln!("{}", freed.lines("the compared graph").join("\n"));
        }
    }
    println!();
    for n in notes {
        println!("- {n}");
    }
    for t in per_level {
        print!("{t}");
    }
    a.shutdown();
    b.shutdown();
    Ok(())
}
