//! Peer: `std::collections::BinaryHeap` with lazy deletion, the way a program on `std` alone
//! would build a cancellable timer queue: cancel and reschedule only retire a timer's heap
//! entry (a generation table says which entry is live), and stale entries are skipped when
//! they surface and swept out once they are more than a quarter of the heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::contender::{prefaulted, Contender, NIL};

/// The lazy heap sweeps once more than 1/`SWEEP_DIV` of its entries are stale (Go's runtime
/// timer heap uses 1/4 for its deleted timers).
const SWEEP_DIV: usize = 4;
/// `LazySlot::seq` of a free slot: no heap entry ever carries it.
const VACANT: u64 = u64::MAX;

/// One entry of the lazy heap; ordered by deadline, then insertion.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct LazyEntry {
    deadline: u64,
    seq: u64,
    index: u32,
}

/// A timer's state: the `seq` of its one valid heap entry (the generation table).
#[derive(Clone, Copy)]
struct LazySlot {
    seq: u64,
    /// The value while live; the next free slot while vacant.
    value: u32,
    generation: u32,
}

/// A handle to a timer in [`LazyHeap`]: its slot, and the slot's generation while it is live.
#[derive(Clone, Copy)]
pub struct SlotId {
    index: u32,
    generation: u32,
}

/// `BinaryHeap` with lazy deletion: cancel and reschedule only retire the timer's current
/// entry (its slot's `seq` moves on, O(1)); a reschedule pushes a new entry. Stale entries are
/// skipped when they surface at the top, and swept out with `retain` (O(len)) once they are
/// more than 1/[`SWEEP_DIV`] of the heap, so memory stays O(live).
pub struct LazyHeap {
    heap: BinaryHeap<Reverse<LazyEntry>>,
    slots: Vec<LazySlot>,
    free_head: u32,
    next_seq: u64,
    stale: usize,
}

impl LazyHeap {
    /// Room for `timers`, and for `entries` heap entries (live and stale).
    pub fn with_capacity(timers: usize, entries: usize) -> Self {
        Self {
            heap: BinaryHeap::from(Vec::with_capacity(entries)),
            slots: Vec::with_capacity(timers),
            free_head: NIL,
            next_seq: 0,
            stale: 0,
        }
    }

    /// Room for n timers with the pages already touched, as ours are after `new()`, so that
    /// no queue takes page faults inside a measurement. The heap gets room for the stale entries
    /// a sweep allows (a third of the live ones), so it never reallocates either.
    pub fn prefaulted(n: usize) -> Self {
        let entry = Reverse(LazyEntry {
            deadline: 0,
            seq: 0,
            index: 0,
        });
        let slot = LazySlot {
            seq: VACANT,
            value: 0,
            generation: 0,
        };
        Self {
            heap: BinaryHeap::from(prefaulted(n + n / 2, entry)),
            slots: prefaulted(n, slot),
            ..Self::with_capacity(0, 0)
        }
    }

    #[inline]
    fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    #[inline]
    fn live_slot(&mut self, id: SlotId) -> &mut LazySlot {
        let slot = &mut self.slots[id.index as usize];
        assert!(
            slot.seq != VACANT && slot.generation == id.generation,
            "handle is live"
        );
        slot
    }

    #[inline]
    fn free(&mut self, index: u32) {
        let slot = &mut self.slots[index as usize];
        slot.seq = VACANT;
        slot.generation = slot.generation.wrapping_add(1);
        slot.value = self.free_head;
        self.free_head = index;
    }

    #[inline]
    fn retire_one(&mut self) {
        self.stale += 1;
        if self.stale > 64 && self.stale * SWEEP_DIV > self.heap.len() {
            let slots = &self.slots;
            self.heap
                .retain(|Reverse(e)| slots[e.index as usize].seq == e.seq);
            self.stale = 0;
        }
    }
}

impl Contender for LazyHeap {
    type Handle = SlotId;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> SlotId {
        let seq = self.next_seq();
        let index = if self.free_head != NIL {
            let index = self.free_head;
            let slot = &mut self.slots[index as usize];
            self.free_head = slot.value;
            slot.seq = seq;
            slot.value = value;
            index
        } else {
            self.slots.push(LazySlot {
                seq,
                value,
                generation: 0,
            });
            (self.slots.len() - 1) as u32
        };
        self.heap.push(Reverse(LazyEntry {
            deadline,
            seq,
            index,
        }));
        SlotId {
            index,
            generation: self.slots[index as usize].generation,
        }
    }

    #[inline]
    fn cancel(&mut self, id: SlotId) {
        self.live_slot(id);
        self.free(id.index);
        self.retire_one();
    }

    #[inline]
    fn reschedule(&mut self, id: SlotId, deadline: u64) -> SlotId {
        let seq = self.next_seq();
        self.live_slot(id).seq = seq;
        self.heap.push(Reverse(LazyEntry {
            deadline,
            seq,
            index: id.index,
        }));
        self.retire_one();
        id
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        while let Some(&Reverse(top)) = self.heap.peek() {
            let slot = &self.slots[top.index as usize];
            if slot.seq != top.seq {
                self.heap.pop();
                self.stale -= 1;
                continue;
            }
            if top.deadline > now {
                break;
            }
            let value = slot.value;
            self.heap.pop();
            self.free(top.index);
            fired(value);
        }
    }
}
