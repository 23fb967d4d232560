//! [`WakerQueue`] ([`WheelQueue`], [`HeapQueue`]): timer queues for any executor's wakers, on
//! timer-core's queues, each waker's timer found through a hash index.
#![forbid(unsafe_code)]

use core::task::Waker;

use heapless::index_map::FnvIndexMap;
use timer_core::{Tick, TimerHeap, TimerId, TimerQueue, TimerWheel};

/// A waker's identity: its data and vtable pointers, as `Waker::will_wake` compares them.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct WakerKey {
    data: usize,
    vtable: usize,
}

impl WakerKey {
    fn of(waker: &Waker) -> Self {
        Self {
            data: waker.data() as usize,
            vtable: waker.vtable() as *const _ as usize,
        }
    }
}

/// An embassy-style timer queue of at most `N` wakers (a power of two, at least 2) over the
/// timer-core queue `Q`: [`WheelQueue`] on the wheel, [`HeapQueue`] on the heap. See the
/// [crate docs](crate#queues-for-any-executor).
pub struct WakerQueue<Q, const N: usize> {
    timers: Q,
    /// The timer of each waker queued.
    index: FnvIndexMap<WakerKey, TimerId, N>,
    /// The alarm the driver armed (what `next_expiration` last returned; `u64::MAX`: none),
    /// stored inverted so that an empty queue is all zero bytes and a `static` of it goes to
    /// `.bss` rather than costing its size again in flash.
    armed_inverted: Tick,
}

/// [`WakerQueue`] on timer-core's wheel: O(1) per operation whatever `N`, but the wheel's fixed
/// list heads take 3 KiB whatever `N`, and its alarm may come early (at most once per wheel
/// level). For many wakers.
pub type WheelQueue<const N: usize> = WakerQueue<TimerWheel<Waker, N>, N>;

/// [`WakerQueue`] on timer-core's 4-ary heap: O(log n) per operation, exact alarms, and nothing
/// but its `N` slots (40 bytes each on a 32-bit target). For the few wakers of a
/// microcontroller's executor: much smaller than [`WheelQueue`], and as fast for this few.
pub type HeapQueue<const N: usize> = WakerQueue<TimerHeap<Waker, N>, N>;

impl<const N: usize> WheelQueue<N> {
    /// An empty queue.
    pub const fn new() -> Self {
        Self {
            timers: TimerWheel::new(),
            index: FnvIndexMap::new(),
            armed_inverted: 0,
        }
    }
}

impl<const N: usize> Default for WheelQueue<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> HeapQueue<N> {
    /// An empty queue.
    pub const fn new() -> Self {
        Self {
            timers: TimerHeap::new(),
            index: FnvIndexMap::new(),
            armed_inverted: 0,
        }
    }
}

impl<const N: usize> Default for HeapQueue<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<Q: TimerQueue<Waker>, const N: usize> WakerQueue<Q, N> {
    /// Wakers queued.
    pub fn len(&self) -> usize {
        self.timers.len()
    }

    /// Whether no waker is queued.
    pub fn is_empty(&self) -> bool {
        self.timers.is_empty()
    }

    /// Schedules `waker` to be woken at tick `at`. A waker already queued keeps the earlier of
    /// its deadline and `at` (one entry per waker, as in embassy's queues).
    ///
    /// Returns whether the driver must re-arm its alarm: `at` is before the alarm
    /// [`next_expiration`](Self::next_expiration) last asked for.
    ///
    /// When the queue is full, `waker` is woken at once instead (its task polls early and
    /// registers again) and this returns `false`.
    pub fn schedule_wake(&mut self, at: Tick, waker: &Waker) -> bool {
        let key = WakerKey::of(waker);
        if let Some(&id) = self.index.get(&key) {
            match self.timers.deadline(id) {
                Some(deadline) if deadline <= at => return false,
                Some(_) => {
                    let _ = self.timers.reschedule(id, at);
                    return self.rearm_for(at);
                }
                // Cannot happen (an entry leaves the index when its timer fires); heal it.
                None => {
                    self.index.remove(&key);
                }
            }
        }
        match self.timers.insert(at, waker.clone()) {
            Ok(id) => {
                // Cannot fail: the index holds exactly the queue's timers, and both hold N.
                let _ = self.index.insert(key, id);
                self.rearm_for(at)
            }
            Err(full) => {
                full.0.wake();
                false
            }
        }
    }

    fn rearm_for(&mut self, at: Tick) -> bool {
        if at < self.armed() {
            self.armed_inverted = !at;
            true
        } else {
            false
        }
    }

    /// Wakes every waker due at `now` and returns the tick to arm the alarm for (`u64::MAX`:
    /// none). Never wakes a waker before its deadline, and never asks for an alarm after the
    /// next deadline. On the heap the alarm is the next deadline; on the wheel it may be a
    /// little before it (the start of the coarse wheel slot that holds it), at most once per
    /// wheel level, after which it asks for a later one.
    pub fn next_expiration(&mut self, now: Tick) -> Tick {
        while let Some(expired) = self.timers.pop_expired(now) {
            self.index.remove(&WakerKey::of(&expired.value));
            expired.value.wake();
        }
        // The wheel's next deadline may be a little early (never late): the driver then wakes,
        // finds nothing due, and arms again.
        let armed = self.timers.next_deadline().unwrap_or(Tick::MAX);
        self.armed_inverted = !armed;
        armed
    }

