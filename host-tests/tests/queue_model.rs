//! Property tests: every timer queue against the `BTreeMap` reference model
//! ([`host_tests::model::ReferenceQueue`]).
//!
//! Each test runs seeded random sequences of insert, cancel, reschedule (touch, move between
//! lists), edit, expire with random budgets and time jumps (small, huge, to `u64::MAX`, and
//! backwards), pop, wake-ups at `next_deadline()`, and partial or full drains. After every step
//! the queue must agree with the model on length, fullness, the next deadline, and (spot-checked)
//! every pending timer; a pool of dead handles must stay refused; every value leaves exactly once.
//!
//! - `TIMER_MODEL_CASES=n` sets the number of sequences of the small-capacity tests (default
//!   [`DEFAULT_CASES`]); the others scale from it.
//! - `TIMER_MODEL_SEED=0x..` replays one sequence: every failure message prints its seed.

use std::collections::VecDeque;
use std::ops::RangeInclusive;

use host_tests::model::{ReferenceQueue, Removed};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use timer_core::{
    wheel, Expired, Full, StaleTimer, Tick, TimeoutList, TimeoutLists, TimerHeap, TimerId,
    TimerQueue, TimerWheel,
};

/// Every case seed derives from this and the test's name.
const BASE_SEED: u64 = 0x7131_e5ee_d0c0_ffee;

/// Sequences per small-capacity test when `TIMER_MODEL_CASES` is not set.
const DEFAULT_CASES: usize = 300;

/// Dead handles kept to probe; older ones are replaced at random.
const DEAD_POOL: usize = 128;

/// Operations remembered for a failure message.
const HISTORY: usize = 12;

/// The value stored with each timer: `serial` is unique per insert attempt, `touches` counts
/// edits through `get_mut`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Payload {
    serial: u32,
    touches: u32,
}

/// What happened to each value offered to the queue, indexed by serial.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fate {
    /// Accepted and not yet out.
    Pending,
    /// Fired, cancelled, or drained.
    Left,
    /// Handed back by a full queue.
    Refused,
}

/// How exact `next_deadline()` must be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum NextDeadline {
    /// Equal to the earliest pending deadline.
    Exact,
    /// At most the earliest pending deadline (the start of the wheel slot holding it).
    NoLater,
}

/// How a sequence picks new deadlines.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Deadlines {
    /// Anything: near and far future, the past, ties, near `u64::MAX`.
    Any,
    /// Mostly `now + the list's fixed timeout`, sometimes anything.
    MostlyTimeouts,
}

/// One step, kept for failure messages.
#[derive(Clone, Copy, Debug)]
#[allow(dead_code, reason = "the fields are only read through `Debug`")]
enum Op {
    Insert {
        list: usize,
        deadline: Tick,
    },
    Cancel(TimerId),
    Reschedule {
        id: TimerId,
        deadline: Tick,
    },
    Touch {
        id: TimerId,
        deadline: Tick,
    },
    MoveTo {
        id: TimerId,
        list: usize,
        deadline: Tick,
    },
    Edit(TimerId),
    Expire {
        now: Tick,
        budget: usize,
    },
    PopExpired {
        now: Tick,
    },
    HasExpired {
        now: Tick,
    },
    WakeAtNextDeadline,
    Drain {
        take: usize,
    },
}

/// The queue API under test, with the list operations of [`TimeoutLists`] where there are any.
trait QueueUnderTest: TimerQueue<Payload> + Default {
    const NEXT_DEADLINE: NextDeadline;
    /// Whether `insert_into`, `move_to`, `touch`, `list_of` and `next_deadline_in` exist.
    const HAS_LISTS: bool = false;
    const LISTS: usize = 1;

    fn insert_on(
        &mut self,
        list: usize,
        deadline: Tick,
        value: Payload,
    ) -> Result<TimerId, Full<Payload>> {
        assert_eq!(list, 0);
        self.insert(deadline, value)
    }

    fn move_on(&mut self, id: TimerId, list: usize, deadline: Tick) -> Result<(), StaleTimer> {
        assert_eq!(list, 0);
        self.reschedule(id, deadline)
    }

    fn touch_timer(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer> {
        self.reschedule(id, deadline)
    }

    fn list_of_timer(&self, _id: TimerId) -> Option<usize> {
        None
    }

    fn next_deadline_on(&self, _list: usize) -> Option<Tick> {
        None
    }
}

impl<const N: usize> QueueUnderTest for TimerWheel<Payload, N> {
    const NEXT_DEADLINE: NextDeadline = NextDeadline::NoLater;
}

impl<const N: usize, const D: usize> QueueUnderTest for TimerHeap<Payload, N, D> {
    const NEXT_DEADLINE: NextDeadline = NextDeadline::Exact;
}

impl<const N: usize, const L: usize> QueueUnderTest for TimeoutLists<Payload, N, L> {
    const NEXT_DEADLINE: NextDeadline = NextDeadline::Exact;
    const HAS_LISTS: bool = true;
    const LISTS: usize = L;

