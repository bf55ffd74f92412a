//! Edge weights held in memory, at the width they need.
//!
//! The file stores weights as f64 (Graphalytics' weights are doubles). Many graphs' weights
//! are small integers or other values an f32 holds exactly; for those the in-memory store keeps
//! 4 bytes per arc instead of 8, and a kernel reading weights next to 4-byte neighbour ids
//! moves 8 bytes per arc instead of 12. Widening an exact f32 gives back the same f64 bits, so
//! every result is the same as with the wide weights.

use std::ops::Range;

/// One direction's weights, parallel to its neighbour ids.
#[derive(Debug)]
pub enum StoredWeights {
    /// As the file stores them.
    Wide(Vec<f64>),
    /// Every weight converts to f32 and back to the same bits.
    Narrow(Vec<f32>),
}

impl StoredWeights {
    /// The weights as a slice.
    pub fn as_slice(&self) -> WeightSlice<'_> {
        match self {
            StoredWeights::Wide(w) => WeightSlice::Wide(w),
            StoredWeights::Narrow(w) => WeightSlice::Narrow(w),
        }
    }

    /// Bytes per weight in memory.
    pub fn width(&self) -> usize {
        match self {
            StoredWeights::Wide(_) => 8,
            StoredWeights::Narrow(_) => 4,
        }
    }
}

/// Collects weights read in order: narrow while every weight so far is exact in f32, wide from
/// the first chunk holding one that is not (the weights collected so far are widened then,
/// once).
#[derive(Debug)]
pub struct WeightsBuilder {
    weights: StoredWeights,
    capacity: usize,
}

impl WeightsBuilder {
    /// A builder for `capacity` weights.
    pub fn new(capacity: usize) -> WeightsBuilder {
        WeightsBuilder {
            weights: StoredWeights::Narrow(crate::huge::with_capacity(capacity)),
            capacity,
        }
    }

    /// Appends the weights in `bytes`, little-endian f64s as the file stores them.
    pub fn extend_le_bytes(&mut self, bytes: &[u8]) {
        let values = bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")));
        if let StoredWeights::Narrow(ws) = &mut self.weights {
            // Checked a chunk at a time so that both loops stay tight.
            if values
                .clone()
                .all(|w| f64::from(w as f32).to_bits() == w.to_bits())
            {
                ws.extend(values.map(|w| w as f32));
                return;
            }
            let mut wide = crate::huge::with_capacity(self.capacity.max(ws.len()));
            wide.extend(ws.iter().map(|&w| f64::from(w)));
            self.weights = StoredWeights::Wide(wide);
        }
        if let StoredWeights::Wide(ws) = &mut self.weights {
            ws.extend(values);
        }
    }

    /// The weights collected.
    pub fn finish(self) -> StoredWeights {
        self.weights
    }
}

/// A run of weights at their in-memory width.
#[derive(Debug, Clone, Copy)]
pub enum WeightSlice<'a> {
    /// f64 weights.
    Wide(&'a [f64]),
    /// f32 weights, each exact.
    Narrow(&'a [f32]),
}

impl<'a> WeightSlice<'a> {
    /// How many weights.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            WeightSlice::Wide(w) => w.len(),
            WeightSlice::Narrow(w) => w.len(),
        }
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `k`th weight, if there is one.
    #[inline]
    pub fn get(&self, k: usize) -> Option<f64> {
        match self {
            WeightSlice::Wide(w) => w.get(k).copied(),
            WeightSlice::Narrow(w) => w.get(k).map(|&w| f64::from(w)),
        }
    }

    /// The weights of slots `range`.
    #[inline]
    pub fn slice(&self, range: Range<usize>) -> WeightSlice<'a> {
        match *self {
            WeightSlice::Wide(w) => WeightSlice::Wide(&w[range]),
            WeightSlice::Narrow(w) => WeightSlice::Narrow(&w[range]),
        }
    }

    /// The weights as f64: the slice itself when wide, otherwise widened into `scratch`.
    #[inline]
    pub fn widen<'s>(self, scratch: &'s mut Vec<f64>) -> &'s [f64]
    where
        'a: 's,
    {
        match self {
            WeightSlice::Wide(w) => w,
            WeightSlice::Narrow(w) => {
                scratch.clear();
                scratch.extend(w.iter().map(|&w| f64::from(w)));
                scratch
            }
        }
    }

    /// Every weight as f64, in order.
    pub fn iter(&self) -> impl Iterator<Item = f64> + 'a {
        let (wide, narrow): (&'a [f64], &'a [f32]) = match *self {
            WeightSlice::Wide(w) => (w, &[]),
            WeightSlice::Narrow(w) => (&[], w),
        };
        wide.iter()
            .copied()
            .chain(narrow.iter().map(|&w| f64::from(w)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(ws: &[f64]) -> StoredWeights {
        // In two reads, as the loader's chunks come, so that widening midway is covered.
        let bytes: Vec<u8> = ws.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut b = WeightsBuilder::new(ws.len());
        let (first, rest) = bytes.split_at(ws.len() / 2 * 8);
        b.extend_le_bytes(first);
        b.extend_le_bytes(rest);
        b.finish()
    }

    #[test]
    fn weights_exact_in_f32_are_kept_narrow() {
        let ws = [
            1.0,
            255.0,
            0.5,
            -3.25,
            0.0,
            -0.0,
            f64::INFINITY,
            16_777_216.0,
        ];
        let stored = build(&ws);
        assert_eq!(stored.width(), 4);
        let got: Vec<u64> = stored.as_slice().iter().map(f64::to_bits).collect();
        let want: Vec<u64> = ws.iter().map(|w| w.to_bits()).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn one_inexact_weight_widens_all_with_the_same_bits() {
        // 0.1 and 2^24 + 1 have no exact f32; a NaN's payload may not survive the round trip.
        for odd in [0.1, 16_777_217.0, f64::from_bits(0x7ff8_0000_0000_0001)] {
            let ws = [1.0, 2.5, odd, 7.0];
            let stored = build(&ws);
            assert_eq!(stored.width(), 8, "{odd}");
            let got: Vec<u64> = stored.as_slice().iter().map(f64::to_bits).collect();
            let want: Vec<u64> = ws.iter().map(|w| w.to_bits()).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn slices_widen_and_index_alike_at_both_widths() {
        let ws = [3.0, 1.5, 9.0, 4.0];
        let narrow = build(&ws);
        let wide = build(&[3.0, 1.5, 9.0, 4.0, 0.1]);
        let mut scratch = Vec::new();
        for stored in [&narrow, &wide] {
            let s = stored.as_slice().slice(1..3);
            assert_eq!(s.len(), 2);
            assert_eq!(s.get(1), Some(9.0));
            assert_eq!(s.get(2), None);
            assert_eq!(s.widen(&mut scratch), &[1.5, 9.0]);
        }
    }
}
