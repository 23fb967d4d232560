//! Timers gathered from one wheel slot and put in deadline order, for a slot that falls due
//! whole: a late poll files them on the due list in one go, sorted here, rather than cascading
//! each through the finer levels one slot at a time.

use crate::Tick;

/// The most timers a slot may hold to be sorted whole when an expiry takes one due timer at a
/// time (`pop_expired`, `has_expired`): enough for the slots a late poll meets one level below
/// the one it fills (about 70 timers a slot at 1,000 timers, 110 at 100,000), and small enough
/// (2 KiB with the sort's scratch) for a board's stack.
pub(super) const ONE_AT_A_TIME: usize = 128;

/// The most timers a slot may hold to be sorted whole in an expiry that fires many (`expire`),
/// on a 64-bit target with an operating system: a whole slot of level 3 of a wheel of 10,000
/// timers spread over an hour of milliseconds (about 720 timers), or of level 2 at a million
/// (about 1,100), which then skip a cascade through the level below. Made only for a slot too
/// big for [`ONE_AT_A_TIME`], it takes 32 KiB of stack (keys and scratch), which a thread of
/// such a system has (hundreds of KiB at least). A bare-metal target's stack may be a few KiB,
/// so there a late poll's batch is the small one.
#[cfg(all(target_pointer_width = "64", not(target_os = "none")))]
pub(super) const LATE_POLL: usize = 2048;
/// See the hosted 64-bit definition.
#[cfg(not(all(target_pointer_width = "64", not(target_os = "none"))))]
pub(super) const LATE_POLL: usize = ONE_AT_A_TIME;

/// The batches a late poll sorts the slots that fall due whole in, each made (zeroed) when
/// first needed and reused for the rest of the poll: one of [`ONE_AT_A_TIME`] timers, and on a
/// hosted 64-bit target one of [`LATE_POLL`] for a slot too big for it (elsewhere there is no
/// second one, and no stack spent on it). Two sizes, because a late poll that meets only slots
/// of a few timers, the common case, then never zeroes the large one.
pub(super) struct LateBatches {
    small: Option<Batch<ONE_AT_A_TIME>>,
    #[cfg(all(target_pointer_width = "64", not(target_os = "none")))]
    large: Option<Batch<LATE_POLL>>,
}

impl LateBatches {
    pub(super) const fn new() -> Self {
        Self {
            small: None,
            #[cfg(all(target_pointer_width = "64", not(target_os = "none")))]
            large: None,
        }
    }

    /// The small batch, made now if not yet.
    pub(super) fn small(&mut self) -> &mut Batch<ONE_AT_A_TIME> {
        self.small.get_or_insert_with(|| Batch::new(0))
    }

    /// The large batch, made now if not yet.
    #[cfg(all(target_pointer_width = "64", not(target_os = "none")))]
    pub(super) fn large(&mut self) -> Option<&mut Batch<LATE_POLL>> {
        Some(self.large.get_or_insert_with(|| Batch::new(0)))
    }

    /// None: a late poll's batch is the small one here.
    #[cfg(not(all(target_pointer_width = "64", not(target_os = "none"))))]
    pub(super) fn large(&mut self) -> Option<&mut Batch<LATE_POLL>> {
        None
    }
}

// A whole slot of level 4 (2^24 ticks) packs into a batch of `ONE_AT_A_TIME`, one of level 3
// (2^18) into a late poll's.
const _: () = assert!(Batch::<ONE_AT_A_TIME>::OFFSET_BITS >= 24);
const _: () = assert!(Batch::<LATE_POLL>::OFFSET_BITS >= 18);

/// Bits of the offset sorted in one radix pass: one wheel level's worth.
const DIGIT_BITS: u32 = 6;
/// Batches of at most this many keys are sorted by comparison: a radix pass's 64 counters
/// cost more than a few keys' comparisons.
const COMPARISON_SORT_UP_TO: usize = 32;
/// Offsets that need more radix passes than this are sorted by comparison, unless there are at
/// least [`LONG_RADIX_FROM`] keys: with three passes (a slot three levels below the poll's, a
/// wheel of about 1,000 timers, some 70 keys) the radix sort took half as long again as the
/// comparison sort.
const RADIX_PASSES_AT_MOST: u32 = 2;
/// From this many keys, offsets over as many bits as a slot of level 3 (three passes) are
/// radix sorted too: the comparison sort's `log2(keys)` comparisons a key outgrow three passes.
const LONG_RADIX_FROM: usize = 256;
/// Radix passes at most for a batch of [`LONG_RADIX_FROM`] keys or more.
const LONG_RADIX_PASSES_AT_MOST: u32 = 3;

