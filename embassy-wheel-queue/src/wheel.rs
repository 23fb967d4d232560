//! The hierarchical timing wheel that [`IntegratedWheel`](crate::IntegratedWheel) links the
//! tasks' timers in: 13 levels of 32 slots, each slot a list threaded through the timers
//! themselves, so the wheel holds nothing but list heads and bitmaps, whatever the number of
//! tasks.
//!
//! | level | one slot spans (ticks) | the level spans (ticks) |
//! |------:|-----------------------:|------------------------:|
//! | 0     | 1                      | 32                      |
//! | 1     | 32                     | 1,024                   |
//! | 2     | 1,024                  | 32,768                  |
//! | 3     | 32,768                 | 1,048,576               |
//! | *l*   | 32^*l*                 | 32^(*l*+1)              |
//! | 12    | 2^60                   | 2^64 (every `u64`; 16 of its slots used) |
//!
//! A timer's level is the highest base-32 digit in which its deadline differs from `elapsed`,
//! its slot that digit of its deadline. Timers of a lower level are due before those of any
//! higher one, and within a level the slots are in deadline order, so the earliest timer is in
//! the first occupied slot of the lowest occupied level: two `trailing_zeros`. A level-0 slot
//! holds one deadline, so when that is where the earliest timer is, its deadline is the slot's.
//! Otherwise the slot spans many ticks and the earliest deadline in it is found by walking it
//! once; [`SlotMin`] remembers the answer until that slot loses that timer, so a coarse slot is
//! walked once, not at every expiry before it (a task ticking every few ticks beside many long
//! timeouts would otherwise walk them at every tick). When time reaches a coarse slot, its
//! timers go to their places seen from the new time (a timer moves at most once per level).
//!
//! While at most 16 timers are queued ([`FEW_MAX`]) they are not on the levels but on one list,
//! walked whole at each expiry: for so few that costs less than the levels' bookkeeping. They
//! spread over the levels when a 17th comes, and gather on the list again once fewer than 8
//! are left after an expiry.
//!
//! Why 32 slots: 416 list heads, 1,664 bytes on a 32-bit board (3,328 on a 64-bit host), cover
//! the whole `u64` range; a timer up to 1,024 ticks ahead sits on level 0 or 1, so it moves at
//! most once before it fires. 16 slots (1 KiB) cost a few percent more instructions per
//! operation in the embassy queue bench at 8 and 64 tasks, 64 slots (2.8 KiB) saved about one
//! percent.

use crate::item::Node;

/// Bits of the deadline per level: one hexadecimal digit.
const SLOT_BITS: u32 = 5;

/// Slots per level.
pub(crate) const SLOTS: usize = 1 << SLOT_BITS;

/// Levels: enough digits for every `u64` deadline, so there is no overflow list.
pub(crate) const LEVELS: usize = 64_usize.div_ceil(SLOT_BITS as usize);

/// A level's occupied slots.
type Bitmap = u32;

/// The digits above each level's: `elapsed & ABOVE[level]` starts the span of the level.
const ABOVE: [u64; LEVELS] = {
    let mut above = [0; LEVELS];
    let mut level = 0;
    while level < LEVELS {
        let bits = (level as u32 + 1) * SLOT_BITS;
        above[level] = if bits >= 64 { 0 } else { u64::MAX << bits };
        level += 1;
    }
    above
};

const SLOT_MASK: u64 = SLOTS as u64 - 1;

/// The level of a timer placed at `place` (at or after `elapsed`): that of the highest digit in
/// which the two differ (level 0 when they differ in none).
#[inline]
fn level_for(elapsed: u64, place: u64) -> usize {
    let masked = (elapsed ^ place) | SLOT_MASK;
    ((63 - masked.leading_zeros()) / SLOT_BITS) as usize
}

/// A timer's slot on `level`: its deadline's digit there.
#[inline]
fn slot_for(place: u64, level: usize) -> usize {
    ((place >> (level as u32 * SLOT_BITS)) & SLOT_MASK) as usize
}

/// A list of timers, linked through the timers. Push and remove are O(1).
struct List {
    first: Option<Node>,
}

impl List {
    const EMPTY: Self = Self { first: None };

    #[inline]
    fn push(&mut self, node: Node) {
        node.set_prev(None);
        node.set_next(self.first);
        if let Some(first) = self.first {
            first.set_prev(Some(node));
        }
        self.first = Some(node);
    }

