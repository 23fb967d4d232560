//! Intrusive, index-linked, circular doubly linked lists.
//!
//! A list is one `u32` (its head); each node carries `prev`/`next` indices into the arena that
//! holds it, and the tail is `prev(head)`. Indices instead of pointers keep this safe Rust: the
//! same idea as heapless' `sorted_linked_list`, with O(1) unlink from anywhere. Any number of
//! lists can thread through one arena: the wheel keeps 64 per level, the timeout lists one per
//! timeout.

use crate::arena::NIL;

/// Access to the `prev`/`next` links of the nodes a list threads through.
pub(crate) trait Links {
    fn prev(&self, index: u32) -> u32;
    fn next(&self, index: u32) -> u32;
    fn set_links(&mut self, index: u32, prev: u32, next: u32);
    fn set_prev(&mut self, index: u32, prev: u32);
    fn set_next(&mut self, index: u32, next: u32);
    /// The sort key used by [`List::insert_sorted`].
    fn key(&self, index: u32) -> u64;
}

/// The head of one list; `NIL` when empty.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct List {
    head: u32,
}

impl List {
    pub(crate) const EMPTY: Self = Self { head: NIL };

    pub(crate) const fn is_empty(&self) -> bool {
        self.head == NIL
    }

    pub(crate) fn head(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    pub(crate) fn tail(&self, links: &(impl Links + ?Sized)) -> Option<u32> {
        self.head().map(|head| links.prev(head))
    }

    /// Appends `index`, which must not be on any list.
    #[inline]
    pub(crate) fn push_back(&mut self, links: &mut (impl Links + ?Sized), index: u32) {
        if self.head == NIL {
            links.set_links(index, index, index);
            self.head = index;
        } else {
            let tail = links.prev(self.head);
            self.link_between(links, tail, self.head, index);
        }
    }

    /// Inserts `index` after every node whose key is `<=` its key, walking from the tail.
    ///
    /// O(1) when `index` has the largest key (the common case for timeouts and due lists);
    /// otherwise O(k) in the nodes it walks past.
    pub(crate) fn insert_sorted(&mut self, links: &mut (impl Links + ?Sized), index: u32) {
        let key = links.key(index);
        let Some(tail) = self.tail(links) else {
            self.push_back(links, index);
            return;
        };
        let mut at = tail;
        loop {
            if links.key(at) <= key {
                let next = links.next(at);
                self.link_between(links, at, next, index);
                return;
            }
            if at == self.head {
                // Smaller than everything: becomes the new head.
                let tail = links.prev(at);
                self.link_between(links, tail, at, index);
                self.head = index;
                return;
            }
            at = links.prev(at);
        }
    }

    fn link_between(
        &mut self,
        links: &mut (impl Links + ?Sized),
        prev: u32,
        next: u32,
        index: u32,
    ) {
        links.set_links(index, prev, next);
        links.set_next(prev, index);
        links.set_prev(next, index);
    }

    /// Removes `index`, which must be on this list. Its own links are left as they were: every
    /// way onto a list sets them.
    #[inline]
    pub(crate) fn unlink(&mut self, links: &mut (impl Links + ?Sized), index: u32) {
        let next = links.next(index);
        if next == index {
            self.head = NIL;
        } else {
            let prev = links.prev(index);
            links.set_next(prev, next);
            links.set_prev(next, prev);
            if self.head == index {
                self.head = next;
            }
        }
    }

    pub(crate) fn pop_front(&mut self, links: &mut (impl Links + ?Sized)) -> Option<u32> {
        let head = self.head()?;
        self.unlink(links, head);
        Some(head)
    }

    /// Detaches the whole list, leaving this one empty.
    pub(crate) fn take(&mut self) -> List {
        core::mem::replace(self, List::EMPTY)
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
        fn key(&self, i: u32) -> u64 {
            self.keys[i as usize]
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
        assert_eq!(list.tail(&t), Some(2));
        assert_eq!(collect(&mut list, &mut t)[..4], [3, 1, 2, NIL]);
        assert!(list.is_empty());
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

    #[test]
    fn take_detaches_everything() {
        let mut t = Table::new([0; 9]);
        let mut list = List::EMPTY;
        list.push_back(&mut t, 1);
        list.push_back(&mut t, 2);
        let mut taken = list.take();
        assert!(list.is_empty());
        assert_eq!(collect(&mut taken, &mut t)[..3], [1, 2, NIL]);
    }
}
