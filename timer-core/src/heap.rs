//! An indexed d-ary min-heap.
//!
//! The heap array holds whole timers (deadline, order, handle slot, value), so comparisons and
//! moves never leave it; beside each array position sits one handle slot (generation and the
//! position of its timer in the array). When a timer moves, its handle slot's position is
//! written with a plain store: no load of the slot first, so a sift does not wait on a cache
//! miss per level it moves a timer.

use core::num::NonZeroU32;

use crate::arena::{position, MAX_CAPACITY, NIL};
use crate::{Expired, Full, StaleTimer, Storage, Tick, TimerId, TimerQueue};

/// One timer in the heap array, ordered by deadline, then insertion.
struct Entry<T> {
    deadline: Tick,
    /// Insertion order, to fire equal deadlines first-in first-out. 64 bits: never wraps.
    seq: u64,
    /// The timer's handle slot (its number: position + 1).
    slot: NonZeroU32,
    value: T,
}

impl<T> Entry<T> {
    /// The sort key, deadline then order, as one number: comparing two is branch-free.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.deadline) << 64) | u128::from(self.seq)
    }
}

/// The key of the entry at `at` (`u128::MAX` for none: never the smallest).
#[inline]
fn key_at<T>(slots: &[HeapSlot<T>], at: usize) -> u128 {
    slots[at].entry.as_ref().map_or(u128::MAX, Entry::key)
}

/// A handle slot: the generation of its timer, odd while the timer is pending and even while
/// the slot is free (0: never used, or retired); and, while pending, the timer's place in the
/// heap array, while free the next free slot.
#[derive(Clone, Copy)]
struct Handle {
    generation: u32,
    link: u32,
}

impl Handle {
    /// A never-used slot: all zero bytes.
    const EMPTY: Self = Self {
        generation: 0,
        link: NIL,
    };
}

/// One slot of a [`TimerHeapOn`]'s storage: 32 bytes for a `u32` value. Slot `p` holds the timer
/// at heap position `p` (24 bytes: deadline, order, handle, value) and handle slot `p` (8 bytes:
/// generation, position).
///
/// An inline [`TimerHeap<T, N>`] holds `N` of them; for a heap sized at run time, make a slice of
/// them (`HeapSlot::new()` is an empty one) and hand it to [`TimerHeapOn::with_storage`].
pub struct HeapSlot<T> {
    entry: Option<Entry<T>>,
    handle: Handle,
}

impl<T> HeapSlot<T> {
    /// An empty slot (all zero bytes).
    pub const fn new() -> Self {
        Self {
            entry: None,
            handle: Handle::EMPTY,
        }
    }
}

impl<T> Default for HeapSlot<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// An indexed `D`-ary min-heap of `N` timers inline: [`TimerHeapOn`] over `[HeapSlot<T>; N]`,
/// with a `const fn new()` for `static`s.
pub type TimerHeap<T, const N: usize, const D: usize = 4> = TimerHeapOn<T, [HeapSlot<T>; N], D>;

/// An indexed min-heap of timers with `D` children per node (default 4), over storage `S` of
/// [`HeapSlot`]s (inline: [`TimerHeap<T, N, D>`]; a slice the caller owns:
/// [`with_storage`](Self::with_storage)).
///
/// O(log n) insert, cancel and reschedule (each timer's handle knows its heap position, so
/// cancel needs no search and no lazy deletion), O(1) next deadline, which is always exact.
/// Equal deadlines fire in insertion order. The arity is a parameter so that it can be compared:
/// the `timer_peers` benchmark in `host-tests` runs `D = 2` and `D = 4` side by side, and the
/// default is the one that was faster there (its results file has the runs).
///
/// The heap array holds the timers themselves, values included, so a sift moves values too:
/// cheap for small values (a handle, an index), the intended use.
///
/// Memory: 32 bytes per slot for a `u32` value (a 24-byte heap entry and an 8-byte handle).
///
/// # Examples
///
/// ```
/// use timer_core::{TimerHeap, TimerQueue};
///
/// let mut heap: TimerHeap<&str, 8> = TimerHeap::new();
/// let retry = heap.insert(300, "retry").unwrap();
/// heap.insert(100, "ack").unwrap();
/// assert_eq!(heap.next_deadline(), Some(100));
///
/// heap.reschedule(retry, 50).unwrap();
/// assert_eq!(heap.pop_expired(60).map(|e| e.value), Some("retry"));
/// assert_eq!(heap.pop_expired(60), None);
/// assert_eq!(heap.next_deadline(), Some(100));
/// ```
///
/// Over a slice sized at run time:
///
/// ```
/// use timer_core::{HeapSlot, TimerHeapOn, TimerQueue};
///
/// let mut slots: Vec<HeapSlot<u32>> = (0..4_096).map(|_| HeapSlot::new()).collect();
/// let mut heap = TimerHeapOn::<_, _>::with_storage(&mut slots[..]);
/// heap.insert(9, 1).unwrap();
/// assert_eq!(heap.next_deadline(), Some(9));
/// ```
pub struct TimerHeapOn<T, S, const D: usize = 4> {
    slots: S,
    /// Timers pending: the heap array is positions `0..len`.
    len: usize,
    next_seq: u64,
    /// The first free handle slot (number, `NIL`: none) ...
    free_head: u32,
    /// ... and, past the free list, handle slots never used: numbers above this.
    unused_from: u32,
    _value: core::marker::PhantomData<fn() -> T>,
}

