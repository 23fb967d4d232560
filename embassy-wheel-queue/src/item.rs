//! A task's timer, kept in the `TimerQueueItem` that embassy-executor gives every task, and the
//! crate's `unsafe`: finding that item from a waker, reading and writing the timer in it, and
//! keeping a waker in a form whose "none" is all zero bytes.
//!
//! Everything else ([`Wheel`](crate::wheel::Wheel), [`IntegratedWheel`](crate::IntegratedWheel))
//! is safe code over [`Node`], a copyable handle to one task's timer.
//!
//! # Why the accesses are sound
//!
//! - **Where the timer lives.** embassy-executor 0.10 keeps a `TimerQueueItem` in each task's
//!   header, inside the task's `TaskStorage`, which lives for `'static` (a task can exit and be
//!   spawned again; its storage is never freed). The item is for the timer queue alone: the
//!   executor zeroes it once, when the storage is made, and never reads or writes it again.
//! - **Its layout.** [`TaskTimer`] fits in the item's size and alignment (checked at compile
//!   time below: this crate turns on `timer-item-size-6-words`), and all zero bytes are a valid
//!   `TaskTimer` (an unqueued timer), which is what a fresh item holds.
//! - **Who touches it.** The one [`IntegratedWheel`](crate::IntegratedWheel) that the task's
//!   wakers are given ([`IntegratedWheel::new`](crate::IntegratedWheel::new)'s contract: no other
//!   queue of any kind reinterprets these items while it lives). Every access happens inside a
//!   method of that queue, which holds it by `&mut`, so no two accesses overlap; the queue is
//!   `Send` but not `Sync`.
//! - **How.** Through raw pointers, one field at a time; no reference to a timer is ever kept,
//!   so the `&'static mut TimerQueueItem` the executor hands out for each lookup never aliases a
//!   live reference of ours.
//! - **With which provenance.** The executor hands out a fresh `&'static mut` at every lookup,
//!   and in Rust's aliasing model a pointer derived from an earlier one may no longer be used
//!   once a new one is made and written through; yet the wheel keeps a task's address in its
//!   neighbours' links and in list heads, where no lookup can refresh it. So a [`Node`] is an
//!   address, not a pointer: each lookup exposes the provenance of the pointer it got
//!   ([`expose_provenance`](pointer::expose_provenance)), and each access rebuilds a pointer
//!   from the address ([`with_exposed_provenance_mut`](core::ptr::with_exposed_provenance_mut)),
//!   which takes the provenance of the latest grant. At run time both are no-ops.

use core::num::NonZeroUsize;
use core::task::{RawWaker, RawWakerVTable, Waker};

use embassy_executor_timer_queue::TimerQueueItem;

/// A task's timer: its deadline, its links in one of the wheel's lists, and the task's waker.
/// All zero bytes: not queued.
///
/// `repr(C)` so that its size is the sum of its fields: 24 bytes on a 32-bit target (six words,
/// the item's size there), 40 on a 64-bit one.
#[repr(C)]
struct TaskTimer {
    deadline: u64,
    /// The next timer's address; 0: none.
    next: usize,
    /// The previous timer's address; 0: none (the first in its list).
    prev: usize,
    /// Present while the timer is queued.
    waker: StoredWaker,
}

const _: () = {
    assert!(
        size_of::<TaskTimer>() <= size_of::<TimerQueueItem>(),
        "a task's timer must fit in its TimerQueueItem (timer-item-size-6-words)"
    );
    assert!(align_of::<TaskTimer>() <= align_of::<TimerQueueItem>());
};

// embassy-executor 0.10 defines this (beside the panicking `__embassy_time_queue_item_from_waker`
// that `TimerQueueItem::from_embassy_waker` wraps): the item of the task behind an embassy
// waker, `None` for any other waker.
unsafe extern "Rust" {
    fn __try_embassy_time_queue_item_from_waker(
        waker: &Waker,
    ) -> Option<&'static mut TimerQueueItem>;
}

/// A handle to one task's [`TaskTimer`]: its address (see the module docs for why not a
/// pointer). Copyable; equal when it is the same task's.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Node(NonZeroUsize);

impl Node {
    /// The timer of the embassy task that `waker` wakes; `None` for a waker that is not an
    /// embassy-executor task's.
    #[inline]
    pub(crate) fn of_waker(waker: &Waker) -> Option<Self> {
        // SAFETY: embassy-executor defines the function with this signature (it must be linked
        // for any embassy task to exist). The `&'static mut` it returns is made into an address
        // at once and never used as a reference, so it cannot alias one of ours (module docs).
        let item = unsafe { __try_embassy_time_queue_item_from_waker(waker) }?;
        Some(Self::of_item(item))
    }

