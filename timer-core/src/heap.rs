//! An indexed d-ary min-heap.

use core::num::NonZeroU32;

use crate::arena::{Arena, Cell, Node, Slot, NIL};
use crate::{Expired, Full, StaleTimer, Storage, Tick, TimerId, TimerQueue};

/// A timer's value and where its key sits in the heap.
pub(crate) struct HeapNode<T> {
    value: T,
    generation: NonZeroU32,
    position: u32,
}

impl<T> Node for HeapNode<T> {
    fn generation(&self) -> NonZeroU32 {
        self.generation
    }
}

/// The ordering key, kept in heap order so comparisons never leave the keys. Halves of `u32` so
/// that a [`HeapSlot`] is 32 bytes for a `u32` value (a `u64` field would align it to 40).
#[derive(Clone, Copy)]
struct Key {
    deadline: [u32; 2],
    /// Insertion order, to fire equal deadlines first-in first-out. 64 bits: never wraps.
    seq: [u32; 2],
    index: u32,
}

#[inline]
fn join(halves: [u32; 2]) -> u64 {
    (u64::from(halves[1]) << 32) | u64::from(halves[0])
}

#[inline]
fn split(value: u64) -> [u32; 2] {
    [value as u32, (value >> 32) as u32]
}

impl Key {
    /// All zero bytes.
    const EMPTY: Self = Self {
        deadline: [0; 2],
        seq: [0; 2],
        index: NIL,
    };

    #[inline]
    fn new(deadline: Tick, seq: u64, index: u32) -> Self {
        Self {
            deadline: split(deadline),
            seq: split(seq),
            index,
        }
    }

    #[inline]
    fn deadline(&self) -> Tick {
        join(self.deadline)
    }

    #[inline]
    fn before(&self, other: &Self) -> bool {
        (self.deadline(), join(self.seq)) < (other.deadline(), join(other.seq))
    }
}

/// One timer's storage in a [`TimerHeapOn`]: 32 bytes for a `u32` value (a heap key and the
/// timer's node; the key at heap position `p` and the node of slot `p` share a `HeapSlot`).
///
/// An inline [`TimerHeap<T, N>`] holds `N` of them; for a heap sized at run time, make a slice of
/// them (`HeapSlot::new()` is an empty one) and hand it to [`TimerHeapOn::with_storage`].
pub struct HeapSlot<T> {
    key: Key,
    node: Slot<HeapNode<T>>,
}

impl<T> HeapSlot<T> {
    /// An empty slot (all zero bytes).
    pub const fn new() -> Self {
        Self {
            key: Key::EMPTY,
            node: Slot::EMPTY,
        }
    }
}

impl<T> Default for HeapSlot<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Cell for HeapSlot<T> {
    type Node = HeapNode<T>;
    const EMPTY: Self = Self::new();

    #[inline]
    fn slot(&self) -> &Slot<Self::Node> {
        &self.node
    }

    #[inline]
    fn slot_mut(&mut self) -> &mut Slot<Self::Node> {
        &mut self.node
    }
}

/// An indexed `D`-ary min-heap of `N` timers inline: [`TimerHeapOn`] over `[HeapSlot<T>; N]`,
/// with a `const fn new()` for `static`s.
pub type TimerHeap<T, const N: usize, const D: usize = 4> = TimerHeapOn<T, [HeapSlot<T>; N], D>;

