//! Property tests: the key store against its `HashMap` model, through the shared checker
//! [`host_tests::store_check`] (the `store_ops` fuzz target drives the same one).
//!
//! Seeded random sequences of sets (every kind of time to live, values from empty to past the
//! limit), reads, deletes, deadline changes, timer sweeps with random budgets, limit changes and
//! clears, while time moves forward in small and large steps and sometimes backwards. Two
//! shapes: the fuzz target's store (16 keys, 512 bytes: a write is refused only when it does not
//! fit by count), and a store larger than `MAX_BYTES_MOVED` (1,024 keys, 96 KiB) that fills with
//! numbered keys and churns, so that its writes also take the bounded compaction and may be
//! refused when the free bytes are scattered. A third store (4,096 keys) grows past its first
//! timer segment with keys expiring all the while, then shrinks as keys are deleted at random
//! and expire, down to no key at all. The checker says what must hold after every step;
//! this driver picks the ops, and fails a test whose sequences never produced the events it is
//! there for.
//!
//! The runner is [`host_tests::property`] (proptest): `PROPERTY_SCALE` and `PROPERTY_SEED` set
//! how many sequences and which, and a failure is shrunk to its smallest sequence. The small
//! store runs [`CASES`] sequences; the large store one for every 100.

use host_tests::property::{self, Cases, Draw};

use host_tests::store_check::{
    check_grown_store_ops, check_input, Coverage, KeySpec, Op, Run, Step, StoreInput, TtlSpec,
    ValueSpec, When, FUZZ_BYTES, FUZZ_KEYS, MAX_FUZZ_STEPS, ONE_TIMER_SEGMENT,
};
use rand::Rng;

/// Sequences of the small store.
const CASES: usize = 2_000;
/// Keys and bytes of the large store.
const LARGE_KEYS: usize = 1_024;
const LARGE_BYTES: usize = 96 << 10;

/// Keys and bytes of the store that grows and shrinks: more keys than one timer segment.
const GROWING_KEYS: usize = 4_096;
const GROWING_BYTES: usize = 256 << 10;
/// Keys it grows to (numbered keys), and steps of its churn.
const GROWN_TO: u16 = 3_000;
const CHURN: usize = 3_000;

/// What a sequence looks like.
#[derive(Clone, Copy)]
struct Shape {
    /// Steps per sequence.
    steps: usize,
    /// Numbered keys (to fill a large store) rather than mostly the short ones.
    numbered: bool,
    /// Values of at most 8 bytes (so that keys run out before bytes).
    tiny: bool,
}

fn when(rng: &mut Draw<'_>) -> When {
    match rng.random_range(0..20) {
        0 => When::Now,
        1..=8 => When::Soon(rng.random()),
        9..=14 => When::Later(rng.random_range(0..2_000)),
        15 => When::Far(rng.random()),
        16 | 17 => When::Past(rng.random_range(0..100)),
        18 => When::Absolute(rng.random_range(0..5_000)),
        _ => When::Max,
    }
}

fn key(rng: &mut Draw<'_>, shape: Shape) -> KeySpec {
    match rng.random_range(0..100) {
        0..=59 if shape.numbered => KeySpec::Numbered(rng.random_range(0..2_000)),
        0..=84 => KeySpec::Short(rng.random()),
        85..=94 => KeySpec::Repeat {
            byte: rng.random_range(b'a'..=b'c'),
            len: rng.random_range(0..50),
        },
        _ => KeySpec::Bytes((0..rng.random_range(0..6)).map(|_| rng.random()).collect()),
    }
}

fn value(rng: &mut Draw<'_>, shape: Shape) -> ValueSpec {
    if shape.tiny {
        return ValueSpec::Fill {
            byte: rng.random(),
            len: rng.random_range(0..8),
        };
    }
    match rng.random_range(0..20) {
        0 => ValueSpec::Empty,
        1 => ValueSpec::Bytes((0..rng.random_range(0..40)).map(|_| rng.random()).collect()),
        2..=11 => ValueSpec::Fill {
            byte: rng.random(),
            len: rng.random_range(0..64),
        },
        _ => ValueSpec::Fill {
            byte: rng.random(),
            len: rng.random_range(0..600),
        },
    }
}

fn op(rng: &mut Draw<'_>, shape: Shape) -> Op {
    let budget = |rng: &mut Draw<'_>| {
        if rng.random_bool(0.1) {
            0xff
        } else {
            rng.random_range(0..8)
        }
    };
    match rng.random_range(0..100) {
        0..=44 => Op::Set {
            key: key(rng, shape),
            value: value(rng, shape),
            ttl: match rng.random_range(0..10) {
                0..=3 => TtlSpec::Persist,
                4 | 5 => TtlSpec::Keep,
                _ => TtlSpec::At(when(rng)),
            },
        },
        45..=54 => Op::Get {
            key: key(rng, shape),
        },
        55..=58 => Op::Contains {
            key: key(rng, shape),
        },
        59..=61 => Op::Deadline {
            key: key(rng, shape),
        },
        62..=75 => Op::Del {
            key: key(rng, shape),
        },
        76..=81 => Op::SetDeadline {
            key: key(rng, shape),
            at: rng.random_bool(0.8).then(|| when(rng)),
        },
        82..=91 => Op::Expire {
            budget: budget(rng),
        },
        92..=96 => Op::WakeAtNextDeadline {
            budget: budget(rng),
        },
        97 | 98 => Op::SetLimits {
            max_key: rng.random_range(4..48),
            max_value: rng.random_range(0..600),
        },
        _ => Op::Clear,
    }
}

