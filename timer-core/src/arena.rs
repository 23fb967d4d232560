//! A slot arena with generational handles, over storage the caller provides.
//!
//! Every queue stores its timers here. Slots are handed out from a free list (then, on first
//! use, by bumping `unused_from`, which keeps `new()` a `const fn`). Each slot remembers a
//! generation; a [`TimerId`] is valid only while its generation matches the occupant's.
//!
//! Inside the crate a slot is named by its position **plus one**, so that 0 can mean "none"
//! ([`NIL`]) in every link, head and free list. An empty queue is then all zero bytes, and a
//! `static` of it goes to `.bss`: no flash image, no stack temporary at boot.
//!
//! The arena does not own a `[Slot; N]` but any [`Storage`] of the queue's public slot type (a
//! [`Cell`] holding one [`Slot`]): an array for the inline form, a slice for the caller-owned
//! one. Capacity is the storage's length.

use core::num::NonZeroU32;

use crate::{Storage, TimerId};

/// "No slot": the end of a list, or an empty free list. Slot numbers start at 1.
pub(crate) const NIL: u32 = 0;

/// The most slots an arena uses: slot numbers (position + 1) must fit a `u32` other than 0.
pub(crate) const MAX_CAPACITY: usize = u32::MAX as usize - 1;

/// The array position of slot number `index` (`NIL` maps out of range).
#[inline]
pub(crate) fn position(index: u32) -> usize {
    (index as usize).wrapping_sub(1)
}

/// What the arena needs to know about the nodes it stores.
pub(crate) trait Node {
    fn generation(&self) -> NonZeroU32;
}

/// One arena slot. The generation sits inside the occupant so that, for small values, the
/// enum tag folds into the generation's niche (24 bytes per wheel slot for a `u32` value).
pub(crate) enum Slot<E> {
    Vacant {
        /// Generation of the last occupant (0: never used).
        generation: u32,
        next_free: u32,
    },
    Occupied(E),
}

impl<E> Slot<E> {
    /// A never-used slot: all zero bytes.
    pub(crate) const EMPTY: Self = Slot::Vacant {
        generation: 0,
        next_free: NIL,
    };
}

/// A queue's public slot type: one [`Slot`] (and whatever else the queue keeps per slot).
pub(crate) trait Cell {
    type Node: Node;
    /// An empty cell, all zero bytes.
    const EMPTY: Self;
    fn slot(&self) -> &Slot<Self::Node>;
    fn slot_mut(&mut self) -> &mut Slot<Self::Node>;
}

pub(crate) struct Arena<C, S> {
    cells: S,
    free_head: u32,
    unused_from: u32,
    len: u32,
    _cell: core::marker::PhantomData<fn() -> C>,
}

impl<C: Cell, const N: usize> Arena<C, [C; N]> {
    const CAPACITY_FITS: () = assert!(
        N <= MAX_CAPACITY,
        "timer-core: capacity must be below u32::MAX"
    );

    /// An empty arena inline: all zero bytes.
    pub(crate) const fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::CAPACITY_FITS;
        Self {
            cells: [const { C::EMPTY }; N],
            free_head: NIL,
            unused_from: 0,
            len: 0,
            _cell: core::marker::PhantomData,
        }
    }
}

impl<C: Cell, S: Storage<C>> Arena<C, S> {
    /// An empty arena over `cells`, which it empties (dropping any values left in them).
    pub(crate) fn with_storage(mut cells: S) -> Self {
        for cell in cells.as_mut() {
            *cell = C::EMPTY;
        }
        Self {
            cells,
            free_head: NIL,
            unused_from: 0,
            len: 0,
            _cell: core::marker::PhantomData,
        }
    }

