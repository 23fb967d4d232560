//! Timers gathered from one wheel slot and put in deadline order, for a slot that falls due
//! whole: a late poll files them on the due list in one go, sorted here, rather than cascading
//! each through the finer levels one slot at a time.

use crate::Tick;

/// The most timers a slot may hold to be sorted whole: enough to take the slots a late poll
/// meets one level below the one it fills (about 70 timers a slot at 1,000 timers, 110 at
/// 100,000), and small enough (1 KiB) for a board's stack.
pub(super) const BATCH: usize = 128;

/// Bits of a key that hold the timer's place in the order it was added.
const PLACE_BITS: u32 = BATCH.trailing_zeros();
/// Bits of a key that hold the deadline's offset from the slot's start: every slot up to level
/// 4 (2^24 ticks wide) fits.
const OFFSET_BITS: u32 = Tick::BITS - u32::BITS - PLACE_BITS;

/// Up to [`BATCH`] timers of one slot, each packed in one `u64` key: its deadline's offset from
/// the slot's start, then its place in the order added, then its slot number. Sorting the keys
/// as plain integers orders the timers by deadline, equal deadlines in the order added, with no
/// comparison closure and no second array to move.
pub(super) struct Batch {
    keys: [u64; BATCH],
    len: usize,
    /// The slot's first tick: no deadline in the batch is earlier.
    start: Tick,
}

impl Batch {
    /// An empty batch for a slot whose first tick is `start`.
    pub(super) const fn new(start: Tick) -> Self {
        Self {
            keys: [0; BATCH],
            len: 0,
            start,
        }
    }

    /// Empties the batch for a slot whose first tick is `start`.
    #[inline]
    pub(super) fn restart(&mut self, start: Tick) {
        self.len = 0;
        self.start = start;
    }

    /// How many timers the batch holds.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The `i`th timer as `(index, deadline)`, in the batch's current order.
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<(u32, Tick)> {
        self.keys[..self.len].get(i).map(|&key| self.unpack(key))
    }

    /// Adds timer `index`, due at `deadline`; `false` (and nothing added) when the batch is full
    /// or the deadline is before the slot's start or too far past it to pack.
    #[inline]
    pub(super) fn push(&mut self, index: u32, deadline: Tick) -> bool {
        let offset = deadline.wrapping_sub(self.start);
        match self.keys.get_mut(self.len) {
            Some(key) if offset >> OFFSET_BITS == 0 => {
                *key = offset << (u32::BITS + PLACE_BITS)
                    | (self.len as u64) << u32::BITS
                    | u64::from(index);
                self.len += 1;
                true
            }
            _ => false,
        }
    }

    /// Sorts by deadline, keeping timers with equal deadlines in the order they were added
    /// (their keys differ in the place bits, so an unstable sort of the keys is stable).
    #[inline]
    pub(super) fn sort(&mut self) {
        self.keys[..self.len].sort_unstable();
    }

    /// The timers as `(index, deadline)`, in their current order.
    #[inline]
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, Tick)> + '_ {
        self.keys[..self.len].iter().map(|&key| self.unpack(key))
    }

    #[inline]
    fn unpack(&self, key: u64) -> (u32, Tick) {
        // Truncation keeps the slot number, the key's low 32 bits.
        (key as u32, self.start + (key >> (u32::BITS + PLACE_BITS)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn sort_is_by_deadline_and_stable() {
        let mut batch = Batch::new(1_000);
        for (index, deadline) in [(1, 1_050), (2, 1_030), (3, 1_050), (4, 1_010), (5, 1_030)] {
            assert!(batch.push(index, deadline));
        }
        assert!(batch.push(u32::MAX, 1_050));
        batch.sort();
        let order: Vec<(u32, Tick)> = batch.iter().collect();
        assert_eq!(
            order,
            [
                (4, 1_010),
                (2, 1_030),
                (5, 1_030),
                (1, 1_050),
                (3, 1_050),
                (u32::MAX, 1_050)
            ]
        );
    }

    #[test]
    fn full_batch_refuses_one_more() {
        let mut batch = Batch::new(0);
        for index in 0..BATCH as u32 {
            assert!(batch.push(index, Tick::from(BATCH as u32 - index)));
        }
        assert!(!batch.push(99, 0));
        batch.sort();
        assert!(batch.iter().map(|(_, d)| d).eq(1..=BATCH as Tick));
    }

    #[test]
    fn deadlines_outside_the_packable_range_are_refused() {
        let start = u64::MAX - (1 << 30);
        let mut batch = Batch::new(start);
        assert!(!batch.push(1, start - 1));
        assert!(!batch.push(2, start + (1 << OFFSET_BITS)));
        assert!(batch.push(3, start + (1 << OFFSET_BITS) - 1));
        assert!(batch.push(4, start));
        batch.sort();
        let order: Vec<(u32, Tick)> = batch.iter().collect();
        assert_eq!(order, [(4, start), (3, start + (1 << OFFSET_BITS) - 1)]);
    }
}
