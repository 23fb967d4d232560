//! One checker for every timer queue against the `BTreeMap` reference model
//! ([`ReferenceQueue`]), shared by the seeded property tests
//! (`tests/queue_model.rs`), the `timer_queues` fuzz target and the corpus replay test.
//!
//! A driver makes a [`Run`] over an empty queue and feeds it [`Op`]s: insert (one or a burst,
//! on any list, through `TimerQueue::insert` or `insert_into`), cancel, reschedule, touch, move
//! between lists, edit through `get_mut`, expire with a budget, `pop_expired`,
//! `pop_expired_in(list, ..)`, `has_expired`, wake-ups at `next_deadline()`, `pop_any`, partial
//! and full drains, and probes with dead handles. An op names its choices loosely (a timer by an
//! index taken modulo the pending ones, a deadline relative to `now` or to a pending timer, a
//! time that jumps forward, to `u64::MAX` or backwards), so any op applies to any state: the
//! fuzz target decodes ops from bytes with `arbitrary` (feature `arbitrary`), the property tests
//! draw them from a seeded generator.
//!
//! What the checker asserts:
//!
//! - after every op the queue agrees with the model on `len`, `is_empty`, `is_full`,
//!   `capacity`, `next_deadline()` (exact; for the wheel never later than the earliest deadline,
//!   and `None` only when empty), `next_deadline_in(list)` for every list and one past the last,
//!   and each pending timer's deadline, value and list (every timer while at most 32 are pending
//!   or every 64th op, otherwise two of them);
//! - every timer handed out (expire, `pop_expired`, `pop_expired_in`, `pop_any`, drain) is the
//!   one the model expects, so fire order is equal and nothing fires early or late; `Expiry::
//!   fired` is exactly `min(due, budget)` and `more_due` exactly whether more are due;
//! - waking at `next_deadline()` fires at once on exact queues, and on the wheel after at most
//!   one early wake-up per level, each later than the last;
//! - every value leaves exactly once, or is handed back by a full queue (`Full(value)`, only at
//!   capacity); a new handle is inside the capacity, shares no slot with a pending timer and
//!   repeats no dead handle;
//! - dead handles (fired, cancelled, drained) are refused by `cancel`, `reschedule`, `touch`,
//!   `move_to`, `deadline`, `get`, `get_mut` and `list_of`, and change nothing, even once their
//!   slot holds another timer.

use std::any::type_name;
use std::collections::VecDeque;

use timer_core::{
    wheel, Expired, Full, HeapSlot, StaleTimer, Tick, TimeoutList, TimeoutLists, TimeoutListsOn,
    TimeoutSlot, TimerHeap, TimerHeapOn, TimerId, TimerQueue, TimerWheel, TimerWheelOn, WheelCells,
    WheelSlot,
};

use crate::model::{ReferenceQueue, Removed};

/// Capacity of every queue the fuzz target and the corpus replay drive: small, so that inputs
/// fill it and slots get reused.
pub const FUZZ_CAPACITY: usize = 16;

/// Lists of the multi-list queue the fuzz target drives, and fixed timeouts per input.
pub const LISTS: usize = 3;

/// Ops of one fuzz input beyond this are ignored (keeps each run fast).
pub const MAX_FUZZ_OPS: usize = 1_000;

/// Dead handles kept to probe; once full, each new one replaces the oldest.
pub const DEAD_POOL: usize = 128;

/// Ops remembered for a failure message.
const HISTORY: usize = 12;

/// The value stored with each timer: `serial` is unique per insert attempt, `touches` counts
/// edits through `get_mut`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Payload {
    serial: u32,
    touches: u32,
}

/// What happened to each value offered to the queue, indexed by serial.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fate {
    /// Accepted and not yet out.
    Pending,
    /// Fired, cancelled, or drained.
    Left,
    /// Handed back by a full queue.
    Refused,
}

/// How exact `next_deadline()` must be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NextDeadline {
    /// Equal to the earliest pending deadline.
    Exact,
    /// At most the earliest pending deadline (the start of the wheel slot holding it).
    NoLater,
}

/// The queue API under test, with the list operations of [`TimeoutLists`] where there are any
/// (a queue without lists has one, list 0).
pub trait QueueUnderTest: TimerQueue<Payload> {
    /// A new, empty queue of [`CAPACITY`](Self::CAPACITY) (inline, or over slots allocated
    /// here: the two storage forms).
    fn fresh() -> Self;

    /// How exact `next_deadline()` is.
    const NEXT_DEADLINE: NextDeadline;
    /// Whether `insert_into`, `move_to`, `touch`, `list_of`, `next_deadline_in` and
    /// `pop_expired_in` exist.
    const HAS_LISTS: bool = false;
    /// How many lists.
    const LISTS: usize = 1;
    /// The capacity the type was made with.
    const CAPACITY: usize;

    /// `insert_into(list, ..)`, or `insert` for list 0 of a queue without lists.
    ///
    /// # Errors
    ///
    /// `Full(value)` when the queue is full.
    fn insert_on(
        &mut self,
        list: usize,
        deadline: Tick,
        value: Payload,
    ) -> Result<TimerId, Full<Payload>> {
        assert_eq!(list, 0, "a queue without lists has only list 0");
        self.insert(deadline, value)
    }

    /// `move_to`, or `reschedule` on a queue without lists.
    ///
    /// # Errors
    ///
    /// [`StaleTimer`] for a handle that names no pending timer.
    fn move_on(&mut self, id: TimerId, list: usize, deadline: Tick) -> Result<(), StaleTimer> {
        assert_eq!(list, 0, "a queue without lists has only list 0");
        self.reschedule(id, deadline)
    }

