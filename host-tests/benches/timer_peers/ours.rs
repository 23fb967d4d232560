//! timer-core's own queues as contenders: the wheel and the 4-ary and binary heaps, each over
//! slots in a `Vec` sized to n, as a host program makes one; and their exact bytes per timer,
//! which the memory table prints instead of an allocator count.

use timer_core::{HeapSlot, TimerHeapOn, TimerId, TimerQueue, TimerWheelOn, WheelCells, WheelSlot};

use crate::contender::{Contender, Kind};

/// A timer-core queue over slots the caller owns, as a host program makes one: a `Vec` of n
/// slots (and for the wheel a `Vec` of n cells) handed to `with_storage`, which empties them, so
/// their pages are touched before any measurement. The queue proper stays on the stack: a few
/// KiB.
pub struct Ours<Q>(Q);

type OurWheel = TimerWheelOn<u32, Vec<WheelSlot<u32>>, Vec<WheelCells>>;
type OurHeap<const D: usize> = TimerHeapOn<u32, Vec<HeapSlot<u32>>, D>;

pub fn our_wheel(n: usize) -> Ours<OurWheel> {
    Ours(TimerWheelOn::with_storage(
        (0..n).map(|_| WheelSlot::new()).collect(),
        vec![WheelCells::new(); n],
    ))
}

/// [`our_wheel`] with its timers in blocks at any size where they fit (from about 8,900 timers),
/// not only from 2^19.
pub fn our_wheel_in_blocks(n: usize) -> Ours<OurWheel> {
    Ours(TimerWheelOn::with_storage_in_blocks(
        (0..n).map(|_| WheelSlot::new()).collect(),
        vec![WheelCells::new(); n],
    ))
}

pub fn our_heap<const D: usize>(n: usize) -> Ours<OurHeap<D>> {
    Ours(TimerHeapOn::with_storage(
        (0..n).map(|_| HeapSlot::new()).collect(),
    ))
}

impl<Q: TimerQueue<u32>> Contender for Ours<Q> {
    type Handle = TimerId;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> TimerId {
        self.0.insert(deadline, value).expect("capacity is n")
    }

    #[inline]
    fn cancel(&mut self, id: TimerId) {
        self.0.cancel(id).expect("handle is live");
    }

    #[inline]
    fn reschedule(&mut self, id: TimerId, deadline: u64) -> TimerId {
        self.0.reschedule(id, deadline).expect("handle is live");
        id
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        let _ = self.0.expire(now, usize::MAX, |e| fired(e.value));
    }
}

/// Our queue's bytes per timer at capacity n: its slots and cells (its only heap allocations)
/// plus the queue proper, exact and fixed.
pub fn our_bytes_per_slot(kind: Kind, n: usize) -> f64 {
    let (slot, queue) = match kind {
        Kind::Wheel | Kind::WheelInBlocks => (wheel_timer_bytes(), size_of::<OurWheel>()),
        Kind::Heap4 => (size_of::<HeapSlot<u32>>(), size_of::<OurHeap<4>>()),
        Kind::Heap2 => (size_of::<HeapSlot<u32>>(), size_of::<OurHeap<2>>()),
        _ => return f64::NAN,
    };
    (n * slot + queue) as f64 / n as f64
}

/// A wheel timer's bytes: its slot and its cells, in two allocations.
fn wheel_timer_bytes() -> usize {
    size_of::<WheelSlot<u32>>() + size_of::<WheelCells>()
}

/// Our queue's slot bytes per timer: what the allocator sees of it.
pub fn our_slot_bytes(kind: Kind) -> f64 {
    match kind {
        Kind::Wheel | Kind::WheelInBlocks => wheel_timer_bytes() as f64,
        Kind::Heap4 | Kind::Heap2 => size_of::<HeapSlot<u32>>() as f64,
        _ => f64::NAN,
    }
}