impl<T, const N: usize, const D: usize> Default for TimerHeap<T, N, D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, S, const D: usize> TimerHeapOn<T, S, D> {
    const ARITY_IN_RANGE: () = assert!(D >= 2 && D <= 16, "timer-core: heap arity must be 2..=16");
}

impl<T, const N: usize, const D: usize> TimerHeap<T, N, D> {
    const CAPACITY_FITS: () = assert!(
        N <= MAX_CAPACITY,
        "timer-core: capacity must be below u32::MAX"
    );

    /// An empty heap of `N` timers: all zero bytes, and `const`, so it can live in a `static`
    /// (in `.bss`).
    pub const fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::ARITY_IN_RANGE;
        #[allow(clippy::let_unit_value)]
        let () = Self::CAPACITY_FITS;
        Self {
            slots: [const { HeapSlot::new() }; N],
            len: 0,
            next_seq: 0,
            free_head: NIL,
            unused_from: 0,
            _value: core::marker::PhantomData,
        }
    }
}

#[cfg(feature = "alloc")]
impl<T, const D: usize> TimerHeapOn<T, alloc::boxed::Box<[HeapSlot<T>]>, D> {
    /// An empty heap of `capacity` timers, its slots in one heap allocation.
    ///
    /// # Examples
    ///
    /// ```
    /// use timer_core::{TimerHeapOn, TimerQueue};
    ///
    /// let mut heap = TimerHeapOn::<u32, _>::with_capacity(100_000);
    /// assert_eq!(heap.capacity(), 100_000);
    /// heap.insert(3, 1).unwrap();
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_storage((0..capacity).map(|_| HeapSlot::new()).collect())
    }
}

