//! A hierarchical timing wheel over the whole `u64` tick range.

use crate::arena::{Arena, Slot, NIL};
use crate::linked::{linked_slot, Link, LinkedNode};
use crate::list::{Links, List};
use crate::{Expired, Full, StaleTimer, Storage, Tick, TimerId, TimerQueue};

/// Slots per level; each level has a `u64` occupancy bitmap.
pub const SLOTS: usize = 64;

/// Number of levels: 11 × 6 bits covers all 64 bits of a [`Tick`], so no overflow store.
pub const LEVELS: usize = 11;

const SLOT_BITS: u32 = SLOTS.trailing_zeros();
const SLOT_MASK: u64 = SLOTS as u64 - 1;

/// Lanes per slot, by level, as a power of two: how many lists one slot's timers are spread
/// over.
///
/// Cascading a slot walks its lists, and each step of a walk must load a node to learn the next
/// one: with one list per slot, a million timers cost one cache miss after another. A slot of
/// four lists, walked in turn, keeps four misses in flight. A timer's lane is the top bits of its
/// deadline's digit on the next finer level: timers with one deadline share one list and stay
/// in arrival order, and a cascade fills each finer slot from one lane, in that lane's order
/// (which keeps a list walked in order of its nodes' places in memory when they were allocated in
/// order, as a fresh wheel's are). Measured: at a million timers, cascades and late polls about
/// a third faster; at 100,000 (all in cache) the same to within a few percent. Level 0 needs
/// one lane (a level-0 slot holds one deadline); levels 1–3 (deadlines up to 2^24 ticks ahead,
/// where nearly every timer lives) get four; the coarse levels one, to keep the wheel small for
/// a board (5.1 KiB of list heads, against 2.8 KiB for one lane everywhere).
const LANE_BITS: [u32; LEVELS] = [0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0];

/// The most lanes any slot has.
const MAX_LANES: usize = 4;

/// A slot of at most this many timers, all due, goes straight to the due list in deadline order
/// rather than cascading to finer levels: a late poll then visits a sparse slot once, not once
/// per level below it.
const SHORTCUT: usize = 8;

/// Where each level's list heads start in [`TimerWheelOn`]'s one array of them.
const FIRST_HEAD: [usize; LEVELS + 1] = {
    let mut first = [0; LEVELS + 1];
    let mut level = 0;
    while level < LEVELS {
        assert!(1 << LANE_BITS[level] <= MAX_LANES);
        first[level + 1] = first[level] + (SLOTS << LANE_BITS[level]);
        level += 1;
    }
    first
};

/// List heads in all levels.
const HEADS: usize = FIRST_HEAD[LEVELS];

/// Where one level keeps its lists in the head array.
#[derive(Clone, Copy)]
struct Geometry {
    /// Its first list.
    first: usize,
    /// A timer due at `when` is on list `first + ((when >> shift) & mask)`: its slot's digit
    /// and, below it, the bits that pick its lane.
    shift: u32,
    mask: u64,
    lane_bits: u32,
}

/// Each level's [`Geometry`], padded to 16 so that `GEOMETRY[level & 15]` needs no bounds check.
const GEOMETRY: [Geometry; 16] = {
    let mut geometry = [Geometry {
        first: 0,
        shift: 0,
        mask: 0,
        lane_bits: 0,
    }; 16];
    let mut level = 0;
    while level < LEVELS {
        let lane_bits = LANE_BITS[level];
        geometry[level] = Geometry {
            first: FIRST_HEAD[level],
            shift: level as u32 * SLOT_BITS - lane_bits,
            mask: (SLOT_MASK << lane_bits) | ((1 << lane_bits) - 1),
            lane_bits,
        };
        level += 1;
    }
    geometry
};

/// The due list's place in the head array, after every level's.
const DUE: usize = HEADS;

/// The level a timer due at `when` belongs on, seen from `elapsed` (`when > elapsed`): the level
/// of the highest bit in which the two differ.
#[inline]
fn level_for(elapsed: Tick, when: Tick) -> usize {
    let masked = (elapsed ^ when) | SLOT_MASK;
    let significant = 63 - masked.leading_zeros();
    (significant / SLOT_BITS) as usize
}

/// The earliest occupied slot of the wheel, and the tick at which it starts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Expiration {
    level: usize,
    slot: usize,
    /// The first tick the slot covers: no timer in it is due earlier.
    start: Tick,
}

/// One level: a bitmap of its non-empty slots. Its 64 slots' lists (each slot `2^LANE_BITS`
/// lists of timers in arrival order, lane by lane) live in the wheel's one head array, where
/// [`list`](Self::list) and [`lists`](Self::lists) find them.
struct Level {
    occupied: u64,
}

impl Level {
    /// An empty level: all zero bytes.
    const EMPTY: Self = Self { occupied: 0 };

