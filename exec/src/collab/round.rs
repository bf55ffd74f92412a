//! One collaborative round (ValRD or RefRD): **scatter** — the workers walk the sources, turn
//! their edges into updates, combine them per destination in per-piece buckets and send full
//! buckets into the pieces' mailboxes — then **apply** — the owner of each piece reads it
//! once, applies its mail (and, for references, the runs of the lists they name) locally, and
//! writes it back once. Sources are walked in phases of bounded expected mail, each followed
//! by an apply, so the memory nodes never queue more than about [`QUEUE_LIMIT`] bytes.
//!
//! Split over several compute nodes ([`crate::cluster`]) every member scatters from its own
//! sources into every piece's mailbox, the members meet at an `or_words` of the pieces that
//! received mail (the phase's barrier), and each member applies the pieces it owns
//! ([`Pieces`]). Members agree on the round tag (member 0's) and walk as many phases as the
//! member with the most.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use storage::{Direction, FetchOrder, GraphStore, RemoteVector};

use super::mail::{self, Mail};
use super::pieces::Pieces;
use super::sources::Sources;
use super::{UpdateStrategy, Windows, QUEUE_LIMIT};
use crate::cluster::hubs::Deal;
use crate::context::RunContext;
use crate::error::ExecError;
use crate::state::{StateValue, VertexArray};

/// Buffers a worker sends in one pipelined push.
const PUSH_GROUP: usize = 8;
/// Bytes asked for per mailbox pull (one pull's buffers are held at a time, about three times
/// over: the reply frame, its payload and the decoded items), part of the constant in a
/// worker's memory bound (docs/DM.md, "The bound"). The memory node returns at least one
/// buffer, so a bucket larger than this still travels whole.
const PULL_BYTES: u32 = 256 << 10;
/// RefRD: a list is considered for references from this many edges.
const REF_LIST: usize = 8;
/// RefRD: a run of at least this many edges into one window travels as a reference.
const REF_RUN: u32 = 8;

/// How updates to one destination combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// `state[v] += x`.
    Add,
    /// `state[v] = min(state[v], x)`.
    Min,
}

/// What one round does.
#[derive(Debug, Clone, Copy)]
pub struct Round<'r> {
    /// The sources, sorted, no duplicates.
    pub sources: &'r [u32],
    /// Directions pushed along, in order.
    pub dirs: &'r [Direction],
    pub weighted: bool,
    /// ValRD or RefRD.
    pub strategy: UpdateStrategy,
    pub combine: Combine,
    /// Hubs dealt out across compute nodes: only this member's slice of their lists is
    /// scattered, always by value (a reference would make the owner apply the whole list).
    pub deal: &'r Deal,
    /// The round overwrites the state: every window starts at zero (ignoring what the state
    /// held) and is written, `finish`ed, whether or not it received anything.
    pub fresh: bool,
    pub windows: Windows,
}

/// The sum of the sources' degrees along `dirs` (of a dealt hub, this member's slice): the
/// updates a round will emit at most.
pub fn expected_updates<S: GraphStore>(
    store: &S,
    sources: &[u32],
    dirs: &[Direction],
    deal: &Deal,
) -> u64 {
    dirs.iter()
        .map(|&d| {
            sources
                .iter()
                .map(|&v| deal.part(v, store.degree(d, v) as usize).len() as u64)
                .sum::<u64>()
        })
        .sum()
}

#[inline]
fn merge<T: StateValue>(op: Combine, a: T, b: T) -> T {
    match op {
        Combine::Add => {
            let c = T::cell(a);
            T::add(&c, b);
            T::load(&c)
        }
        Combine::Min => {
            if b < a {
                b
            } else {
                a
            }
        }
    }
}

/// Runs one round on the remote array `state`. `values(chunk)` gives each source of a chunk
/// its value (`None`: it sends nothing); `emit(src, value, dst, weight)` the update an edge
/// carries (`None`: none); `finish` is applied to every element of a `fresh` round before it
/// is written. Returns the vertices whose state changed (Add: received an update; Min:
/// dropped) with a value they took, in no particular order (none for a `fresh` round), and
/// the number of edges examined.
pub fn run<S, T, V, E, F>(
    ctx: &RunContext<'_, S>,
    state: &VertexArray<T>,
    round: Round<'_>,
    values: V,
    emit: E,
    finish: F,
) -> Result<(Vec<(u32, T)>, u64), ExecError>
where
    S: GraphStore,
    T: StateValue,
    V: Fn(&[u32]) -> Result<Vec<Option<T>>, ExecError> + Sync,
    E: Fn(u32, T, u32, f64) -> Option<T> + Sync,
    F: Fn(T) -> T + Sync,
{
    let sources = Sources::List(round.sources);
    run_over(ctx, state, round, &sources, values, emit, finish)
}