    /// `touch`, or `reschedule` on a queue without lists.
    ///
    /// # Errors
    ///
    /// [`StaleTimer`] for a handle that names no pending timer.
    fn touch_timer(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer> {
        self.reschedule(id, deadline)
    }

    /// `list_of`, or list 0 for every pending timer of a queue without lists.
    fn list_of_timer(&self, id: TimerId) -> Option<usize> {
        self.deadline(id).map(|_| 0)
    }

    /// `next_deadline_in`, or `next_deadline()` for list 0 of a queue without lists.
    fn next_deadline_on(&self, list: usize) -> Option<Tick> {
        if list == 0 {
            self.next_deadline()
        } else {
            None
        }
    }

    /// `pop_expired_in`, or `pop_expired` for list 0 of a queue without lists.
    fn pop_expired_on(&mut self, list: usize, now: Tick) -> Option<Expired<Payload>> {
        if list == 0 {
            self.pop_expired(now)
        } else {
            None
        }
    }
}

/// `N` slots in a `Vec`, allocated when the queue is made: the caller-provided storage form
/// (`with_storage`), sized at run time as a host sizes it, with `N` in the type so the checker
/// knows the capacity.
pub struct VecSlots<E, const N: usize>(Vec<E>);

impl<E: Default, const N: usize> VecSlots<E, N> {
    fn new() -> Self {
        Self((0..N).map(|_| E::default()).collect())
    }
}

impl<E, const N: usize> AsRef<[E]> for VecSlots<E, N> {
    fn as_ref(&self) -> &[E] {
        &self.0
    }
}

impl<E, const N: usize> AsMut<[E]> for VecSlots<E, N> {
    fn as_mut(&mut self) -> &mut [E] {
        &mut self.0
    }
}

/// A wheel over caller-provided slots.
pub type SliceWheel<const N: usize> =
    TimerWheelOn<Payload, VecSlots<WheelSlot<Payload>, N>, VecSlots<WheelCells, N>>;
/// Capacity of the wheel [`check_all_queues`] runs in the blocks layout: about the smallest
/// that layout has room for (blocks of four cells, after the lists' live counts).
pub const BLOCKS_CAPACITY: usize = 9_216;

/// `N` slots in a `Vec` for a wheel made with `with_storage_in_blocks`: the blocks layout the
/// wheel uses from 2^19 timers, at a capacity small enough to fill and compact in a test.
pub struct BlockSlots<E, const N: usize>(VecSlots<E, N>);

impl<E, const N: usize> AsRef<[E]> for BlockSlots<E, N> {
    fn as_ref(&self) -> &[E] {
        self.0.as_ref()
    }
}

impl<E, const N: usize> AsMut<[E]> for BlockSlots<E, N> {
    fn as_mut(&mut self) -> &mut [E] {
        self.0.as_mut()
    }
}

/// A wheel over caller-provided slots, in the blocks layout at any capacity.
pub type BlocksWheel<const N: usize> =
    TimerWheelOn<Payload, BlockSlots<WheelSlot<Payload>, N>, VecSlots<WheelCells, N>>;
/// A heap over caller-provided slots.
pub type SliceHeap<const N: usize, const D: usize> =
    TimerHeapOn<Payload, VecSlots<HeapSlot<Payload>, N>, D>;
/// Timeout lists over caller-provided slots.
pub type SliceLists<const N: usize, const L: usize> =
    TimeoutListsOn<Payload, VecSlots<TimeoutSlot<Payload>, N>, L>;

impl<const N: usize> QueueUnderTest for TimerWheel<Payload, N> {
    fn fresh() -> Self {
        Self::new()
    }
    const NEXT_DEADLINE: NextDeadline = NextDeadline::NoLater;
    const CAPACITY: usize = N;
}

impl<const N: usize> QueueUnderTest for SliceWheel<N> {
    fn fresh() -> Self {
        Self::with_storage(VecSlots::new(), VecSlots::new())
    }
    const NEXT_DEADLINE: NextDeadline = NextDeadline::NoLater;
    const CAPACITY: usize = N;
}

impl<const N: usize> QueueUnderTest for BlocksWheel<N> {
    fn fresh() -> Self {
        Self::with_storage_in_blocks(BlockSlots(VecSlots::new()), VecSlots::new())
    }
    const NEXT_DEADLINE: NextDeadline = NextDeadline::NoLater;
    const CAPACITY: usize = N;
}

impl<const N: usize, const D: usize> QueueUnderTest for TimerHeap<Payload, N, D> {
    fn fresh() -> Self {
        Self::new()
    }
    const NEXT_DEADLINE: NextDeadline = NextDeadline::Exact;
    const CAPACITY: usize = N;
}

impl<const N: usize, const D: usize> QueueUnderTest for SliceHeap<N, D> {
    fn fresh() -> Self {
        Self::with_storage(VecSlots::new())
    }
    const NEXT_DEADLINE: NextDeadline = NextDeadline::Exact;
    const CAPACITY: usize = N;
}

/// The list operations of [`TimeoutListsOn`], shared by both storage forms.
macro_rules! timeout_lists_under_test {
    () => {
        const NEXT_DEADLINE: NextDeadline = NextDeadline::Exact;
        const HAS_LISTS: bool = true;
        const LISTS: usize = L;
        const CAPACITY: usize = N;

        fn insert_on(
            &mut self,
            list: usize,
            deadline: Tick,
            value: Payload,
        ) -> Result<TimerId, Full<Payload>> {
            self.insert_into(list, deadline, value)
        }

        fn move_on(&mut self, id: TimerId, list: usize, deadline: Tick) -> Result<(), StaleTimer> {
            self.move_to(id, list, deadline)
        }

        fn touch_timer(&mut self, id: TimerId, deadline: Tick) -> Result<(), StaleTimer> {
            self.touch(id, deadline)
        }

        fn list_of_timer(&self, id: TimerId) -> Option<usize> {
            self.list_of(id)
        }

        fn next_deadline_on(&self, list: usize) -> Option<Tick> {
            self.next_deadline_in(list)
        }

        fn pop_expired_on(&mut self, list: usize, now: Tick) -> Option<Expired<Payload>> {
            self.pop_expired_in(list, now)
        }
    };
}

impl<const N: usize, const L: usize> QueueUnderTest for SliceLists<N, L> {
    fn fresh() -> Self {
        Self::with_storage(VecSlots::new())
    }
    timeout_lists_under_test!();
}

impl<const N: usize, const L: usize> QueueUnderTest for TimeoutLists<Payload, N, L> {
    fn fresh() -> Self {
        Self::new()
    }
    timeout_lists_under_test!();
}

/// A starting time.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Start {
    /// 0.
    Zero,
    /// A small time.
    Small(u16),
    /// Anywhere.
    Any(u64),
    /// `u64::MAX` less this.
    NearMax(u32),
    /// `u64::MAX`.
    Max,
}