    fn insert_on(
        &mut self,
        list: usize,
        deadline: Tick,
        value: Payload,
    ) -> Result<TimerId, Full<Payload>> {
        self.insert_into(list, deadline, value)
    }

    fn move_on(&mut self, id: TimerId, list: usize, deadline: Tick) -> Result<(), StaleTimer> {
        self.move_to(id, list, deadline)
    }

    fn touch_timer(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer> {
        self.touch(id, deadline)
    }

    fn list_of_timer(&self, id: TimerId) -> Option<usize> {
        self.list_of(id)
    }

    fn next_deadline_on(&self, list: usize) -> Option<Tick> {
        self.next_deadline_in(list)
    }
}

/// Events the random sequences must have produced, so that a generator that drifts into
/// exercising nothing fails instead of passing quietly.
#[derive(Clone, Copy, Default, Debug)]
struct Coverage {
    /// Inserts a full queue handed back.
    full_refusals: usize,
    /// Expiries cut short by their budget (`more_due` set).
    budget_cuts: usize,
    /// Timers fired right after one with the same deadline.
    tied_fires: usize,
    /// ... of which on a different list.
    tied_fires_across_lists: usize,
    /// Expiries with `now` earlier than the one before.
    backwards_expiries: usize,
    /// Timers fired with a deadline within 64 ticks of `u64::MAX`.
    fires_near_max: usize,
    /// Wake-ups at `next_deadline()` that fired nothing (wheel only).
    early_wakes: usize,
    /// Dead handles probed while another timer held their slot.
    probes_of_reused_slots: usize,
    /// Timers moved to another list.
    moves_between_lists: usize,
}

impl Coverage {
    fn add(&mut self, other: &Self) {
        self.full_refusals += other.full_refusals;
        self.budget_cuts += other.budget_cuts;
        self.tied_fires += other.tied_fires;
        self.tied_fires_across_lists += other.tied_fires_across_lists;
        self.backwards_expiries += other.backwards_expiries;
        self.fires_near_max += other.fires_near_max;
        self.early_wakes += other.early_wakes;
        self.probes_of_reused_slots += other.probes_of_reused_slots;
        self.moves_between_lists += other.moves_between_lists;
    }

    /// Panics unless every event this kind of queue can produce happened.
    fn require<Q: QueueUnderTest>(&self, test: &str) {
        let mut missing = Vec::new();
        let mut need = |count: usize, what: &'static str| {
            if count == 0 {
                missing.push(what);
            }
        };
        need(self.full_refusals, "full_refusals");
        need(self.budget_cuts, "budget_cuts");
        need(self.tied_fires, "tied_fires");
        need(self.backwards_expiries, "backwards_expiries");
        need(self.fires_near_max, "fires_near_max");
        need(self.probes_of_reused_slots, "probes_of_reused_slots");
        if Q::NEXT_DEADLINE == NextDeadline::NoLater {
            need(self.early_wakes, "early_wakes");
        }
        if Q::LISTS > 1 {
            need(self.moves_between_lists, "moves_between_lists");
            need(self.tied_fires_across_lists, "tied_fires_across_lists");
        }
        assert!(
            missing.is_empty(),
            "{test}: the random sequences never produced {missing:?}: {self:?}"
        );
    }
}

/// How many sequences, how long, and what kind of deadlines.
#[derive(Clone, Debug)]
struct Plan {
    cases: usize,
    steps: RangeInclusive<usize>,
    deadlines: Deadlines,
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let text = text.trim().replace('_', "");
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={text:?} is not a number")))
}

/// Sequences per small-capacity test: `TIMER_MODEL_CASES` or [`DEFAULT_CASES`].
fn base_cases() -> usize {
    env_number("TIMER_MODEL_CASES").map_or(DEFAULT_CASES, |n| n as usize)
}

/// `base_cases() / divisor`, at least one.
fn cases(divisor: usize) -> usize {
    base_cases().div_ceil(divisor).max(1)
}

/// SplitMix64's finaliser: spreads nearby inputs over the whole `u64` range.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seeds of `test`'s sequences, or just `TIMER_MODEL_SEED` when it is set.
fn seeds(test: &str, cases: usize) -> Vec<u64> {
    if let Some(seed) = env_number("TIMER_MODEL_SEED") {
        return vec![seed];
    }
    let name = test.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    (0..cases as u64)
        .map(|case| mix(BASE_SEED ^ mix(name ^ case)))
        .collect()
}

/// Steps after which the sequences of one test must have covered every interesting event.
const COVERAGE_STEPS: usize = 20_000;

/// Runs `plan.cases` random sequences, each on a fresh queue of type `Q`, then checks that
/// together they covered every interesting event (unless replaying one seed, or told to run
/// too few steps for that).
fn check_against_model<Q: QueueUnderTest>(test: &'static str, plan: &Plan) {
    let seeds = seeds(test, plan.cases);
    let mut coverage = Coverage::default();
    let mut total_steps = 0;
    for &seed in &seeds {
        let mut queue = Q::default();
        let mut run = Run::new(test, seed, &mut queue, plan.deadlines);
        let steps = run.rng.random_range(plan.steps.clone());
        for _ in 0..steps {
            run.random_step();
            run.check_consistency();
        }
        coverage.add(&run.finish());
        total_steps += steps;
    }
    eprintln!(
        "{test}: {} sequences, {total_steps} steps, {coverage:?}",
        seeds.len()
    );
    if env_number("TIMER_MODEL_SEED").is_none() && total_steps >= COVERAGE_STEPS {
        coverage.require::<Q>(test);
    }
}

/// One random sequence: the queue, the model, and everything needed to compare them.
struct Run<'q, Q> {
    test: &'static str,
    seed: u64,
    queue: &'q mut Q,
    model: ReferenceQueue<Payload>,
    rng: SmallRng,
    step: usize,
    now: Tick,
    /// Extra weight (out of 100 + this) for inserts: low keeps the queue sparse, high fills it.
    insert_weight: u32,
    /// Percent of new deadlines that are `now + timeouts[list]`.
    timeout_percent: u32,
    timeouts: Vec<Tick>,
    fates: Vec<Fate>,
    dead: Vec<TimerId>,
    history: VecDeque<Op>,
    coverage: Coverage,
}

