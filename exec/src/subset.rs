//! `VertexSubset`: the active vertices of an iteration, as a sparse list or a dense bitmap.
//!
//! Push strategies walk a list; pull strategies test membership in a bitmap. A subset is kept in
//! whichever form its producer made and converted on demand, so a sparse frontier never costs
//! O(|V|) and a dense one never costs a sort.

use std::sync::Arc;

use crate::bitmap::Bitmap;
use crate::error::ExecError;
use crate::remote_part::{PartBits, RemotePart};

/// A set of vertices out of `0..n`.
#[derive(Debug, Clone)]
pub struct VertexSubset {
    n: u32,
    repr: Repr,
}

#[derive(Debug, Clone)]
enum Repr {
    /// Distinct vertex ids, in no particular order.
    Sparse(Vec<u32>),
    /// One bit per vertex, with the number of set bits.
    Dense { bits: Bitmap, count: u64 },
    /// A member's part of a frontier split over several compute nodes: bits only for the
    /// words of its owned range (bit `i` is vertex `first + i`, `first` a multiple of 64), and
    /// the size of the whole frontier, so the member holds O(owned) bits, not O(|V|).
    Part {
        first: u32,
        bits: Bitmap,
        count: u64,
    },
    /// A member's part kept in the memory nodes ([`RemotePart`]), for a compute node whose
    /// `cn_cache` cannot hold its owned range's bits. Read with [`VertexSubset::ones_in`];
    /// the infallible conversions (`to_list`, `contains`, `to_bitmap`) see it as empty.
    RemotePart { part: Arc<RemotePart>, count: u64 },
}

impl PartialEq for VertexSubset {
    /// The same vertices of the same universe; parts compare their local bits (a part in
    /// remote memory equals only itself).
    fn eq(&self, other: &Self) -> bool {
        if self.n != other.n {
            return false;
        }
        match (&self.repr, &other.repr) {
            (Repr::RemotePart { part: a, count: x }, Repr::RemotePart { part: b, count: y }) => {
                Arc::ptr_eq(a, b) && x == y
            }
            (Repr::RemotePart { .. }, _) | (_, Repr::RemotePart { .. }) => false,
            (
                Repr::Part {
                    first: f,
                    bits: a,
                    count: x,
                },
                Repr::Part {
                    first: g,
                    bits: b,
                    count: y,
                },
            ) => f == g && a == b && x == y,
            (Repr::Part { .. }, _) | (_, Repr::Part { .. }) => false,
            _ => {
                let (mut a, mut b) = (self.to_list(), other.to_list());
                a.sort_unstable();
                b.sort_unstable();
                a == b
            }
        }
    }
}

impl VertexSubset {
    /// No vertex of `0..n`.
    pub fn empty(n: u32) -> VertexSubset {
        VertexSubset {
            n,
            repr: Repr::Sparse(Vec::new()),
        }
    }

    /// Just `v` (an empty set when `v` is out of range).
    pub fn single(n: u32, v: u32) -> VertexSubset {
        let list = if v < n { vec![v] } else { Vec::new() };
        VertexSubset {
            n,
            repr: Repr::Sparse(list),
        }
    }

    /// Every vertex of `0..n`.
    pub fn all(n: u32) -> VertexSubset {
        let mut words = vec![u64::MAX; (n as usize).div_ceil(64)];
        if n & 63 != 0 {
            if let Some(last) = words.last_mut() {
                *last = (1u64 << (n % 64)) - 1;
            }
        }
        VertexSubset {
            n,
            repr: Repr::Dense {
                bits: Bitmap::from_words(words),
                count: n as u64,
            },
        }
    }

    /// A sparse subset from distinct ids below `n` (the caller guarantees both).
    pub fn from_list(n: u32, list: Vec<u32>) -> VertexSubset {
        VertexSubset {
            n,
            repr: Repr::Sparse(list),
        }
    }

    /// A dense subset from a bitmap sized for `n`.
    pub fn from_bitmap(n: u32, bits: Bitmap) -> VertexSubset {
        let count = bits.count();
        VertexSubset {
            n,
            repr: Repr::Dense { bits, count },
        }
    }

    /// A member's part of a split frontier of `count` vertices in all: `bits` covers the
    /// vertices from `first` (a multiple of 64) on, and only the member's own range is set.
    pub fn from_part(n: u32, first: u32, bits: Bitmap, count: u64) -> VertexSubset {
        VertexSubset {
            n,
            repr: Repr::Part { first, bits, count },
        }
    }

    /// A member's part of a split frontier of `count` vertices in all, its bits wherever
    /// they are kept.
    pub fn from_part_bits(n: u32, bits: PartBits, count: u64) -> VertexSubset {
        match bits {
            PartBits::Local { first, bits } => VertexSubset::from_part(n, first, bits, count),
            PartBits::Remote(part) => VertexSubset {
                n,
                repr: Repr::RemotePart { part, count },
            },
        }
    }

    /// Whether this is one member's part of a split frontier (it holds only that part).
    pub fn is_part(&self) -> bool {
        matches!(self.repr, Repr::Part { .. } | Repr::RemotePart { .. })
    }

    /// The words of bits held (a part holds its owned range's only; for tests and bounds).
    pub fn held_words(&self) -> usize {
        match &self.repr {
            Repr::Sparse(l) => l.len().div_ceil(2),
            Repr::Dense { bits, .. } | Repr::Part { bits, .. } => bits.words().len(),
            Repr::RemotePart { .. } => 0,
        }
    }

    /// The universe size.
    pub fn universe(&self) -> u32 {
        self.n
    }