/// [`run`] from `sources` instead of `round.sources` (which is ignored): a round from spans
/// of vertices lists none of them beyond the chunk at hand.
pub fn run_over<S, T, V, E, F>(
    ctx: &RunContext<'_, S>,
    state: &VertexArray<T>,
    round: Round<'_>,
    sources: &Sources<'_>,
    values: V,
    emit: E,
    finish: F,
) -> Result<(Vec<(u32, T)>, u64), ExecError>
where
    S: GraphStore,
    T: StateValue,
    V: Fn(&[u32]) -> Result<Vec<Option<T>>, ExecError> + Sync,
    E: Fn(u32, T, u32, f64) -> Option<T> + Sync,
    F: Fn(T) -> T + Sync,
{
    let changed = std::sync::Mutex::new(Vec::new());
    let edges = run_into(ctx, state, round, sources, values, emit, finish, &|part| {
        changed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(part)
    })?;
    Ok((
        changed.into_inner().unwrap_or_else(|p| p.into_inner()),
        edges,
    ))
}

/// [`run_over`] handing what changed to `sink` piece by piece as the pieces are applied,
/// instead of returning it: a caller that only marks the changed vertices holds one piece's
/// changes per worker, not a list over everything the round lowered. Returns the edges
/// examined.
#[allow(clippy::too_many_arguments)]
pub fn run_into<S, T, V, E, F>(
    ctx: &RunContext<'_, S>,
    state: &VertexArray<T>,
    round: Round<'_>,
    sources: &Sources<'_>,
    values: V,
    emit: E,
    finish: F,
    sink: &(dyn Fn(Vec<(u32, T)>) + Sync),
) -> Result<u64, ExecError>
where
    S: GraphStore,
    T: StateValue,
    V: Fn(&[u32]) -> Result<Vec<Option<T>>, ExecError> + Sync,
    E: Fn(u32, T, u32, f64) -> Option<T> + Sync,
    F: Fn(T) -> T + Sync,
{
    let remote = state
        .remote()
        .ok_or_else(|| ExecError::Other("collaborative update needs remote state".into()))?;
    let split = ctx.split();
    let (_, rank) = split.size_rank();
    let w = Pieces::for_round(&round.windows, &split)?;
    // One tag for the round on every member: member 0's.
    let mut tag = RandomState::new().hash_one(ctx.n());
    if let Some(c) = split.collectives() {
        tag = c
            .broadcast((rank == 0).then_some(&[tag][..]))?
            .first()
            .copied()
            .ok_or_else(|| ExecError::Other("member 0 sent no round tag".into()))?;
    }
    // Piece k's mail goes to mailbox k of this array: the array keeps its mailboxes apart
    // from every other array's (storage::dm::mailbox), so k alone names it.
    let mailbox = |k: u32| k;
    let mut phases = phases(ctx.store, sources, round.dirs, round.deal);
    if let Some(c) = split.collectives() {
        // Every member walks as many phases as the one with the most, each ending at the
        // same collective.
        let most = c
            .gather(phases.len() as u64)?
            .into_iter()
            .max()
            .unwrap_or(1);
        while (phases.len() as u64) < most {
            let end = sources.len();
            phases.push(end..end);
        }
    }
    let mut edges = 0u64;
    for (i, phase) in phases.iter().enumerate() {
        ctx.check()?;
        let touched: Vec<AtomicBool> = (0..w.count()).map(|_| AtomicBool::new(false)).collect();
        edges += scatter(
            ctx,
            remote,
            &round,
            &w,
            (sources, phase.clone()),
            tag,
            &mailbox,
            &touched,
            &values,
            &emit,
        )?;
        // Which pieces received mail from any member; in cluster mode also the barrier after
        // which every member's mail of the phase is in its mailbox.
        let mut mail_bits = vec![0u64; (w.count() as usize).div_ceil(64)];
        for (k, t) in touched.iter().enumerate() {
            if t.load(Ordering::Relaxed) {
                mail_bits[k / 64] |= 1 << (k % 64);
            }
        }
        if let Some(c) = split.collectives() {
            c.or_words(&mut mail_bits)?;
        }
        let has_mail = |k: u32| mail_bits[k as usize / 64] & (1 << (k % 64)) != 0;
        let start_zero = round.fresh && i == 0;
        let last = i + 1 == phases.len();
        let pieces: Vec<u32> = (0..w.count())
            .filter(|&k| w.owner(k) as usize == rank && (round.fresh || has_mail(k)))
            .collect();
        ctx.pool.install(|| {
            pieces
                .par_iter()
                .map(|&k| {
                    let ctx_apply = Apply {
                        range: w.range(k),
                        tag,
                        mailbox: mailbox(k),
                        has_mail: has_mail(k),
                        start_zero,
                        finish: (round.fresh && last).then_some(&finish),
                    };
                    let part = apply(ctx, state, &round, ctx_apply, &emit)?;
                    if !round.fresh && !part.is_empty() {
                        sink(part);
                    }
                    Ok(())
                })
                .collect::<Result<(), ExecError>>()
        })?;
    }
    Ok(edges)
}

