//! The wheel's unit tests: behaviour through the public contract, and the storage layouts.

use super::*;
use std::vec::Vec;

/// A wheel over two `Vec`s.
type VecWheel = TimerWheelOn<u32, Vec<WheelSlot<u32>>, Vec<WheelCells>>;

/// A wheel of `capacity` timers over two `Vec`s.
fn vec_wheel(capacity: usize) -> VecWheel {
    TimerWheelOn::with_storage(
        (0..capacity).map(|_| WheelSlot::new()).collect(),
        std::vec![WheelCells::new(); capacity],
    )
}

fn fire_all<S: Storage<WheelSlot<u32>>, C: Storage<WheelCells>>(
    wheel: &mut TimerWheelOn<u32, S, C>,
    now: Tick,
) -> Vec<(Tick, u32)> {
    let mut out = Vec::new();
    let _ = wheel.expire(now, usize::MAX, |e| out.push((e.deadline, e.value)));
    out
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
fn expiry_behind_elapsed_stops_at_now_on_the_due_list() {
    for mut wheel in [vec_wheel(8_192), blocks_wheel(BLOCKS_CAPACITY)] {
        let _ = fire_all(&mut wheel, 1_000);
        for (deadline, value) in [(900, 2), (700, 1), (950, 3)] {
            wheel.insert(deadline, value).unwrap();
        }
        // All three wait on the due list; an expiry at 800 hands out only the first.
        assert_eq!(fire_all(&mut wheel, 800), [(700, 1)]);
        assert_eq!(fire_all(&mut wheel, 1_000), [(900, 2), (950, 3)]);
    }
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
fn timers_a_cascade_filed_from_both_ends_leave_their_new_lists() {
    // 100 timers in the level-1 slot [64, 128): the cascade at 64 files them from both ends
    // onto level 0 (the linked layout), then each cancel and reschedule finds its list.
    let mut wheel = vec_wheel(256);
    let mut pending: Vec<(Tick, u64, u32, TimerId)> = (0..100u32)
        .map(|value| {
            let deadline = 64 + u64::from(value * 37 % 64);
            let id = wheel.insert(deadline, value).unwrap();
            (deadline, u64::from(value), value, id)
        })
        .collect();
    assert!(fire_all(&mut wheel, 63).is_empty());
    let at_64 = fire_all(&mut wheel, 64);
    pending.retain(|&(deadline, ..)| deadline > 64);
    assert_eq!(at_64.len(), 2);
    let mut filed = 100;
    for (i, entry) in pending.iter_mut().enumerate() {
        if i % 3 == 0 {
            assert_eq!(wheel.cancel(entry.3), Ok(entry.2));
            entry.0 = 0;
        } else if i % 5 == 0 {
            entry.0 = 100 + (i as Tick % 7);
            entry.1 = filed;
            filed += 1;
            wheel.reschedule(entry.3, entry.0).unwrap();
        }
    }
    pending.retain(|&(deadline, ..)| deadline > 0);
    pending.sort_by_key(|&(deadline, filed, ..)| (deadline, filed));
    let expected: Vec<(Tick, u32)> = pending.iter().map(|&(d, _, v, _)| (d, v)).collect();
    assert_eq!(fire_all(&mut wheel, 200), expected);
    assert!(wheel.is_empty());
}

#[test]
fn cancel_of_a_timer_on_the_due_list_after_its_level_zero_slot_became_it() {
    let mut wheel: TimerWheel<u32, 8> = TimerWheel::new();
    wheel.insert(10, 1).unwrap();
    let b = wheel.insert(10, 2).unwrap();
    wheel.insert(10, 3).unwrap();
    assert!(wheel.expire(10, 0, |_| {}).more_due);
    assert_eq!(wheel.cancel(b), Ok(2));
    assert_eq!(fire_all(&mut wheel, 10), [(10, 1), (10, 3)]);
    assert!(wheel.is_empty());
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
            let mut slots: Vec<WheelSlot<u32>> = (0..TIMERS).map(|_| WheelSlot::new()).collect();
            let mut cells = std::vec![WheelCells::new(); TIMERS as usize];
            let mut wheel = TimerWheelOn::with_storage(&mut slots[..], &mut cells[..]);
            assert!(core::mem::size_of_val(&wheel) < 12 * 1024);
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
    let mut cells = [WheelCells::new(); 64];
    let mut on_slice = TimerWheelOn::with_storage(&mut slots[..], &mut cells[..]);
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
    let mut wheel = TimerWheelOn::with_storage(slots, std::vec![WheelCells::new(); 2]);
    let stale = wheel.insert(5, 1).unwrap();
    let (slots, cells) = wheel.into_storage();
    let mut wheel = TimerWheelOn::with_storage(slots, cells);
    assert!(wheel.is_empty());
    assert_eq!(wheel.cancel(stale), Err(StaleTimer));
    wheel.insert(1, 2).unwrap();
    wheel.insert(2, 3).unwrap();
    assert!(wheel.is_full());
}

#[test]
fn a_timer_takes_28_bytes_for_u32_in_two_parts() {
    assert_eq!(core::mem::size_of::<WheelSlot<u32>>(), 20);
    assert_eq!(core::mem::size_of::<WheelCells>(), 8);
}

/// The capacity is the shorter part's length: a timer needs a slot and its cells.
#[test]
fn capacity_is_the_shorter_part() {
    for (slots, cells) in [(3, 5), (5, 3), (4, 4), (0, 2)] {
        let mut wheel = TimerWheelOn::with_storage(
            (0..slots).map(|_| WheelSlot::new()).collect::<Vec<_>>(),
            std::vec![WheelCells::new(); cells],
        );
        let capacity = slots.min(cells);
        assert_eq!(wheel.capacity(), capacity);
        for value in 0..capacity as u32 {
            wheel.insert(u64::from(value) * 100, value).unwrap();
        }
        assert_eq!(wheel.insert(7, 99), Err(Full(99)));
        let fired = fire_all(&mut wheel, u64::MAX);
        assert_eq!(fired.len(), capacity);
    }
}

// ---- the blocks layout ----

/// A seeded generator (splitmix64): the wheel's tests need no `rand`.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// About the smallest capacity the blocks layout has room for (blocks of four cells, after the
/// lists' live counts).
const BLOCKS_CAPACITY: usize = 9_216;

/// A wheel in the blocks layout with room for `capacity` timers.
fn blocks_wheel(capacity: usize) -> VecWheel {
    let wheel = TimerWheelOn::with_storage_in_blocks(
        (0..capacity).map(|_| WheelSlot::new()).collect(),
        std::vec![WheelCells::new(); capacity],
    );
    assert_eq!(Blocks::shift_for(capacity, true), 2, "blocks of four cells");
    wheel
}

/// The order timers must fire in: by deadline, then by when they were last (re)scheduled.
#[derive(Default)]
struct Model {
    order: std::collections::BTreeMap<(Tick, u64), u32>,
    /// Each pending timer's key in `order`, by value.
    keys: std::collections::BTreeMap<u32, (Tick, u64, TimerId)>,
    seq: u64,
}

impl Model {
    fn schedule(&mut self, value: u32, deadline: Tick, id: TimerId) {
        if let Some((old, seq, _)) = self.keys.remove(&value) {
            self.order.remove(&(old, seq));
        }
        self.seq += 1;
        self.order.insert((deadline, self.seq), value);
        self.keys.insert(value, (deadline, self.seq, id));
    }

    fn remove(&mut self, value: u32) {
        let (deadline, seq, _) = self.keys.remove(&value).unwrap();
        self.order.remove(&(deadline, seq));
    }

    /// The next `budget` timers due at `now`.
    fn expire(&mut self, now: Tick, budget: usize) -> Vec<(Tick, u32)> {
        let due: Vec<_> = self
            .order
            .iter()
            .take_while(|((deadline, _), _)| *deadline <= now)
            .take(budget)
            .map(|(&(deadline, seq), &value)| (deadline, seq, value))
            .collect();
        for &(deadline, seq, value) in &due {
            self.order.remove(&(deadline, seq));
            self.keys.remove(&value);
        }
        due.into_iter().map(|(d, _, v)| (d, v)).collect()
    }
}

/// Random inserts, cancels, reschedules (often to a deadline other timers share, sometimes the
/// same one, sometimes one already past) and budgeted expiries (some from a clock that went
/// back), checked against the model's order after every expiry. The pool has 2 × 8,192 cells;
/// the run leaves far more stale cells than that behind, so the chains are compacted many times
/// over, with live and stale cells in every arrangement around block boundaries.
#[test]
fn blocks_keep_fifo_among_equal_deadlines_through_cancels_reschedules_and_compaction() {
    let seed = std::env::var("WHEEL_SEED").map_or(0x5EED_B10C, |s| s.parse().unwrap());
    let wheel = fifo_against_the_model(blocks_wheel(CAPACITY), seed);
    assert!(
        wheel.compactions >= 3,
        "compacted {} times",
        wheel.compactions
    );
}

/// The same run on linked lists.
#[test]
fn linked_keeps_fifo_among_equal_deadlines_through_cancels_and_reschedules() {
    let wheel = vec_wheel(CAPACITY);
    assert!(!wheel.in_blocks());
    fifo_against_the_model(wheel, 0x5EED_0001);
}

/// The capacity of the wheels [`fifo_against_the_model`] drives.
const CAPACITY: usize = BLOCKS_CAPACITY;

fn fifo_against_the_model(mut wheel: VecWheel, seed: u64) -> VecWheel {
    let mut rng = Rng(seed);
    let mut model = Model::default();
    let mut now: Tick = 0;
    let mut next_value = 0u32;
    let mut moves = 0usize;
    for _ in 0..150_000 {
        let pending: Vec<u32> = if model.keys.is_empty() || rng.below(8) == 0 {
            Vec::new()
        } else {
            let pick = rng.below(model.keys.len() as u64) as usize;
            model.keys.keys().nth(pick).copied().into_iter().collect()
        };
        // Few distinct deadlines, so that most of them are shared; most a few thousand ticks
        // out (where the cells that moves leave behind pile up until compacted), some sooner,
        // some far, some past.
        let deadline = match rng.below(10) {
            0 => now.saturating_sub(rng.below(40)),
            1 => now + rng.below(1 << 30),
            2 | 3 => now + 1 + rng.below(8) * 50,
            _ => now + 5_000 + rng.below(8) * 50,
        };
        match (rng.below(100), pending.first()) {
            (0..=44, Some(&value)) => {
                let id = model.keys[&value].2;
                let deadline = if rng.below(10) == 0 {
                    model.keys[&value].0
                } else {
                    deadline
                };
                wheel.reschedule(id, deadline).unwrap();
                model.schedule(value, deadline, id);
                moves += 1;
            }
            (45..=59, Some(&value)) => {
                let id = model.keys[&value].2;
                assert_eq!(wheel.cancel(id), Ok(value));
                model.remove(value);
                moves += 1;
            }
            (60..=74, _) => {
                now += rng.below(3);
                // Now and then a poll from a clock behind the last one, which must still hand
                // out whatever a budget left on the due list that is due by then.
                let at = match rng.below(6) {
                    0 => now.saturating_sub(rng.below(300)),
                    _ => now,
                };
                let budget = [usize::MAX, 1, 7][rng.below(3) as usize];
                let mut fired = Vec::new();
                let _ = wheel.expire(at, budget, |e| fired.push((e.deadline, e.value)));
                assert_eq!(fired, model.expire(at, budget), "at {at}");
            }
            _ => match wheel.insert(deadline, next_value) {
                Ok(id) => {
                    model.schedule(next_value, deadline, id);
                    next_value += 1;
                }
                Err(Full(value)) => {
                    assert_eq!((value, wheel.len()), (next_value, CAPACITY));
                }
            },
        }
        assert_eq!(wheel.len(), model.keys.len());
    }
    assert!(moves > 4 * 2 * CAPACITY);
    let mut fired = Vec::new();
    let _ = wheel.expire(u64::MAX, usize::MAX, |e| fired.push((e.deadline, e.value)));
    assert_eq!(fired, model.expire(u64::MAX, usize::MAX));
    assert!(wheel.is_empty());
    wheel
}

/// One expiry across every level, from the finest to deadlines at `u64::MAX`, with ties and
/// timers moved among them: everything comes out in deadline order, equal deadlines in the
/// order they were last scheduled.
#[test]
fn blocks_late_poll_across_all_levels_fires_in_order() {
    let mut rng = Rng(0x1A7E);
    let mut wheel = blocks_wheel(BLOCKS_CAPACITY);
    let mut model = Model::default();
    let mut ids = Vec::new();
    for value in 0..8_000u32 {
        let deadline = match rng.below(6) {
            0 => u64::MAX - rng.below(3),
            1 => 1 << rng.below(64),
            _ => rng.next() >> rng.below(64),
        };
        let id = wheel.insert(deadline, value).unwrap();
        model.schedule(value, deadline, id);
        ids.push(id);
    }
    for _ in 0..4_000 {
        let value = rng.below(8_000) as u32;
        let deadline = model.keys[&value].0 ^ rng.below(2);
        wheel.reschedule(ids[value as usize], deadline).unwrap();
        model.schedule(value, deadline, ids[value as usize]);
    }
    for now in [0, u64::MAX >> 20, u64::MAX - 2, u64::MAX] {
        let mut fired = Vec::new();
        let _ = wheel.expire(now, usize::MAX, |e| fired.push((e.deadline, e.value)));
        assert_eq!(fired, model.expire(now, usize::MAX), "at {now}");
    }
    assert!(wheel.is_empty());
}

#[test]
fn blocks_deadlines_near_max_keep_their_order() {
    let mut wheel = blocks_wheel(BLOCKS_CAPACITY);
    let a = wheel.insert(u64::MAX, 1).unwrap();
    wheel.insert(u64::MAX - 1, 2).unwrap();
    wheel.insert(u64::MAX, 3).unwrap();
    wheel.reschedule(a, u64::MAX).unwrap();
    let _ = wheel.expire(u64::MAX - 2, usize::MAX, |_| panic!("nothing is due yet"));
    assert_eq!(
        fire_all(&mut wheel, u64::MAX),
        [(u64::MAX - 1, 2), (u64::MAX, 3), (u64::MAX, 1)]
    );
}

#[test]
fn wheel_from_2_pow_19_keeps_its_timers_in_blocks_of_64() {
    for (capacity, block_len) in [((1 << 19) - 1, 2), (1 << 19, 64)] {
        let mut wheel = vec_wheel(capacity);
        let id = wheel.insert(5_000, 1).unwrap();
        wheel.insert(5_000, 2).unwrap();
        assert_eq!(wheel.blocks.block_len(), block_len, "{capacity} timers");
        wheel.reschedule(id, 5_000).unwrap();
        assert_eq!(fire_all(&mut wheel, 5_000), [(5_000, 2), (5_000, 1)]);
    }
}

/// Late polls through slots that go to the due list whole (at most a batch of timers, in any
/// order, with ties) and slots just too large for it (both batch sizes), with reschedules and cancels among them, budgets
/// that stop a poll part way and timers filed behind and just after each poll: everything comes
/// out in deadline order, equal deadlines in the order last scheduled, nothing early.
fn late_polls_match_the_model(mut wheel: VecWheel, seed: u64) {
    let mut rng = Rng(seed);
    let mut model = Model::default();
    let mut ids = Vec::new();
    let (small, large) = (ONE_AT_A_TIME, LATE_POLL);
    let sizes = [
        1,
        2,
        3,
        4,
        5,
        small - 1,
        small,
        small + 1,
        large,
        large + 1,
        2 * large,
    ];
    while ids.len() < 6_000 {
        // A cluster of timers in one stretch of 1 to 4,096 ticks (so in one slot of some level,
        // or two), somewhere in the first 2^24 ticks or near the end of time.
        let count = sizes[rng.below(sizes.len() as u64) as usize];
        let width = 1 << rng.below(13);
        let start = match rng.below(8) {
            0 => u64::MAX - width,
            _ => rng.below(1 << 24),
        };
        for _ in 0..count.min(6_000 - ids.len()) {
            let value = ids.len() as u32;
            let deadline = start + rng.below(width);
            let id = wheel.insert(deadline, value).unwrap();
            model.schedule(value, deadline, id);
            ids.push(id);
        }
    }
    for _ in 0..1_500 {
        let value = rng.below(ids.len() as u64) as u32;
        let Some(&(deadline, _, id)) = model.keys.get(&value) else {
            continue;
        };
        if rng.below(4) == 0 {
            assert_eq!(wheel.cancel(id), Ok(value));
            model.remove(value);
        } else {
            // Often onto a deadline another timer has, sometimes the same one.
            let other = model
                .keys
                .values()
                .nth(rng.below(model.keys.len() as u64) as usize);
            let deadline = match rng.below(3) {
                0 => deadline,
                1 => other.map_or(deadline, |&(d, _, _)| d),
                _ => deadline ^ rng.below(64),
            };
            wheel.reschedule(id, deadline).unwrap();
            model.schedule(value, deadline, id);
        }
    }
    let mut next_value = ids.len() as u32;
    for now in [
        1 << 12,
        1 << 18,
        1 << 20,
        1 << 23,
        u64::MAX - 4_096,
        u64::MAX,
    ] {
        loop {
            let budget = [usize::MAX, 1, 50][rng.below(3) as usize];
            let mut fired = Vec::new();
            let _ = wheel.expire(now, budget, |e| fired.push((e.deadline, e.value)));
            assert_eq!(fired, model.expire(now, budget), "at {now}");
            // One timer behind the poll and one just after it.
            for deadline in [now - rng.below(100), now.saturating_add(1 + rng.below(100))] {
                let id = wheel.insert(deadline, next_value).unwrap();
                model.schedule(next_value, deadline, id);
                next_value += 1;
            }
            if fired.len() < budget {
                break;
            }
        }
        assert!(wheel.elapsed() <= now);
    }
    let mut fired = Vec::new();
    let _ = wheel.expire(u64::MAX, usize::MAX, |e| fired.push((e.deadline, e.value)));
    assert_eq!(fired, model.expire(u64::MAX, usize::MAX));
    assert!(wheel.is_empty());
}

#[test]
fn late_polls_through_small_and_large_slots_keep_order_linked() {
    let wheel = vec_wheel(8_192);
    assert!(!wheel.in_blocks());
    late_polls_match_the_model(wheel, 0x1A7E_0001);
}

#[test]
fn late_polls_through_small_and_large_slots_keep_order_in_blocks() {
    late_polls_match_the_model(blocks_wheel(BLOCKS_CAPACITY), 0x1A7E_0002);
}

/// Takes every timer due by `now` one at a time, as `pop_expired` hands them out (whole slots
/// go through the smaller batch on that path).
fn pop_all(wheel: &mut VecWheel, now: Tick) -> Vec<(Tick, u32)> {
    core::iter::from_fn(|| wheel.pop_expired(now))
        .map(|e| (e.deadline, e.value))
        .collect()
}

#[test]
fn late_poll_files_a_slot_of_batch_timers_whole_and_one_more_by_cascade() {
    // A few timers, a batch of either size and one more: sorted onto the due list whole, and
    // cascaded; by `expire` (the late-poll batch) and by `pop_expired` (the smaller one).
    let counts = [
        2,
        5,
        ONE_AT_A_TIME,
        ONE_AT_A_TIME + 1,
        LATE_POLL,
        LATE_POLL + 1,
    ];
    for count in counts {
        for one_at_a_time in [false, true] {
            for mut wheel in [vec_wheel(8_192), blocks_wheel(BLOCKS_CAPACITY)] {
                // One level-2 slot [8_192, 12_288): deadlines falling and repeating.
                let mut expected = Vec::new();
                for value in 0..count as u32 {
                    let deadline = 12_000 - Tick::from(value / 2) % 37 * 100;
                    wheel.insert(deadline, value).unwrap();
                    expected.push((deadline, value));
                }
                expected.sort_by_key(|&(deadline, _)| deadline);
                let fired = if one_at_a_time {
                    pop_all(&mut wheel, 20_000)
                } else {
                    fire_all(&mut wheel, 20_000)
                };
                assert_eq!(
                    fired, expected,
                    "{count} timers, one at a time: {one_at_a_time}"
                );
                assert!(wheel.is_empty());
                if !one_at_a_time {
                    assert_eq!(wheel.elapsed(), 20_000);
                }
            }
        }
    }
}

#[test]
fn late_poll_cascades_a_slot_no_batch_packs() {
    // A level-5 slot [2^30, 2^31) of 4 timers, whose offsets pass what either batch packs; and
    // a level-4 slot [2^24, 2^25), whose offsets (up to 2^23) pack into the small batch but not
    // the large one: with 4 timers it is sorted in the small one, with 200 (too many for the
    // small one) it cascades. In each, the first timer filed fits, so a batch is refused part
    // way. Everything fires in deadline order, ties in the order filed.
    for (base, spread, count) in [
        (1 << 30, 1 << 29, 4),
        (1 << 24, 1 << 23, 4),
        (1 << 24, 1 << 23, 200),
    ] {
        let base: Tick = base;
        for one_at_a_time in [false, true] {
            for mut wheel in [vec_wheel(8_192), blocks_wheel(BLOCKS_CAPACITY)] {
                let mut expected = Vec::new();
                for value in 0..count {
                    let deadline = match value % 4 {
                        0 => base + 7 + Tick::from(value),
                        1 | 3 => base + spread,
                        _ => base + Tick::from(value),
                    };
                    wheel.insert(deadline, value).unwrap();
                    expected.push((deadline, value));
                }
                expected.sort_by_key(|&(deadline, _)| deadline);
                let fired = if one_at_a_time {
                    pop_all(&mut wheel, 2 * base)
                } else {
                    fire_all(&mut wheel, 2 * base)
                };
                assert_eq!(
                    fired, expected,
                    "{count} timers in the slot at {base}, one at a time: {one_at_a_time}"
                );
                if !one_at_a_time {
                    assert_eq!(wheel.elapsed(), 2 * base);
                }
            }
        }
    }
}

#[test]
fn blocks_next_deadline_skips_a_slot_whose_timers_all_left() {
    // Cancelled and moved timers leave stale cells in their slots: the slots must not be named.
    for move_away in [false, true] {
        let mut wheel = blocks_wheel(BLOCKS_CAPACITY);
        let near = wheel.insert(100, 1).unwrap(); // level-1 slot [64, 128)
        let other = wheel.insert(120, 2).unwrap();
        wheel.insert(10_000, 3).unwrap(); // level-2 slot [8_192, 12_288)
        assert_eq!(wheel.next_deadline(), Some(64));
        for id in [near, other] {
            if move_away {
                wheel.reschedule(id, 11_000).unwrap();
            } else {
                wheel.cancel(id).unwrap();
            }
        }
        assert_eq!(
            wheel.next_deadline(),
            Some(8_192),
            "moved away: {move_away}"
        );
    }
}

#[test]
fn late_poll_whose_callback_panics_keeps_the_rest_of_the_slot_pending_in_order() {
    // A late poll fires a slot that falls due whole straight from its sorted batch: a panic in
    // the callback part way must leave the timers not yet handed out pending, in order. With
    // 10 timers the slot fits the small batch, with 500 only the large one (on a 64-bit host).
    for count in [10, 500] {
        for mut wheel in [vec_wheel(8_192), blocks_wheel(BLOCKS_CAPACITY)] {
            // One level-2 slot [8_192, 12_288), deadlines falling and repeating.
            let mut expected = Vec::new();
            for value in 0..count {
                let deadline = 12_000 - Tick::from(value % 37) * 100;
                wheel.insert(deadline, value).unwrap();
                expected.push((deadline, value));
            }
            expected.sort_by_key(|&(deadline, _)| deadline);
            let order: Vec<u32> = expected.iter().map(|&(_, value)| value).collect();
            let fails_at = order.len() * 2 / 5;
            let mut fired = Vec::new();
            let poll = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _ = wheel.expire(20_000, usize::MAX, |e| {
                    fired.push(e.value);
                    assert_ne!(fired.len(), fails_at + 1, "the callback fails");
                });
            }));
            assert!(poll.is_err());
            assert_eq!(fired, order[..=fails_at], "{count} timers");
            assert_eq!(wheel.len(), order.len() - fails_at - 1);
            let rest: Vec<u32> = fire_all(&mut wheel, 20_000)
                .into_iter()
                .map(|(_, value)| value)
                .collect();
            assert_eq!(rest, order[fails_at + 1..], "{count} timers");
            assert!(wheel.is_empty());
        }
    }
}