    /// The list, in the wheel's head array, of a timer due at `when` on level `level`, and its
    /// slot there.
    #[inline]
    fn list(level: usize, when: Tick) -> (usize, usize) {
        let geometry = GEOMETRY[level & 15];
        let within = ((when >> geometry.shift) & geometry.mask) as usize;
        (geometry.first + within, within >> geometry.lane_bits)
    }

    /// The lists of `slot` of level `level`, in the wheel's head array.
    #[inline]
    fn lists(level: usize, slot: usize) -> core::ops::Range<usize> {
        let geometry = GEOMETRY[level & 15];
        let first = geometry.first + (slot << geometry.lane_bits);
        first..first + (1 << geometry.lane_bits)
    }

    #[inline]
    fn occupy(&mut self, slot: usize) {
        self.occupied |= 1 << slot;
    }

    /// Marks `slot` (of level `level`) empty if its lists in `heads` are.
    #[inline]
    fn vacate_if_empty(&mut self, heads: &[List], level: usize, slot: usize) {
        if heads[Self::lists(level, slot)].iter().all(List::is_empty) {
            self.occupied &= !(1 << slot);
        }
    }

    /// Takes every timer in `slot` (of level `level`), lane by lane, leaving it empty.
    #[inline]
    fn take_slot(&mut self, heads: &mut [List], level: usize, slot: usize) -> [List; MAX_LANES] {
        self.occupied &= !(1 << slot);
        let mut taken = [List::EMPTY; MAX_LANES];
        for (to, from) in taken.iter_mut().zip(&mut heads[Self::lists(level, slot)]) {
            *to = from.take();
        }
        taken
    }

    /// Removes some timer from the level (for draining), if it holds any.
    fn pop_any(
        &mut self,
        heads: &mut [List],
        nodes: &mut (impl Links + ?Sized),
        level: usize,
    ) -> Option<u32> {
        if self.occupied == 0 {
            return None;
        }
        let slot = self.occupied.trailing_zeros() as usize;
        let index = heads[Self::lists(level, slot)]
            .iter_mut()
            .find_map(|list| list.pop_front(nodes))?;
        self.vacate_if_empty(heads, level, slot);
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
        let mut start = base | (u64::from(slot) << shift);
        if slot < now_slot {
            // Not reachable while the filing invariant holds; stay safe regardless.
            start = match 1u64.checked_shl(span_bits) {
                Some(span) => start.saturating_add(span),
                None => Tick::MAX,
            };
        }
        Some(Expiration {
            level,
            slot: slot as usize,
            start,
        })
    }
}

/// The lists of a slot just taken, walked together: one node from each in turn, so that the
/// loads that find each list's next node overlap. Only the non-empty lists are kept, so a slot
/// whose timers share one lane walks as one list.
struct Walks {
    /// Each list's next node.
    at: [u32; MAX_LANES],
    /// Each list's last node (its tail).
    last: [u32; MAX_LANES],
    /// Lists not yet walked to the end: the first `len` of `at` and `last`.
    len: usize,
    /// Which of them gives the next node.
    turn: usize,
}

impl Walks {
    fn new(taken: &[List; MAX_LANES], links: &(impl Links + ?Sized)) -> Self {
        let mut walks = Self {
            at: [NIL; MAX_LANES],
            last: [NIL; MAX_LANES],
            len: 0,
            turn: 0,
        };
        for list in taken {
            if let Some(tail) = list.tail() {
                walks.at[walks.len] = links.next(tail);
                walks.last[walks.len] = tail;
                walks.len += 1;
            }
        }
        walks
    }

    /// The next node, its successor already read: the caller may relink it at once.
    #[inline]
    fn next(&mut self, links: &(impl Links + ?Sized)) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        if self.turn >= self.len {
            self.turn = 0;
        }
        let turn = self.turn;
        let index = self.at[turn];
        if index == self.last[turn] {
            // This list is done: the last one takes its place.
            self.len -= 1;
            self.at[turn] = self.at[self.len];
            self.last[turn] = self.last[self.len];
        } else {
            self.at[turn] = links.next(index);
            self.turn += 1;
        }
        Some(index)
    }

    /// The next node of every list, while all [`MAX_LANES`] lists have more than one node
    /// left: the common case of a full slot, in straight-line code.
    #[inline]
    fn next_of_each(&mut self, links: &(impl Links + ?Sized)) -> Option<[u32; MAX_LANES]> {
        let [a, b, c, d] = self.at;
        let [la, lb, lc, ld] = self.last;
        // One branch, not four: `|` on `bool`s does not short-circuit.
        if (self.len < MAX_LANES) | (a == la) | (b == lb) | (c == lc) | (d == ld) {
            return None;
        }
        self.at = [links.next(a), links.next(b), links.next(c), links.next(d)];
        Some([a, b, c, d])
    }

    /// The latest deadline among the nodes still to walk if they are at most [`SHORTCUT`], all
    /// due at `now`.
    fn all_due(&self, links: &(impl Links + ?Sized), now: Tick) -> Option<Tick> {
        let mut count = 0;
        let mut latest = 0;
        for (&first, &last) in self.at.iter().zip(&self.last).take(self.len) {
            let mut at = first;
            loop {
                let deadline = links.key(at);
                count += 1;
                if deadline > now || count > SHORTCUT {
                    return None;
                }
                latest = latest.max(deadline);
                if at == last {
                    break;
                }
                at = links.next(at);
            }
        }
        Some(latest)
    }
}

