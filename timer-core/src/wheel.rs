//! A hierarchical timing wheel over the whole `u64` tick range.

use crate::arena::Arena;
use crate::linked::LinkedNode;
use crate::list::{Links, List};
use crate::{Expired, Full, StaleTimer, Tick, TimerId, TimerQueue};

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

/// One level: 64 lists and a bitmap of which are non-empty.
struct Level {
    occupied: u64,
    slots: [List; SLOTS],
}

impl Level {
    const EMPTY: Self = Self {
        occupied: 0,
        slots: [List::EMPTY; SLOTS],
    };
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

/// A hierarchical timing wheel: O(1) insert, cancel and reschedule over the full `u64` range.
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
pub struct TimerWheel<T, const N: usize> {
    nodes: Arena<LinkedNode<T, ()>, N>,
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
    /// An empty wheel at time 0. `const`, so it can live in a `static`.
    pub const fn new() -> Self {
        Self {
            nodes: Arena::new(),
            levels: [const { Level::EMPTY }; LEVELS],
            due: List::EMPTY,
            elapsed: 0,
            check_from: 0,
        }
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
            Home::Due => self.due.insert_sorted(&mut self.nodes, index),
            Home::Slot { level, slot } => {
                let lvl = &mut self.levels[level];
                lvl.slots[slot].push_back(&mut self.nodes, index);
                lvl.occupied |= 1 << slot;
                // The slot starts at the deadline with the bits below this level cleared.
                let start = deadline & !((1u64 << (level as u32 * SLOT_BITS)) - 1);
                self.check_from = self.check_from.min(start);
            }
        }
    }

    fn unfile(&mut self, index: u32, deadline: Tick) {
        match self.home(deadline) {
            Home::Due => self.due.unlink(&mut self.nodes, index),
            Home::Slot { level, slot } => {
                let level = &mut self.levels[level];
                level.slots[slot].unlink(&mut self.nodes, index);
                if level.slots[slot].is_empty() {
                    level.occupied &= !(1 << slot);
                }
            }
        }
    }

    /// The earliest occupied slot: `(level, slot, start tick)`. Any occupied slot on a finer
    /// level starts before every slot on a coarser one, so the first occupied level wins.
    fn next_expiration(&self) -> Option<(usize, usize, Tick)> {
        self.levels
            .iter()
            .enumerate()
            .find(|(_, level)| level.occupied != 0)
            .map(|(index, level)| {
                let shift = index as u32 * SLOT_BITS;
                let now_slot = ((self.elapsed >> shift) & SLOT_MASK) as u32;
                let distance = level.occupied.rotate_right(now_slot).trailing_zeros();
                let slot = (now_slot + distance) % SLOTS as u32;
                let span_bits = shift + SLOT_BITS;
                let base = if span_bits >= u64::BITS {
                    0
                } else {
                    self.elapsed & !((1u64 << span_bits) - 1)
                };
                let mut start = base | (u64::from(slot) << shift);
                if slot < now_slot {
                    // Not reachable while the filing invariant holds; stay safe regardless.
                    start = match 1u64.checked_shl(span_bits) {
                        Some(span) => start.saturating_add(span),
                        None => Tick::MAX,
                    };
                }
                (index, slot as usize, start)
            })
    }

    /// Takes the whole slot and re-files its timers relative to its start time.
    fn process(&mut self, level: usize, slot: usize, start: Tick) {
        self.elapsed = start;
        let lvl = &mut self.levels[level];
        let mut taken = lvl.slots[slot].take();
        lvl.occupied &= !(1 << slot);
        if level == 0 && self.due.is_empty() {
            // Every timer in a level-0 slot is due exactly at `start`, already in order.
            self.due = taken;
            return;
        }
        while let Some(index) = taken.pop_front(&mut self.nodes) {
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
                Some((level, slot, start)) if start <= now => self.process(level, slot, start),
                next => {
                    self.check_from = next.map_or(Tick::MAX, |(_, _, start)| start);
                    self.elapsed = now;
                    return None;
                }
            }
        }
    }

    fn take(&mut self, index: u32) -> Option<Expired<T>> {
        let id = self.nodes.id_of(index)?;
        let node = self.nodes.release(index)?;
        Some(Expired {
            id,
            deadline: node.deadline,
            value: node.value,
        })
    }
}

impl<T, const N: usize> TimerQueue<T> for TimerWheel<T, N> {
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
            None => self.next_expiration().map(|(_, _, start)| start),
        }
    }

    fn pop_expired(&mut self, now: Tick) -> Option<Expired<T>> {
        let index = self.advance(now)?;
        self.due.unlink(&mut self.nodes, index);
        self.take(index)
    }

    fn has_expired(&mut self, now: Tick) -> bool {
        self.advance(now).is_some()
    }

    fn pop_any(&mut self) -> Option<Expired<T>> {
        let index = match self.due.pop_front(&mut self.nodes) {
            Some(index) => index,
            None => {
                let level = self.levels.iter_mut().find(|l| l.occupied != 0)?;
                let slot = level.occupied.trailing_zeros() as usize;
                let index = level.slots[slot].pop_front(&mut self.nodes)?;
                if level.slots[slot].is_empty() {
                    level.occupied &= !(1 << slot);
                }
                index
            }
        };
        self.take(index)
    }

    fn len(&self) -> usize {
        self.nodes.len()
    }

    fn capacity(&self) -> usize {
        N
    }

    fn is_full(&self) -> bool {
        self.nodes.is_full()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn fire_all<const N: usize>(wheel: &mut TimerWheel<u32, N>, now: Tick) -> Vec<(Tick, u32)> {
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

    #[test]
    fn slot_size_is_24_bytes_for_u32() {
        assert_eq!(
            core::mem::size_of::<crate::arena::Slot<LinkedNode<u32, ()>>>(),
            24
        );
    }
}
