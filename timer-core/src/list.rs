//! Intrusive, index-linked, doubly linked lists.
//!
//! A list is one `u32` (its tail); each slot of the arena that holds the nodes carries
//! `prev`/`next` indices (beside its timer, not inside it), and the head is `next(tail)`.
//! Indices instead of pointers keep this safe Rust: the same idea as heapless'
//! `sorted_linked_list`, with O(1) unlink from anywhere. Any number of lists can thread through
//! one arena: the wheel keeps 64 to 256 per level, the timeout lists one per timeout.

use crate::arena::NIL;

/// Read access to the `prev`/`next` links of the nodes a list threads through.
pub(crate) trait Links {
    fn prev(&self, index: u32) -> u32;
    fn next(&self, index: u32) -> u32;
    /// The sort key used by [`List::insert_sorted`].
    fn key(&self, index: u32) -> u64;
}

/// Write access to the links, for the operations that change a list.
pub(crate) trait LinksMut: Links {
    fn set_links(&mut self, index: u32, prev: u32, next: u32);
    fn set_prev(&mut self, index: u32, prev: u32);
    fn set_next(&mut self, index: u32, next: u32);
}

/// One list, named by its tail; `NIL` when empty.
///
/// The `next` links run in a circle (the tail's `next` is the head) and the `prev` links stop at
/// the head (its `prev` is `NIL`). Keeping the tail, not the head, means an append touches only
/// the old tail (usually just written, so in cache) and the new node, never the head, which in a
/// long list is a cache miss: the head's `prev` has nothing to update.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct List {
    tail: u32,
}

impl List {
    pub(crate) const EMPTY: Self = Self { tail: NIL };

    /// The list whose tail is `tail` (`NIL`: empty), for a queue that stores lists as bare tails.
    pub(crate) const fn from_tail(tail: u32) -> Self {
        Self { tail }
    }

    /// The tail, `NIL` when empty.
    pub(crate) const fn raw_tail(self) -> u32 {
        self.tail
    }

    pub(crate) const fn is_empty(&self) -> bool {
        self.tail == NIL
    }

    pub(crate) fn tail(&self) -> Option<u32> {
        (self.tail != NIL).then_some(self.tail)
    }

    pub(crate) fn head(&self, links: &(impl Links + ?Sized)) -> Option<u32> {
        self.tail().map(|tail| links.next(tail))
    }

    /// The list of `order`'s nodes, in that order (none of them on any list): each node's links
    /// are written once, where appending them one by one would also rewrite each old tail's.
    pub(crate) fn from_order(
        links: &mut (impl LinksMut + ?Sized),
        mut order: impl Iterator<Item = u32>,
    ) -> Self {
        let Some(head) = order.next() else {
            return Self::EMPTY;
        };
        let (mut prev, mut at) = (NIL, head);
        for next in order {
            links.set_links(at, prev, next);
            (prev, at) = (at, next);
        }
        links.set_links(at, prev, head);
        Self { tail: at }
    }

    /// Appends `index`, which must not be on any list.
    #[inline]
    pub(crate) fn push_back(&mut self, links: &mut (impl LinksMut + ?Sized), index: u32) {
        if self.tail == NIL {
            links.set_links(index, NIL, index);
        } else {
            let head = links.next(self.tail);
            links.set_links(index, self.tail, head);
            links.set_next(self.tail, index);
        }
        self.tail = index;
    }

    /// Inserts `index` after every node whose key is `<=` its key, walking from the tail.
    ///
    /// O(1) when `index` has the largest key (the common case for timeouts and due lists);
    /// otherwise O(k) in the nodes it walks past.
    pub(crate) fn insert_sorted(&mut self, links: &mut (impl LinksMut + ?Sized), index: u32) {
        let key = links.key(index);
        let tail = self.tail;
        if tail == NIL {
            self.push_back(links, index);
            return;
        }
        let head = links.next(tail);
        let mut at = tail;
        loop {
            if links.key(at) <= key {
                let next = links.next(at);
                links.set_links(index, at, next);
                links.set_next(at, index);
                if at == tail {
                    self.tail = index;
                } else {
                    links.set_prev(next, index);
                }
                return;
            }
            if at == head {
                // Smaller than everything: the new head.
                links.set_links(index, NIL, head);
                links.set_prev(head, index);
                links.set_next(tail, index);
                return;
            }
            at = links.prev(at);
        }
    }

