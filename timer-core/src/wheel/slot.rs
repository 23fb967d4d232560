//! One timer's storage in the wheel, in two parts kept in two arrays: its handle
//! ([`WheelSlot`]: deadline, generation, value, and where its cell is) and the two cells it lends
//! to the wheel's lists ([`WheelCells`]), read as block cells or as links. Apart, the handles a
//! cancel or a reschedule loads sit 20 bytes from one another (for a `u32` value), not 28: at a
//! million timers each such load is a cache and TLB miss, and it costs less over a smaller span.

use core::marker::PhantomData;
use core::num::NonZeroU32;

use super::chain::{live_mask_cell_by_cell, Cells, CellsMut};
use crate::arena::{position, Arena, Cell, Node, Slot};
use crate::list::{Links, LinksMut};
use crate::{Expired, Storage, Tick};

/// A pending timer: what its handle names.
pub(crate) struct WheelNode<T> {
    /// The deadline as two halves, so that the node needs only the alignment of `T` and `u32`.
    pub(super) deadline: [u32; 2],
    /// Blocks layout: the position of the one cell that files the timer. Linked layout: the
    /// level list it was last filed on (the due list is told apart by the deadline).
    pub(super) position: u32,
    pub(super) generation: NonZeroU32,
    pub(super) value: T,
}

impl<T> WheelNode<T> {
    /// A timer due at `deadline`, filed at `position` (see the field).
    #[inline]
    pub(super) fn new(deadline: Tick, position: u32, generation: NonZeroU32, value: T) -> Self {
        Self {
            deadline: halves(deadline),
            position,
            generation,
            value,
        }
    }

    #[inline]
    pub(super) fn deadline(&self) -> Tick {
        u64::from(self.deadline[0]) | (u64::from(self.deadline[1]) << 32)
    }

    #[inline]
    pub(super) fn set_deadline(&mut self, deadline: Tick) {
        self.deadline = halves(deadline);
    }
}

/// A deadline as the two halves a [`WheelNode`] keeps, low first.
#[inline]
const fn halves(deadline: Tick) -> [u32; 2] {
    [deadline as u32, (deadline >> 32) as u32]
}

impl<T> Node for WheelNode<T> {
    fn generation(&self) -> NonZeroU32 {
        self.generation
    }
}

/// One timer's handle in a [`TimerWheelOn`](super::TimerWheelOn): its deadline, generation and
/// value, 20 bytes for a `u32` value.
///
/// A wheel of `n` timers takes `n` of these and `n` [`WheelCells`]. An inline
/// [`TimerWheel<T, N>`](super::TimerWheel) holds both arrays; for a wheel sized at run time, make
/// a slice of each (`WheelSlot::new()` and `WheelCells::new()` are empty ones) and hand them to
/// [`TimerWheelOn::with_storage`](super::TimerWheelOn::with_storage).
pub struct WheelSlot<T> {
    slot: Slot<WheelNode<T>>,
}

impl<T> WheelSlot<T> {
    /// An empty slot (all zero bytes).
    pub const fn new() -> Self {
        Self { slot: Slot::EMPTY }
    }
}

impl<T> Default for WheelSlot<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Cell for WheelSlot<T> {
    type Node = WheelNode<T>;
    const EMPTY: Self = Self::new();

    #[inline]
    fn slot(&self) -> &Slot<WheelNode<T>> {
        &self.slot
    }

    #[inline]
    fn slot_mut(&mut self) -> &mut Slot<WheelNode<T>> {
        &mut self.slot
    }
}

/// Two cells of the storage a [`TimerWheelOn`](super::TimerWheelOn) files its timers in, 8
/// bytes: one of these per timer, beside its [`WheelSlot`].
///
/// A wheel of fewer than 2^19 timers uses each timer's two cells as the links of the list the
/// timer is on; a larger one cuts all the cells into blocks that hold its lists.
///
/// # Examples
///
/// ```
/// use timer_core::{TimerQueue, TimerWheelOn, WheelCells, WheelSlot};
///
/// let n = 10_000; // from a configuration, say
/// let mut slots: Vec<WheelSlot<u32>> = (0..n).map(|_| WheelSlot::new()).collect();
/// let mut cells = vec![WheelCells::new(); n];
/// let mut wheel = TimerWheelOn::with_storage(&mut slots[..], &mut cells[..]);
/// assert_eq!(wheel.capacity(), n);
/// ```
#[derive(Clone, Copy, Default)]
pub struct WheelCells {
    cells: [u32; 2],
}

impl WheelCells {
    /// Empty cells (all zero bytes).
    pub const fn new() -> Self {
        Self { cells: [0; 2] }
    }
}

