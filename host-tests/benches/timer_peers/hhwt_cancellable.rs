//! Peer: the cancellable wheel of `hierarchical_hash_wheel_timer`, as it ships: every entry is
//! an `Rc` in a hash map by id, the wheel holds a `Weak` to it.

use std::time::Duration;

use hierarchical_hash_wheel_timer::wheels::cancellable::{
    CancellableTimerEntry, QuadWheelWithOverflow as CancellableWheel,
};
use hierarchical_hash_wheel_timer::wheels::TimerEntryWithDelay;
use hierarchical_hash_wheel_timer::TimerError;

use crate::contender::Contender;
use crate::hhwt::{hhwt_advance, hhwt_delay};

/// An entry of hhwt's cancellable wheel: its id (the handle) and the value.
#[derive(Debug)]
struct CancellableEntry {
    id: u64,
    value: u32,
    delay: Duration,
}

impl CancellableTimerEntry for CancellableEntry {
    type Id = u64;

    fn id(&self) -> &u64 {
        &self.id
    }
}

impl TimerEntryWithDelay for CancellableEntry {
    fn delay(&self) -> Duration {
        self.delay
    }
}

/// hhwt's cancellable wheel, as it ships: every entry is an `Rc` kept in an FxHashMap by id,
/// the wheel holds a `Weak` to it. Cancel removes the map entry (the `Weak` is dropped when its
/// slot comes up); reschedule is cancel + insert under the same id.
pub struct HhwtCancellable {
    wheel: CancellableWheel<CancellableEntry>,
    next_id: u64,
    /// Where the wheel's clock stands.
    at: u64,
    /// Inserted with a deadline at or before `at` (hhwt refuses a zero delay): fire next.
    due: Vec<u32>,
}

impl HhwtCancellable {
    pub fn new() -> Self {
        Self {
            wheel: CancellableWheel::new(),
            next_id: 0,
            at: 0,
            due: Vec::new(),
        }
    }

    fn insert_with_id(&mut self, id: u64, deadline: u64, value: u32) {
        let entry = CancellableEntry {
            id,
            value,
            delay: hhwt_delay(deadline.saturating_sub(self.at)),
        };
        match self.wheel.insert(entry) {
            Ok(()) => {}
            Err(TimerError::Expired(entry)) => self.due.push(entry.value),
            Err(TimerError::NotFound) => unreachable!("insert never answers NotFound"),
        }
    }
}

/// A handle to a timer in [`HhwtCancellable`]: its id, and the value a reschedule re-inserts
/// (the wheel keeps its entries to itself, so its users hold on to what they scheduled).
#[derive(Clone, Copy)]
pub struct CancellableHandle {
    id: u64,
    value: u32,
}

impl Contender for HhwtCancellable {
    type Handle = CancellableHandle;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> CancellableHandle {
        let id = self.next_id;
        self.next_id += 1;
        self.insert_with_id(id, deadline, value);
        CancellableHandle { id, value }
    }

    #[inline]
    fn cancel(&mut self, handle: CancellableHandle) {
        // A timer due at once sits in `due`, not in the wheel; the workloads never cancel one.
        self.wheel.cancel(&handle.id).expect("handle is live");
    }

    #[inline]
    fn reschedule(&mut self, handle: CancellableHandle, deadline: u64) -> CancellableHandle {
        // Cancel, then insert a new entry under the same id with the same value.
        self.wheel.cancel(&handle.id).expect("handle is live");
        self.insert_with_id(handle.id, deadline, handle.value);
        handle
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        for value in self.due.drain(..) {
            fired(value);
        }
        let wheel = std::cell::RefCell::new(&mut self.wheel);
        hhwt_advance(
            &mut self.at,
            now,
            || wheel.borrow().can_skip(),
            |by| wheel.borrow_mut().skip(by),
            || wheel.borrow_mut().tick(),
            |entry| fired(entry.value),
        );
    }
}
