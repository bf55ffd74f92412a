//! Phase 4's lists: the sorted arcs become adjacency lists, packed into blocks in side files by
//! [`ListWriter`], one vertex's list at a time.

use std::path::Path;

use super::external_sort::{ArcRecord, Merged, Sorter};
use super::merge::Routed;
use super::{ImportPhase, Progress};
use crate::blockfile::writer::{ListWriter, WrittenLists};
use crate::error::Result;

/// The list being assembled for one vertex.
#[derive(Default)]
pub(super) struct ListBuf {
    vertex: Option<u32>,
    targets: Vec<u32>,
    weights: Vec<f64>,
}

impl ListBuf {
    /// Arc `from -> to`: arcs come grouped by `from`, so a new `from` ends the list before it.
    #[inline]
    pub(super) fn add(
        &mut self,
        w: &mut ListWriter,
        from: u32,
        to: u32,
        weight: f64,
        weighted: bool,
    ) -> Result<()> {
        if self.vertex != Some(from) {
            self.flush(w, weighted)?;
            self.vertex = Some(from);
        }
        self.targets.push(to);
        if weighted {
            self.weights.push(weight);
        }
        Ok(())
    }

    /// Writes the list assembled so far, if any.
    pub(super) fn flush(&mut self, w: &mut ListWriter, weighted: bool) -> Result<()> {
        if let Some(v) = self.vertex.take() {
            w.push(v, &self.targets, weighted.then_some(&self.weights[..]))?;
            self.targets.clear();
            self.weights.clear();
        }
        Ok(())
    }
}

/// Where and how the lists are written: side files in the import's temporary directory, for
/// `n` vertices, with weights or without.
pub(super) struct ListFiles<'d> {
    pub(super) dir: &'d Path,
    pub(super) n: u32,
    pub(super) weighted: bool,
}

impl ListFiles<'_> {
    /// A writer of the lists named `name`.
    pub(super) fn writer(&self, name: &str) -> Result<ListWriter> {
        ListWriter::new(self.dir, name, self.n, self.weighted)
    }

    /// The lists `name` of the arcs of `sorter`, merged in (from, to) order.
    pub(super) fn sorted<A: ArcRecord>(
        &self,
        sorter: Sorter<A>,
        name: &str,
        progress: &mut Progress<'_>,
        runs_spilled: &mut u64,
    ) -> Result<WrittenLists> {
        let mut merged: Merged<A> = sorter.finish_counting(runs_spilled)?;
        let mut w = self.writer(name)?;
        let mut list = ListBuf::default();
        let mut count = 0u64;
        while let Some(a) = merged.next()? {
            count += 1;
            progress.record(ImportPhase::Sorting, count)?;
            list.add(&mut w, a.from(), a.to(), a.weight(), self.weighted)?;
        }
        list.flush(&mut w, self.weighted)?;
        w.finish()
    }
}

impl<A: ArcRecord> Routed<A> {
    /// The out-lists (written during the merge, or sorted now) and a directed graph's in-lists;
    /// an undirected graph's only lists are its out-lists.
    pub(super) fn write_lists(
        self,
        files: &ListFiles<'_>,
        progress: &mut Progress<'_>,
        runs_spilled: &mut u64,
    ) -> Result<(WrittenLists, Option<WrittenLists>)> {
        match (self.out_written, self.out_again) {
            (Some((mut w, mut list)), _) => {
                list.flush(&mut w, files.weighted)?;
                let out = w.finish()?;
                let inn = files.sorted(self.again, "in", progress, runs_spilled)?;
                Ok((out, Some(inn)))
            }
            (None, Some(out_again)) => {
                let out = files.sorted(out_again, "out", progress, runs_spilled)?;
                let inn = files.sorted(self.again, "in", progress, runs_spilled)?;
                Ok((out, Some(inn)))
            }
            (None, None) => {
                let out = files.sorted(self.again, "out", progress, runs_spilled)?;
                Ok((out, None))
            }
        }
    }
}