/// Moves `from`'s keys to `to` ordered by the digit at `shift`, keys with equal digits in the
/// order they were in: one pass of a least-significant-digit radix sort.
fn radix_pass(from: &[u64], to: &mut [u64], shift: u32) {
    let digit = |key: u64| (key >> shift) as usize % (1 << DIGIT_BITS);
    let mut next = [0u16; 1 << DIGIT_BITS];
    for &key in from {
        next[digit(key)] += 1;
    }
    let mut start = 0;
    for slot in &mut next {
        (start, *slot) = (start + *slot, start);
    }
    for &key in from {
        let at = &mut next[digit(key)];
        if let Some(place) = to.get_mut(usize::from(*at)) {
            *place = key;
        }
        *at += 1;
    }
}

/// Up to `N` timers of one slot, each packed in one `u64` key: its deadline's offset from the
/// slot's start, then its place in the order added, then its slot number. Sorting the keys as
/// plain integers orders the timers by deadline, equal deadlines in the order added, with no
/// comparison closure and no second array to move.
pub(super) struct Batch<const N: usize> {
    keys: [u64; N],
    /// The radix sort's second array, zeroed once with the batch rather than at every sort.
    scratch: [u64; N],
    len: usize,
    /// Timers added from the end ([`push_from_end`](Self::push_from_end)): the last `back`
    /// keys, until [`join_ends`](Self::join_ends) moves them after the first `len`.
    back: usize,
    /// The slot's first tick: no deadline in the batch is earlier.
    start: Tick,
}

impl<const N: usize> Batch<N> {
    /// Bits of a key that hold the timer's place in the order it was added.
    const PLACE_BITS: u32 = N.next_power_of_two().trailing_zeros();
    /// Bits of a key that hold the deadline's offset from the slot's start: every slot up to
    /// level 4 (2^24 ticks wide) fits a batch of 128, up to level 3 (2^18) one of 2,048.
    pub(super) const OFFSET_BITS: u32 = Tick::BITS - u32::BITS - Self::PLACE_BITS;
    /// Where a key's offset starts.
    const OFFSET_SHIFT: u32 = u32::BITS + Self::PLACE_BITS;

    /// An empty batch for a slot whose first tick is `start`.
    pub(super) const fn new(start: Tick) -> Self {
        Self {
            keys: [0; N],
            scratch: [0; N],
            len: 0,
            back: 0,
            start,
        }
    }

    /// Empties the batch for a slot whose first tick is `start`.
    #[inline]
    pub(super) fn restart(&mut self, start: Tick) {
        self.len = 0;
        self.back = 0;
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
        let place = self.len;
        if place + self.back >= N || !self.put(place, index, deadline) {
            return false;
        }
        self.len += 1;
        true
    }

    /// Adds timer `index`, due at `deadline`, as the one before those added from the end so
    /// far: a list walked from both ends at once fills the batch from both of its ends, each
    /// timer in the place it has in the list. `false` as for [`push`](Self::push).
    #[inline]
    pub(super) fn push_from_end(&mut self, index: u32, deadline: Tick) -> bool {
        let Some(place) = (N - 1).checked_sub(self.back) else {
            return false;
        };
        if place < self.len || !self.put(place, index, deadline) {
            return false;
        }
        self.back += 1;
        true
    }

    /// Moves the timers added from the end to follow the others, in place order.
    #[inline]
    pub(super) fn join_ends(&mut self) {
        let from = N - self.back;
        self.keys.copy_within(from.., self.len);
        self.len += self.back;
        self.back = 0;
    }

