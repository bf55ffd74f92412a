//! A read-only array of `u64`s bit-packed in groups of 64: each group stores its smallest value
//! and the others as offsets from it, at the width its largest offset needs.
//!
//! This is what lets the out-of-core reader keep a vertex index and an id map in a few bytes per
//! vertex (see [`crate::blockfile::compact`]): values that are close to their neighbours
//! (list starts packed into nearby blocks, ascending ids with small gaps, degrees) pack into a
//! handful of bits, while one outlier only widens its own group. Lookups are O(1): one group
//! header and one or two words.

/// Values per group: one group header (17 bytes) per 64 values.
pub const GROUP: usize = 64;

/// A bit-packed `u64` array, built once with [`PackedBuilder`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackedU64s {
    len: u64,
    /// Per group, side by side so that a lookup touches one cache line besides `bits`: the
    /// smallest value, then the bit position of the group's first offset in `bits` shifted
    /// left by 8 over the bits per offset (0: every value equals the base).
    groups: Vec<[u64; 2]>,
    bits: Vec<u64>,
}

impl PackedU64s {
    /// Number of values.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value at `i` (`i < len`).
    #[inline]
    pub fn get(&self, i: u64) -> u64 {
        let [base, pos_width] = self.groups[(i / GROUP as u64) as usize];
        let w = pos_width & 0xff;
        if w == 0 {
            return base;
        }
        let pos = (pos_width >> 8) + (i % GROUP as u64) * w;
        let mut x = self.bits_at(pos, w);
        if w < 64 {
            x &= (1u64 << w) - 1;
        }
        // Wrapping: a damaged file's offsets give wrong values, which its checks then refuse,
        // never an overflow.
        base.wrapping_add(x)
    }

    /// Writes the values of group `g` to the front of `out` and returns how many there are
    /// (fewer than [`GROUP`] only in the last group): what [`PackedU64s::get`] would give for
    /// each, decoded in one pass for readers that walk the values in order.
    pub fn decode_group(&self, g: usize, out: &mut [u64; GROUP]) -> usize {
        let count = (self.len - (g * GROUP) as u64).min(GROUP as u64) as usize;
        let [base, pos_width] = self.groups[g];
        let w = pos_width & 0xff;
        let out = &mut out[..count];
        if w == 0 {
            out.fill(base);
            return count;
        }
        let mask = if w < 64 { (1u64 << w) - 1 } else { u64::MAX };
        let pos = pos_width >> 8;
        let words = &self.bits[(pos / 64) as usize..];
        let mut bit = pos % 64;
        for o in out {
            // The value's word and the next one as one 128-bit number: no branch on whether
            // the value straddles them (it does for about w / 64 of the values, unpredictably).
            let i = (bit / 64) as usize;
            let lo = words.get(i).copied().unwrap_or(0) as u128;
            let hi = words.get(i + 1).copied().unwrap_or(0) as u128;
            *o = base.wrapping_add(((hi << 64 | lo) >> (bit % 64)) as u64 & mask);
            bit += w;
        }
        count
    }

    /// The `w` bits at bit position `pos` of `bits` in the low bits of the result, with
    /// whatever follows them above (callers mask).
    #[inline]
    fn bits_at(&self, pos: u64, w: u64) -> u64 {
        let word = (pos / 64) as usize;
        let shift = pos % 64;
        let mut x = self.bits[word] >> shift;
        if shift + w > 64 {
            x |= self.bits[word + 1] << (64 - shift);
        }
        x
    }

    /// Number of groups of [`GROUP`] values.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// The smallest value of group `g` (ascending in `g` when the values are).
    #[inline]
    pub fn group_base(&self, g: usize) -> u64 {
        self.groups[g][0]
    }

    /// Heap bytes held (what the reader counts against its cache).
    pub fn heap_bytes(&self) -> u64 {
        (self.groups.capacity() * 16 + self.bits.capacity() * 8) as u64
    }

    /// Appends the on-disk form (all little endian): the number of values, of groups and of
    /// bit words (`u64` each), each group's base and `position << 8 | width`, then the words.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        for x in [self.len, self.groups.len() as u64, self.bits.len() as u64] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        for x in self.groups.iter().flatten().chain(&self.bits) {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }

