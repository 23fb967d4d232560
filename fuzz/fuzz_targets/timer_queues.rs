//! Every timer queue against the `BTreeMap` reference model, under an arbitrary sequence of
//! operations.
//!
//! One input is a starting time, a fixed timeout per list, and a list of operations: insert (one
//! or a burst, often with one shared deadline), cancel, reschedule, touch, move between lists,
//! edit through `get_mut`, expire with a budget, pop, `has_expired`, a wake-up at
//! `next_deadline()`, `pop_any`, partial and full drains, and probes with dead handles. Time moves
//! forward a little or a lot, jumps to `u64::MAX`, and goes backwards.
//!
//! The same sequence runs on each queue in turn ([`TimerWheel`], [`TimerHeap`] with arity 2 and 4,
//! [`TimeoutList`], and [`TimeoutLists`] with three lists), each against its own
//! [`ReferenceQueue`]. After every operation the queue must agree with the model on length,
//! fullness, the next deadline (exact, or never later for the wheel) and every pending timer's
//! deadline, value and list. Every timer handed out must be the one the model expects (so fire
//! order is equal, and nothing fires before its deadline), every value must leave exactly once,
//! and dead handles must stay refused without touching anything.

#![no_main]

use arbitrary::Arbitrary;
use host_tests::model::{ReferenceQueue, Removed};
use libfuzzer_sys::fuzz_target;
use timer_core::{
    Expired, Full, StaleTimer, Tick, TimeoutList, TimeoutLists, TimerHeap, TimerId, TimerQueue,
    TimerWheel,
};

/// Capacity of every queue: small, so that inputs fill it and slots get reused.
const N: usize = 16;

/// Lists of the multi-list queue.
const LISTS: usize = 3;

/// Operations per input beyond this are ignored (keeps each run fast).
const MAX_OPS: usize = 1_000;

/// Dead handles kept to probe.
const DEAD_POOL: usize = 64;

/// A starting time.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum Start {
    Zero,
    Small(u16),
    Any(u64),
    NearMax(u16),
    Max,
}

impl Start {
    fn tick(self) -> Tick {
        match self {
            Self::Zero => 0,
            Self::Small(t) => Tick::from(t),
            Self::Any(t) => t,
            Self::NearMax(back) => Tick::MAX - Tick::from(back),
            Self::Max => Tick::MAX,
        }
    }
}

/// A new deadline, mostly relative to `now` or to a pending timer.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum When {
    Now,
    /// `now` plus the list's fixed timeout (what `TimeoutLists` is made for).
    Timeout,
    Soon(u8),
    Later(u16),
    Far(u32),
    /// `now + (bits >> shift)`: anywhere up to `u64::MAX`.
    VeryFar {
        bits: u64,
        shift: u8,
    },
    Absolute(u64),
    NearMax(u8),
    Max,
    Past(u16),
    /// The deadline of a pending timer (a tie).
    SameAs(u8),
    /// One tick after (or before) a pending timer's deadline.
    NextTo {
        pick: u8,
        after: bool,
    },
}

/// The `now` of an expiry.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum Time {
    Same,
    Forward(u8),
    ForwardMore(u16),
    /// `now + (bits >> shift)`, saturating.
    Jump {
        bits: u64,
        shift: u8,
    },
    NearMax(u8),
    Max,
    Back(u16),
    /// Anywhere in `0..=now`.
    BackTo(u64),
    /// The model's earliest deadline.
    Next,
    /// One tick before it.
    JustBeforeNext,
    /// A pending timer's deadline.
    DeadlineOf(u8),
}

/// How many timers one expiry may fire.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum Budget {
    Unlimited,
    Zero,
    One,
    Few(u8),
}

impl Budget {
    fn count(self) -> usize {
        match self {
            Self::Unlimited => usize::MAX,
            Self::Zero => 0,
            Self::One => 1,
            Self::Few(n) => usize::from(n % 32),
        }
    }
}

#[derive(Arbitrary, Clone, Copy, Debug)]
enum Op {
    Insert {
        list: u8,
        when: When,
    },
    /// `count` inserts in a row; with `shared`, all at one deadline.
    Burst {
        list: u8,
        count: u8,
        when: When,
        shared: bool,
    },
    Cancel {
        pick: u8,
    },
    Reschedule {
        pick: u8,
        when: When,
    },
    Touch {
        pick: u8,
        when: When,
    },
    MoveTo {
        pick: u8,
        list: u8,
        when: When,
    },
    Edit {
        pick: u8,
    },
    Expire {
        time: Time,
        budget: Budget,
    },
    PopExpired {
        time: Time,
    },
    HasExpired {
        time: Time,
    },
    /// Expire at the queue's own `next_deadline()`, as a server loop does.
    WakeAtNextDeadline,
    PopAny,
    Drain {
        take: u8,
    },
    DrainAll,
    ProbeDead {
        pick: u8,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    start: Start,
    timeouts: [u32; LISTS],
    ops: Vec<Op>,
}

/// The value stored with each timer: `serial` is unique per insert attempt, `touches` counts
/// edits through `get_mut`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Payload {
    serial: u32,
    touches: u32,
}