    /// Packs timer `index`, due at `deadline`, as the key at `place`, if its deadline packs.
    #[inline]
    fn put(&mut self, place: usize, index: u32, deadline: Tick) -> bool {
        let offset = deadline.wrapping_sub(self.start);
        match self.keys.get_mut(place) {
            Some(key) if offset >> Self::OFFSET_BITS == 0 => {
                *key =
                    offset << Self::OFFSET_SHIFT | (place as u64) << u32::BITS | u64::from(index);
                true
            }
            _ => false,
        }
    }

    /// Drops the timers added after the first `len`: a slot that did not fit is taken back out.
    #[inline]
    pub(super) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
        self.back = 0;
    }

    /// Whether every deadline up to `last` (and from the batch's start) can be packed.
    #[inline]
    pub(super) fn reaches(&self, last: Tick) -> bool {
        last.checked_sub(self.start)
            .is_some_and(|offset| offset >> Self::OFFSET_BITS == 0)
    }

    /// Sorts the whole batch: [`sort_from`](Self::sort_from) its first timer.
    #[cfg(test)]
    pub(super) fn sort(&mut self) {
        self.sort_from(0);
    }

    /// Sorts the timers from the `from`th on by deadline, keeping timers with equal deadlines
    /// in the order they were added. A batch gathered from several slots is sorted slot by
    /// slot: each slot's timers are due before the next slot's.
    ///
    /// Keys are sorted as plain integers (their place bits differ, so an unstable sort is
    /// stable), except more than a few whose offsets differ in at most 12 bits (a slot one or
    /// two levels below a late poll's), or at least 256 whose offsets differ in at most 18 (a
    /// whole slot of level 3): those by a least-significant-digit radix sort of the offsets, six
    /// bits a pass and only over the bits in which they differ, each pass linear where a
    /// comparison sort of 100 keys makes about seven comparisons a key. The radix sort is
    /// stable, and the keys were added in order, so equal offsets keep that order.
    #[inline]
    pub(super) fn sort_from(&mut self, from: usize) {
        let keys = self.keys.get_mut(from..self.len).unwrap_or_default();
        let (first, rest) = match keys.split_first() {
            Some((&first, rest)) if rest.len() >= COMPARISON_SORT_UP_TO => (first, rest),
            _ => {
                keys.sort_unstable();
                return;
            }
        };
        let first = first >> Self::OFFSET_SHIFT;
        let differ = rest.iter().fold(0, |differ, &key| {
            differ | ((key >> Self::OFFSET_SHIFT) ^ first)
        });
        let varying_bits = Tick::BITS - differ.leading_zeros();
        let passes_at_most = if keys.len() >= LONG_RADIX_FROM {
            LONG_RADIX_PASSES_AT_MOST
        } else {
            RADIX_PASSES_AT_MOST
        };
        if varying_bits > passes_at_most * DIGIT_BITS {
            keys.sort_unstable();
            return;
        }
        let other = self.scratch.get_mut(..keys.len()).unwrap_or_default();
        let mut sorted_in_other = false;
        for shift in (0..varying_bits).step_by(DIGIT_BITS as usize) {
            let shift = Self::OFFSET_SHIFT + shift;
            if sorted_in_other {
                radix_pass(other, keys, shift);
            } else {
                radix_pass(keys, other, shift);
            }
            sorted_in_other = !sorted_in_other;
        }
        if sorted_in_other {
            keys.copy_from_slice(other);
        }
    }

    /// The timers as `(index, deadline)`, in their current order.
    #[inline]
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, Tick)> + '_ {
        self.keys[..self.len].iter().map(|&key| self.unpack(key))
    }

    #[inline]
    fn unpack(&self, key: u64) -> (u32, Tick) {
        // Truncation keeps the slot number, the key's low 32 bits.
        (key as u32, self.start + (key >> Self::OFFSET_SHIFT))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// Both batch sizes, on every target: the one-at-a-time size and a 64-bit late poll's.
    const SMALL: usize = ONE_AT_A_TIME;
    const LARGE: usize = 2048;

    // The late-poll batch is one of the two sizes tested here.
    const _: () = assert!(LATE_POLL == SMALL || LATE_POLL == LARGE);

    #[test]
    fn sort_is_by_deadline_and_stable() {
        let mut batch = Batch::<SMALL>::new(1_000);
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

    /// Sorts `len` keys spread over `bits` bits in a batch of `N` and checks the order against
    /// a comparison sort of (deadline, place added).
    fn check_sort<const N: usize>(rng: &mut crate::wheel::tests::Rng, len: usize, bits: u32) {
        let start = rng.below(1 << 40);
        let mut batch = Batch::<N>::new(start);
        let mut expected = Vec::new();
        for place in 0..len {
            let index = rng.below(1 << 32) as u32;
            let deadline = start + rng.below(1 << bits);
            assert!(batch.push(index, deadline));
            expected.push((deadline, place, index));
        }
        batch.sort();
        expected.sort();
        let want: Vec<(u32, Tick)> = expected.iter().map(|&(d, _, i)| (i, d)).collect();
        assert!(batch.iter().eq(want), "{len} keys of {N} over {bits} bits");
    }

    #[test]
    fn radix_sort_matches_a_comparison_sort_at_every_size_and_spread() {
        let mut rng = crate::wheel::tests::Rng(0x5EED_0001);
        for len in 1..=SMALL {
            for bits in [0, 1, 6, 7, 12, 18, 24, Batch::<SMALL>::OFFSET_BITS] {
                check_sort::<SMALL>(&mut rng, len, bits);
            }
        }
        // Every size around the comparison sort's bound and the three-pass radix sort's, and
        // a spread of larger ones.
        let lens = (1..=40)
            .chain(250..=260)
            .chain([511, 512, 700, 720, 1023, 1024, 1100, 1500, 2047, 2048]);
        for len in lens {
            for bits in [0, 1, 6, 7, 12, 13, 18, 19, Batch::<LARGE>::OFFSET_BITS] {
                check_sort::<LARGE>(&mut rng, len, bits);
            }
        }
    }

    fn check_both_ends<const N: usize>() {
        // A list 0..N walked from both ends: front takes 0, 1, ..., back takes N - 1, N - 2,
        // ...; every deadline equal, so the sort must keep the list order.
        for len in (1..=N as u32).filter(|&len| len <= 160 || len % 97 == 0 || len == N as u32) {
            let mut batch = Batch::<N>::new(500);
            assert!(!batch.push_from_end(u32::MAX, 499), "before the start");
            for front in 0..len.div_ceil(2) {
                let back = len - 1 - front;
                assert!(batch.push(front, 700));
                if back != front {
                    assert!(batch.push_from_end(back, 700));
                }
            }
            if len == N as u32 {
                assert!(!batch.push(N as u32, 700));
                assert!(!batch.push_from_end(N as u32, 700));
            }
            batch.join_ends();
            batch.sort();
            assert!(
                batch.iter().map(|(index, _)| index).eq(0..len),
                "{len} of {N}"
            );
            assert!(batch.iter().all(|(_, deadline)| deadline == 700));
        }
    }

    #[test]
    fn a_batch_filled_from_both_ends_keeps_the_order_of_the_walk() {
        check_both_ends::<SMALL>();
        check_both_ends::<LARGE>();
    }

    fn check_full<const N: usize>() {
        let mut batch = Batch::<N>::new(0);
        for index in 0..N as u32 {
            assert!(batch.push(index, Tick::from(N as u32 - index)));
        }
        assert!(!batch.push(99, 0));
        batch.sort();
        assert!(batch.iter().map(|(_, d)| d).eq(1..=N as Tick));
    }

    #[test]
    fn full_batch_refuses_one_more() {
        check_full::<SMALL>();
        check_full::<LARGE>();
    }

    fn check_packable<const N: usize>() {
        let bits = Batch::<N>::OFFSET_BITS;
        let start = u64::MAX - (1 << 30);
        let mut batch = Batch::<N>::new(start);
        assert!(!batch.push(1, start - 1));
        assert!(!batch.push(2, start + (1 << bits)));
        assert!(batch.push(3, start + (1 << bits) - 1));
        assert!(batch.push(4, start));
        batch.sort();
        let order: Vec<(u32, Tick)> = batch.iter().collect();
        assert_eq!(order, [(4, start), (3, start + (1 << bits) - 1)]);
    }

    #[test]
    fn deadlines_outside_the_packable_range_are_refused() {
        check_packable::<SMALL>();
        check_packable::<LARGE>();
    }
}
