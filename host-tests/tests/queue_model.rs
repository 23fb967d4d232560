//! Property tests: every timer queue against the `BTreeMap` reference model, through the shared
//! checker [`host_tests::queue_check`] (the `timer_queues` fuzz target drives the same one).
//!
//! Each test runs seeded random sequences of insert (one or a burst), cancel, reschedule, touch,
//! move between lists, edit, expire with random budgets and time jumps (small, huge, to
//! `u64::MAX`, and backwards), `pop_expired`, `pop_expired_in`, `pop_any`, wake-ups at
//! `next_deadline()`, and partial or full drains, with queue sizes from 4 to 100 000. The checker
//! says what must hold after every step; this driver only picks the ops, and fails a test whose
//! sequences together never produced an interesting event (a refusal by a full queue, a budget
//! cut, a tie, a backwards expiry, a fire near `u64::MAX`, a probe of a reused slot, an early wake
//! of the wheel, a move between lists, a `pop_expired_in` from a later list).
//!
//! The runner is [`host_tests::property`] (proptest): the small-capacity tests run
//! [`DEFAULT_CASES`] sequences and the others fewer, all scaled by `PROPERTY_SCALE` and chosen
//! by `PROPERTY_SEED`; a failure is shrunk to its smallest sequence.

use host_tests::big_stack;
use host_tests::property::{self, Cases, Draw};
use std::ops::RangeInclusive;

use host_tests::queue_check::{
    BlocksWheel, Budget, Coverage, Finish, Op, Payload, QueueUnderTest, Run, SliceHeap, SliceLists,
    SliceWheel, Time, When,
};
use rand::Rng;
use timer_core::{Tick, TimeoutList, TimeoutLists, TimerHeap, TimerWheel};

/// Sequences per small-capacity test.
const DEFAULT_CASES: usize = 300;

/// Steps after which the sequences of one test must have covered every interesting event.
const COVERAGE_STEPS: usize = 20_000;

/// How a sequence picks new deadlines.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Deadlines {
    /// Anything: near and far future, the past, ties, near `u64::MAX`.
    Any,
    /// Mostly `now + the list's fixed timeout`, sometimes anything.
    MostlyTimeouts,
}

/// How many sequences, how long, and what kind of deadlines.
#[derive(Clone, Debug)]
struct Plan {
    cases: usize,
    steps: RangeInclusive<usize>,
    deadlines: Deadlines,
}

fn plan(cases: usize, steps: RangeInclusive<usize>) -> Plan {
    Plan {
        cases,
        steps,
        deadlines: Deadlines::Any,
    }
}

fn timeouts_plan(cases: usize, steps: RangeInclusive<usize>) -> Plan {
    Plan {
        deadlines: Deadlines::MostlyTimeouts,
        ..plan(cases, steps)
    }
}

/// [`DEFAULT_CASES`]` / divisor`, at least one.
fn cases(divisor: usize) -> usize {
    DEFAULT_CASES.div_ceil(divisor).max(1)
}

/// How a failure message names its test (the runner's message adds how to replay it).
fn label(test: &str) -> String {
    test.to_string()
}

/// Draws ops for one sequence.
struct Generator<R> {
    rng: R,
    lists: usize,
    has_lists: bool,
    /// Extra weight (out of 100 + this) for inserts: low keeps the queue sparse, high fills it.
    insert_weight: u32,
    /// Percent of new deadlines that are `now + timeouts[list]`.
    timeout_percent: u32,
}

impl<R: Rng> Generator<R> {
    fn new<Q: QueueUnderTest>(mut rng: R, deadlines: Deadlines) -> Self {
        let insert_weight = rng.random_range(0..=80);
        let timeout_percent = match deadlines {
            Deadlines::Any => 0,
            Deadlines::MostlyTimeouts => rng.random_range(70..=95),
        };
        Self {
            rng,
            lists: Q::LISTS,
            has_lists: Q::HAS_LISTS,
            insert_weight,
            timeout_percent,
        }
    }