/// What happened to each value offered to the queue, by serial.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fate {
    Pending,
    Left,
    Refused,
}

/// The queue API under test, with the list operations of [`TimeoutLists`] where there are any.
trait Subject: TimerQueue<Payload> + Default {
    /// Whether `next_deadline()` is exact (else: never later than the earliest deadline).
    const EXACT_NEXT_DEADLINE: bool;
    const LISTS: usize = 1;

    fn insert_on(
        &mut self,
        list: usize,
        at: Tick,
        value: Payload,
    ) -> Result<TimerId, Full<Payload>> {
        debug_assert_eq!(list, 0);
        self.insert(at, value)
    }

    fn touch_timer(&mut self, id: TimerId, at: Tick) -> Result<(), StaleTimer> {
        self.reschedule(id, at)
    }

    fn move_on(&mut self, id: TimerId, list: usize, at: Tick) -> Result<(), StaleTimer> {
        debug_assert_eq!(list, 0);
        self.reschedule(id, at)
    }

    fn list_of_timer(&self, id: TimerId) -> Option<usize> {
        self.deadline(id).map(|_| 0)
    }

    fn next_deadline_on(&self, list: usize) -> Option<Tick> {
        debug_assert_eq!(list, 0);
        self.next_deadline()
    }
}

impl Subject for TimerWheel<Payload, N> {
    const EXACT_NEXT_DEADLINE: bool = false;
}

impl<const D: usize> Subject for TimerHeap<Payload, N, D> {
    const EXACT_NEXT_DEADLINE: bool = true;
}

impl<const L: usize> Subject for TimeoutLists<Payload, N, L> {
    const EXACT_NEXT_DEADLINE: bool = true;
    const LISTS: usize = L;

    fn insert_on(
        &mut self,
        list: usize,
        at: Tick,
        value: Payload,
    ) -> Result<TimerId, Full<Payload>> {
        self.insert_into(list, at, value)
    }

    fn touch_timer(&mut self, id: TimerId, at: Tick) -> Result<(), StaleTimer> {
        self.touch(id, at)
    }

    fn move_on(&mut self, id: TimerId, list: usize, at: Tick) -> Result<(), StaleTimer> {
        self.move_to(id, list, at)
    }

    fn list_of_timer(&self, id: TimerId) -> Option<usize> {
        self.list_of(id)
    }

    fn next_deadline_on(&self, list: usize) -> Option<Tick> {
        self.next_deadline_in(list)
    }
}

/// One queue, its model, and the bookkeeping to compare them.
struct Run<Q> {
    queue: Q,
    model: ReferenceQueue<Payload>,
    now: Tick,
    timeouts: [Tick; LISTS],
    fates: Vec<Fate>,
    dead: Vec<TimerId>,
    /// Which dead handle a new one replaces once the pool is full.
    dead_cursor: usize,
}

impl<Q: Subject> Run<Q> {
    fn new(input: &Input) -> Self {
        Self {
            queue: Q::default(),
            model: ReferenceQueue::new(),
            now: input.start.tick(),
            timeouts: input.timeouts.map(Tick::from),
            fates: Vec::new(),
            dead: Vec::new(),
            dead_cursor: 0,
        }
    }

    fn name(&self) -> String {
        format!("{} (now {})", core::any::type_name::<Q>(), self.now)
    }

    // ---- resolving the input's choices ----

    fn list(&self, list: u8) -> usize {
        usize::from(list) % Q::LISTS
    }

    fn live(&self, pick: u8) -> Option<TimerId> {
        let live = self.model.live();
        (!live.is_empty()).then(|| live[usize::from(pick) % live.len()])
    }

    fn live_deadline(&self, pick: u8) -> Option<Tick> {
        self.live(pick).and_then(|id| self.model.deadline(id))
    }

