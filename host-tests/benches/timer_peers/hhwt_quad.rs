//! Peer: the plain `QuadWheelWithOverflow` of `hierarchical_hash_wheel_timer`, which cannot
//! cancel, made cancellable by a generation slab beside it: a cancelled or moved timer's entry
//! stays in the wheel and is skipped when its wheel slot comes up.

use hierarchical_hash_wheel_timer::wheels::quad_wheel::QuadWheelWithOverflow;
use hierarchical_hash_wheel_timer::TimerError;

use crate::contender::{prefaulted, Contender, NIL};
use crate::hhwt::{hhwt_advance, hhwt_delay};

/// What hhwt's plain wheel holds for a timer: its slab slot and the generation it was filed
/// under.
#[derive(Clone, Copy, Debug)]
pub struct SlabRef {
    index: u32,
    generation: u32,
}

/// A slab slot of [`HhwtQuad`]: the generation whose wheel entry is the live one.
#[derive(Clone, Copy)]
struct GenerationSlot {
    generation: u32,
    /// The value while live; the next free slot while vacant.
    value: u32,
    live: bool,
}

/// hhwt's plain `QuadWheelWithOverflow` with a generation slab: the wheel holds
/// `(slot, generation)`; cancel and reschedule bump the slot's generation (reschedule files a
/// new entry under the new one), and an entry whose generation is no longer its slot's is
/// skipped when its wheel slot comes up. Stale entries stay in the wheel's `Vec`s until then.
pub struct HhwtQuad {
    wheel: QuadWheelWithOverflow<SlabRef>,
    slots: Vec<GenerationSlot>,
    free_head: u32,
    at: u64,
    due: Vec<SlabRef>,
}

impl HhwtQuad {
    pub fn new() -> Self {
        Self {
            wheel: QuadWheelWithOverflow::default(),
            slots: Vec::new(),
            free_head: NIL,
            at: 0,
            due: Vec::new(),
        }
    }

    /// Room for n timers in the slab, its pages touched (the wheel's `Vec`s grow as they go).
    pub fn prefaulted(n: usize) -> Self {
        let slot = GenerationSlot {
            generation: 0,
            value: 0,
            live: false,
        };
        Self {
            slots: prefaulted(n, slot),
            ..Self::new()
        }
    }

    #[inline]
    fn file(&mut self, entry: SlabRef, deadline: u64) {
        if let Err(TimerError::Expired(entry)) = self
            .wheel
            .insert_with_delay(entry, hhwt_delay(deadline.saturating_sub(self.at)))
        {
            self.due.push(entry);
        }
    }

    #[inline]
    fn live_slot(&mut self, handle: SlabRef) -> &mut GenerationSlot {
        let slot = &mut self.slots[handle.index as usize];
        assert!(
            slot.live && slot.generation == handle.generation,
            "handle is live"
        );
        slot
    }

    #[inline]
    fn free(&mut self, index: u32) {
        let slot = &mut self.slots[index as usize];
        slot.live = false;
        slot.generation = slot.generation.wrapping_add(1);
        slot.value = self.free_head;
        self.free_head = index;
    }

    /// Fires `entry` if it is its slot's live one.
    #[inline]
    fn fire(
        slots: &mut [GenerationSlot],
        free_head: &mut u32,
        entry: SlabRef,
        fired: &mut impl FnMut(u32),
    ) {
        let slot = &mut slots[entry.index as usize];
        if slot.live && slot.generation == entry.generation {
            let value = slot.value;
            slot.live = false;
            slot.generation = slot.generation.wrapping_add(1);
            slot.value = *free_head;
            *free_head = entry.index;
            fired(value);
        }
    }
}

impl Contender for HhwtQuad {
    type Handle = SlabRef;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> SlabRef {
        let index = if self.free_head != NIL {
            let index = self.free_head;
            let slot = &mut self.slots[index as usize];
            self.free_head = slot.value;
            slot.value = value;
            slot.live = true;
            index
        } else {
            self.slots.push(GenerationSlot {
                generation: 0,
                value,
                live: true,
            });
            (self.slots.len() - 1) as u32
        };
        let entry = SlabRef {
            index,
            generation: self.slots[index as usize].generation,
        };
        self.file(entry, deadline);
        entry
    }

    #[inline]
    fn cancel(&mut self, handle: SlabRef) {
        self.live_slot(handle);
        self.free(handle.index);
    }

    #[inline]
    fn reschedule(&mut self, handle: SlabRef, deadline: u64) -> SlabRef {
        let slot = self.live_slot(handle);
        slot.generation = slot.generation.wrapping_add(1);
        let entry = SlabRef {
            index: handle.index,
            generation: slot.generation,
        };
        self.file(entry, deadline);
        entry
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        let Self {
            wheel,
            slots,
            free_head,
            at,
            due,
        } = self;
        for entry in due.drain(..) {
            Self::fire(slots, free_head, entry, fired);
        }
        let wheel = std::cell::RefCell::new(wheel);
        hhwt_advance(
            at,
            now,
            || wheel.borrow().can_skip(),
            |by| wheel.borrow_mut().skip(by),
            || wheel.borrow_mut().tick(),
            |entry| Self::fire(slots, free_head, entry, fired),
        );
    }
}