impl<T, S: Storage<WheelSlot<T>>> Arena<WheelSlot<T>, S> {
    /// Frees timer `index`, which is on no list any more, and hands it out: the one way the
    /// wheel builds an [`Expired`].
    #[inline]
    pub(super) fn take_wheel_expired(&mut self, index: u32) -> Option<Expired<T>> {
        let (id, node) = self.release_with_id(index)?;
        Some(Expired {
            id,
            deadline: node.deadline(),
            value: node.value,
        })
    }
}

/// The wheel's storage seen whole, both parts borrowed: what its lists and chains are handed.
/// `S` and `C` are shared or mutable borrows of the slots and the cells; the reading is written
/// once for both.
pub(super) struct Parts<T, S, C> {
    pub(super) slots: S,
    pub(super) cells: C,
    /// The slots' value type, which `S` names only through a bound.
    value_type: PhantomData<fn() -> T>,
}

/// Both parts, to read.
pub(super) type Store<'a, T> = Parts<T, &'a [WheelSlot<T>], &'a [WheelCells]>;
/// Both parts, to change.
pub(super) type StoreMut<'a, T> = Parts<T, &'a mut [WheelSlot<T>], &'a mut [WheelCells]>;

impl<T, S, C> Parts<T, S, C> {
    pub(super) const fn new(slots: S, cells: C) -> Self {
        Self {
            slots,
            cells,
            value_type: PhantomData,
        }
    }
}

impl<T, S, C: AsRef<[WheelCells]>> Parts<T, S, C> {
    /// The two cells of `WheelCells` number `i`, if there is one.
    #[inline]
    fn pair(&self, i: usize) -> Option<&[u32; 2]> {
        self.cells.as_ref().get(i).map(|c| &c.cells)
    }
}

impl<T, S, C: AsMut<[WheelCells]>> Parts<T, S, C> {
    #[inline]
    fn pair_mut(&mut self, i: usize) -> Option<&mut [u32; 2]> {
        self.cells.as_mut().get_mut(i).map(|c| &mut c.cells)
    }

    /// The cell at position `at`, to change in place (one bounds check for a read and a write).
    #[inline]
    pub(super) fn cell_mut(&mut self, at: u32) -> Option<&mut u32> {
        self.pair_mut((at >> 1) as usize)
            .map(|pair| &mut pair[(at & 1) as usize])
    }
}

#[inline]
pub(super) fn node<T, S: AsRef<[WheelSlot<T>]>, C>(
    store: &Parts<T, S, C>,
    index: u32,
) -> Option<&WheelNode<T>> {
    match store.slots.as_ref().get(position(index)).map(|s| &s.slot) {
        Some(Slot::Occupied(node)) => Some(node),
        _ => None,
    }
}

#[inline]
pub(super) fn node_mut<T, S: AsMut<[WheelSlot<T>]>, C>(
    store: &mut Parts<T, S, C>,
    index: u32,
) -> Option<&mut WheelNode<T>> {
    match store
        .slots
        .as_mut()
        .get_mut(position(index))
        .map(|s| &mut s.slot)
    {
        Some(Slot::Occupied(node)) => Some(node),
        _ => None,
    }
}

/// Linked layout: notes that timer `index` is filed on level list `list`, where a cancel or a
/// reschedule will look for it.
#[inline]
pub(super) fn set_filed_on<T, S: AsMut<[WheelSlot<T>]>, C>(
    store: &mut Parts<T, S, C>,
    index: u32,
    list: usize,
) {
    if let Some(node) = node_mut(store, index) {
        node.position = list as u32;
    }
}

/// The deadline of the timer `index` if the cell at `at` is the one that files it.
#[inline]
pub(super) fn live_deadline<T, S: AsRef<[WheelSlot<T>]>, C>(
    store: &Parts<T, S, C>,
    index: u32,
    at: u32,
) -> Option<Tick> {
    match node(store, index) {
        Some(node) if node.position == at => Some(node.deadline()),
        _ => None,
    }
}

/// The blocks layout: cell `at` is the `at % 2`th cell of `WheelCells` `at / 2`.
impl<T, S: AsRef<[WheelSlot<T>]>, C: AsRef<[WheelCells]>> Cells for Parts<T, S, C> {
    #[inline]
    fn cell(&self, at: u32) -> u32 {
        self.pair((at >> 1) as usize)
            .map_or(0, |pair| pair[(at & 1) as usize])
    }

    #[inline]
    fn is_live(&self, value: u32, at: u32) -> bool {
        live_deadline(self, value, at).is_some()
    }