    fn deadline(&self, when: When, list: usize) -> Tick {
        let now = self.now;
        match when {
            When::Now => now,
            When::Timeout => now.saturating_add(self.timeouts[list % LISTS]),
            When::Soon(d) => now.saturating_add(Tick::from(d % 64)),
            When::Later(d) => now.saturating_add(Tick::from(d)),
            When::Far(d) => now.saturating_add(Tick::from(d)),
            When::VeryFar { bits, shift } => now.saturating_add(bits >> (shift % 64)),
            When::Absolute(t) => t,
            When::NearMax(back) => Tick::MAX - Tick::from(back % 64),
            When::Max => Tick::MAX,
            When::Past(d) => now.saturating_sub(Tick::from(d)),
            When::SameAs(pick) => self.live_deadline(pick).unwrap_or(now),
            When::NextTo { pick, after } => {
                let near = self.live_deadline(pick).unwrap_or(now);
                if after {
                    near.saturating_add(1)
                } else {
                    near.saturating_sub(1)
                }
            }
        }
    }

    fn time(&self, time: Time) -> Tick {
        let now = self.now;
        match time {
            Time::Same => now,
            Time::Forward(d) => now.saturating_add(Tick::from(d % 64)),
            Time::ForwardMore(d) => now.saturating_add(Tick::from(d)),
            Time::Jump { bits, shift } => now.saturating_add(bits >> (shift % 64)),
            Time::NearMax(back) => Tick::MAX - Tick::from(back % 4),
            Time::Max => Tick::MAX,
            Time::Back(d) => now.saturating_sub(Tick::from(d)),
            Time::BackTo(t) => t % now.saturating_add(1).max(1),
            Time::Next => self.model.next_deadline().unwrap_or(now),
            Time::JustBeforeNext => self
                .model
                .next_deadline()
                .map_or(now, |at| at.saturating_sub(1)),
            Time::DeadlineOf(pick) => self.live_deadline(pick).unwrap_or(now),
        }
    }

    // ---- bookkeeping ----

    fn new_payload(&mut self) -> Payload {
        let serial = u32::try_from(self.fates.len()).expect("fewer than 2^32 values");
        self.fates.push(Fate::Pending);
        Payload { serial, touches: 0 }
    }

    /// A value left the queue under handle `id`: it must have been pending until now.
    fn leave(&mut self, id: TimerId, value: Payload) {
        let fate = self.fates.get(value.serial as usize).copied();
        assert_eq!(
            fate,
            Some(Fate::Pending),
            "{}: value {value:?} left but was not pending",
            self.name()
        );
        self.fates[value.serial as usize] = Fate::Left;
        if self.dead.len() < DEAD_POOL {
            self.dead.push(id);
        } else {
            self.dead[self.dead_cursor % DEAD_POOL] = id;
            self.dead_cursor += 1;
        }
    }