impl<'q, Q: QueueUnderTest> Run<'q, Q> {
    fn new(test: &'static str, seed: u64, queue: &'q mut Q, deadlines: Deadlines) -> Self {
        assert!(queue.is_empty(), "a run starts on an empty queue");
        let mut rng = SmallRng::seed_from_u64(seed);
        let insert_weight = rng.random_range(0..=80);
        let timeout_percent = match deadlines {
            Deadlines::Any => 0,
            Deadlines::MostlyTimeouts => rng.random_range(70..=95),
        };
        let timeouts = (0..Q::LISTS)
            .map(|_| match rng.random_range(0..6) {
                0 => 0,
                1 => rng.random_range(1..64),
                2 => 1_000,
                3 => 30_000,
                4 => rng.random_range(1..1 << 32),
                _ => rng.random_range(1..100_000),
            })
            .collect();
        let now = match rng.random_range(0..20) {
            0..=9 => 0,
            10..=13 => rng.random_range(0..100_000),
            14..=17 => rng.random::<u64>() >> rng.random_range(0..64),
            18 => u64::MAX - rng.random_range(0..1 << 20),
            _ => u64::MAX,
        };
        Self {
            test,
            seed,
            queue,
            model: ReferenceQueue::new(),
            rng,
            step: 0,
            now,
            insert_weight,
            timeout_percent,
            timeouts,
            fates: Vec::new(),
            dead: Vec::new(),
            history: VecDeque::with_capacity(HISTORY),
            coverage: Coverage::default(),
        }
    }

    /// Where a failure happened and how to replay it.
    fn ctx(&self) -> String {
        format!(
            "\n  seed {:#018x}, step {}, now {}, model len {}\n  last ops (oldest first): {:?}\n  \
             replay: TIMER_MODEL_SEED={:#x} cargo test -p host-tests --test queue_model {}",
            self.seed,
            self.step,
            self.now,
            self.model.len(),
            self.history,
            self.seed,
            self.test,
        )
    }

    fn record(&mut self, op: Op) {
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(op);
    }

    fn capacity(&self) -> usize {
        self.queue.capacity()
    }

    fn random_step(&mut self) {
        self.step += 1;
        let roll = self.rng.random_range(0..100 + self.insert_weight);
        match roll {
            0..=2 => self.insert_burst(),
            3..=16 => self.cancel_live(),
            17..=32 => self.move_live(),
            33..=36 => self.edit_live(),
            37..=61 => {
                let now = self.next_now();
                let budget = self.budget();
                self.expire(now, budget);
            }
            62..=69 => self.pop_expired(),
            70..=73 => self.has_expired(),
            74..=81 => self.wake_at_next_deadline(),
            82..=84 => self.drain_some(),
            85 if self.rng.random_ratio(1, 3) => self.drain_all(),
            _ => {
                let list = self.random_list();
                let deadline = self.new_deadline(list);
                self.insert(list, deadline);
            }
        }
    }

    // ---- random choices ----

    fn random_list(&mut self) -> usize {
        self.rng.random_range(0..Q::LISTS)
    }

