//! The DM graph layout (DMG §4.2.1): one 32-byte index entry per vertex and direction.
//!
//! A 32-byte entry is the unit one RDMA read fetches cheaply (the cost is the operation, not its
//! size), so a vertex with a short list keeps it *in place* and one read answers both "where"
//! and "what". Longer lists live *out of place* and the entry says where:
//!
//! ```text
//! in place:      u32 (degree | check << 8, bit 31 clear) | up to 7 × u32 neighbour   (unweighted)
//!                u32 (degree | check << 8, bit 31 clear) | 2 × u32 neighbour | 2 × f64 weight
//! out of place:  u32 degree | 1<<31 | u64 global address | u8 segments | 15 bytes of
//!                variable-length segment lengths (2 bits of byte count, then the length) |
//!                u32 check
//! ```
//!
//! Out-of-place data is an 8-byte list header (`u32` checksum of the targets, `u32` checksum of
//! the weights), the targets (`4 × degree` bytes, padded to 8) and, in weighted graphs, the
//! weights (`8 × degree`). Segment `i` counts the neighbours that fall in vertex partition `i`
//! (lists are sorted by target, so segments are contiguous); collaborative update uses them to
//! pass only the relevant part of a list. When the lengths do not fit the 15 bytes the entry
//! records no segments and a reader treats the list as one piece.
//!
//! **Checksums.** Memory nodes are volatile RAM anyone holding the token can write, so every
//! byte a reader uses is checked as it arrives, the way the block file checks its blocks: an
//! index entry carries a CRC-32 of itself (23 bits of it in place, where the neighbours fill
//! the other 28 bytes), and an out-of-place list carries CRC-32s of its targets and of its
//! weights. Each checksum also covers the vertex and direction it belongs to, so an entry or
//! list found at another vertex's place fails too. Checking costs no extra round trip and
//! 8 bytes per out-of-place list; readers verify exactly the bytes they fetched.
//!
//! Decoding never trusts the bytes: an entry read from a peer is validated, and a bad one is an
//! error naming the vertex, not a panic.

use super::addr::GlobalAddr;
use crate::store::Direction;

/// Bytes of one index entry.
pub const ENTRY_BYTES: usize = 32;
/// Neighbours an unweighted entry holds in place.
pub const IN_PLACE_UNWEIGHTED: u32 = 7;
/// Neighbours (with their weights) a weighted entry holds in place.
pub const IN_PLACE_WEIGHTED: u32 = 2;
/// Flag of an out-of-place entry in the first word.
const OUT_OF_PLACE: u32 = 1 << 31;
/// Largest degree an entry can record (31 bits).
pub const MAX_DEGREE: u32 = OUT_OF_PLACE - 1;
/// Where an out-of-place entry keeps its `u32` checksum.
const CHECK_AT: usize = ENTRY_BYTES - 4;
/// Bytes available for segment lengths.
const SEG_BYTES: usize = CHECK_AT - 13;
/// The in-place degree's bits of the first word; bits 8..31 hold the entry's check.
const IN_PLACE_DEGREE: u32 = 0xFF;
/// The bits of an in-place entry's check (23: bit 31 is the out-of-place flag).
const IN_PLACE_CHECK: u32 = 0x7F_FFFF;
/// Bytes in front of every out-of-place list: checksums of its targets and of its weights.
pub const LIST_HEADER: u64 = 8;
/// Largest value of the 1–4-byte encoding: 30 bits.
pub const MAX_SEGMENT: u32 = (1 << 30) - 1;

/// How many neighbours fit in place for a graph of this kind.
pub fn in_place_capacity(weighted: bool) -> u32 {
    if weighted {
        IN_PLACE_WEIGHTED
    } else {
        IN_PLACE_UNWEIGHTED
    }
}

/// Bytes of out-of-place data for a list of `degree` arcs: the list header, the targets padded
/// to 8, then the weights.
pub fn out_of_place_bytes(degree: u32, weighted: bool) -> u64 {
    let t = LIST_HEADER + targets_bytes(degree);
    if weighted {
        t + 8 * degree as u64
    } else {
        t
    }
}

/// Bytes a reader fetches of an out-of-place list: the header and the targets, plus padding
/// and weights when it wants them.
pub fn list_read_bytes(degree: u32, with_weights: bool) -> u64 {
    if with_weights {
        out_of_place_bytes(degree, true)
    } else {
        LIST_HEADER + 4 * degree as u64
    }
}

