//! The sources of a collaborative round, as a list or as sorted vertex spans. A round from
//! every vertex (PageRank's sum) has the owned range plus a few dealt hubs as its sources:
//! spans describe them in O(hubs) bytes, where a list would cost 4 B per owned vertex, so a
//! compute node's memory for the round does not grow with its owned range. The round walks
//! its sources by index (phases, then chunks of at most a few thousand vertices), and only a
//! chunk is ever made into a list.

use std::borrow::Cow;
use std::ops::Range;

/// Sorted, distinct source vertices, addressed by index.
#[derive(Debug, Clone)]
pub enum Sources<'s> {
    /// Given as a list (sorted, distinct).
    List(&'s [u32]),
    /// Given as sorted, disjoint, non-empty spans, with the index each starts at.
    Spans {
        spans: Vec<Range<u32>>,
        starts: Vec<usize>,
    },
}

impl<'s> Sources<'s> {
    /// Sources from spans in any order; empty spans are dropped and overlaps merged, so the
    /// vertices are sorted and distinct.
    pub fn spans(mut spans: Vec<Range<u32>>) -> Sources<'static> {
        spans.retain(|r| r.start < r.end);
        spans.sort_unstable_by_key(|r| r.start);
        let mut merged: Vec<Range<u32>> = Vec::with_capacity(spans.len());
        for r in spans {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        let mut starts = Vec::with_capacity(merged.len());
        let mut at = 0usize;
        for r in &merged {
            starts.push(at);
            at += r.len();
        }
        Sources::Spans {
            spans: merged,
            starts,
        }
    }

    /// The number of sources.
    pub fn len(&self) -> usize {
        match self {
            Sources::List(l) => l.len(),
            Sources::Spans { spans, starts } => match (spans.last(), starts.last()) {
                (Some(r), Some(&s)) => s + r.len(),
                _ => 0,
            },
        }
    }

    /// Whether there is no source.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sources at indices `at` (clamped to the sources), in order: borrowed from a list,
    /// made for spans.
    pub fn slice(&self, at: Range<usize>) -> Cow<'_, [u32]> {
        let end = at.end.min(self.len());
        let start = at.start.min(end);
        match self {
            Sources::List(l) => Cow::Borrowed(&l[start..end]),
            Sources::Spans { spans, starts } => {
                let mut out = Vec::with_capacity(end - start);
                // The span holding index `start`: the last one starting at or before it.
                let mut k = starts.partition_point(|&s| s <= start).saturating_sub(1);
                let mut i = start;
                while i < end && k < spans.len() {
                    let r = &spans[k];
                    let from = r.start + (i - starts[k]) as u32;
                    let take = (r.end - from).min((end - i) as u32);
                    out.extend(from..from + take);
                    i += take as usize;
                    k += 1;
                }
                Cow::Owned(out)
            }
        }
    }

    /// Every source in order (nothing is listed).
    pub fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        match self {
            Sources::List(l) => Box::new(l.iter().copied()),
            Sources::Spans { spans, .. } => Box::new(spans.iter().flat_map(|r| r.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_index_like_the_list_they_describe() {
        let s = Sources::spans(vec![40..45, 3..4, 10..20, 12..22, 30..30, 22..25]);
        let list: Vec<u32> = (3..4).chain(10..25).chain(40..45).collect();
        assert_eq!(s.len(), list.len());
        assert_eq!(s.iter().collect::<Vec<_>>(), list);
        for a in 0..=list.len() + 2 {
            for b in a..=list.len() + 2 {
                let want = &list[a.min(list.len())..b.min(list.len())];
                assert_eq!(&*s.slice(a..b), want, "{a}..{b}");
                assert_eq!(&*Sources::List(&list).slice(a..b), want, "{a}..{b}");
            }
        }
        assert!(Sources::spans([5..5, 7..7].to_vec()).is_empty());
        assert_eq!(&*Sources::spans(Vec::new()).slice(0..3), &[] as &[u32]);
    }
}