fn step(rng: &mut Draw<'_>) -> Step {
    match rng.random_range(0..100) {
        0..=49 => Step::Stay,
        50..=84 => Step::Forward(rng.random()),
        85..=92 => Step::ForwardMore(rng.random_range(0..3_000)),
        93..=96 => Step::Back(rng.random_range(0..50)),
        97 => Step::Jump(rng.random()),
        98 => Step::To(rng.random_range(0..10_000)),
        _ => Step::Max,
    }
}

fn input(rng: &mut Draw<'_>, shape: Shape) -> StoreInput {
    let mut steps = Vec::with_capacity(shape.steps);
    // A large store first fills with numbered keys, then churns.
    if shape.numbered {
        for n in 0..800 {
            let op = Op::Set {
                key: KeySpec::Numbered(n),
                value: value(rng, shape),
                ttl: TtlSpec::Persist,
            };
            steps.push((Step::Stay, op));
        }
    }
    while steps.len() < shape.steps {
        let step = step(rng);
        // Time far out (jumps, `u64::MAX`) is rarely undone: keep most sequences near zero.
        steps.push((step, op(rng, shape)));
    }
    StoreInput {
        seed: rng.random(),
        max_key: rng.random_range(8..48),
        max_value: 500 + rng.random_range(0..100),
        steps,
    }
}

/// The store that grows and shrinks: numbered keys arrive, most with a time to live, while
/// time moves and sweeps run (keys expire as the table grows); then keys are deleted at random,
/// swept, rewritten and read; then every key is deleted.
fn growing_input(rng: &mut Draw<'_>) -> StoreInput {
    let tiny = |rng: &mut Draw<'_>| ValueSpec::Fill {
        byte: rng.random(),
        len: rng.random_range(0..16),
    };
    let sweep = |rng: &mut Draw<'_>| Op::Expire {
        budget: if rng.random_bool(0.2) {
            0xff
        } else {
            rng.random_range(0..8)
        },
    };
    let mut steps = Vec::new();
    for n in 0..GROWN_TO {
        // Some keys expire while the table grows, most outlive the growth (about 22,000
        // ticks) so that the timers outgrow their first segment.
        let ttl = match rng.random_range(0..4) {
            0 => TtlSpec::At(When::Later(rng.random_range(0..4_000))),
            1 | 2 => TtlSpec::At(When::Later(rng.random_range(20_000..60_000))),
            _ => TtlSpec::Persist,
        };
        let set = Op::Set {
            key: KeySpec::Numbered(n),
            value: tiny(rng),
            ttl,
        };
        steps.push((Step::Forward(rng.random()), set));
        if n % 8 == 0 {
            steps.push((Step::Stay, sweep(rng)));
        }
    }
    for _ in 0..CHURN {
        let key = KeySpec::Numbered(rng.random_range(0..GROWN_TO));
        let op = match rng.random_range(0..10) {
            0..=5 => Op::Del { key },
            6 | 7 => sweep(rng),
            8 => Op::Set {
                key,
                value: tiny(rng),
                ttl: TtlSpec::At(When::Later(rng.random_range(0..4_000))),
            },
            _ => Op::Get { key },
        };
        steps.push((Step::Forward(rng.random()), op));
    }
    for n in 0..GROWN_TO {
        let del = Op::Del {
            key: KeySpec::Numbered(n),
        };
        steps.push((Step::Stay, del));
    }
    StoreInput {
        seed: rng.random(),
        max_key: 16,
        max_value: 16,
        steps,
    }
}

/// Runs `cases` sequences of one shape on `check`; returns what they exercised together.
fn run(test: &str, cases: usize, shape: Shape, check: fn(&StoreInput) -> Coverage) -> Coverage {
    let words = Cases {
        count: cases,
        // What a sequence of this shape reads (about 8 words a step), and some.
        words: shape.steps * 10,
    };
    let mut coverage = Coverage::default();
    for run in property::check(test, words, |rng| input(rng, shape), check) {
        coverage.add(&run);
    }
    coverage
}