    /// Number of vertices in the subset.
    pub fn len(&self) -> u64 {
        match &self.repr {
            Repr::Sparse(l) => l.len() as u64,
            Repr::Dense { count, .. }
            | Repr::Part { count, .. }
            | Repr::RemotePart { count, .. } => *count,
        }
    }

    /// Whether no vertex is active.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the subset is held as a bitmap over |V|.
    pub fn is_dense(&self) -> bool {
        matches!(self.repr, Repr::Dense { .. })
    }

    /// The subset as a bitmap over |V| (converted when sparse; of a part, its vertices).
    pub fn to_bitmap(&self) -> Bitmap {
        match &self.repr {
            Repr::Dense { bits, .. } => bits.clone(),
            Repr::Sparse(_) | Repr::Part { .. } | Repr::RemotePart { .. } => {
                let mut bits = Bitmap::new(self.n);
                for v in self.to_list() {
                    bits.set(v);
                }
                bits
            }
        }
    }

    /// The bitmap over |V|, when the subset is dense (a part has none).
    pub fn as_bitmap(&self) -> Option<&Bitmap> {
        match &self.repr {
            Repr::Dense { bits, .. } => Some(bits),
            Repr::Sparse(_) | Repr::Part { .. } | Repr::RemotePart { .. } => None,
        }
    }

    /// The list, when the subset is sparse.
    pub fn as_list(&self) -> Option<&[u32]> {
        match &self.repr {
            Repr::Sparse(l) => Some(l),
            Repr::Dense { .. } | Repr::Part { .. } | Repr::RemotePart { .. } => None,
        }
    }

    /// The vertices as a list (increasing order when converted from bits); of a part, only
    /// the member's own vertices (none of a part in remote memory: read it with
    /// [`VertexSubset::ones_in`]).
    pub fn to_list(&self) -> Vec<u32> {
        match &self.repr {
            Repr::Sparse(l) => l.clone(),
            Repr::Dense { bits, .. } => bits.iter_ones().collect(),
            Repr::Part { first, bits, .. } => bits.iter_ones().map(|v| first + v).collect(),
            Repr::RemotePart { .. } => Vec::new(),
        }
    }

    /// Converts to the sparse form in place (a part stays a part: its count is the whole
    /// frontier's).
    pub fn make_sparse(&mut self) {
        if let Repr::Dense { bits, .. } = &self.repr {
            self.repr = Repr::Sparse(bits.iter_ones().collect());
        }
    }

    /// Converts to the dense form in place (a part stays a part).
    pub fn make_dense(&mut self) {
        if let Repr::Sparse(list) = &self.repr {
            let count = list.len() as u64;
            let bits = self.to_bitmap();
            self.repr = Repr::Dense { bits, count };
        }
    }

    /// The vertices within `range`, in increasing order (a dense subset reads only the
    /// range's words, a part in remote memory only the range's; only that read can fail).
    pub fn ones_in(&self, range: std::ops::Range<u32>) -> Result<Vec<u32>, ExecError> {
        Ok(match &self.repr {
            Repr::Dense { bits, .. } => bits.ones_in(range).collect(),
            Repr::Part { first, bits, .. } => {
                let local = range.start.saturating_sub(*first)..range.end.saturating_sub(*first);
                bits.ones_in(local).map(|v| first + v).collect()
            }
            Repr::RemotePart { part, .. } => part.ones_in(range)?,
            Repr::Sparse(l) => {
                let mut out: Vec<u32> = l.iter().copied().filter(|v| range.contains(v)).collect();
                out.sort_unstable();
                out
            }
        })
    }

    /// Whether `v` is in the subset: O(1) when dense, O(len) when sparse; a part knows only
    /// the member's own vertices.
    pub fn contains(&self, v: u32) -> bool {
        match &self.repr {
            Repr::Dense { bits, .. } => bits.get(v),
            Repr::Part { first, bits, .. } => v >= *first && bits.get(v - first),
            Repr::RemotePart { .. } => false,
            Repr::Sparse(l) => l.contains(&v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_keep_members() {
        let mut s = VertexSubset::from_list(200, vec![7, 3, 150]);
        assert_eq!(s.len(), 3);
        s.make_dense();
        assert!(s.is_dense() && s.contains(150) && !s.contains(4));
        assert_eq!(s.len(), 3);
        s.make_sparse();
        assert_eq!(s.as_list().unwrap(), &[3, 7, 150]);
        let all = VertexSubset::all(70);
        assert_eq!(all.len(), 70);
        assert_eq!(all.to_list().len(), 70);
        assert!(!all.contains(70));
        assert!(VertexSubset::single(5, 9).is_empty());
        assert!(VertexSubset::all(0).is_empty());
    }

    #[test]
    fn a_part_holds_its_range_and_counts_the_whole() {
        let mut bits = Bitmap::new(128);
        for v in [1, 70, 127] {
            bits.set(v);
        }
        let p = VertexSubset::from_part(1000, 128, bits, 9);
        assert!(p.is_part() && !p.is_dense());
        assert_eq!((p.len(), p.universe(), p.held_words()), (9, 1000, 2));
        assert_eq!(p.to_list(), vec![129, 198, 255]);
        assert_eq!(p.ones_in(0..200).unwrap(), vec![129, 198]);
        assert_eq!(p.ones_in(199..1000).unwrap(), vec![255]);
        assert!(p.ones_in(0..129).unwrap().is_empty());
        assert!(p.contains(198) && !p.contains(1) && !p.contains(2000));
        assert!(p.as_bitmap().is_none() && p.as_list().is_none());
        assert_eq!(
            p.to_bitmap().iter_ones().collect::<Vec<_>>(),
            vec![129, 198, 255]
        );
    }
}
