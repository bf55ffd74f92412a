//! What the two sides of an RDMA connection tell each other over the TCP link before any
//! one-sided verb: the queue-pair endpoint (to bring both queue pairs to ready-to-send) and,
//! per region, the remote virtual address and rkey a work request must carry.
//!
//! Plain data with a versioned, fixed-size encoding, so it compiles and is tested without the
//! `rdma` feature; [`decode_endpoint`] and [`decode_region_key`] are panic-free over any bytes.

use super::addr::GlobalAddr;
use super::protocol::FrameError;

/// Version of the endpoint encoding; a peer speaking another is refused, not misread.
pub const ENDPOINT_VERSION: u8 = 1;
/// Bytes of an encoded [`QpEndpoint`].
pub const ENDPOINT_BYTES: usize = 1 + 2 + 4 + 4 + 1 + 16;
/// Bytes of an encoded [`RegionKey`].
pub const REGION_KEY_BYTES: usize = 8 + 8 + 8 + 4;

/// One side of a reliable-connected queue pair: what the other side needs to reach it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpEndpoint {
    /// Local identifier of the port (InfiniBand; 0 on RoCE).
    pub lid: u16,
    /// Queue-pair number.
    pub qp_num: u32,
    /// First packet sequence number this side sends.
    pub psn: u32,
    /// Path MTU code as `ibv_mtu` numbers it (1 = 256 bytes … 5 = 4096 bytes).
    pub mtu: u8,
    /// Global identifier (RoCE, routed InfiniBand); all zero when unused.
    pub gid: [u8; 16],
}

impl QpEndpoint {
    /// True when the endpoint carries a global identifier (global routing is needed).
    pub fn has_gid(&self) -> bool {
        self.gid != [0; 16]
    }
}

/// Appends the versioned encoding of `e` to `out`.
pub fn encode_endpoint(e: &QpEndpoint, out: &mut Vec<u8>) {
    out.push(ENDPOINT_VERSION);
    out.extend_from_slice(&e.lid.to_le_bytes());
    out.extend_from_slice(&e.qp_num.to_le_bytes());
    out.extend_from_slice(&e.psn.to_le_bytes());
    out.push(e.mtu);
    out.extend_from_slice(&e.gid);
}

/// Decodes exactly [`ENDPOINT_BYTES`] bytes; an unknown version, an MTU code outside 1–5 or a
/// PSN beyond 24 bits is malformed.
pub fn decode_endpoint(b: &[u8]) -> Result<QpEndpoint, FrameError> {
    if b.len() < ENDPOINT_BYTES {
        return Err(FrameError::Truncated("queue-pair endpoint"));
    }
    if b.len() > ENDPOINT_BYTES {
        return Err(FrameError::Malformed("queue-pair endpoint too long"));
    }
    if b[0] != ENDPOINT_VERSION {
        return Err(FrameError::Malformed("unknown queue-pair endpoint version"));
    }
    let u32at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let e = QpEndpoint {
        lid: u16::from_le_bytes([b[1], b[2]]),
        qp_num: u32at(3),
        psn: u32at(7),
        mtu: b[11],
        gid: {
            let mut g = [0u8; 16];
            g.copy_from_slice(&b[12..28]);
            g
        },
    };
    if !(1..=5).contains(&e.mtu) {
        return Err(FrameError::Malformed("path MTU code outside 1..=5"));
    }
    if e.psn >= 1 << 24 || e.qp_num >= 1 << 24 {
        return Err(FrameError::Malformed(
            "queue-pair number or PSN beyond 24 bits",
        ));
    }
    Ok(e)
}

/// What a work request needs to reach one region of a memory node: where the region starts in
/// the global address space, its length, its address in the node's registered memory and the
/// rkey of that registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionKey {
    /// The region's first global address.
    pub start: GlobalAddr,
    /// Bytes in the region.
    pub len: u64,
    /// The region's first byte as the memory node's device sees it.
    pub remote_va: u64,
    /// The remote key of the region's registration.
    pub rkey: u32,
}

