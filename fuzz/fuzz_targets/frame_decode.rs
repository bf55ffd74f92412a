//! `storage::dm::protocol::decode_frame` over arbitrary bytes: the memory node's first contact
//! with the network. It must never panic nor allocate beyond what the frame justifies (libFuzzer's
//! `-rss_limit_mb` / `-malloc_limit_mb` catch the latter), and what it accepts must survive a
//! round trip: `decode(encode(decode(bytes))) == decode(bytes)`, with `wire_len` exact.
#![no_main]

use libfuzzer_sys::fuzz_target;
use storage::dm::protocol::{decode_frame, encode_frame, frame_body_len};

fuzz_target!(|data: &[u8]| {
    if data.len() >= 4 {
        // The reader's first check on a connection; must agree with decode_frame's own.
        let _ = frame_body_len([data[0], data[1], data[2], data[3]]);
    }
    let Ok(frame) = decode_frame(data) else {
        return;
    };
    // Whatever decodes was framed exactly: the frame is the whole buffer.
    assert_eq!(frame.msg.wire_len(), data.len(), "{frame:?}");
    let mut again = Vec::new();
    encode_frame(frame.id, &frame.msg, &mut again).expect("a decoded frame re-encodes");
    assert_eq!(again.len(), frame.msg.wire_len(), "{frame:?}");
    let back = decode_frame(&again).expect("a re-encoded frame decodes");
    assert_eq!(back, frame);
});
