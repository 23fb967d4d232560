//! A hierarchical timing wheel over the whole `u64` tick range.

use crate::arena::{Arena, Cell, Slot};
use crate::linked::LinkedNode;
use crate::list::{Links, List};
use crate::{Expired, Full, StaleTimer, Storage, Tick, TimerId, TimerQueue};

/// Slots per level; each level has a `u64` occupancy bitmap.
pub const SLOTS: usize = 64;

/// Number of levels: 11 × 6 bits covers all 64 bits of a [`Tick`], so no overflow store.
pub const LEVELS: usize = 11;

const SLOT_BITS: u32 = SLOTS.trailing_zeros();
const SLOT_MASK: u64 = SLOTS as u64 - 1;

/// The level a timer due at `when` belongs on, seen from `elapsed` (`when > elapsed`): the level
/// of the highest bit in which the two differ.
#[inline]
fn level_for(elapsed: Tick, when: Tick) -> usize {
    let masked = (elapsed ^ when) | SLOT_MASK;
    let significant = 63 - masked.leading_zeros();
    (significant / SLOT_BITS) as usize
}

/// The slot of `when` on `level`.
#[inline]
fn slot_for(when: Tick, level: usize) -> usize {
    ((when >> (level as u32 * SLOT_BITS)) & SLOT_MASK) as usize
}

/// The earliest occupied slot of the wheel, and the tick at which it starts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Expiration {
    level: usize,
    slot: usize,
    /// The first tick the slot covers: no timer in it is due earlier.
    deadline: Tick,
}

/// One level: 64 slots, each a list of timers in arrival order, and a bitmap of the non-empty
/// ones.
struct Level {
    occupied: u64,
    slots: [List; SLOTS],
}

impl Level {
    /// An empty level: all zero bytes.
    const EMPTY: Self = Self {
        occupied: 0,
        slots: [List::EMPTY; SLOTS],
    };

    /// Appends the timer at `index` to `slot`.
    #[inline]
    fn add_entry(&mut self, nodes: &mut (impl Links + ?Sized), slot: usize, index: u32) {
        self.slots[slot].push_back(nodes, index);
        self.occupied |= 1 << slot;
    }

    /// Unlinks the timer at `index` from `slot`.
    #[inline]
    fn remove_entry(&mut self, nodes: &mut (impl Links + ?Sized), slot: usize, index: u32) {
        let list = &mut self.slots[slot];
        list.unlink(nodes, index);
        if list.is_empty() {
            self.occupied &= !(1 << slot);
        }
    }

    /// Takes every timer in `slot`, leaving it empty.
    #[inline]
    fn take_slot(&mut self, slot: usize) -> List {
        self.occupied &= !(1 << slot);
        self.slots[slot].take()
    }

    /// Removes some timer from the level (for draining), if it holds any.
    fn pop_any(&mut self, nodes: &mut (impl Links + ?Sized)) -> Option<u32> {
        if self.occupied == 0 {
            return None;
        }
        let slot = self.occupied.trailing_zeros() as usize;
        let index = self.slots[slot].pop_front(nodes)?;
        if self.slots[slot].is_empty() {
            self.occupied &= !(1 << slot);
        }
        Some(index)
    }

    /// The first occupied slot at or after the one `elapsed` is in, as level number `level`.
    fn next_expiration(&self, level: usize, elapsed: Tick) -> Option<Expiration> {
        if self.occupied == 0 {
            return None;
        }
        let shift = level as u32 * SLOT_BITS;
        let now_slot = ((elapsed >> shift) & SLOT_MASK) as u32;
        let distance = self.occupied.rotate_right(now_slot).trailing_zeros();
        let slot = (now_slot + distance) % SLOTS as u32;
        let span_bits = shift + SLOT_BITS;
        let base = if span_bits >= u64::BITS {
            0
        } else {
            elapsed & !((1u64 << span_bits) - 1)
        };
        let mut deadline = base | (u64::from(slot) << shift);
        if slot < now_slot {
            // Not reachable while the filing invariant holds; stay safe regardless.
            deadline = match 1u64.checked_shl(span_bits) {
                Some(span) => deadline.saturating_add(span),
                None => Tick::MAX,
            };
        }
        Some(Expiration {
            level,
            slot: slot as usize,
            deadline,
        })
    }
}

