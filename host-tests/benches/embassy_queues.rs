//! `embassy-wheel-queue`'s three queues (`IntegratedWheel`, which keeps each task's timer in the
//! task on a hierarchical wheel; `WheelQueue` on timer-core's wheel and `HeapQueue` on its heap,
//! both finding a waker's timer by hashing) against embassy's two timer queues from
//! `embassy-time-queue-utils`: the generic queue (`ConstGenericQueue`) and the integrated queue
//! (`queue_integrated::Queue`), on the work an executor gives its timer queue.
//!
//! ```text
//! cargo bench -p host-tests --bench embassy_queues
//! ```
//!
//! `n` embassy-executor tasks (`raw::TaskStorage`s on a `raw::Executor` this bench polls), and a
//! queue driven as embassy's time drivers drive it: when the alarm fires, `next_expiration(now)`
//! wakes the tasks due and gives the next alarm; the executor polls the woken tasks, and each
//! registers its next deadline with `schedule_wake` and its own task waker; a `schedule_wake`
//! that answers `true` (the alarm must move) is followed by `next_expiration(now)`. The two
//! integrated queues need such wakers (they find the task header behind the waker and link
//! tasks through the header's timer-queue item); the other queues get the same wakers, so every
//! queue pays the same wake and poll. The two integrated queues cannot share tasks (each lays
//! its own timer over the item), so `IntegratedWheel` gets a second set of `n` tasks, made the
//! same way. Time is simulated ticks; the table
//! gives thread CPU time per queue operation (a task's `schedule_wake` with the driver's re-arm
//! it causes, or a wake with the executor's poll of the woken task; `next_expiration` calls
//! that wake nothing count as time, not as operations), the median of 5 runs. Workloads:
//!
//! - **sleepers**: every task sleeps a random 1..=1000 ticks, wakes, and sleeps again
//!   (`Timer::after` in a loop); 20 wake-ups per task, at most 200,000 in all;
//! - **timeouts**: every task waits on I/O with a 1,000-tick timeout (`with_timeout`); each tick
//!   one random task's I/O completes (95% of the time; so most timeouts never fire) and it
//!   starts its next I/O with a new timeout, registering `now + 1000`. embassy's queues have no
//!   cancel: one entry per waker keeps the earlier deadline, so a stale timeout still wakes its
//!   task, which registers again. 200,000 ticks.
//!
//! Every queue gets the same seeded sequence: tasks woken at one tick re-register in task order.
//! Capacity is the next power of two at or above `n` for `WheelQueue`, `HeapQueue` and the
//! generic queue (the generic queue's cost grows with the timers it holds, not its capacity);
//! the integrated queues have none (their entries live in the tasks).
//!
//! `EMBASSY_QUEUES_N=8,64` runs only the rows of those task counts.
//!
//! The bench also prints each queue's memory on this (64-bit) host: the queue's own bytes, and
//! the bytes each task carries for it.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use embassy_executor::raw::{Executor, TaskStorage};
use embassy_executor_timer_queue::TimerQueueItem;
use embassy_time_queue_utils::queue_generic::ConstGenericQueue;
use embassy_time_queue_utils::queue_integrated::Queue as IntegratedQueue;
use embassy_wheel_queue::{HeapQueue, IntegratedWheel, WheelQueue};
use host_tests::cpu_time::thread_cpu_time;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// What a queue under test must do.
trait Queue {
    fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool;
    fn next_expiration(&mut self, now: u64) -> u64;
    /// Lets go of every task before the queue is dropped.
    fn release(&mut self) {}
}

impl<const N: usize> Queue for WheelQueue<N> {
    fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool {
        WheelQueue::schedule_wake(self, at, waker)
    }
    fn next_expiration(&mut self, now: u64) -> u64 {
        WheelQueue::next_expiration(self, now)
    }
}

impl<const N: usize> Queue for HeapQueue<N> {
    fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool {
        HeapQueue::schedule_wake(self, at, waker)
    }
    fn next_expiration(&mut self, now: u64) -> u64 {
        HeapQueue::next_expiration(self, now)
    }
}

impl Queue for IntegratedWheel {
    fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool {
        IntegratedWheel::schedule_wake(self, at, waker)
    }
    fn next_expiration(&mut self, now: u64) -> u64 {
        IntegratedWheel::next_expiration(self, now)
    }
    /// Wakes every task, so that the executor's run queue is empty for the next run (dropping
    /// the queue would unlink them too, without waking).
    fn release(&mut self) {
        IntegratedWheel::next_expiration(self, u64::MAX);
    }
}

