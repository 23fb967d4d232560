//! Property tests: lists through the server's list commands against a `VecDeque` model, through
//! the shared checker [`host_tests::list_check`] (the `list_ops` fuzz target drives the same
//! one).
//!
//! Seeded random sequences that grow two lists to thousands of elements (so that pushes fill
//! the room at both ends, move the elements to the middle and write the list anew larger), pop
//! them down and empty them (so that blocks shrink and keys go), move elements between them
//! and onto one list, and change them in the middle at any index. The checker says what must
//! hold after every step; this driver picks the ops, and fails if its sequences never reached
//! the states they are for. The runner is [`host_tests::property`] (proptest): a failure is
//! shrunk to its smallest sequence.

use host_tests::list_check::{check_list_ops, Coverage, Element, ListInput, ListOp};
use host_tests::property::{self, Cases, Draw};
use rand::Rng;

/// Sequences run.
const CASES: usize = 24;
/// Ops per sequence.
const STEPS: usize = 300;

fn element(rng: &mut Draw<'_>) -> Element {
    Element {
        len: rng.random(),
        byte: rng.random(),
    }
}

/// An index near one end or the other, or anywhere in a long list, or past the end.
fn index(rng: &mut Draw<'_>) -> i16 {
    match rng.random_range(0..4) {
        0 => rng.random_range(0..8),
        1 => -rng.random_range(1..9),
        2 => rng.random_range(-3000..3000),
        _ => rng.random(),
    }
}

fn op(rng: &mut Draw<'_>) -> ListOp {
    let key = rng.random_range(0..2);
    let head = rng.random();
    match rng.random_range(0..100) {
        0..10 => ListOp::Grow {
            key,
            head,
            count: rng.random(),
            byte: rng.random(),
        },
        10..35 => ListOp::Push {
            key,
            head,
            elements: (0..rng.random_range(1..5)).map(|_| element(rng)).collect(),
        },
        35..53 => {
            let most = if rng.random_bool(0.1) { 2000 } else { 4 };
            let count = rng.random_range(0..most);
            ListOp::Pop {
                key,
                head,
                count: rng.random_bool(0.5).then_some(count),
            }
        }
        53..57 => ListOp::Index {
            key,
            index: index(rng),
        },
        57..61 => ListOp::Range {
            key,
            start: index(rng),
            stop: index(rng),
        },
        61..67 => ListOp::Set {
            key,
            index: index(rng),
            element: element(rng),
        },
        67..74 => ListOp::Insert {
            key,
            before: rng.random(),
            pivot: index(rng),
            element: element(rng),
        },
        74..80 => ListOp::Rem {
            key,
            count: rng.random_range(-3..4),
            pivot: index(rng),
        },
        80..85 => ListOp::Trim {
            key,
            start: rng.random_range(0..4),
            stop: -rng.random_range(1..5),
        },
        85..87 => ListOp::Trim {
            key,
            start: index(rng),
            stop: index(rng),
        },
        _ => ListOp::Move {
            from: rng.random_range(0..2),
            to: rng.random_range(0..2),
            from_head: rng.random(),
            to_head: rng.random(),
        },
    }
}

#[test]
fn lists_match_a_deque_model() {
    let cases = Cases {
        count: CASES,
        words: STEPS * 12,
    };
    let input = |rng: &mut Draw<'_>| ListInput {
        ops: (0..STEPS).map(|_| op(rng)).collect(),
    };
    let mut coverage = Coverage::default();
    for run in property::check("lists", cases, input, check_list_ops) {
        coverage.add(&run);
    }
    assert!(coverage.longest >= 2_000, "{coverage:?}");
    assert!(coverage.emptied >= CASES, "{coverage:?}");
    assert!(coverage.middle >= CASES * 20, "{coverage:?}");
}
