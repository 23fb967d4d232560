//! FIFO timeout lists: one list per fixed timeout, all sharing one arena.

use crate::arena::{Arena, Slot};
use crate::linked::{linked_slot, Link, LinkedNode};
use crate::list::List;
use crate::{Expired, Full, StaleTimer, Storage, Tick, TimerId, TimerQueue};

/// One timer's storage in a [`TimeoutListsOn`]: 32 bytes for a `u32` value.
///
/// An inline [`TimeoutLists<T, N, L>`] holds `N` of them; for lists sized at run time, make a
/// slice of them (`TimeoutSlot::new()` is an empty one) and hand it to
/// [`TimeoutListsOn::with_storage`].
pub struct TimeoutSlot<T> {
    link: Link,
    slot: Slot<LinkedNode<T, u16>>,
}

linked_slot!(TimeoutSlot, u16);

/// `L` FIFO timeout lists sharing `N` timers inline: [`TimeoutListsOn`] over
/// `[TimeoutSlot<T>; N]`, with a `const fn new()` for `static`s.
pub type TimeoutLists<T, const N: usize, const L: usize> =
    TimeoutListsOn<T, [TimeoutSlot<T>; N], L>;

/// `L` FIFO timeout lists sharing one store of timers `S` (inline: [`TimeoutLists<T, N, L>`];
/// a slice the caller owns: [`with_storage`](Self::with_storage)).
///
/// Made for fixed timeouts (idle, read, write): when every new deadline on a list is the latest
/// on it, the list stays sorted by appending, so insert, touch (push the deadline out and move to
/// the tail), cancel and next deadline are all O(1) (next deadline is O(L) over the lists). Any
/// other deadline is still handled correctly: it is placed by walking back from the tail, O(k) in
/// the timers it passes.
///
/// Through [`TimerQueue`], `insert` files on list 0; [`insert_into`](Self::insert_into) picks
/// the list. Expiry takes the earliest head across lists; equal deadlines on different lists fire
/// in list order, on one list in insertion order.
///
/// Memory: 32 bytes per slot for a `u32` value, plus 4 bytes per list.
///
/// # Examples
///
/// ```
/// use timer_core::{TimeoutLists, TimerQueue};
///
/// const IDLE: usize = 0;
/// const READ: usize = 1;
/// let mut timeouts: TimeoutLists<u8, 8, 2> = TimeoutLists::new();
///
/// // Connection 7 is idle (30 s); connection 9 is half-way through a command (5 s).
/// let conn7 = timeouts.insert_into(IDLE, 30, 7).unwrap();
/// let conn9 = timeouts.insert_into(READ, 5, 9).unwrap();
///
/// // A command from 7 at t=10 pushes its idle timeout to 40: O(1), no search.
/// timeouts.touch(conn7, 40).unwrap();
/// // 9 completes its command at t=3 and goes idle.
/// timeouts.move_to(conn9, IDLE, 33).unwrap();
///
/// let mut closed = Vec::new();
/// let _ = timeouts.expire(35, usize::MAX, |e| closed.push(e.value));
/// assert_eq!(closed, [9]);
/// assert_eq!(timeouts.next_deadline(), Some(40));
/// ```
///
/// Over a slice sized at run time (say, one slot per connection the configuration allows):
///
/// ```
/// use timer_core::{TimeoutListsOn, TimeoutSlot, TimerQueue};
///
/// let max_clients = 10_000;
/// let mut slots: Vec<TimeoutSlot<u32>> = (0..max_clients).map(|_| TimeoutSlot::new()).collect();
/// let mut idle = TimeoutListsOn::<_, _, 1>::with_storage(&mut slots[..]);
/// idle.insert(30_000, 7).unwrap();
/// assert_eq!(idle.capacity(), 10_000);
/// assert_eq!(idle.next_deadline(), Some(30_000));
/// ```
pub struct TimeoutListsOn<T, S, const L: usize> {
    nodes: Arena<TimeoutSlot<T>, S>,
    lists: [List; L],
}

