//! Writes the `frame_decode` seed corpus with the protocol's own encoder: one valid frame per
//! message kind. `cargo run --example frame_seeds -- corpus/frame_decode` (see README.md).

use storage::dm::protocol::{
    encode_frame, AttrKind, ErrorCode, Message, UpdateItem, UpdateOp, Verb, VerbReply,
};
use storage::dm::GlobalAddr;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "corpus/frame_decode".into());
    std::fs::create_dir_all(&dir).unwrap();
    let a = |off: u64| GlobalAddr::new(3, off).unwrap();
    let messages: Vec<(&str, Message)> = vec![
        ("hello", Message::Hello { token: "s3cret".into() }),
        ("hello-empty", Message::Hello { token: String::new() }),
        ("hello-ok", Message::HelloOk { node_id: 3, capacity: 1 << 30 }),
        ("alloc", Message::Alloc { size: 4096 }),
        ("allocated", Message::Allocated { addr: a(4096) }),
        ("free", Message::Free { addr: a(4096) }),
        ("done", Message::Done),
        ("info", Message::Info),
        (
            "batch",
            Message::Batch(vec![
                Verb::Read { addr: a(8), len: 32 },
                Verb::Write { addr: a(16), data: vec![1, 2, 3] },
                Verb::Cas { addr: a(24), expected: 1, new: 2 },
                Verb::Faa { addr: a(32), delta: u64::MAX },
            ]),
        ),
        ("batch-empty", Message::Batch(Vec::new())),
        (
            "batch-reply",
            Message::BatchReply(vec![
                VerbReply::Read(vec![9; 7]),
                VerbReply::Written,
                VerbReply::Cas { old: 5 },
                VerbReply::Faa { old: 6 },
                VerbReply::Failed { code: ErrorCode::OutOfBounds, message: "no".into() },
            ]),
        ),
        ("push", Message::MailboxPush { mailbox: 2, data: vec![5; 20] }),
        ("pull", Message::MailboxPull { mailbox: 2, max_bytes: 1 << 20 }),
        ("pulled", Message::Pulled(vec![vec![1], vec![], vec![2, 3]])),
        (
            "apply-f64-add",
            Message::Apply {
                base: a(4096),
                attr: AttrKind::F64,
                op: UpdateOp::Add,
                items: vec![UpdateItem { index: 3, value: 1.5f64.to_bits() }],
            },
        ),
        (
            "apply-u32-min",
            Message::Apply {
                base: a(0),
                attr: AttrKind::U32,
                op: UpdateOp::Min,
                items: vec![UpdateItem { index: 0, value: 7 }, UpdateItem { index: 9, value: 1 }],
            },
        ),
        ("applied", Message::Applied { changed: 12 }),
        ("info-reply", Message::InfoReply { node_id: 3, capacity: 10, used: 5, regions: 1 }),
        ("error", Message::Error { code: ErrorCode::Capacity, message: "full".into() }),
    ];
    for (i, (name, m)) in messages.iter().enumerate() {
        let mut buf = Vec::new();
        encode_frame(i as u64 + 1, m, &mut buf).unwrap();
        std::fs::write(format!("{dir}/seed-{name}"), &buf).unwrap();
    }
    println!("{} frames written to {dir}", messages.len());
}