impl Start {
    /// The tick.
    pub fn tick(self) -> Tick {
        match self {
            Self::Zero => 0,
            Self::Small(t) => Tick::from(t),
            Self::Any(t) => t,
            Self::NearMax(back) => Tick::MAX - Tick::from(back),
            Self::Max => Tick::MAX,
        }
    }
}

/// A new deadline, mostly relative to `now` or to a pending timer. Sums saturate.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum When {
    /// `now`.
    Now,
    /// `now` plus the list's fixed timeout (what `TimeoutLists` is made for).
    Timeout,
    /// `now + (d % 64)`.
    Soon(u8),
    /// `now + d`.
    Later(u16),
    /// `now + d`.
    Far(u32),
    /// `now + (bits >> (shift % 64))`: anywhere up to `u64::MAX`.
    VeryFar {
        /// The distance before the shift.
        bits: u64,
        /// Right shift, modulo 64.
        shift: u8,
    },
    /// Exactly this tick.
    Absolute(u64),
    /// `u64::MAX - (back % 64)`.
    NearMax(u8),
    /// `u64::MAX`.
    Max,
    /// `now - d`.
    Past(u16),
    /// The deadline of a pending timer, picked modulo the pending ones (a tie); `now` if none.
    SameAs(u32),
    /// One tick after (or before) a pending timer's deadline.
    NextTo {
        /// Which pending timer, modulo the pending ones.
        pick: u32,
        /// After, or before.
        after: bool,
    },
    /// The timer's own deadline when moving one (it must still move behind the others due
    /// then); `now` for an insert.
    Unchanged,
}

/// The `now` of an expiry (or of `pop_expired`, `has_expired`). Sums saturate.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Time {
    /// `now` again.
    Same,
    /// `now + (d % 64)`.
    Forward(u8),
    /// `now + d`.
    ForwardMore(u16),
    /// `now + (bits >> (shift % 64))`.
    Jump {
        /// The distance before the shift.
        bits: u64,
        /// Right shift, modulo 64.
        shift: u8,
    },
    /// `u64::MAX - (back % 4)`.
    NearMax(u8),
    /// `u64::MAX`.
    Max,
    /// `now - d`.
    Back(u16),
    /// Anywhere in `0..=now` (`t` modulo `now + 1`).
    BackTo(u64),
    /// The model's earliest deadline (`now` if none).
    Next,
    /// One tick before it.
    JustBeforeNext,
    /// A pending timer's deadline, picked modulo the pending ones.
    DeadlineOf(u32),
}

/// How many timers one expiry may fire.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Budget {
    /// `usize::MAX`.
    Unlimited,
    /// 0.
    Zero,
    /// 1.
    One,
    /// `n % 65`.
    Few(u8),
    /// `n`.
    Many(u16),
}

impl Budget {
    /// The budget.
    pub fn count(self) -> usize {
        match self {
            Self::Unlimited => usize::MAX,
            Self::Zero => 0,
            Self::One => 1,
            Self::Few(n) => usize::from(n % 65),
            Self::Many(n) => usize::from(n),
        }
    }
}

/// One step. Lists are taken modulo the queue's lists; a pick of a pending timer is taken
/// modulo the pending ones, and with none pending probes a dead handle instead.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Op {
    /// One insert; `via_trait` files it with `TimerQueue::insert` when the list is 0.
    Insert {
        /// The list.
        list: u8,
        /// The deadline.
        when: When,
        /// Through `TimerQueue::insert` rather than `insert_into`.
        via_trait: bool,
    },
    /// `count % (capacity + 4) + 1` inserts in a row (at least one past full); with `shared`
    /// all at one deadline, otherwise one tick apart.
    Burst {
        /// The list.
        list: u8,
        /// How many, modulo `capacity + 4`, plus one.
        count: u32,
        /// The first deadline.
        when: When,
        /// One deadline for all.
        shared: bool,
    },
    /// `cancel`.
    Cancel {
        /// Which pending timer.
        pick: u32,
    },
    /// `reschedule`.
    Reschedule {
        /// Which pending timer.
        pick: u32,
        /// The new deadline.
        when: When,
    },
    /// `touch`.
    Touch {
        /// Which pending timer.
        pick: u32,
        /// The new deadline.
        when: When,
    },
    /// `move_to` (to another list, or with `None` to the timer's own).
    MoveTo {
        /// Which pending timer.
        pick: u32,
        /// The new list; `None` keeps the timer's list.
        list: Option<u8>,
        /// The new deadline.
        when: When,
    },
    /// An edit through `get_mut`.
    Edit {
        /// Which pending timer.
        pick: u32,
    },
    /// `expire(now, budget)`.
    Expire {
        /// The new `now`.
        time: Time,
        /// The budget.
        budget: Budget,
    },
    /// `pop_expired(now)`.
    PopExpired {
        /// The new `now`.
        time: Time,
    },
    /// `pop_expired_in(list, now)`.
    PopExpiredIn {
        /// The list.
        list: u8,
        /// The new `now`.
        time: Time,
    },
    /// `has_expired(now)`.
    HasExpired {
        /// The new `now`.
        time: Time,
    },
    /// A server loop's wake-up: expire at the queue's own `next_deadline()`, again until a
    /// timer fires.
    WakeAtNextDeadline,
    /// `pop_any`.
    PopAny,
    /// The first `take` items of `drain()` (all of them when nothing is pending).
    Drain {
        /// How many.
        take: u32,
    },
    /// All of `drain()`.
    DrainAll,
    /// Every operation on a dead handle, picked modulo the dead pool.
    ProbeDead {
        /// Which dead handle.
        pick: u32,
    },
}

/// How a run ends before its last checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Finish {
    /// `expire(u64::MAX, usize::MAX)`.
    ExpireAll,
    /// `drain()` to the end.
    DrainAll,
}