/// Where a pending timer is filed.
enum Home {
    /// Due (deadline `<= elapsed`), waiting in deadline order to be handed out.
    Due,
    Slot {
        level: usize,
        slot: usize,
    },
}

/// One timer's storage in a [`TimerWheelOn`]: 24 bytes for a `u32` value.
///
/// An inline [`TimerWheel<T, N>`] holds `N` of them; for a wheel sized at run time, make a slice
/// of them (`WheelSlot::new()` is an empty one) and hand it to
/// [`TimerWheelOn::with_storage`].
pub struct WheelSlot<T>(Slot<LinkedNode<T, ()>>);

impl<T> WheelSlot<T> {
    /// An empty slot (all zero bytes).
    pub const fn new() -> Self {
        Self(Slot::EMPTY)
    }
}

impl<T> Default for WheelSlot<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Cell for WheelSlot<T> {
    type Node = LinkedNode<T, ()>;
    const EMPTY: Self = Self::new();

    #[inline]
    fn slot(&self) -> &Slot<Self::Node> {
        &self.0
    }

    #[inline]
    fn slot_mut(&mut self) -> &mut Slot<Self::Node> {
        &mut self.0
    }
}

/// A hierarchical timing wheel of `N` timers inline: [`TimerWheelOn`] over `[WheelSlot<T>; N]`,
/// with a `const fn new()` for `static`s.
pub type TimerWheel<T, const N: usize> = TimerWheelOn<T, [WheelSlot<T>; N]>;

/// A hierarchical timing wheel: O(1) insert, cancel and reschedule over the full `u64` range,
/// over storage `S` of [`WheelSlot`]s (inline: [`TimerWheel<T, N>`]; a slice the caller owns:
/// [`with_storage`](Self::with_storage)).
///
/// Eleven levels of 64 slots, level `l` slots each `64^l` ticks wide:
///
/// | level | slot width (ticks) | level span (ticks) |
/// |------:|-------------------:|-------------------:|
/// | 0     | 1                  | 64                 |
/// | 1     | 64                 | 4 096              |
/// | 2     | 4 096              | 262 144            |
/// | 3     | 2^18               | 2^24               |
/// | 4     | 2^24               | 2^30               |
/// | …     | 64^l               | 64^(l+1)           |
/// | 10    | 2^60               | 2^64 (16 slots used) |
///
/// A timer is filed on the level of the highest bit in which its deadline differs from the
/// wheel's `elapsed` time (the last `now` it expired up to), so all timers with one deadline
/// share one list, in arrival order. When time reaches a coarse slot the whole slot is taken
/// and its timers re-filed on finer levels ("cascading"); a timer cascades at most 10 times in its
/// life, usually 0–3. The next slot is found from the bitmaps with `rotate_right` and
/// `trailing_zeros`, so an expiry after a long pause costs work proportional to the timers and
/// occupied slots it meets, never to the ticks that passed.
///
/// [`reschedule`](TimerQueue::reschedule) re-files eagerly: unlink and relink, O(1). (Lazy
/// re-filing, as tokio does, would let a moved timer overtake or fall behind timers with its new
/// deadline, breaking insertion order for equal deadlines.)
///
/// Memory: 24 bytes per slot for a `u32` value, plus 2.9 KiB of slot heads.
///
/// # Examples
///
/// ```
/// use timer_core::{TimerQueue, TimerWheel};
///
/// let mut wheel: TimerWheel<&str, 32> = TimerWheel::new();
/// wheel.insert(1_000, "flush").unwrap();
/// let io = wheel.insert(250, "io timeout").unwrap();
/// wheel.insert(1 << 50, "far future").unwrap();
///
/// // 250 sits in the level-1 slot [192, 256): the wheel may wake a caller at its start.
/// assert_eq!(wheel.next_deadline(), Some(192));
/// wheel.reschedule(io, 5_000).unwrap(); // the I/O made progress
///
/// let mut fired = Vec::new();
/// let _ = wheel.expire(10_000, usize::MAX, |e| fired.push((e.deadline, e.value)));
/// assert_eq!(fired, [(1_000, "flush"), (5_000, "io timeout")]);
///
/// // A pause of 2^50 ticks costs one pass per occupied slot, not per tick.
/// let _ = wheel.expire(u64::MAX, usize::MAX, |e| fired.push((e.deadline, e.value)));
/// assert_eq!(fired.last(), Some(&(1 << 50, "far future")));
/// assert!(wheel.is_empty());
/// ```
///
/// The same wheel over a slice sized at run time:
///
/// ```
/// use timer_core::{TimerQueue, TimerWheelOn, WheelSlot};
///
/// let mut slots: Vec<WheelSlot<&str>> = (0..1_000).map(|_| WheelSlot::new()).collect();
/// let mut wheel = TimerWheelOn::with_storage(&mut slots[..]);
/// wheel.insert(70, "b").unwrap();
/// wheel.insert(65, "a").unwrap();
/// assert_eq!(wheel.capacity(), 1_000);
/// assert_eq!(wheel.pop_expired(100).map(|e| e.value), Some("a"));
/// ```
pub struct TimerWheelOn<T, S> {
    nodes: Arena<WheelSlot<T>, S>,
    levels: [Level; LEVELS],
    due: List,
    elapsed: Tick,
    /// No occupied slot starts before this tick (a lower bound, so `expire` can return at once
    /// when nothing can be due). 0 means "unknown": it keeps an empty wheel all zero bytes.
    check_from: Tick,
}