/// A new `IntegratedWheel` for one run.
fn integrated_wheel() -> IntegratedWheel {
    // SAFETY: `IntegratedWheel`s get their own set of tasks (`row`), which no other integrated
    // queue sees, and each run's queue is dropped before the next is made.
    unsafe { IntegratedWheel::new() }
}

impl<const N: usize> Queue for ConstGenericQueue<N> {
    fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool {
        ConstGenericQueue::schedule_wake(self, at, waker)
    }
    fn next_expiration(&mut self, now: u64) -> u64 {
        ConstGenericQueue::next_expiration(self, now)
    }
}

impl Queue for IntegratedQueue {
    fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool {
        IntegratedQueue::schedule_wake(self, at, waker)
    }
    fn next_expiration(&mut self, now: u64) -> u64 {
        IntegratedQueue::next_expiration(self, now)
    }
    /// Its entries live in the task headers, which outlive the queue: a task left linked would
    /// look queued to the next integrated queue. Waking everything unlinks every task.
    fn release(&mut self) {
        IntegratedQueue::next_expiration(self, u64::MAX);
    }
}

/// The executor polls nothing on its own: the bench calls `poll` after each `next_expiration`.
#[unsafe(export_name = "__pender")]
fn pender(_context: *mut ()) {}

/// What the tasks share with the bench: each task's waker, and the tasks polled since the bench
/// last looked.
#[derive(Default)]
struct Shared {
    wakers: RefCell<Vec<Option<Waker>>>,
    polled: RefCell<Vec<usize>>,
}

/// A task that never ends: at its first poll it hands over its waker; at every later poll
/// (after a wake) it reports itself runnable, as a task back from `Timer::after` would.
struct Sleeper {
    id: usize,
    first_poll: bool,
    shared: Rc<Shared>,
}

impl Future for Sleeper {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.first_poll {
            self.first_poll = false;
            self.shared.wakers.borrow_mut()[self.id] = Some(cx.waker().clone());
        } else {
            self.shared.polled.borrow_mut().push(self.id);
        }
        Poll::Pending
    }
}

/// `n` spawned tasks and their executor, made once and lent to every run.
struct Tasks {
    executor: &'static Executor,
    wakers: Vec<Waker>,
    shared: Rc<Shared>,
}

impl Tasks {
    fn spawn(n: usize) -> Self {
        let executor: &'static Executor = Box::leak(Box::new(Executor::new(std::ptr::null_mut())));
        let storage: &'static [TaskStorage<Sleeper>] =
            Box::leak((0..n).map(|_| TaskStorage::new()).collect());
        let shared = Rc::new(Shared::default());
        shared.wakers.borrow_mut().resize(n, None);
        let spawner = executor.spawner();
        for (id, task) in storage.iter().enumerate() {
            let shared = shared.clone();
            let token = task.spawn(move || Sleeper {
                id,
                first_poll: true,
                shared,
            });
            spawner.spawn(token.expect("a fresh TaskStorage is free"));
        }
        let mut tasks = Self {
            executor,
            wakers: Vec::new(),
            shared,
        };
        tasks.run_woken(&mut Vec::new());
        tasks.wakers = tasks
            .shared
            .wakers
            .borrow_mut()
            .drain(..)
            .flatten()
            .collect();
        assert_eq!(tasks.wakers.len(), n, "every task handed over its waker");
        tasks
    }

    /// Polls the woken tasks; appends their ids to `ready` in task order.
    fn run_woken(&self, ready: &mut Vec<usize>) {
        // SAFETY: called only on the thread that made the executor, and never from the pender
        // (which does nothing), so `poll` is not re-entered.
        unsafe { self.executor.poll() };
        let start = ready.len();
        ready.extend(self.shared.polled.borrow_mut().drain(..));
        ready[start..].sort_unstable();
    }

    /// Wakes every task `queue` still holds and lets go of them, outside the timed part.
    fn release(&self, queue: &mut impl Queue) {
        queue.release();
        self.run_woken(&mut Vec::new());
    }
}

/// A time driver over a queue, as embassy's drivers (and `firmware/src/cmsdk_time.rs`) use it:
/// the alarm fires at the deadline the queue last gave, and a `schedule_wake` that answers
/// `true` (the alarm must move) is followed by `next_expiration(now)` to get the new one.
struct Driver<'q, Q> {
    queue: &'q mut Q,
    alarm: u64,
}