impl<T, S: Storage<HeapSlot<T>>, const D: usize> TimerHeapOn<T, S, D> {
    /// An empty heap over `storage`, which holds one timer per slot: its capacity is
    /// `storage`'s length. O(capacity): every slot is emptied (values left in it are dropped).
    pub fn with_storage(mut storage: S) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::ARITY_IN_RANGE;
        for slot in storage.as_mut() {
            *slot = HeapSlot::new();
        }
        Self {
            slots: storage,
            len: 0,
            next_seq: 0,
            free_head: NIL,
            unused_from: 0,
            _value: core::marker::PhantomData,
        }
    }

    /// Gives the storage back (for reuse), dropping every pending timer.
    pub fn into_storage(self) -> S {
        self.slots
    }

    fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    #[inline]
    fn slots(&self) -> &[HeapSlot<T>] {
        self.slots.as_ref()
    }

    #[inline]
    fn slots_mut(&mut self) -> &mut [HeapSlot<T>] {
        self.slots.as_mut()
    }

    /// The heap position of the timer `id` names, if it is pending.
    #[inline]
    fn position_of(&self, id: TimerId) -> Option<usize> {
        let handle = self.slots().get(position(id.slot()))?.handle;
        // Pending generations are odd, so a match means pending.
        (handle.generation == id.generation()).then_some(handle.link as usize)
    }

    /// Takes a free handle slot for a timer about to go to heap position `at`: its number and
    /// new (odd) generation.
    fn allocate(&mut self, at: usize) -> Option<(NonZeroU32, NonZeroU32)> {
        let capacity = self.capacity();
        let number = if self.free_head != NIL {
            self.free_head
        } else if (self.unused_from as usize) < capacity {
            self.unused_from + 1
        } else {
            return None;
        };
        let free_head = self.free_head;
        let handle = &mut self.slots.as_mut().get_mut(position(number))?.handle;
        // A free slot's generation is even and below u32::MAX: this cannot wrap.
        let generation = NonZeroU32::new(handle.generation | 1)?;
        let next_free = handle.link;
        *handle = Handle {
            generation: generation.get(),
            link: at as u32,
        };
        if free_head != NIL {
            self.free_head = next_free;
        } else {
            self.unused_from += 1;
        }
        Some((NonZeroU32::new(number)?, generation))
    }

    /// Frees handle slot `number`, whose timer has left the heap; a slot whose generation would
    /// wrap is retired instead (never reused), so old handles stay stale for good.
    fn release(&mut self, number: u32) {
        let free_head = self.free_head;
        let Some(slot) = self.slots.as_mut().get_mut(position(number)) else {
            return;
        };
        let handle = &mut slot.handle;
        if handle.generation == u32::MAX {
            *handle = Handle::EMPTY;
            return;
        }
        *handle = Handle {
            generation: handle.generation + 1,
            link: free_head,
        };
        self.free_head = number;
    }

    /// Puts `entry` at heap position `at` and tells its handle.
    #[inline]
    fn place(slots: &mut [HeapSlot<T>], at: usize, entry: Entry<T>) {
        let number = entry.slot.get();
        slots[at].entry = Some(entry);
        if let Some(slot) = slots.get_mut(position(number)) {
            slot.handle.link = at as u32;
        }
    }

    /// Moves the entry at `from` (which must hold one) up to the hole at `to`.
    #[inline]
    fn shift(slots: &mut [HeapSlot<T>], from: usize, to: usize) {
        if let Some(entry) = slots[from].entry.take() {
            Self::place(slots, to, entry);
        }
    }

    /// Sifts `entry` up from the hole at `at` and places it.
    fn sift_up(&mut self, mut at: usize, entry: Entry<T>) {
        let key = entry.key();
        let slots = self.slots.as_mut();
        while at > 0 {
            let parent = (at - 1) / D;
            if key >= key_at(slots, parent) {
                break;
            }
            Self::shift(slots, parent, at);
            at = parent;
        }
        Self::place(slots, at, entry);
    }

    /// The child of `at` with the smallest key, and that key, if `at` has children. The choice
    /// among the children is made with selects, not branches: which child wins is a coin toss
    /// the branch predictor would lose.
    #[inline]
    fn least_child(slots: &[HeapSlot<T>], at: usize, len: usize) -> Option<(usize, u128)> {
        let first = D * at + 1;
        if first >= len {
            return None;
        }
        let mut best = first;
        let mut best_key = key_at(slots, first);
        if first + D <= len {
            // All D children: a fixed count the compiler unrolls.
            for child in first + 1..first + D {
                let key = key_at(slots, child);
                let less = key < best_key;
                best = if less { child } else { best };
                best_key = if less { key } else { best_key };
            }
        } else {
            for child in first + 1..len {
                let key = key_at(slots, child);
                let less = key < best_key;
                best = if less { child } else { best };
                best_key = if less { key } else { best_key };
            }
        }
        Some((best, best_key))
    }

    /// Sifts `entry` down from the hole at `at` and places it.
    fn sift_down(&mut self, mut at: usize, entry: Entry<T>) {
        let key = entry.key();
        let len = self.len;
        let slots = self.slots.as_mut();
        while let Some((child, child_key)) = Self::least_child(slots, at, len) {
            if child_key >= key {
                break;
            }
            Self::shift(slots, child, at);
            at = child;
        }
        Self::place(slots, at, entry);
    }

    /// Fills the hole at the root with `entry` (the heap's last), bottom-up (Floyd): the hole
    /// goes down to a leaf along the least children, with no comparison against `entry`, which
    /// then sifts up from there, usually not far, since it came from the bottom.
    fn refill_root(&mut self, entry: Entry<T>) {
        let len = self.len;
        let slots = self.slots.as_mut();
        let mut at = 0;
        while let Some((child, _)) = Self::least_child(slots, at, len) {
            Self::shift(slots, child, at);
            at = child;
        }
        self.sift_up(at, entry);
    }

    /// Puts `entry` into the hole at `at` and restores heap order around it.
    fn repair(&mut self, at: usize, entry: Entry<T>) {
        if at > 0 && entry.key() < key_at(self.slots(), (at - 1) / D) {
            self.sift_up(at, entry);
        } else if at == 0 {
            self.refill_root(entry);
        } else {
            self.sift_down(at, entry);
        }
    }

    /// Removes the timer at heap position `at` and frees its handle.
    fn remove_at(&mut self, at: usize) -> Option<Expired<T>> {
        let entry = self.slots_mut().get_mut(at)?.entry.take()?;
        self.len -= 1;
        if at != self.len {
            let len = self.len;
            if let Some(last) = self.slots_mut()[len].entry.take() {
                self.repair(at, last);
            }
        }
        let number = entry.slot.get();
        let generation = NonZeroU32::new(self.slots().get(position(number))?.handle.generation)?;
        self.release(number);
        Some(Expired {
            id: TimerId::new(number, generation),
            deadline: entry.deadline,
            value: entry.value,
        })
    }

    fn entry(&self, id: TimerId) -> Option<&Entry<T>> {
        let at = self.position_of(id)?;
        self.slots().get(at)?.entry.as_ref()
    }
}

