//! [`IntegratedWheel`]: embassy's integrated timer queue (each task's timer in the task) on a
//! hierarchical wheel.

use core::task::Waker;

use crate::foreign::ForeignTimers;
use crate::item::Node;
use crate::wheel::Wheel;

/// An embassy-time timer queue that keeps each task's timer in the task, on a hierarchical
/// timing wheel linked through the tasks, plus a side queue of `FOREIGN` entries for wakers
/// that are not an embassy task's.
///
/// The contract of embassy's queues (`embassy-time-queue-utils`), for a time driver to call
/// inside its critical section:
///
/// - [`schedule_wake(at, &waker)`](Self::schedule_wake): one timer per task, the earliest
///   deadline kept; `true` when the driver must move its alarm earlier (to what
///   [`next_expiration`](Self::next_expiration) then returns). O(1).
/// - [`next_expiration(now)`](Self::next_expiration): wakes every task due at `now` and returns
///   when to arm the alarm (`u64::MAX`: nothing queued). That is exactly the earliest deadline
///   queued, so an alarm never fires for nothing. O(1) when nothing is due; otherwise O(1) per
///   task woken, plus the wheel's cascading (a timer moves at most once per level, and not at
///   all when it is at most 1,024 ticks ahead) and, when the earliest timer is in a coarse
///   slot, one walk of that slot (remembered until the slot loses that timer). While at most
///   16 tasks are queued their timers are on one list instead, walked at each expiry.
///
/// **Memory.** A task's timer (deadline, two links, waker) lives in the `TimerQueueItem` that
/// embassy-executor 0.10 keeps in every task header: this crate selects the 6-word item, the
/// size embassy's own integrated queue asks for (24 bytes on a 32-bit target). The queue itself
/// is 416 list heads and 13 bitmaps (13 levels of 32 slots) and the side queue: 1,840 bytes on a
/// 32-bit target with the default 4 side-queue entries of 16 bytes (3,592 on a 64-bit host),
/// whatever the number of tasks. There is no capacity to choose, and a `static` queue is all
/// zero bytes (`.bss`, no flash).
///
/// **Wakers that are not an embassy task's** (a `block_on`, another executor, a test's
/// `std::task::Wake`) have no item: they go to the side queue, `FOREIGN` entries (default 4),
/// each operation a scan of all of them. When it is full, a new one is woken at once instead,
/// as embassy's generic queue does when full: its task is polled early, finds its deadline not
/// reached, and registers again. Nothing is lost; only such wakers can be woken early.
///
/// **One queue per set of tasks.** The timer lives in the task, so a task's timer can be in
/// one queue only: [`new`](Self::new) is `unsafe` for that reason. Dropping the queue unlinks
/// every timer, so a later queue can take the same tasks.
///
/// # Examples
///
/// An embassy task that sleeps until tick 100 on a queue the test drives, as a time driver
/// would: the task's first poll registers its deadline; `next_expiration` says when to wake
/// and, at that time, wakes it.
///
/// ```
/// use std::cell::{Cell, RefCell};
/// use std::future::poll_fn;
/// use std::task::Poll;
///
/// use embassy_executor::raw::{Executor, TaskStorage};
/// use embassy_wheel_queue::IntegratedWheel;
///
/// # /// The executor's "something to poll" signal; this example polls by hand.
/// # #[unsafe(export_name = "__pender")]
/// # fn pender(_context: *mut ()) {}
/// std::thread_local! {
///     // SAFETY: the only integrated timer queue the tasks' wakers are given.
///     static QUEUE: RefCell<IntegratedWheel> = RefCell::new(unsafe { IntegratedWheel::new() });
///     static NOW: Cell<u64> = const { Cell::new(0) };
///     static DONE: Cell<bool> = const { Cell::new(false) };
/// }
///
/// /// Waits until tick `at`, as `embassy_time::Timer` does through its time driver.
/// async fn sleep_until(at: u64) {
///     poll_fn(|cx| {
///         if NOW.get() >= at {
///             return Poll::Ready(());
///         }
///         QUEUE.with_borrow_mut(|queue| queue.schedule_wake(at, cx.waker()));
///         Poll::Pending
///     })
///     .await
/// }
///
/// let executor: &'static Executor = Box::leak(Box::new(Executor::new(std::ptr::null_mut())));
/// let task = Box::leak(Box::new(TaskStorage::new()));
/// let token = task.spawn(|| async {
///     sleep_until(100).await;
///     DONE.set(true);
/// });
/// executor.spawner().spawn(token.unwrap());
/// // SAFETY: polled from the thread that made it, not from its pender.
/// unsafe { executor.poll() }; // the task registers tick 100
///
/// assert_eq!(QUEUE.with_borrow_mut(|queue| queue.next_expiration(0)), 100);
/// NOW.set(100);
/// assert_eq!(QUEUE.with_borrow_mut(|queue| queue.next_expiration(100)), u64::MAX);
/// // SAFETY: as above.
/// unsafe { executor.poll() }; // woken: the task runs to its end
/// assert!(DONE.get());
/// ```
pub struct IntegratedWheel<const FOREIGN: usize = 4> {
    wheel: Wheel,
    foreign: ForeignTimers<FOREIGN>,
    /// The alarm the driver armed (what `next_expiration` last returned; `u64::MAX`: none),
    /// inverted so that a new queue is all zero bytes.
    armed_inverted: u64,
}

