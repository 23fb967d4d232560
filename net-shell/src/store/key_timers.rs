//! Keys' deadlines: each volatile key has one timer in [`KeyTimers`], a queue with one slot per
//! key. A key is live through its deadline and gone from the next tick: removed when a command
//! meets it ([`find_live`](Store::find_live)) or when its timer fires ([`Store::expire`]).

use timer_core::Tick;

use super::hash_table::{position, Entry};
use super::Store;

/// What a write does to the key's time to live.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ttl {
    /// Remove any time to live (plain `SET`).
    Persist,
    /// Keep the current time to live (`KEEPTTL`, `INCR`).
    Keep,
    /// Expire at this tick: the key is live through tick `at` and gone from the next one,
    /// as in Redis, whose key is expired once `mstime() > when`. With whole-millisecond ticks
    /// that read a clock rounded down, this is what keeps a key from going before its time
    /// (`PX 5` set at 10.9 ms lives until 16 ms, not 15) while `PTTL` never reports more than
    /// was set. Deadlines are capped at `Tick::MAX - 1`, some 585 million years of
    /// milliseconds.
    At(Tick),
}

/// Timers moved out of the last key timer segment per change to the timers, at most: enough
/// that the segment empties while keys go (a removed key moves up to this many), few enough
/// that no command pays for many.
#[cfg(feature = "alloc")]
const TIMERS_MOVED_PER_CHANGE: usize = 4;

/// A key with deadline `at` goes at the tick after it ([`Ttl::At`]): its timer's deadline.
pub(super) const fn timer_for_deadline(at: Tick) -> Tick {
    if at >= Tick::MAX - 1 {
        Tick::MAX
    } else {
        at + 1
    }
}

/// The key's deadline, from its timer's.
pub(super) const fn deadline_of_timer(timer: Tick) -> Tick {
    timer.saturating_sub(1)
}