    fn random_live(&mut self) -> Option<TimerId> {
        let live = self.model.live();
        if live.is_empty() {
            None
        } else {
            Some(live[self.rng.random_range(0..live.len())])
        }
    }

    fn random_live_deadline(&mut self) -> Option<Tick> {
        let id = self.random_live()?;
        self.model.deadline(id)
    }

    fn new_deadline(&mut self, list: usize) -> Tick {
        let now = self.now;
        if self.rng.random_range(0..100) < self.timeout_percent {
            return now.saturating_add(self.timeouts[list]);
        }
        match self.rng.random_range(0..100) {
            0..=19 => now.saturating_add(self.rng.random_range(0..64)),
            20..=34 => now.saturating_add(self.rng.random_range(0..4_096)),
            35..=44 => now.saturating_add(self.rng.random_range(0..1 << 24)),
            45..=49 => now.saturating_add(self.rng.random_range(0..1 << 44)),
            50..=54 => self.rng.random(),
            55..=59 => u64::MAX - self.rng.random_range(0..64),
            60..=62 => u64::MAX,
            63..=72 => now.saturating_sub(self.rng.random_range(0..5_000)),
            73..=79 => now,
            80..=91 => self.random_live_deadline().unwrap_or(now),
            _ => {
                let near = self.random_live_deadline().unwrap_or(now);
                if self.rng.random() {
                    near.saturating_add(1)
                } else {
                    near.saturating_sub(1)
                }
            }
        }
    }

    /// The `now` of the next expiry: forward a little or a lot, to a deadline, or backwards.
    fn next_now(&mut self) -> Tick {
        let now = self.now;
        match self.rng.random_range(0..100) {
            0..=24 => now.saturating_add(self.rng.random_range(0..64)),
            25..=39 => now.saturating_add(self.rng.random_range(0..5_000)),
            40..=46 => now.saturating_add(self.rng.random_range(1 << 20..1 << 50)),
            47 | 48 => u64::MAX - self.rng.random_range(0..2),
            49..=57 => self.model.next_deadline().unwrap_or(now),
            58..=62 => self
                .model
                .next_deadline()
                .map_or(now, |deadline| deadline.saturating_sub(1)),
            63..=69 => self.random_live_deadline().unwrap_or(now),
            70..=77 => self.rng.random_range(0..=now),
            78..=84 => now.saturating_sub(self.rng.random_range(0..100)),
            _ => now,
        }
    }

    fn budget(&mut self) -> usize {
        match self.rng.random_range(0..100) {
            0..=34 => usize::MAX,
            35..=44 => 0,
            45..=64 => 1,
            65..=89 => self.rng.random_range(2..=8),
            _ => self.rng.random_range(1..=64),
        }
    }

    // ---- bookkeeping ----

    fn new_payload(&mut self) -> Payload {
        let serial = u32::try_from(self.fates.len()).expect("fewer than 2^32 values per run");
        self.fates.push(Fate::Pending);
        Payload { serial, touches: 0 }
    }

    /// A value left the queue (fired, cancelled, drained) under handle `id`.
    fn leave(&mut self, id: TimerId, value: Payload) {
        let fate = self.fates.get(value.serial as usize).copied();
        assert_eq!(
            fate,
            Some(Fate::Pending),
            "value {value:?} left the queue but was not pending{}",
            self.ctx()
        );
        self.fates[value.serial as usize] = Fate::Left;
        if self.dead.len() < DEAD_POOL {
            self.dead.push(id);
        } else {
            let at = self.rng.random_range(0..DEAD_POOL);
            self.dead[at] = id;
        }
    }

    /// Checks a timer the queue handed out against the model's copy of it, and retires it.
    fn check_removed(
        &mut self,
        how: &str,
        got: Expired<Payload>,
        expected: Option<Removed<Payload>>,
    ) {
        let got = Removed {
            id: got.id,
            deadline: got.deadline,
            value: got.value,
        };
        assert_eq!(
            Some(&got),
            expected.as_ref(),
            "{how}: the queue handed out (left) what the model does not expect (right){}",
            self.ctx()
        );
        self.leave(got.id, got.value);
    }

    // ---- operations ----