    /// Removes `index`, which must be on this list. Its own links are left as they were: every
    /// way onto a list sets them.
    #[inline]
    pub(crate) fn unlink(&mut self, links: &mut (impl LinksMut + ?Sized), index: u32) {
        let next = links.next(index);
        if next == index {
            // The only node.
            self.tail = NIL;
            return;
        }
        let prev = links.prev(index);
        // In the circle of `next` links, the head comes after the tail.
        let before = if prev == NIL { self.tail } else { prev };
        links.set_next(before, next);
        if index == self.tail {
            // `next` is the head, whose `prev` stays `NIL`.
            self.tail = before;
        } else {
            links.set_prev(next, prev);
        }
    }

    pub(crate) fn pop_front(&mut self, links: &mut (impl LinksMut + ?Sized)) -> Option<u32> {
        let head = self.head(links)?;
        // `unlink` for the head, whose `prev` is known to be `NIL`: one read fewer.
        let next = links.next(head);
        if next == head {
            self.tail = NIL;
        } else {
            links.set_next(self.tail, next);
            links.set_prev(next, NIL);
        }
        Some(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain link table of nodes 1..=8 (0 is `NIL`): node `i` has key `keys[i]`.
    struct Table {
        prev: [u32; 9],
        next: [u32; 9],
        keys: [u64; 9],
    }

    impl Table {
        fn new(keys: [u64; 9]) -> Self {
            Self {
                prev: [NIL; 9],
                next: [NIL; 9],
                keys,
            }
        }
    }

    impl Links for Table {
        fn prev(&self, i: u32) -> u32 {
            self.prev[i as usize]
        }
        fn next(&self, i: u32) -> u32 {
            self.next[i as usize]
        }
        fn key(&self, i: u32) -> u64 {
            self.keys[i as usize]
        }
    }

    impl LinksMut for Table {
        fn set_links(&mut self, i: u32, prev: u32, next: u32) {
            self.prev[i as usize] = prev;
            self.next[i as usize] = next;
        }
        fn set_prev(&mut self, i: u32, prev: u32) {
            self.prev[i as usize] = prev;
        }
        fn set_next(&mut self, i: u32, next: u32) {
            self.next[i as usize] = next;
        }
    }

    fn collect(list: &mut List, table: &mut Table) -> [u32; 9] {
        let mut out = [NIL; 9];
        let mut n = 0;
        while let Some(i) = list.pop_front(table) {
            out[n] = i;
            n += 1;
        }
        out
    }

    #[test]
    fn push_back_then_pop_front_is_fifo() {
        let mut t = Table::new([0; 9]);
        let mut list = List::EMPTY;
        for i in [3, 1, 2] {
            list.push_back(&mut t, i);
        }
        assert_eq!(list.tail(), Some(2));
        assert_eq!(list.head(&t), Some(3));
        assert_eq!(collect(&mut list, &mut t)[..4], [3, 1, 2, NIL]);
        assert!(list.is_empty());
    }

    #[test]
    fn from_order_links_as_push_back_would() {
        for order in [&[][..], &[4][..], &[4, 7][..], &[5, 2, 8, 1][..]] {
            let mut pushed = Table::new([0; 9]);
            let mut by_push = List::EMPTY;
            for &i in order {
                by_push.push_back(&mut pushed, i);
            }
            let mut built = Table::new([0; 9]);
            let mut list = List::from_order(&mut built, order.iter().copied());
            assert_eq!(list, by_push);
            assert_eq!((built.prev, built.next), (pushed.prev, pushed.next));
            // Still a working list: one more at the back, one out of the middle.
            list.push_back(&mut built, 6);
            if let Some(&second) = order.get(1) {
                list.unlink(&mut built, second);
            }
            let expected: std::vec::Vec<u32> = order
                .iter()
                .copied()
                .filter(|&i| Some(&i) != order.get(1))
                .chain([6])
                .collect();
            assert_eq!(
                collect(&mut list, &mut built)[..expected.len()],
                expected[..]
            );
        }
    }

    #[test]
    fn unlink_head_middle_and_tail() {
        let mut t = Table::new([0; 9]);
        let mut list = List::EMPTY;
        for i in 1..=5 {
            list.push_back(&mut t, i);
        }
        list.unlink(&mut t, 1);
        list.unlink(&mut t, 3);
        list.unlink(&mut t, 5);
        assert_eq!(collect(&mut list, &mut t)[..3], [2, 4, NIL]);
    }

    #[test]
    fn insert_sorted_keeps_equal_keys_in_arrival_order() {
        let mut t = Table::new([0, 5, 3, 5, 1, 9, 3, 0, 0]);
        let mut list = List::EMPTY;
        for i in 1..=6 {
            list.insert_sorted(&mut t, i);
        }
        assert_eq!(collect(&mut list, &mut t)[..7], [4, 2, 6, 1, 3, 5, NIL]);
    }
}
