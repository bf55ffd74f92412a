//! Cache-blocked pull: `out[v] = finish(Σ_{u ∈ list(v)} values[u])` over an in-memory CSR,
//! with the random reads of `values` confined to one cache-sized segment of sources at a time.
//!
//! A plain pull reads `values[u]` for every edge at a random `u`. Once `values` outgrows the
//! caches (19 MB of f64 at R-MAT scale 22, which has 2.4 M vertices), nearly every edge is a
//! cache miss. CSR segmenting (Zhang et al., "Making caches work for graph analytics", 2017)
//! sweeps all destinations once per segment of sources, so each sweep's reads hit a slice of
//! `values` that stays in cache.
//!
//! Each sweep needs its edges contiguous, so the in-edges are copied once per query, segment
//! by segment (`planner::blocking` sizes the copy and the planner only allows it within
//! `memory_limit`). Lists are sorted ascending (a block-file invariant), so a destination's
//! edges into one segment are one run of its list and each sum still adds in list order: the
//! result is bit-for-bit the plain pull's. An unsorted list would still be summed exactly once.

use std::ops::Range;
use std::sync::atomic::AtomicU64;

use rayon::prelude::*;
use storage::CsrView;

use crate::balance;
use crate::error::ExecError;
use crate::list_sum::lane_sum;

/// Destinations per parallel task.
const CHUNK: usize = 4096;

/// The in-edges of every destination, copied segment by segment.
pub struct SegmentedPull {
    segments: Vec<Segment>,
    destinations: usize,
}

/// One destination chunk's share of a segment while it is built: the chunk's first offset,
/// then its parts of the offsets and targets.
type Piece<'s> = (u32, &'s mut [u32], &'s mut [u32]);

/// The edges from one range of sources, grouped by destination.
struct Segment {
    /// `targets[offsets[v]..offsets[v + 1]]` are `v`'s in-neighbours in this segment.
    offsets: Vec<u32>,
    targets: Vec<u32>,
    /// Destination ranges of about equal edges in this segment, one parallel task each: with
    /// hubs numbered first, equal destination counts would leave one worker most of a sweep.
    ranges: Vec<Range<u32>>,
}