/// An indexed min-heap of timers with `D` children per node (default 4), over storage `S` of
/// [`HeapSlot`]s (inline: [`TimerHeap<T, N, D>`]; a slice the caller owns:
/// [`with_storage`](Self::with_storage)).
///
/// O(log n) insert, cancel and reschedule (each timer knows its heap position, so cancel needs no
/// search and no lazy deletion), O(1) next deadline, which is always exact. Equal deadlines fire
/// in insertion order. The arity is a parameter so it can be measured: the benchmark in
/// `host-tests` runs `D = 2` and `D = 4` side by side, and 4 won (see the repository README).
///
/// Memory: 32 bytes per slot for a `u32` value (20-byte key + 12-byte node).
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
    nodes: Arena<HeapSlot<T>, S>,
    len: usize,
    next_seq: u64,
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
    /// An empty heap of `N` timers: all zero bytes, and `const`, so it can live in a `static`
    /// (in `.bss`).
    pub const fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::ARITY_IN_RANGE;
        Self {
            nodes: Arena::new(),
            len: 0,
            next_seq: 0,
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
    pub fn with_storage(storage: S) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::ARITY_IN_RANGE;
        Self {
            nodes: Arena::with_storage(storage),
            len: 0,
            next_seq: 0,
        }
    }

    /// Gives the storage back (for reuse), dropping every pending timer.
    pub fn into_storage(self) -> S {
        self.nodes.into_storage()
    }

    fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    #[inline]
    fn key(&self, position: usize) -> Key {
        self.nodes.cells()[position].key
    }

    #[inline]
    fn place(&mut self, position: usize, key: Key) {
        self.nodes.cells_mut()[position].key = key;
        if let Some(node) = self.nodes.get_mut(key.index) {
            node.position = position as u32;
        }
    }

    fn sift_up(&mut self, mut position: usize) {
        let key = self.key(position);
        while position > 0 {
            let parent = (position - 1) / D;
            let above = self.key(parent);
            if !key.before(&above) {
                break;
            }
            self.place(position, above);
            position = parent;
        }
        self.place(position, key);
    }

    fn sift_down(&mut self, mut position: usize) {
        let key = self.key(position);
        let len = self.len;
        loop {
            let first = D * position + 1;
            if first >= len {
                break;
            }
            let end = (first + D).min(len);
            let cells = self.nodes.cells();
            let mut best = first;
            let mut best_key = cells[first].key;
            for (child, cell) in cells.iter().enumerate().take(end).skip(first + 1) {
                if cell.key.before(&best_key) {
                    best = child;
                    best_key = cell.key;
                }
            }
            if !best_key.before(&key) {
                break;
            }
            self.place(position, best_key);
            position = best;
        }
        self.place(position, key);
    }

    /// Restores heap order around `position` after its key changed.
    fn repair(&mut self, position: usize) {
        if position > 0 && self.key(position).before(&self.key((position - 1) / D)) {
            self.sift_up(position);
        } else {
            self.sift_down(position);
        }
    }

    /// Removes the key at `position` and frees its timer.
    fn remove_at(&mut self, position: usize) -> Option<Expired<T>> {
        let key = self.key(position);
        self.len -= 1;
        if position != self.len {
            let last = self.key(self.len);
            self.place(position, last);
            self.repair(position);
        }
        let (id, node) = self.nodes.release_with_id(key.index)?;
        Some(Expired {
            id,
            deadline: key.deadline(),
            value: node.value,
        })
    }

    fn position_of(&self, id: TimerId) -> Option<usize> {
        self.nodes.live(id).map(|node| node.position as usize)
    }
}

impl<T, S: Storage<HeapSlot<T>>, const D: usize> TimerQueue<T> for TimerHeapOn<T, S, D> {
    fn insert(&mut self, deadline: Tick, value: T) -> Result<TimerId, Full<T>> {
        let position = self.len;
        let id = self
            .nodes
            .allocate(value, |value, generation| HeapNode {
                value,
                generation,
                position: position as u32,
            })
            .map_err(Full)?;
        let seq = self.next_seq();
        self.nodes.cells_mut()[position].key = Key::new(deadline, seq, id.slot());
        self.len += 1;
        self.sift_up(position);
        Ok(id)
    }

    fn cancel(&mut self, id: TimerId) -> Result<T, StaleTimer> {
        let position = self.position_of(id).ok_or(StaleTimer)?;
        self.remove_at(position)
            .map(|expired| expired.value)
            .ok_or(StaleTimer)
    }

    fn reschedule(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer> {
        let position = self.position_of(id).ok_or(StaleTimer)?;
        let seq = self.next_seq();
        let key = &mut self.nodes.cells_mut()[position].key;
        key.deadline = split(deadline);
        key.seq = split(seq);
        self.repair(position);
        Ok(())
    }

    fn deadline(&self, id: TimerId) -> Option<Tick> {
        self.position_of(id).map(|p| self.key(p).deadline())
    }

    fn get(&self, id: TimerId) -> Option<&T> {
        self.nodes.live(id).map(|node| &node.value)
    }

    fn get_mut(&mut self, id: TimerId) -> Option<&mut T> {
        self.nodes.live_mut(id).map(|node| &mut node.value)
    }

    fn next_deadline(&self) -> Option<Tick> {
        (self.len > 0).then(|| self.key(0).deadline())
    }

    fn pop_expired(&mut self, now: Tick) -> Option<Expired<T>> {
        if self.has_expired(now) {
            self.remove_at(0)
        } else {
            None
        }
    }

    fn has_expired(&mut self, now: Tick) -> bool {
        self.len > 0 && self.key(0).deadline() <= now
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
        self.nodes.capacity()
    }

    fn is_full(&self) -> bool {
        self.nodes.is_full()
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
    fn reschedule_to_same_deadline_moves_behind_equals() {
        let mut heap: TimerHeap<u32, 4> = TimerHeap::new();
        let a = heap.insert(5, 1).unwrap();
        heap.insert(5, 2).unwrap();
        heap.reschedule(a, 5).unwrap();
        assert_eq!(fire_all(&mut heap, 5), [2, 1]);
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