    fn insert(&mut self, list: usize, deadline: Tick) {
        self.record(Op::Insert { list, deadline });
        let value = self.new_payload();
        let before = self.model.len();
        // `TimerQueue::insert` files on list 0: exercise it as well as `insert_into`.
        let result = if list == 0 && self.rng.random() {
            self.queue.insert(deadline, value)
        } else {
            self.queue.insert_on(list, deadline, value)
        };
        match result {
            Ok(id) => {
                assert!(
                    before < self.capacity(),
                    "insert into a queue holding {before} of {} succeeded{}",
                    self.capacity(),
                    self.ctx()
                );
                assert!(
                    id.index() < self.capacity(),
                    "{id:?} is outside the capacity{}",
                    self.ctx()
                );
                if let Some(occupant) = self.model.occupant(id.index()) {
                    panic!(
                        "new {id:?} shares its slot with pending {occupant:?}{}",
                        self.ctx()
                    );
                }
                self.model.insert(id, deadline, list, value);
                self.check_timer(id);
            }
            Err(Full(back)) => {
                assert_eq!(
                    before,
                    self.capacity(),
                    "insert refused with {before} of {} slots taken{}",
                    self.capacity(),
                    self.ctx()
                );
                assert_eq!(
                    back,
                    value,
                    "a full queue handed back another value{}",
                    self.ctx()
                );
                self.fates[value.serial as usize] = Fate::Refused;
                self.coverage.full_refusals += 1;
            }
        }
    }

    /// Many inserts in a row, often with one deadline (ties); sometimes fills the queue and
    /// goes a little past it.
    fn insert_burst(&mut self) {
        let count = if self.rng.random_ratio(1, 16) {
            self.capacity() - self.model.len() + self.rng.random_range(1..=3)
        } else {
            self.rng.random_range(1..=self.capacity().min(64) + 2)
        };
        let list = self.random_list();
        let shared = self.rng.random_bool(0.3).then(|| self.new_deadline(list));
        for _ in 0..count {
            let deadline = match shared {
                Some(deadline) => deadline,
                None => self.new_deadline(list),
            };
            self.insert(list, deadline);
        }
    }

    fn cancel_live(&mut self) {
        let Some(id) = self.random_live() else {
            return self.probe_dead();
        };
        self.record(Op::Cancel(id));
        let got = self.queue.cancel(id);
        let expected = self.model.remove(id).map(|removed| removed.value);
        assert_eq!(got.ok(), expected, "cancel({id:?}){}", self.ctx());
        if let Some(value) = expected {
            self.leave(id, value);
        }
    }

    /// Reschedule, touch, or move to another list: each orders after equal deadlines.
    fn move_live(&mut self) {
        let Some(id) = self.random_live() else {
            return self.probe_dead();
        };
        let current_list = self.model.list_of(id).unwrap_or(0);
        let (list, deadline) = match self.rng.random_range(0..10) {
            // Same deadline: must still move behind the other timers due then.
            0 | 1 => (current_list, self.model.deadline(id).unwrap_or(0)),
            _ => {
                let list = if Q::HAS_LISTS && self.rng.random_bool(0.4) {
                    self.random_list()
                } else {
                    current_list
                };
                (list, self.new_deadline(list))
            }
        };
        let result = if list != current_list || (Q::HAS_LISTS && self.rng.random_bool(0.2)) {
            self.record(Op::MoveTo { id, list, deadline });
            self.queue.move_on(id, list, deadline)
        } else if self.rng.random() {
            self.record(Op::Touch { id, deadline });
            self.queue.touch_timer(id, deadline)
        } else {
            self.record(Op::Reschedule { id, deadline });
            self.queue.reschedule(id, deadline)
        };
        assert_eq!(result, Ok(()), "moving pending {id:?} failed{}", self.ctx());
        if list != current_list {
            self.coverage.moves_between_lists += 1;
        }
        assert!(self.model.reschedule(id, deadline, list));
        self.check_timer(id);
    }

    /// Changes a pending value through `get_mut`.
    fn edit_live(&mut self) {
        let Some(id) = self.random_live() else {
            return self.probe_dead();
        };
        self.record(Op::Edit(id));
        match self.queue.get_mut(id) {
            Some(value) => value.touches += 1,
            None => panic!("get_mut({id:?}) of a pending timer is None{}", self.ctx()),
        }
        if let Some(value) = self.model.get_mut(id) {
            value.touches += 1;
        }
        self.check_timer(id);
    }