    /// The timer laid over `item`. Accesses through the returned node (and any copy of it)
    /// have this grant's provenance until the next grant of the same item.
    #[inline]
    pub(crate) fn of_item(item: &'static mut TimerQueueItem) -> Self {
        let address = core::ptr::from_mut(item).expose_provenance();
        // A reference's address is never 0.
        Self(NonZeroUsize::new(address).unwrap_or(NonZeroUsize::MIN))
    }

    /// A pointer to the timer, with the provenance of its latest grant.
    #[inline]
    fn timer(self) -> *mut TaskTimer {
        // The cast is sound to use: the size, alignment and all-zero validity asserted above.
        core::ptr::with_exposed_provenance_mut(self.0.get())
    }

    #[inline]
    fn of_link(link: usize) -> Option<Self> {
        NonZeroUsize::new(link).map(Self)
    }

    #[inline]
    fn link(node: Option<Self>) -> usize {
        node.map_or(0, |node| node.0.get())
    }

    /// The deadline (meaningless when not queued).
    #[inline]
    pub(crate) fn deadline(self) -> u64 {
        // SAFETY: `self` is the address of a live `TaskTimer` whose latest grant is exposed, that
        // only the queue calling this accesses, and to which no reference exists (module
        // docs); a read of one field.
        unsafe { (*self.timer()).deadline }
    }

    #[inline]
    pub(crate) fn set_deadline(self, deadline: u64) {
        // SAFETY: as in `deadline`; a write of one `Copy` field.
        unsafe { (*self.timer()).deadline = deadline }
    }

    /// The next timer in its list.
    #[inline]
    pub(crate) fn next(self) -> Option<Self> {
        // SAFETY: as in `deadline`.
        Self::of_link(unsafe { (*self.timer()).next })
    }

    #[inline]
    pub(crate) fn set_next(self, next: Option<Self>) {
        // SAFETY: as in `set_deadline`.
        unsafe { (*self.timer()).next = Self::link(next) }
    }

    /// The previous timer in its list (`None`: it is the list's first).
    #[inline]
    pub(crate) fn prev(self) -> Option<Self> {
        // SAFETY: as in `deadline`.
        Self::of_link(unsafe { (*self.timer()).prev })
    }

    #[inline]
    pub(crate) fn set_prev(self, prev: Option<Self>) {
        // SAFETY: as in `set_deadline`.
        unsafe { (*self.timer()).prev = Self::link(prev) }
    }

    /// Whether the timer is queued (holds its task's waker).
    #[inline]
    pub(crate) fn is_queued(self) -> bool {
        // SAFETY: as in `deadline`; reads the vtable field, a `Copy` `Option<&_>`.
        unsafe { (*self.timer()).waker.vtable.is_some() }
    }

    /// Keeps a clone of `waker`, which marks the timer queued (dropping the one kept before,
    /// if any).
    #[inline]
    pub(crate) fn store_waker(self, waker: &Waker) {
        // SAFETY: as in `deadline`; the `&mut` to the one field lives for this call only.
        unsafe { (*self.timer()).waker.store(waker) }
    }

    /// Takes the waker out, which marks the timer not queued.
    #[inline]
    pub(crate) fn take_waker(self) -> Option<Waker> {
        // SAFETY: as in `store_waker`.
        unsafe { (*self.timer()).waker.take() }
    }
}

/// A waker kept as its two raw parts, so that "no waker" is all zero bytes: a task's fresh
/// `TimerQueueItem`, or a `static` queue in `.bss`. (`Option<Waker>` gives no such promise.)
///
/// It owns the waker it holds (a clone it took); [`take`](Self::take) hands it back. It has no
/// `Drop`: the owners take what they hold when they are dropped.
pub(crate) struct StoredWaker {
    data: *const (),
    vtable: Option<&'static RawWakerVTable>,
}

// SAFETY: a `StoredWaker` is a `Waker` in parts (or none), and `Waker` is `Send`.
unsafe impl Send for StoredWaker {}

impl StoredWaker {
    /// No waker.
    pub(crate) const NONE: Self = Self {
        data: core::ptr::null(),
        vtable: None,
    };

    /// Whether a waker is held.
    #[inline]
    pub(crate) fn is_some(&self) -> bool {
        self.vtable.is_some()
    }

