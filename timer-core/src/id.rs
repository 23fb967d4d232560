//! Generational handles.

use core::fmt;
use core::num::NonZeroU32;

/// A handle to one timer in one queue.
///
/// A handle names a slot *and* the generation of the timer that occupied it. Once that timer
/// fires, is cancelled or drained, its slot's generation moves on, so the old handle is answered
/// as stale ([`StaleTimer`](crate::StaleTimer) or `None`) and can never act on the timer that
/// reuses the slot. A slot whose generation counter would wrap is retired, never reused, so this
/// holds for the life of the queue.
///
/// `Option<TimerId>` is the same size as `TimerId` (8 bytes).
///
/// # Examples
///
/// ```
/// use timer_core::{TimerQueue, TimerWheel};
///
/// let mut wheel: TimerWheel<&str, 4> = TimerWheel::new();
/// let id = wheel.insert(10, "a").unwrap();
/// assert_eq!(wheel.cancel(id), Ok("a"));
/// // The slot is reused, but the old handle stays dead.
/// let again = wheel.insert(10, "b").unwrap();
/// assert_eq!(id.index(), again.index());
/// assert!(wheel.cancel(id).is_err());
/// assert_eq!(wheel.deadline(again), Some(10));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TimerId {
    index: u32,
    generation: NonZeroU32,
}

impl TimerId {
    pub(crate) const fn new(index: u32, generation: NonZeroU32) -> Self {
        Self { index, generation }
    }

    /// The slot this timer occupies, in `0..capacity`.
    ///
    /// Useful as a dense key for side tables; two live timers never share an index.
    pub const fn index(self) -> usize {
        // Internally slots are numbered from 1 (0 means "none"); see `arena`.
        (self.index as usize).wrapping_sub(1)
    }

    /// The crate-internal slot number (`index() + 1`).
    pub(crate) const fn slot(self) -> u32 {
        self.index
    }

    /// The generation of the slot when this handle was issued.
    pub const fn generation(self) -> u32 {
        self.generation.get()
    }
}

impl fmt::Debug for TimerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TimerId({}v{})", self.index(), self.generation)
    }
}