impl<T, S: Storage<HeapSlot<T>>, const D: usize> TimerQueue<T> for TimerHeapOn<T, S, D> {
    fn insert(&mut self, deadline: Tick, value: T) -> Result<TimerId, Full<T>> {
        let at = self.len;
        let Some((slot, generation)) = self.allocate(at) else {
            return Err(Full(value));
        };
        let seq = self.next_seq();
        self.len += 1;
        let entry = Entry {
            deadline,
            seq,
            slot,
            value,
        };
        self.sift_up(at, entry);
        Ok(TimerId::new(slot.get(), generation))
    }

    fn cancel(&mut self, id: TimerId) -> Result<T, StaleTimer> {
        let at = self.position_of(id).ok_or(StaleTimer)?;
        self.remove_at(at)
            .map(|expired| expired.value)
            .ok_or(StaleTimer)
    }

    fn reschedule(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer> {
        let at = self.position_of(id).ok_or(StaleTimer)?;
        let seq = self.next_seq();
        let mut entry = self
            .slots_mut()
            .get_mut(at)
            .and_then(|slot| slot.entry.take())
            .ok_or(StaleTimer)?;
        // A timer's key only moves one way here, so only one neighbour can be out of order: a
        // later deadline (a new sequence number is always larger) can only be above its
        // children, an earlier one only below its parent. Deciding from the old key saves the
        // load of the other side (a cache miss in a large heap).
        let later = deadline >= entry.deadline;
        entry.deadline = deadline;
        entry.seq = seq;
        if later {
            self.sift_down(at, entry);
        } else {
            self.sift_up(at, entry);
        }
        Ok(())
    }

    fn deadline(&self, id: TimerId) -> Option<Tick> {
        self.entry(id).map(|entry| entry.deadline)
    }

    fn get(&self, id: TimerId) -> Option<&T> {
        self.entry(id).map(|entry| &entry.value)
    }

    fn get_mut(&mut self, id: TimerId) -> Option<&mut T> {
        let at = self.position_of(id)?;
        self.slots_mut()
            .get_mut(at)?
            .entry
            .as_mut()
            .map(|entry| &mut entry.value)
    }

    fn next_deadline(&self) -> Option<Tick> {
        self.slots()
            .first()?
            .entry
            .as_ref()
            .map(|entry| entry.deadline)
    }

    fn pop_expired(&mut self, now: Tick) -> Option<Expired<T>> {
        if self.has_expired(now) {
            self.remove_at(0)
        } else {
            None
        }
    }

    fn has_expired(&mut self, now: Tick) -> bool {
        self.next_deadline().is_some_and(|deadline| deadline <= now)
    }

    fn pop_any(&mut self) -> Option<Expired<T>> {
        if self.len == 0 {
            None
        } else {
            self.remove_at(self.len - 1)
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn capacity(&self) -> usize {
        self.slots().len().min(MAX_CAPACITY)
    }

    fn is_full(&self) -> bool {
        self.free_head == NIL && self.unused_from as usize >= self.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn fire_all<const N: usize, const D: usize>(
        heap: &mut TimerHeap<u32, N, D>,
        now: Tick,
    ) -> Vec<u32> {
        let mut out = Vec::new();
        let _ = heap.expire(now, usize::MAX, |e| out.push(e.value));
        out
    }

    #[test]
    fn binary_and_quaternary_agree_on_order() {
        let mut two: TimerHeap<u32, 64, 2> = TimerHeap::new();
        let mut four: TimerHeap<u32, 64, 4> = TimerHeap::new();
        for i in 0..64u32 {
            let deadline = u64::from((i * 37) % 11);
            two.insert(deadline, i).unwrap();
            four.insert(deadline, i).unwrap();
        }
        let a = fire_all(&mut two, 100);
        assert_eq!(a, fire_all(&mut four, 100));
        let mut expected: Vec<u32> = (0..64).collect();
        expected.sort_by_key(|&i| ((i * 37) % 11, i));
        assert_eq!(a, expected);
    }

    #[test]
    fn cancel_from_middle_keeps_heap_order() {
        let mut heap: TimerHeap<u32, 16> = TimerHeap::new();
        let ids: Vec<_> = (0..16u32)
            .map(|i| heap.insert(u64::from(16 - i), i).unwrap())
            .collect();
        for id in ids.iter().step_by(3) {
            heap.cancel(*id).unwrap();
        }
        let fired = fire_all(&mut heap, 100);
        let mut expected: Vec<u32> = (0..16).filter(|i| i % 3 != 0).collect();
        expected.reverse();
        assert_eq!(fired, expected);
    }

    #[test]
    fn reschedule_later_sinks_and_earlier_rises_from_any_position() {
        // Every timer of a full binary and quaternary heap moved once later and once earlier,
        // from wherever it sits: the firing order must be the deadline order each time.
        fn check<const D: usize>() {
            let mut heap: TimerHeap<u32, 64, D> = TimerHeap::new();
            let ids: Vec<_> = (0..64u32)
                .map(|v| heap.insert(u64::from(v) * 10 + 10, v).unwrap())
                .collect();
            for (v, id) in (0u32..).zip(&ids) {
                // Later for even values, earlier (before every other) for odd ones.
                let deadline = if v % 2 == 0 {
                    1_000 + u64::from(v)
                } else {
                    u64::from(v)
                };
                heap.reschedule(*id, deadline).unwrap();
            }
            let odd: Vec<u32> = (0..64).filter(|v| v % 2 == 1).collect();
            let even: Vec<u32> = (0..64).filter(|v| v % 2 == 0).collect();
            assert_eq!(fire_all(&mut heap, 999), odd);
            assert_eq!(fire_all(&mut heap, 2_000), even);
        }
        check::<2>();
        check::<4>();
    }

    #[test]
    fn reschedule_to_same_deadline_moves_behind_equals() {
        let mut heap: TimerHeap<u32, 4> = TimerHeap::new();
        let a = heap.insert(5, 1).unwrap();
        heap.insert(5, 2).unwrap();
        heap.reschedule(a, 5).unwrap();
        assert_eq!(fire_all(&mut heap, 5), [2, 1]);
    }

    #[test]
    fn slot_size_is_32_bytes_for_u32() {
        assert_eq!(core::mem::size_of::<HeapSlot<u32>>(), 32);
    }

    #[test]
    fn exhausted_generation_retires_the_handle_slot() {
        let mut heap: TimerHeap<u32, 1> = TimerHeap::new();
        heap.slots[0].handle.generation = u32::MAX - 1;
        heap.unused_from = 1;
        heap.free_head = 1;
        let id = heap.insert(5, 7).unwrap();
        assert_eq!(id.generation(), u32::MAX);
        assert_eq!(heap.cancel(id), Ok(7));
        // Retired: full for good, and the old handle stays stale.
        assert!(heap.is_full());
        assert_eq!(heap.insert(6, 8), Err(Full(8)));
        assert_eq!(heap.deadline(id), None);
    }

    #[test]
    fn stale_handle_after_pop_is_refused() {
        let mut heap: TimerHeap<u32, 2> = TimerHeap::new();
        let a = heap.insert(1, 1).unwrap();
        assert_eq!(fire_all(&mut heap, 1), [1]);
        let b = heap.insert(2, 2).unwrap();
        assert_eq!(heap.reschedule(a, 9), Err(StaleTimer));
        assert_eq!(heap.deadline(b), Some(2));
    }
}
