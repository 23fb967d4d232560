//! Storage the caller provides: every queue is one implementation over a buffer of slots.
//!
//! A queue stores each timer in one slot of a buffer it is given: [`WheelSlot`] for the wheel,
//! [`HeapSlot`] for the heap, [`TimeoutSlot`] for the timeout lists. The buffer is any
//! [`Storage`], so the same code runs over
//!
//! - an **array inside the queue**, `[Slot; N]`: the capacity is part of the type and `new()` is
//!   a `const fn`, so a queue can be a `static` (an empty one is all zero bytes, so it goes to
//!   `.bss`). That is [`TimerWheel<T, N>`](crate::TimerWheel), [`TimerHeap<T, N>`](crate::TimerHeap),
//!   [`TimeoutLists<T, N, L>`](crate::TimeoutLists): the form a board uses;
//! - a **slice the caller owns**, `&mut [Slot]`, sized at run time (say from a configuration
//!   file), or an owned `Vec<Slot>` / `Box<[Slot]>`: `with_storage(slots)` on
//!   [`TimerWheelOn`](crate::TimerWheelOn), [`TimerHeapOn`](crate::TimerHeapOn) and
//!   [`TimeoutListsOn`](crate::TimeoutListsOn). The queue itself is then small and the timers
//!   live wherever the caller put them (a heap allocation, a memory-mapped region, a static
//!   buffer), so a million-timer queue never passes through the stack.
//!
//! With the `alloc` feature, `with_capacity(n)` makes a queue over a `Box<[Slot]>` of `n` slots.
//!
//! [`WheelSlot`]: crate::WheelSlot
//! [`HeapSlot`]: crate::HeapSlot
//! [`TimeoutSlot`]: crate::TimeoutSlot
//!
//! # Examples
//!
//! One wheel on a slice sized at run time, one inline; the same code drives both:
//!
//! ```
//! use timer_core::{TimerQueue, TimerWheel, TimerWheelOn, WheelCells, WheelSlot};
//!
//! fn arm<Q: TimerQueue<u32>>(q: &mut Q) -> usize {
//!     q.insert(10, 1).unwrap();
//!     q.insert(20, 2).unwrap();
//!     q.expire(15, usize::MAX, |_| {}).fired
//! }
//!
//! let configured = 100_000; // read from a configuration, say
//! let mut slots: Vec<WheelSlot<u32>> = (0..configured).map(|_| WheelSlot::new()).collect();
//! let mut cells = vec![WheelCells::new(); configured];
//! let mut big = TimerWheelOn::with_storage(&mut slots[..], &mut cells[..]);
//! assert_eq!(big.capacity(), 100_000);
//! assert_eq!(arm(&mut big), 1);
//!
//! let mut small: TimerWheel<u32, 8> = TimerWheel::new();
//! assert_eq!(arm(&mut small), 1);
//! ```

/// A buffer of slots a queue can run on: anything that lends out its slots as a slice.
///
/// Implemented for every `AsRef<[E]> + AsMut<[E]>`: an array `[E; N]` (the inline form),
/// `&mut [E]` (a slice the caller owns), `Vec<E>`, `Box<[E]>`, `heapless::Vec<E, N>`. A queue's
/// capacity is the slice's length (at most `u32::MAX - 1` slots are used), so the buffer must
/// lend out the same slice every time, as all of these do.
pub trait Storage<E>: AsRef<[E]> + AsMut<[E]> {}

impl<E, S: AsRef<[E]> + AsMut<[E]>> Storage<E> for S {}