impl<'q, Q: Queue> Driver<'q, Q> {
    fn new(queue: &'q mut Q) -> Self {
        Self {
            queue,
            alarm: u64::MAX,
        }
    }

    /// A task asks to be woken at `at`.
    fn schedule_wake(&mut self, now: u64, at: u64, waker: &Waker) {
        if self.queue.schedule_wake(at, waker) {
            self.alarm = self.queue.next_expiration(now);
        }
    }

    /// Time is `now`: if the alarm is due, it fires and the queue wakes what is due.
    fn advance(&mut self, now: u64) {
        if now >= self.alarm {
            self.alarm = self.queue.next_expiration(now);
        }
    }
}

/// Sleepers; returns (queue operations, CPU time).
fn sleepers(queue: &mut impl Queue, tasks: &Tasks, n: usize, seed: u64) -> (u64, Duration) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let wakers = &tasks.wakers[..n];
    let total = (20 * n).min(200_000);
    let start = thread_cpu_time();
    let mut driver = Driver::new(queue);
    let mut ops = 0u64;
    let mut now = 0;
    for waker in wakers {
        driver.schedule_wake(now, rng.random_range(1..=1000), waker);
        ops += 1;
    }
    let mut woken = 0;
    let mut ready = Vec::new();
    while woken < total {
        // Nothing happens between alarms: time jumps to the next one.
        now = driver.alarm.max(now);
        driver.advance(now);
        tasks.run_woken(&mut ready);
        for id in ready.drain(..) {
            woken += 1;
            ops += 2; // the wake and the new schedule_wake
            driver.schedule_wake(now, now + rng.random_range(1..=1000), &wakers[id]);
        }
    }
    let time = thread_cpu_time() - start;
    tasks.release(queue);
    (ops, time)
}

/// Timeouts, mostly not reached; returns (queue operations, CPU time).
fn timeouts(queue: &mut impl Queue, tasks: &Tasks, n: usize, seed: u64) -> (u64, Duration) {
    const TIMEOUT: u64 = 1000;
    let mut rng = SmallRng::seed_from_u64(seed);
    let wakers = &tasks.wakers[..n];
    let start = thread_cpu_time();
    let mut driver = Driver::new(queue);
    let mut ops = 0u64;
    for waker in wakers {
        driver.schedule_wake(0, TIMEOUT, waker);
        ops += 1;
    }
    let mut ready = Vec::new();
    for now in 1..=200_000u64 {
        if rng.random_bool(0.95) {
            // One task's I/O completes: its next I/O starts with a new timeout.
            let id = rng.random_range(0..n);
            driver.schedule_wake(now, now + TIMEOUT, &wakers[id]);
            ops += 1;
        }
        driver.advance(now);
        tasks.run_woken(&mut ready);
        for id in ready.drain(..) {
            // Woken by a timeout (stale or real): it registers its current deadline again.
            driver.schedule_wake(now, now + TIMEOUT, &wakers[id]);
            ops += 2;
        }
    }
    let time = thread_cpu_time() - start;
    tasks.release(queue);
    (ops, time)
}

/// A queue's figures on one workload: nanoseconds per operation (median run), and the
/// operations of all runs (equal for all queues when they woke the same tasks at the same ticks).
struct Figures {
    ns_per_op: f64,
    ops: u64,
}

fn figures(mut runs: Vec<(u64, Duration)>) -> Figures {
    let ops = runs.iter().map(|(ops, _)| ops).sum();
    runs.sort_by_key(|(ops, time)| time.as_nanos() / u128::from((*ops).max(1)));
    let (median_ops, time) = runs[runs.len() / 2];
    Figures {
        ns_per_op: time.as_nanos() as f64 / median_ops as f64,
        ops,
    }
}

/// Figures on (sleepers, timeouts), `runs` runs each.
fn measure<Q: Queue>(new: impl Fn() -> Q, tasks: &Tasks, n: usize, runs: u64) -> [Figures; 2] {
    let s = figures(
        (0..runs)
            .map(|i| sleepers(&mut new(), tasks, n, 7 + i))
            .collect(),
    );
    let t = figures(
        (0..runs)
            .map(|i| timeouts(&mut new(), tasks, n, 7 + i))
            .collect(),
    );
    [s, t]
}