/// One fuzz input: the same start, timeouts and ops for each queue of [`check_all_queues`].
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct QueueInput {
    /// The starting time.
    pub start: Start,
    /// A fixed timeout per list (for [`When::Timeout`]).
    pub timeouts: [u32; LISTS],
    /// How the run ends.
    pub finish: Finish,
    /// The ops; those past [`MAX_FUZZ_OPS`] are ignored.
    pub ops: Vec<Op>,
}

/// Runs `input` on every queue: [`TimerWheel`], [`TimerHeap`] with arity 2 and 4,
/// [`TimeoutList`], and [`TimeoutLists`] with [`LISTS`] lists, each of [`FUZZ_CAPACITY`], and
/// the wheel, the heap and the lists again over slots the caller provides ([`SliceWheel`],
/// [`SliceHeap`], [`SliceLists`]), and a wheel of [`BLOCKS_CAPACITY`] in the blocks layout
/// ([`BlocksWheel`]).
///
/// # Panics
///
/// When a queue and the model disagree.
pub fn check_all_queues(input: &QueueInput) {
    check_input::<TimerWheel<Payload, FUZZ_CAPACITY>>(input);
    check_input::<TimerHeap<Payload, FUZZ_CAPACITY, 2>>(input);
    check_input::<TimerHeap<Payload, FUZZ_CAPACITY, 4>>(input);
    check_input::<TimeoutList<Payload, FUZZ_CAPACITY>>(input);
    check_input::<TimeoutLists<Payload, FUZZ_CAPACITY, LISTS>>(input);
    // The same queues over slots the caller provides.
    check_input::<SliceWheel<FUZZ_CAPACITY>>(input);
    check_input::<SliceHeap<FUZZ_CAPACITY, 4>>(input);
    check_input::<SliceLists<FUZZ_CAPACITY, LISTS>>(input);
    check_input::<BlocksWheel<BLOCKS_CAPACITY>>(input);
}

/// Runs `input` on a fresh queue of type `Q`.
///
/// # Panics
///
/// When the queue and the model disagree.
pub fn check_input<Q: QueueUnderTest>(input: &QueueInput) {
    let mut queue = Q::fresh();
    let timeouts = input.timeouts.map(Tick::from);
    let mut run = Run::new(&mut queue, input.start.tick(), &timeouts, String::new());
    for &op in input.ops.iter().take(MAX_FUZZ_OPS) {
        run.step(op);
    }
    run.finish(input.finish);
}

/// Events the ops produced, so that a generator that drifts into exercising nothing can be
/// caught instead of passing quietly.
#[derive(Clone, Copy, Default, Debug)]
pub struct Coverage {
    /// Inserts a full queue handed back.
    pub full_refusals: usize,
    /// Expiries cut short by their budget (`more_due` set).
    pub budget_cuts: usize,
    /// Timers fired right after one with the same deadline.
    pub tied_fires: usize,
    /// ... of which on a different list.
    pub tied_fires_across_lists: usize,
    /// Expiries with `now` earlier than the one before.
    pub backwards_expiries: usize,
    /// Timers fired with a deadline within 64 ticks of `u64::MAX`.
    pub fires_near_max: usize,
    /// Wake-ups at `next_deadline()` that fired nothing (wheel only).
    pub early_wakes: usize,
    /// Dead handles probed while another timer held their slot.
    pub probes_of_reused_slots: usize,
    /// Timers moved to another list.
    pub moves_between_lists: usize,
    /// Timers `pop_expired_in` took from a list other than the one due first overall.
    pub pops_from_a_later_list: usize,
}

impl Coverage {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &Self) {
        self.full_refusals += other.full_refusals;
        self.budget_cuts += other.budget_cuts;
        self.tied_fires += other.tied_fires;
        self.tied_fires_across_lists += other.tied_fires_across_lists;
        self.backwards_expiries += other.backwards_expiries;
        self.fires_near_max += other.fires_near_max;
        self.early_wakes += other.early_wakes;
        self.probes_of_reused_slots += other.probes_of_reused_slots;
        self.moves_between_lists += other.moves_between_lists;
        self.pops_from_a_later_list += other.pops_from_a_later_list;
    }

    /// The events a queue of type `Q` can produce that never happened.
    pub fn missing<Q: QueueUnderTest>(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        let mut need = |count: usize, what: &'static str| {
            if count == 0 {
                missing.push(what);
            }
        };
        need(self.full_refusals, "full_refusals");
        need(self.budget_cuts, "budget_cuts");
        need(self.tied_fires, "tied_fires");
        need(self.backwards_expiries, "backwards_expiries");
        need(self.fires_near_max, "fires_near_max");
        need(self.probes_of_reused_slots, "probes_of_reused_slots");
        if Q::NEXT_DEADLINE == NextDeadline::NoLater {
            need(self.early_wakes, "early_wakes");
        }
        if Q::LISTS > 1 {
            need(self.moves_between_lists, "moves_between_lists");
            need(self.tied_fires_across_lists, "tied_fires_across_lists");
            need(self.pops_from_a_later_list, "pops_from_a_later_list");
        }
        missing
    }
}

/// One queue, its model, and the bookkeeping to compare them.
pub struct Run<'q, Q> {
    queue: &'q mut Q,
    model: ReferenceQueue<Payload>,
    /// Where a failure message says the run came from (a seed and how to replay it).
    label: String,
    step: usize,
    now: Tick,
    timeouts: Vec<Tick>,
    fates: Vec<Fate>,
    dead: Vec<TimerId>,
    /// Which dead handle a new one replaces once the pool is full.
    dead_cursor: usize,
    /// Which dead handles the next consistency check probes.
    probe_cursor: usize,
    /// The order of pending timers among equal deadlines on one list, by slot: the model's
    /// sequence number, mirrored for `pop_expired_in` (inserts and moves both renumber).
    order: Vec<u64>,
    next_order: u64,
    history: VecDeque<(Tick, Op)>,
    coverage: Coverage,
}