#[test]
fn late_poll_gathers_the_next_slots_of_a_level_but_none_that_ends_after_now() {
    // Level-1 slots [64, 128) and [128, 192) fall due whole at 200 and are fired from one
    // batch; [192, 256) does not (230 is not due): its 195 fires, its 230 stays. Budgets of
    // every size stop the poll inside the batch; the rest must follow in order.
    let timers = [
        (0, 100),
        (1, 70),
        (2, 150),
        (3, 130),
        (4, 150),
        (5, 230),
        (6, 195),
    ];
    for budget in 1..=7 {
        for mut wheel in [vec_wheel(8_192), blocks_wheel(BLOCKS_CAPACITY)] {
            for (value, deadline) in timers {
                wheel.insert(deadline, value).unwrap();
            }
            let mut fired = Vec::new();
            loop {
                let sweep = wheel.expire(200, budget, |e| fired.push((e.deadline, e.value)));
                if !sweep.more_due {
                    break;
                }
            }
            assert_eq!(
                fired,
                [(70, 1), (100, 0), (130, 3), (150, 2), (150, 4), (195, 6)],
                "budget {budget}"
            );
            assert_eq!(wheel.len(), 1);
            assert_eq!(fire_all(&mut wheel, 300), [(230, 5)]);
        }
    }
}

