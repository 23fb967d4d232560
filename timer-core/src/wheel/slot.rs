//! One timer's storage in the wheel: its handle (deadline, generation, value, and where its
//! cell is) and the two cells it lends to the wheel's lists, read as block cells or as links.

use core::num::NonZeroU32;

use super::chain::Cells;
use crate::arena::{position, Arena, Cell, Node, Slot};
use crate::list::Links;
use crate::{Expired, Storage, Tick};

/// A pending timer: what its handle names.
pub(crate) struct WheelNode<T> {
    /// The deadline as two halves, so that the node needs only the alignment of `T` and `u32`.
    pub(super) deadline: [u32; 2],
    /// The position of the one cell that files the timer (blocks layout); unused when linked.
    pub(super) position: u32,
    pub(super) generation: NonZeroU32,
    pub(super) value: T,
}

impl<T> WheelNode<T> {
    #[inline]
    pub(super) fn deadline(&self) -> Tick {
        u64::from(self.deadline[0]) | (u64::from(self.deadline[1]) << 32)
    }

    #[inline]
    pub(super) fn set_deadline(&mut self, deadline: Tick) {
        self.deadline = [deadline as u32, (deadline >> 32) as u32];
    }
}

impl<T> Node for WheelNode<T> {
    fn generation(&self) -> NonZeroU32 {
        self.generation
    }
}

/// One timer's storage in a [`TimerWheelOn`](super::TimerWheelOn): 28 bytes for a `u32` value.
///
/// An inline [`TimerWheel<T, N>`](super::TimerWheel) holds `N` of them; for a wheel sized at run time, make a slice
/// of them (`WheelSlot::new()` is an empty one) and hand it to
/// [`TimerWheelOn::with_storage`](super::TimerWheelOn::with_storage). Each holds one timer's handle (deadline, generation, value)
/// and two cells of the storage the wheel files its timers in.
pub struct WheelSlot<T> {
    slot: Slot<WheelNode<T>>,
    cells: [u32; 2],
}

impl<T> WheelSlot<T> {
    /// An empty slot (all zero bytes).
    pub const fn new() -> Self {
        Self {
            slot: Slot::EMPTY,
            cells: [0; 2],
        }
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

#[inline]
pub(super) fn node<T>(slots: &[WheelSlot<T>], index: u32) -> Option<&WheelNode<T>> {
    match slots.get(position(index)).map(|s| &s.slot) {
        Some(Slot::Occupied(node)) => Some(node),
        _ => None,
    }
}

#[inline]
pub(super) fn node_mut<T>(slots: &mut [WheelSlot<T>], index: u32) -> Option<&mut WheelNode<T>> {
    match slots.get_mut(position(index)).map(|s| &mut s.slot) {
        Some(Slot::Occupied(node)) => Some(node),
        _ => None,
    }
}

/// The deadline of the timer `index` if the cell at `at` is the one that files it.
#[inline]
pub(super) fn live_deadline<T>(slots: &[WheelSlot<T>], index: u32, at: u32) -> Option<Tick> {
    match node(slots, index) {
        Some(node) if node.position == at => Some(node.deadline()),
        _ => None,
    }
}

/// The blocks layout: cell `at` is the `at % 2`th cell of slot `at / 2`.
impl<T> Cells for [WheelSlot<T>] {
    #[inline]
    fn cell(&self, at: u32) -> u32 {
        self.get((at >> 1) as usize)
            .map_or(0, |s| s.cells[(at & 1) as usize])
    }

    #[inline]
    fn set_cell(&mut self, at: u32, value: u32) {
        if let Some(s) = self.get_mut((at >> 1) as usize) {
            s.cells[(at & 1) as usize] = value;
        }
    }

    #[inline]
    fn is_live(&self, value: u32, at: u32) -> bool {
        live_deadline(self, value, at).is_some()
    }

    #[inline]
    fn relocate(&mut self, value: u32, to: u32) {
        if let Some(node) = node_mut(self, value) {
            node.position = to;
        }
    }
}

/// The linked layout: a timer's two cells are its `prev` and `next` links.
impl<T> Links for [WheelSlot<T>] {
    #[inline]
    fn prev(&self, index: u32) -> u32 {
        self.get(position(index)).map_or(0, |s| s.cells[0])
    }

    #[inline]
    fn next(&self, index: u32) -> u32 {
        self.get(position(index)).map_or(0, |s| s.cells[1])
    }

    #[inline]
    fn set_links(&mut self, index: u32, prev: u32, next: u32) {
        if let Some(s) = self.get_mut(position(index)) {
            s.cells = [prev, next];
        }
    }

    #[inline]
    fn set_prev(&mut self, index: u32, prev: u32) {
        if let Some(s) = self.get_mut(position(index)) {
            s.cells[0] = prev;
        }
    }

    #[inline]
    fn set_next(&mut self, index: u32, next: u32) {
        if let Some(s) = self.get_mut(position(index)) {
            s.cells[1] = next;
        }
    }

    #[inline]
    fn key(&self, index: u32) -> u64 {
        node(self, index).map_or(u64::MAX, WheelNode::deadline)
    }
}