    /// The alarm the driver armed (`u64::MAX`: none).
    fn armed(&self) -> Tick {
        !self.armed_inverted
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;
    use std::vec::Vec;

    struct Task(AtomicUsize);
    impl Wake for Task {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn tasks(n: usize) -> (Vec<Arc<Task>>, Vec<Waker>) {
        let tasks: Vec<_> = (0..n)
            .map(|_| Arc::new(Task(AtomicUsize::new(0))))
            .collect();
        let wakers = tasks.iter().map(|t| Waker::from(t.clone())).collect();
        (tasks, wakers)
    }

    fn woken(task: &Task) -> usize {
        task.0.load(Ordering::Relaxed)
    }

    /// The contract tests, for each queue.
    macro_rules! contract_tests {
        ($name:ident, $queue:ident) => {
            mod $name {
                use super::*;

                type Queue<const N: usize> = $queue<N>;

                #[test]
                fn one_entry_per_waker_keeps_the_earliest() {
                    let (t, w) = tasks(1);
                    let mut q: Queue<4> = Queue::new();
                    assert!(q.schedule_wake(30, &w[0]));
                    assert!(q.next_expiration(0) <= 30);
                    assert!(!q.schedule_wake(40, &w[0]));
                    assert!(q.schedule_wake(20, &w[0]));
                    // A clone of a waker is the same waker.
                    assert!(!q.schedule_wake(25, &w[0].clone()));
                    assert_eq!(q.len(), 1);
                    q.next_expiration(19);
                    assert_eq!(woken(&t[0]), 0);
                    assert_eq!(q.next_expiration(20), Tick::MAX);
                    assert_eq!(woken(&t[0]), 1);
                    assert!(q.is_empty());
                }

                /// Runs the alarm as a driver would: from `now`, to each armed time, until `until`;
                /// returns the alarm times seen.
                fn run_alarm<const N: usize>(
                    q: &mut Queue<N>,
                    mut now: Tick,
                    until: Tick,
                ) -> Vec<Tick> {
                    let mut alarms = Vec::new();
                    loop {
                        let next = q.next_expiration(now);
                        if next > until {
                            return alarms;
                        }
                        alarms.push(next);
                        now = next;
                    }
                }

                #[test]
                fn rearm_only_when_earlier_than_the_armed_alarm() {
                    let (t, w) = tasks(3);
                    let mut q: Queue<4> = Queue::new();
                    assert!(q.schedule_wake(100, &w[0]));
                    let armed = q.next_expiration(0);
                    assert!(armed <= 100);
                    assert!(!q.schedule_wake(200, &w[1]));
                    assert!(q.schedule_wake(armed - 1, &w[2]));
                    // The alarm may come early (the start of a coarse wheel slot: at most once per level),
                    // never late, and nothing is woken before its deadline.
                    let alarms = run_alarm(&mut q, 0, 100);
                    assert_eq!(alarms.last(), Some(&100));
                    assert!(alarms.len() <= 4, "{alarms:?}");
                    assert_eq!((woken(&t[0]), woken(&t[1]), woken(&t[2])), (1, 0, 1));
                }

                #[test]
                fn full_queue_wakes_the_newcomer_at_once_and_loses_nothing() {
                    let (t, w) = tasks(3);
                    let mut q: Queue<2> = Queue::new();
                    assert!(q.schedule_wake(10, &w[0]));
                    assert!(!q.schedule_wake(20, &w[1]));
                    assert!(!q.schedule_wake(5, &w[2]));
                    assert_eq!(woken(&t[2]), 1);
                    assert!(q.next_expiration(10) <= 20);
                    assert_eq!(woken(&t[0]), 1);
                    assert_eq!(woken(&t[1]), 0);
                    // Room again: the woken task registers and is queued.
                    assert!(q.schedule_wake(15, &w[2]));
                    assert_eq!(q.next_expiration(20), Tick::MAX);
                    assert_eq!((woken(&t[1]), woken(&t[2])), (1, 2));
                }

                #[test]
                fn many_sleepers_wake_in_deadline_order_never_early() {
                    let n = 1000;
                    let (t, w) = tasks(n);
                    let mut q: Queue<1024> = Queue::new();
                    for (i, waker) in w.iter().enumerate() {
                        q.schedule_wake((i as u64 * 7919) % 5000 + 1, waker);
                    }
                    let mut now = 0;
                    while now < 6000 {
                        let next = q.next_expiration(now);
                        for (i, task) in t.iter().enumerate() {
                            let due = (i as u64 * 7919) % 5000 + 1;
                            assert_eq!(woken(task), usize::from(due <= now), "task {i} at {now}");
                        }
                        if next == Tick::MAX {
                            break;
                        }
                        assert!(next > now);
                        now = next;
                    }
                    assert!(t.iter().all(|task| woken(task) == 1));
                }
            }
        };
    }

    contract_tests!(wheel, WheelQueue);
    contract_tests!(heap, HeapQueue);

    #[test]
    fn heap_alarm_is_exactly_the_next_deadline() {
        let (t, w) = tasks(3);
        let mut q: HeapQueue<4> = HeapQueue::new();
        assert!(q.schedule_wake(100, &w[0]));
        assert_eq!(q.next_expiration(0), 100);
        assert!(q.schedule_wake(70, &w[1]));
        assert!(!q.schedule_wake(90, &w[2]));
        assert_eq!(q.next_expiration(0), 70);
        assert_eq!(q.next_expiration(70), 90);
        assert_eq!((woken(&t[0]), woken(&t[1]), woken(&t[2])), (0, 1, 0));
        assert_eq!(q.next_expiration(90), 100);
        assert_eq!(q.next_expiration(100), Tick::MAX);
        assert!(t.iter().all(|task| woken(task) == 1));
    }
}