impl SegmentedPull {
    /// Copies the lists of `csr`'s first `destinations` vertices, split over `sources` ids as
    /// `planner::blocking` says. `None` when blocking does not pay at this size, or when a
    /// segment has 2^32 edges or more (its offsets would not fit). Call from inside the pool.
    pub fn new(csr: &CsrView<'_>, destinations: usize, sources: usize) -> Option<SegmentedPull> {
        let count = planner::blocking::segments(sources as u64)? as usize;
        let width = planner::blocking::segment_width(sources as u64)? as usize;
        let chunks = destinations.div_ceil(CHUNK);
        // Where segment `s`'s run of `list` ends, given where the previous run ended.
        let run_end = |list: &[u32], s: usize, at: usize| {
            if s + 1 == count {
                list.len()
            } else {
                let bound = ((s + 1) * width).min(u32::MAX as usize) as u32;
                at + list[at..].partition_point(|&u| u < bound)
            }
        };
        // Pass 1: how many edges each destination chunk has in each segment.
        let per_chunk: Vec<Vec<u64>> = (0..chunks)
            .into_par_iter()
            .map(|ci| {
                let mut edges = vec![0u64; count];
                for v in ci * CHUNK..((ci + 1) * CHUNK).min(destinations) {
                    let list = csr.neighbours(v as u32);
                    let mut at = 0;
                    for (s, e) in edges.iter_mut().enumerate() {
                        let end = run_end(list, s, at);
                        *e += (end - at) as u64;
                        at = end;
                    }
                }
                edges
            })
            .collect();
        // Each segment's edges must be addressable by u32 offsets.
        let totals: Vec<u64> = (0..count)
            .map(|s| per_chunk.iter().map(|c| c[s]).sum())
            .collect();
        if totals.iter().any(|&t| t > u64::from(u32::MAX)) {
            return None;
        }
        let mut segments: Vec<Segment> = totals
            .iter()
            .map(|&t| Segment {
                offsets: storage::huge::zeroed(destinations + 1),
                targets: storage::huge::zeroed(t as usize),
                ranges: Vec::new(),
            })
            .collect();
        // Pass 2: every destination chunk gets its own piece of each segment's offsets and
        // targets, and copies its lists' runs into them (finding them again: cheaper than a table of
        // run ends, whose fresh pages cost more than the searches), reading each list once.
        let mut pieces: Vec<Vec<Piece<'_>>> =
            (0..chunks).map(|_| Vec::with_capacity(count)).collect();
        for (s, seg) in segments.iter_mut().enumerate() {
            let mut offsets = &mut seg.offsets[1..];
            let mut targets = seg.targets.as_mut_slice();
            let mut base = 0u64;
            for (ci, piece) in pieces.iter_mut().enumerate() {
                let len = CHUNK.min(destinations - ci * CHUNK);
                let (o, rest) = offsets.split_at_mut(len);
                offsets = rest;
                let (t, rest) = targets.split_at_mut(per_chunk[ci][s] as usize);
                targets = rest;
                piece.push((base as u32, o, t));
                base += per_chunk[ci][s];
            }
        }
        pieces
            .into_par_iter()
            .enumerate()
            .for_each(|(ci, mut piece)| {
                let mut written = vec![0usize; count];
                for i in 0..piece.first().map_or(0, |p| p.1.len()) {
                    let v = ci * CHUNK + i;
                    let list = csr.neighbours(v as u32);
                    let mut from = 0;
                    for (s, (base, offsets, targets)) in piece.iter_mut().enumerate() {
                        let to = run_end(list, s, from);
                        let at = written[s];
                        targets[at..at + to - from].copy_from_slice(&list[from..to]);
                        written[s] += to - from;
                        offsets[i] = *base + written[s] as u32;
                        from = to;
                    }
                }
            });
        for seg in &mut segments {
            let offsets = &seg.offsets;
            let cost = |v: u32| offsets[v as usize] as u64 + v as u64 * balance::VERTEX_COST;
            seg.ranges = balance::cut_by_cost(destinations as u32, chunks, 1, cost);
        }
        Some(SegmentedPull {
            segments,
            destinations,
        })
    }

    /// How many segments the sources were split into.
    pub fn segments(&self) -> usize {
        self.segments.len()
    }

    /// How many destinations it sums for.
    pub fn destinations(&self) -> usize {
        self.destinations
    }

    /// The bytes its copy holds (what `planner::blocking::copy_bytes` estimates).
    pub fn bytes(&self) -> u64 {
        self.segments
            .iter()
            .map(|s| (s.offsets.len() + s.targets.len()) as u64 * 4)
            .sum()
    }