    /// A fixed timeout per list.
    fn timeouts(&mut self) -> Vec<Tick> {
        (0..self.lists)
            .map(|_| match self.rng.random_range(0..6) {
                0 => 0,
                1 => self.rng.random_range(1..64),
                2 => 1_000,
                3 => 30_000,
                4 => self.rng.random_range(1..1 << 32),
                _ => self.rng.random_range(1..100_000),
            })
            .collect()
    }

    /// Where time starts: mostly 0, sometimes far on or at the very end.
    fn start(&mut self) -> Tick {
        match self.rng.random_range(0..20) {
            0..=9 => 0,
            10..=13 => self.rng.random_range(0..100_000),
            14..=17 => self.rng.random::<u64>() >> self.rng.random_range(0..64),
            18 => u64::MAX - self.rng.random_range(0..1 << 20),
            _ => u64::MAX,
        }
    }

    fn list(&mut self) -> u8 {
        self.rng.random_range(0..self.lists) as u8
    }

    fn pick(&mut self) -> u32 {
        self.rng.random()
    }

    fn when(&mut self) -> When {
        if self.rng.random_range(0..100) < self.timeout_percent {
            return When::Timeout;
        }
        match self.rng.random_range(0..100) {
            0..=19 => When::Soon(self.rng.random_range(0..64)),
            20..=34 => When::Later(self.rng.random_range(0..4_096)),
            35..=44 => When::Far(self.rng.random_range(0..1 << 24)),
            45..=49 => When::VeryFar {
                bits: self.rng.random_range(0..1 << 44),
                shift: 0,
            },
            50..=54 => When::Absolute(self.rng.random()),
            55..=59 => When::NearMax(self.rng.random_range(0..64)),
            60..=62 => When::Max,
            63..=72 => When::Past(self.rng.random_range(0..5_000)),
            73..=79 => When::Now,
            80..=91 => When::SameAs(self.pick()),
            _ => When::NextTo {
                pick: self.pick(),
                after: self.rng.random(),
            },
        }
    }

    /// The `now` of the next expiry: forward a little or a lot, to a deadline, or backwards.
    fn time(&mut self) -> Time {
        match self.rng.random_range(0..100) {
            0..=24 => Time::Forward(self.rng.random_range(0..64)),
            25..=39 => Time::ForwardMore(self.rng.random_range(0..5_000)),
            40..=46 => Time::Jump {
                bits: self.rng.random_range(1 << 20..1 << 50),
                shift: 0,
            },
            47 | 48 => Time::NearMax(self.rng.random_range(0..2)),
            49..=57 => Time::Next,
            58..=62 => Time::JustBeforeNext,
            63..=69 => Time::DeadlineOf(self.pick()),
            70..=77 => Time::BackTo(self.rng.random()),
            78..=84 => Time::Back(self.rng.random_range(0..100)),
            _ => Time::Same,
        }
    }

    fn budget(&mut self) -> Budget {
        match self.rng.random_range(0..100) {
            0..=34 => Budget::Unlimited,
            35..=44 => Budget::Zero,
            45..=64 => Budget::One,
            65..=89 => Budget::Few(self.rng.random_range(2..=8)),
            _ => Budget::Few(self.rng.random_range(1..=64)),
        }
    }

    fn insert(&mut self) -> Op {
        let list = self.list();
        Op::Insert {
            list,
            when: self.when(),
            via_trait: self.rng.random(),
        }
    }

    /// Reschedule, touch, or move: sometimes to the same deadline (it must still move behind
    /// the other timers due then), sometimes to another list.
    fn move_op(&mut self) -> Op {
        let pick = self.pick();
        let (list, when) = match self.rng.random_range(0..10) {
            0 | 1 => (None, When::Unchanged),
            _ => {
                let list = (self.has_lists && self.rng.random_bool(0.4)).then(|| self.list());
                (list, self.when())
            }
        };
        if list.is_some() || (self.has_lists && self.rng.random_bool(0.2)) {
            Op::MoveTo { pick, list, when }
        } else if self.rng.random() {
            Op::Touch { pick, when }
        } else {
            Op::Reschedule { pick, when }
        }
    }