impl<'q, Q: QueueUnderTest> Run<'q, Q> {
    /// A run over `queue`, which must be empty, starting at `start`; `timeouts` are the fixed
    /// timeouts of the lists (list `i` uses `timeouts[i % len]`; none means 0).
    ///
    /// # Panics
    ///
    /// If `queue` is not empty.
    pub fn new(queue: &'q mut Q, start: Tick, timeouts: &[Tick], label: String) -> Self {
        assert!(queue.is_empty(), "a run starts on an empty queue");
        Self {
            queue,
            model: ReferenceQueue::new(),
            label,
            step: 0,
            now: start,
            timeouts: timeouts.to_vec(),
            fates: Vec::new(),
            dead: Vec::new(),
            dead_cursor: 0,
            probe_cursor: 0,
            order: Vec::new(),
            next_order: 0,
            history: VecDeque::with_capacity(HISTORY),
            coverage: Coverage::default(),
        }
    }

    /// Timers pending.
    pub fn pending(&self) -> usize {
        self.model.len()
    }

    /// The queue's capacity.
    pub fn capacity(&self) -> usize {
        self.queue.capacity()
    }

    /// The time of the latest op.
    pub fn now(&self) -> Tick {
        self.now
    }

    /// Ops applied so far.
    pub fn steps(&self) -> usize {
        self.step
    }

    /// Applies `op`, then checks that queue and model agree on everything observable.
    ///
    /// # Panics
    ///
    /// When they do not.
    pub fn step(&mut self, op: Op) {
        self.apply(op);
        self.check();
    }

    /// Applies `op` with only the checks of the op itself (for a driver that fills a big queue
    /// and checks once after).
    ///
    /// # Panics
    ///
    /// When the queue and the model disagree.
    pub fn apply(&mut self, op: Op) {
        self.step += 1;
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back((self.now, op));
        match op {
            Op::Insert {
                list,
                when,
                via_trait,
            } => {
                let list = self.list(list);
                let at = self.deadline(when, list, None);
                self.insert(list, at, via_trait);
            }
            Op::Burst {
                list,
                count,
                when,
                shared,
            } => {
                let list = self.list(list);
                let first = self.deadline(when, list, None);
                let count = count as usize % (self.capacity() + 4) + 1;
                for i in 0..count {
                    let at = if shared {
                        first
                    } else {
                        first.saturating_add(i as Tick)
                    };
                    self.insert(list, at, i % 2 == 1);
                }
            }
            Op::Cancel { pick } => self.cancel(pick),
            Op::Reschedule { pick, when } => self.move_timer(pick, None, when, false),
            Op::Touch { pick, when } => self.move_timer(pick, None, when, true),
            Op::MoveTo { pick, list, when } => {
                let to = Some(list.map(|list| self.list(list)));
                self.move_timer(pick, to, when, false);
            }
            Op::Edit { pick } => self.edit(pick),
            Op::Expire { time, budget } => {
                let now = self.time(time);
                self.expire(now, budget.count());
            }
            Op::PopExpired { time } => {
                let now = self.time(time);
                self.pop_expired(now);
            }
            Op::PopExpiredIn { list, time } => {
                let list = self.list(list);
                let now = self.time(time);
                self.pop_expired_in(list, now);
            }
            Op::HasExpired { time } => {
                let now = self.time(time);
                self.now = now;
                assert_eq!(
                    self.queue.has_expired(now),
                    self.model.is_due(now),
                    "has_expired({now}){}",
                    self.ctx()
                );
            }
            Op::WakeAtNextDeadline => self.wake_at_next_deadline(),
            Op::PopAny => {
                let got = self.queue.pop_any();
                self.check_any("pop_any", got);
            }
            Op::Drain { take } => self.drain(take as usize),
            Op::DrainAll => self.drain(usize::MAX),
            Op::ProbeDead { pick } => self.probe_dead(pick as usize),
        }
    }

    /// Where a failure happened and how to replay it.
    fn ctx(&self) -> String {
        format!(
            "\n  queue {}, step {}, now {}, model len {}\n  last ops (oldest first, with their \
             now): {:?}\n  {}",
            type_name::<Q>(),
            self.step,
            self.now,
            self.model.len(),
            self.history,
            self.label,
        )
    }

    // ---- resolving an op's choices ----

    fn list(&self, list: u8) -> usize {
        usize::from(list) % Q::LISTS
    }

    fn live(&self, pick: u32) -> Option<TimerId> {
        let live = self.model.live();
        (!live.is_empty()).then(|| live[pick as usize % live.len()])
    }

    fn live_deadline(&self, pick: u32) -> Option<Tick> {
        self.live(pick).and_then(|id| self.model.deadline(id))
    }

    /// The deadline `when` names for a timer on `list`; `own` is the timer being moved.
    fn deadline(&self, when: When, list: usize, own: Option<TimerId>) -> Tick {
        let now = self.now;
        match when {
            When::Now => now,
            When::Timeout => {
                let timeout = match self.timeouts.len() {
                    0 => 0,
                    len => self.timeouts[list % len],
                };
                now.saturating_add(timeout)
            }
            When::Soon(d) => now.saturating_add(Tick::from(d % 64)),
            When::Later(d) => now.saturating_add(Tick::from(d)),
            When::Far(d) => now.saturating_add(Tick::from(d)),
            When::VeryFar { bits, shift } => now.saturating_add(bits >> (shift % 64)),
            When::Absolute(t) => t,
            When::NearMax(back) => Tick::MAX - Tick::from(back % 64),
            When::Max => Tick::MAX,
            When::Past(d) => now.saturating_sub(Tick::from(d)),
            When::SameAs(pick) => self.live_deadline(pick).unwrap_or(now),
            When::NextTo { pick, after } => {
                let near = self.live_deadline(pick).unwrap_or(now);
                if after {
                    near.saturating_add(1)
                } else {
                    near.saturating_sub(1)
                }
            }
            When::Unchanged => own.and_then(|id| self.model.deadline(id)).unwrap_or(now),
        }
    }

    fn time(&self, time: Time) -> Tick {
        let now = self.now;
        match time {
            Time::Same => now,
            Time::Forward(d) => now.saturating_add(Tick::from(d % 64)),
            Time::ForwardMore(d) => now.saturating_add(Tick::from(d)),
            Time::Jump { bits, shift } => now.saturating_add(bits >> (shift % 64)),
            Time::NearMax(back) => Tick::MAX - Tick::from(back % 4),
            Time::Max => Tick::MAX,
            Time::Back(d) => now.saturating_sub(Tick::from(d)),
            Time::BackTo(t) => t % now.saturating_add(1).max(1),
            Time::Next => self.model.next_deadline().unwrap_or(now),
            Time::JustBeforeNext => self
                .model
                .next_deadline()
                .map_or(now, |at| at.saturating_sub(1)),
            Time::DeadlineOf(pick) => self.live_deadline(pick).unwrap_or(now),
        }
    }

