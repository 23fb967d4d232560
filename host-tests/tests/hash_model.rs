//! Property tests: hashes through the server's hash commands against a `HashMap` model,
//! through the shared checker [`host_tests::hash_check`] (the `hash_ops` fuzz target drives
//! the same one).
//!
//! Seeded random sequences, half of them small, that grow a hash past Redis 7.0's thresholds (so that it is given
//! an index and changed in place from then on), set long values, delete fields, give fields
//! deadlines and let two hours pass, so that the fields' timer removes them from packed and
//! indexed hashes alike and empties the hash. The runner is [`host_tests::property`]
//! (proptest): a failure is shrunk to its smallest sequence.

use host_tests::hash_check::{check_hash_ops, Coverage, HashInput, HashOp};
use host_tests::property::{self, Cases, Draw};
use rand::Rng;

/// Sequences run.
const CASES: usize = 16;
/// Ops per sequence.
const STEPS: usize = 200;

/// A field: one of a few (so ops meet), or one of the many `Grow` writes.
fn field(rng: &mut Draw<'_>) -> u16 {
    if rng.random_bool(0.75) {
        rng.random_range(0..16)
    } else {
        rng.random_range(0..1200)
    }
}

fn fields(rng: &mut Draw<'_>) -> Vec<u16> {
    (0..rng.random_range(1..6)).map(|_| field(rng)).collect()
}

/// An op; `big`: the sequence grows the hash past the packed limit.
fn op(rng: &mut Draw<'_>, big: bool) -> HashOp {
    match rng.random_range(0..100) {
        0..8 if big => HashOp::Grow {
            from: rng.random_range(0..1000),
            count: rng.random_range(0..700),
        },
        // Long values (`len` from 240 on) only in the big sequences.
        0..30 => HashOp::Set {
            fields: (0..rng.random_range(1..5))
                .map(|_| {
                    (
                        field(rng),
                        rng.random_range(0..=if big { 255 } else { 239 }),
                    )
                })
                .collect(),
        },
        30..45 => HashOp::Del {
            fields: fields(rng),
        },
        45..60 => HashOp::Get { field: field(rng) },
        60..68 => HashOp::Incr {
            counter: rng.random(),
            by: rng.random(),
        },
        68..85 => HashOp::Expire {
            fields: fields(rng),
            late: rng.random(),
        },
        85..92 => HashOp::Persist {
            fields: fields(rng),
        },
        _ => HashOp::Jump,
    }
}

#[test]
fn hashes_match_a_map_model() {
    let cases = Cases {
        count: CASES,
        words: STEPS * 16,
    };
    // Half the sequences keep the hash small (packed, unless a long value comes).
    let input = |rng: &mut Draw<'_>| {
        let big = rng.random_bool(0.5);
        HashInput {
            ops: (0..STEPS).map(|_| op(rng, big)).collect(),
        }
    };
    let mut coverage = Coverage::default();
    for run in property::check("hashes", cases, input, check_hash_ops) {
        coverage.add(&run);
    }
    assert!(coverage.most > 512, "{coverage:?}");
    assert!(coverage.expired_indexed >= CASES, "{coverage:?}");
    assert!(coverage.expired_packed >= CASES, "{coverage:?}");
}
