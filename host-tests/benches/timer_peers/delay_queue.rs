//! Peer: tokio-util's `DelayQueue`, on a paused current-thread tokio runtime whose clock the
//! adapter moves to each expiry's `now`; the time that takes is tokio's, not the queue's, so it
//! is measured and left out of the queue's figures.

use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;
use tokio_util::time::{delay_queue, DelayQueue};

use crate::clock::instant_cost;
use crate::contender::Contender;

/// tokio-util's `DelayQueue` on a paused current-thread runtime, 1 tick = 1 ms.
///
/// Deadlines go in with `insert_at`/`reset_at` (no clock reads). `expire(now)` advances tokio's
/// paused clock to `now` with `block_on(tokio::time::advance(..))` (one runtime turn, so the
/// time driver fires the queue's internal `Sleep`), then calls `poll_expired` with a no-op waker
/// until it stops returning timers. Polling outside `block_on` keeps tokio's cooperative budget
/// (128 polls per task turn) from cutting a drain short. The runtime turn is timed and
/// excluded; everything the queue does, including re-arming its `Sleep`, is counted.
pub struct DelayQueuePeer<'rt> {
    queue: DelayQueue<u32>,
    runtime: &'rt Runtime,
    origin: tokio::time::Instant,
    now: u64,
    clock_driving: Duration,
}

impl<'rt> DelayQueuePeer<'rt> {
    /// Must be called inside `runtime.enter()`.
    pub fn new(runtime: &'rt Runtime, capacity: usize) -> Self {
        // The clock is paused, so `origin` is the queue's own start instant: tick t is
        // exactly t ms into the queue's life.
        let mut queue = DelayQueue::with_capacity(capacity);
        let origin = tokio::time::Instant::now();
        // Fill and clear once, so the slab's pages are touched before any measurement, as
        // ours are after `new()`. `clear` keeps the slab's capacity.
        for value in 0..capacity as u32 {
            queue.insert_at(value, origin + Duration::from_millis(1));
        }
        queue.clear();
        Self {
            queue,
            runtime,
            origin,
            now: 0,
            clock_driving: Duration::ZERO,
        }
    }

    #[inline]
    fn instant(&self, tick: u64) -> tokio::time::Instant {
        self.origin + Duration::from_millis(tick)
    }
}

pub fn paused_runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("tokio runtime")
}

impl Contender for DelayQueuePeer<'_> {
    type Handle = delay_queue::Key;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> delay_queue::Key {
        self.queue.insert_at(value, self.instant(deadline))
    }

    #[inline]
    fn cancel(&mut self, key: delay_queue::Key) {
        self.queue.remove(&key);
    }

    #[inline]
    fn reschedule(&mut self, key: delay_queue::Key, deadline: u64) -> delay_queue::Key {
        self.queue.reset_at(&key, self.instant(deadline));
        key
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        if now > self.now {
            let start = Instant::now();
            self.runtime
                .block_on(tokio::time::advance(Duration::from_millis(now - self.now)));
            // One clock reading falls outside the interval: exclude it as well.
            self.clock_driving += start.elapsed() + instant_cost();
            self.now = now;
        }
        let mut cx = Context::from_waker(Waker::noop());
        while let Poll::Ready(Some(expired)) = self.queue.poll_expired(&mut cx) {
            fired(expired.into_inner());
        }
    }

    fn excluded(&self) -> Duration {
        self.clock_driving
    }
}
