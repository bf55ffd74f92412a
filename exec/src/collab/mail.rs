//! The redistribution buffers of collaborative update, as they sit in a mailbox.
//!
//! ```text
//! header   u64 round tag, u32 kind (0 values, 1 references), u32 item count
//! value    u32 destination vertex, u64 value (the state's word)          — ValRD
//! ref      u32 source vertex, u32 direction (0 out, 1 in), u64 value     — RefRD
//! mark     u32 vertex                                                     — a split round's
//!                                                                           changes, for
//!                                                                           their owner
//! ```
//!
//! Little-endian. Mailboxes belong to one array (one query), and the round tag is random per
//! round: a buffer with another tag (left by an earlier, interrupted round, or written by
//! anyone else holding the token) is an error, never applied. Decoding checks every
//! length and never panics: what a memory node hands back is input.

use storage::Direction;

use crate::error::ExecError;

/// Bytes of the header.
pub const HEADER_BYTES: usize = 16;
/// Bytes of one value item.
pub const VALUE_BYTES: usize = 12;
/// Bytes of one reference item.
pub const REF_BYTES: usize = 16;
/// Bytes of one mark item.
pub const MARK_BYTES: usize = 4;

const KIND_VALUES: u32 = 0;
const KIND_REFS: u32 = 1;
const KIND_MARKS: u32 = 2;

/// One decoded buffer.
#[derive(Debug, Clone, PartialEq)]
pub enum Mail {
    /// `(destination, value word)`.
    Values(Vec<(u32, u64)>),
    /// `(source, direction of its list, value word)`.
    Refs(Vec<(u32, Direction, u64)>),
    /// Vertices another member changed, for their owner's next frontier
    /// ([`crate::cluster::marks`]).
    Marks(Vec<u32>),
}

fn header(out: &mut Vec<u8>, tag: u64, kind: u32, count: usize) {
    out.extend_from_slice(&tag.to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&(count as u32).to_le_bytes());
}

/// A buffer of value items.
pub fn encode_values(tag: u64, items: &[(u32, u64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + items.len() * VALUE_BYTES);
    header(&mut out, tag, KIND_VALUES, items.len());
    for &(v, w) in items {
        out.extend_from_slice(&v.to_le_bytes());
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

/// A buffer of reference items.
pub fn encode_refs(tag: u64, items: &[(u32, Direction, u64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + items.len() * REF_BYTES);
    header(&mut out, tag, KIND_REFS, items.len());
    for &(v, dir, w) in items {
        out.extend_from_slice(&v.to_le_bytes());
        let dir: u32 = if dir == Direction::In { 1 } else { 0 };
        out.extend_from_slice(&dir.to_le_bytes());
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

/// A buffer of mark items.
pub fn encode_marks(tag: u64, items: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + items.len() * MARK_BYTES);
    header(&mut out, tag, KIND_MARKS, items.len());
    for &v in items {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// Decodes a buffer of round `tag` from the mailbox `what` names (for errors).
pub fn decode(buf: &[u8], tag: u64, what: &str) -> Result<Mail, ExecError> {
    let bad = |why: String| {
        ExecError::Other(format!(
            "{what}: a redistribution buffer is malformed ({why}); the memory node's mailbox was \
             written by something else: run the query again"
        ))
    };
    if buf.len() < HEADER_BYTES {
        return Err(bad(format!("{} bytes, shorter than its header", buf.len())));
    }
    let got = u64_at(buf, 0);
    if got != tag {
        return Err(ExecError::Other(format!(
            "{what}: a redistribution buffer belongs to another round (round tag {got:#x}, \
             expected {tag:#x}); the memory node's mailbox holds foreign data: run the query again"
        )));
    }
    let kind = u32_at(buf, 8);
    let count = u32_at(buf, 12) as usize;
    let body = &buf[HEADER_BYTES..];
    let size = match kind {
        KIND_VALUES => VALUE_BYTES,
        KIND_REFS => REF_BYTES,
        KIND_MARKS => MARK_BYTES,
        k => return Err(bad(format!("item kind {k}"))),
    };
    if count.checked_mul(size) != Some(body.len()) {
        return Err(bad(format!("{count} items in {} bytes", body.len())));
    }
    let items = body.chunks_exact(size);
    Ok(match kind {
        KIND_VALUES => Mail::Values(items.map(|c| (u32_at(c, 0), u64_at(c, 4))).collect()),
        KIND_MARKS => Mail::Marks(items.map(|c| u32_at(c, 0)).collect()),
        _ => Mail::Refs(
            items
                .map(|c| {
                    let dir = match u32_at(c, 4) {
                        0 => Ok(Direction::Out),
                        1 => Ok(Direction::In),
                        d => Err(bad(format!("direction {d}"))),
                    }?;
                    Ok((u32_at(c, 0), dir, u64_at(c, 8)))
                })
                .collect::<Result<_, ExecError>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_round_trip_and_anything_else_is_an_error() {
        let v = encode_values(7, &[(1, 2), (u32::MAX, u64::MAX)]);
        assert_eq!(
            decode(&v, 7, "m").unwrap(),
            Mail::Values(vec![(1, 2), (u32::MAX, u64::MAX)])
        );
        let r = encode_refs(7, &[(3, Direction::In, 9), (4, Direction::Out, 0)]);
        assert_eq!(
            decode(&r, 7, "m").unwrap(),
            Mail::Refs(vec![(3, Direction::In, 9), (4, Direction::Out, 0)])
        );
        assert!(decode(&v, 8, "m")
            .unwrap_err()
            .to_string()
            .contains("another round"));
        for cut in 0..v.len() {
            assert!(decode(&v[..cut], 7, "m").is_err());
        }
        let mut long = r.clone();
        long.push(0);
        assert!(decode(&long, 7, "m").is_err());
        let m = encode_marks(7, &[0, u32::MAX, 5]);
        assert_eq!(
            decode(&m, 7, "m").unwrap(),
            Mail::Marks(vec![0, u32::MAX, 5])
        );
        for cut in 0..m.len() {
            assert!(decode(&m[..cut], 7, "m").is_err());
        }
        let mut bad_dir = r.clone();
        bad_dir[HEADER_BYTES + 4] = 2;
        assert!(decode(&bad_dir, 7, "m").is_err());
        let mut huge = v.clone();
        huge[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&huge, 7, "m").is_err());
    }
}