    /// Unlinks `node`, which is on this list. Returns whether the list is then empty.
    #[inline]
    fn remove(&mut self, node: Node) -> bool {
        let (prev, next) = (node.prev(), node.next());
        match prev {
            Some(prev) => prev.set_next(next),
            None => self.first = next,
        }
        if let Some(next) = next {
            next.set_prev(prev);
        }
        self.first.is_none()
    }
}

/// One level: its slots' lists and a bitmap of the non-empty ones.
struct Level {
    occupied: Bitmap,
    slots: [List; SLOTS],
}

impl Level {
    const EMPTY: Self = Self {
        occupied: 0,
        slots: [List::EMPTY; SLOTS],
    };

    #[inline]
    fn push(&mut self, slot: usize, node: Node) {
        self.slots[slot & (SLOTS - 1)].push(node);
        self.occupied |= 1 << (slot & (SLOTS - 1));
    }

    /// Unlinks `node` from `slot`. Returns whether the level is then empty.
    #[inline]
    fn remove(&mut self, slot: usize, node: Node) -> bool {
        if self.slots[slot & (SLOTS - 1)].remove(node) {
            self.occupied &= !(1 << (slot & (SLOTS - 1)));
        }
        self.occupied == 0
    }

    /// Empties `slot`; returns its first timer (the rest follow through `next`).
    #[inline]
    fn take(&mut self, slot: usize) -> Option<Node> {
        self.occupied &= !(1 << (slot & (SLOTS - 1)));
        self.slots[slot & (SLOTS - 1)].first.take()
    }

    #[inline]
    fn first(&self, slot: usize) -> Option<Node> {
        self.slots[slot & (SLOTS - 1)].first
    }
}

/// The first occupied slot of the wheel: where the earliest timer is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Expiration {
    level: usize,
    slot: usize,
    /// The first tick the slot spans: no timer in it is due earlier.
    start: u64,
}

/// The earliest deadline in one slot above level 0, found by walking it; kept while that
/// slot's timers only grow in number.
///
/// All zero bytes: nothing known.
#[derive(Clone, Copy)]
struct SlotMin {
    /// The slot, as `level << 8 | slot`; 0 (level 0, which needs no walk): nothing known.
    key: u16,
    deadline: u64,
}

impl SlotMin {
    const UNKNOWN: Self = Self {
        key: 0,
        deadline: 0,
    };

    #[inline]
    fn key(level: usize, slot: usize) -> u16 {
        ((level << 8) | slot) as u16
    }

    /// Whether this is the minimum of (`level`, `slot`), `level` above 0.
    #[inline]
    fn is(&self, level: usize, slot: usize) -> bool {
        self.key == Self::key(level, slot)
    }

    /// A timer due at `deadline` joined (`level`, `slot`).
    #[inline]
    fn joined(&mut self, level: usize, slot: usize, deadline: u64) {
        if self.is(level, slot) && deadline < self.deadline {
            self.deadline = deadline;
        }
    }

    /// A timer due at `deadline` left (`level`, `slot`): if it may have been the earliest, the
    /// slot must be walked again.
    #[inline]
    fn left(&mut self, level: usize, slot: usize, deadline: u64) {
        if self.is(level, slot) && deadline <= self.deadline {
            self.key = 0;
        }
    }
}

/// While at most this many timers are queued, they are kept on one list rather than on the
/// wheel: at each expiry the list is walked, which for so few costs less than the wheel's
/// bookkeeping (the embassy queue bench at 8 tasks: about a quarter fewer instructions per
/// operation). More, and they move to the wheel.
const FEW_MAX: u32 = 16;

/// Fewer than this many timers left after an expiry, and they move back to the list: apart
/// from [`FEW_MAX`], so that a count hovering near one bound does not move them to and fro.
const FEW_MIN: u32 = 8;

/// The wheel: timers on levels, each level a bitmap and 32 lists; or, while there are few
/// timers, one list.
pub(crate) struct Wheel {
    /// Where the wheel stands: every timer's level and slot are reckoned from it, and no timer
    /// is placed before it. The last `now` the wheel expired at (or a slot's start on the way).
    elapsed: u64,
    /// The earliest deadline queued, exactly; inverted (`!u64::MAX`, zero, when none), so that
    /// an empty wheel is all zero bytes.
    next_inverted: u64,
    /// Timers queued.
    count: u32,
    /// Whether the timers are on the wheel's levels; if not, they are all on `few`.
    on_levels: bool,
    /// All the timers while there are few (`!on_levels`).
    few: List,
    /// Bit `l`: level `l` has a timer.
    occupied_levels: u16,
    slot_min: SlotMin,
    levels: [Level; LEVELS],
}