/// One table row per workload at `n` tasks: each queue's ns/op and its ratio to the faster of
/// embassy's two queues. `own_tasks` are `IntegratedWheel`'s (see the header).
fn row<const N: usize>(
    n: usize,
    tasks: &Tasks,
    own_tasks: &Tasks,
    runs: u64,
    table: &mut Vec<String>,
) {
    let wheel = measure(WheelQueue::<N>::new, tasks, n, runs);
    let heap = measure(HeapQueue::<N>::new, tasks, n, runs);
    let generic = measure(ConstGenericQueue::<N>::new, tasks, n, runs);
    let integrated = measure(IntegratedQueue::new, tasks, n, runs);
    let ours = measure(integrated_wheel, own_tasks, n, runs);
    for (w, name) in ["sleepers", "timeouts"].iter().enumerate() {
        let queues = [&ours[w], &wheel[w], &heap[w], &generic[w], &integrated[w]];
        assert!(
            queues.iter().all(|q| q.ops == ours[w].ops),
            "{name}, n = {n}: the queues did different work ({:?} operations)",
            queues.map(|q| q.ops)
        );
        let best = generic[w].ns_per_op.min(integrated[w].ns_per_op);
        let cells: Vec<String> = queues
            .iter()
            .map(|q| format!("{:.1} ({:.2})", q.ns_per_op, q.ns_per_op / best))
            .collect();
        table.push(format!("| {name} | {n} | {} |", cells.join(" | ")));
    }
}

/// Each queue's memory on this host: its own bytes (at `N` = 8 and 64 for the queues with a
/// capacity) and the bytes each task carries for it.
fn memory() -> Vec<String> {
    use std::mem::size_of;
    let item = size_of::<TimerQueueItem>();
    vec![
        "| queue | queue bytes, 8 tasks | queue bytes, 64 tasks | bytes in each task |".into(),
        "|---|--:|--:|--:|".into(),
        format!(
            "| IntegratedWheel | {} | {} | {item} |",
            size_of::<IntegratedWheel>(),
            size_of::<IntegratedWheel>()
        ),
        format!(
            "| WheelQueue | {} | {} | 0 |",
            size_of::<WheelQueue<8>>(),
            size_of::<WheelQueue<64>>()
        ),
        format!(
            "| HeapQueue | {} | {} | 0 |",
            size_of::<HeapQueue<8>>(),
            size_of::<HeapQueue<64>>()
        ),
        format!(
            "| embassy generic queue | {} | {} | 0 |",
            size_of::<ConstGenericQueue<8>>(),
            size_of::<ConstGenericQueue<64>>()
        ),
        format!(
            "| embassy integrated queue | {} | {} | {item} |",
            size_of::<IntegratedQueue>(),
            size_of::<IntegratedQueue>()
        ),
    ]
}

fn main() {
    // `cargo test --benches` runs this without `--bench`: one quick pass as a smoke test.
    if !std::env::args().any(|a| a == "--bench") {
        let tasks = Tasks::spawn(8);
        let own_tasks = Tasks::spawn(8);
        row::<8>(8, &tasks, &own_tasks, 1, &mut Vec::new());
        return;
    }
    let tasks = Tasks::spawn(10_000);
    let own_tasks = Tasks::spawn(10_000);
    let mut table = vec![
        "| workload | n | IntegratedWheel | WheelQueue | HeapQueue | embassy generic queue | embassy integrated queue |"
            .to_string(),
        "|---|--:|--:|--:|--:|--:|--:|".to_string(),
    ];
    // `EMBASSY_QUEUES_N=8,64` runs only those rows (to try a change quickly).
    let only: Option<Vec<usize>> = std::env::var("EMBASSY_QUEUES_N").ok().map(|list| {
        list.split(',')
            .filter_map(|n| n.trim().parse().ok())
            .collect()
    });
    let wanted = |n: usize| only.as_ref().is_none_or(|only| only.contains(&n));
    if wanted(8) {
        row::<8>(8, &tasks, &own_tasks, 5, &mut table);
    }
    if wanted(64) {
        row::<64>(64, &tasks, &own_tasks, 5, &mut table);
    }
    if wanted(1000) {
        row::<1024>(1000, &tasks, &own_tasks, 5, &mut table);
    }
    if wanted(10_000) {
        row::<16384>(10_000, &tasks, &own_tasks, 5, &mut table);
    }
    println!("ns per queue operation (in brackets: ratio to the faster embassy queue)");
    for line in table {
        println!("{line}");
    }
    println!();
    println!("memory on this host (bytes)");
    for line in memory() {
        println!("{line}");
    }
}