/// Where a pending timer is filed: its list in the wheel's head array, and its level and slot
/// (`level == LEVELS` for the due list, [`DUE`]).
struct Home {
    list: usize,
    level: usize,
    slot: usize,
}

/// One timer's storage in a [`TimerWheelOn`]: 24 bytes for a `u32` value.
///
/// An inline [`TimerWheel<T, N>`] holds `N` of them; for a wheel sized at run time, make a slice
/// of them (`WheelSlot::new()` is an empty one) and hand it to
/// [`TimerWheelOn::with_storage`].
pub struct WheelSlot<T> {
    link: Link,
    slot: Slot<LinkedNode<T, ()>>,
}

linked_slot!(WheelSlot, ());

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
/// wheel's `elapsed` time (the last `now` it expired up to). When time reaches a coarse slot the
/// whole slot is taken and its timers re-filed on finer levels ("cascading"); a timer cascades at
/// most 10 times in its life, usually 0–3. The next slot is found from the bitmaps with
/// `rotate_right` and `trailing_zeros`, so an expiry after a long pause costs work proportional
/// to the timers and occupied slots it meets, never to the ticks that passed; and a slot of a few
/// timers that are all due goes straight to the due list instead of cascading level by level.
///
/// Built for memory locality at a million timers, where every node of a list is a cache miss:
/// on levels 1–3 each slot is four lists ("lanes", by the top two bits of the slot's next finer
/// digit), and a cascade walks the four in step, so four misses overlap instead of following
/// one another. All timers with one deadline share one list, in arrival order, so first-in
/// first-out among equal deadlines holds through every cascade.
///
/// [`reschedule`](TimerQueue::reschedule) re-files eagerly: unlink and relink, O(1). (Lazy
/// re-filing, as tokio does, would let a moved timer overtake or fall behind timers with its new
/// deadline, breaking insertion order for equal deadlines.)
///
/// Memory: 24 bytes per slot for a `u32` value, plus 5.2 KiB of list heads and bookkeeping.
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
    /// Every slot's lists, level by level (level `l` from `FIRST_HEAD[l]`), lane by lane; then
    /// the due list: timers with deadline `<= elapsed`, in deadline order, waiting to be handed
    /// out.
    heads: [List; HEADS + 1],
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
            heads: [List::EMPTY; HEADS + 1],
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
            heads: [List::EMPTY; HEADS + 1],
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

    #[inline]
    fn home(&self, deadline: Tick) -> Home {
        if deadline <= self.elapsed {
            Home {
                list: DUE,
                level: LEVELS,
                slot: 0,
            }
        } else {
            let level = level_for(self.elapsed, deadline);
            let (list, slot) = Level::list(level, deadline);
            Home { list, level, slot }
        }
    }

    #[inline]
    fn file(&mut self, index: u32, deadline: Tick) {
        let Home { list, level, slot } = self.home(deadline);
        let cells = self.nodes.cells_mut();
        if level == LEVELS {
            self.heads[DUE].insert_sorted(cells, index);
        } else {
            self.heads[list].push_back(cells, index);
            self.levels[level].occupy(slot);
            // The slot starts at the deadline with the bits below this level cleared.
            let start = deadline & !((1u64 << (level as u32 * SLOT_BITS)) - 1);
            self.check_from = self.check_from.min(start);
        }
    }

    #[inline]
    fn unfile(&mut self, index: u32, deadline: Tick) {
        let Home { list, level, slot } = self.home(deadline);
        self.heads[list].unlink(self.nodes.cells_mut(), index);
        if level < LEVELS && self.heads[list].is_empty() {
            self.levels[level].vacate_if_empty(&self.heads, level, slot);
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
    ///
    /// The slot's lanes are walked in turn, one node from each, so that the loads that find each
    /// lane's next node are independent of one another and overlap. Timers with one deadline
    /// share a lane, so they reach their new lists in the order they had.
    fn process(&mut self, expiration: Expiration, now: Tick) {
        let Expiration { level, slot, start } = expiration;
        self.elapsed = start;
        let taken = self.levels[level].take_slot(&mut self.heads, level, slot);
        if level == 0 && self.heads[DUE].is_empty() {
            // Every timer in a level-0 slot (one lane) is due exactly at its start, in order.
            self.heads[DUE] = taken[0];
            return;
        }
        let mut walks = Walks::new(&taken, self.nodes.cells());
        if let Some(latest) = walks.all_due(self.nodes.cells(), now) {
            // A few timers, all due at `now`: sorted straight onto the due list. Every finer
            // level is empty (this slot was the earliest occupied one), so time may move to the
            // latest of them.
            while let Some(index) = walks.next(self.nodes.cells()) {
                self.heads[DUE].insert_sorted(self.nodes.cells_mut(), index);
            }
            self.elapsed = latest;
            return;
        }
        while let Some(group) = walks.next_of_each(self.nodes.cells()) {
            let cells = self.nodes.cells();
            let deadlines = group.map(|index| cells.key(index));
            self.file(group[0], deadlines[0]);
            self.file(group[1], deadlines[1]);
            self.file(group[2], deadlines[2]);
            self.file(group[3], deadlines[3]);
        }
        while let Some(index) = walks.next(self.nodes.cells()) {
            let deadline = self.nodes.key(index);
            self.file(index, deadline);
        }
    }

    /// Cascades until the earliest timer due at `now` heads the due list; returns it.
    fn advance(&mut self, now: Tick) -> Option<u32> {
        loop {
            if let Some(head) = self.heads[DUE].head(self.nodes.cells()) {
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
                Some(next) if next.start <= now => self.process(next, now),
                next => {
                    self.check_from = next.map_or(Tick::MAX, |next| next.start);
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
        // One look at the node: the lists below touch only links, and filing onto the due list
        // reads the new deadline.
        let node = self.nodes.live_mut(id).ok_or(StaleTimer)?;
        let old = core::mem::replace(&mut node.deadline, deadline);
        let index = id.slot();
        self.unfile(index, old);
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
        match self.heads[DUE].head(self.nodes.cells()) {
            Some(head) => Some(self.nodes.key(head)),
            None => self.next_expiration().map(|next| next.start),
        }
    }

    fn pop_expired(&mut self, now: Tick) -> Option<Expired<T>> {
        let index = self.advance(now)?;
        self.heads[DUE].unlink(self.nodes.cells_mut(), index);
        self.nodes.take_expired(index)
    }

    fn has_expired(&mut self, now: Tick) -> bool {
        self.advance(now).is_some()
    }

    fn pop_any(&mut self) -> Option<Expired<T>> {
        let index = match self.heads[DUE].pop_front(self.nodes.cells_mut()) {
            Some(index) => index,
            None => {
                let cells = self.nodes.cells_mut();
                let heads = &mut self.heads;
                self.levels
                    .iter_mut()
                    .enumerate()
                    .find_map(|(number, level)| level.pop_any(heads, &mut *cells, number))?
            }
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
    fn cascade_through_four_lanes_keeps_insertion_order_for_equal_deadlines() {
        // 64 deadlines spread over every lane of the level-2 slot [4_096, 8_192), each
        // inserted three times, interleaved.
        let mut wheel: TimerWheel<u32, 256> = TimerWheel::new();
        for round in 0..3 {
            for offset in 0..64 {
                let deadline = 4_096 + (offset * 37 % 64) * 61;
                wheel.insert(deadline, round * 64 + offset as u32).unwrap();
            }
        }
        let fired = fire_all(&mut wheel, 10_000);
        assert_eq!(fired.len(), 192);
        for pair in fired.windows(2) {
            let ((d0, v0), (d1, v1)) = (pair[0], pair[1]);
            assert!(d0 < d1 || (d0 == d1 && v0 < v1), "{pair:?}");
        }
    }

    #[test]
    fn late_poll_over_sparse_slots_fires_in_order_and_leaves_time_consistent() {
        let mut wheel: TimerWheel<u32, 16> = TimerWheel::new();
        // One level-1 slot [4_096, 4_160) with three timers (two share a deadline), one timer
        // far beyond.
        wheel.insert(4_150, 1).unwrap();
        wheel.insert(4_100, 2).unwrap();
        wheel.insert(4_150, 3).unwrap();
        wheel.insert(9_000, 4).unwrap();
        assert_eq!(
            fire_all(&mut wheel, 4_200),
            [(4_100, 2), (4_150, 1), (4_150, 3)]
        );
        // A timer inserted after the sweep, behind `now`, still fires, and nothing fires early.
        wheel.insert(4_180, 5).unwrap();
        wheel.insert(4_300, 6).unwrap();
        assert_eq!(fire_all(&mut wheel, 4_250), [(4_180, 5)]);
        assert_eq!(fire_all(&mut wheel, 9_000), [(4_300, 6), (9_000, 4)]);
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
                assert!(core::mem::size_of_val(&wheel) < 6 * 1024);
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