impl<T, const N: usize> Default for TimerWheel<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const N: usize> TimerWheel<T, N> {
    /// An empty wheel of `N` timers at time 0: all zero bytes, and `const`, so it can live in a
    /// `static` (in `.bss`).
    pub const fn new() -> Self {
        Self {
            nodes: Arena::new(),
            levels: [const { Level::EMPTY }; LEVELS],
            due: List::EMPTY,
            elapsed: 0,
            check_from: 0,
        }
    }
}

#[cfg(feature = "alloc")]
impl<T> TimerWheelOn<T, alloc::boxed::Box<[WheelSlot<T>]>> {
    /// An empty wheel of `capacity` timers at time 0, its slots in one heap allocation.
    ///
    /// # Examples
    ///
    /// ```
    /// use timer_core::{TimerQueue, TimerWheelOn};
    ///
    /// let mut wheel = TimerWheelOn::<u32, _>::with_capacity(1_000_000);
    /// assert_eq!(wheel.capacity(), 1_000_000);
    /// wheel.insert(5, 1).unwrap();
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_storage((0..capacity).map(|_| WheelSlot::new()).collect())
    }
}

impl<T, S: Storage<WheelSlot<T>>> TimerWheelOn<T, S> {
    /// An empty wheel at time 0 over `storage`, which holds one timer per slot: its capacity is
    /// `storage`'s length. O(capacity): every slot is emptied (values left in it are dropped).
    ///
    /// # Examples
    ///
    /// ```
    /// use timer_core::{TimerQueue, TimerWheelOn, WheelSlot};
    ///
    /// // Owned storage works too: a `Vec` or `Box<[_]>` moves into the wheel.
    /// let mut wheel = TimerWheelOn::with_storage(vec![WheelSlot::<u8>::new(), WheelSlot::new()]);
    /// wheel.insert(1, 1).unwrap();
    /// wheel.insert(2, 2).unwrap();
    /// assert!(wheel.is_full());
    /// ```
    pub fn with_storage(storage: S) -> Self {
        Self {
            nodes: Arena::with_storage(storage),
            levels: [const { Level::EMPTY }; LEVELS],
            due: List::EMPTY,
            elapsed: 0,
            check_from: 0,
        }
    }

    /// Gives the storage back (for reuse), dropping every pending timer.
    pub fn into_storage(self) -> S {
        self.nodes.into_storage()
    }

    /// The time the wheel has expired up to: the largest `now` it has fully processed.
    pub const fn elapsed(&self) -> Tick {
        self.elapsed
    }

    fn home(&self, deadline: Tick) -> Home {
        if deadline <= self.elapsed {
            Home::Due
        } else {
            let level = level_for(self.elapsed, deadline);
            Home::Slot {
                level,
                slot: slot_for(deadline, level),
            }
        }
    }