impl Store<'_> {
    /// Number of keys that carry a time to live.
    pub fn volatile_len(&self) -> usize {
        self.timers.len()
    }

    /// Keys removed because their time to live ran out (on access or by the timer).
    pub const fn expired_keys(&self) -> u64 {
        self.expired_keys
    }

    /// Whether to keep the keys removed on access after their deadline (a command met them
    /// before the timer sweep did), for [`take_expired_on_access`](Self::take_expired_on_access):
    /// keyspace notifications publish those too.
    #[cfg(feature = "pubsub")]
    pub fn record_expired_on_access(&mut self, on: bool) {
        if on != self.expired_on_access.is_some() {
            self.expired_on_access = on.then(alloc::vec::Vec::new);
        }
    }

    /// The keys removed on access since the last call (none unless recording).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreMemory, Ttl};
    ///
    /// let mut store = Store::new(StoreMemory::allocate(8, 1024), 16, 64);
    /// store.record_expired_on_access(true);
    /// store.set(b"a", b"1", Ttl::At(5), 0).unwrap();
    /// assert_eq!(store.get(b"a", 6), None); // past its deadline: removed
    /// assert_eq!(store.take_expired_on_access(), [b"a".to_vec()]);
    /// ```
    #[cfg(feature = "pubsub")]
    pub fn take_expired_on_access(&mut self) -> alloc::vec::Vec<alloc::vec::Vec<u8>> {
        match &mut self.expired_on_access {
            Some(keys) => core::mem::take(keys),
            None => alloc::vec::Vec::new(),
        }
    }

    /// The earliest tick at which [`expire`](Self::expire) has work (may be early, never late).
    pub fn next_deadline(&self) -> Option<Tick> {
        self.timers.next_deadline()
    }

    /// Removes keys whose deadline has passed (`< now`), at most `budget` of them; returns how many were
    /// removed and whether more are due.
    ///
    /// Keys go in deadline order (equal deadlines in the order they were set) while their
    /// timers share one queue: always over lent arrays, and in an allocated store until its
    /// volatile keys outgrow the first timer segment (1,024 keys, or the key cap if smaller).
    /// Past that, each segment's due keys go in that order, segment after segment (a timer
    /// moved to an earlier segment as the table shrinks counts as set when it moved): every
    /// key removed is past its deadline and was invisible already.
    pub fn expire(&mut self, now: Tick, budget: usize) -> timer_core::Sweep {
        self.expire_each(now, budget, |_| {})
    }

    /// [`expire`](Self::expire), telling `removed` each key just before it goes (for
    /// keyspace notifications).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::store::{Store, StoreMemory, Ttl};
    ///
    /// let mut store = Store::new(StoreMemory::allocate(8, 1024), 16, 64);
    /// store.set(b"a", b"1", Ttl::At(5), 0).unwrap();
    /// store.set(b"b", b"2", Ttl::At(9), 0).unwrap();
    /// let mut gone = Vec::new();
    /// store.expire_each(6, 10, |key| gone.push(key.to_vec()));
    /// assert_eq!(gone, [b"a".to_vec()]);
    /// ```
    pub fn expire_each(
        &mut self,
        now: Tick,
        budget: usize,
        mut removed: impl FnMut(&[u8]),
    ) -> timer_core::Sweep {
        let mut fired = 0;
        let capacity = self.timers.capacity();
        let mut segment = 0;
        while fired < budget {
            let Some(expired) = self.timers.pop_expired(now, &mut segment) else {
                self.account_timers(capacity);
                return timer_core::Sweep {
                    fired,
                    more_due: false,
                };
            };
            let (timer, index) = expired;
            if self.entry(index).is_some_and(|e| e.timer() == Some(timer)) {
                if let Some(entry) = self.entries.get_mut(position(index)) {
                    entry.set_timer(None);
                    removed(self.pool.slice(entry.offset, entry.key_len as usize));
                }
                self.remove_index(index);
                self.expired_keys += 1;
                fired += 1;
            }
        }
        self.account_timers(capacity);
        timer_core::Sweep {
            fired,
            more_due: self.timers.has_expired(now),
        }
    }

    /// The deadline of a live key: `None` if there is no such key, `Some(None)` if it is
    /// persistent.
    pub fn deadline(&mut self, key: &[u8], now: Tick) -> Option<Option<Tick>> {
        let index = self.find_live(key, now)?;
        let timer = self.entry(index)?.timer();
        Some(
            timer
                .and_then(|timer| self.timers.deadline(timer))
                .map(deadline_of_timer),
        )
    }

    /// Sets a live key's deadline (`None`: persist). Returns `false` if there is no such key.
    ///
    /// A deadline `<= now` deletes the key, as Redis does.
    pub fn set_deadline(&mut self, key: &[u8], deadline: Option<Tick>, now: Tick) -> bool {
        let Some(index) = self.find_live(key, now) else {
            return false;
        };
        match deadline {
            Some(at) if at <= now => {
                self.remove_index(index);
                self.expired_keys += 1;
            }
            _ => {
                self.apply_ttl(index, deadline.map_or(Ttl::Persist, Ttl::At));
                self.stamp_written(index);
            }
        }
        true
    }

    pub(super) fn apply_ttl(&mut self, index: u32, ttl: Ttl) {
        let current = self.entry(index).and_then(Entry::timer);
        let capacity = self.timers.capacity();
        let timer = match (ttl, current) {
            (Ttl::Keep, current) => current,
            (Ttl::Persist, None) => None,
            (Ttl::Persist, Some(timer)) => {
                let _ = self.timers.cancel(timer);
                None
            }
            (Ttl::At(at), Some(timer)) if self.timers.reschedule(timer, timer_for_deadline(at)) => {
                Some(timer)
            }
            // The key timers have (or make) a slot for every key: this cannot be full.
            (Ttl::At(at), _) => self.timers.insert(timer_for_deadline(at), index),
        };
        if let Some(entry) = self.entries.get_mut(position(index)) {
            entry.set_timer(timer);
        }
        self.account_timers(capacity);
    }

    /// After a change to the key timers: moves a few timers out of the last segment while
    /// the others have room to spare (see [`KeyTimers::move_one_down`]), and accounts for the
    /// timers' growth or shrinking since they had `capacity` slots (lent timers never change).
    #[cfg_attr(not(feature = "alloc"), allow(unused_variables))]
    pub(super) fn account_timers(&mut self, capacity: usize) {
        #[cfg(feature = "alloc")]
        {
            for _ in 0..TIMERS_MOVED_PER_CHANGE {
                let Some((timer, index)) = self.timers.move_one_down() else {
                    break;
                };
                if let Some(entry) = self.entries.get_mut(position(index)) {
                    entry.set_timer(Some(timer));
                }
            }
            if self.timers.capacity() != capacity {
                self.account_growth();
            }
        }
    }

    /// Finds a key and removes it if its deadline has passed (lazy expiry).
    pub(super) fn find_live(&mut self, key: &[u8], now: Tick) -> Option<u32> {
        let index = self.find(key)?;
        if self.entry(index).is_some_and(|e| self.is_expired(e, now)) {
            #[cfg(feature = "pubsub")]
            if let (Some(keys), Some(entry)) = (
                &mut self.expired_on_access,
                self.entries.get(position(index)),
            ) {
                keys.push(
                    self.pool
                        .slice(entry.offset, entry.key_len as usize)
                        .to_vec(),
                );
            }
            self.remove_index(index);
            self.expired_keys += 1;
            return None;
        }
        Some(index)
    }

    /// Whether `entry`'s deadline is `< now` (its timer `<= now`).
    pub(super) fn is_expired(&self, entry: &Entry, now: Tick) -> bool {
        entry
            .timer()
            .and_then(|timer| self.timers.deadline(timer))
            .is_some_and(|at| at <= now)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::store;
    use super::super::StoreArrays;
    use super::*;

    #[test]
    pub(super) fn key_visible_until_deadline_then_gone() {
        let mut arrays = StoreArrays::<8, 256>::new();
        let mut s = store(&mut arrays, 16, 64);
        s.set(b"k", b"v", Ttl::At(100), 0).unwrap();
        assert_eq!(s.get(b"k", 100), Some(&b"v"[..]));
        assert_eq!(s.get(b"k", 101), None);
        assert_eq!(s.len(), 0);
        assert_eq!(s.expired_keys(), 1);
    }

    #[test]
    pub(super) fn timer_removes_key_without_access() {
        let mut arrays = StoreArrays::<8, 256>::new();
        let mut s = store(&mut arrays, 16, 64);
        s.set(b"a", b"1", Ttl::At(50), 0).unwrap();
        s.set(b"b", b"2", Ttl::Persist, 0).unwrap();
        assert_eq!(s.expire(50, 10).fired, 0);
        let sweep = s.expire(51, 10);
        assert_eq!((sweep.fired, sweep.more_due), (1, false));
        assert_eq!(s.len(), 1);
        assert_eq!(s.volatile_len(), 0);
    }

    /// Runs on the key timers of either build (`KeyTimers`): the heap without `alloc`
    /// (`cargo test -p net-shell --lib`), the wheel with it.
    #[test]
    pub(super) fn budgeted_expiry_goes_in_deadline_order_with_ties_first_in_first_out() {
        let mut arrays = StoreArrays::<16, 512>::new();
        let mut s = store(&mut arrays, 16, 64);
        // Keys set out of deadline order; c, a, e share a deadline and were set in that order.
        let keys: [(&[u8], Tick); 6] = [
            (b"d", 40),
            (b"c", 30),
            (b"a", 30),
            (b"b", 20),
            (b"e", 30),
            (b"f", 50),
        ];
        for (key, at) in keys {
            s.set(key, b"v", Ttl::At(at), 0).unwrap();
        }
        // Moving a key's deadline counts as setting it anew: it now follows e.
        s.set(b"d", b"v", Ttl::At(30), 0).unwrap();
        assert!(s.next_deadline().is_some_and(|next| next <= 21));
        // The heap's next deadline is exact; the wheel's may be the start of a coarse slot.
        #[cfg(not(feature = "key-timers-wheel"))]
        assert_eq!(s.next_deadline(), Some(21));
        let mut gone = std::vec::Vec::new();
        let sweep = s.expire_each(30, 10, |key| gone.push(key[0]));
        assert_eq!((sweep.fired, sweep.more_due), (1, false));
        let sweep = s.expire_each(31, 2, |key| gone.push(key[0]));
        assert_eq!((sweep.fired, sweep.more_due), (2, true));
        let sweep = s.expire_each(31, 2, |key| gone.push(key[0]));
        assert_eq!((sweep.fired, sweep.more_due), (2, false));
        assert_eq!(gone, b"bcaed");
        assert_eq!(s.len(), 1);
        assert_eq!(s.deadline(b"f", 31), Some(Some(50)));
        assert_eq!(s.expire(50, 10).fired, 0);
        assert_eq!(s.expire(51, 10).fired, 1);
        assert!(s.is_empty() && s.next_deadline().is_none());
    }

    #[test]
    pub(super) fn past_deadline_on_set_deletes() {
        let mut arrays = StoreArrays::<4, 64>::new();
        let mut s = store(&mut arrays, 16, 64);
        s.set(b"k", b"v", Ttl::Persist, 10).unwrap();
        s.set(b"k", b"w", Ttl::At(5), 10).unwrap();
        assert_eq!(s.get(b"k", 10), None);
    }

    #[test]
    pub(super) fn keep_ttl_preserves_deadline() {
        let mut arrays = StoreArrays::<4, 64>::new();
        let mut s = store(&mut arrays, 16, 64);
        s.set(b"k", b"v", Ttl::At(500), 0).unwrap();
        s.set(b"k", b"w", Ttl::Keep, 1).unwrap();
        assert_eq!(s.deadline(b"k", 1), Some(Some(500)));
        s.set(b"k", b"x", Ttl::Persist, 2).unwrap();
        assert_eq!(s.deadline(b"k", 2), Some(None));
    }
}