    /// As the default, but reading the block's cells two by two from one slice: no bounds
    /// check per cell, and a constant shift. Compaction asks this of every cell in use.
    #[inline]
    fn live_mask(&self, from: u32, end: u32) -> u64 {
        // The pairs that hold `from..end`; their first cell is bit 0 of `live`. A block is a
        // whole number of pairs, so at most 64 cells.
        let (first_pair, past_pair) = ((from >> 1) as usize, (end as usize).div_ceil(2));
        let Some(pairs) = self.cells.as_ref().get(first_pair..past_pair) else {
            // Out of range (never, for a chain's cells): cell by cell, as the default does.
            return live_mask_cell_by_cell(self, from, end);
        };
        let slots = self.slots.as_ref();
        let is_live = |value: u32, at: u32| {
            u64::from(matches!(
                slots.get(position(value)).map(|s| &s.slot),
                Some(Slot::Occupied(node)) if node.position == at
            ))
        };
        let base = (first_pair as u32) << 1;
        let mut at = (past_pair as u32) << 1;
        let live = pairs.iter().rev().fold(0u64, |live, pair| {
            at -= 2;
            live << 2 | is_live(pair.cells[1], at + 1) << 1 | is_live(pair.cells[0], at)
        });
        // Drop the cells outside `from..end`: the block's link cell, or one past its end.
        let span = end - from;
        let keep = if span >= 64 {
            u64::MAX
        } else {
            (1 << span) - 1
        };
        (live >> (from - base)) & keep
    }
}

impl<T, S, C> CellsMut for Parts<T, S, C>
where
    S: AsRef<[WheelSlot<T>]> + AsMut<[WheelSlot<T>]>,
    C: AsRef<[WheelCells]> + AsMut<[WheelCells]>,
{
    #[inline]
    fn set_cell(&mut self, at: u32, value: u32) {
        if let Some(pair) = self.pair_mut((at >> 1) as usize) {
            pair[(at & 1) as usize] = value;
        }
    }

    #[inline]
    fn relocate(&mut self, value: u32, to: u32) {
        if let Some(node) = node_mut(self, value) {
            node.position = to;
        }
    }
}

/// The linked layout: a timer's two cells are its `prev` and `next` links.
impl<T, S: AsRef<[WheelSlot<T>]>, C: AsRef<[WheelCells]>> Links for Parts<T, S, C> {
    #[inline]
    fn prev(&self, index: u32) -> u32 {
        self.pair(position(index)).map_or(0, |links| links[0])
    }

    #[inline]
    fn next(&self, index: u32) -> u32 {
        self.pair(position(index)).map_or(0, |links| links[1])
    }

    #[inline]
    fn key(&self, index: u32) -> u64 {
        node(self, index).map_or(u64::MAX, WheelNode::deadline)
    }
}

impl<T, S, C> LinksMut for Parts<T, S, C>
where
    S: AsRef<[WheelSlot<T>]>,
    C: AsRef<[WheelCells]> + AsMut<[WheelCells]>,
{
    #[inline]
    fn set_links(&mut self, index: u32, prev: u32, next: u32) {
        if let Some(links) = self.pair_mut(position(index)) {
            *links = [prev, next];
        }
    }

    #[inline]
    fn set_prev(&mut self, index: u32, prev: u32) {
        if let Some(links) = self.pair_mut(position(index)) {
            links[0] = prev;
        }
    }

    #[inline]
    fn set_next(&mut self, index: u32, next: u32) {
        if let Some(links) = self.pair_mut(position(index)) {
            links[1] = next;
        }
    }
}

/// The wheel's storage: its handles, in the arena that hands them out, and its cells. One
/// field of the wheel, so that borrowing the storage leaves the wheel's other fields free.
pub(super) struct WheelStorage<T, S, C> {
    pub(super) arena: Arena<WheelSlot<T>, S>,
    cells: C,
}

impl<T, S, C> WheelStorage<T, S, C> {
    pub(super) const fn new(arena: Arena<WheelSlot<T>, S>, cells: C) -> Self {
        Self { arena, cells }
    }
}

impl<T, S: Storage<WheelSlot<T>>, C: Storage<WheelCells>> WheelStorage<T, S, C> {
    /// Over `slots` and `cells`, both emptied.
    pub(super) fn with_storage(slots: S, mut cells: C) -> Self {
        for c in cells.as_mut() {
            *c = WheelCells::new();
        }
        Self::new(Arena::with_storage(slots), cells)
    }

    pub(super) fn into_storage(self) -> (S, C) {
        (self.arena.into_storage(), self.cells)
    }

    /// Timers both parts have room for.
    #[inline]
    pub(super) fn capacity(&self) -> usize {
        self.arena.capacity().min(self.cells.as_ref().len())
    }

    /// Both parts, to read.
    #[inline]
    pub(super) fn store(&self) -> Store<'_, T> {
        Parts::new(self.arena.cells(), self.cells.as_ref())
    }

    /// Both parts, to change.
    #[inline]
    pub(super) fn store_mut(&mut self) -> StoreMut<'_, T> {
        Parts::new(self.arena.cells_mut(), self.cells.as_mut())
    }
}
