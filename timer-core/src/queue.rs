//! The contract every timer queue implements.

use crate::{Full, StaleTimer, Tick, TimerId};

/// A timer that came due, as handed out by [`TimerQueue::expire`] and friends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Expired<T> {
    /// The handle the timer had; it is stale from now on.
    pub id: TimerId,
    /// The deadline the timer was due at.
    pub deadline: Tick,
    /// The value stored with the timer.
    pub value: T,
}

/// What one budgeted sweep, a call to [`TimerQueue::expire`], did.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[must_use = "`more_due` says whether the budget cut the sweep short"]
pub struct Sweep {
    /// How many timers fired.
    pub fired: usize,
    /// `true` when the budget ran out while timers due at `now` remain: call again soon.
    pub more_due: bool,
}

/// Insert, cancel, reschedule, and expire timers: the one contract of every queue.
///
/// Time is a [`Tick`] (`u64`) that never wraps; the unit is the caller's. The rules:
///
/// - a timer never fires before its deadline, and fires at the first expiry with
///   `now >= deadline`; a deadline already in the past fires at the next expiry;
/// - timers fire in deadline order, equal deadlines in the order they were inserted (a
///   reschedule counts as a new insertion);
/// - `now` going backwards is harmless: nothing fires that is not due at the `now` given;
/// - every value leaves exactly once: by firing, by [`cancel`](Self::cancel), or by
///   [`drain`](Self::drain).
///
/// # Examples
///
/// Code written against the trait runs on every queue:
///
/// ```
/// use timer_core::{TimerHeap, TimerQueue, TimerWheel};
///
/// fn fire_order<Q: TimerQueue<char>>(mut q: Q) -> Vec<char> {
///     q.insert(30, 'c').unwrap();
///     q.insert(10, 'a').unwrap();
///     let late = q.insert(5, 'x').unwrap();
///     q.insert(20, 'b').unwrap();
///     q.reschedule(late, 40).unwrap();
///     let mut out = Vec::new();
///     let _ = q.expire(100, usize::MAX, |e| out.push(e.value));
///     out
/// }
///
/// assert_eq!(fire_order(TimerWheel::<char, 8>::new()), ['a', 'b', 'c', 'x']);
/// assert_eq!(fire_order(TimerHeap::<char, 8>::new()), ['a', 'b', 'c', 'x']);
/// ```
pub trait TimerQueue<T> {
    /// Adds a timer due at `deadline`.
    ///
    /// # Errors
    ///
    /// [`Full`] with the value, when every slot is taken.
    fn insert(&mut self, deadline: Tick, value: T) -> Result<TimerId, Full<T>>;

    /// Removes a pending timer and returns its value.
    ///
    /// # Errors
    ///
    /// [`StaleTimer`] when `id` does not name a pending timer; nothing changes.
    fn cancel(&mut self, id: TimerId) -> Result<T, StaleTimer>;