    /// Many inserts in a row, often with one deadline (ties); sometimes fills the queue and
    /// goes a little past it.
    fn burst(&mut self, pending: usize, capacity: usize) -> Vec<Op> {
        let count = if self.rng.random_ratio(1, 16) {
            capacity - pending + self.rng.random_range(1..=3)
        } else {
            self.rng.random_range(1..=capacity.min(64) + 2)
        };
        if self.rng.random_bool(0.3) {
            let list = self.list();
            let when = self.when();
            // `Op::Burst` inserts `count % (capacity + 4) + 1`.
            let count = u32::try_from(count - 1).expect("a burst below 2^32");
            return vec![Op::Burst {
                list,
                count,
                when,
                shared: true,
            }];
        }
        let list = self.list();
        (0..count)
            .map(|_| Op::Insert {
                list,
                when: self.when(),
                via_trait: self.rng.random(),
            })
            .collect()
    }

    /// The next step's ops (more than one for a burst).
    fn ops(&mut self, pending: usize, capacity: usize) -> Vec<Op> {
        let roll = self.rng.random_range(0..100 + self.insert_weight);
        let op = match roll {
            0..=2 => return self.burst(pending, capacity),
            3..=16 => Op::Cancel { pick: self.pick() },
            17..=32 => self.move_op(),
            33..=36 => Op::Edit { pick: self.pick() },
            37..=61 => Op::Expire {
                time: self.time(),
                budget: self.budget(),
            },
            62..=66 => Op::PopExpired { time: self.time() },
            67..=69 => Op::PopExpiredIn {
                list: self.list(),
                time: self.time(),
            },
            70..=73 => Op::HasExpired { time: self.time() },
            74..=81 => Op::WakeAtNextDeadline,
            82 | 83 if pending > 0 => Op::Drain {
                take: self.rng.random_range(1..=pending) as u32,
            },
            82 | 83 => Op::DrainAll,
            84 => Op::PopAny,
            85 if self.rng.random_ratio(1, 3) => Op::DrainAll,
            _ => self.insert(),
        };
        vec![op]
    }

    fn finish(&mut self) -> Finish {
        if self.rng.random() {
            Finish::ExpireAll
        } else {
            Finish::DrainAll
        }
    }
}

/// Runs `plan.cases` random sequences, each on a fresh queue of type `Q`, then checks that
/// together they covered every interesting event (unless told to run too few steps for that).
fn check_against_model<Q: QueueUnderTest>(test: &'static str, plan: &Plan) {
    let cases = Cases {
        count: plan.cases,
        // What the longest sequence reads (up to some 16 words a step, bursts included).
        words: plan.steps.end() * 18,
    };
    let runs = property::run(test, cases, |draw| {
        let mut queue = Q::fresh();
        let mut generator = Generator::new::<Q>(draw, plan.deadlines);
        let timeouts = generator.timeouts();
        let start = generator.start();
        let mut run = Run::new(&mut queue, start, &timeouts, label(test));
        let steps = generator.rng.random_range(plan.steps.clone());
        for _ in 0..steps {
            // A burst's inserts count as one step, checked once.
            for op in generator.ops(run.pending(), run.capacity()) {
                run.apply(op);
            }
            run.check();
        }
        (steps, run.finish(generator.finish()))
    });
    let mut coverage = Coverage::default();
    let mut total_steps = 0;
    for (steps, run) in &runs {
        total_steps += steps;
        coverage.add(run);
    }
    eprintln!(
        "{test}: {} sequences, {total_steps} steps, {coverage:?}",
        runs.len()
    );
    if total_steps >= COVERAGE_STEPS {
        let missing = coverage.missing::<Q>();
        assert!(
            missing.is_empty(),
            "{test}: the random sequences never produced {missing:?}: {coverage:?}"
        );
    }
}

