//! Edge weights held in memory, at the width they need.
//!
//! The file stores weights as f64 (Graphalytics' weights are doubles). Many graphs' weights
//! are small integers or other values an f32 holds exactly; for those the in-memory store keeps
//! 4 bytes per arc instead of 8, and a kernel reading weights next to 4-byte neighbour ids
//! moves 8 bytes per arc instead of 12. Widening an exact f32 gives back the same f64 bits, so
//! every result is the same as with the wide weights.
//!
//! Narrow weights that are all whole numbers also carry their largest value, so that a kernel
//! can tell when integer arithmetic gives exactly the results f64 would (delta-stepping keeps
//! 4-byte distances then, as GAPBS does).

use std::ops::Range;

/// One direction's weights, parallel to its neighbour ids.
#[derive(Debug)]
pub enum StoredWeights {
    /// As the file stores them.
    Wide(Vec<f64>),
    /// Every weight converts to f32 and back to the same bits.
    Narrow {
        values: Vec<f32>,
        /// The largest weight, when every weight is a whole number from 0 to 2^24.
        whole_max: Option<u32>,
    },
}

impl StoredWeights {
    /// The weights as a slice.
    pub fn as_slice(&self) -> WeightSlice<'_> {
        match self {
            StoredWeights::Wide(w) => WeightSlice::Wide(w),
            StoredWeights::Narrow { values, .. } => WeightSlice::Narrow(values),
        }
    }

    /// Bytes per weight in memory.
    pub fn width(&self) -> usize {
        match self {
            StoredWeights::Wide(_) => 8,
            StoredWeights::Narrow { .. } => 4,
        }
    }

    /// The largest weight, when every weight is a whole number from 0 to 2^24 (each then
    /// exact in f32 and in u32, and sums of them exact in integers).
    pub fn whole_max(&self) -> Option<u32> {
        match self {
            StoredWeights::Narrow { whole_max, .. } => *whole_max,
            StoredWeights::Wide(_) => None,
        }
    }
}

/// The largest whole weight [`StoredWeights::whole_max`] reports: 2^24, below which every
/// whole number is exact in f32.
const WHOLE_LIMIT: f64 = 16_777_216.0;

/// The largest of `weights` when every one is a whole number from 0 to 2^24 (0 when there are
/// none), as [`StoredWeights::whole_max`] reports it.
pub fn whole_max(weights: &[f64]) -> Option<u32> {
    weights.iter().copied().try_fold(0, with_whole)
}

/// `max` raised to `w`, or `None` when `w` is not a whole number from 0 to 2^24.
#[inline]
fn with_whole(max: u32, w: f64) -> Option<u32> {
    let whole = (0.0..=WHOLE_LIMIT).contains(&w) && w.fract() == 0.0;
    whole.then(|| max.max(w as u32))
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
            weights: StoredWeights::Narrow {
                values: crate::huge::with_capacity(capacity),
                whole_max: Some(0),
            },
            capacity,
        }
    }

    /// Appends the weights in `bytes`, little-endian f64s as the file stores them.
    pub fn extend_le_bytes(&mut self, bytes: &[u8]) {
        let values = bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")));
        if let StoredWeights::Narrow {
            values: ws,
            whole_max,
        } = &mut self.weights
        {
            // Checked a chunk at a time so that each loop stays tight.
            if values
                .clone()
                .all(|w| f64::from(w as f32).to_bits() == w.to_bits())
            {
                if let Some(max) = whole_max {
                    *whole_max = values.clone().try_fold(*max, with_whole);
                }
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

    fn bits(ws: &[f64]) -> Vec<u64> {
        ws.iter().map(|w| w.to_bits()).collect()
    }

    /// The stored weights as f64 bits.
    fn bits_of(stored: &StoredWeights) -> Vec<u64> {
        bits(stored.as_slice().widen(&mut Vec::new()))
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
        assert_eq!(bits_of(&stored), bits(&ws));
    }

    #[test]
    fn whole_weights_report_their_largest_value() {
        assert_eq!(build(&[1.0, 255.0, 0.0, 7.0]).whole_max(), Some(255));
        assert_eq!(build(&[16_777_216.0, 3.0]).whole_max(), Some(16_777_216));
        assert_eq!(build(&[]).whole_max(), Some(0));
        // -0.0 adds like 0.0 to every distance (which is never -0.0).
        assert_eq!(build(&[-0.0, 1.0]).whole_max(), Some(1));
        // Narrow but not whole, or whole but negative, or past 2^24: no integer bound.
        for ws in [
            &[1.0, 2.5][..],
            &[3.0, -1.0],
            &[f64::INFINITY],
            &[f64::NAN],
            &[33_554_432.0],
        ] {
            let stored = build(ws);
            assert_eq!(stored.width(), 4, "{ws:?}");
            assert_eq!(stored.whole_max(), None, "{ws:?}");
        }
        assert_eq!(build(&[1.0, 0.1]).whole_max(), None);
        assert_eq!(whole_max(&[4.0, 9.0, 2.0]), Some(9));
        assert_eq!(whole_max(&[4.0, 9.5]), None);
    }

    #[test]
    fn one_inexact_weight_widens_all_with_the_same_bits() {
        // 0.1 and 2^24 + 1 have no exact f32; a NaN's payload may not survive the round trip.
        for odd in [0.1, 16_777_217.0, f64::from_bits(0x7ff8_0000_0000_0001)] {
            let ws = [1.0, 2.5, odd, 7.0];
            let stored = build(&ws);
            assert_eq!(stored.width(), 8, "{odd}");
            assert_eq!(bits_of(&stored), bits(&ws));
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