/// Bytes of the targets part of an out-of-place list (padded to 8 so weights stay aligned).
pub fn targets_bytes(degree: u32) -> u64 {
    (4 * degree as u64).div_ceil(8) * 8
}

/// A decoded index entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// The list itself (and its weights in weighted graphs).
    InPlace {
        targets: Vec<u32>,
        weights: Option<Vec<f64>>,
    },
    /// Where the list lives, and its per-partition segment lengths (empty: not recorded).
    OutOfPlace {
        degree: u32,
        addr: GlobalAddr,
        segments: Vec<u32>,
    },
}

/// Why an entry could not be built or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("degree {0} exceeds the layout's limit of {MAX_DEGREE}")]
    DegreeTooLarge(u64),
    #[error("in-place list of {0} neighbours exceeds the entry's capacity")]
    TooManyInPlace(usize),
    #[error("malformed index entry: {0}")]
    Malformed(&'static str),
    #[error("{0} fails its checksum")]
    Checksum(&'static str),
}

/// Encodes `n` (≤ [`MAX_SEGMENT`]) in 1–4 bytes: the top two bits of the first byte hold the
/// byte count minus one, the remaining bits the value, big-endian. `None` when it does not fit.
pub fn encode_varint(n: u32, out: &mut Vec<u8>) -> Option<()> {
    let len = match n {
        0..=0x3F => 1,
        0x40..=0x3FFF => 2,
        0x4000..=0x3F_FFFF => 3,
        0x40_0000..=MAX_SEGMENT => 4,
        _ => return None,
    };
    let v = n | (((len - 1) as u32) << (8 * len - 2));
    for i in (0..len).rev() {
        out.push((v >> (8 * i)) as u8);
    }
    Some(())
}

/// Decodes one value from the start of `b`; returns it and the bytes used.
pub fn decode_varint(b: &[u8]) -> Option<(u32, usize)> {
    let first = *b.first()?;
    let len = (first >> 6) as usize + 1;
    let bytes = b.get(..len)?;
    let mut v = (first & 0x3F) as u32;
    for &x in &bytes[1..] {
        v = (v << 8) | x as u32;
    }
    Some((v, len))
}

/// Segment lengths of a sorted list: how many targets fall in each partition
/// `bounds[i]..bounds[i+1]`.
pub fn segments(targets: &[u32], bounds: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(bounds.len().saturating_sub(1));
    let mut start = 0usize;
    for w in bounds.windows(2) {
        let end = start + targets[start..].partition_point(|&t| t < w[1]);
        out.push((end - start) as u32);
        start = end;
    }
    out
}

/// Builds the in-place entry of a short list.
pub fn encode_in_place(targets: &[u32], weights: Option<&[f64]>) -> Result<[u8; 32], LayoutError> {
    let cap = in_place_capacity(weights.is_some()) as usize;
    if targets.len() > cap {
        return Err(LayoutError::TooManyInPlace(targets.len()));
    }
    let mut e = [0u8; ENTRY_BYTES];
    e[..4].copy_from_slice(&(targets.len() as u32).to_le_bytes());
    for (i, t) in targets.iter().enumerate() {
        e[4 + 4 * i..8 + 4 * i].copy_from_slice(&t.to_le_bytes());
    }
    if let Some(w) = weights {
        for (i, x) in w.iter().take(targets.len()).enumerate() {
            e[12 + 8 * i..20 + 8 * i].copy_from_slice(&x.to_le_bytes());
        }
    }
    Ok(e)
}

/// Builds the entry of an out-of-place list; segment lengths are dropped (not recorded) when
/// they do not fit the entry.
pub fn encode_out_of_place(
    degree: u32,
    addr: GlobalAddr,
    segments: &[u32],
) -> Result<[u8; 32], LayoutError> {
    if degree > MAX_DEGREE {
        return Err(LayoutError::DegreeTooLarge(degree as u64));
    }
    let mut e = [0u8; ENTRY_BYTES];
    e[..4].copy_from_slice(&(degree | OUT_OF_PLACE).to_le_bytes());
    e[4..12].copy_from_slice(&addr.raw().to_le_bytes());
    let mut seg = Vec::with_capacity(SEG_BYTES);
    let fits = segments.len() <= u8::MAX as usize
        && segments
            .iter()
            .all(|&s| encode_varint(s, &mut seg).is_some())
        && seg.len() <= SEG_BYTES;
    if fits {
        e[12] = segments.len() as u8;
        e[13..13 + seg.len()].copy_from_slice(&seg);
    }
    Ok(e)
}

/// Decodes an entry read from a memory node. `weighted` says how to read in-place entries.
pub fn decode(e: &[u8], weighted: bool) -> Result<Entry, LayoutError> {
    let e: &[u8; ENTRY_BYTES] = e
        .try_into()
        .map_err(|_| LayoutError::Malformed("not 32 bytes"))?;
    let word = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
    if word & OUT_OF_PLACE == 0 {
        let d = (word & IN_PLACE_DEGREE) as usize;
        if d > in_place_capacity(weighted) as usize {
            return Err(LayoutError::Malformed("in-place degree beyond capacity"));
        }
        let targets = (0..d)
            .map(|i| u32::from_le_bytes(e[4 + 4 * i..8 + 4 * i].try_into().unwrap_or([0; 4])))
            .collect();
        let weights = weighted.then(|| {
            (0..d)
                .map(|i| f64::from_le_bytes(e[12 + 8 * i..20 + 8 * i].try_into().unwrap_or([0; 8])))
                .collect()
        });
        return Ok(Entry::InPlace { targets, weights });
    }
    let degree = word & MAX_DEGREE;
    let addr = GlobalAddr::from_raw(u64::from_le_bytes(e[4..12].try_into().unwrap_or([0; 8])));
    let n = e[12] as usize;
    let mut segments = Vec::with_capacity(n);
    let mut at = 13;
    for _ in 0..n {
        let (v, used) =
            decode_varint(&e[at..]).ok_or(LayoutError::Malformed("segment lengths overflow"))?;
        segments.push(v);
        at += used;
    }
    if !segments.is_empty() && segments.iter().map(|&s| s as u64).sum::<u64>() != degree as u64 {
        return Err(LayoutError::Malformed(
            "segment lengths disagree with degree",
        ));
    }
    Ok(Entry::OutOfPlace {
        degree,
        addr,
        segments,
    })
}

/// The check of an entry for vertex `v` in direction `dir` (the stored check field excluded).
fn entry_check(e: &[u8; ENTRY_BYTES], v: u32, dir: Direction) -> u32 {
    let mut h = key_hasher(v, dir);
    let word = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
    if word & OUT_OF_PLACE == 0 {
        h.update(&(word & IN_PLACE_DEGREE).to_le_bytes());
        h.update(&e[4..]);
        h.finalize() & IN_PLACE_CHECK
    } else {
        h.update(&e[..CHECK_AT]);
        h.finalize()
    }
}

/// The check an entry carries.
fn stored_check(e: &[u8; ENTRY_BYTES]) -> u32 {
    let word = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
    if word & OUT_OF_PLACE == 0 {
        (word >> 8) & IN_PLACE_CHECK
    } else {
        u32::from_le_bytes([
            e[CHECK_AT],
            e[CHECK_AT + 1],
            e[CHECK_AT + 2],
            e[CHECK_AT + 3],
        ])
    }
}

/// A CRC-32 already fed the vertex and direction a piece of data belongs to.
fn key_hasher(v: u32, dir: Direction) -> crc32fast::Hasher {
    let mut h = crc32fast::Hasher::new();
    h.update(&v.to_le_bytes());
    h.update(&[(dir == Direction::In) as u8]);
    h
}

/// Stores the check of `v`'s entry in direction `dir` into the entry.
pub fn seal(e: &mut [u8; ENTRY_BYTES], v: u32, dir: Direction) {
    let c = entry_check(e, v, dir);
    let word = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
    if word & OUT_OF_PLACE == 0 {
        let w = (word & IN_PLACE_DEGREE) | (c << 8);
        e[..4].copy_from_slice(&w.to_le_bytes());
    } else {
        e[CHECK_AT..].copy_from_slice(&c.to_le_bytes());
    }
}

/// Checks an entry read for vertex `v` in direction `dir` before it is decoded.
pub fn verify(e: &[u8], v: u32, dir: Direction) -> Result<(), LayoutError> {
    let e: &[u8; ENTRY_BYTES] = e
        .try_into()
        .map_err(|_| LayoutError::Malformed("not 32 bytes"))?;
    if entry_check(e, v, dir) == stored_check(e) {
        Ok(())
    } else {
        Err(LayoutError::Checksum("index entry"))
    }
}

/// Appends `v`'s out-of-place list in direction `dir` to `out`: header, targets (padded to 8),
/// weights.
pub fn push_list(
    out: &mut Vec<u8>,
    targets: &[u32],
    weights: Option<&[f64]>,
    v: u32,
    dir: Direction,
) {
    let start = out.len();
    out.extend_from_slice(&[0; LIST_HEADER as usize]);
    let t0 = out.len();
    for t in targets {
        out.extend_from_slice(&t.to_le_bytes());
    }
    let mut h = key_hasher(v, dir);
    h.update(&out[t0..]);
    let ct = h.finalize();
    out.resize(t0 + targets_bytes(targets.len() as u32) as usize, 0);
    let mut cw = 0;
    if let Some(ws) = weights {
        let w0 = out.len();
        for w in ws {
            out.extend_from_slice(&w.to_le_bytes());
        }
        let mut h = key_hasher(v, dir);
        h.update(&out[w0..]);
        cw = h.finalize();
    }
    out[start..start + 4].copy_from_slice(&ct.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&cw.to_le_bytes());
}

/// Checks the bytes fetched of `v`'s out-of-place list of `degree` arcs (as many as
/// [`list_read_bytes`] says) and returns its targets and, when fetched, weights (raw bytes).
pub fn verify_list(
    bytes: &[u8],
    degree: u32,
    with_weights: bool,
    v: u32,
    dir: Direction,
) -> Result<(&[u8], Option<&[u8]>), LayoutError> {
    let short = LayoutError::Malformed("out-of-place list read too short");
    let head = bytes.get(..LIST_HEADER as usize).ok_or(short.clone())?;
    let stored_t = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let stored_w = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    let t0 = LIST_HEADER as usize;
    let targets = bytes
        .get(t0..t0 + 4 * degree as usize)
        .ok_or(short.clone())?;
    let mut h = key_hasher(v, dir);
    h.update(targets);
    if h.finalize() != stored_t {
        return Err(LayoutError::Checksum("out-of-place list"));
    }
    if !with_weights {
        return Ok((targets, None));
    }
    let w0 = t0 + targets_bytes(degree) as usize;
    let weights = bytes.get(w0..w0 + 8 * degree as usize).ok_or(short)?;
    let mut h = key_hasher(v, dir);
    h.update(weights);
    if h.finalize() != stored_w {
        return Err(LayoutError::Checksum("out-of-place weights"));
    }
    Ok((targets, Some(weights)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trips_every_width() {
        for n in [
            0,
            1,
            63,
            64,
            0x3FFF,
            0x4000,
            0x3F_FFFF,
            0x40_0000,
            MAX_SEGMENT,
        ] {
            let mut b = Vec::new();
            encode_varint(n, &mut b).unwrap();
            assert_eq!(decode_varint(&b), Some((n, b.len())), "{n}");
        }
        assert!(encode_varint(MAX_SEGMENT + 1, &mut Vec::new()).is_none());
        assert_eq!(decode_varint(&[0xC0, 1]), None);
    }

    #[test]
    fn entries_round_trip() {
        let e = encode_in_place(&[1, 2, 3, 4, 5, 6, 7], None).unwrap();
        assert_eq!(
            decode(&e, false).unwrap(),
            Entry::InPlace {
                targets: vec![1, 2, 3, 4, 5, 6, 7],
                weights: None
            }
        );
        let e = encode_in_place(&[9, 3], Some(&[0.5, 2.0])).unwrap();
        assert_eq!(
            decode(&e, true).unwrap(),
            Entry::InPlace {
                targets: vec![9, 3],
                weights: Some(vec![0.5, 2.0])
            }
        );
        assert!(encode_in_place(&[1; 8], None).is_err());
        assert!(encode_in_place(&[1; 3], Some(&[1.0; 3])).is_err());
        let a = GlobalAddr::new(3, 4096).unwrap();
        let seg = segments(&[0, 1, 5, 9, 10, 11, 12, 300], &[0, 5, 11, 1000]);
        assert_eq!(seg, vec![2, 3, 3]);
        let e = encode_out_of_place(8, a, &seg).unwrap();
        assert_eq!(
            decode(&e, false).unwrap(),
            Entry::OutOfPlace {
                degree: 8,
                addr: a,
                segments: seg
            }
        );
        // Too many large segments to fit: recorded as none.
        let big = vec![MAX_SEGMENT / 8; 8];
        let e = encode_out_of_place(MAX_SEGMENT, a, &big).unwrap();
        assert!(
            matches!(decode(&e, false).unwrap(), Entry::OutOfPlace { segments, .. } if segments.is_empty())
        );
    }

    #[test]
    fn garbage_entries_are_errors_not_panics() {
        let mut e = [0xFFu8; 32];
        assert!(decode(&e, false).is_err());
        e[0] = 9;
        e[1..4].fill(0);
        assert!(decode(&e, false).is_err());
        assert!(decode(&e[..5], false).is_err());
        for seed in 0..2000u32 {
            let mut b = [0u8; 32];
            let mut x = seed.wrapping_mul(2654435761) | 1;
            for v in b.iter_mut() {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                *v = x as u8;
            }
            let _ = decode(&b, seed % 2 == 0);
        }
    }

    #[test]
    fn sealed_entries_verify_and_any_flipped_bit_fails() {
        let a = GlobalAddr::new(2, 8192).unwrap();
        let entries = [
            (
                encode_in_place(&[1, 2, 3, 4, 5, 6, 7], None).unwrap(),
                false,
            ),
            (encode_in_place(&[], None).unwrap(), false),
            (encode_in_place(&[9, 3], Some(&[0.5, 2.0])).unwrap(), true),
            (encode_out_of_place(40, a, &[10, 30]).unwrap(), false),
        ];
        for (mut e, weighted) in entries {
            let plain = decode(&e, weighted).unwrap();
            seal(&mut e, 17, Direction::Out);
            verify(&e, 17, Direction::Out).unwrap();
            assert_eq!(decode(&e, weighted).unwrap(), plain);
            assert!(verify(&e, 18, Direction::Out).is_err(), "another vertex");
            assert!(verify(&e, 17, Direction::In).is_err(), "another direction");
            for bit in 0..8 * ENTRY_BYTES {
                let mut bad = e;
                bad[bit / 8] ^= 1 << (bit % 8);
                assert_eq!(
                    verify(&bad, 17, Direction::Out),
                    Err(LayoutError::Checksum("index entry")),
                    "bit {bit}"
                );
            }
        }
        // A never-written (zero) entry is not a valid empty list.
        assert!(verify(&[0u8; ENTRY_BYTES], 5, Direction::Out).is_err());
    }

    #[test]
    fn lists_verify_and_damage_is_found() {
        let targets: Vec<u32> = (0..9).map(|i| i * 3).collect();
        let weights: Vec<f64> = (0..9).map(|i| i as f64 / 2.0).collect();
        let mut data = Vec::new();
        push_list(&mut data, &targets, Some(&weights), 4, Direction::In);
        assert_eq!(data.len() as u64, out_of_place_bytes(9, true));
        let (t, w) = verify_list(&data, 9, true, 4, Direction::In).unwrap();
        assert_eq!(t.len(), 36);
        assert_eq!(w.map(<[u8]>::len), Some(72));
        let short = &data[..list_read_bytes(9, false) as usize];
        assert!(verify_list(short, 9, false, 4, Direction::In).is_ok());
        assert!(verify_list(short, 9, false, 5, Direction::In).is_err());
        assert!(verify_list(&short[..20], 9, false, 4, Direction::In).is_err());
        let mut bad = data.clone();
        bad[LIST_HEADER as usize + 8] ^= 1;
        assert_eq!(
            verify_list(&bad, 9, false, 4, Direction::In),
            Err(LayoutError::Checksum("out-of-place list"))
        );
        let mut bad = data.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x80;
        assert!(
            verify_list(&bad, 9, false, 4, Direction::In).is_ok(),
            "weights not fetched"
        );
        assert_eq!(
            verify_list(&bad, 9, true, 4, Direction::In),
            Err(LayoutError::Checksum("out-of-place weights"))
        );
    }
}