/// Appends the encoding of `k` to `out`.
pub fn encode_region_key(k: &RegionKey, out: &mut Vec<u8>) {
    out.extend_from_slice(&k.start.raw().to_le_bytes());
    out.extend_from_slice(&k.len.to_le_bytes());
    out.extend_from_slice(&k.remote_va.to_le_bytes());
    out.extend_from_slice(&k.rkey.to_le_bytes());
}

/// Decodes exactly [`REGION_KEY_BYTES`] bytes; a region that wraps the address space (of the
/// node or of the device) is malformed.
pub fn decode_region_key(b: &[u8]) -> Result<RegionKey, FrameError> {
    if b.len() < REGION_KEY_BYTES {
        return Err(FrameError::Truncated("region key"));
    }
    if b.len() > REGION_KEY_BYTES {
        return Err(FrameError::Malformed("region key too long"));
    }
    let u64at = |i: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(a)
    };
    let k = RegionKey {
        start: GlobalAddr::from_raw(u64at(0)),
        len: u64at(8),
        remote_va: u64at(16),
        rkey: u32::from_le_bytes([b[24], b[25], b[26], b[27]]),
    };
    if k.len == 0
        || k.start.checked_add(k.len).is_none()
        || k.remote_va.checked_add(k.len).is_none()
    {
        return Err(FrameError::Malformed(
            "region key with an impossible extent",
        ));
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> QpEndpoint {
        QpEndpoint {
            lid: 7,
            qp_num: 0x12_3456,
            psn: 0xab_cdef,
            mtu: 5,
            gid: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8],
        }
    }

    #[test]
    fn endpoints_round_trip_and_every_truncation_is_an_error() {
        let mut b = Vec::new();
        encode_endpoint(&endpoint(), &mut b);
        assert_eq!(b.len(), ENDPOINT_BYTES);
        assert_eq!(decode_endpoint(&b), Ok(endpoint()));
        assert!(endpoint().has_gid());
        for cut in 0..b.len() {
            assert!(decode_endpoint(&b[..cut]).is_err());
        }
        let mut long = b.clone();
        long.push(0);
        assert!(decode_endpoint(&long).is_err());
    }

    #[test]
    fn another_version_or_impossible_fields_are_refused() {
        let mut b = Vec::new();
        encode_endpoint(&endpoint(), &mut b);
        let mut v2 = b.clone();
        v2[0] = 2;
        assert!(decode_endpoint(&v2).is_err());
        for bad in [
            QpEndpoint {
                mtu: 0,
                ..endpoint()
            },
            QpEndpoint {
                mtu: 6,
                ..endpoint()
            },
            QpEndpoint {
                psn: 1 << 24,
                ..endpoint()
            },
            QpEndpoint {
                qp_num: u32::MAX,
                ..endpoint()
            },
        ] {
            let mut b = Vec::new();
            encode_endpoint(&bad, &mut b);
            assert!(decode_endpoint(&b).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn region_keys_round_trip_and_impossible_extents_are_refused() {
        let k = RegionKey {
            start: GlobalAddr::new(2, 4096).unwrap(),
            len: 1 << 20,
            remote_va: 0x7f00_0000_0000,
            rkey: 0xdead_beef,
        };
        let mut b = Vec::new();
        encode_region_key(&k, &mut b);
        assert_eq!(b.len(), REGION_KEY_BYTES);
        assert_eq!(decode_region_key(&b), Ok(k));
        for cut in 0..b.len() {
            assert!(decode_region_key(&b[..cut]).is_err());
        }
        for bad in [
            RegionKey { len: 0, ..k },
            RegionKey {
                remote_va: u64::MAX - 10,
                ..k
            },
            RegionKey { len: u64::MAX, ..k },
        ] {
            let mut b = Vec::new();
            encode_region_key(&bad, &mut b);
            assert!(decode_region_key(&b).is_err(), "{bad:?}");
        }
    }
}