    // ---- bookkeeping ----

    fn new_payload(&mut self) -> Payload {
        let serial = u32::try_from(self.fates.len()).expect("fewer than 2^32 values per run");
        self.fates.push(Fate::Pending);
        Payload { serial, touches: 0 }
    }

    /// Records where `id` now sits among equal deadlines on its list.
    fn renumber(&mut self, id: TimerId) {
        if self.order.len() <= id.index() {
            self.order.resize(id.index() + 1, 0);
        }
        self.order[id.index()] = self.next_order;
        self.next_order += 1;
    }

    /// A value left the queue (fired, cancelled, drained) under handle `id`: it must have been
    /// pending until now.
    fn leave(&mut self, id: TimerId, value: Payload) {
        let fate = self.fates.get(value.serial as usize).copied();
        assert_eq!(
            fate,
            Some(Fate::Pending),
            "value {value:?} left the queue but was not pending{}",
            self.ctx()
        );
        self.fates[value.serial as usize] = Fate::Left;
        if self.dead.len() < DEAD_POOL {
            self.dead.push(id);
        } else {
            self.dead[self.dead_cursor % DEAD_POOL] = id;
            self.dead_cursor += 1;
        }
    }

    /// Checks a timer the queue handed out against the model's copy of it, and retires it.
    fn check_removed(
        &mut self,
        how: &str,
        got: Expired<Payload>,
        expected: Option<Removed<Payload>>,
    ) {
        let got = Removed {
            id: got.id,
            deadline: got.deadline,
            value: got.value,
        };
        assert_eq!(
            Some(&got),
            expected.as_ref(),
            "{how}: the queue handed out (left) what the model does not expect (right){}",
            self.ctx()
        );
        self.leave(got.id, got.value);
    }

    // ---- operations ----

    fn insert(&mut self, list: usize, at: Tick, via_trait: bool) {
        let value = self.new_payload();
        let before = self.model.len();
        let capacity = self.capacity();
        // `TimerQueue::insert` files on list 0: exercise it as well as `insert_into`.
        let result = if list == 0 && via_trait {
            self.queue.insert(at, value)
        } else {
            self.queue.insert_on(list, at, value)
        };
        match result {
            Ok(id) => {
                assert!(
                    before < capacity,
                    "insert into a queue holding {before} of {capacity} succeeded{}",
                    self.ctx()
                );
                assert!(
                    id.index() < capacity,
                    "{id:?} is outside the capacity{}",
                    self.ctx()
                );
                if let Some(occupant) = self.model.occupant(id.index()) {
                    panic!(
                        "new {id:?} shares its slot with pending {occupant:?}{}",
                        self.ctx()
                    );
                }
                assert!(
                    !self.dead.contains(&id),
                    "new {id:?} repeats a dead handle{}",
                    self.ctx()
                );
                self.model.insert(id, at, list, value);
                self.renumber(id);
                self.check_timer(id);
            }
            Err(Full(back)) => {
                assert_eq!(
                    before,
                    capacity,
                    "insert refused with {before} of {capacity} slots taken{}",
                    self.ctx()
                );
                assert_eq!(
                    back,
                    value,
                    "a full queue handed back another value{}",
                    self.ctx()
                );
                self.fates[value.serial as usize] = Fate::Refused;
                self.coverage.full_refusals += 1;
            }
        }
    }

    fn cancel(&mut self, pick: u32) {
        let Some(id) = self.live(pick) else {
            return self.probe_dead(pick as usize);
        };
        let got = self.queue.cancel(id);
        let expected = self.model.remove(id).map(|removed| removed.value);
        assert_eq!(got.ok(), expected, "cancel({id:?}){}", self.ctx());
        if let Some(value) = expected {
            self.leave(id, value);
        }
    }

    /// Reschedule, touch, or `move_to` (`to`: a list, or `None` for the timer's own): each
    /// orders after equal deadlines.
    fn move_timer(&mut self, pick: u32, to: Option<Option<usize>>, when: When, touch: bool) {
        let Some(id) = self.live(pick) else {
            return self.probe_dead(pick as usize);
        };
        let current = self.model.list_of(id).unwrap_or(0);
        let list = to.flatten().unwrap_or(current);
        let at = self.deadline(when, list, Some(id));
        let result = if to.is_some() {
            self.queue.move_on(id, list, at)
        } else if touch {
            self.queue.touch_timer(id, at)
        } else {
            self.queue.reschedule(id, at)
        };
        assert_eq!(
            result,
            Ok(()),
            "moving pending {id:?} to {at} on list {list} failed{}",
            self.ctx()
        );
        if list != current {
            self.coverage.moves_between_lists += 1;
        }
        assert!(self.model.reschedule(id, at, list));
        self.renumber(id);
        self.check_timer(id);
    }

    /// Changes a pending value through `get_mut`.
    fn edit(&mut self, pick: u32) {
        let Some(id) = self.live(pick) else {
            return self.probe_dead(pick as usize);
        };
        let edited = self.queue.get_mut(id).map(|value| {
            value.touches += 1;
            *value
        });
        let expected = self.model.get_mut(id).map(|value| {
            value.touches += 1;
            *value
        });
        assert!(
            edited.is_some(),
            "get_mut({id:?}) of a pending timer is None{}",
            self.ctx()
        );
        assert_eq!(edited, expected, "get_mut({id:?}){}", self.ctx());
        self.check_timer(id);
    }