// ---- every queue over slots the caller provides (`with_storage`, a `Vec` sized at run time) ----

#[test]
fn slice_wheel_of_8_random_operations_with_frequent_full_match_model() {
    check_against_model::<SliceWheel<8>>(
        "slice_wheel_of_8_random_operations_with_frequent_full_match_model",
        &plan(cases(1), 50..=400),
    );
}

/// The blocks layout (a wheel of 2^19 timers and more) at the smallest capacity it has room for:
/// long sequences, so that stale cells pile up and the chains are compacted.
#[test]
fn blocks_wheel_of_9216_long_random_sequences_match_model() {
    check_against_model::<BlocksWheel<9_216>>(
        "blocks_wheel_of_9216_long_random_sequences_match_model",
        &plan(cases(64), 2_000..=4_000),
    );
}

#[test]
fn slice_wheel_of_64_random_operations_match_model() {
    check_against_model::<SliceWheel<64>>(
        "slice_wheel_of_64_random_operations_match_model",
        &timeouts_plan(cases(1), 100..=800),
    );
}

#[test]
fn slice_heaps_of_64_random_operations_match_model() {
    check_against_model::<SliceHeap<64, 2>>(
        "slice_heaps_of_64_random_operations_match_model",
        &plan(cases(1), 100..=800),
    );
    check_against_model::<SliceHeap<64, 4>>(
        "slice_heaps_of_64_random_operations_match_model",
        &plan(cases(1), 100..=800),
    );
}

#[test]
fn slice_timeout_lists_random_operations_match_model() {
    check_against_model::<SliceLists<64, 1>>(
        "slice_timeout_lists_random_operations_match_model",
        &timeouts_plan(cases(1), 100..=800),
    );
    check_against_model::<SliceLists<16, 3>>(
        "slice_timeout_lists_random_operations_match_model",
        &plan(cases(1), 100..=800),
    );
}

// ---- the wheel ----

#[test]
fn wheel_of_8_random_operations_with_frequent_full_match_model() {
    check_against_model::<TimerWheel<Payload, 8>>(
        "wheel_of_8_random_operations_with_frequent_full_match_model",
        &plan(cases(1), 50..=400),
    );
}

#[test]
fn wheel_of_64_random_operations_match_model() {
    check_against_model::<TimerWheel<Payload, 64>>(
        "wheel_of_64_random_operations_match_model",
        &plan(cases(1), 100..=800),
    );
}

#[test]
fn wheel_of_4096_long_random_sequences_match_model() {
    check_against_model::<TimerWheel<Payload, 4096>>(
        "wheel_of_4096_long_random_sequences_match_model",
        &plan(cases(15), 1_000..=4_000),
    );
}

#[test]
fn wheel_of_64_with_timeout_deadlines_matches_model() {
    check_against_model::<TimerWheel<Payload, 64>>(
        "wheel_of_64_with_timeout_deadlines_matches_model",
        &timeouts_plan(cases(2), 100..=800),
    );
}

