//! The vertex id set: collecting the distinct input ids seen in the edges, and mapping input
//! ids to dense internal ids (the rank of the input id, so the stored id map is ascending).
//!
//! Small, dense ids (the common case: Graph500, SNAP, Graphalytics) are collected in a bitmap
//! and mapped by rank in O(1) with per-word prefix counts; sparse ids fall back to sorted,
//! merged chunks and binary search. Either way the set itself stays in memory (|V| u64),
//! which the readers need anyway.

/// Collects the distinct ids of a stream.
pub struct IdCollector {
    bitmap: Option<Vec<u64>>,
    bitmap_limit_words: usize,
    sorted: Vec<u64>,
    pending: Vec<u64>,
    chunk: usize,
}

impl IdCollector {
    /// `budget_bytes` bounds the bitmap and the pending chunk.
    pub fn new(budget_bytes: u64) -> IdCollector {
        let b = (budget_bytes / 8).max(4096) as usize;
        IdCollector {
            bitmap: Some(Vec::new()),
            bitmap_limit_words: b / 8,
            sorted: Vec::new(),
            pending: Vec::new(),
            chunk: (b / 8).max(1024),
        }
    }

    /// Adds an id.
    #[inline]
    pub fn add(&mut self, id: u64) {
        if let Some(bm) = &mut self.bitmap {
            let w = (id / 64) as usize;
            if id / 64 < self.bitmap_limit_words as u64 {
                if w >= bm.len() {
                    bm.resize((w + 1).next_power_of_two().min(self.bitmap_limit_words), 0);
                }
                bm[w] |= 1 << (id % 64);
                return;
            }
            self.leave_bitmap();
        }
        self.pending.push(id);
        if self.pending.len() >= self.chunk {
            self.merge_pending();
        }
    }

    fn leave_bitmap(&mut self) {
        if let Some(bm) = self.bitmap.take() {
            self.sorted = bits(&bm).collect();
        }
    }

    fn merge_pending(&mut self) {
        self.pending.sort_unstable();
        self.pending.dedup();
        let a = std::mem::take(&mut self.sorted);
        let b = std::mem::take(&mut self.pending);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => {
                    out.push(a[i]);
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    out.push(b[j]);
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    out.push(a[i]);
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        self.sorted = out;
        self.pending = b;
        self.pending.clear();
    }

    /// The ascending set of ids.
    pub fn finish(mut self) -> Vec<u64> {
        if let Some(bm) = self.bitmap.take() {
            return bits(&bm).collect();
        }
        self.merge_pending();
        self.sorted
    }
}

fn bits(bm: &[u64]) -> impl Iterator<Item = u64> + '_ {
    bm.iter().enumerate().flat_map(|(w, &word)| {
        let mut x = word;
        std::iter::from_fn(move || {
            if x == 0 {
                return None;
            }
            let t = x.trailing_zeros() as u64;
            x &= x - 1;
            Some(w as u64 * 64 + t)
        })
    })
}

/// Maps input ids to internal ids (their rank in the ascending id set).
pub struct IdMapper {
    kind: Kind,
}

enum Kind {
    /// ids are `base..base+n`.
    Contiguous { base: u64, n: u64 },
    /// ids all below `64 * words.len()`: rank = prefix[word] + popcount of the lower bits.
    Bitmap { words: Vec<u64>, prefix: Vec<u32> },
    /// Anything else.
    Search(Vec<u64>),
}

impl IdMapper {
    /// Builds the fastest mapper for `ids` (ascending, distinct) whose tables fit `budget_bytes`.
    pub fn new(ids: &[u64], budget_bytes: u64) -> IdMapper {
        let n = ids.len() as u64;
        let kind = match (ids.first(), ids.last()) {
            (None, _) | (_, None) => Kind::Contiguous { base: 0, n: 0 },
            (Some(&f), Some(&l)) if l - f == n - 1 => Kind::Contiguous { base: f, n },
            (_, Some(&l)) if (l / 64 + 1).saturating_mul(12) <= budget_bytes.max(1 << 20) => {
                let nw = (l / 64 + 1) as usize;
                let mut words = vec![0u64; nw];
                for &id in ids {
                    words[(id / 64) as usize] |= 1 << (id % 64);
                }
                let mut prefix = Vec::with_capacity(nw);
                let mut acc = 0u32;
                for w in &words {
                    prefix.push(acc);
                    acc = acc.wrapping_add(w.count_ones());
                }
                Kind::Bitmap { words, prefix }
            }
            _ => Kind::Search(ids.to_vec()),
        };
        IdMapper { kind }
    }

    /// The internal id of `id`, or `None` when it is not in the set.
    #[inline]
    pub fn map(&self, id: u64) -> Option<u32> {
        match &self.kind {
            Kind::Contiguous { base, n } => {
                let d = id.checked_sub(*base)?;
                (d < *n).then_some(d as u32)
            }
            Kind::Bitmap { words, prefix } => {
                let w = (id / 64) as usize;
                let word = *words.get(w)?;
                let bit = 1u64 << (id % 64);
                if word & bit == 0 {
                    return None;
                }
                Some(prefix[w] + (word & (bit - 1)).count_ones())
            }
            Kind::Search(ids) => ids.binary_search(&id).ok().map(|i| i as u32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collector_and_mapper_agree_in_every_mode() {
        for ids in [
            vec![5u64, 6, 7, 8],
            vec![0, 3, 64, 65, 1000],
            vec![1, u64::MAX - 1, u64::MAX, 1 << 40],
        ] {
            let mut c = IdCollector::new(0);
            for &i in ids.iter().rev().chain(ids.iter()) {
                c.add(i);
            }
            let mut want = ids.clone();
            want.sort_unstable();
            let got = c.finish();
            assert_eq!(got, want);
            let m = IdMapper::new(&got, 1 << 20);
            for (r, &id) in got.iter().enumerate() {
                assert_eq!(m.map(id), Some(r as u32));
            }
            assert_eq!(m.map(2), None);
        }
    }
}