    fn file(&mut self, index: u32, deadline: Tick) {
        match self.home(deadline) {
            Home::Due => self.due.insert_sorted(self.nodes.cells_mut(), index),
            Home::Slot { level, slot } => {
                self.levels[level].add_entry(self.nodes.cells_mut(), slot, index);
                // The slot starts at the deadline with the bits below this level cleared.
                let start = deadline & !((1u64 << (level as u32 * SLOT_BITS)) - 1);
                self.check_from = self.check_from.min(start);
            }
        }
    }

    fn unfile(&mut self, index: u32, deadline: Tick) {
        match self.home(deadline) {
            Home::Due => self.due.unlink(self.nodes.cells_mut(), index),
            Home::Slot { level, slot } => {
                self.levels[level].remove_entry(self.nodes.cells_mut(), slot, index);
            }
        }
    }

    /// The earliest occupied slot. Any occupied slot on a finer level starts before every slot
    /// on a coarser one, so the first occupied level wins.
    fn next_expiration(&self) -> Option<Expiration> {
        self.levels
            .iter()
            .enumerate()
            .find_map(|(number, level)| level.next_expiration(number, self.elapsed))
    }

    /// Takes the whole slot and re-files its timers relative to its start time.
    fn process(&mut self, expiration: Expiration) {
        let Expiration {
            level,
            slot,
            deadline,
        } = expiration;
        self.elapsed = deadline;
        let mut taken = self.levels[level].take_slot(slot);
        if level == 0 && self.due.is_empty() {
            // Every timer in a level-0 slot is due exactly at its start, already in order.
            self.due = taken;
            return;
        }
        while let Some(index) = taken.pop_front(self.nodes.cells_mut()) {
            let deadline = self.nodes.key(index);
            self.file(index, deadline);
        }
    }

    /// Cascades until the earliest timer due at `now` heads the due list; returns it.
    fn advance(&mut self, now: Tick) -> Option<u32> {
        loop {
            if let Some(head) = self.due.head() {
                return (self.nodes.key(head) <= now).then_some(head);
            }
            if now <= self.elapsed {
                return None;
            }
            if now < self.check_from {
                // No slot starts by `now`: nothing to cascade, nothing due.
                self.elapsed = now;
                return None;
            }
            match self.next_expiration() {
                Some(next) if next.deadline <= now => self.process(next),
                next => {
                    self.check_from = next.map_or(Tick::MAX, |next| next.deadline);
                    self.elapsed = now;
                    return None;
                }
            }
        }
    }
}

impl<T, S: Storage<WheelSlot<T>>> TimerQueue<T> for TimerWheelOn<T, S> {
    fn insert(&mut self, deadline: Tick, value: T) -> Result<TimerId, Full<T>> {
        let id = self
            .nodes
            .allocate(value, |value, generation| {
                LinkedNode::new(deadline, (), value, generation)
            })
            .map_err(Full)?;
        self.file(id.slot(), deadline);
        Ok(id)
    }

    fn cancel(&mut self, id: TimerId) -> Result<T, StaleTimer> {
        let index = self.nodes.resolve(id).ok_or(StaleTimer)?;
        let deadline = self.nodes.key(index);
        self.unfile(index, deadline);
        self.nodes
            .release(index)
            .map(|node| node.value)
            .ok_or(StaleTimer)
    }

