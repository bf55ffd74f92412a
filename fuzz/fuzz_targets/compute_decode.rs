//! `storage::dm::compute_protocol::ComputeMessage::decode_body` over arbitrary bytes: what a
//! `frontier compute` worker decodes from a session (HELLO, JOB), and a session from a worker
//! (DONE, ERROR). It must never panic nor allocate beyond what the bytes justify, and what it
//! accepts re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use storage::dm::compute_protocol::ComputeMessage;

fuzz_target!(|data: &[u8]| {
    let Ok(msg) = ComputeMessage::decode_body(data) else {
        return;
    };
    let again = msg.encode_body();
    assert_eq!(again.len(), data.len(), "{msg:?}");
    let back = ComputeMessage::decode_body(&again).expect("a re-encoded message decodes");
    // Compared as bytes: a NaN parameter is not equal to itself.
    assert_eq!(back.encode_body(), again);
});
