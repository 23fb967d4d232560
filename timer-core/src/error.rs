//! Error types: one small type per failure.

use core::fmt;

/// The queue is at capacity; the value that could not be inserted is handed back.
///
/// # Examples
///
/// ```
/// use timer_core::{Full, TimerHeap, TimerQueue};
///
/// let mut heap: TimerHeap<u32, 1> = TimerHeap::new();
/// heap.insert(5, 1).unwrap();
/// assert_eq!(heap.insert(6, 2), Err(Full(2)));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Full<T>(pub T);

impl<T> Full<T> {
    /// Takes back the value that was not inserted.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Display for Full<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("timer queue is full")
    }
}

impl<T: fmt::Debug> core::error::Error for Full<T> {}

/// The handle does not name a pending timer: it fired, was cancelled or drained, or belongs to
/// a slot that has since been reused.
///
/// # Examples
///
/// ```
/// use timer_core::{StaleTimer, TimerQueue, TimerWheel};
///
/// let mut wheel: TimerWheel<(), 2> = TimerWheel::new();
/// let id = wheel.insert(1, ()).unwrap();
/// wheel.expire(1, usize::MAX, |_| {});
/// assert_eq!(wheel.cancel(id), Err(StaleTimer));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct StaleTimer;

impl fmt::Display for StaleTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("timer handle is stale (fired, cancelled, or its slot was reused)")
    }
}

impl core::error::Error for StaleTimer {}