    fn reschedule(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer> {
        let index = self.nodes.resolve(id).ok_or(StaleTimer)?;
        let old = self.nodes.key(index);
        self.unfile(index, old);
        if let Some(node) = self.nodes.get_mut(index) {
            node.deadline = deadline;
        }
        self.file(index, deadline);
        Ok(())
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
        match self.due.head() {
            Some(head) => Some(self.nodes.key(head)),
            None => self.next_expiration().map(|next| next.deadline),
        }
    }

    fn pop_expired(&mut self, now: Tick) -> Option<Expired<T>> {
        let index = self.advance(now)?;
        self.due.unlink(self.nodes.cells_mut(), index);
        self.nodes.take_expired(index)
    }

    fn has_expired(&mut self, now: Tick) -> bool {
        self.advance(now).is_some()
    }

    fn pop_any(&mut self) -> Option<Expired<T>> {
        let index = match self.due.pop_front(self.nodes.cells_mut()) {
            Some(index) => index,
            None => self
                .levels
                .iter_mut()
                .find_map(|level| level.pop_any(self.nodes.cells_mut()))?,
        };
        self.nodes.take_expired(index)
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

    fn fire_all<S: Storage<WheelSlot<u32>>>(
        wheel: &mut TimerWheelOn<u32, S>,
        now: Tick,
    ) -> Vec<(Tick, u32)> {
        let mut out = Vec::new();
        let _ = wheel.expire(now, usize::MAX, |e| out.push((e.deadline, e.value)));
        out
    }

    #[test]
    fn level_for_matches_level_table() {
        assert_eq!(level_for(0, 1), 0);
        assert_eq!(level_for(0, 63), 0);
        assert_eq!(level_for(0, 64), 1);
        assert_eq!(level_for(0, 4095), 1);
        assert_eq!(level_for(0, 4096), 2);
        assert_eq!(level_for(0, u64::MAX), 10);
        assert_eq!(level_for(100, 127), 0);
        assert_eq!(level_for(100, 128), 1);
    }

    #[test]
    fn timer_fires_at_deadline_not_before() {
        let mut wheel: TimerWheel<u32, 4> = TimerWheel::new();
        wheel.insert(5_000, 1).unwrap();
        assert!(fire_all(&mut wheel, 4_999).is_empty());
        assert_eq!(fire_all(&mut wheel, 5_000), [(5_000, 1)]);
    }

    #[test]
    fn cascade_keeps_insertion_order_for_equal_deadlines() {
        let mut wheel: TimerWheel<u32, 8> = TimerWheel::new();
        wheel.insert(1_000, 1).unwrap();
        let _ = fire_all(&mut wheel, 990);
        wheel.insert(1_000, 2).unwrap();
        wheel.insert(999, 0).unwrap();
        assert_eq!(
            fire_all(&mut wheel, 2_000),
            [(999, 0), (1_000, 1), (1_000, 2)]
        );
    }

    #[test]
    fn past_deadline_inserted_after_expiry_fires_in_deadline_order() {
        let mut wheel: TimerWheel<u32, 8> = TimerWheel::new();
        let _ = fire_all(&mut wheel, 100);
        wheel.insert(50, 1).unwrap();
        wheel.insert(30, 2).unwrap();
        wheel.insert(50, 3).unwrap();
        assert_eq!(fire_all(&mut wheel, 100), [(30, 2), (50, 1), (50, 3)]);
    }

    #[test]
    fn time_going_backwards_fires_nothing_new() {
        let mut wheel: TimerWheel<u32, 8> = TimerWheel::new();
        let _ = fire_all(&mut wheel, 1_000);
        wheel.insert(900, 1).unwrap();
        assert!(fire_all(&mut wheel, 800).is_empty());
        assert_eq!(fire_all(&mut wheel, 900), [(900, 1)]);
    }

    #[test]
    fn deadlines_near_max_fire_at_max() {
        let mut wheel: TimerWheel<u32, 8> = TimerWheel::new();
        wheel.insert(u64::MAX, 2).unwrap();
        wheel.insert(u64::MAX - 1, 1).unwrap();
        assert_eq!(wheel.next_deadline(), Some(15 << 60));
        assert!(fire_all(&mut wheel, u64::MAX - 2).is_empty());
        assert_eq!(
            fire_all(&mut wheel, u64::MAX),
            [(u64::MAX - 1, 1), (u64::MAX, 2)]
        );
    }

    #[test]
    fn next_deadline_is_exact_within_level_zero() {
        let mut wheel: TimerWheel<u32, 8> = TimerWheel::new();
        wheel.insert(40, 1).unwrap();
        wheel.insert(7_000, 2).unwrap();
        assert_eq!(wheel.next_deadline(), Some(40));
        let _ = fire_all(&mut wheel, 40);
        // 7000 lives on level 2 (slot of width 4096 starting at 4096).
        assert_eq!(wheel.next_deadline(), Some(4_096));
        let _ = fire_all(&mut wheel, 4_096);
        assert_eq!(wheel.next_deadline(), Some(6_976));
        let _ = fire_all(&mut wheel, 6_976);
        assert_eq!(wheel.next_deadline(), Some(7_000));
    }

    #[test]
    fn reschedule_of_due_timer_moves_it_back_into_the_wheel() {
        let mut wheel: TimerWheel<u32, 8> = TimerWheel::new();
        let a = wheel.insert(10, 1).unwrap();
        wheel.insert(10, 2).unwrap();
        let first = wheel.expire(10, 0, |_| {});
        assert!(first.more_due);
        wheel.reschedule(a, 500).unwrap();
        assert_eq!(fire_all(&mut wheel, 10), [(10, 2)]);
        assert_eq!(fire_all(&mut wheel, 500), [(500, 1)]);
    }

    #[test]
    fn drain_yields_due_and_filed_timers_once() {
        let mut wheel: TimerWheel<u32, 8> = TimerWheel::new();
        for (i, d) in [5u64, 70, 5_000, 1 << 40, 3].into_iter().enumerate() {
            wheel.insert(d, i as u32).unwrap();
        }
        let _ = wheel.expire(4, 0, |_| {});
        let mut values: Vec<u32> = wheel.drain().map(|e| e.value).collect();
        values.sort_unstable();
        assert_eq!(values, [0, 1, 2, 3, 4]);
        assert!(wheel.is_empty());
        assert_eq!(wheel.next_deadline(), None);
    }

    /// A million timers on storage the caller owns: the wheel itself is small, so it is made
    /// (and filled, and emptied) on a thread with a 2 MiB stack even in a debug build, where an
    /// inline `TimerWheel<u32, 1_000_000>` (24 MB) could not even be moved.
    #[test]
    fn million_timer_wheel_on_a_slice_runs_on_a_2_mib_stack() {
        const TIMERS: u32 = 1_000_000;
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let mut slots: Vec<WheelSlot<u32>> =
                    (0..TIMERS).map(|_| WheelSlot::new()).collect();
                let mut wheel = TimerWheelOn::with_storage(&mut slots[..]);
                assert!(core::mem::size_of_val(&wheel) < 4096);
                assert_eq!(wheel.capacity(), TIMERS as usize);
                for i in 0..TIMERS {
                    wheel.insert(u64::from(i % 5_000) * 7 + 1, i).unwrap();
                }
                assert!(wheel.is_full());
                assert_eq!(wheel.insert(1, 0), Err(Full(0)));
                let mut last = (0, 0);
                let sweep = wheel.expire(u64::MAX, usize::MAX, |e| {
                    assert!((e.deadline, e.value) > last, "out of order");
                    last = (e.deadline, e.value);
                });
                assert_eq!((sweep.fired, sweep.more_due), (TIMERS as usize, false));
                assert!(wheel.is_empty());
            })
            .expect("spawn a thread with a 2 MiB stack")
            .join()
            .expect("the wheel fit");
    }