    /// Writes `out[v] = finish(Σ values[u] for u in v's list)` for every destination (f64
    /// bits in atomic cells, the executor's local vertex arrays). `check` runs before every
    /// sweep, so a cancelled query stops within one sweep. Call from inside the worker pool.
    pub fn sum(
        &self,
        values: &[AtomicU64],
        out: &mut [AtomicU64],
        check: &(dyn Fn() -> Result<(), ExecError> + Sync),
        finish: &(dyn Fn(f64) -> f64 + Sync),
    ) -> Result<(), ExecError> {
        let len = self.destinations.min(out.len());
        let out = &mut out[..len];
        let last = self.segments.len() - 1;
        for (s, seg) in self.segments.iter().enumerate() {
            check()?;
            let parts = balance::split_by_ranges(&mut *out, &seg.ranges);
            parts
                .into_par_iter()
                .zip(seg.ranges.par_iter())
                .for_each(|(out, r)| {
                    for (i, slot) in out.iter_mut().enumerate() {
                        let v = r.start as usize + i;
                        let run = seg.offsets[v] as usize..seg.offsets[v + 1] as usize;
                        let slot = slot.get_mut();
                        let before = if s == 0 { 0.0 } else { f64::from_bits(*slot) };
                        let sum = before + lane_sum(&seg.targets[run], values);
                        *slot = if s == last { finish(sum) } else { sum }.to_bits();
                    }
                });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::list_sum::{list_sum, Cut};
    use planner::blocking::{segment_width, SEGMENT_VERTICES};
    use std::sync::atomic::Ordering;

    const SEG: usize = SEGMENT_VERTICES as usize;

    fn cells(values: &[f64]) -> Vec<AtomicU64> {
        values.iter().map(|v| AtomicU64::new(v.to_bits())).collect()
    }

    /// `SegmentedPull` over `lists` (packed back to back, as `CsrView` allows gaps but needs
    /// none), with `finish = x + 0.5`; `None` when it declines to block.
    fn run(lists: &[Vec<u32>], values: &[f64]) -> Option<Vec<f64>> {
        let mut starts = Vec::new();
        let mut degrees = Vec::new();
        let mut targets = Vec::new();
        for l in lists {
            starts.push(targets.len() as u64);
            degrees.push(l.len() as u32);
            targets.extend_from_slice(l);
        }
        let csr = CsrView {
            starts: &starts,
            degrees: &degrees,
            targets: &targets,
            weights: None,
            whole_weight_max: Some(1),
        };
        let pull = SegmentedPull::new(&csr, lists.len(), values.len())?;
        let mut out = cells(&vec![f64::NAN; lists.len()]);
        pull.sum(&cells(values), &mut out, &|| Ok(()), &|x| x + 0.5)
            .unwrap();
        Some(
            out.iter()
                .map(|c| f64::from_bits(c.load(Ordering::Relaxed)))
                .collect(),
        )
    }

    #[test]
    fn equals_the_plain_pull_bit_for_bit_across_segments() {
        // Three segments of sources; destinations with lists spanning none, one and all.
        let n = 2 * SEG + 1000;
        let values: Vec<f64> = (0..n).map(|i| 1.0 / (i as f64 + 3.0)).collect();
        let s = SEG as u32;
        let lists = vec![
            vec![],
            vec![1, 2, 3],
            vec![0, s - 1, s, s + 1, 2 * s, n as u32 - 1],
            vec![2 * s + 5],
            vec![s, s],
        ];
        let got = run(&lists, &values).expect("three segments");
        let cut = segment_width(n as u64).and_then(|w| Cut::new(w as u32));
        for (l, g) in lists.iter().zip(&got) {
            let sum = list_sum(l, &cells(&values), cut);
            assert_eq!(g.to_bits(), (sum + 0.5).to_bits(), "list {l:?}");
            let plain: f64 = l.iter().map(|&u| values[u as usize]).sum();
            assert!((g - 0.5 - plain).abs() <= 1e-15, "list {l:?}");
        }
    }

    #[test]
    fn an_unsorted_list_is_still_summed_exactly_once() {
        let values = vec![1.0; 2 * SEG];
        let s = SEG as u32;
        let got = run(&[vec![s + 3, 1, 0, s + 1, 2]], &values).expect("two segments");
        assert_eq!(got, vec![5.5]);
    }

    #[test]
    fn small_graphs_are_not_blocked() {
        assert_eq!(run(&[vec![0, 1]], &[1.0, 2.0]), None);
    }

    #[test]
    fn a_cancelled_check_stops_the_sweep() {
        let lists = [vec![0u32]];
        let csr = CsrView {
            starts: &[0],
            degrees: &[1],
            targets: &lists[0],
            weights: None,
            whole_weight_max: Some(1),
        };
        let pull = SegmentedPull::new(&csr, 1, 2 * SEG).unwrap();
        let mut out = cells(&[7.0]);
        let r = pull.sum(
            &cells(&vec![1.0; 2 * SEG]),
            &mut out,
            &|| Err(ExecError::Cancelled),
            &|x| x,
        );
        assert!(matches!(r, Err(ExecError::Cancelled)));
        assert_eq!(out[0].load(Ordering::Relaxed), 7f64.to_bits());
    }
}
