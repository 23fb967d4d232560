//! Real embassy tasks sleeping with `embassy_time::Timer` on every timer queue: `N` tasks on a
//! `raw::Executor`, each sleeping random durations (seeded) against a simulated clock, with the
//! test's time driver (`time_driver_impl!`) keeping its timers in the queue under test, as
//! embassy's drivers do: the alarm fires at the deadline the queue last returned, and a
//! `schedule_wake` answering `true` is followed by `next_expiration(now)`. One more run drives
//! `IntegratedWheel` through `TimeDriver` over a simulated 16-bit counter, wrapping every 65,536
//! ticks.
//!
//! Checked for every queue: no sleep ends before its deadline, and none is lost (every task
//! finishes its sleeps while alarms remain). Counted and printed: early wake-ups (polls of a
//! sleeping task before its deadline: harmless, the timer registers again, but a poll for
//! nothing) and late ones (time moves only from alarm to alarm, so a sleep that ends after its
//! deadline's tick had no alarm at its deadline). Every queue with room for all the tasks
//! must have neither. embassy's generic queue here has 16 entries for 64 tasks: when full it
//! wakes the task it evicts, which registers again and evicts another, so tasks spin (the
//! test then lets time move on to the next alarm, as it would on a board) and, while one is
//! evicted, its deadline can pass without an alarm.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use embassy_executor::raw::{Executor, TaskStorage};
use embassy_time::{Duration, Instant, Timer};
use embassy_time_queue_utils::queue_generic::ConstGenericQueue;
use embassy_time_queue_utils::queue_integrated::Queue as EmbassyIntegrated;
use embassy_wheel_queue::{Counter, HeapQueue, IntegratedWheel, TimeDriver, WheelQueue};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Tasks per run.
const TASKS: usize = 64;

/// Sleeps per task.
const SLEEPS: usize = 40;

/// Entries of embassy's generic queue: fewer than the tasks, so that it fills up.
const GENERIC_ENTRIES: usize = 16;

/// Set when a task is woken: the executor has something to poll.
static PENDED: AtomicBool = AtomicBool::new(false);

/// The executor's signal that a task was woken (here: set `PENDED` for the test's loop).
#[unsafe(export_name = "__pender")]
fn pender(_context: *mut ()) {
    PENDED.store(true, Ordering::Relaxed);
}

/// What a time driver does with its clock and queue.
trait Backend: Send {
    fn now(&mut self) -> u64;
    fn schedule_wake(&mut self, at: u64, waker: &Waker);
    /// Moves time on to the next alarm and fires it; `false` when no alarm is armed.
    fn next_alarm(&mut self) -> bool;
}

/// A queue with embassy's contract.
trait Queue: Send {
    fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool;
    fn next_expiration(&mut self, now: u64) -> u64;
}

macro_rules! queue_impl {
    ($($queue:ty),*) => {$(
        impl Queue for $queue {
            fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool {
                <$queue>::schedule_wake(self, at, waker)
            }
            fn next_expiration(&mut self, now: u64) -> u64 {
                <$queue>::next_expiration(self, now)
            }
        }
    )*};
}

queue_impl!(
    IntegratedWheel,
    WheelQueue<TASKS>,
    HeapQueue<TASKS>,
    ConstGenericQueue<GENERIC_ENTRIES>,
    EmbassyIntegrated
);

/// A queue behind a clock that jumps from alarm to alarm.
struct QueueDriver<Q> {
    now: u64,
    alarm: u64,
    queue: Q,
}

impl<Q: Queue> Backend for QueueDriver<Q> {
    fn now(&mut self) -> u64 {
        self.now
    }

    fn schedule_wake(&mut self, at: u64, waker: &Waker) {
        if self.queue.schedule_wake(at, waker) {
            self.alarm = self.queue.next_expiration(self.now);
        }
    }

    fn next_alarm(&mut self) -> bool {
        if self.alarm == u64::MAX {
            return false;
        }
        self.now = self.now.max(self.alarm);
        self.alarm = self.queue.next_expiration(self.now);
        true
    }
}

/// A simulated 16-bit counter at one cycle per tick, with one compare register.
#[derive(Default)]
struct SimCounter {
    /// Cycles since the start.
    time: AtomicU64,
    compare: AtomicU64,
}