    /// Expires at `now` with `budget` and checks the firing order, count, and `more_due`.
    /// Returns how many fired.
    fn expire(&mut self, now: Tick, budget: usize) -> usize {
        self.record(Op::Expire { now, budget });
        if now < self.now {
            self.coverage.backwards_expiries += 1;
        }
        self.now = now;
        let mut fired = Vec::new();
        let expiry = self
            .queue
            .expire(now, budget, |expired| fired.push(expired));
        assert_eq!(expiry.fired, fired.len(), "Expiry::fired{}", self.ctx());
        assert!(
            fired.len() <= budget,
            "{} fired on a budget of {budget}{}",
            fired.len(),
            self.ctx()
        );
        let count = fired.len();
        for pair in fired.windows(2) {
            if pair[0].deadline == pair[1].deadline {
                self.coverage.tied_fires += 1;
                if self.model.list_of(pair[0].id) != self.model.list_of(pair[1].id) {
                    self.coverage.tied_fires_across_lists += 1;
                }
            }
        }
        for expired in fired {
            if expired.deadline >= u64::MAX - 64 {
                self.coverage.fires_near_max += 1;
            }
            assert!(
                expired.deadline <= now,
                "{expired:?} fired early at {now}{}",
                self.ctx()
            );
            let expected = self.model.pop_due(now);
            self.check_removed("expire", expired, expected);
        }
        if count < budget {
            assert!(
                !self.model.is_due(now),
                "expire({now}) stopped under budget with {} timers still due (late){}",
                self.model.due_count(now),
                self.ctx()
            );
        }
        assert_eq!(
            expiry.more_due,
            self.model.is_due(now),
            "more_due after firing {count} of budget {budget}{}",
            self.ctx()
        );
        if expiry.more_due {
            self.coverage.budget_cuts += 1;
        }
        count
    }

    fn pop_expired(&mut self) {
        let now = self.next_now();
        self.record(Op::PopExpired { now });
        self.now = now;
        let got = self.queue.pop_expired(now);
        let expected = self.model.pop_due(now);
        match got {
            Some(expired) => self.check_removed("pop_expired", expired, expected),
            None => assert_eq!(
                expected,
                None,
                "pop_expired({now}) is None but a timer is due{}",
                self.ctx()
            ),
        }
    }

    fn has_expired(&mut self) {
        let now = self.next_now();
        self.record(Op::HasExpired { now });
        self.now = now;
        assert_eq!(
            self.queue.has_expired(now),
            self.model.is_due(now),
            "has_expired({now}){}",
            self.ctx()
        );
    }

    /// A server loop's wake-up: sleep until `next_deadline()`, expire there, until a timer fires.
    /// Exact queues fire at the first wake-up; the wheel may wake early at most once per level,
    /// and each early answer must be later than the one before.
    fn wake_at_next_deadline(&mut self) {
        self.record(Op::WakeAtNextDeadline);
        let mut previous: Option<Tick> = None;
        for early_wakes in 0.. {
            let Some(next) = self.queue.next_deadline() else {
                assert!(
                    self.model.is_empty(),
                    "next_deadline() is None with timers pending{}",
                    self.ctx()
                );
                return;
            };
            let earliest = self.model.next_deadline();
            assert!(
                earliest.is_some_and(|earliest| next <= earliest),
                "next_deadline() {next} is later than the earliest deadline {earliest:?}{}",
                self.ctx()
            );
            if let Some(previous) = previous {
                assert!(
                    next > previous,
                    "an early wake-up at {previous} made no progress: next is {next}{}",
                    self.ctx()
                );
            }
            assert!(
                early_wakes < wheel::LEVELS,
                "{early_wakes} early wake-ups and still not at the earliest deadline{}",
                self.ctx()
            );
            if self.expire(next, usize::MAX) > 0 {
                return;
            }
            assert_eq!(
                Q::NEXT_DEADLINE,
                NextDeadline::NoLater,
                "waking at the exact next_deadline() {next} fired nothing{}",
                self.ctx()
            );
            previous = Some(next);
            self.coverage.early_wakes += 1;
        }
    }

    fn drain_some(&mut self) {
        let len = self.model.len();
        if len == 0 {
            return self.drain_all();
        }
        let take = self.rng.random_range(1..=len);
        self.record(Op::Drain { take });
        let mut out = Vec::with_capacity(take);
        {
            let mut drain = self.queue.drain();
            for _ in 0..take {
                let before = drain.len();
                out.push((before, drain.next()));
            }
        }
        for (taken, (before, expired)) in out.into_iter().enumerate() {
            assert_eq!(
                before,
                len - taken,
                "Drain::len() after {taken} items{}",
                self.ctx()
            );
            let Some(expired) = expired else {
                panic!(
                    "drain ended after {taken} of {len} pending timers{}",
                    self.ctx()
                );
            };
            let expected = self.model.remove(expired.id);
            self.check_removed("drain", expired, expected);
        }
    }

    fn drain_all(&mut self) {
        self.record(Op::Drain { take: usize::MAX });
        let len = self.model.len();
        let all: Vec<_> = self.queue.drain().collect();
        assert_eq!(
            all.len(),
            len,
            "drain() yielded a wrong count{}",
            self.ctx()
        );
        for expired in all {
            let expected = self.model.remove(expired.id);
            self.check_removed("drain", expired, expected);
        }
        assert!(
            self.queue.is_empty(),
            "not empty after drain(){}",
            self.ctx()
        );
    }

    // ---- checks ----

