//! Vertex keys as the input writes them: the `KEYS integer|string` option, the rule that picks
//! string keys when a key is not a plain unsigned integer, and the interner that gives each
//! distinct string key a dense temporary id while the input is read.
//!
//! Temporary ids are handed out in first-seen order, so the edge runs can be sorted and merged
//! exactly as integer ids are. Once the input is read, [`KeyInterner::finish`] sorts the keys
//! byte-wise; a key's internal id is its rank in that order, so the stored key table is sorted
//! (a lookup is a binary search) and "the smallest key" (WCC's component, CDLP's tie-break) is
//! the smallest internal id, exactly as for integer ids.
//!
//! The interner keeps every key once, in one byte arena, with an end offset (`u64`) and a hash
//! table slot per key (where the key starts, its length and id: 16 bytes, so a lookup reads the
//! arena once and no offset table): about 26 bytes per key on top of its text. The key looked
//! up last is remembered, so the repeated source key of an edge list sorted by source costs no
//! lookup.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::error::{Result, StoreError};

/// How the importer reads vertex keys (`KEYS ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyMode {
    /// Unsigned integers while every key is one; string keys as soon as one is not.
    #[default]
    Auto,
    /// `KEYS integer`: every key must be an unsigned 64-bit integer.
    Integer,
    /// `KEYS string`: every key is kept as written, digits included (`00017` stays `00017`).
    String,
}

impl KeyMode {
    /// The `keys` option among an import's `(key, value)` options (later ones win).
    pub(crate) fn from_options(options: &[(String, String)]) -> Result<KeyMode> {
        let mut mode = KeyMode::Auto;
        for (k, v) in options {
            if !k.eq_ignore_ascii_case("keys") {
                continue;
            }
            mode = match v.to_ascii_lowercase().as_str() {
                "integer" => KeyMode::Integer,
                "string" => KeyMode::String,
                "auto" => KeyMode::Auto,
                _ => {
                    return Err(StoreError::Other(format!(
                        "KEYS must be integer, string or auto, found `{v}`"
                    )))
                }
            };
        }
        Ok(mode)
    }
}

