//! Bitmaps over vertex ids: a plain one for reading a dense frontier, an atomic one for
//! concurrent "claim this vertex once" updates.

use std::sync::atomic::{AtomicU64, Ordering};

/// One bit per vertex, read-only while a frontier is being processed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Bitmap {
    words: Vec<u64>,
}

impl Bitmap {
    /// All bits clear, room for `n` bits.
    pub fn new(n: u32) -> Bitmap {
        Bitmap {
            words: vec![0; (n as usize).div_ceil(64)],
        }
    }

    /// A bitmap over whole words (the caller sized them for `n` bits).
    pub fn from_words(words: Vec<u64>) -> Bitmap {
        Bitmap { words }
    }

    /// Whether bit `i` is set; out-of-range bits read as clear.
    #[inline]
    pub fn get(&self, i: u32) -> bool {
        match self.words.get((i >> 6) as usize) {
            Some(w) => (w >> (i & 63)) & 1 == 1,
            None => false,
        }
    }

    /// Sets bit `i` (ignored when out of range).
    #[inline]
    pub fn set(&mut self, i: u32) {
        if let Some(w) = self.words.get_mut((i >> 6) as usize) {
            *w |= 1 << (i & 63);
        }
    }

    /// Number of set bits.
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// The words, 64 bits each, bit `i` in word `i / 64`.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words, to hand on (e.g. to a collective OR).
    pub fn into_words(self) -> Vec<u64> {
        self.words
    }

    /// The set bits within `range`, in increasing order (reads only the range's words).
    pub fn ones_in(&self, range: std::ops::Range<u32>) -> impl Iterator<Item = u32> + '_ {
        let first = (range.start >> 6) as usize;
        let last = (range.end as usize).div_ceil(64).min(self.words.len());
        let first = first.min(last);
        ones_of_words(&self.words[first..last], first as u32).filter(move |v| range.contains(v))
    }

    /// The set bits in increasing order.
    pub fn iter_ones(&self) -> impl Iterator<Item = u32> + '_ {
        ones_of_words(&self.words, 0)
    }
}

/// The set bits of `words`, the first of which is word `first_word` of its bitmap, in
/// increasing order.
fn ones_of_words(words: &[u64], first_word: u32) -> impl Iterator<Item = u32> + '_ {
    words.iter().enumerate().flat_map(move |(k, &w)| {
        let wi = first_word + k as u32;
        let mut w = w;
        std::iter::from_fn(move || {
            if w == 0 {
                return None;
            }
            let b = w.trailing_zeros();
            w &= w - 1;
            Some(wi * 64 + b)
        })
    })
}

/// One bit per vertex, set concurrently by workers.
#[derive(Debug, Default)]
pub struct AtomicBitmap {
    words: Vec<AtomicU64>,
}

impl AtomicBitmap {
    /// All bits clear, room for `n` bits.
    pub fn new(n: u32) -> AtomicBitmap {
        AtomicBitmap {
            words: (0..(n as usize).div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    /// Sets bit `i`; true when this call set it (it was clear), so exactly one caller wins.
    #[inline]
    pub fn set(&self, i: u32) -> bool {
        let bit = 1u64 << (i & 63);
        match self.words.get((i >> 6) as usize) {
            Some(w) => {
                // A plain load first avoids a read-modify-write on the common "already set" path.
                w.load(Ordering::Relaxed) & bit == 0
                    && w.fetch_or(bit, Ordering::Relaxed) & bit == 0
            }
            None => false,
        }
    }

    /// Whether bit `i` is set.
    #[inline]
    pub fn get(&self, i: u32) -> bool {
        match self.words.get((i >> 6) as usize) {
            Some(w) => (w.load(Ordering::Relaxed) >> (i & 63)) & 1 == 1,
            None => false,
        }
    }

    /// Clears bit `i`.
    #[inline]
    pub fn clear(&self, i: u32) {
        if let Some(w) = self.words.get((i >> 6) as usize) {
            w.fetch_and(!(1u64 << (i & 63)), Ordering::Relaxed);
        }
    }

    /// Clears every bit.
    pub fn clear_all(&mut self) {
        for w in &mut self.words {
            *w.get_mut() = 0;
        }
    }

    /// The bits, once no worker sets them any more.
    pub fn into_bitmap(self) -> Bitmap {
        Bitmap::from_words(self.words.into_iter().map(AtomicU64::into_inner).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_roundtrip() {
        let mut b = Bitmap::new(130);
        for i in [0, 5, 63, 64, 129] {
            b.set(i);
        }
        b.set(1000);
        assert_eq!(b.count(), 5);
        assert_eq!(b.iter_ones().collect::<Vec<_>>(), vec![0, 5, 63, 64, 129]);
        assert!(b.get(64) && !b.get(65) && !b.get(5000));
    }

    #[test]
    fn atomic_set_wins_once() {
        let b = AtomicBitmap::new(100);
        assert!(b.set(70));
        assert!(!b.set(70));
        assert!(b.get(70));
        b.clear(70);
        assert!(!b.get(70));
        assert!(!b.set(100_000));
        b.set(3);
        b.set(99);
        assert_eq!(b.into_bitmap().iter_ones().collect::<Vec<_>>(), vec![3, 99]);
    }

    #[test]
    fn ones_in_a_range_are_the_set_bits_inside_it() {
        let mut b = Bitmap::new(300);
        for v in [0, 63, 64, 65, 127, 128, 200, 299] {
            b.set(v);
        }
        let got: Vec<u32> = b.ones_in(63..200).collect();
        assert_eq!(got, vec![63, 64, 65, 127, 128]);
        assert_eq!(b.ones_in(0..300).count(), 8);
        assert_eq!(b.ones_in(250..250).count(), 0);
        assert_eq!(b.ones_in(299..1000).collect::<Vec<_>>(), vec![299]);
    }
}
