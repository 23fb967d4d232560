//! The wheel's geometry: which level and slot a deadline is filed under, and each level's bitmap
//! of occupied slots.

use crate::Tick;

/// Slots per level; each level has a `u64` occupancy bitmap.
pub const SLOTS: usize = 64;

/// Number of levels: 11 × 6 bits covers all 64 bits of a [`Tick`], so no overflow store.
pub const LEVELS: usize = 11;

pub(super) const SLOT_BITS: u32 = SLOTS.trailing_zeros();
const SLOT_MASK: u64 = SLOTS as u64 - 1;

/// Lists: one per slot of every level, then the due list.
pub(super) const LISTS: usize = LEVELS * SLOTS + 1;

/// The due list: timers with deadline `<= elapsed`, in deadline order, waiting to be handed out.
pub(super) const DUE: usize = LEVELS * SLOTS;

/// The level a timer due at `when` belongs on, seen from `elapsed` (`when > elapsed`): the level
/// of the highest bit in which the two differ.
#[inline]
pub(super) fn level_for(elapsed: Tick, when: Tick) -> usize {
    let masked = (elapsed ^ when) | SLOT_MASK;
    let significant = 63 - masked.leading_zeros();
    (significant / SLOT_BITS) as usize
}

/// The slot of level `level` that holds a timer due at `when`.
#[inline]
pub(super) fn slot_for(level: usize, when: Tick) -> usize {
    ((when >> (level as u32 * SLOT_BITS)) & SLOT_MASK) as usize
}

/// Whether `a` and `b` fall in the same level-`level` slot: for a timer filed on that level,
/// whether moving its deadline from one to the other keeps it on its list.
#[inline]
pub(super) fn same_slot(level: usize, a: Tick, b: Tick) -> bool {
    (a ^ b) >> (level as u32 * SLOT_BITS) == 0
}

/// The first tick of the level-`level` slot that holds `when`.
#[inline]
pub(super) fn slot_start(level: usize, when: Tick) -> Tick {
    when & !((1u64 << (level as u32 * SLOT_BITS)) - 1)
}

/// The slots whose bits are set in `bits`, lowest first.
pub(super) fn slots_in(mut bits: u64) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        if bits == 0 {
            return None;
        }
        let slot = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        Some(slot)
    })
}

/// The earliest occupied slot of the wheel, and the tick at which it starts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Expiration {
    pub(super) level: usize,
    pub(super) slot: usize,
    /// The first tick the slot covers: no timer in it is due earlier.
    pub(super) start: Tick,
}

impl Expiration {
    /// The list that holds the slot's timers.
    pub(super) fn list(&self) -> usize {
        self.level * SLOTS + self.slot
    }

    /// The last tick the slot covers.
    pub(super) fn end(&self) -> Tick {
        self.start | ((1u64 << (self.level as u32 * SLOT_BITS)) - 1)
    }
}

/// One level: a bitmap of its slots whose lists hold cells (live, or stale ones not yet
/// dropped; a slot of stale cells only costs one early wake-up).
#[derive(Clone, Copy)]
pub(super) struct Level {
    occupied: u64,
}

impl Level {
    /// An empty level: all zero bytes.
    pub(super) const EMPTY: Self = Self { occupied: 0 };

    #[inline]
    pub(super) fn occupy(&mut self, slot: usize) {
        self.occupied |= 1 << slot;
    }

    #[inline]
    pub(super) fn vacate(&mut self, slot: usize) {
        self.occupied &= !(1 << slot);
    }

    /// The occupied slots, lowest first.
    pub(super) fn occupied(&self) -> impl Iterator<Item = usize> {
        slots_in(self.occupied)
    }

    /// The first occupied slot at or after the one `elapsed` is in, as level number `level`.
    pub(super) fn next_expiration(&self, level: usize, elapsed: Tick) -> Option<Expiration> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn slot_start_clears_the_bits_below_the_level() {
        assert_eq!(slot_start(0, 4_321), 4_321);
        assert_eq!(slot_start(1, 4_321), 4_288);
        assert_eq!(slot_start(2, 4_321), 4_096);
        assert_eq!(slot_for(2, 4_321), 1);
        assert_eq!(slot_for(10, u64::MAX), 15);
    }

    #[test]
    fn same_slot_compares_the_bits_from_the_level_up() {
        assert!(same_slot(0, 70, 70));
        assert!(!same_slot(0, 70, 71));
        assert!(same_slot(2, 4_096, 8_191));
        assert!(!same_slot(2, 4_095, 4_096));
        assert!(same_slot(10, 1 << 60, (1 << 61) - 1));
        assert!(!same_slot(10, u64::MAX, 0));
    }

    #[test]
    fn occupied_slots_come_lowest_first() {
        let mut level = Level::EMPTY;
        for slot in [63, 0, 17] {
            level.occupy(slot);
        }
        level.vacate(17);
        assert!(level.occupied().eq([0, 63]));
    }
}