    /// One pending timer: deadline, value, list.
    fn check_timer(&mut self, id: TimerId) {
        assert_eq!(
            self.queue.deadline(id),
            self.model.deadline(id),
            "deadline({id:?}){}",
            self.ctx()
        );
        assert_eq!(
            self.queue.get(id),
            self.model.get(id),
            "get({id:?}){}",
            self.ctx()
        );
        if Q::HAS_LISTS {
            assert_eq!(
                self.queue.list_of_timer(id),
                self.model.list_of(id),
                "list_of({id:?}){}",
                self.ctx()
            );
        }
    }

    /// A dead handle is refused by every operation and changes nothing.
    fn probe(&mut self, id: TimerId) {
        if self.model.occupant(id.index()).is_some() {
            self.coverage.probes_of_reused_slots += 1;
        }
        let deadline = self.new_deadline(0);
        assert_eq!(
            self.queue.deadline(id),
            None,
            "deadline(dead {id:?}){}",
            self.ctx()
        );
        assert_eq!(self.queue.get(id), None, "get(dead {id:?}){}", self.ctx());
        assert!(
            self.queue.get_mut(id).is_none(),
            "get_mut(dead {id:?}){}",
            self.ctx()
        );
        assert_eq!(
            self.queue.cancel(id),
            Err(StaleTimer),
            "cancel(dead {id:?}){}",
            self.ctx()
        );
        assert_eq!(
            self.queue.reschedule(id, deadline),
            Err(StaleTimer),
            "reschedule(dead {id:?}){}",
            self.ctx()
        );
        if Q::HAS_LISTS {
            let list = self.random_list();
            assert_eq!(
                self.queue.touch_timer(id, deadline),
                Err(StaleTimer),
                "touch(dead {id:?}){}",
                self.ctx()
            );
            assert_eq!(
                self.queue.move_on(id, list, deadline),
                Err(StaleTimer),
                "move_to(dead {id:?}){}",
                self.ctx()
            );
            assert_eq!(
                self.queue.list_of_timer(id),
                None,
                "list_of(dead {id:?}){}",
                self.ctx()
            );
        }
    }

    fn probe_dead(&mut self) {
        if !self.dead.is_empty() {
            let id = self.dead[self.rng.random_range(0..self.dead.len())];
            self.probe(id);
        }
    }

    /// After every step: the summary, the next deadline, some pending and some dead handles.
    fn check_consistency(&mut self) {
        let len = self.model.len();
        let capacity = self.capacity();
        assert_eq!(self.queue.len(), len, "len(){}", self.ctx());
        assert_eq!(self.queue.is_empty(), len == 0, "is_empty(){}", self.ctx());
        assert_eq!(
            self.queue.is_full(),
            len == capacity,
            "is_full(){}",
            self.ctx()
        );
        let next = self.queue.next_deadline();
        let earliest = self.model.next_deadline();
        match Q::NEXT_DEADLINE {
            NextDeadline::Exact => {
                assert_eq!(next, earliest, "next_deadline(){}", self.ctx());
            }
            NextDeadline::NoLater => assert!(
                match (next, earliest) {
                    (Some(next), Some(earliest)) => next <= earliest,
                    (next, earliest) => next.is_none() && earliest.is_none(),
                },
                "next_deadline() is {next:?}, the earliest deadline {earliest:?}{}",
                self.ctx()
            ),
        }
        let everything = len <= 32 || self.step % 64 == 0;
        if Q::HAS_LISTS && (everything || self.step % 8 == 0) {
            // One past the last list is empty, not a panic.
            for list in 0..=Q::LISTS {
                assert_eq!(
                    self.queue.next_deadline_on(list),
                    self.model.next_deadline_in(list),
                    "next_deadline_in({list}){}",
                    self.ctx()
                );
            }
        }
        if everything {
            for at in 0..len {
                let id = self.model.live()[at];
                self.check_timer(id);
            }
        } else {
            for _ in 0..2 {
                if let Some(id) = self.random_live() {
                    self.check_timer(id);
                }
            }
        }
        for _ in 0..2 {
            self.probe_dead();
        }
    }