    /// Expires at `now` with `budget` and checks the firing order, count, and `more_due`.
    /// Returns how many fired.
    fn expire(&mut self, now: Tick, budget: usize) -> usize {
        if now < self.now {
            self.coverage.backwards_expiries += 1;
        }
        self.now = now;
        let due = self.model.due_count(now);
        let mut fired = Vec::new();
        let expiry = self
            .queue
            .expire(now, budget, |expired| fired.push(expired));
        let expected = due.min(budget);
        assert_eq!(
            (expiry.fired, fired.len()),
            (expected, expected),
            "expire({now}, {budget}) with {due} due: (Expiry::fired, timers fired){}",
            self.ctx()
        );
        let count = fired.len();
        for pair in fired.windows(2) {
            if pair[0].deadline == pair[1].deadline {
                self.coverage.tied_fires += 1;
                if self.model.list_of(pair[0].id) != self.model.list_of(pair[1].id) {
                    self.coverage.tied_fires_across_lists += 1;
                }
            }
        }
        for expired in fired {
            if expired.deadline >= u64::MAX - 64 {
                self.coverage.fires_near_max += 1;
            }
            assert!(
                expired.deadline <= now,
                "{expired:?} fired early at {now}{}",
                self.ctx()
            );
            let expected = self.model.pop_due(now);
            self.check_removed("expire", expired, expected);
        }
        assert_eq!(
            expiry.more_due,
            due > budget,
            "expire({now}, {budget}) with {due} due: more_due{}",
            self.ctx()
        );
        assert_eq!(
            expiry.more_due,
            self.model.is_due(now),
            "more_due after firing {count} of budget {budget}{}",
            self.ctx()
        );
        if expiry.more_due {
            self.coverage.budget_cuts += 1;
        }
        count
    }

    fn pop_expired(&mut self, now: Tick) {
        self.now = now;
        let got = self.queue.pop_expired(now);
        let expected = self.model.pop_due(now);
        match got {
            Some(expired) => self.check_removed("pop_expired", expired, expected),
            None => assert_eq!(
                expected,
                None,
                "pop_expired({now}) is None but a timer is due{}",
                self.ctx()
            ),
        }
    }

    /// The first timer due at `now` on `list`: earliest deadline, then the earliest insert or
    /// move among equal deadlines.
    fn first_due_in(&self, list: usize, now: Tick) -> Option<TimerId> {
        self.model
            .live()
            .iter()
            .copied()
            .filter(|&id| self.model.list_of(id) == Some(list))
            .filter_map(|id| Some((self.model.deadline(id)?, self.order[id.index()], id)))
            .filter(|&(deadline, _, _)| deadline <= now)
            .min()
            .map(|(_, _, id)| id)
    }

    /// The first timer due at `now` on any list: the one `pop_expired` takes.
    fn first_due(&self, now: Tick) -> Option<TimerId> {
        (0..Q::LISTS)
            .filter_map(|list| self.first_due_in(list, now))
            .filter_map(|id| Some((self.model.deadline(id)?, self.model.list_of(id)?, id)))
            .min()
            .map(|(_, _, id)| id)
    }

    fn pop_expired_in(&mut self, list: usize, now: Tick) {
        self.now = now;
        let got = self.queue.pop_expired_on(list, now);
        let first = self.first_due_in(list, now);
        if first.is_some() && first != self.first_due(now) {
            self.coverage.pops_from_a_later_list += 1;
        }
        let expected = first.and_then(|id| self.model.remove(id));
        match got {
            Some(expired) => {
                self.check_removed(&format!("pop_expired_in({list}, {now})"), expired, expected);
            }
            None => assert_eq!(
                expected,
                None,
                "pop_expired_in({list}, {now}) is None but a timer on it is due{}",
                self.ctx()
            ),
        }
    }

    /// A server loop's wake-up: sleep until `next_deadline()`, expire there, until a timer fires.
    /// Exact queues fire at the first wake-up; the wheel may wake early at most once per level,
    /// and each early answer must be later than the one before.
    fn wake_at_next_deadline(&mut self) {
        let mut previous: Option<Tick> = None;
        for early_wakes in 0.. {
            let Some(next) = self.queue.next_deadline() else {
                assert!(
                    self.model.is_empty(),
                    "next_deadline() is None with timers pending{}",
                    self.ctx()
                );
                return;
            };
            let earliest = self.model.next_deadline();
            assert!(
                earliest.is_some_and(|earliest| next <= earliest),
                "next_deadline() {next} is later than the earliest deadline {earliest:?}{}",
                self.ctx()
            );
            if let Some(previous) = previous {
                assert!(
                    next > previous,
                    "an early wake-up at {previous} made no progress: next is {next}{}",
                    self.ctx()
                );
            }
            assert!(
                early_wakes < wheel::LEVELS,
                "{early_wakes} early wake-ups and still not at the earliest deadline{}",
                self.ctx()
            );
            if self.expire(next, usize::MAX) > 0 {
                return;
            }
            assert_eq!(
                Q::NEXT_DEADLINE,
                NextDeadline::NoLater,
                "waking at the exact next_deadline() {next} fired nothing{}",
                self.ctx()
            );
            previous = Some(next);
            self.coverage.early_wakes += 1;
        }
    }

    /// A timer from `pop_any` or `drain`: any pending one, each once.
    fn check_any(&mut self, how: &str, got: Option<Expired<Payload>>) {
        match got {
            Some(got) => {
                let expected = self.model.remove(got.id);
                self.check_removed(how, got, expected);
            }
            None => assert!(
                self.model.is_empty(),
                "{how} gave nothing with {} pending{}",
                self.model.len(),
                self.ctx()
            ),
        }
    }

    /// Takes `take` items of `drain()` (all when nothing is pending), checking `Drain::len()`
    /// before each.
    fn drain(&mut self, take: usize) {
        let len = self.model.len();
        let take = if len == 0 { usize::MAX } else { take };
        let mut out = Vec::with_capacity(take.min(len));
        {
            let mut drain = self.queue.drain();
            while out.len() < take {
                let before = drain.len();
                let item = drain.next();
                let end = item.is_none();
                out.push((before, item));
                if end {
                    break;
                }
            }
        }
        for (taken, (before, expired)) in out.into_iter().enumerate() {
            assert_eq!(
                before,
                len - taken.min(len),
                "Drain::len() after {taken} items{}",
                self.ctx()
            );
            match expired {
                Some(expired) => {
                    let expected = self.model.remove(expired.id);
                    self.check_removed("drain", expired, expected);
                }
                None => assert_eq!(
                    taken,
                    len,
                    "drain ended after {taken} of {len} pending timers{}",
                    self.ctx()
                ),
            }
        }
        if take >= len {
            assert!(
                self.queue.is_empty(),
                "not empty after a full drain(){}",
                self.ctx()
            );
        }
    }

