//! Global addresses of the disaggregated-memory pool: a 16-bit memory-node id and a 48-bit offset
//! packed in one `u64`, as in DMG §3.3, so an address fits an index entry and a RefRD slot.

use std::fmt;

/// Largest offset a memory node can hand out (48 bits).
pub const MAX_OFFSET: u64 = (1 << 48) - 1;

/// A byte address in the pool: which memory node, and where inside it.
///
/// Packed as `node << 48 | offset` so that it is 8 bytes on the wire and in index entries.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct GlobalAddr(u64);

impl GlobalAddr {
    /// Builds an address; `None` when the offset does not fit 48 bits (no silent truncation).
    pub fn new(node: u16, offset: u64) -> Option<GlobalAddr> {
        (offset <= MAX_OFFSET).then_some(GlobalAddr(((node as u64) << 48) | offset))
    }

    /// Reinterprets a packed value read from the wire or from an index entry.
    pub const fn from_raw(raw: u64) -> GlobalAddr {
        GlobalAddr(raw)
    }

    /// The packed value, for the wire and index entries.
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The memory node that owns this address.
    pub const fn node(self) -> u16 {
        (self.0 >> 48) as u16
    }

    /// The offset inside the memory node.
    pub const fn offset(self) -> u64 {
        self.0 & MAX_OFFSET
    }

    /// The address `bytes` further on the same node; `None` if it would leave the 48-bit space.
    pub fn checked_add(self, bytes: u64) -> Option<GlobalAddr> {
        GlobalAddr::new(self.node(), self.offset().checked_add(bytes)?)
    }
}

impl fmt::Debug for GlobalAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{:#x}", self.node(), self.offset())
    }
}

impl fmt::Display for GlobalAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_node_and_offset() {
        let a = GlobalAddr::new(0xBEEF, 0x1234_5678_9ABC).unwrap();
        assert_eq!(a.node(), 0xBEEF);
        assert_eq!(a.offset(), 0x1234_5678_9ABC);
        assert_eq!(GlobalAddr::from_raw(a.raw()), a);
        assert!(GlobalAddr::new(1, MAX_OFFSET + 1).is_none());
        assert!(a.checked_add(u64::MAX).is_none());
        assert_eq!(a.checked_add(8).unwrap().offset(), 0x1234_5678_9AC4);
    }
}