    /// Ends the run by firing or draining everything, then checks that every value left
    /// exactly once and that every dead handle is still refused.
    fn finish(mut self) -> Coverage {
        if self.rng.random() {
            self.expire(u64::MAX, usize::MAX);
        } else {
            self.drain_all();
        }
        self.check_consistency();
        assert!(
            self.queue.is_empty(),
            "queue not empty at the end{}",
            self.ctx()
        );
        if let Some(serial) = self.fates.iter().position(|&fate| fate == Fate::Pending) {
            panic!("value {serial} never left the queue{}", self.ctx());
        }
        for at in 0..self.dead.len() {
            let id = self.dead[at];
            self.probe(id);
        }
        assert!(
            self.queue.is_empty(),
            "a dead handle changed the queue{}",
            self.ctx()
        );
        self.coverage
    }
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
/// most one early wake-up per level, each later than the last, and fires it on time.
#[test]
fn wheel_with_one_timer_reaches_it_in_at_most_one_early_wake_per_level() {
    const TEST: &str = "wheel_with_one_timer_reaches_it_in_at_most_one_early_wake_per_level";
    for seed in seeds(TEST, cases(1) * 10) {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut wheel: TimerWheel<u32, 4> = TimerWheel::new();
        let start = rng.random::<u64>() >> rng.random_range(0..64);
        let expiry = wheel.expire(start, usize::MAX, |_| {});
        assert_eq!(expiry.fired, 0, "seed {seed:#x}");
        let distance = match rng.random_range(0..3) {
            0 => rng.random::<u64>() >> rng.random_range(0..64),
            1 => rng.random_range(1..1 << 20),
            _ => rng.random(),
        };
        let deadline = start.saturating_add(distance.max(1));
        if deadline == start {
            continue; // start was u64::MAX: nothing lies ahead
        }
        wheel.insert(deadline, 7).unwrap();
        let mut previous = start;
        let mut early_wakes = 0;
        loop {
            let next = wheel.next_deadline();
            let Some(next) = next.filter(|&next| next > previous && next <= deadline) else {
                panic!(
                    "seed {seed:#x}: start {start}, deadline {deadline}: after {early_wakes} \
                     early wake-ups at last {previous}, next_deadline() is {next:?}"
                );
            };
            let mut fired = Vec::new();
            let _ = wheel.expire(next, usize::MAX, |e| fired.push((e.deadline, e.value)));
            if next == deadline {
                assert_eq!(fired, [(deadline, 7)], "seed {seed:#x}: start {start}");
                break;
            }
            assert!(
                fired.is_empty(),
                "seed {seed:#x}: {fired:?} fired early at {next}"
            );
            early_wakes += 1;
            previous = next;
        }
        assert!(
            early_wakes < wheel::LEVELS,
            "seed {seed:#x}: start {start}, deadline {deadline}: {early_wakes} early wake-ups"
        );
        assert_eq!(wheel.next_deadline(), None, "seed {seed:#x}");
    }
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

/// Three lists sharing 16 slots: `insert_into`, `move_to` and `touch` across lists, with equal
/// deadlines on different lists firing in list order.
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
    let seed = seeds(test, 1)[0];
    let mut queue = Q::default();
    let mut run = Run::new(test, seed, &mut queue, Deadlines::Any);
    run.now = 1_000;
    let capacity = run.capacity();
    while run.model.len() < capacity {
        run.step += 1;
        let deadline = match run.rng.random_range(0..4) {
            0 => 5_000, // a mass expiry at one tick
            1 => run.now + run.rng.random_range(0..1 << 16),
            2 => run.now + run.rng.random_range(0..1 << 40),
            _ => run.new_deadline(0),
        };
        run.insert(0, deadline);
    }
    run.check_consistency();
    for _ in 0..10 {
        let deadline = run.new_deadline(0);
        run.insert(0, deadline);
        assert!(run.queue.is_full(), "seed {seed:#x}");
    }
    while !run.model.is_empty() {
        run.step += 1;
        match run.rng.random_range(0..10) {
            0 => run.cancel_live(),
            1 => run.move_live(),
            2 => {
                let deadline = run.new_deadline(0);
                run.insert(0, deadline);
            }
            3 => run.wake_at_next_deadline(),
            _ => {
                let now = run.now.saturating_add(run.rng.random_range(0..1 << 12));
                let now = if run.rng.random_ratio(1, 50) {
                    u64::MAX
                } else {
                    now
                };
                let budget = run.rng.random_range(1..=5_000);
                run.expire(now, budget);
            }
        }
        run.check_consistency();
    }
    let coverage = run.finish();
    eprintln!("{test}: {coverage:?}");
}

/// Runs `f` on a thread with a stack big enough for a queue of 100 000 timers.
fn on_big_stack(f: fn()) {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(f)
        .expect("spawn a test thread")
        .join()
        .expect("the test thread passed");
}

#[test]
fn wheel_of_100k_filled_then_expired_in_budgeted_sweeps_matches_model() {
    on_big_stack(|| {
        mass_expiry_in_budgeted_sweeps::<TimerWheel<Payload, 100_000>>(
            "wheel_of_100k_filled_then_expired_in_budgeted_sweeps_matches_model",
        );
    });
}

#[test]
fn heap_of_100k_filled_then_expired_in_budgeted_sweeps_matches_model() {
    on_big_stack(|| {
        mass_expiry_in_budgeted_sweeps::<TimerHeap<Payload, 100_000>>(
            "heap_of_100k_filled_then_expired_in_budgeted_sweeps_matches_model",
        );
    });
}