/// The sources cut into phases of at most [`QUEUE_LIMIT`] bytes of expected mail (at least
/// one phase, possibly empty), as ranges of their indices.
fn phases<S: GraphStore>(
    store: &S,
    sources: &Sources<'_>,
    dirs: &[Direction],
    deal: &Deal,
) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut bytes = 0u64;
    for (i, v) in sources.iter().enumerate() {
        let d: u64 = dirs
            .iter()
            .map(|&dir| deal.part(v, store.degree(dir, v) as usize).len() as u64)
            .sum();
        bytes += d * mail::VALUE_BYTES as u64;
        if bytes > QUEUE_LIMIT && i > start {
            out.push(start..i);
            start = i;
            bytes = d * mail::VALUE_BYTES as u64;
        }
    }
    out.push(start..sources.len());
    out
}

/// One worker's buckets and the buffers it has ready to send.
struct Buckets<T> {
    values: Vec<Vec<(u32, T)>>,
    refs: Vec<Vec<(u32, Direction, T)>>,
    ready: Vec<(u64, u32, Vec<u8>)>,
    /// RefRD: edges per window of the list at hand.
    counts: Vec<u32>,
}

#[allow(clippy::too_many_arguments)]
fn scatter<S, T, V, E>(
    ctx: &RunContext<'_, S>,
    remote: &dyn RemoteVector,
    round: &Round<'_>,
    w: &Pieces,
    (sources, phase): (&Sources<'_>, Range<usize>),
    tag: u64,
    mailbox: &(impl Fn(u32) -> u32 + Sync),
    touched: &[AtomicBool],
    values: &V,
    emit: &E,
) -> Result<u64, ExecError>
where
    S: GraphStore,
    T: StateValue,
    V: Fn(&[u32]) -> Result<Vec<Option<T>>, ExecError> + Sync,
    E: Fn(u32, T, u32, f64) -> Option<T> + Sync,
{
    let op = round.combine;
    let refs_wanted = round.strategy == UpdateStrategy::RefRd;
    let chunk = ctx.pool.chunk_len(phase.len(), 16, 4096).max(1);
    // The phase's chunks by index: only the chunk a worker holds is ever listed.
    let chunks: Vec<Range<usize>> = phase
        .clone()
        .step_by(chunk)
        .map(|a| a..(a + chunk).min(phase.end))
        .collect();
    let send = |b: &mut Buckets<T>| -> Result<(), ExecError> {
        if !b.ready.is_empty() {
            remote.mailbox_push(std::mem::take(&mut b.ready))?;
        }
        Ok(())
    };
    // Combines bucket `k`; queues it when it is still over half full (or `all`).
    let flush = |b: &mut Buckets<T>, k: usize, all: bool| -> Result<(), ExecError> {
        let bucket = &mut b.values[k];
        if !bucket.is_empty() {
            bucket.sort_unstable_by_key(|x| x.0);
            bucket.dedup_by(|later, kept| {
                if later.0 == kept.0 {
                    kept.1 = merge(op, kept.1, later.1);
                    true
                } else {
                    false
                }
            });
            if all || bucket.len() * 2 >= w.bucket {
                let words: Vec<(u32, u64)> =
                    bucket.iter().map(|&(v, x)| (v, x.to_word())).collect();
                bucket.clear();
                b.ready.push((
                    w.range(k as u32).start as u64,
                    mailbox(k as u32),
                    mail::encode_values(tag, &words),
                ));
                touched[k].store(true, Ordering::Relaxed);
            }
        }
        let refs = &mut b.refs[k];
        if !refs.is_empty() && (all || refs.len() >= w.bucket) {
            let items: Vec<(u32, Direction, u64)> =
                refs.iter().map(|&(v, d, x)| (v, d, x.to_word())).collect();
            refs.clear();
            b.ready.push((
                w.range(k as u32).start as u64,
                mailbox(k as u32),
                mail::encode_refs(tag, &items),
            ));
            touched[k].store(true, Ordering::Relaxed);
        }
        if b.ready.len() >= PUSH_GROUP {
            send(b)?;
        }
        Ok(())
    };
    let edges = ctx.pool.install(|| {
        chunks
            .par_iter()
            .map(|at| {
                let listed = sources.slice(at.clone());
                let chunk: &[u32] = &listed;
                ctx.check()?;
                let vals = values(chunk)?;
                let mut b = Buckets {
                    values: vec![Vec::new(); w.count() as usize],
                    refs: vec![Vec::new(); w.count() as usize],
                    ready: Vec::new(),
                    counts: if refs_wanted {
                        vec![0; w.count() as usize]
                    } else {
                        Vec::new()
                    },
                };
                let mut edges = 0u64;
                let mut failed: Option<ExecError> = None;
                for &dir in round.dirs {
                    ctx.store.for_each_list(
                        dir,
                        chunk,
                        FetchOrder::AsGiven,
                        round.weighted,
                        |u, ns, ws| {
                            if failed.is_some() {
                                return;
                            }
                            let part = round.deal.part(u, ns.len());
                            let dealt = round.deal.is_dealt(u);
                            let (first, ns) = (part.start, &ns[part]);
                            edges += ns.len() as u64;
                            let Some(x) = chunk
                                .binary_search(&u)
                                .ok()
                                .and_then(|i| vals.get(i).copied().flatten())
                            else {
                                return;
                            };
                            let by_ref = refs_wanted && !dealt && ns.len() >= REF_LIST;
                            if by_ref {
                                for &dst in ns {
                                    if dst < w.n {
                                        b.counts[w.of(dst) as usize] += 1;
                                    }
                                }
                            }
                            for (i, &dst) in ns.iter().enumerate() {
                                if dst >= w.n {
                                    continue;
                                }
                                let k = w.of(dst) as usize;
                                if by_ref && b.counts[k] >= REF_RUN {
                                    continue;
                                }
                                let weight =
                                    ws.and_then(|ws| ws.get(first + i)).copied().unwrap_or(1.0);
                                if let Some(c) = emit(u, x, dst, weight) {
                                    b.values[k].push((dst, c));
                                    if b.values[k].len() >= w.bucket {
                                        if let Err(e) = flush(&mut b, k, false) {
                                            failed = Some(e);
                                            return;
                                        }
                                    }
                                }
                            }
                            if by_ref {
                                for &dst in ns {
                                    if dst >= w.n {
                                        continue;
                                    }
                                    let k = w.of(dst) as usize;
                                    if b.counts[k] >= REF_RUN {
                                        b.refs[k].push((u, dir, x));
                                        if let Err(e) = flush(&mut b, k, false) {
                                            failed = Some(e);
                                            return;
                                        }
                                    }
                                    b.counts[k] = 0;
                                }
                            }
                        },
                    )?;
                    if let Some(e) = failed.take() {
                        return Err(e);
                    }
                }
                for k in 0..w.count() as usize {
                    flush(&mut b, k, true)?;
                }
                send(&mut b)?;
                Ok(edges)
            })
            .sum::<Result<u64, ExecError>>()
    })?;
    Ok(edges)
}

/// One window's apply.
struct Apply<'f, F> {
    /// The piece's vertices.
    range: std::ops::Range<u32>,
    tag: u64,
    mailbox: u32,
    has_mail: bool,
    /// The window starts at zero instead of being read.
    start_zero: bool,
    /// Applied to every element before the window is written (the last phase of a fresh round).
    finish: Option<&'f F>,
}

