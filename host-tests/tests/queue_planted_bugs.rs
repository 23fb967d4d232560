//! The queue checker catches what it exists to catch: a correct wheel passes it, and a wheel
//! wrapped in an adapter with one planted bug fails it, for each of the four ways a timer queue
//! can fire wrongly: a timer dropped, fired twice, fired early, or fired out of order.
//!
//! Each adapter passes every call through to a real [`TimerWheel`] except `pop_expired` (the
//! engine of `expire`), where it plants its bug. The input is fixed: timers at distinct and
//! equal deadlines, then expiries that reach them.

use std::panic::{catch_unwind, AssertUnwindSafe};

use host_tests::queue_check::{
    check_input, Budget, Finish, NextDeadline, Op, Payload, QueueInput, QueueUnderTest, Start,
    Time, When,
};
use timer_core::{Expired, Full, StaleTimer, Tick, TimerId, TimerQueue, TimerWheel};

const CAPACITY: usize = 16;

/// The bug an adapter plants in `pop_expired`.
trait Bug: Default {
    /// What `pop_expired(now)` hands out instead of `wheel.pop_expired(now)`.
    fn pop_expired(
        &mut self,
        wheel: &mut TimerWheel<Payload, CAPACITY>,
        now: Tick,
    ) -> Option<Expired<Payload>>;
}

/// No bug: the control, which must pass.
#[derive(Default)]
struct Correct;

impl Bug for Correct {
    fn pop_expired(
        &mut self,
        wheel: &mut TimerWheel<Payload, CAPACITY>,
        now: Tick,
    ) -> Option<Expired<Payload>> {
        wheel.pop_expired(now)
    }
}

/// The third timer to fire is removed and never handed out.
#[derive(Default)]
struct Dropped {
    fired: usize,
}

impl Bug for Dropped {
    fn pop_expired(
        &mut self,
        wheel: &mut TimerWheel<Payload, CAPACITY>,
        now: Tick,
    ) -> Option<Expired<Payload>> {
        let expired = wheel.pop_expired(now)?;
        self.fired += 1;
        if self.fired == 3 {
            return wheel.pop_expired(now);
        }
        Some(expired)
    }
}

/// The second timer to fire is handed out twice.
#[derive(Default)]
struct Duplicated {
    fired: usize,
    again: Option<Expired<Payload>>,
}

impl Bug for Duplicated {
    fn pop_expired(
        &mut self,
        wheel: &mut TimerWheel<Payload, CAPACITY>,
        now: Tick,
    ) -> Option<Expired<Payload>> {
        if let Some(again) = self.again.take() {
            return Some(again);
        }
        let expired = wheel.pop_expired(now)?;
        self.fired += 1;
        if self.fired == 2 {
            self.again = Some(expired);
        }
        Some(expired)
    }
}

/// Timers fire one tick before their deadline.
#[derive(Default)]
struct Early;

impl Bug for Early {
    fn pop_expired(
        &mut self,
        wheel: &mut TimerWheel<Payload, CAPACITY>,
        now: Tick,
    ) -> Option<Expired<Payload>> {
        wheel.pop_expired(now.saturating_add(1))
    }
}

/// The first two timers due in a call come out in swapped order.
#[derive(Default)]
struct OutOfOrder {
    held: Option<Expired<Payload>>,
}

impl Bug for OutOfOrder {
    fn pop_expired(
        &mut self,
        wheel: &mut TimerWheel<Payload, CAPACITY>,
        now: Tick,
    ) -> Option<Expired<Payload>> {
        if let Some(held) = self.held.take() {
            return Some(held);
        }
        let first = wheel.pop_expired(now)?;
        match wheel.pop_expired(now) {
            Some(second) => {
                self.held = Some(first);
                Some(second)
            }
            None => Some(first),
        }
    }
}

/// A wheel whose `pop_expired` goes through the bug `B`; everything else passes through.
#[derive(Default)]
struct Planted<B> {
    wheel: TimerWheel<Payload, CAPACITY>,
    bug: B,
}

impl<B: Bug> TimerQueue<Payload> for Planted<B> {
    fn insert(&mut self, deadline: Tick, value: Payload) -> Result<TimerId, Full<Payload>> {
        self.wheel.insert(deadline, value)
    }

    fn cancel(&mut self, id: TimerId) -> Result<Payload, StaleTimer> {
        self.wheel.cancel(id)
    }

    fn reschedule(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer> {
        self.wheel.reschedule(id, deadline)
    }

    fn deadline(&self, id: TimerId) -> Option<Tick> {
        self.wheel.deadline(id)
    }

    fn get(&self, id: TimerId) -> Option<&Payload> {
        self.wheel.get(id)
    }

    fn get_mut(&mut self, id: TimerId) -> Option<&mut Payload> {
        self.wheel.get_mut(id)
    }

    fn next_deadline(&self) -> Option<Tick> {
        self.wheel.next_deadline()
    }

    fn pop_expired(&mut self, now: Tick) -> Option<Expired<Payload>> {
        self.bug.pop_expired(&mut self.wheel, now)
    }

    fn has_expired(&mut self, now: Tick) -> bool {
        self.wheel.has_expired(now)
    }

    fn pop_any(&mut self) -> Option<Expired<Payload>> {
        self.wheel.pop_any()
    }

    fn len(&self) -> usize {
        self.wheel.len()
    }

    fn capacity(&self) -> usize {
        self.wheel.capacity()
    }

    fn is_full(&self) -> bool {
        self.wheel.is_full()
    }
}

impl<B: Bug> QueueUnderTest for Planted<B> {
    fn fresh() -> Self {
        Self::default()
    }
    const NEXT_DEADLINE: NextDeadline = NextDeadline::NoLater;
    const CAPACITY: usize = CAPACITY;
}

/// Seven timers (two pairs share a deadline), then expiries that reach them all.
fn input() -> QueueInput {
    let insert = |when| Op::Insert {
        list: 0,
        when,
        via_trait: true,
    };
    QueueInput {
        start: Start::Small(100),
        timeouts: [50, 50, 50],
        finish: Finish::ExpireAll,
        ops: vec![
            insert(When::Soon(10)),
            insert(When::Soon(30)),
            insert(When::Soon(10)),
            insert(When::Later(3_000)),
            insert(When::Soon(30)),
            insert(When::Soon(20)),
            // Due one tick after the first expiry: an early fire takes it there.
            insert(When::Soon(26)),
            Op::Expire {
                time: Time::Forward(25),
                budget: Budget::Unlimited,
            },
            Op::Expire {
                time: Time::ForwardMore(5_000),
                budget: Budget::Unlimited,
            },
        ],
    }
}

/// Whether the checker fails on `B` (its panic message is printed, as the test's evidence).
fn caught<B: Bug>() -> bool {
    catch_unwind(AssertUnwindSafe(|| check_input::<Planted<B>>(&input()))).is_err()
}

#[test]
fn correct_wheel_passes_the_checker() {
    assert!(!caught::<Correct>());
}

#[test]
fn dropped_fire_is_caught() {
    assert!(caught::<Dropped>());
}

#[test]
fn duplicated_fire_is_caught() {
    assert!(caught::<Duplicated>());
}

#[test]
fn early_fire_is_caught() {
    assert!(caught::<Early>());
}

#[test]
fn out_of_order_fire_is_caught() {
    assert!(caught::<OutOfOrder>());
}