impl Wheel {
    /// An empty wheel: all zero bytes, so a `static` of it goes to `.bss`.
    pub(crate) const fn new() -> Self {
        Self {
            elapsed: 0,
            next_inverted: 0,
            count: 0,
            on_levels: false,
            few: List::EMPTY,
            occupied_levels: 0,
            slot_min: SlotMin::UNKNOWN,
            levels: [Level::EMPTY; LEVELS],
        }
    }

    /// The earliest deadline queued (`u64::MAX`: none).
    #[inline]
    pub(crate) fn next(&self) -> u64 {
        !self.next_inverted
    }

    /// Where `node` (due at `deadline`) is or goes: its level and slot. A deadline already
    /// passed is placed at `elapsed`, in the slot taken first.
    #[inline]
    fn place(&self, deadline: u64) -> (usize, usize) {
        let place = deadline.max(self.elapsed);
        let level = level_for(self.elapsed, place);
        (level, slot_for(place, level))
    }

    /// Links `node`, which is not queued, for its deadline `deadline`.
    #[inline]
    pub(crate) fn insert(&mut self, node: Node, deadline: u64) {
        node.set_deadline(deadline);
        self.count += 1;
        if self.on_levels {
            self.link(node, deadline);
        } else {
            self.few.push(node);
            if self.count > FEW_MAX {
                self.spread();
            }
        }
        if deadline < self.next() {
            self.next_inverted = !deadline;
        }
    }

    #[inline]
    fn link(&mut self, node: Node, deadline: u64) {
        let (level, slot) = self.place(deadline);
        self.levels[level].push(slot, node);
        self.occupied_levels |= 1 << level;
        self.slot_min.joined(level, slot, deadline);
    }

    /// Unlinks `node`, which is queued here.
    #[inline]
    pub(crate) fn remove(&mut self, node: Node) {
        self.count -= 1;
        if !self.on_levels {
            self.few.remove(node);
            return;
        }
        let deadline = node.deadline();
        let (level, slot) = self.place(deadline);
        if self.levels[level].remove(slot, node) {
            self.occupied_levels &= !(1 << level);
        }
        self.slot_min.left(level, slot, deadline);
        // The earliest deadline stays a lower bound: a timer is only removed to be linked
        // again, earlier, which sets it.
    }

    /// Moves the timers from the list to the levels.
    #[cold]
    fn spread(&mut self) {
        self.on_levels = true;
        let mut timers = self.few.first.take();
        while let Some(node) = timers {
            timers = node.next();
            self.link(node, node.deadline());
        }
    }

    /// Moves the timers from the levels to the list.
    #[cold]
    fn gather(&mut self) {
        self.on_levels = false;
        let mut levels = self.occupied_levels;
        while levels != 0 {
            let level = &mut self.levels[levels.trailing_zeros() as usize];
            levels &= levels - 1;
            let mut slots = level.occupied;
            while slots != 0 {
                let mut timers = level.take(slots.trailing_zeros() as usize);
                slots &= slots - 1;
                while let Some(node) = timers {
                    timers = node.next();
                    self.few.push(node);
                }
            }
        }
        self.occupied_levels = 0;
        self.slot_min = SlotMin::UNKNOWN;
    }

    /// Wakes every timer on the list due at `now` and finds the next deadline: one walk.
    #[inline]
    fn expire_few(&mut self, now: u64, mut wake: impl FnMut(Node)) {
        let mut next = u64::MAX;
        let mut timers = self.few.first;
        while let Some(node) = timers {
            timers = node.next();
            let deadline = node.deadline();
            if deadline <= now {
                self.few.remove(node);
                self.count -= 1;
                wake(node);
            } else {
                next = next.min(deadline);
            }
        }
        self.elapsed = self.elapsed.max(now);
        self.next_inverted = !next;
    }

    /// The first occupied slot, if any.
    #[inline]
    fn first_slot(&self) -> Option<Expiration> {
        if self.occupied_levels == 0 {
            return None;
        }
        let level = self.occupied_levels.trailing_zeros() as usize;
        let slot = self.levels[level].occupied.trailing_zeros() as usize;
        Some(Expiration {
            level,
            slot,
            // The digits above this level are `elapsed`'s.
            start: (self.elapsed & ABOVE[level]) | (slot as u64) << (level as u32 * SLOT_BITS),
        })
    }