/// Waking at each `next_deadline()` reaches a lone timer anywhere in the `u64` range with at
/// most one early wake-up per level, each later than the last, and fires it on time (the
/// checker's wake-up op asserts each of these).
#[test]
fn wheel_with_one_timer_reaches_it_in_at_most_one_early_wake_per_level() {
    const TEST: &str = "wheel_with_one_timer_reaches_it_in_at_most_one_early_wake_per_level";
    let cases = Cases {
        count: cases(1) * 10,
        words: 16,
    };
    let early_wakes: usize = property::run(TEST, cases, |rng: &mut Draw<'_>| {
        let start = rng.random::<u64>() >> rng.random_range(0..64);
        let distance = match rng.random_range(0..3) {
            0 => rng.random::<u64>() >> rng.random_range(0..64),
            1 => rng.random_range(1..1 << 20),
            _ => rng.random(),
        };
        let deadline = start.saturating_add(distance.max(1));
        if deadline == start {
            return 0; // start was u64::MAX: nothing lies ahead
        }
        let mut wheel = TimerWheel::<Payload, 4>::new();
        let mut run = Run::new(&mut wheel, start, &[], label(TEST));
        run.step(Op::Expire {
            time: Time::Same,
            budget: Budget::Unlimited,
        });
        run.step(Op::Insert {
            list: 0,
            when: When::Absolute(deadline),
            via_trait: rng.random(),
        });
        run.step(Op::WakeAtNextDeadline);
        assert_eq!(run.pending(), 0, "start {start}: the timer did not fire");
        assert_eq!(run.now(), deadline, "start {start}: fired at another time");
        run.finish(Finish::ExpireAll).early_wakes
    })
    .into_iter()
    .sum();
    assert!(early_wakes > 0, "{TEST}: no early wake-up at all");
}

// ---- the heap ----

#[test]
fn binary_heap_of_8_random_operations_with_frequent_full_match_model() {
    check_against_model::<TimerHeap<Payload, 8, 2>>(
        "binary_heap_of_8_random_operations_with_frequent_full_match_model",
        &plan(cases(1), 50..=400),
    );
}

#[test]
fn binary_heap_of_64_random_operations_match_model() {
    check_against_model::<TimerHeap<Payload, 64, 2>>(
        "binary_heap_of_64_random_operations_match_model",
        &plan(cases(1), 100..=800),
    );
}

#[test]
fn binary_heap_of_4096_long_random_sequences_match_model() {
    check_against_model::<TimerHeap<Payload, 4096, 2>>(
        "binary_heap_of_4096_long_random_sequences_match_model",
        &plan(cases(15), 1_000..=4_000),
    );
}

#[test]
fn quaternary_heap_of_8_random_operations_with_frequent_full_match_model() {
    check_against_model::<TimerHeap<Payload, 8, 4>>(
        "quaternary_heap_of_8_random_operations_with_frequent_full_match_model",
        &plan(cases(1), 50..=400),
    );
}

#[test]
fn quaternary_heap_of_64_random_operations_match_model() {
    check_against_model::<TimerHeap<Payload, 64>>(
        "quaternary_heap_of_64_random_operations_match_model",
        &plan(cases(1), 100..=800),
    );
}

#[test]
fn quaternary_heap_of_4096_long_random_sequences_match_model() {
    check_against_model::<TimerHeap<Payload, 4096>>(
        "quaternary_heap_of_4096_long_random_sequences_match_model",
        &plan(cases(15), 1_000..=4_000),
    );
}

// ---- timeout lists ----

#[test]
fn timeout_list_of_8_mostly_monotone_deadlines_match_model() {
    check_against_model::<TimeoutList<Payload, 8>>(
        "timeout_list_of_8_mostly_monotone_deadlines_match_model",
        &timeouts_plan(cases(1), 50..=400),
    );
}

#[test]
fn timeout_list_of_64_mostly_monotone_deadlines_match_model() {
    check_against_model::<TimeoutList<Payload, 64>>(
        "timeout_list_of_64_mostly_monotone_deadlines_match_model",
        &timeouts_plan(cases(1), 100..=800),
    );
}

#[test]
fn timeout_list_of_64_arbitrary_deadlines_match_model() {
    check_against_model::<TimeoutList<Payload, 64>>(
        "timeout_list_of_64_arbitrary_deadlines_match_model",
        &plan(cases(2), 100..=800),
    );
}

#[test]
fn timeout_list_of_1024_long_mostly_monotone_sequences_match_model() {
    check_against_model::<TimeoutList<Payload, 1024>>(
        "timeout_list_of_1024_long_mostly_monotone_sequences_match_model",
        &timeouts_plan(cases(15), 1_000..=4_000),
    );
}