impl<const FOREIGN: usize> IntegratedWheel<FOREIGN> {
    /// An empty queue.
    ///
    /// # Safety
    ///
    /// While this queue lives, no other timer queue that keeps timers in embassy's
    /// `TimerQueueItem` (another `IntegratedWheel`, embassy's integrated queue) may be given a
    /// waker of a task this one is given: both would write the task's one item. A queue that
    /// was given them before must have been dropped, not leaked (dropping unlinks its timers).
    /// In a firmware, the one queue inside its time driver meets this.
    ///
    /// # Examples
    ///
    /// ```
    /// use embassy_wheel_queue::IntegratedWheel;
    ///
    /// // SAFETY: the program's only integrated timer queue.
    /// let mut queue: IntegratedWheel = unsafe { IntegratedWheel::new() };
    /// assert_eq!(queue.next_expiration(0), u64::MAX);
    /// ```
    #[allow(unsafe_code)]
    pub const unsafe fn new() -> Self {
        Self {
            wheel: Wheel::new(),
            foreign: ForeignTimers::new(),
            armed_inverted: 0,
        }
    }

    /// Schedules the task of `waker` to be woken at tick `at`. A task already queued keeps the
    /// earlier of its deadline and `at` (one timer per task, as in embassy's queues); a deadline
    /// of `u64::MAX` (never) queues nothing.
    ///
    /// Returns whether the driver must move its alarm: `at` is before the alarm
    /// [`next_expiration`](Self::next_expiration) last asked for (or it never asked). The
    /// driver then calls `next_expiration(now)` and arms the alarm for what it returns (which
    /// also wakes the task at once if `at` has passed).
    ///
    /// A waker that is not an embassy task's goes to the side queue; when that is full, the
    /// waker is woken at once instead and this returns `false`.
    ///
    /// # Examples
    ///
    /// A `std` waker (no embassy task behind it) goes to the side queue, which has the same
    /// contract:
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// use std::task::{Wake, Waker};
    ///
    /// use embassy_wheel_queue::IntegratedWheel;
    /// # // embassy-executor defines the lookup of a task's timer from its waker.
    /// # use embassy_executor as _;
    /// # #[unsafe(export_name = "__pender")]
    /// # fn pender(_context: *mut ()) {}
    ///
    /// struct Wakes(AtomicUsize);
    /// impl Wake for Wakes {
    ///     fn wake(self: Arc<Self>) {
    ///         self.0.fetch_add(1, Ordering::Relaxed);
    ///     }
    /// }
    ///
    /// let wakes = Arc::new(Wakes(AtomicUsize::new(0)));
    /// let waker = Waker::from(wakes.clone());
    /// // SAFETY: the program's only integrated timer queue.
    /// let mut queue: IntegratedWheel = unsafe { IntegratedWheel::new() };
    ///
    /// assert!(queue.schedule_wake(100, &waker)); // nothing armed yet
    /// assert_eq!(queue.next_expiration(0), 100);
    /// assert!(!queue.schedule_wake(150, &waker)); // later: 100 is kept
    /// assert!(queue.schedule_wake(50, &waker)); // earlier than the alarm: move it
    /// assert_eq!(queue.next_expiration(0), 50);
    /// assert_eq!(queue.next_expiration(49), 50);
    /// assert_eq!(wakes.0.load(Ordering::Relaxed), 0); // never early
    /// assert_eq!(queue.next_expiration(50), u64::MAX);
    /// assert_eq!(wakes.0.load(Ordering::Relaxed), 1);
    /// ```
    #[inline]
    pub fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool {
        match Node::of_waker(waker) {
            // Queued for no later: the common case of a timeout registered again, kept small
            // enough to inline.
            Some(node) if node.is_queued() && node.deadline() <= at => false,
            Some(node) => self.schedule_task(at, node, waker),
            None => self.schedule_foreign(at, waker),
        }
    }

