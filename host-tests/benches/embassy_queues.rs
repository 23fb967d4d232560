//! `embassy-wheel-queue` against embassy's generic timer queue (`embassy-time-queue-utils`'s
//! `ConstGenericQueue`), on the work an executor gives its timer queue.
//!
//! ```text
//! cargo bench -p host-tests --bench embassy_queues
//! ```
//!
//! `n` tasks, each with its own waker (`std::task::Wake`), driven as a time driver drives the
//! queue: `next_expiration(now)` at each alarm, wakers woken there re-register. Time is
//! simulated ticks; the table gives thread CPU time per queue operation (`schedule_wake` or a
//! wake by `next_expiration`), the median of 5 runs. Workloads:
//!
//! - **sleepers**: every task sleeps a random 1..=1000 ticks, wakes, and sleeps again
//!   (`Timer::after` in a loop); 20 wake-ups per task, at most 200,000 in all;
//! - **timeouts**: every task waits on I/O with a 1,000-tick timeout (`with_timeout`); each tick
//!   one random task's I/O completes (95% of the time; so most timeouts never fire) and it
//!   starts its next I/O with a new timeout, registering `now + 1000`. embassy's queues have no
//!   cancel: one entry per waker keeps the earlier deadline, so a stale timeout still wakes its
//!   task, which registers again. 200,000 ticks.
//!
//! Both queues get the same seeded sequence. Capacity is the next power of two at or above
//! `n` for both (the generic queue's cost grows with the timers it holds, not its capacity).

use std::sync::{Arc, Mutex};
use std::task::{Wake, Waker};
use std::time::Duration;

use embassy_time_queue_utils::queue_generic::ConstGenericQueue;
use embassy_wheel_queue::WheelQueue;
use host_tests::cpu_time::thread_cpu_time;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// What a queue under test must do.
trait Queue {
    fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool;
    fn next_expiration(&mut self, now: u64) -> u64;
}

impl<const N: usize> Queue for WheelQueue<N> {
    fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool {
        WheelQueue::schedule_wake(self, at, waker)
    }
    fn next_expiration(&mut self, now: u64) -> u64 {
        WheelQueue::next_expiration(self, now)
    }
}

impl<const N: usize> Queue for ConstGenericQueue<N> {
    fn schedule_wake(&mut self, at: u64, waker: &Waker) -> bool {
        ConstGenericQueue::schedule_wake(self, at, waker)
    }
    fn next_expiration(&mut self, now: u64) -> u64 {
        ConstGenericQueue::next_expiration(self, now)
    }
}

/// A task's waker: waking it records the task as runnable.
struct Task {
    id: usize,
    runnable: Arc<Mutex<Vec<usize>>>,
}

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        self.runnable.lock().unwrap().push(self.id);
    }
}

fn wakers(n: usize) -> (Vec<Waker>, Arc<Mutex<Vec<usize>>>) {
    let runnable = Arc::new(Mutex::new(Vec::new()));
    let wakers = (0..n)
        .map(|id| {
            Waker::from(Arc::new(Task {
                id,
                runnable: runnable.clone(),
            }))
        })
        .collect();
    (wakers, runnable)
}

/// Sleepers; returns (queue operations, CPU time).
fn sleepers(queue: &mut impl Queue, n: usize, seed: u64) -> (u64, Duration) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let (wakers, runnable) = wakers(n);
    let total = (20 * n).min(200_000);
    let start = thread_cpu_time();
    let mut ops = 0u64;
    for waker in &wakers {
        queue.schedule_wake(rng.random_range(1..=1000), waker);
        ops += 1;
    }
    let mut now = 0;
    let mut woken = 0;
    let mut ready = Vec::new();
    while woken < total {
        now = queue.next_expiration(now).max(now);
        ready.extend(runnable.lock().unwrap().drain(..));
        for id in ready.drain(..) {
            woken += 1;
            ops += 2; // the wake and the new schedule_wake
            queue.schedule_wake(now + rng.random_range(1..=1000), &wakers[id]);
        }
    }
    (ops, thread_cpu_time() - start)
}

/// Timeouts, mostly not reached; returns (queue operations, CPU time).
fn timeouts(queue: &mut impl Queue, n: usize, seed: u64) -> (u64, Duration) {
    const TIMEOUT: u64 = 1000;
    let mut rng = SmallRng::seed_from_u64(seed);
    let (wakers, runnable) = wakers(n);
    let start = thread_cpu_time();
    let mut ops = 0u64;
    for waker in &wakers {
        queue.schedule_wake(TIMEOUT, waker);
        ops += 1;
    }
    let mut ready = Vec::new();
    for now in 1..=200_000u64 {
        if rng.random_bool(0.95) {
            // One task's I/O completes: its next I/O starts with a new timeout.
            let id = rng.random_range(0..n);
            queue.schedule_wake(now + TIMEOUT, &wakers[id]);
            ops += 1;
        }
        queue.next_expiration(now);
        ready.extend(runnable.lock().unwrap().drain(..));
        for id in ready.drain(..) {
            // Woken by a timeout (stale or real): it registers its current deadline again.
            queue.schedule_wake(now + TIMEOUT, &wakers[id]);
            ops += 2;
        }
    }
    (ops, thread_cpu_time() - start)
}

fn median_ns(mut runs: Vec<(u64, Duration)>) -> f64 {
    runs.sort_by_key(|(ops, time)| time.as_nanos() / u128::from((*ops).max(1)));
    let (ops, time) = runs[runs.len() / 2];
    time.as_nanos() as f64 / ops as f64
}

fn measure<Q: Queue>(new: impl Fn() -> Q, n: usize) -> [f64; 2] {
    let runs = 5;
    let s = median_ns((0..runs).map(|i| sleepers(&mut new(), n, 7 + i)).collect());
    let t = median_ns((0..runs).map(|i| timeouts(&mut new(), n, 7 + i)).collect());
    [s, t]
}

fn row<const N: usize>(n: usize, table: &mut Vec<String>) {
    let ours = measure(WheelQueue::<N>::new, n);
    let generic = measure(ConstGenericQueue::<N>::new, n);
    for (w, name) in ["sleepers", "timeouts"].iter().enumerate() {
        table.push(format!(
            "| {name} | {n} | {:.1} | {:.1} | {:.2} |",
            ours[w],
            generic[w],
            ours[w] / generic[w]
        ));
    }
}

fn main() {
    // `cargo test --benches` runs this without `--bench`: one quick pass as a smoke test.
    if !std::env::args().any(|a| a == "--bench") {
        let mut table = Vec::new();
        row::<8>(8, &mut table);
        return;
    }
    let mut table = vec![
        "| workload | n | embassy-wheel-queue (ns/op) | embassy generic queue (ns/op) | ours / generic |".to_string(),
        "|---|--:|--:|--:|--:|".to_string(),
    ];
    row::<8>(8, &mut table);
    row::<64>(64, &mut table);
    row::<1024>(1000, &mut table);
    row::<16384>(10_000, &mut table);
    for line in table {
        println!("{line}");
    }
}