    /// Wakes every timer due at `now` (hands each to `wake`, to take its waker out), moves the
    /// timers of the slots time has reached to their places seen from `now`, and finds the next
    /// deadline.
    #[inline]
    pub(crate) fn expire(&mut self, now: u64, mut wake: impl FnMut(Node)) {
        if !self.on_levels {
            self.expire_few(now, wake);
            return;
        }
        // The timers of the slots taken that are not due yet: linked again once the wheel
        // stands at `now`, each straight to its finest level.
        let mut later = List::EMPTY;
        // Slots in deadline order, while they start at or before `now`.
        let first = loop {
            let Some(expiration) = self.first_slot() else {
                break None;
            };
            if expiration.start > now {
                break Some(expiration);
            }
            let level = &mut self.levels[expiration.level];
            let mut timers = level.take(expiration.slot);
            if level.occupied == 0 {
                self.occupied_levels &= !(1 << expiration.level);
            }
            if self.slot_min.is(expiration.level, expiration.slot) {
                self.slot_min.key = 0;
            }
            while let Some(node) = timers {
                timers = node.next();
                if node.deadline() <= now {
                    self.count -= 1;
                    wake(node);
                } else {
                    later.push(node);
                }
            }
        };
        // Every slot left starts after `now` (and `first` is the same slot seen from `now`),
        // so every timer in the wheel keeps its place.
        self.elapsed = self.elapsed.max(now);
        let first = if let Some(mut timers) = later.first {
            loop {
                let next = timers.next();
                self.link(timers, timers.deadline());
                match next {
                    Some(node) => timers = node,
                    None => break,
                }
            }
            self.first_slot()
        } else {
            first
        };
        self.next_inverted = !self.earliest(first);
        if self.count < FEW_MIN {
            self.gather();
        }
    }

    /// The earliest deadline queued, found from the first occupied slot, `first` (`u64::MAX`:
    /// none).
    #[inline]
    fn earliest(&mut self, first: Option<Expiration>) -> u64 {
        let Some(expiration) = first else {
            return u64::MAX;
        };
        if expiration.level == 0 {
            // A level-0 slot holds one deadline.
            return expiration.start;
        }
        if self.slot_min.is(expiration.level, expiration.slot) {
            return self.slot_min.deadline;
        }
        let mut earliest = u64::MAX;
        let mut timers = self.levels[expiration.level].first(expiration.slot);
        while let Some(node) = timers {
            earliest = earliest.min(node.deadline());
            timers = node.next();
        }
        self.slot_min = SlotMin {
            key: SlotMin::key(expiration.level, expiration.slot),
            deadline: earliest,
        };
        earliest
    }

    /// Unlinks every timer, handing each to `release` (with its waker still in it).
    pub(crate) fn clear(&mut self, mut release: impl FnMut(Node)) {
        let mut timers = self.few.first;
        while let Some(node) = timers {
            timers = node.next();
            release(node);
        }
        for level in &mut self.levels {
            for slot in 0..SLOTS {
                let mut timers = level.take(slot);
                while let Some(node) = timers {
                    timers = node.next();
                    release(node);
                }
            }
        }
        *self = Self::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_for_matches_the_level_table() {
        let slots = SLOTS as u64;
        assert_eq!(level_for(0, 0), 0);
        assert_eq!(level_for(0, slots - 1), 0);
        assert_eq!(level_for(0, slots), 1);
        assert_eq!(level_for(0, slots * slots - 1), 1);
        assert_eq!(level_for(0, slots * slots), 2);
        assert_eq!(level_for(slots + 1, 2 * slots - 1), 0);
        assert_eq!(level_for(slots + 1, 2 * slots), 1);
        assert_eq!(level_for(0, u64::MAX), LEVELS - 1);
        assert_eq!(level_for(u64::MAX - 1, u64::MAX), 0);
    }

    #[test]
    fn slot_for_is_the_digit_of_the_level() {
        let slots = SLOTS as u64;
        let place = 3 + 5 * slots + 7 * slots * slots;
        assert_eq!(slot_for(place, 0), 3);
        assert_eq!(slot_for(place, 1), 5);
        assert_eq!(slot_for(place, 2), 7);
        assert_eq!(slot_for(place, 3), 0);
        assert_eq!(
            slot_for(u64::MAX, LEVELS - 1),
            (u64::MAX >> (SLOT_BITS as usize * (LEVELS - 1))) as usize
        );
    }

    #[test]
    fn above_masks_keep_the_digits_above_each_level() {
        assert_eq!(ABOVE[0], !(SLOTS as u64 - 1));
        assert_eq!(ABOVE[LEVELS - 1], 0);
    }
}