/// The fuzz target's store: full of keys and of bytes often, every refusal exact.
#[test]
fn small_store_matches_model() {
    let mut coverage = Coverage::default();
    for (test, tiny) in [("small_store", false), ("small_store_tiny_values", true)] {
        let shape = Shape {
            steps: 200,
            numbered: false,
            tiny,
        };
        let cases = if tiny { CASES / 4 } else { CASES };
        coverage.add(&run(
            test,
            cases,
            shape,
            check_input::<FUZZ_KEYS, FUZZ_BYTES>,
        ));
    }
    println!("{coverage:?}");
    assert_eq!(coverage.scattered_refusals, 0);
    for (event, count) in [
        ("KeysFull", coverage.keys_full),
        ("BytesFull", coverage.bytes_full),
        ("write over an expired key", coverage.writes_over_expired),
        ("sweep", coverage.swept),
        ("budget cut", coverage.budget_cuts),
        // 16 keys grow in chunks of 4 entries and buckets, and one timer segment.
        ("table growth", coverage.table_growths),
        (
            "table growth with expired keys stored",
            coverage.growths_while_expiring,
        ),
        ("table shrink", coverage.table_shrinks),
    ] {
        assert!(count > 0, "no {event} in {coverage:?}");
    }
    assert!(coverage.peak_fill_pct >= 95, "{coverage:?}");
}

/// A store larger than `MAX_BYTES_MOVED`, filled and churned near full.
#[test]
fn large_store_matches_model() {
    let shape = Shape {
        steps: 3_000,
        numbered: true,
        tiny: false,
    };
    let coverage = run(
        "large_store",
        CASES.div_ceil(100),
        shape,
        check_input::<LARGE_KEYS, LARGE_BYTES>,
    );
    println!("{coverage:?}");
    assert!(coverage.bytes_full > 0, "{coverage:?}");
    assert!(coverage.peak_fill_pct >= 95, "{coverage:?}");
    // 1,024 keys grow in chunks of 64 entries and buckets.
    assert!(coverage.table_growths >= 16, "{coverage:?}");
    assert!(coverage.growths_while_expiring > 0, "{coverage:?}");
    assert!(coverage.table_shrinks > 0, "{coverage:?}");
}

/// [`check_input`] on the growing store, every step (a fuzz input stops at `MAX_FUZZ_STEPS`).
fn check_all_steps(input: &StoreInput) -> Coverage {
    let mut run = Run::<GROWING_KEYS, GROWING_BYTES>::new(
        input.seed,
        usize::from(input.max_key % 48),
        usize::from(input.max_value % 600),
    );
    for (step, op) in &input.steps {
        run.step(*step, op);
    }
    run.finish()
}

/// A store of more keys than one timer segment grows while keys expire, then shrinks as they
/// are deleted and expire: its timers move out of the last segments, its chunks of entries and
/// buckets go, and once it holds no key its table is back to about what its first key brought.
#[test]
fn growing_store_matches_model_while_it_grows_and_shrinks() {
    assert!(GROWING_KEYS > ONE_TIMER_SEGMENT && usize::from(GROWN_TO) > ONE_TIMER_SEGMENT);
    let cases = Cases {
        count: CASES.div_ceil(250),
        words: (usize::from(GROWN_TO) * 2 + CHURN) * 10,
    };
    let mut coverage = Coverage::default();
    for run in property::check("growing_store", cases, growing_input, check_all_steps) {
        coverage.add(&run);
    }
    println!("{coverage:?}");
    for (event, count) in [
        ("table growth", coverage.table_growths),
        (
            "table growth with expired keys stored",
            coverage.growths_while_expiring,
        ),
        ("table shrink", coverage.table_shrinks),
        (
            "table shrink with expired keys stored",
            coverage.shrinks_while_expiring,
        ),
        ("emptied table", coverage.emptied_tables),
        ("sweep", coverage.swept),
        ("budget cut", coverage.budget_cuts),
    ] {
        assert!(count > 0, "no {event} in {coverage:?}");
    }
}

/// The `store_shrink` fuzz target's store (1,100 keys with deadlines first, past one timer
/// segment), under the large store's mix of ops on numbered keys but `FLUSHALL`: it shrinks
/// (its timers move out of the second segment) as keys are deleted and swept.
#[test]
fn grown_store_matches_model_while_it_shrinks() {
    let shape = Shape {
        steps: MAX_FUZZ_STEPS,
        numbered: true,
        tiny: true,
    };
    let generate = |rng: &mut Draw<'_>| {
        let mut steps = Vec::with_capacity(shape.steps);
        while steps.len() < shape.steps {
            let op = match op(rng, shape) {
                Op::Clear => Op::Del {
                    key: KeySpec::Numbered(rng.random_range(0..1_100)),
                },
                op => op,
            };
            steps.push((step(rng), op));
        }
        StoreInput {
            seed: rng.random(),
            max_key: 16,
            max_value: 64,
            steps,
        }
    };
    let cases = Cases {
        count: CASES.div_ceil(250),
        words: shape.steps * 10,
    };
    let mut coverage = Coverage::default();
    for run in property::check("grown_store", cases, generate, check_grown_store_ops) {
        coverage.add(&run);
    }
    println!("{coverage:?}");
    assert!(coverage.table_shrinks > 0, "{coverage:?}");
    assert!(
        coverage.swept > 0 && coverage.budget_cuts > 0,
        "{coverage:?}"
    );
}