/// One FIFO timeout list: [`TimeoutLists`] with a single list.
///
/// # Examples
///
/// ```
/// use timer_core::{TimeoutList, TimerQueue};
///
/// let mut idle: TimeoutList<u32, 4> = TimeoutList::new();
/// let a = idle.insert(100, 1).unwrap();
/// idle.insert(110, 2).unwrap();
/// idle.touch(a, 150).unwrap(); // activity on connection 1
/// assert_eq!(idle.next_deadline(), Some(110));
/// assert_eq!(idle.pop_expired(120).map(|e| e.value), Some(2));
/// ```
pub type TimeoutList<T, const N: usize> = TimeoutLists<T, N, 1>;

impl<T, const N: usize, const L: usize> Default for TimeoutLists<T, N, L> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, S, const L: usize> TimeoutListsOn<T, S, L> {
    const LISTS_IN_RANGE: () = assert!(
        L >= 1 && L <= u16::MAX as usize,
        "timer-core: TimeoutLists needs 1..=65535 lists"
    );
}

impl<T, const N: usize, const L: usize> TimeoutLists<T, N, L> {
    /// Empty lists of `N` timers: all zero bytes, and `const`, so they can live in a `static`
    /// (in `.bss`).
    pub const fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::LISTS_IN_RANGE;
        Self {
            nodes: Arena::new(),
            lists: [List::EMPTY; L],
        }
    }
}

#[cfg(feature = "alloc")]
impl<T, const L: usize> TimeoutListsOn<T, alloc::boxed::Box<[TimeoutSlot<T>]>, L> {
    /// Empty lists of `capacity` timers, their slots in one heap allocation.
    ///
    /// # Examples
    ///
    /// ```
    /// use timer_core::{TimeoutListsOn, TimerQueue};
    ///
    /// let mut conns = TimeoutListsOn::<u32, _, 2>::with_capacity(50_000);
    /// assert_eq!(conns.capacity(), 50_000);
    /// conns.insert_into(1, 5_000, 9).unwrap();
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_storage((0..capacity).map(|_| TimeoutSlot::new()).collect())
    }
}

