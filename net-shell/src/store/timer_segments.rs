//! The store's key timers: one timer-core queue over lent slots (a board's), or, in a store
//! sized at run time, queues added as volatile keys arrive.
//!
//! A timer-core queue runs over one slice it clears when it is made, so a queue cannot grow in
//! place. More keys with a time to live get another queue (a segment) of up to
//! [`MAX_SEGMENT`] slots, made in one step of at most some 3 MiB. As keys go, the last segment
//! empties into the others once they could hold twice the timers there are: a few timers move
//! per change ([`KeyTimers::move_one_down`]), and the empty segment goes. A segment is added
//! only when all are full, so a table at a segment's edge does not add and drop it by turns. A
//! key's timer is named by its segment and its [`TimerId`] there.

use timer_core::{Expired, Tick, TimerId, TimerQueue};

#[cfg(feature = "alloc")]
use crate::memory::Memory;

// The segment's queue: the wheel with `key-timers-wheel`, else the heap. Both keep
// [`TimerQueue`]'s contract: deadline order, equal deadlines first in first out, budgeted expiry.
#[cfg(not(feature = "key-timers-wheel"))]
pub(super) use heap::*;
#[cfg(feature = "key-timers-wheel")]
pub(super) use wheel::*;

/// One segment: timer-core's 4-ary heap (a board's few hundred keys: O(log n) with a tiny n,
/// nothing beyond its slots).
#[cfg(not(feature = "key-timers-wheel"))]
mod heap {
    use crate::memory::Memory;
    pub(in crate::store) use timer_core::HeapSlot as TimerSlot;

    pub(super) type Queue<'a> = timer_core::TimerHeapOn<u32, TimerMemory<'a>>;

    /// The memory one segment runs over: its slots.
    pub(in crate::store) type TimerMemory<'a> = Memory<'a, TimerSlot<u32>>;

    /// Bytes one key's timer takes: its slot.
    pub(in crate::store) const TIMER_BYTES: usize = core::mem::size_of::<TimerSlot<u32>>();

    /// A segment over `memory`.
    pub(super) fn queue_over(memory: TimerMemory<'_>) -> Queue<'_> {
        Queue::with_storage(memory)
    }

    /// `N` keys' timers inline (for [`StoreArrays`](crate::store::StoreArrays)): their slots.
    pub(in crate::store) struct TimerArrays<const N: usize> {
        slots: [TimerSlot<u32>; N],
    }

    impl<const N: usize> TimerArrays<N> {
        /// Empty (all zero bytes).
        pub(in crate::store) const fn new() -> Self {
            Self {
                slots: [const { TimerSlot::new() }; N],
            }
        }

        /// The memory a segment runs over, borrowed.
        pub(in crate::store) fn lend(&mut self) -> TimerMemory<'_> {
            Memory::from(&mut self.slots[..])
        }
    }

    /// Memory for a segment of `len` timers, allocated.
    #[cfg(feature = "alloc")]
    pub(super) fn allocate<'a>(len: usize) -> TimerMemory<'a> {
        super::slot_memory(len)
    }

    /// No memory: a segment of no timers.
    #[cfg(feature = "alloc")]
    pub(super) fn no_memory<'a>() -> TimerMemory<'a> {
        Memory::empty()
    }
}

/// One segment: timer-core's wheel (a host's millions of keys: O(1) per operation, 3 KiB of list
/// heads per segment), over its slots and, apart, their cells.
#[cfg(feature = "key-timers-wheel")]
mod wheel {
    use crate::memory::Memory;
    use timer_core::WheelCells;
    pub(in crate::store) use timer_core::WheelSlot as TimerSlot;

    pub(super) type Queue<'a> =
        timer_core::TimerWheelOn<u32, Memory<'a, TimerSlot<u32>>, Memory<'a, WheelCells>>;

    /// The memory one segment runs over: its slots and their cells.
    pub(in crate::store) type TimerMemory<'a> =
        (Memory<'a, TimerSlot<u32>>, Memory<'a, WheelCells>);