    /// Reads the on-disk form ([`PackedU64s::write_to`]) at the front of `bytes`, checking
    /// that every group's bits lie inside the words, so that no lookup can fail; returns it and
    /// the bytes after it. `Err` says what is wrong.
    pub fn read_from(bytes: &[u8]) -> Result<(PackedU64s, &[u8]), String> {
        let word = |i: usize| -> Option<u64> {
            let b = bytes.get(i * 8..i * 8 + 8)?;
            Some(u64::from_le_bytes(b.try_into().expect("8 bytes")))
        };
        let (Some(len), Some(groups), Some(words)) = (word(0), word(1), word(2)) else {
            return Err(format!("{} bytes, too short for a header", bytes.len()));
        };
        if groups != len.div_ceil(GROUP as u64) {
            return Err(format!("{len} values in {groups} groups"));
        }
        let need = groups
            .checked_mul(2)
            .and_then(|g| g.checked_add(words))
            .and_then(|w| w.checked_add(3))
            .and_then(|w| w.checked_mul(8))
            .filter(|&b| b <= bytes.len() as u64)
            .ok_or_else(|| {
                format!(
                    "{groups} groups and {words} words do not fit in {} bytes",
                    bytes.len()
                )
            })?;
        let mut p = PackedU64s {
            len,
            groups: Vec::with_capacity(groups as usize),
            bits: Vec::with_capacity(words as usize),
        };
        let bit_len = words * 64;
        for g in 0..groups as usize {
            let (base, pos_width) = (word(3 + 2 * g).unwrap(), word(4 + 2 * g).unwrap());
            let (pos, w) = (pos_width >> 8, pos_width & 0xff);
            let count = (len - (g * GROUP) as u64).min(GROUP as u64);
            if w > 64 {
                return Err(format!("group {g} has width {w}"));
            }
            if w > 0 && pos.checked_add(count * w).is_none_or(|end| end > bit_len) {
                return Err(format!("group {g}'s bits lie outside the words"));
            }
            p.groups.push([base, pos_width]);
        }
        let first_word = 3 + 2 * groups as usize;
        p.bits
            .extend((0..words as usize).map(|i| word(first_word + i).unwrap()));
        Ok((p, &bytes[need as usize..]))
    }
}

/// Builds a [`PackedU64s`] from a stream of values, holding one group at a time besides the
/// packed result.
#[derive(Debug, Default)]
pub struct PackedBuilder {
    /// The current group; `None` is a value nobody will read (see [`PackedBuilder::push_any`]).
    group: Vec<Option<u64>>,
    bit_len: u64,
    out: PackedU64s,
}

impl PackedBuilder {
    /// A builder expecting about `len` values (sizes the group headers once).
    pub fn with_capacity(len: u64) -> PackedBuilder {
        let groups = len.div_ceil(GROUP as u64) as usize;
        PackedBuilder {
            group: Vec::with_capacity(GROUP),
            bit_len: 0,
            out: PackedU64s {
                len: 0,
                groups: Vec::with_capacity(groups),
                bits: Vec::new(),
            },
        }
    }

    /// Appends `value`.
    pub fn push(&mut self, value: u64) {
        self.push_slot(Some(value));
    }

    /// Appends a placeholder whose value will never be read: it takes the group's base, so it
    /// does not widen the group.
    pub fn push_any(&mut self) {
        self.push_slot(None);
    }