fn apply<S, T, E, F>(
    ctx: &RunContext<'_, S>,
    state: &VertexArray<T>,
    round: &Round<'_>,
    a: Apply<'_, F>,
    emit: &E,
) -> Result<Vec<(u32, T)>, ExecError>
where
    S: GraphStore,
    T: StateValue,
    E: Fn(u32, T, u32, f64) -> Option<T> + Sync,
    F: Fn(T) -> T + Sync,
{
    ctx.check()?;
    let remote = state
        .remote()
        .ok_or_else(|| ExecError::Other("collaborative update needs remote state".into()))?;
    let range = a.range.clone();
    let len = (range.end - range.start) as usize;
    let mut acc = vec![T::from_word(0); len];
    if !a.start_zero {
        state.read_range(range.start, &mut acc)?;
    }
    let mut changed = vec![false; len];
    let what = format!(
        "mailbox {:#x} of vertices {}..{}",
        a.mailbox, range.start, range.end
    );
    let mut put = |acc: &mut [T], dst: u32, x: T| -> Result<(), ExecError> {
        if !range.contains(&dst) {
            return Err(ExecError::Other(format!(
                "{what}: an update for vertex {dst} outside the window; run the query again"
            )));
        }
        let i = (dst - range.start) as usize;
        let old = acc[i];
        let new = merge(round.combine, old, x);
        if round.combine == Combine::Add || new < old {
            acc[i] = new;
            changed[i] = true;
        }
        Ok(())
    };
    let mut refs: Vec<(u32, Direction, T)> = Vec::new();
    if a.has_mail {
        loop {
            let got = remote.mailbox_pull(range.start as u64, a.mailbox, PULL_BYTES)?;
            if got.is_empty() {
                break;
            }
            for buf in got {
                match mail::decode(&buf, a.tag, &what)? {
                    Mail::Values(items) => {
                        for (dst, x) in items {
                            put(&mut acc, dst, T::from_word(x))?;
                        }
                    }
                    Mail::Refs(items) => {
                        refs.extend(items.into_iter().map(|(v, d, x)| (v, d, T::from_word(x))))
                    }
                    Mail::Marks(_) => {
                        return Err(ExecError::Other(format!(
                            "{what}: a buffer of marks in a window's mailbox; the memory \
                             node's mailbox holds foreign data: run the query again"
                        )))
                    }
                }
            }
        }
    }
    for &dir in round.dirs {
        let mut srcs: Vec<(u32, T)> = refs
            .iter()
            .filter(|r| r.1 == dir)
            .map(|r| (r.0, r.2))
            .collect();
        if srcs.is_empty() {
            continue;
        }
        srcs.sort_unstable_by_key(|r| r.0);
        srcs.dedup_by_key(|r| r.0);
        let ids: Vec<u32> = srcs.iter().map(|r| r.0).collect();
        let mut failed = None;
        ctx.store.for_each_list(
            dir,
            &ids,
            FetchOrder::AsGiven,
            round.weighted,
            |u, ns, ws| {
                let Ok(i) = ids.binary_search(&u) else { return };
                let x = srcs[i].1;
                for (j, &dst) in ns.iter().enumerate() {
                    if failed.is_some() || !range.contains(&dst) {
                        continue;
                    }
                    let weight = ws.and_then(|ws| ws.get(j)).copied().unwrap_or(1.0);
                    if let Some(c) = emit(u, x, dst, weight) {
                        if let Err(e) = put(&mut acc, dst, c) {
                            failed = Some(e);
                        }
                    }
                }
            },
        )?;
        if let Some(e) = failed {
            return Err(e);
        }
    }
    if let Some(finish) = a.finish {
        for x in &mut acc {
            *x = finish(*x);
        }
    }
    let any = changed.iter().any(|&c| c);
    if any || a.finish.is_some() || a.start_zero {
        state.write_range(range.start, &acc)?;
    }
    if round.fresh {
        // A fresh round reports nothing (every vertex it wrote would be 16 bytes here).
        return Ok(Vec::new());
    }
    Ok(changed
        .iter()
        .enumerate()
        .filter(|(_, &c)| c)
        .map(|(i, _)| (range.start + i as u32, acc[i]))
        .collect())
}