    /// Bytes one key's timer takes: its slot and its cells.
    pub(in crate::store) const TIMER_BYTES: usize =
        core::mem::size_of::<TimerSlot<u32>>() + core::mem::size_of::<WheelCells>();

    /// A segment over `memory`.
    pub(super) fn queue_over(memory: TimerMemory<'_>) -> Queue<'_> {
        Queue::with_storage(memory.0, memory.1)
    }

    /// `N` keys' timers inline (for [`StoreArrays`](crate::store::StoreArrays)): their slots
    /// and their cells.
    pub(in crate::store) struct TimerArrays<const N: usize> {
        slots: [TimerSlot<u32>; N],
        cells: [WheelCells; N],
    }

    impl<const N: usize> TimerArrays<N> {
        /// Empty (all zero bytes).
        pub(in crate::store) const fn new() -> Self {
            Self {
                slots: [const { TimerSlot::new() }; N],
                cells: [WheelCells::new(); N],
            }
        }

        /// The memory a segment runs over, borrowed.
        pub(in crate::store) fn lend(&mut self) -> TimerMemory<'_> {
            (
                Memory::from(&mut self.slots[..]),
                Memory::from(&mut self.cells[..]),
            )
        }
    }

    /// Memory for a segment of `len` timers, allocated.
    #[cfg(feature = "alloc")]
    pub(super) fn allocate<'a>(len: usize) -> TimerMemory<'a> {
        (
            super::slot_memory(len),
            Memory::from(alloc::vec![WheelCells::new(); len]),
        )
    }

    /// No memory: a segment of no timers.
    #[cfg(feature = "alloc")]
    pub(super) fn no_memory<'a>() -> TimerMemory<'a> {
        (Memory::empty(), Memory::empty())
    }
}

/// `len` empty slots, allocated.
#[cfg(feature = "alloc")]
fn slot_memory<'a>(len: usize) -> Memory<'a, TimerSlot<u32>> {
    Memory::from(
        (0..len)
            .map(|_| TimerSlot::new())
            .collect::<alloc::vec::Vec<_>>(),
    )
}

/// Slots of the first segment a growing store makes (fewer if it holds fewer keys: then one
/// segment is all there is).
#[cfg(feature = "alloc")]
const FIRST_SEGMENT: usize = 1024;
/// The most slots of one segment: each new one doubles the slots, up to this.
#[cfg(feature = "alloc")]
pub(super) const MAX_SEGMENT: usize = 1 << 17;

/// A key's timer: its segment and its id there.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct KeyTimer {
    pub(super) segment: u16,
    pub(super) id: TimerId,
}

/// The key timers, one per volatile key.
pub(super) struct KeyTimers<'a> {
    first: Queue<'a>,
    #[cfg(feature = "alloc")]
    more: alloc::vec::Vec<Queue<'a>>,
    /// Whether segments are added as needed (memory sized at run time).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    growing: bool,
    /// The most slots in all: one per key the store can hold.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    limit: usize,
    /// No segment below this one has a free slot.
    room_from: usize,
}

impl<'a> KeyTimers<'a> {
    /// Over lent slots: one segment, never more.
    pub(super) fn lent(memory: TimerMemory<'a>) -> Self {
        Self {
            first: queue_over(memory),
            #[cfg(feature = "alloc")]
            more: alloc::vec::Vec::new(),
            growing: false,
            limit: 0,
            room_from: 0,
        }
    }

    /// No slots yet; segments are added as keys get a time to live, up to `limit` slots.
    #[cfg(feature = "alloc")]
    pub(super) fn growing(limit: usize) -> Self {
        Self {
            first: queue_over(no_memory()),
            more: alloc::vec::Vec::new(),
            growing: true,
            limit,
            room_from: 0,
        }
    }