    fn push_slot(&mut self, value: Option<u64>) {
        self.group.push(value);
        self.out.len += 1;
        if self.group.len() == GROUP {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.group.is_empty() {
            return;
        }
        let known = self.group.iter().flatten();
        let base = known.clone().copied().min().unwrap_or(0);
        let top = known.copied().max().unwrap_or(0);
        let w = 64 - (top - base).leading_zeros() as u64;
        self.out.groups.push([base, (self.bit_len << 8) | w]);
        if w > 0 {
            for v in &self.group {
                let d = v.map_or(0, |v| v - base);
                let word = (self.bit_len / 64) as usize;
                let shift = self.bit_len % 64;
                if word == self.out.bits.len() {
                    self.out.bits.push(0);
                }
                self.out.bits[word] |= d << shift;
                if shift + w > 64 {
                    self.out.bits.push(d >> (64 - shift));
                }
                self.bit_len += w;
            }
        }
        self.group.clear();
    }

    /// The packed array.
    pub fn finish(mut self) -> PackedU64s {
        self.flush();
        self.out.bits.shrink_to_fit();
        self.out.groups.shrink_to_fit();
        self.out
    }
}

impl FromIterator<u64> for PackedU64s {
    fn from_iter<T: IntoIterator<Item = u64>>(iter: T) -> Self {
        let mut b = PackedBuilder::default();
        for v in iter {
            b.push(v);
        }
        b.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xorshift(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn every_width_round_trips() {
        // Groups of every width 0..=64, including values that straddle words.
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        let mut values = Vec::new();
        for w in 0..=64u32 {
            let base = xorshift(&mut seed) >> 1;
            for _ in 0..GROUP {
                let off = match w {
                    0 => 0,
                    64 => xorshift(&mut seed),
                    _ => xorshift(&mut seed) & ((1u64 << w) - 1),
                };
                values.push(if w == 64 {
                    off
                } else {
                    base.saturating_add(off)
                });
            }
        }
        // A ragged last group.
        values.extend([5, 3, u64::MAX]);
        let p: PackedU64s = values.iter().copied().collect();
        assert_eq!(p.len(), values.len() as u64);
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(p.get(i as u64), v, "value {i}");
        }
        // Group by group, the ragged one included.
        let mut out = [0u64; GROUP];
        for g in 0..p.groups() {
            let count = p.decode_group(g, &mut out);
            let want = &values[g * GROUP..((g + 1) * GROUP).min(values.len())];
            assert_eq!(&out[..count], want, "group {g}");
        }
    }

    #[test]
    fn the_on_disk_form_round_trips_and_damage_is_an_error() {
        let values: Vec<u64> = (0..300u64).map(|i| i * i % 1000 + 7).collect();
        let p: PackedU64s = values.iter().copied().collect();
        let mut bytes = Vec::new();
        p.write_to(&mut bytes);
        bytes.extend_from_slice(b"tail");
        let (back, rest) = PackedU64s::read_from(&bytes).unwrap();
        assert_eq!(back, p);
        assert_eq!(rest, b"tail");
        let empty = PackedU64s::default();
        let mut e = Vec::new();
        empty.write_to(&mut e);
        assert_eq!(PackedU64s::read_from(&e).unwrap().0.len(), 0);
        // Every truncation, and every byte changed, is refused or decodes without a panic.
        for cut in 0..bytes.len() - 4 {
            if let Ok((q, _)) = PackedU64s::read_from(&bytes[..cut]) {
                (0..q.len()).for_each(|i| {
                    std::hint::black_box(q.get(i));
                });
            }
        }
        for i in 0..bytes.len() - 4 {
            let mut bad = bytes.clone();
            bad[i] ^= 0xa5;
            if let Ok((q, _)) = PackedU64s::read_from(&bad) {
                let mut out = [0u64; GROUP];
                (0..q.len()).for_each(|i| {
                    std::hint::black_box(q.get(i));
                });
                (0..q.groups()).for_each(|g| {
                    std::hint::black_box(q.decode_group(g, &mut out));
                });
            }
        }
        let mut wide = bytes.clone();
        wide[32] = 65;
        assert!(PackedU64s::read_from(&wide)
            .unwrap_err()
            .contains("width 65"));
    }

    #[test]
    fn placeholders_do_not_widen_a_group() {
        let mut b = PackedBuilder::with_capacity(64);
        for i in 0..64u64 {
            if i % 2 == 0 {
                b.push(1_000_000 + i);
            } else {
                b.push_any();
            }
        }
        let p = b.finish();
        for i in (0..64u64).step_by(2) {
            assert_eq!(p.get(i), 1_000_000 + i);
        }
        // 62 needs 6 bits: 64 values of 6 bits fit in 6 words.
        assert_eq!(p.bits.len(), 6);
    }

    #[test]
    fn equal_values_take_no_bits() {
        let p: PackedU64s = std::iter::repeat_n(7u64, 200).collect();
        assert!(p.bits.is_empty());
        assert_eq!(
            (0..p.groups()).map(|g| p.group_base(g)).collect::<Vec<_>>(),
            [7, 7, 7, 7]
        );
        assert!((0..200).all(|i| p.get(i) == 7));
    }
}