impl<T, S: Storage<TimeoutSlot<T>>, const L: usize> TimeoutListsOn<T, S, L> {
    /// Empty lists over `storage`, which holds one timer per slot: their capacity is
    /// `storage`'s length. O(capacity): every slot is emptied (values left in it are dropped).
    pub fn with_storage(storage: S) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::LISTS_IN_RANGE;
        Self {
            nodes: Arena::with_storage(storage),
            lists: [List::EMPTY; L],
        }
    }

    /// Gives the storage back (for reuse), dropping every pending timer.
    pub fn into_storage(self) -> S {
        self.nodes.into_storage()
    }

    /// Adds a timer due at `deadline` to list `list`.
    ///
    /// # Errors
    ///
    /// [`Full`] with the value, when every slot is taken.
    ///
    /// # Panics
    ///
    /// If `list >= L` (a programming error, like an out-of-range slice index).
    pub fn insert_into(
        &mut self,
        list: usize,
        deadline: Tick,
        value: T,
    ) -> Result<TimerId, Full<T>> {
        assert!(list < L, "timer-core: list {list} out of range (have {L})");
        let id = self
            .nodes
            .allocate(value, |value, generation| {
                LinkedNode::new(deadline, list as u16, value, generation)
            })
            .map_err(Full)?;
        self.lists[list].insert_sorted(self.nodes.cells_mut(), id.slot());
        Ok(id)
    }

    /// Pushes a timer's deadline to `deadline` and moves it to its place (the tail, when
    /// `deadline` is the latest on its list). The same as [`TimerQueue::reschedule`].
    ///
    /// # Errors
    ///
    /// [`StaleTimer`] when `id` does not name a pending timer; nothing changes.
    pub fn touch(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer> {
        let index = self.nodes.resolve(id).ok_or(StaleTimer)?;
        let list = self.list_index(index);
        self.refile(index, list, deadline);
        Ok(())
    }

    /// Moves a timer to list `list` with a new deadline (say from "reading" to "idle").
    ///
    /// # Errors
    ///
    /// [`StaleTimer`] when `id` does not name a pending timer; nothing changes.
    ///
    /// # Panics
    ///
    /// If `list >= L`.
    pub fn move_to(&mut self, id: TimerId, list: usize, deadline: Tick) -> Result<(), StaleTimer> {
        assert!(list < L, "timer-core: list {list} out of range (have {L})");
        let index = self.nodes.resolve(id).ok_or(StaleTimer)?;
        self.refile(index, list, deadline);
        Ok(())
    }

    /// The list a pending timer is on, `None` if `id` is stale.
    pub fn list_of(&self, id: TimerId) -> Option<usize> {
        self.nodes.live(id).map(|node| usize::from(node.home))
    }

    /// The earliest deadline on list `list`, `None` if it is empty (or out of range).
    pub fn next_deadline_in(&self, list: usize) -> Option<Tick> {
        let head = self.lists.get(list)?.head(self.nodes.cells())?;
        Some(self.nodes.key(head))
    }

    /// Removes and returns the earliest timer on list `list` due at `now`, if any: for callers
    /// that handle each list's expiries differently (an idle timeout is not a read timeout).
    ///
    /// # Examples
    ///
    /// ```
    /// use timer_core::TimeoutLists;
    ///
    /// let mut timeouts: TimeoutLists<u8, 4, 2> = TimeoutLists::new();
    /// timeouts.insert_into(0, 10, 1).unwrap();
    /// timeouts.insert_into(1, 5, 2).unwrap();
    /// assert_eq!(timeouts.pop_expired_in(0, 20).map(|e| e.value), Some(1));
    /// assert_eq!(timeouts.pop_expired_in(0, 20), None);
    /// assert_eq!(timeouts.pop_expired_in(1, 4), None);
    /// assert_eq!(timeouts.pop_expired_in(9, 20), None); // no such list
    /// ```
    pub fn pop_expired_in(&mut self, list: usize, now: Tick) -> Option<Expired<T>> {
        let head = self.lists.get(list)?.head(self.nodes.cells())?;
        if self.nodes.key(head) <= now {
            self.take(list, head)
        } else {
            None
        }
    }

    fn list_index(&self, index: u32) -> usize {
        self.nodes
            .get(index)
            .map_or(0, |node| usize::from(node.home))
    }

    fn refile(&mut self, index: u32, list: usize, deadline: Tick) {
        let from = self.list_index(index);
        self.lists[from].unlink(self.nodes.cells_mut(), index);
        if let Some(node) = self.nodes.get_mut(index) {
            node.deadline = deadline;
            node.home = list as u16;
        }
        self.lists[list].insert_sorted(self.nodes.cells_mut(), index);
    }

    /// The list whose head is earliest (ties: the lowest list number).
    fn earliest_list(&self) -> Option<(usize, u32, Tick)> {
        let mut best: Option<(usize, u32, Tick)> = None;
        for (number, list) in self.lists.iter().enumerate() {
            if let Some(head) = list.head(self.nodes.cells()) {
                let deadline = self.nodes.key(head);
                if best.is_none_or(|(_, _, d)| deadline < d) {
                    best = Some((number, head, deadline));
                }
            }
        }
        best
    }

    fn take(&mut self, list: usize, index: u32) -> Option<Expired<T>> {
        self.lists[list].unlink(self.nodes.cells_mut(), index);
        self.nodes.take_expired(index)
    }
}