/// Three lists sharing 16 slots: `insert_into`, `move_to`, `touch` and `pop_expired_in` across
/// lists, with equal deadlines on different lists firing in list order.
#[test]
fn three_timeout_lists_of_16_moves_between_lists_match_model() {
    check_against_model::<TimeoutLists<Payload, 16, 3>>(
        "three_timeout_lists_of_16_moves_between_lists_match_model",
        &timeouts_plan(cases(1), 50..=500),
    );
}

#[test]
fn three_timeout_lists_of_256_moves_between_lists_match_model() {
    check_against_model::<TimeoutLists<Payload, 256, 3>>(
        "three_timeout_lists_of_256_moves_between_lists_match_model",
        &timeouts_plan(cases(4), 500..=2_000),
    );
}

// ---- 100 000 timers, on a big stack ----

/// Fills a queue of 100 000 to the brim (ties, far and near deadlines), checks that it refuses
/// more, then expires it in budgeted sweeps with reschedules and cancels in between.
fn mass_expiry_in_budgeted_sweeps<Q: QueueUnderTest>(test: &'static str) {
    let cases = Cases {
        count: 1,
        words: 1 << 19,
    };
    property::run(test, cases, |draw| mass_expiry::<Q>(test, draw));
}

/// One run of [`mass_expiry_in_budgeted_sweeps`].
fn mass_expiry<Q: QueueUnderTest>(test: &'static str, draw: &mut Draw<'_>) {
    let mut queue = Q::fresh();
    let mut generator = Generator::new::<Q>(draw, Deadlines::Any);
    let mut run = Run::new(&mut queue, 1_000, &[], label(test));
    let capacity = run.capacity();
    while run.pending() < capacity {
        let when = match generator.rng.random_range(0..4) {
            0 => When::Absolute(5_000), // a mass expiry at one tick
            1 => When::Later(generator.rng.random()),
            2 => When::VeryFar {
                bits: generator.rng.random_range(0..1 << 40),
                shift: 0,
            },
            _ => generator.when(),
        };
        // Checking everything after each of 100 000 inserts would be quadratic: the insert
        // checks its own timer, the whole queue is checked once full.
        run.apply(Op::Insert {
            list: 0,
            when,
            via_trait: generator.rng.random(),
        });
    }
    run.check();
    for _ in 0..10 {
        let op = generator.insert();
        run.step(op);
        assert_eq!(run.pending(), capacity, "a full queue took one more");
    }
    while run.pending() > 0 {
        let op = match generator.rng.random_range(0..10) {
            0 => Op::Cancel {
                pick: generator.pick(),
            },
            1 => generator.move_op(),
            2 => generator.insert(),
            3 => Op::WakeAtNextDeadline,
            _ => Op::Expire {
                time: if generator.rng.random_ratio(1, 50) {
                    Time::Max
                } else {
                    Time::ForwardMore(generator.rng.random_range(0..1 << 12))
                },
                budget: Budget::Many(generator.rng.random_range(1..=5_000)),
            },
        };
        run.step(op);
    }
    let coverage = run.finish(generator.finish());
    eprintln!("{test}: {coverage:?}");
}

#[test]
fn wheel_of_100k_filled_then_expired_in_budgeted_sweeps_matches_model() {
    big_stack(|| {
        mass_expiry_in_budgeted_sweeps::<TimerWheel<Payload, 100_000>>(
            "wheel_of_100k_filled_then_expired_in_budgeted_sweeps_matches_model",
        );
    });
}

#[test]
fn heap_of_100k_filled_then_expired_in_budgeted_sweeps_matches_model() {
    big_stack(|| {
        mass_expiry_in_budgeted_sweeps::<TimerHeap<Payload, 100_000>>(
            "heap_of_100k_filled_then_expired_in_budgeted_sweeps_matches_model",
        );
    });
}