    /// A timer the queue handed out must be exactly the one the model expects.
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
            "{}: {how} handed out (left) what the model does not expect (right)",
            self.name()
        );
        self.leave(got.id, got.value);
    }

    // ---- operations ----

    fn apply(&mut self, op: Op) {
        match op {
            Op::Insert { list, when } => {
                let list = self.list(list);
                let at = self.deadline(when, list);
                self.insert(list, at, false);
            }
            Op::Burst {
                list,
                count,
                when,
                shared,
            } => {
                let list = self.list(list);
                let first = self.deadline(when, list);
                for i in 0..usize::from(count) % (N + 4) + 1 {
                    let at = if shared {
                        first
                    } else {
                        first.saturating_add(i as Tick)
                    };
                    self.insert(list, at, i % 2 == 1);
                }
            }
            Op::Cancel { pick } => {
                let Some(id) = self.live(pick) else {
                    return self.probe_dead(pick);
                };
                let got = self.queue.cancel(id);
                let expected = self.model.remove(id).map(|removed| removed.value);
                assert_eq!(got.ok(), expected, "{}: cancel({id:?})", self.name());
                if let Some(value) = expected {
                    self.leave(id, value);
                }
            }
            Op::Reschedule { pick, when } => self.move_timer(pick, None, when, false),
            Op::Touch { pick, when } => self.move_timer(pick, None, when, true),
            Op::MoveTo { pick, list, when } => {
                let list = self.list(list);
                self.move_timer(pick, Some(list), when, false);
            }
            Op::Edit { pick } => {
                let Some(id) = self.live(pick) else {
                    return self.probe_dead(pick);
                };
                let edited = self.queue.get_mut(id).map(|value| {
                    value.touches += 1;
                    *value
                });
                let expected = self.model.get_mut(id).map(|value| {
                    value.touches += 1;
                    *value
                });
                assert_eq!(edited, expected, "{}: get_mut({id:?})", self.name());
            }
            Op::Expire { time, budget } => {
                let now = self.time(time);
                self.expire(now, budget.count());
            }
            Op::PopExpired { time } => {
                let now = self.time(time);
                self.now = now;
                let got = self.queue.pop_expired(now);
                let expected = self.model.pop_due(now);
                match got {
                    Some(got) => self.check_removed("pop_expired", got, expected),
                    None => assert_eq!(
                        expected,
                        None,
                        "{}: pop_expired({now}) found nothing due",
                        self.name()
                    ),
                }
            }
            Op::HasExpired { time } => {
                let now = self.time(time);
                assert_eq!(
                    self.queue.has_expired(now),
                    self.model.is_due(now),
                    "{}: has_expired({now})",
                    self.name()
                );
            }
            Op::WakeAtNextDeadline => {
                if let Some(at) = self.queue.next_deadline() {
                    self.expire(at, usize::MAX);
                }
            }
            Op::PopAny => {
                let got = self.queue.pop_any();
                self.check_any("pop_any", got);
            }
            Op::Drain { take } => self.drain(usize::from(take)),
            Op::DrainAll => self.drain(usize::MAX),
            Op::ProbeDead { pick } => self.probe_dead(pick),
        }
    }

    fn insert(&mut self, list: usize, at: Tick, through_trait: bool) {
        let value = self.new_payload();
        let before = self.model.len();
        // `TimerQueue::insert` files on list 0: exercise it as well as `insert_into`.
        let result = if list == 0 && through_trait {
            self.queue.insert(at, value)
        } else {
            self.queue.insert_on(list, at, value)
        };
        match result {
            Ok(id) => {
                assert!(
                    before < N,
                    "{}: insert into a full queue succeeded",
                    self.name()
                );
                assert!(
                    id.index() < N,
                    "{}: {id:?} is outside the capacity",
                    self.name()
                );
                if let Some(occupant) = self.model.occupant(id.index()) {
                    panic!(
                        "{}: new {id:?} shares its slot with pending {occupant:?}",
                        self.name()
                    );
                }
                assert!(
                    !self.dead.contains(&id),
                    "{}: new {id:?} repeats a dead handle",
                    self.name()
                );
                self.model.insert(id, at, list, value);
            }
            Err(Full(back)) => {
                assert_eq!(
                    before,
                    N,
                    "{}: insert refused with {before} of {N} taken",
                    self.name()
                );
                assert_eq!(
                    back,
                    value,
                    "{}: a full queue handed back another value",
                    self.name()
                );
                self.fates[value.serial as usize] = Fate::Refused;
            }
        }
    }

    /// Reschedule, touch, or move to another list: each orders after equal deadlines.
    fn move_timer(&mut self, pick: u8, to: Option<usize>, when: When, touch: bool) {
        let Some(id) = self.live(pick) else {
            return self.probe_dead(pick);
        };
        let current = self.model.list_of(id).unwrap_or(0);
        let list = to.unwrap_or(current);
        let at = self.deadline(when, list);
        let result = if to.is_some() {
            self.queue.move_on(id, list, at)
        } else if touch {
            self.queue.touch_timer(id, at)
        } else {
            self.queue.reschedule(id, at)
        };
        assert_eq!(
            result,
            Ok(()),
            "{}: moving pending {id:?} to {at} failed",
            self.name()
        );
        assert!(self.model.reschedule(id, at, list));
    }

    fn expire(&mut self, now: Tick, budget: usize) {
        self.now = now;
        let due = self.model.due_count(now);
        let mut fired = Vec::new();
        let expiry = self
            .queue
            .expire(now, budget, |expired| fired.push(expired));
        let expected = due.min(budget);
        assert_eq!(
            (expiry.fired, fired.len()),
            (expected, expected),
            "{}: expire({now}, {budget}) with {due} due",
            self.name()
        );
        assert_eq!(
            expiry.more_due,
            due > budget,
            "{}: expire({now}, {budget}) with {due} due: more_due",
            self.name()
        );
        for got in fired {
            assert!(
                got.deadline <= now,
                "{}: {got:?} fired early at {now}",
                self.name()
            );
            let expected = self.model.pop_due(now);
            self.check_removed("expire", got, expected);
        }
    }

    /// A timer from `pop_any` or `drain`: any pending one, each once.
    fn check_any(&mut self, how: &str, got: Option<Expired<Payload>>) {
        match got {
            Some(got) => {
                let expected = self.model.remove(got.id);
                self.check_removed(how, got, expected);
            }
            None => assert!(
                self.model.is_empty(),
                "{}: {how} gave nothing with {} pending",
                self.name(),
                self.model.len()
            ),
        }
    }

    fn drain(&mut self, take: usize) {
        let pending = self.model.len();
        let name = self.name();
        let got: Vec<_> = {
            let drain = self.queue.drain();
            assert_eq!(drain.len(), pending, "{name}: drain().len()");
            drain.take(take).collect()
        };
        assert_eq!(
            got.len(),
            pending.min(take),
            "{}: drain().take({take})",
            self.name()
        );
        for expired in got {
            self.check_any("drain", Some(expired));
        }
        if take >= pending {
            assert!(
                self.queue.is_empty(),
                "{}: a full drain left timers",
                self.name()
            );
        }
    }

    /// A handle that fired, was cancelled or drained must be refused and change nothing.
    fn probe_dead(&mut self, pick: u8) {
        if self.dead.is_empty() {
            return;
        }
        let id = self.dead[usize::from(pick) % self.dead.len()];
        assert_eq!(
            self.model.deadline(id),
            None,
            "the model holds a dead handle"
        );
        let name = self.name();
        let now = self.now;
        assert_eq!(
            self.queue.deadline(id),
            None,
            "{name}: deadline(dead {id:?})"
        );
        assert_eq!(self.queue.get(id), None, "{name}: get(dead {id:?})");
        assert_eq!(self.queue.get_mut(id), None, "{name}: get_mut(dead {id:?})");
        assert_eq!(
            self.queue.list_of_timer(id),
            None,
            "{name}: list_of(dead {id:?})"
        );
        assert_eq!(
            self.queue.cancel(id),
            Err(StaleTimer),
            "{name}: cancel(dead {id:?})"
        );
        assert_eq!(
            self.queue.reschedule(id, now),
            Err(StaleTimer),
            "{name}: reschedule(dead {id:?})"
        );
        assert_eq!(
            self.queue.touch_timer(id, now),
            Err(StaleTimer),
            "{name}: touch(dead {id:?})"
        );
        let list = usize::from(pick) % Q::LISTS;
        assert_eq!(
            self.queue.move_on(id, list, now),
            Err(StaleTimer),
            "{name}: move_to(dead {id:?})"
        );
    }

    /// After every operation: the queue and the model agree on everything observable.
    fn check(&mut self) {
        let name = self.name();
        let len = self.model.len();
        assert_eq!(self.queue.len(), len, "{name}: len");
        assert_eq!(self.queue.is_empty(), len == 0, "{name}: is_empty");
        assert_eq!(self.queue.is_full(), len == N, "{name}: is_full");
        assert_eq!(self.queue.capacity(), N, "{name}: capacity");
        let next = self.queue.next_deadline();
        let earliest = self.model.next_deadline();
        if Q::EXACT_NEXT_DEADLINE {
            assert_eq!(next, earliest, "{name}: next_deadline");
        } else {
            assert_eq!(
                next.is_some(),
                earliest.is_some(),
                "{name}: next_deadline {next:?} vs {earliest:?}"
            );
            assert!(
                next <= earliest,
                "{name}: next_deadline {next:?} after the earliest {earliest:?}"
            );
        }
        if Q::LISTS > 1 {
            for list in 0..Q::LISTS {
                assert_eq!(
                    self.queue.next_deadline_on(list),
                    self.model.next_deadline_in(list),
                    "{name}: next_deadline_in({list})"
                );
            }
        }
        for &id in self.model.live() {
            assert_eq!(
                self.queue.deadline(id),
                self.model.deadline(id),
                "{name}: deadline({id:?})"
            );
            assert_eq!(
                self.queue.get(id),
                self.model.get(id),
                "{name}: get({id:?})"
            );
            assert_eq!(
                self.queue.list_of_timer(id),
                self.model.list_of(id),
                "{name}: list_of({id:?})"
            );
        }
    }

    /// Drains what is left: then every value offered has left exactly once or was refused.
    fn finish(mut self) {
        self.drain(usize::MAX);
        self.check();
        assert_eq!(
            self.queue.pop_any(),
            None,
            "{}: pop_any after drain",
            self.name()
        );
        if let Some(serial) = self.fates.iter().position(|&fate| fate == Fate::Pending) {
            panic!("{}: value {serial} never left", self.name());
        }
    }
}

fn run<Q: Subject>(input: &Input) {
    let mut run = Run::<Q>::new(input);
    for &op in input.ops.iter().take(MAX_OPS) {
        run.apply(op);
        run.check();
    }
    run.finish();
}

fuzz_target!(|input: Input| {
    run::<TimerWheel<Payload, N>>(&input);
    run::<TimerHeap<Payload, N, 2>>(&input);
    run::<TimerHeap<Payload, N, 4>>(&input);
    run::<TimeoutList<Payload, N>>(&input);
    run::<TimeoutLists<Payload, N, LISTS>>(&input);
});