    /// Hands the storage back.
    pub(crate) fn into_storage(self) -> S {
        self.cells
    }

    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.cells.as_ref().len().min(MAX_CAPACITY)
    }

    #[inline]
    pub(crate) fn cells(&self) -> &[C] {
        self.cells.as_ref()
    }

    #[inline]
    pub(crate) fn cells_mut(&mut self) -> &mut [C] {
        self.cells.as_mut()
    }

    pub(crate) const fn len(&self) -> usize {
        self.len as usize
    }

    pub(crate) fn is_full(&self) -> bool {
        self.free_head == NIL && self.unused_from as usize >= self.capacity()
    }

    /// The slot the next [`allocate`](Self::allocate) will take, if any: for a caller that
    /// files the timer first and then builds its node, once, knowing where it was filed.
    #[inline]
    pub(crate) fn next_index(&self) -> Option<u32> {
        if self.free_head != NIL {
            Some(self.free_head)
        } else if (self.unused_from as usize) < self.capacity() {
            Some(self.unused_from + 1)
        } else {
            None
        }
    }

    /// Stores a node built from `value` and the slot's next generation, or hands `value` back.
    pub(crate) fn allocate<V>(
        &mut self,
        value: V,
        build: impl FnOnce(V, NonZeroU32) -> C::Node,
    ) -> Result<TimerId, V> {
        let (index, previous) = if self.free_head != NIL {
            let index = self.free_head;
            match self.slot(index) {
                Some(&Slot::Vacant {
                    generation,
                    next_free,
                }) => {
                    self.free_head = next_free;
                    (index, generation)
                }
                _ => return Err(value),
            }
        } else if (self.unused_from as usize) < self.capacity() {
            self.unused_from += 1;
            (self.unused_from, 0)
        } else {
            return Err(value);
        };
        // Retired slots (generation u32::MAX) never reach the free list, so this cannot wrap.
        let Some(generation) = NonZeroU32::new(previous.wrapping_add(1)) else {
            return Err(value);
        };
        let Some(slot) = self.slot_mut(index) else {
            return Err(value);
        };
        *slot = Slot::Occupied(build(value, generation));
        self.len += 1;
        Ok(TimerId::new(index, generation))
    }

    /// Frees the slot at `index` and returns the handle it had and its occupant: one look at the
    /// slot, for the paths that hand timers out.
    #[inline]
    pub(crate) fn release_with_id(&mut self, index: u32) -> Option<(TimerId, C::Node)> {
        self.release_if(index, |_| true)
    }

    /// Frees the slot `id` names and returns its occupant, if `id` is live: one look at the
    /// slot, for a cancel.
    #[inline]
    pub(crate) fn release_live(&mut self, id: TimerId) -> Option<C::Node> {
        self.release_if(id.slot(), |generation| generation == id.generation())
            .map(|(_, node)| node)
    }

    /// Frees the slot at `index` if it is occupied and `wanted` accepts its generation.
    #[inline]
    fn release_if(
        &mut self,
        index: u32,
        wanted: impl FnOnce(u32) -> bool,
    ) -> Option<(TimerId, C::Node)> {
        let free_head = self.free_head;
        let slot = self.slot_mut(index)?;
        let generation = match slot {
            Slot::Occupied(node) if wanted(node.generation().get()) => node.generation().get(),
            _ => return None,
        };
        let retire = generation == u32::MAX;
        let old = core::mem::replace(
            slot,
            Slot::Vacant {
                generation,
                next_free: if retire { NIL } else { free_head },
            },
        );
        if !retire {
            self.free_head = index;
        }
        self.len -= 1;
        match old {
            Slot::Occupied(node) => Some((TimerId::new(index, node.generation()), node)),
            Slot::Vacant { .. } => None,
        }
    }

    #[inline]
    fn slot(&self, index: u32) -> Option<&Slot<C::Node>> {
        self.cells.as_ref().get(position(index)).map(C::slot)
    }

    #[inline]
    fn slot_mut(&mut self, index: u32) -> Option<&mut Slot<C::Node>> {
        self.cells
            .as_mut()
            .get_mut(position(index))
            .map(C::slot_mut)
    }

    /// The slot index of `id`, if `id` is live.
    #[inline]
    pub(crate) fn resolve(&self, id: TimerId) -> Option<u32> {
        match self.slot(id.slot()) {
            Some(Slot::Occupied(node)) if node.generation().get() == id.generation() => {
                Some(id.slot())
            }
            _ => None,
        }
    }

    /// The node `id` names, if `id` is live.
    pub(crate) fn live(&self, id: TimerId) -> Option<&C::Node> {
        self.get(self.resolve(id)?)
    }

    /// The node `id` names, mutably, if `id` is live.
    pub(crate) fn live_mut(&mut self, id: TimerId) -> Option<&mut C::Node> {
        let index = self.resolve(id)?;
        self.get_mut(index)
    }

    #[inline]
    pub(crate) fn get(&self, index: u32) -> Option<&C::Node> {
        match self.slot(index) {
            Some(Slot::Occupied(node)) => Some(node),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, index: u32) -> Option<&mut C::Node> {
        match self.slot_mut(index) {
            Some(Slot::Occupied(node)) => Some(node),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Plain {
        generation: NonZeroU32,
        value: u8,
    }

    impl Node for Plain {
        fn generation(&self) -> NonZeroU32 {
            self.generation
        }
    }

    struct PlainCell(Slot<Plain>);

    impl Cell for PlainCell {
        type Node = Plain;
        const EMPTY: Self = PlainCell(Slot::EMPTY);
        fn slot(&self) -> &Slot<Plain> {
            &self.0
        }
        fn slot_mut(&mut self) -> &mut Slot<Plain> {
            &mut self.0
        }
    }

    fn build(value: u8, generation: NonZeroU32) -> Plain {
        Plain { generation, value }
    }

    #[test]
    fn full_arena_hands_value_back() {
        let mut arena: Arena<PlainCell, [PlainCell; 2]> = Arena::new();
        assert!(arena.allocate(1, build).is_ok());
        assert!(arena.allocate(2, build).is_ok());
        assert!(arena.is_full());
        assert_eq!(arena.allocate(3, build).err(), Some(3));
    }

    #[test]
    fn released_slot_is_reused_with_new_generation() {
        let mut arena: Arena<PlainCell, [PlainCell; 1]> = Arena::new();
        let first = arena.allocate(1, build).unwrap();
        assert_eq!(
            arena.release_with_id(first.slot()).map(|(_, n)| n.value),
            Some(1)
        );
        let second = arena.allocate(2, build).unwrap();
        assert_eq!(first.index(), second.index());
        assert_ne!(first.generation(), second.generation());
        assert_eq!(arena.resolve(first), None);
        assert_eq!(arena.resolve(second), Some(1));
    }

    #[test]
    fn exhausted_generation_retires_slot() {
        let mut arena: Arena<PlainCell, [PlainCell; 1]> = Arena::new();
        arena.cells[0] = PlainCell(Slot::Vacant {
            generation: u32::MAX - 1,
            next_free: NIL,
        });
        arena.unused_from = 1;
        arena.free_head = 1;
        let id = arena.allocate(7, build).unwrap();
        assert_eq!(id.generation(), u32::MAX);
        assert!(arena.release_with_id(id.slot()).is_some());
        // The slot is retired: the arena is now full for good, and the old handle stays stale.
        assert!(arena.is_full());
        assert_eq!(arena.allocate(8, build).err(), Some(8));
        assert_eq!(arena.resolve(id), None);
    }

    #[test]
    fn release_live_frees_only_the_handle_that_names_the_occupant() {
        let mut arena: Arena<PlainCell, [PlainCell; 2]> = Arena::new();
        let first = arena.allocate(1, build).unwrap();
        let kept = arena.allocate(2, build).unwrap();
        assert_eq!(arena.release_live(first).map(|n| n.value), Some(1));
        // Stale now, and stale still once its slot holds another timer: nothing is freed.
        assert!(arena.release_live(first).is_none());
        let second = arena.allocate(3, build).unwrap();
        assert_eq!(second.index(), first.index());
        assert!(arena.release_live(first).is_none());
        assert_eq!(arena.len(), 2);
        assert_eq!(arena.release_live(second).map(|n| n.value), Some(3));
        assert_eq!(arena.release_live(kept).map(|n| n.value), Some(2));
        assert_eq!(arena.len(), 0);
    }

    #[test]
    fn release_of_vacant_slot_is_none() {
        let mut arena: Arena<PlainCell, [PlainCell; 1]> = Arena::new();
        assert!(arena.release_with_id(0).is_none());
        assert!(arena.release_with_id(5).is_none());
        assert_eq!(arena.len(), 0);
    }

    #[test]
    fn slice_arena_empties_its_storage_and_takes_its_length_as_capacity() {
        let mut cells: std::vec::Vec<PlainCell> = (0..3).map(|_| PlainCell::EMPTY).collect();
        cells[1] = PlainCell(Slot::Occupied(build(9, NonZeroU32::MIN)));
        let mut arena = Arena::with_storage(&mut cells[..]);
        assert_eq!(arena.capacity(), 3);
        assert_eq!(arena.len(), 0);
        // The leftover occupant is gone: a handle to it is stale.
        assert_eq!(arena.resolve(TimerId::new(2, NonZeroU32::MIN)), None);
        for value in 0..3 {
            assert!(arena.allocate(value, build).is_ok());
        }
        assert_eq!(arena.allocate(3, build).err(), Some(3));
    }
}