    /// Whether the waker held wakes the same task as `waker` (the test `Waker::will_wake` does).
    #[inline]
    pub(crate) fn will_wake(&self, waker: &Waker) -> bool {
        self.vtable.is_some_and(|vtable| {
            core::ptr::eq(vtable, waker.vtable()) && self.data == waker.data()
        })
    }

    /// Holds a clone of `waker`, dropping the waker held before, if any.
    #[inline]
    pub(crate) fn store(&mut self, waker: &Waker) {
        drop(self.take());
        let clone = core::mem::ManuallyDrop::new(waker.clone());
        self.data = clone.data();
        self.vtable = Some(clone.vtable());
    }

    /// The waker held, if any; none is held afterwards.
    #[inline]
    pub(crate) fn take(&mut self) -> Option<Waker> {
        let vtable = self.vtable.take()?;
        // SAFETY: `data` and `vtable` are the parts of the clone `store` made and did not drop;
        // rebuilding it hands that clone's ownership back (once: `vtable` is now `None`).
        Some(unsafe { Waker::from_raw(RawWaker::new(self.data, vtable)) })
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A stand-in for embassy-executor in the unit tests: [`TestTask`]s with a
    //! `TimerQueueItem` each and wakers that count wake-ups, found by the same
    //! `__try_embassy_time_queue_item_from_waker` the executor defines. It keeps the unit tests
    //! free of the executor's own `unsafe`, so that Miri checks only this crate's.

    extern crate std;

    use super::*;
    use core::cell::UnsafeCell;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use std::boxed::Box;
    use std::sync::Mutex;
    use std::vec::Vec;

    /// A task: its timer queue item, and how often it was woken.
    pub(crate) struct TestTask {
        /// In a cell: the queue writes it through the `&'static TestTask` the waker carries.
        item: UnsafeCell<TimerQueueItem>,
        wakes: AtomicUsize,
    }

    // SAFETY: a test's tasks stay on the test's thread; only `ALL_TASKS` holds them across
    // threads, and it never touches them.
    unsafe impl Sync for TestTask {}

    impl TestTask {
        /// Wake-ups so far.
        pub(crate) fn wakes(&self) -> usize {
            self.wakes.load(Ordering::Relaxed)
        }
    }

    /// Every task made, so that they stay reachable: Miri's leak check then knows them for the
    /// `'static` storage they stand for, and still reports any waker a queue forgets to drop.
    static ALL_TASKS: Mutex<Vec<&'static TestTask>> = Mutex::new(Vec::new());

    /// `n` tasks, leaked (task storage lives for `'static`, as embassy's does), and a waker for
    /// each.
    pub(crate) fn tasks(n: usize) -> (Vec<&'static TestTask>, Vec<Waker>) {
        let tasks: Vec<&'static TestTask> = (0..n)
            .map(|_| {
                &*Box::leak(Box::new(TestTask {
                    item: UnsafeCell::new(TimerQueueItem::new()),
                    wakes: AtomicUsize::new(0),
                }))
            })
            .collect();
        ALL_TASKS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(&tasks);
        let wakers = tasks
            .iter()
            .map(|task| {
                let data = core::ptr::from_ref::<TestTask>(task).cast::<()>();
                // SAFETY: `VTABLE`'s functions take `data` as a `&'static TestTask`, which it is.
                unsafe { Waker::from_raw(RawWaker::new(data, &VTABLE)) }
            })
            .collect();
        (tasks, wakers)
    }

    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake, drop_waker);

    unsafe fn clone(data: *const ()) -> RawWaker {
        RawWaker::new(data, &VTABLE)
    }

    unsafe fn wake(data: *const ()) {
        // SAFETY: `data` is a `&'static TestTask` (`tasks`).
        let task = unsafe { &*data.cast::<TestTask>() };
        task.wakes.fetch_add(1, Ordering::Relaxed);
    }

    unsafe fn drop_waker(_: *const ()) {}

    /// The executor's lookup, for [`TestTask`] wakers.
    #[unsafe(no_mangle)]
    fn __try_embassy_time_queue_item_from_waker(
        waker: &Waker,
    ) -> Option<&'static mut TimerQueueItem> {
        if !core::ptr::eq(waker.vtable(), &VTABLE) {
            return None;
        }
        // SAFETY: a `VTABLE` waker's data is a leaked `TestTask` (`tasks`).
        let task = unsafe { &*waker.data().cast::<TestTask>() };
        // SAFETY: only the queue under test uses the item, by raw pointer; like
        // embassy-executor's, this hands out a fresh `&mut` per call, which the queue turns into
        // a pointer at once.
        Some(unsafe { &mut *task.item.get() })
    }
}
