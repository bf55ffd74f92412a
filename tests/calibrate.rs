//! `frontier calibrate` through the binary: the probe stores random and sequential figures,
//! with its sampling, in DATA/device.json, and refuses settings it cannot use.

mod common;

use std::process::Command;

use common::{text, BIN};

#[test]
fn calibrate_stores_random_and_sequential_figures() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["calibrate", "--dir"])
        .arg(dir.path())
        .args(["--seconds", "0.04", "--file-mib", "2", "--depths", "1,4"])
        .args(["--samples", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("sequential 1024 KiB reads"), "{stdout}");
    assert!(stdout.contains("CPU us/read"), "{stdout}");
    let device = std::fs::read_to_string(dir.path().join("device.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&device).unwrap();
    assert!(v["seq_mb_per_sec"].as_f64().unwrap() > 0.0, "{device}");
    assert!(v["peak_reads_per_sec"].as_f64().unwrap() > 0.0, "{device}");
    assert_eq!(v["seq_read_bytes"].as_u64(), Some(1 << 20));
    assert_eq!(v["samples"].as_u64(), Some(2));
    assert_eq!(v["submitters"].as_u64(), Some(2));
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
    assert!(v["warnings"].is_array());
    // Only the figures are left behind: the probe file is gone.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("device.json")]);
}

#[test]
fn calibrate_refuses_zero_samples_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["calibrate", "--samples", "0", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--samples"),
        "{}",
        text(&out.stderr)
    );
}