/// The counter as `TimeDriver` sees it.
struct Sim16(Arc<SimCounter>);

impl Counter for Sim16 {
    const BITS: u32 = 16;

    fn read(&self) -> u32 {
        (self.0.time.load(Ordering::Relaxed) & 0xFFFF) as u32
    }

    fn set_compare(&mut self, value: u32) {
        self.0.compare.store(u64::from(value), Ordering::Relaxed);
    }

    fn clear_interrupt(&mut self) {}

    fn enable_interrupt(&mut self) {}
}

/// `TimeDriver` on the simulated counter.
struct CounterDriver {
    counter: Arc<SimCounter>,
    driver: TimeDriver<Sim16>,
}

impl Backend for CounterDriver {
    fn now(&mut self) -> u64 {
        self.driver.now()
    }

    fn schedule_wake(&mut self, at: u64, waker: &Waker) {
        self.driver.schedule_wake(at, waker);
    }

    /// Runs the counter to the compare value (the driver always has one armed: the next
    /// alarm or the next half-period boundary) and runs its interrupt; always `true`: a lost
    /// wake-up shows as simulated time running out (`run` checks).
    fn next_alarm(&mut self) -> bool {
        let time = self.counter.time.load(Ordering::Relaxed);
        let compare = self.counter.compare.load(Ordering::Relaxed);
        let at = time + 1 + (compare.wrapping_sub(time + 1) & 0xFFFF);
        self.counter.time.store(at, Ordering::Relaxed);
        self.driver.on_interrupt();
        true
    }
}

/// The test's time driver: the backend of the run in progress.
struct SimDriver {
    backend: Mutex<Option<Box<dyn Backend>>>,
}

impl embassy_time_driver::Driver for SimDriver {
    fn now(&self) -> u64 {
        self.with(|backend| backend.now())
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        self.with(|backend| backend.schedule_wake(at, waker));
    }
}

impl SimDriver {
    fn with<R>(&self, f: impl FnOnce(&mut dyn Backend) -> R) -> R {
        let mut backend = self.backend.lock().unwrap_or_else(|e| e.into_inner());
        f(backend.as_deref_mut().expect("a run in progress"))
    }
}

embassy_time_driver::time_driver_impl!(static DRIVER: SimDriver = SimDriver {
    backend: Mutex::new(None),
});

/// One task's record: each sleep's deadline and wake-up tick, and its early wake-ups.
#[derive(Default)]
struct Record {
    sleeps: Vec<(u64, u64)>,
    early: u64,
}

/// Wraps a sleep and counts the polls it answers `Pending` after the first: wake-ups before
/// its deadline.
struct CountEarly<'a, F> {
    inner: F,
    polled: bool,
    early: &'a mut u64,
}

impl<F: Future + Unpin> Future for CountEarly<'_, F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let poll = Pin::new(&mut this.inner).poll(cx);
        if poll.is_pending() && std::mem::replace(&mut this.polled, true) {
            *this.early += 1;
        }
        poll
    }
}

/// A task: `SLEEPS` random sleeps of 1 to 2,000 ticks.
async fn sleeper(seed: u64, record: &'static Mutex<Record>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    for _ in 0..SLEEPS {
        let deadline = Instant::now() + Duration::from_ticks(rng.random_range(1..=2_000));
        let mut early = 0;
        CountEarly {
            inner: Timer::at(deadline),
            polled: false,
            early: &mut early,
        }
        .await;
        let woke = Instant::now().as_ticks();
        let mut record = record.lock().unwrap_or_else(|e| e.into_inner());
        record.early += early;
        record.sleeps.push((deadline.as_ticks(), woke));
    }
}

/// What a run saw: wake-ups before the deadline (early: the task polled for nothing) and
/// after it (late).
struct Outcome {
    early: u64,
    late: u64,
}