    #[test]
    fn slice_and_inline_wheels_fire_the_same_timers() {
        let mut slots: Vec<WheelSlot<u32>> = (0..64).map(|_| WheelSlot::new()).collect();
        let mut on_slice = TimerWheelOn::with_storage(&mut slots[..]);
        let mut inline: TimerWheel<u32, 64> = TimerWheel::new();
        for i in 0..64u32 {
            let deadline = u64::from(i.wrapping_mul(2_654_435_761) % 100_000);
            on_slice.insert(deadline, i).unwrap();
            inline.insert(deadline, i).unwrap();
        }
        for now in [0, 10, 5_000, 70_000, u64::MAX] {
            assert_eq!(fire_all(&mut on_slice, now), fire_all(&mut inline, now));
        }
        assert!(on_slice.is_empty() && inline.is_empty());
    }

    #[test]
    fn storage_handed_back_is_reusable() {
        let slots: Vec<WheelSlot<u32>> = (0..2).map(|_| WheelSlot::new()).collect();
        let mut wheel = TimerWheelOn::with_storage(slots);
        let stale = wheel.insert(5, 1).unwrap();
        let slots = wheel.into_storage();
        let mut wheel = TimerWheelOn::with_storage(slots);
        assert!(wheel.is_empty());
        assert_eq!(wheel.cancel(stale), Err(StaleTimer));
        wheel.insert(1, 2).unwrap();
        wheel.insert(2, 3).unwrap();
        assert!(wheel.is_full());
    }

    #[test]
    fn slot_size_is_24_bytes_for_u32() {
        assert_eq!(core::mem::size_of::<WheelSlot<u32>>(), 24);
    }
}
