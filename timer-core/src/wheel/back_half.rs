//! The back half of a linked-layout cascade: timers met walking back from the list's tail, held
//! aside in order until the walk from the head has filed every timer before them.
//!
//! A cascade of a long list in the linked layout waits on one link read per timer: the next
//! node's index is known only when the last read returns. Walking from both ends at once keeps
//! two reads in flight. The front walk files each timer at the back of its new list as before;
//! the back walk meets its timers last first, so it pushes each onto the front of a chain here,
//! which leaves every chain in list order, to be appended to its new list once the front walk is
//! done. First-in first-out among equal deadlines holds: on each new list, every timer the front
//! walk filed comes before every timer of the back half, in the order they had.

use crate::arena::NIL;
use crate::list::{LinksMut, List};

use super::level::{slots_in, SLOTS};

/// Chains of timers linked through their `prev`/`next` links, front to back: the head's `prev`
/// is `NIL`, and so is the last timer's `next` until the chain joins a list. One chain per slot
/// of the level below the cascaded one (where nearly every timer goes), and one for the rest.
pub(super) struct BackHalf {
    heads: [u32; SLOTS],
    tails: [u32; SLOTS],
    /// Which of the per-slot chains hold timers.
    used: u64,
    /// Timers bound for a level further down or the due list (those in the cascaded slot's
    /// first sixty-fourth): few, filed one by one at the end.
    other: (u32, u32),
}

impl BackHalf {
    pub(super) const EMPTY: Self = Self {
        heads: [NIL; SLOTS],
        tails: [NIL; SLOTS],
        used: 0,
        other: (NIL, NIL),
    };

    /// Puts `index` (on no list) at the front of slot `slot`'s chain of the level below, or,
    /// with `None`, of the chain of the rest.
    #[inline]
    pub(super) fn push_front(
        &mut self,
        links: &mut (impl LinksMut + ?Sized),
        slot: Option<usize>,
        index: u32,
    ) {
        let (head, tail) = match slot {
            Some(slot) if slot < SLOTS => {
                self.used |= 1 << slot;
                (&mut self.heads[slot], &mut self.tails[slot])
            }
            _ => (&mut self.other.0, &mut self.other.1),
        };
        links.set_links(index, NIL, *head);
        if *head == NIL {
            *tail = index;
        } else {
            links.set_prev(*head, index);
        }
        *head = index;
    }

    /// The slots of the level below whose chains hold timers, lowest first.
    pub(super) fn used_slots(&self) -> impl Iterator<Item = usize> {
        slots_in(self.used)
    }

    /// Appends slot `slot`'s chain to `list`; returns its first timer (`NIL` if it was empty).
    pub(super) fn append(
        &self,
        links: &mut (impl LinksMut + ?Sized),
        slot: usize,
        list: &mut List,
    ) -> u32 {
        let (Some(&head), Some(&tail)) = (self.heads.get(slot), self.tails.get(slot)) else {
            return NIL;
        };
        if head == NIL {
            return NIL;
        }
        match list.tail() {
            // The chain becomes the list: its `next` links close the circle.
            None => links.set_next(tail, head),
            Some(old_tail) => {
                let first = links.next(old_tail);
                links.set_next(old_tail, head);
                links.set_prev(head, old_tail);
                links.set_next(tail, first);
            }
        }
        *list = List::from_tail(tail);
        head
    }

    /// The first timer of the chain of the rest (`NIL` if none): follow `next` links from it
    /// to `NIL`, reading each before the timer is filed.
    pub(super) fn other_head(&self) -> u32 {
        self.other.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::list::Links;
    use crate::wheel::slot::{Parts, StoreMut};
    use crate::wheel::{WheelCells, WheelSlot};
    use std::vec::Vec;

    fn walk(nodes: &StoreMut<'_, u32>, list: List) -> Vec<u32> {
        let mut order = Vec::new();
        if let Some(tail) = list.tail() {
            let mut at = nodes.next(tail);
            assert_eq!(nodes.prev(at), NIL, "the head's prev is NIL");
            loop {
                order.push(at);
                if at == tail {
                    break;
                }
                let next = nodes.next(at);
                assert_eq!(nodes.prev(next), at);
                at = next;
            }
        }
        order
    }

    #[test]
    fn chains_pushed_last_first_append_in_order_to_empty_and_filled_lists() {
        // The wheel's own slots, as its linked layout uses them: two links each.
        let mut slots: Vec<WheelSlot<u32>> = (0..32).map(|_| WheelSlot::new()).collect();
        let mut cells = [WheelCells::new(); 32];
        let nodes: &mut StoreMut<'_, u32> = &mut Parts::new(&mut slots[..], &mut cells[..]);
        let mut filled = List::EMPTY;
        for index in [1, 2, 3] {
            filled.push_back(nodes, index);
        }
        let mut back = BackHalf::EMPTY;
        // Met last first: 20, 19, ... go to slot 5's chain, odd ones to slot 9's, 30 elsewhere.
        for index in (10..=20).rev() {
            let slot = if index % 2 == 0 { 5 } else { 9 };
            back.push_front(nodes, Some(slot), index);
        }
        back.push_front(nodes, None, 30);
        assert!(back.used_slots().eq([5, 9]));
        let mut empty = List::EMPTY;
        assert_eq!(back.append(nodes, 5, &mut filled), 10);
        assert_eq!(back.append(nodes, 9, &mut empty), 11);
        assert_eq!(back.append(nodes, 0, &mut empty), NIL);
        assert_eq!(walk(nodes, filled), [1, 2, 3, 10, 12, 14, 16, 18, 20]);
        assert_eq!(walk(nodes, empty), [11, 13, 15, 17, 19]);
        assert_eq!(back.other_head(), 30);
        assert_eq!(nodes.next(30), NIL);
    }
}
