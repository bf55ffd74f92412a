//! The verifier against the Graphalytics validator self-test files: every `_actual1` must pass
//! and every `_actual2` must fail its rule.

use std::path::PathBuf;

use exec::verify::{read_reference, validate, Rule};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/validator-selftest")
        .join(name)
}

fn check(prefix: &str, rule: Rule) {
    let expected = read_reference(&data(&format!("{prefix}_expected.csv"))).unwrap();
    let good = read_reference(&data(&format!("{prefix}_actual1.csv"))).unwrap();
    let bad = read_reference(&data(&format!("{prefix}_actual2.csv"))).unwrap();
    assert_eq!(
        validate(rule, &expected, &good),
        Ok(()),
        "{prefix}_actual1 must pass"
    );
    assert!(
        validate(rule, &expected, &bad).is_err(),
        "{prefix}_actual2 must fail"
    );
}

#[test]
fn exact_selftest() {
    check("exact", Rule::Exact);
}

#[test]
fn equivalence_selftest() {
    check("equivalence", Rule::Equivalence);
}

#[test]
fn epsilon_selftest() {
    check("epsilon", Rule::Epsilon);
}

#[test]
fn reference_directory_is_read_as_one_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("part-0"), "1 5\n2 6\n").unwrap();
    std::fs::write(dir.path().join("part-1"), "3 7").unwrap();
    let all = read_reference(dir.path()).unwrap();
    assert_eq!(all.len(), 3);
    std::fs::write(dir.path().join("part-2"), "3 7").unwrap();
    assert!(read_reference(dir.path()).is_err());
}