    /// Schedules the task timer `node` for `at`, which is earlier than its deadline if queued.
    #[inline(never)]
    fn schedule_task(&mut self, at: u64, node: Node, waker: &Waker) -> bool {
        if node.is_queued() {
            self.wheel.remove(node);
        } else if at == u64::MAX {
            return false;
        } else {
            node.store_waker(waker);
        }
        self.wheel.insert(node, at);
        at < self.armed()
    }

    #[inline(never)]
    fn schedule_foreign(&mut self, at: u64, waker: &Waker) -> bool {
        self.foreign.schedule(at, waker) && at < self.armed()
    }

    /// Wakes every task due at `now` and returns the tick to arm the alarm for: exactly the
    /// earliest deadline still queued (`u64::MAX`: none). Never wakes a task before its
    /// deadline. The wakers are woken from inside this call.
    ///
    /// # Examples
    ///
    /// See [`IntegratedWheel`] and [`schedule_wake`](Self::schedule_wake).
    #[inline]
    pub fn next_expiration(&mut self, now: u64) -> u64 {
        if self.wheel.next() <= now || self.foreign.next() <= now {
            self.expire(now);
        }
        let next = self.wheel.next().min(self.foreign.next());
        self.armed_inverted = !next;
        next
    }

    /// Wakes what is due at `now`, outside the inlined check whether anything is.
    fn expire(&mut self, now: u64) {
        if self.wheel.next() <= now {
            self.wheel.expire(now, |node| {
                if let Some(waker) = node.take_waker() {
                    waker.wake();
                }
            });
        }
        if self.foreign.next() <= now {
            self.foreign.expire(now);
        }
    }

    /// The alarm the driver armed (`u64::MAX`: none).
    #[inline]
    fn armed(&self) -> u64 {
        !self.armed_inverted
    }
}

