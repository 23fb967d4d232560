//! A few timers gathered from one wheel slot and put in deadline order, for a slot that falls
//! due whole: a late poll files them on the due list in one go, sorted here, rather than
//! cascading each through the finer levels one slot at a time.

use crate::Tick;

/// The most timers a slot may hold to be sorted whole. Sorting is by insertion, so a timer
/// costs at most this many steps; small enough that the two arrays (384 bytes) sit on a
/// board's stack, large enough to take the sparse slots a late poll meets below the level it
/// fills.
pub(super) const BATCH: usize = 32;

/// Up to this many timers a linked slot is sorted straight into the due list: setting up a
/// batch costs more than the few steps their insertion takes.
pub(super) const FEW: usize = 4;

/// Up to [`BATCH`] timers, as their slot numbers and deadlines, in the order they were added.
pub(super) struct Batch {
    deadlines: [Tick; BATCH],
    indices: [u32; BATCH],
    len: usize,
}

impl Batch {
    pub(super) const fn new() -> Self {
        Self {
            deadlines: [0; BATCH],
            indices: [0; BATCH],
            len: 0,
        }
    }

    /// Adds timer `index`, due at `deadline`; `false` (and nothing added) when full.
    #[inline]
    pub(super) fn push(&mut self, index: u32, deadline: Tick) -> bool {
        match (
            self.deadlines.get_mut(self.len),
            self.indices.get_mut(self.len),
        ) {
            (Some(d), Some(i)) => {
                (*d, *i) = (deadline, index);
                self.len += 1;
                true
            }
            _ => false,
        }
    }

    /// Sorts by deadline, keeping timers with equal deadlines in the order they were added.
    #[inline(always)]
    pub(super) fn sort(&mut self) {
        for next in 1..self.len {
            let (deadline, index) = (self.deadlines[next], self.indices[next]);
            let mut at = next;
            // Strictly later ones move back: an equal deadline stays in front.
            while at > 0 && self.deadlines[at - 1] > deadline {
                self.deadlines[at] = self.deadlines[at - 1];
                self.indices[at] = self.indices[at - 1];
                at -= 1;
            }
            (self.deadlines[at], self.indices[at]) = (deadline, index);
        }
    }

    /// The timers as `(index, deadline)`, in their current order.
    #[inline]
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, Tick)> + '_ {
        self.indices[..self.len]
            .iter()
            .copied()
            .zip(self.deadlines[..self.len].iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn sort_is_by_deadline_and_stable() {
        let mut batch = Batch::new();
        for (index, deadline) in [(1, 50), (2, 30), (3, 50), (4, 10), (5, 30), (6, 50)] {
            assert!(batch.push(index, deadline));
        }
        batch.sort();
        let order: Vec<u32> = batch.iter().map(|(index, _)| index).collect();
        assert_eq!(order, [4, 2, 5, 1, 3, 6]);
    }

    #[test]
    fn full_batch_refuses_one_more() {
        let mut batch = Batch::new();
        for index in 0..BATCH as u32 {
            assert!(batch.push(index, Tick::from(BATCH as u32 - index)));
        }
        assert!(!batch.push(99, 0));
        batch.sort();
        assert!(batch.iter().map(|(_, d)| d).eq(1..=BATCH as Tick));
    }
}