/// A key that `KEYS auto` reads as an integer: the canonical decimal form of an unsigned 64-bit
/// integer. `00017` and `+5` are not, so they stay strings exactly as written.
#[inline]
pub(crate) fn canonical_integer(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() || tok.len() > 20 || (tok[0] == b'0' && tok.len() > 1) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in tok {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Where a key lives in the arena, and its id.
#[derive(Clone, Copy)]
struct Slot {
    start: u64,
    len: u32,
    id: u32,
}

/// The distinct string keys of an input, each with a temporary id (first-seen order).
pub struct KeyInterner {
    bytes: Vec<u8>,
    /// End offset in `bytes` of each key (its start is the previous key's end).
    ends: Vec<u64>,
    table: HashTable<Slot>,
    /// The key looked up last and its id.
    last: Option<Slot>,
    hasher: std::hash::RandomState,
    /// No new keys: the vertex file defined them all.
    frozen: bool,
}

impl Default for KeyInterner {
    fn default() -> Self {
        KeyInterner {
            bytes: Vec::new(),
            ends: Vec::new(),
            table: HashTable::new(),
            last: None,
            hasher: std::hash::RandomState::new(),
            frozen: false,
        }
    }
}

impl KeyInterner {
    /// Distinct keys so far.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no key was seen.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Bytes the interner holds (keys, offsets and table).
    pub fn memory_bytes(&self) -> u64 {
        (self.bytes.capacity()
            + self.ends.capacity() * 8
            + self.table.capacity() * std::mem::size_of::<Slot>()) as u64
    }

    fn key(&self, id: u32) -> &[u8] {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    /// Accepts no new keys from now on: [`KeyInterner::intern`] then only finds keys.
    pub fn freeze(&mut self) {
        self.frozen = true;
    }

    /// The temporary id of `key`, adding it unless the interner is frozen (then `None` for a
    /// key it has not seen).
    pub fn intern(&mut self, key: &[u8]) -> Option<u32> {
        let bytes = &self.bytes;
        let at = |s: &Slot| &bytes[s.start as usize..s.start as usize + s.len as usize];
        if let Some(last) = &self.last {
            if last.len as usize == key.len() && at(last) == key {
                return Some(last.id);
            }
        }
        let hash = self.hasher.hash_one(key);
        if let Some(&slot) = self
            .table
            .find(hash, |s| s.len as usize == key.len() && at(s) == key)
        {
            self.last = Some(slot);
            return Some(slot.id);
        }
        if self.frozen {
            return None;
        }
        let id = u32::try_from(self.ends.len()).ok()?;
        let len = u32::try_from(key.len()).ok()?;
        let slot = Slot {
            start: self.bytes.len() as u64,
            len,
            id,
        };
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len() as u64);
        let (hasher, bytes) = (&self.hasher, &self.bytes);
        self.table.insert_unique(hash, slot, |s| {
            hasher.hash_one(&bytes[s.start as usize..s.start as usize + s.len as usize])
        });
        self.last = Some(slot);
        Some(id)
    }

    /// Sorts the keys: the rank of every temporary id, and the keys in rank order.
    pub fn finish(self) -> SortedKeys {
        let KeyInterner {
            bytes, ends, table, ..
        } = self;
        drop(table);
        let interner = KeyInterner {
            bytes,
            ends,
            table: HashTable::new(),
            last: None,
            hasher: std::hash::RandomState::new(),
            frozen: true,
        };
        let mut order: Vec<u32> = (0..interner.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| interner.key(a).cmp(interner.key(b)));
        let mut rank = vec![0u32; order.len()];
        for (r, &t) in order.iter().enumerate() {
            rank[t as usize] = r as u32;
        }
        SortedKeys {
            interner,
            order,
            rank,
        }
    }
}

/// The keys of an import, sorted: what the writer stores and what maps temporary ids to
/// internal ids.
pub struct SortedKeys {
    interner: KeyInterner,
    /// Temporary id of each rank.
    order: Vec<u32>,
    /// Rank (internal id) of each temporary id.
    rank: Vec<u32>,
}

impl SortedKeys {
    /// Number of keys.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Bytes held: keys, offsets and the two permutations.
    pub fn memory_bytes(&self) -> u64 {
        self.interner.memory_bytes() + 8 * self.order.len() as u64
    }

    /// Bytes the keys take in a graph file: `n + 1` offsets and the text.
    pub fn file_bytes(&self) -> u64 {
        8 * (self.len() as u64 + 1) + self.interner.bytes.len() as u64
    }

    /// The internal id of temporary id `t`.
    #[inline]
    pub fn rank(&self, t: u64) -> Option<u32> {
        self.rank.get(usize::try_from(t).ok()?).copied()
    }

    /// The key of internal id `r`.
    pub fn key(&self, r: u32) -> &[u8] {
        self.interner.key(self.order[r as usize])
    }
}

/// The error for a key that `KEYS integer` cannot read: the integer parser's reason, with the
/// column and what to do.
/// An integer vertex key at `path:line` (column `column`, named in errors): `Ok(None)` when
/// `KEYS auto` (`explicit` false) meets a key that is not one, so the input must be read again
/// with string keys. Shared by the sink and the parallel parsers, so both read keys alike.
#[inline]
pub(crate) fn integer_key(
    explicit: bool,
    tok: &[u8],
    path: &std::path::Path,
    line: u64,
    column: &dyn Fn() -> String,
) -> Result<Option<u64>> {
    if explicit {
        return super::edgelist::parse_id(tok, path, line)
            .map(Some)
            .map_err(|e| not_an_integer(&column(), e));
    }
    match canonical_integer(tok) {
        Some(v) => Ok(Some(v)),
        None if tok.is_empty() => Err(super::edgelist::input_err(
            path,
            line,
            format!("{}: empty vertex key", column()),
        )),
        None => Ok(None),
    }
}

pub(crate) fn not_an_integer(column: &str, e: StoreError) -> StoreError {
    match e {
        StoreError::Input {
            path,
            line,
            message,
        } => StoreError::Input {
            path,
            line,
            message: format!(
                "{column}: {message} (KEYS integer was given; drop it, or write KEYS string, \
                 to import the keys as strings)"
            ),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_canonical_decimals_are_integers() {
        assert_eq!(canonical_integer(b"0"), Some(0));
        assert_eq!(canonical_integer(b"17"), Some(17));
        assert_eq!(canonical_integer(b"18446744073709551615"), Some(u64::MAX));
        for s in [
            "00017",
            "+5",
            "-5",
            "",
            "18446744073709551616",
            "1e3",
            "alice",
        ] {
            assert_eq!(canonical_integer(s.as_bytes()), None, "{s}");
        }
    }

    #[test]
    fn interned_keys_sort_and_rank() {
        let mut k = KeyInterner::default();
        let words = ["carol", "alice", "bob", "alice", "00017", "carol"];
        let ids: Vec<u32> = words
            .iter()
            .map(|w| k.intern(w.as_bytes()).unwrap())
            .collect();
        assert_eq!(ids, [0, 1, 2, 1, 3, 0]);
        k.freeze();
        assert_eq!(k.intern(b"dave"), None);
        let s = k.finish();
        let sorted: Vec<&[u8]> = (0..s.len() as u32).map(|r| s.key(r)).collect();
        assert_eq!(sorted, [&b"00017"[..], b"alice", b"bob", b"carol"]);
        assert_eq!(s.rank(0), Some(3));
        assert_eq!(s.rank(3), Some(0));
    }
}
