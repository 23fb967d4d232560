//! The node type shared by the list-based queues (timeout lists and the wheel), and the one path
//! by which either hands a timer out.

use core::num::NonZeroU32;

use crate::arena::{position, Arena, Cell, Node, Slot, NIL};
use crate::list::Links;
use crate::{Expired, Storage};

/// A timer threaded on one intrusive list. `home` is whatever the queue needs to find that list
/// again: `()` for the wheel (it recomputes the list from the deadline), the list number for
/// [`TimeoutLists`](crate::TimeoutLists).
pub(crate) struct LinkedNode<T, H> {
    pub(crate) deadline: u64,
    pub(crate) prev: u32,
    pub(crate) next: u32,
    pub(crate) generation: NonZeroU32,
    pub(crate) home: H,
    pub(crate) value: T,
}

impl<T, H> LinkedNode<T, H> {
    pub(crate) fn new(deadline: u64, home: H, value: T, generation: NonZeroU32) -> Self {
        Self {
            deadline,
            prev: NIL,
            next: NIL,
            generation,
            home,
            value,
        }
    }
}

impl<T, H> Node for LinkedNode<T, H> {
    fn generation(&self) -> NonZeroU32 {
        self.generation
    }
}

impl<T, H, C, S> Arena<C, S>
where
    C: Cell<Node = LinkedNode<T, H>>,
    S: Storage<C>,
{
    /// Frees the timer at `index`, which is on no list any more, and hands it out: the one way
    /// the wheel and the timeout lists build an [`Expired`].
    #[inline]
    pub(crate) fn take_expired(&mut self, index: u32) -> Option<Expired<T>> {
        let (id, node) = self.release_with_id(index)?;
        Some(Expired {
            id,
            deadline: node.deadline,
            value: node.value,
        })
    }
}

/// The node at slot number `index` of `cells`, if occupied.
#[inline]
fn node<T, H, C: Cell<Node = LinkedNode<T, H>>>(
    cells: &[C],
    index: u32,
) -> Option<&LinkedNode<T, H>> {
    match cells.get(position(index)).map(C::slot) {
        Some(Slot::Occupied(node)) => Some(node),
        _ => None,
    }
}

#[inline]
fn node_mut<T, H, C: Cell<Node = LinkedNode<T, H>>>(
    cells: &mut [C],
    index: u32,
) -> Option<&mut LinkedNode<T, H>> {
    match cells.get_mut(position(index)).map(C::slot_mut) {
        Some(Slot::Occupied(node)) => Some(node),
        _ => None,
    }
}

/// The links of the nodes in a queue's slots. The queues hand the list operations their slots
/// as one borrowed slice (`Arena::cells_mut`), so that a list operation derives the slice once,
/// not once a link: over a `Vec`, each derivation reloads the buffer's address and length.
impl<T, H, C: Cell<Node = LinkedNode<T, H>>> Links for [C] {
    #[inline]
    fn prev(&self, index: u32) -> u32 {
        node(self, index).map_or(NIL, |n| n.prev)
    }

    #[inline]
    fn next(&self, index: u32) -> u32 {
        node(self, index).map_or(NIL, |n| n.next)
    }

    #[inline]
    fn set_links(&mut self, index: u32, prev: u32, next: u32) {
        if let Some(n) = node_mut(self, index) {
            n.prev = prev;
            n.next = next;
        }
    }

    #[inline]
    fn set_prev(&mut self, index: u32, prev: u32) {
        if let Some(n) = node_mut(self, index) {
            n.prev = prev;
        }
    }

    #[inline]
    fn set_next(&mut self, index: u32, next: u32) {
        if let Some(n) = node_mut(self, index) {
            n.next = next;
        }
    }

    #[inline]
    fn key(&self, index: u32) -> u64 {
        node(self, index).map_or(u64::MAX, |n| n.deadline)
    }
}

impl<T, H, C, S> Arena<C, S>
where
    C: Cell<Node = LinkedNode<T, H>>,
    S: Storage<C>,
{
    /// The deadline of the timer at `index` (`u64::MAX` if there is none).
    #[inline]
    pub(crate) fn key(&self, index: u32) -> u64 {
        self.cells().key(index)
    }
}