    fn segments(&self) -> impl Iterator<Item = &Queue<'a>> {
        let first = core::iter::once(&self.first);
        #[cfg(feature = "alloc")]
        return first.chain(self.more.iter());
        #[cfg(not(feature = "alloc"))]
        first
    }

    fn segment(&self, segment: u16) -> Option<&Queue<'a>> {
        match segment.checked_sub(1) {
            None => Some(&self.first),
            #[cfg(feature = "alloc")]
            Some(at) => self.more.get(usize::from(at)),
            #[cfg(not(feature = "alloc"))]
            Some(_) => None,
        }
    }

    fn segment_mut(&mut self, segment: u16) -> Option<&mut Queue<'a>> {
        match segment.checked_sub(1) {
            None => Some(&mut self.first),
            #[cfg(feature = "alloc")]
            Some(at) => self.more.get_mut(usize::from(at)),
            #[cfg(not(feature = "alloc"))]
            Some(_) => None,
        }
    }

    fn segment_count(&self) -> usize {
        #[cfg(feature = "alloc")]
        return 1 + self.more.len();
        #[cfg(not(feature = "alloc"))]
        1
    }

    /// Timers held.
    pub(super) fn len(&self) -> usize {
        self.segments().map(TimerQueue::len).sum()
    }

    /// Slots in all segments.
    pub(super) fn capacity(&self) -> usize {
        self.segments().map(TimerQueue::capacity).sum()
    }

    /// Bytes of the slots and the queues' own fields.
    pub(super) fn bytes(&self) -> usize {
        self.capacity() * TIMER_BYTES + self.segment_count() * core::mem::size_of::<Queue<'a>>()
    }

    /// Bytes of the segments added as the store grew (the first one is lent, or empty).
    pub(super) fn allocated_bytes(&self) -> usize {
        #[cfg(feature = "alloc")]
        return self
            .more
            .iter()
            .map(|queue| queue.capacity() * TIMER_BYTES + core::mem::size_of::<Queue<'a>>())
            .sum();
        #[cfg(not(feature = "alloc"))]
        0
    }

    /// Whether a segment can be added (memory sized at run time, fewer slots than the limit).
    #[cfg(feature = "alloc")]
    fn can_grow(&self) -> bool {
        self.growing && self.capacity() < self.limit && self.segment_count() < usize::from(u16::MAX)
    }

    #[cfg(feature = "alloc")]
    fn next_segment_len(&self) -> usize {
        let capacity = self.capacity();
        capacity
            .clamp(FIRST_SEGMENT, MAX_SEGMENT)
            .min(self.limit - capacity)
    }

    /// A timer for key `index` at `deadline`, in the first segment with room, adding one if
    /// none has; `None` when no segment can be added (lent slots, all taken).
    pub(super) fn insert(&mut self, deadline: Tick, index: u32) -> Option<KeyTimer> {
        if let Some(timer) = self.insert_below(self.segment_count(), deadline, index) {
            return Some(timer);
        }
        #[cfg(feature = "alloc")]
        if self.can_grow() {
            let memory = allocate(self.next_segment_len());
            self.more.push(queue_over(memory));
            let segment = self.more.len() as u16;
            let id = self.more.last_mut()?.insert(deadline, index).ok()?;
            return Some(KeyTimer { segment, id });
        }
        None
    }

    /// A timer in the first segment below `end` with room.
    fn insert_below(&mut self, end: usize, deadline: Tick, index: u32) -> Option<KeyTimer> {
        while self.room_from < end {
            let segment = self.room_from as u16;
            if let Some(queue) = self.segment_mut(segment) {
                if let Ok(id) = queue.insert(deadline, index) {
                    return Some(KeyTimer { segment, id });
                }
            }
            self.room_from += 1;
        }
        None
    }

    /// Moves one timer out of the last added segment into an earlier one, while the others
    /// could hold twice the timers there are; the segment goes once empty. Returns the
    /// timer's new name and its key (whose entry must learn it), or `None` if none moved.
    ///
    /// A moved timer keeps its deadline, and counts as set when it moved: equal deadlines
    /// within a segment go first in, first out.
    #[cfg(feature = "alloc")]
    pub(super) fn move_one_down(&mut self) -> Option<(KeyTimer, u32)> {
        let last = self.more.last()?;
        let others = self.capacity() - last.capacity();
        if last.is_empty() || self.len() * 2 > others {
            return None;
        }
        let Expired {
            deadline, value, ..
        } = self.more.last_mut()?.pop_any()?;
        let end = self.segment_count() - 1;
        let moved = match self.insert_below(end, deadline, value) {
            Some(timer) => timer,
            // The others hold fewer than half their slots: not reached. Put it back.
            None => {
                let id = self.more.last_mut()?.insert(deadline, value).ok()?;
                return Some((
                    KeyTimer {
                        segment: end as u16,
                        id,
                    },
                    value,
                ));
            }
        };
        self.freed(end as u16);
        Some((moved, value))
    }

    /// Cancels a timer; returns its key, or `None` if it is not held.
    pub(super) fn cancel(&mut self, timer: KeyTimer) -> Option<u32> {
        let index = self.segment_mut(timer.segment)?.cancel(timer.id).ok()?;
        self.freed(timer.segment);
        Some(index)
    }

    /// Moves a held timer to `deadline`; `false` if it is not held.
    pub(super) fn reschedule(&mut self, timer: KeyTimer, deadline: Tick) -> bool {
        self.segment_mut(timer.segment)
            .is_some_and(|queue| queue.reschedule(timer.id, deadline).is_ok())
    }

    /// A held timer's deadline.
    pub(super) fn deadline(&self, timer: KeyTimer) -> Option<Tick> {
        self.segment(timer.segment)?.deadline(timer.id)
    }

    /// The earliest tick at which [`pop_expired`](Self::pop_expired) may have a timer (may be
    /// early, never late).
    pub(super) fn next_deadline(&self) -> Option<Tick> {
        self.segments().filter_map(TimerQueue::next_deadline).min()
    }

    /// A timer whose deadline is `<= now`, taken from its queue: in deadline order within a
    /// segment, segment after segment (every one of them is past its key's deadline). A sweep
    /// starts `from` at 0 and passes it back each time: it moves past segments with nothing
    /// due, so a sweep costs one look per segment, not one per segment and timer.
    pub(super) fn pop_expired(&mut self, now: Tick, from: &mut usize) -> Option<(KeyTimer, u32)> {
        while *from < self.segment_count() {
            let segment = *from as u16;
            if let Some(Expired { id, value, .. }) =
                self.segment_mut(segment).and_then(|q| q.pop_expired(now))
            {
                self.freed(segment);
                return Some((KeyTimer { segment, id }, value));
            }
            *from += 1;
        }
        None
    }

    /// Whether a timer's deadline is `<= now`.
    pub(super) fn has_expired(&mut self, now: Tick) -> bool {
        (0..self.segment_count() as u16).any(|segment| {
            self.segment_mut(segment)
                .is_some_and(|queue| queue.has_expired(now))
        })
    }

    /// Removes every timer; a growing store also gives back every segment.
    pub(super) fn clear(&mut self) {
        let _ = self.first.drain().count();
        #[cfg(feature = "alloc")]
        self.more.clear();
        self.room_from = 0;
    }

    /// A slot of `segment` was freed: it has room, and an empty last segment goes once the
    /// others could take twice what they hold.
    fn freed(&mut self, segment: u16) {
        self.room_from = self.room_from.min(usize::from(segment));
        #[cfg(feature = "alloc")]
        while self.more.last().is_some_and(TimerQueue::is_empty) {
            let last = self.more.last().map_or(0, TimerQueue::capacity);
            let others = self.capacity() - last;
            if self.len() * 2 > others {
                break;
            }
            self.more.pop();
            self.room_from = self.room_from.min(self.segment_count() - 1);
        }
    }
}
