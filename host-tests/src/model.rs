//! A reference model of the [`TimerQueue`](timer_core::TimerQueue) contract, built on a
//! `BTreeMap`, for property tests and fuzz targets to compare the real queues against.
//!
//! The model owns no handles: the queue under test issues a [`TimerId`] and the model records
//! it. Every timer is ordered by a [`Key`] of `(deadline, list, seq)`, where `seq` grows on
//! every insert *and* every reschedule, so a rescheduled timer orders after all timers already
//! pending with its new deadline. `list` is 0 for every queue except
//! [`TimeoutLists`](timer_core::TimeoutLists), where equal deadlines on different lists fire in
//! list order.

use std::collections::BTreeMap;

use timer_core::{Tick, TimerId};

/// Where a timer sits in firing order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Key {
    /// When the timer is due.
    pub deadline: Tick,
    /// The list it is on (0 for queues without lists); breaks ties between equal deadlines.
    pub list: usize,
    /// Insertion order (inserts and reschedules both count); breaks ties within one list.
    pub seq: u64,
}

/// A timer the model handed out: fired, drained, or cancelled.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Removed<T> {
    /// The handle the queue issued for it.
    pub id: TimerId,
    /// Its deadline when it left.
    pub deadline: Tick,
    /// Its value.
    pub value: T,
}

struct Entry<T> {
    id: TimerId,
    key: Key,
    value: T,
    /// Where `id` sits in `ReferenceQueue::live`.
    live_at: usize,
}

/// The reference model: pending timers in firing order, plus an index by handle.
pub struct ReferenceQueue<T> {
    order: BTreeMap<Key, TimerId>,
    /// Pending timers by `TimerId::index()`: the queue never gives two live timers one index.
    by_index: Vec<Option<Entry<T>>>,
    /// Every pending handle, in no particular order, to pick one at random in O(1).
    live: Vec<TimerId>,
    next_seq: u64,
}

impl<T> Default for ReferenceQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> ReferenceQueue<T> {
    /// An empty model.
    pub fn new() -> Self {
        Self {
            order: BTreeMap::new(),
            by_index: Vec::new(),
            live: Vec::new(),
            next_seq: 0,
        }
    }

    /// How many timers are pending.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether no timer is pending.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Every pending handle, in no particular (but deterministic) order.
    pub fn live(&self) -> &[TimerId] {
        &self.live
    }

    /// The pending timer, if any, that uses slot `index`.
    pub fn occupant(&self, index: usize) -> Option<TimerId> {
        self.by_index.get(index)?.as_ref().map(|entry| entry.id)
    }

    fn entry(&self, id: TimerId) -> Option<&Entry<T>> {
        self.by_index
            .get(id.index())?
            .as_ref()
            .filter(|entry| entry.id == id)
    }

    fn entry_mut(&mut self, id: TimerId) -> Option<&mut Entry<T>> {
        self.by_index
            .get_mut(id.index())?
            .as_mut()
            .filter(|entry| entry.id == id)
    }

    fn next_key(&mut self, deadline: Tick, list: usize) -> Key {
        let seq = self.next_seq;
        self.next_seq += 1;
        Key {
            deadline,
            list,
            seq,
        }
    }

    /// Records a timer the queue accepted under handle `id`.
    ///
    /// # Panics
    ///
    /// If another pending timer already uses `id`'s slot: the queue handed out a live slot twice.
    pub fn insert(&mut self, id: TimerId, deadline: Tick, list: usize, value: T) {
        let key = self.next_key(deadline, list);
        if self.by_index.len() <= id.index() {
            self.by_index.resize_with(id.index() + 1, || None);
        }
        let slot = &mut self.by_index[id.index()];
        if let Some(occupant) = slot {
            panic!(
                "queue issued {id:?} for a slot still held by pending timer {:?}",
                occupant.id
            );
        }
        *slot = Some(Entry {
            id,
            key,
            value,
            live_at: self.live.len(),
        });
        self.live.push(id);
        self.order.insert(key, id);
    }

    /// Removes a pending timer; `None` if `id` does not name one.
    pub fn remove(&mut self, id: TimerId) -> Option<Removed<T>> {
        self.entry(id)?;
        let entry = self.by_index[id.index()].take()?;
        self.order.remove(&entry.key);
        self.live.swap_remove(entry.live_at);
        if let Some(&moved) = self.live.get(entry.live_at) {
            if let Some(Some(other)) = self.by_index.get_mut(moved.index()) {
                other.live_at = entry.live_at;
            }
        }
        Some(Removed {
            id,
            deadline: entry.key.deadline,
            value: entry.value,
        })
    }

    /// Moves a pending timer to `deadline` on `list`, behind every timer already there with that
    /// deadline. `false` if `id` does not name a pending timer.
    pub fn reschedule(&mut self, id: TimerId, deadline: Tick, list: usize) -> bool {
        let Some(old) = self.entry(id).map(|entry| entry.key) else {
            return false;
        };
        let key = self.next_key(deadline, list);
        self.order.remove(&old);
        self.order.insert(key, id);
        if let Some(entry) = self.entry_mut(id) {
            entry.key = key;
        }
        true
    }

    /// The deadline of a pending timer.
    pub fn deadline(&self, id: TimerId) -> Option<Tick> {
        self.entry(id).map(|entry| entry.key.deadline)
    }

    /// The list of a pending timer.
    pub fn list_of(&self, id: TimerId) -> Option<usize> {
        self.entry(id).map(|entry| entry.key.list)
    }

    /// The value of a pending timer.
    pub fn get(&self, id: TimerId) -> Option<&T> {
        self.entry(id).map(|entry| &entry.value)
    }

    /// The value of a pending timer, mutably.
    pub fn get_mut(&mut self, id: TimerId) -> Option<&mut T> {
        self.entry_mut(id).map(|entry| &mut entry.value)
    }

    /// The earliest pending deadline.
    pub fn next_deadline(&self) -> Option<Tick> {
        self.order.keys().next().map(|key| key.deadline)
    }

    /// The earliest deadline on `list`. O(n): meant for occasional checks.
    pub fn next_deadline_in(&self, list: usize) -> Option<Tick> {
        self.order
            .keys()
            .filter(|key| key.list == list)
            .map(|key| key.deadline)
            .min()
    }

    /// Whether a timer is due at `now`.
    pub fn is_due(&self, now: Tick) -> bool {
        self.next_deadline().is_some_and(|deadline| deadline <= now)
    }

    /// How many timers are due at `now`. O(due): meant for occasional checks.
    pub fn due_count(&self, now: Tick) -> usize {
        self.order
            .keys()
            .take_while(|key| key.deadline <= now)
            .count()
    }

    /// Removes the first timer in firing order if it is due at `now`.
    pub fn pop_due(&mut self, now: Tick) -> Option<Removed<T>> {
        let (&key, &id) = self.order.iter().next()?;
        if key.deadline <= now {
            self.remove(id)
        } else {
            None
        }
    }
}
