//! The node type shared by the list-based queues (timeout lists and the wheel), and the one path
//! by which either hands a timer out.

use core::num::NonZeroU32;

use crate::arena::{position, Arena, Cell, Node, Slot, NIL};
use crate::list::{Links, LinksMut};
use crate::{Expired, Storage};

/// A timer threaded on one intrusive list. `home` is whatever the queue needs to find that list
/// again: `()` for the wheel (it recomputes the list from the deadline), the list number for
/// [`TimeoutLists`](crate::TimeoutLists). Its list links live beside it in the slot ([`Link`]).
pub(crate) struct LinkedNode<T, H> {
    pub(crate) deadline: u64,
    pub(crate) generation: NonZeroU32,
    pub(crate) home: H,
    pub(crate) value: T,
}

impl<T, H> LinkedNode<T, H> {
    pub(crate) fn new(deadline: u64, home: H, value: T, generation: NonZeroU32) -> Self {
        Self {
            deadline,
            generation,
            home,
            value,
        }
    }
}

/// A slot's list links, kept outside the occupied/vacant enum so that relinking a neighbour is a
/// plain store. Were they inside it, writing a neighbour's link would first load the neighbour to
/// check that it is occupied, and that load (a cache miss at a million timers) would hold up the
/// cancel or reschedule; a store waits in the store buffer instead. Meaningless while the slot
/// is vacant: every way onto a list sets them.
#[derive(Clone, Copy)]
pub(crate) struct Link {
    pub(crate) prev: u32,
    pub(crate) next: u32,
}

impl Link {
    /// Unlinked: all zero bytes.
    pub(crate) const EMPTY: Self = Self {
        prev: NIL,
        next: NIL,
    };
}

/// `new`, `Default`, [`Cell`] and [`LinkedCell`] for a queue's public slot type, a struct
/// `{ link: Link, slot: Slot<LinkedNode<T, $home>> }`: the wheel's and the timeout lists' slots
/// differ only in `home`.
macro_rules! linked_slot {
    ($slot:ident, $home:ty) => {
        impl<T> $slot<T> {
            /// An empty slot (all zero bytes).
            pub const fn new() -> Self {
                Self {
                    link: $crate::linked::Link::EMPTY,
                    slot: $crate::arena::Slot::EMPTY,
                }
            }
        }

        impl<T> Default for $slot<T> {
            fn default() -> Self {
                Self::new()
            }
        }

        impl<T> $crate::arena::Cell for $slot<T> {
            type Node = $crate::linked::LinkedNode<T, $home>;
            const EMPTY: Self = Self::new();

            #[inline]
            fn slot(&self) -> &$crate::arena::Slot<Self::Node> {
                &self.slot
            }

            #[inline]
            fn slot_mut(&mut self) -> &mut $crate::arena::Slot<Self::Node> {
                &mut self.slot
            }
        }

        impl<T> $crate::linked::LinkedCell for $slot<T> {
            #[inline]
            fn link(&self) -> &$crate::linked::Link {
                &self.link
            }

            #[inline]
            fn link_mut(&mut self) -> &mut $crate::linked::Link {
                &mut self.link
            }
        }
    };
}
pub(crate) use linked_slot;

/// A queue slot that carries [`Link`]s beside its arena [`Slot`].
pub(crate) trait LinkedCell: Cell {
    fn link(&self) -> &Link;
    fn link_mut(&mut self) -> &mut Link;
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

/// The links of the nodes in a queue's slots. The queues hand the list operations their slots
/// as one borrowed slice (`Arena::cells_mut`), so that a list operation derives the slice once,
/// not once a link: over a `Vec`, each derivation reloads the buffer's address and length.
/// Links are read and written without looking at whether the slot is occupied (see [`Link`]);
/// only the key needs the node.
impl<T, H, C: LinkedCell<Node = LinkedNode<T, H>>> Links for [C] {
    #[inline]
    fn prev(&self, index: u32) -> u32 {
        self.get(position(index)).map_or(NIL, |c| c.link().prev)
    }

    #[inline]
    fn next(&self, index: u32) -> u32 {
        self.get(position(index)).map_or(NIL, |c| c.link().next)
    }

    #[inline]
    fn key(&self, index: u32) -> u64 {
        node(self, index).map_or(u64::MAX, |n| n.deadline)
    }
}

impl<T, H, C: LinkedCell<Node = LinkedNode<T, H>>> LinksMut for [C] {
    #[inline]
    fn set_links(&mut self, index: u32, prev: u32, next: u32) {
        if let Some(c) = self.get_mut(position(index)) {
            *c.link_mut() = Link { prev, next };
        }
    }

    #[inline]
    fn set_prev(&mut self, index: u32, prev: u32) {
        if let Some(c) = self.get_mut(position(index)) {
            c.link_mut().prev = prev;
        }
    }

    #[inline]
    fn set_next(&mut self, index: u32, next: u32) {
        if let Some(c) = self.get_mut(position(index)) {
            c.link_mut().next = next;
        }
    }
}

impl<T, H, C, S> Arena<C, S>
where
    C: LinkedCell<Node = LinkedNode<T, H>>,
    S: Storage<C>,
{
    /// The deadline of the timer at `index` (`u64::MAX` if there is none).
    #[inline]
    pub(crate) fn key(&self, index: u32) -> u64 {
        self.cells().key(index)
    }
}