/// A wheel of 2^19 timers (blocks of 64 cells, the largest) with one chain of several blocks,
/// about a third of its cells stale: every third timer cancelled, every fifth moved to the back.
/// Returns the wheel and the order its timers must fire in.
fn one_chain_of_64_cell_blocks() -> (VecWheel, Vec<(Tick, u32)>) {
    let mut wheel = vec_wheel(1 << 19);
    let ids: Vec<TimerId> = (0..300)
        .map(|value| wheel.insert(5_000, value).unwrap())
        .collect();
    assert_eq!(wheel.blocks.block_len(), 64);
    let mut moved = Vec::new();
    for (value, &id) in (0u32..).zip(&ids) {
        if value % 3 == 0 {
            assert_eq!(wheel.cancel(id), Ok(value));
        } else if value % 5 == 0 {
            wheel.reschedule(id, 5_000).unwrap();
            moved.push(value);
        }
    }
    let stays = (0..300).filter(|value| value % 3 != 0 && value % 5 != 0);
    let order = stays.chain(moved).map(|value| (5_000, value)).collect();
    (wheel, order)
}

/// Compaction's shortcut through a block (`live_mask`, which reads cells two by two) agrees with
/// asking each cell, for every range inside each block of a chain of 64-cell blocks.
#[test]
fn live_mask_matches_each_cells_liveness_in_64_cell_blocks() {
    let (wheel, _) = one_chain_of_64_cell_blocks();
    let (store, blocks) = (wheel.nodes.store(), &wheel.blocks);
    let mut live_cells = 0;
    for block in 1..=8 {
        let (data, past) = (blocks.data(block), blocks.past(block));
        for from in data..past {
            for end in from..=past {
                let expected = (from..end)
                    .filter(|&at| store.is_live(store.cell(at), at))
                    .fold(0u64, |mask, at| mask | 1 << (at - from));
                assert_eq!(
                    store.live_mask(from, end),
                    expected,
                    "block {block}, {from}..{end}"
                );
            }
        }
        live_cells += store.live_mask(data, past).count_ones();
    }
    // 300 timers, a third cancelled: 200 live cells, 40 of them the moved timers' new ones.
    assert_eq!(live_cells, 200);
}

/// Compaction in blocks of 64 cells keeps every live timer, in order: those that stayed, then
/// those moved to the back.
#[test]
fn compaction_in_64_cell_blocks_keeps_the_live_timers_in_order() {
    let (mut wheel, order) = one_chain_of_64_cell_blocks();
    let free_before = wheel.blocks.available();
    wheel.compact();
    // 340 cells (300 filed, 40 moved) took 6 blocks of 63 timers; the 200 live ones take 4.
    assert_eq!(wheel.blocks.available(), free_before + 2);
    assert_eq!(fire_all(&mut wheel, 5_000), order);
    assert!(wheel.is_empty());
}