    // ---- checks ----

    /// One pending timer: deadline, value, list.
    fn check_timer(&self, id: TimerId) {
        assert_eq!(
            self.queue.deadline(id),
            self.model.deadline(id),
            "deadline({id:?}){}",
            self.ctx()
        );
        assert_eq!(
            self.queue.get(id),
            self.model.get(id),
            "get({id:?}){}",
            self.ctx()
        );
        assert_eq!(
            self.queue.list_of_timer(id),
            self.model.list_of(id),
            "list_of({id:?}){}",
            self.ctx()
        );
    }

    /// A dead handle, picked modulo the pool, is refused by every operation.
    fn probe_dead(&mut self, pick: usize) {
        if !self.dead.is_empty() {
            let id = self.dead[pick % self.dead.len()];
            self.probe(id);
        }
    }

    /// A dead handle is refused by every operation and changes nothing.
    fn probe(&mut self, id: TimerId) {
        assert_eq!(
            self.model.deadline(id),
            None,
            "the model holds a dead handle{}",
            self.ctx()
        );
        if self.model.occupant(id.index()).is_some() {
            self.coverage.probes_of_reused_slots += 1;
        }
        let now = self.now;
        let list = id.index() % Q::LISTS;
        assert_eq!(
            self.queue.deadline(id),
            None,
            "deadline(dead {id:?}){}",
            self.ctx()
        );
        assert_eq!(self.queue.get(id), None, "get(dead {id:?}){}", self.ctx());
        assert!(
            self.queue.get_mut(id).is_none(),
            "get_mut(dead {id:?}){}",
            self.ctx()
        );
        assert_eq!(
            self.queue.list_of_timer(id),
            None,
            "list_of(dead {id:?}){}",
            self.ctx()
        );
        assert_eq!(
            self.queue.cancel(id),
            Err(StaleTimer),
            "cancel(dead {id:?}){}",
            self.ctx()
        );
        assert_eq!(
            self.queue.reschedule(id, now),
            Err(StaleTimer),
            "reschedule(dead {id:?}){}",
            self.ctx()
        );
        assert_eq!(
            self.queue.touch_timer(id, now),
            Err(StaleTimer),
            "touch(dead {id:?}){}",
            self.ctx()
        );
        assert_eq!(
            self.queue.move_on(id, list, now),
            Err(StaleTimer),
            "move_to(dead {id:?}){}",
            self.ctx()
        );
    }

    /// The checks [`step`](Self::step) makes after each op: the summary, the next deadline of
    /// each list, pending timers (all of them while few are pending or every 64th step, else
    /// two), and two dead handles.
    ///
    /// # Panics
    ///
    /// When the queue and the model disagree.
    pub fn check(&mut self) {
        let len = self.model.len();
        let capacity = self.capacity();
        assert_eq!(capacity, Q::CAPACITY, "capacity(){}", self.ctx());
        assert_eq!(self.queue.len(), len, "len(){}", self.ctx());
        assert_eq!(self.queue.is_empty(), len == 0, "is_empty(){}", self.ctx());
        assert_eq!(
            self.queue.is_full(),
            len == capacity,
            "is_full() with {len} of {capacity}{}",
            self.ctx()
        );
        let next = self.queue.next_deadline();
        let earliest = self.model.next_deadline();
        match Q::NEXT_DEADLINE {
            NextDeadline::Exact => {
                assert_eq!(next, earliest, "next_deadline(){}", self.ctx());
            }
            NextDeadline::NoLater => assert!(
                match (next, earliest) {
                    (Some(next), Some(earliest)) => next <= earliest,
                    (next, earliest) => next.is_none() && earliest.is_none(),
                },
                "next_deadline() is {next:?}, the earliest deadline {earliest:?}{}",
                self.ctx()
            ),
        }
        let everything = len <= 32 || self.step % 64 == 0;
        if Q::HAS_LISTS && (everything || self.step % 8 == 0) {
            // One past the last list is empty, not a panic.
            for list in 0..=Q::LISTS {
                assert_eq!(
                    self.queue.next_deadline_on(list),
                    self.model.next_deadline_in(list),
                    "next_deadline_in({list}){}",
                    self.ctx()
                );
            }
        }
        if everything {
            for &id in self.model.live() {
                self.check_timer(id);
            }
        } else {
            for k in 0..2 {
                let at = self.step.wrapping_mul(0x9e37_79b9).wrapping_add(k * 7_919) % len;
                self.check_timer(self.model.live()[at]);
            }
        }
        for _ in 0..2 {
            self.probe_cursor = self.probe_cursor.wrapping_add(0x9e37_79b9);
            self.probe_dead(self.probe_cursor >> 7);
        }
    }

    /// Ends the run by firing or draining everything, then checks that every value left
    /// exactly once, that `pop_any` finds nothing and that every dead handle is still refused.
    /// Returns the events seen.
    ///
    /// # Panics
    ///
    /// When the queue and the model disagree.
    pub fn finish(mut self, by: Finish) -> Coverage {
        match by {
            Finish::ExpireAll => {
                self.expire(u64::MAX, usize::MAX);
            }
            Finish::DrainAll => self.drain(usize::MAX),
        }
        self.check();
        assert!(
            self.queue.is_empty(),
            "queue not empty at the end{}",
            self.ctx()
        );
        assert!(
            self.queue.pop_any().is_none(),
            "pop_any() of an empty queue{}",
            self.ctx()
        );
        if let Some(serial) = self.fates.iter().position(|&fate| fate == Fate::Pending) {
            panic!("value {serial} never left the queue{}", self.ctx());
        }
        for at in 0..self.dead.len() {
            let id = self.dead[at];
            self.probe(id);
        }
        assert!(
            self.queue.is_empty(),
            "a dead handle changed the queue{}",
            self.ctx()
        );
        self.coverage
    }
}