impl<const FOREIGN: usize> Drop for IntegratedWheel<FOREIGN> {
    /// Unlinks every task's timer (dropping its waker, without waking it), so that the tasks
    /// can be given to another queue.
    fn drop(&mut self) {
        self.wheel.clear(|node| drop(node.take_waker()));
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::item::testing::{tasks, TestTask};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;
    use std::vec::Vec;

    #[allow(unsafe_code)]
    fn new_queue<const FOREIGN: usize>() -> IntegratedWheel<FOREIGN> {
        // SAFETY: each test's tasks are its own, and given to this queue only.
        unsafe { IntegratedWheel::new() }
    }

    fn wakes(tasks: &[&TestTask]) -> Vec<usize> {
        tasks.iter().map(|task| task.wakes()).collect()
    }

    #[test]
    fn one_timer_per_task_keeps_the_earliest_deadline() {
        let (t, w) = tasks(1);
        let mut q = new_queue::<4>();
        assert!(q.schedule_wake(30, &w[0]));
        assert_eq!(q.next_expiration(0), 30);
        assert!(!q.schedule_wake(40, &w[0]));
        assert!(q.schedule_wake(20, &w[0]));
        // A clone of a waker is the same task.
        assert!(!q.schedule_wake(25, &w[0].clone()));
        assert_eq!(q.next_expiration(0), 20);
        assert_eq!(q.next_expiration(19), 20);
        assert_eq!(t[0].wakes(), 0);
        assert_eq!(q.next_expiration(20), u64::MAX);
        assert_eq!(t[0].wakes(), 1);
        // Woken, it is free to register again.
        assert!(q.schedule_wake(40, &w[0]));
    }

    #[test]
    fn alarm_is_exactly_the_earliest_deadline_at_every_level() {
        let deadlines = [7, 16, 300, 5_000, 70_000, 1 << 33, u64::MAX - 1];
        let (t, w) = tasks(deadlines.len());
        let mut q = new_queue::<4>();
        for (waker, &at) in w.iter().zip(&deadlines).rev() {
            q.schedule_wake(at, waker);
        }
        let mut now = 0;
        for (i, &at) in deadlines.iter().enumerate() {
            assert_eq!(q.next_expiration(now), at);
            assert_eq!(t[i].wakes(), 0, "task {i} early");
            now = at;
            let next = q.next_expiration(now);
            assert_eq!(t[i].wakes(), 1, "task {i} not woken at {at}");
            assert_eq!(next, deadlines.get(i + 1).copied().unwrap_or(u64::MAX));
        }
    }

    #[test]
    fn passed_deadline_is_woken_at_the_next_expiration() {
        let (t, w) = tasks(2);
        let mut q = new_queue::<4>();
        q.schedule_wake(1_000, &w[0]);
        assert_eq!(q.next_expiration(500), 1_000);
        assert!(q.schedule_wake(100, &w[1]));
        assert_eq!(q.next_expiration(500), 1_000);
        assert_eq!(wakes(&t), [0, 1]);
    }

    #[test]
    fn never_queues_nothing_and_keeps_an_earlier_deadline() {
        let (t, w) = tasks(2);
        let mut q = new_queue::<4>();
        assert!(!q.schedule_wake(u64::MAX, &w[0]));
        assert_eq!(q.next_expiration(0), u64::MAX);
        assert!(q.schedule_wake(10, &w[1]));
        assert!(!q.schedule_wake(u64::MAX, &w[1]));
        assert_eq!(q.next_expiration(10), u64::MAX);
        assert_eq!(wakes(&t), [0, 1]);
    }

    #[test]
    fn coarse_slot_minimum_follows_a_timer_that_moves_out() {
        // Both in one level-2 slot (ticks 256..512 from 0); the earlier moves to level 0.
        let (t, w) = tasks(3);
        let mut q = new_queue::<4>();
        q.schedule_wake(300, &w[0]);
        q.schedule_wake(400, &w[1]);
        assert_eq!(q.next_expiration(0), 300);
        assert!(q.schedule_wake(5, &w[0]));
        assert_eq!(q.next_expiration(0), 5);
        assert_eq!(q.next_expiration(5), 400);
        assert_eq!(wakes(&t), [1, 0, 0]);
        // A timer joining the walked slot, earlier than its minimum.
        assert!(q.schedule_wake(350, &w[2]));
        assert_eq!(q.next_expiration(5), 350);
        assert_eq!(q.next_expiration(350), 400);
        assert_eq!(q.next_expiration(400), u64::MAX);
        assert_eq!(wakes(&t), [1, 1, 1]);
    }

    #[test]
    fn timers_move_to_the_levels_and_back_as_their_number_changes() {
        // 40 timers: more than fit on the list, so they spread over the levels; as they expire
        // and fewer than 8 are left, they gather on the list again, the next deadline exact all
        // along.
        let (t, w) = tasks(40);
        let mut q = new_queue::<4>();
        let deadline = |i: u64| 10 + i * 37 + (i % 3) * 5_000;
        for (i, waker) in w.iter().enumerate() {
            q.schedule_wake(deadline(i as u64), waker);
        }
        let mut expected: Vec<u64> = (0..40).map(deadline).collect();
        expected.sort_unstable();
        let mut now = 0;
        for &due in &expected {
            assert_eq!(q.next_expiration(now), due);
            now = due;
        }
        assert_eq!(q.next_expiration(now), u64::MAX);
        assert!(t.iter().all(|task| task.wakes() == 1));
        // And again, from the list.
        assert!(q.schedule_wake(now + 5, &w[0]));
        assert_eq!(q.next_expiration(now), now + 5);
    }

    /// A waker that is no embassy task's.
    struct Foreign(AtomicUsize);
    impl Wake for Foreign {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn foreign(n: usize) -> (Vec<Arc<Foreign>>, Vec<Waker>) {
        let f: Vec<_> = (0..n)
            .map(|_| Arc::new(Foreign(AtomicUsize::new(0))))
            .collect();
        let w = f.iter().map(|f| Waker::from(f.clone())).collect();
        (f, w)
    }

    fn foreign_wakes(f: &[Arc<Foreign>]) -> Vec<usize> {
        f.iter().map(|f| f.0.load(Ordering::Relaxed)).collect()
    }

    #[test]
    fn full_side_queue_wakes_the_newcomer_at_once_and_loses_nothing() {
        let (f, w) = foreign(3);
        let (t, tw) = tasks(1);
        let mut q = new_queue::<2>();
        assert!(q.schedule_wake(10, &w[0]));
        assert_eq!(q.next_expiration(0), 10);
        assert!(!q.schedule_wake(20, &w[1]));
        assert!(!q.schedule_wake(5, &w[2]));
        assert_eq!(foreign_wakes(&f), [0, 0, 1]);
        // Tasks do not need the side queue.
        assert!(q.schedule_wake(7, &tw[0]));
        assert_eq!(q.next_expiration(0), 7);
        assert_eq!(q.next_expiration(7), 10);
        assert_eq!(q.next_expiration(10), 20);
        assert_eq!(foreign_wakes(&f), [1, 0, 1]);
        assert!(q.schedule_wake(15, &w[2]));
        assert_eq!(q.next_expiration(15), 20);
        assert_eq!(q.next_expiration(20), u64::MAX);
        assert_eq!(foreign_wakes(&f), [1, 1, 2]);
        assert_eq!(t[0].wakes(), 1);
    }

    #[test]
    fn dropped_queue_lets_go_of_its_tasks() {
        let (t, w) = tasks(2);
        let (f, fw) = foreign(1);
        let mut q = new_queue::<4>();
        q.schedule_wake(100, &w[0]);
        q.schedule_wake(5_000, &w[1]);
        q.schedule_wake(100, &fw[0]);
        drop(q);
        assert_eq!(
            Arc::strong_count(&f[0]),
            2,
            "the side queue's clone is dropped"
        );
        let mut q = new_queue::<4>();
        // Not queued any more: a later deadline is taken, not ignored.
        assert!(q.schedule_wake(200, &w[0]));
        assert_eq!(q.next_expiration(0), 200);
        assert_eq!(q.next_expiration(10_000), u64::MAX);
        assert_eq!(wakes(&t), [1, 0]);
    }

    /// SplitMix64: seeded randomness without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Random schedules and expiries, checked against a model (each task's deadline or none)
    /// after every step: what `schedule_wake` answers, the alarm `next_expiration` returns, and
    /// which tasks have been woken, how often.
    fn check_against_model(seed: u64, n: usize, steps: usize) {
        let mut rng = Rng(seed);
        let (t, w) = tasks(n);
        let mut q = new_queue::<4>();
        let mut model: Vec<Option<u64>> = std::vec![None; n];
        let mut woken = std::vec![0; n];
        let mut armed = u64::MAX;
        let mut now = 0u64;
        for step in 0..steps {
            let context = |now: u64| std::format!("seed {seed:#x}, step {step}, now {now}");
            if rng.below(3) != 0 {
                let i = rng.below(n as u64) as usize;
                let at = match rng.below(8) {
                    0 => now.saturating_sub(rng.below(100)),
                    1 => now,
                    2 | 3 => now.saturating_add(1 + rng.below(20)),
                    4 => now.saturating_add(rng.below(5_000)),
                    5 => now.saturating_add(rng.below(1 << 40)),
                    6 => u64::MAX - rng.below(3),
                    _ => now.saturating_add(rng.below(300)),
                };
                let expected = match model[i] {
                    Some(deadline) if deadline <= at => false,
                    None if at == u64::MAX => false,
                    _ => {
                        model[i] = Some(at);
                        at < armed
                    }
                };
                assert_eq!(q.schedule_wake(at, &w[i]), expected, "{}", context(now));
            } else {
                now = match rng.below(4) {
                    0 => now,
                    1 if armed != u64::MAX => armed,
                    2 => now.saturating_add(rng.below(1 << 20)),
                    _ => now.saturating_add(rng.below(50)),
                };
                for (i, deadline) in model.iter_mut().enumerate() {
                    if deadline.is_some_and(|d| d <= now) {
                        *deadline = None;
                        woken[i] += 1;
                    }
                }
                armed = q.next_expiration(now);
                let earliest = model.iter().flatten().min().copied().unwrap_or(u64::MAX);
                assert_eq!(armed, earliest, "{}", context(now));
            }
            assert_eq!(wakes(&t), woken, "{}", context(now));
        }
        // Nothing lost: everything queued is woken at the end of time.
        q.next_expiration(u64::MAX);
        for (i, deadline) in model.iter().enumerate() {
            woken[i] += usize::from(deadline.is_some());
        }
        assert_eq!(wakes(&t), woken, "seed {seed:#x}, at the end");
    }

    #[test]
    fn random_schedules_match_the_model() {
        let (cases, steps) = if cfg!(miri) { (4, 300) } else { (300, 2_000) };
        for case in 0..cases {
            let n = [1, 3, 8, 64][case % 4];
            check_against_model(0x5eed_0000 + case as u64, n, steps);
        }
    }
}