/// Runs `TASKS` sleepers on `backend`. Fails when a task never finishes.
fn run(name: &str, backend: Box<dyn Backend>) -> Outcome {
    *DRIVER.backend.lock().unwrap_or_else(|e| e.into_inner()) = Some(backend);
    let executor: &'static Executor = Box::leak(Box::new(Executor::new(std::ptr::null_mut())));
    let records: Vec<&'static Mutex<Record>> = (0..TASKS)
        .map(|_| &*Box::leak(Box::new(Mutex::new(Record::default()))))
        .collect();
    let record = |i: usize| records[i].lock().unwrap_or_else(|e| e.into_inner());
    for (i, record) in records.iter().enumerate() {
        // Fresh task storage per run: embassy's integrated queue and ours each lay their own
        // timer over a task's item, so no task is shared between them.
        let storage = Box::leak(Box::new(TaskStorage::new()));
        let token = storage.spawn(|| sleeper(0x51ee_0000 + i as u64, record));
        executor
            .spawner()
            .spawn(token.expect("fresh task storage is free"));
    }
    let done = || (0..TASKS).all(|i| record(i).sleeps.len() == SLEEPS);
    // Every sleep is at most 2,000 ticks: the last task is done long before this.
    let time_limit = SLEEPS as u64 * 2_000 + 200_000;
    loop {
        // Until nothing is ready: a task woken early by a full queue must register again
        // before time moves on. A full queue can keep tasks evicting each other (each woken to
        // make room for the next): then time moves on to the next alarm anyway, as on a board
        // it would while the executor spins.
        let mut polls = 0;
        while polls < TASKS && PENDED.swap(false, Ordering::Relaxed) {
            // SAFETY: polled from this thread only, never from the pender (which only sets a
            // flag).
            unsafe { executor.poll() };
            polls += 1;
        }
        if done() {
            break;
        }
        let spinning = PENDED.load(Ordering::Relaxed);
        let alarm = DRIVER.with(|backend| backend.next_alarm());
        assert!(
            (alarm || spinning) && DRIVER.with(|backend| backend.now()) < time_limit,
            "{name}: tasks still asleep with no alarm to wake them (a lost wake-up)"
        );
    }
    let mut outcome = Outcome { early: 0, late: 0 };
    for task in 0..TASKS {
        let record = record(task);
        for &(deadline, woke) in &record.sleeps {
            assert!(
                woke >= deadline,
                "{name}: task {task} woke at {woke}, before {deadline}"
            );
            outcome.late += u64::from(woke > deadline);
        }
        outcome.early += record.early;
    }
    *DRIVER.backend.lock().unwrap_or_else(|e| e.into_inner()) = None;
    outcome
}

fn queue_driver<Q: Queue + 'static>(queue: Q) -> Box<dyn Backend> {
    Box::new(QueueDriver {
        now: 0,
        alarm: u64::MAX,
        queue,
    })
}

/// One test: the driver is global, so the runs go one after the other.
#[test]
fn sixty_four_tasks_wake_at_their_deadlines_on_every_queue() {
    // SAFETY: the tasks of each run are fresh, and given to this one queue only.
    let ours = queue_driver(unsafe { IntegratedWheel::new() });
    let counter_driver = {
        let counter = Arc::new(SimCounter::default());
        // Near the end of the first wrap, so that the run crosses a few.
        counter.time.store(60_000, Ordering::Relaxed);
        // SAFETY: as above.
        let driver = TimeDriver::new(unsafe { IntegratedWheel::new() });
        driver.start(Sim16(counter.clone()));
        Box::new(CounterDriver { counter, driver }) as Box<dyn Backend>
    };
    let runs: [(&str, Box<dyn Backend>); 6] = [
        ("IntegratedWheel", ours),
        (
            "TimeDriver (16-bit counter) + IntegratedWheel",
            counter_driver,
        ),
        ("WheelQueue<64>", queue_driver(WheelQueue::<TASKS>::new())),
        ("HeapQueue<64>", queue_driver(HeapQueue::<TASKS>::new())),
        (
            "embassy generic queue, 16 entries",
            queue_driver(ConstGenericQueue::<GENERIC_ENTRIES>::new()),
        ),
        (
            "embassy integrated queue",
            queue_driver(EmbassyIntegrated::new()),
        ),
    ];
    println!(
        "{TASKS} tasks x {SLEEPS} sleeps: wake-ups before the deadline (early) and after it (late)"
    );
    for (name, backend) in runs {
        let Outcome { early, late } = run(name, backend);
        println!("  {name}: {early} early, {late} late");
        if name.starts_with("embassy generic") {
            assert!(early > 0, "{name}: a full queue wakes tasks early");
        } else {
            assert_eq!((early, late), (0, 0), "{name}: room for every task");
        }
    }
}