impl<T, S: Storage<TimeoutSlot<T>>, const L: usize> TimerQueue<T> for TimeoutListsOn<T, S, L> {
    fn insert(&mut self, deadline: Tick, value: T) -> Result<TimerId, Full<T>> {
        self.insert_into(0, deadline, value)
    }

    fn cancel(&mut self, id: TimerId) -> Result<T, StaleTimer> {
        let index = self.nodes.resolve(id).ok_or(StaleTimer)?;
        let list = self.list_index(index);
        self.take(list, index)
            .map(|expired| expired.value)
            .ok_or(StaleTimer)
    }

    fn reschedule(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer> {
        self.touch(id, deadline)
    }

    fn deadline(&self, id: TimerId) -> Option<Tick> {
        self.nodes.live(id).map(|node| node.deadline)
    }

    fn get(&self, id: TimerId) -> Option<&T> {
        self.nodes.live(id).map(|node| &node.value)
    }

    fn get_mut(&mut self, id: TimerId) -> Option<&mut T> {
        self.nodes.live_mut(id).map(|node| &mut node.value)
    }

    fn next_deadline(&self) -> Option<Tick> {
        self.earliest_list().map(|(_, _, deadline)| deadline)
    }

    fn pop_expired(&mut self, now: Tick) -> Option<Expired<T>> {
        let (list, index, deadline) = self.earliest_list()?;
        if deadline <= now {
            self.take(list, index)
        } else {
            None
        }
    }

    fn has_expired(&mut self, now: Tick) -> bool {
        self.next_deadline().is_some_and(|deadline| deadline <= now)
    }

    fn pop_any(&mut self) -> Option<Expired<T>> {
        let list = self.lists.iter().position(|list| !list.is_empty())?;
        let index = self.lists[list].head(self.nodes.cells())?;
        self.take(list, index)
    }

    fn len(&self) -> usize {
        self.nodes.len()
    }

    fn capacity(&self) -> usize {
        self.nodes.capacity()
    }

    fn is_full(&self) -> bool {
        self.nodes.is_full()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn touch_moves_timer_to_tail() {
        let mut q: TimeoutList<u32, 4> = TimeoutList::new();
        let a = q.insert(10, 1).unwrap();
        q.insert(20, 2).unwrap();
        q.touch(a, 30).unwrap();
        let mut out = Vec::new();
        let _ = q.expire(100, usize::MAX, |e| out.push(e.value));
        assert_eq!(out, [2, 1]);
    }

    #[test]
    fn out_of_order_deadline_is_still_sorted() {
        let mut q: TimeoutList<u32, 4> = TimeoutList::new();
        q.insert(30, 3).unwrap();
        q.insert(10, 1).unwrap();
        q.insert(20, 2).unwrap();
        assert_eq!(q.next_deadline(), Some(10));
        let mut out = Vec::new();
        let _ = q.expire(25, usize::MAX, |e| out.push(e.value));
        assert_eq!(out, [1, 2]);
    }

    #[test]
    fn lists_merge_by_deadline_on_expiry() {
        let mut q: TimeoutLists<u32, 8, 3> = TimeoutLists::new();
        q.insert_into(2, 5, 20).unwrap();
        q.insert_into(0, 7, 0).unwrap();
        q.insert_into(1, 5, 10).unwrap();
        let mut out = Vec::new();
        let _ = q.expire(10, usize::MAX, |e| out.push(e.value));
        assert_eq!(out, [10, 20, 0]);
    }

    #[test]
    fn move_to_changes_list() {
        let mut q: TimeoutLists<u32, 4, 2> = TimeoutLists::new();
        let a = q.insert_into(0, 10, 1).unwrap();
        q.move_to(a, 1, 12).unwrap();
        assert_eq!(q.list_of(a), Some(1));
        assert_eq!(q.next_deadline_in(0), None);
        assert_eq!(q.next_deadline_in(1), Some(12));
        assert_eq!(q.cancel(a), Ok(1));
        assert_eq!(q.list_of(a), None);
    }
}