    /// Moves a pending timer to a new deadline (earlier or later). It then orders after every
    /// timer already pending with the same deadline.
    ///
    /// # Errors
    ///
    /// [`StaleTimer`] when `id` does not name a pending timer; nothing changes.
    fn reschedule(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer>;

    /// The deadline of a pending timer, `None` if `id` is stale.
    fn deadline(&self, id: TimerId) -> Option<Tick>;

    /// The value of a pending timer, `None` if `id` is stale.
    fn get(&self, id: TimerId) -> Option<&T>;

    /// The value of a pending timer, mutably; `None` if `id` is stale.
    fn get_mut(&mut self, id: TimerId) -> Option<&mut T>;

    /// When the caller next needs to call [`expire`](Self::expire): never later than the
    /// earliest pending deadline, `None` when nothing is pending.
    ///
    /// Exact for [`TimerHeap`](crate::TimerHeap) and [`TimeoutList`](crate::TimeoutList).
    /// [`TimerWheel`](crate::TimerWheel) may answer earlier, with the start of the coarse slot
    /// that holds the earliest timer; an expiry there files that slot's timers finer, and the next
    /// answer is closer (at most one early wake-up per wheel level).
    fn next_deadline(&self) -> Option<Tick>;

    /// Removes and returns the earliest timer due at `now`, if any.
    fn pop_expired(&mut self, now: Tick) -> Option<Expired<T>>;

    /// Whether a timer is due at `now`. Takes `&mut self` because the wheel may re-file coarse
    /// slots to find out.
    fn has_expired(&mut self, now: Tick) -> bool;

    /// Removes and returns some pending timer, in no particular order: the engine of
    /// [`drain`](Self::drain).
    fn pop_any(&mut self) -> Option<Expired<T>>;

    /// How many timers are pending.
    fn len(&self) -> usize;

    /// How many timers the queue can hold.
    fn capacity(&self) -> usize;

    /// Whether the next [`insert`](Self::insert) would hand its value back.
    fn is_full(&self) -> bool;

    /// Whether no timer is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fires every timer due at `now`, at most `budget` of them, in deadline order.
    ///
    /// Pass `usize::MAX` for no budget. With a budget a server loop never stalls on a mass
    /// expiry: it serves requests and calls again while [`Sweep::more_due`] is `true`.
    ///
    /// # Examples
    ///
    /// ```
    /// use timer_core::{TimerQueue, TimerWheel};
    ///
    /// let mut wheel: TimerWheel<u32, 16> = TimerWheel::new();
    /// for i in 0..10 {
    ///     wheel.insert(100, i).unwrap();
    /// }
    /// let mut fired = Vec::new();
    /// let first = wheel.expire(100, 4, |e| fired.push(e.value));
    /// assert_eq!((first.fired, first.more_due), (4, true));
    /// let rest = wheel.expire(100, usize::MAX, |e| fired.push(e.value));
    /// assert_eq!((rest.fired, rest.more_due), (6, false));
    /// assert_eq!(fired, (0..10).collect::<Vec<_>>());
    /// ```
    fn expire(&mut self, now: Tick, budget: usize, mut on_expired: impl FnMut(Expired<T>)) -> Sweep
    where
        Self: Sized,
    {
        let mut fired = 0;
        while fired < budget {
            match self.pop_expired(now) {
                Some(expired) => {
                    on_expired(expired);
                    fired += 1;
                }
                None => {
                    return Sweep {
                        fired,
                        more_due: false,
                    }
                }
            }
        }
        Sweep {
            fired,
            more_due: self.has_expired(now),
        }
    }

    /// Removes every pending timer, yielding each exactly once (for shutdown).
    ///
    /// Dropping the iterator early leaves the rest pending.
    ///
    /// # Examples
    ///
    /// ```
    /// use timer_core::{TimeoutList, TimerQueue};
    ///
    /// let mut idle: TimeoutList<&str, 4> = TimeoutList::new();
    /// idle.insert(30, "conn 1").unwrap();
    /// idle.insert(31, "conn 2").unwrap();
    /// let mut closed: Vec<_> = idle.drain().map(|e| e.value).collect();
    /// closed.sort();
    /// assert_eq!(closed, ["conn 1", "conn 2"]);
    /// assert!(idle.is_empty());
    /// ```
    fn drain(&mut self) -> Drain<'_, Self, T>
    where
        Self: Sized,
    {
        Drain {
            queue: self,
            _value: core::marker::PhantomData,
        }
    }
}

/// Iterator returned by [`TimerQueue::drain`].
pub struct Drain<'a, Q, T> {
    queue: &'a mut Q,
    _value: core::marker::PhantomData<fn() -> T>,
}

impl<Q: TimerQueue<T>, T> Iterator for Drain<'_, Q, T> {
    type Item = Expired<T>;

    fn next(&mut self) -> Option<Expired<T>> {
        self.queue.pop_any()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.queue.len();
        (len, Some(len))
    }
}

impl<Q: TimerQueue<T>, T> ExactSizeIterator for Drain<'_, Q, T> {}
