//! The side queue of [`IntegratedWheel`](crate::IntegratedWheel) for wakers that are not an
//! embassy task's (no `TimerQueueItem` to keep a timer in): `N` entries in the queue itself.

use core::task::Waker;

use crate::item::StoredWaker;

/// One waker's timer. All zero bytes: free.
struct ForeignTimer {
    deadline: u64,
    waker: StoredWaker,
}

impl ForeignTimer {
    const FREE: Self = Self {
        deadline: 0,
        waker: StoredWaker::NONE,
    };
}

/// At most `N` timers of wakers that are not embassy tasks', one per waker (the earliest
/// deadline kept), in an array: each operation looks at all `N`.
pub(crate) struct ForeignTimers<const N: usize> {
    timers: [ForeignTimer; N],
    /// The earliest deadline held, inverted (zero: none), so that an empty queue is all zero
    /// bytes.
    next_inverted: u64,
}

impl<const N: usize> ForeignTimers<N> {
    pub(crate) const fn new() -> Self {
        Self {
            timers: [ForeignTimer::FREE; N],
            next_inverted: 0,
        }
    }

    /// The earliest deadline held (`u64::MAX`: none).
    #[inline]
    pub(crate) fn next(&self) -> u64 {
        !self.next_inverted
    }

    /// Schedules `waker` for `at` (a waker already held keeps the earlier deadline). Returns
    /// whether the earliest deadline held changed to `at`. When all `N` entries are taken,
    /// wakes `waker` at once instead (its task is polled early and registers again) and returns
    /// `false`.
    pub(crate) fn schedule(&mut self, at: u64, waker: &Waker) -> bool {
        let mut free = None;
        for (i, timer) in self.timers.iter_mut().enumerate() {
            if timer.waker.will_wake(waker) {
                if timer.deadline <= at {
                    return false;
                }
                timer.deadline = at;
                return self.lower_next(at);
            }
            if free.is_none() && !timer.waker.is_some() {
                free = Some(i);
            }
        }
        if at == u64::MAX {
            // Never due: nothing to keep.
            return false;
        }
        match free.and_then(|i| self.timers.get_mut(i)) {
            Some(timer) => {
                timer.deadline = at;
                timer.waker.store(waker);
                self.lower_next(at)
            }
            None => {
                waker.wake_by_ref();
                false
            }
        }
    }

    fn lower_next(&mut self, at: u64) -> bool {
        if at < self.next() {
            self.next_inverted = !at;
            true
        } else {
            false
        }
    }

    /// Wakes every waker due at `now`, and finds the next deadline.
    pub(crate) fn expire(&mut self, now: u64) {
        let mut next = u64::MAX;
        for timer in &mut self.timers {
            if !timer.waker.is_some() {
                continue;
            }
            if timer.deadline <= now {
                if let Some(waker) = timer.waker.take() {
                    waker.wake();
                }
            } else {
                next = next.min(timer.deadline);
            }
        }
        self.next_inverted = !next;
    }
}

impl<const N: usize> Drop for ForeignTimers<N> {
    fn drop(&mut self) {
        for timer in &mut self.timers {
            drop(timer.waker.take());
        }
    }
}
