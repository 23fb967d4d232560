//! timer-core's wheel and heaps side by side with the queues a Rust program would otherwise use:
//! `std::collections::BinaryHeap` with lazy deletion, `std::collections::BTreeMap`, tokio-util's
//! `DelayQueue`, and both wheels of `hierarchical_hash_wheel_timer` (its cancellable wheel as it
//! ships, and its plain `QuadWheelWithOverflow` with a generation slab). Prints markdown tables,
//! W1's insert and expire phases apart; `RESULTS.md` beside this file holds a run.
//!
//! ```text
//! cargo bench -p host-tests --bench timer_peers
//! ```
//!
//! Narrow a run with the environment:
//!
//! - `TIMER_BENCH_SIZES=1000,100000`: live timers, any of 1000, 10000, 100000, 1000000
//!   (default 1000,100000,1000000);
//! - `TIMER_BENCH_WORKLOADS=w1,w3`: workloads (default all four);
//! - `TIMER_BENCH_QUEUES=wheel,btreemap`: queues, any of wheel, heap4, heap2, binaryheap,
//!   btreemap, delayqueue, hhwt, hhwtquad (default all of these; the ratio needs at least one
//!   peer), and `blocks`, an experiment that runs only when named (`timer_peers/block_wheel.rs`);
//! - `TIMER_BENCH_REPS=3`: repetitions per cell (default 5 for n <= 100,000, 3 above);
//! - `TIMER_BENCH_MEMORY=0`: skip the memory table.
//!
//! Started without `--bench` (as `cargo test --benches` does) it makes one quick pass at n = 1,000
//! as a smoke test.
//!
//! Every workload's input (deadlines, picks, the churn trace) is generated once from a fixed seed
//! and replayed on every queue; each run's fired timers are tallied and must agree across queues.
//! Times are the benchmark thread's CPU time, so other jobs on a shared machine inflate them less;
//! wall time is measured alongside and the wheel's ratio by wall time is printed too.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::sync::OnceLock;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use host_tests::cpu_time::thread_cpu_time;

use hierarchical_hash_wheel_timer::wheels::cancellable::{
    CancellableTimerEntry, QuadWheelWithOverflow as CancellableWheel,
};
use hierarchical_hash_wheel_timer::wheels::quad_wheel::QuadWheelWithOverflow;
use hierarchical_hash_wheel_timer::wheels::{Skip, TimerEntryWithDelay};
use hierarchical_hash_wheel_timer::TimerError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use timer_core::{HeapSlot, TimerHeapOn, TimerId, TimerQueue, TimerWheelOn, WheelSlot};
use tokio::runtime::Runtime;
use tokio_util::time::{delay_queue, DelayQueue};

#[path = "timer_peers/block_wheel.rs"]
mod block_wheel;

// ---------------------------------------------------------------------------------------------
// Heap accounting for the memory table.

/// The system allocator, counting live and peak bytes while [`COUNTING`] is on. Off (all timed
/// runs), it costs one relaxed load per call.
struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);
static PEAK_BYTES: AtomicIsize = AtomicIsize::new(0);

#[inline]
fn count(delta: isize) {
    if COUNTING.load(Ordering::Relaxed) {
        let live = LIVE_BYTES.fetch_add(delta, Ordering::Relaxed) + delta;
        PEAK_BYTES.fetch_max(live, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds the `GlobalAlloc`
// contract; the counters only observe the sizes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: our caller upholds `alloc`'s contract for `layout`; passed through.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            count(layout.size() as isize);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            count(layout.size() as isize);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator with this `layout`.
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` through this allocator with this `layout`; our caller
        // upholds `realloc`'s contract for `new_size`.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn start_counting() {
    LIVE_BYTES.store(0, Ordering::SeqCst);
    PEAK_BYTES.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
}

/// Stops counting; returns (live, peak) bytes since [`start_counting`].
fn stop_counting() -> (isize, isize) {
    COUNTING.store(false, Ordering::SeqCst);
    (
        LIVE_BYTES.load(Ordering::SeqCst),
        PEAK_BYTES.load(Ordering::SeqCst),
    )
}

// ---------------------------------------------------------------------------------------------
// Clocks.

/// Time by two clocks: wall time, and this thread's CPU time. Tables use CPU time, which leaves
/// out the time the scheduler gives other processes (this machine is shared); wall time is kept
/// to show the conclusions do not hinge on that choice.
#[derive(Clone, Copy, Default, Debug)]
struct Spent {
    wall: Duration,
    cpu: Duration,
}

impl std::ops::Add for Spent {
    type Output = Spent;
    fn add(self, other: Spent) -> Spent {
        Spent {
            wall: self.wall + other.wall,
            cpu: self.cpu + other.cpu,
        }
    }
}

impl std::ops::AddAssign for Spent {
    fn add_assign(&mut self, other: Spent) {
        *self = *self + other;
    }
}

impl std::ops::Sub for Spent {
    type Output = Spent;
    fn sub(self, other: Spent) -> Spent {
        Spent {
            wall: self.wall.saturating_sub(other.wall),
            cpu: self.cpu.saturating_sub(other.cpu),
        }
    }
}

/// A reading of both clocks.
#[derive(Clone, Copy)]
struct Stamp {
    wall: Instant,
    cpu: Duration,
}

impl Stamp {
    fn now() -> Self {
        Stamp {
            wall: Instant::now(),
            cpu: thread_cpu_time(),
        }
    }

    fn elapsed(&self) -> Spent {
        let now = Stamp::now();
        Spent {
            wall: now.wall - self.wall,
            cpu: now.cpu.saturating_sub(self.cpu),
        }
    }
}

/// What one `Instant::now()` costs; measured once. (Reading the thread CPU clock is a system
/// call, about 0.5 µs in this VM: too coarse to time DelayQueue's clock driving with.)
fn instant_cost() -> Duration {
    static COST: OnceLock<Duration> = OnceLock::new();
    *COST.get_or_init(|| {
        const READS: u32 = 1_000_000;
        let mut samples: Vec<f64> = (0..5)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..READS {
                    std::hint::black_box(Instant::now());
                }
                start.elapsed().as_secs_f64() / f64::from(READS)
            })
            .collect();
        Duration::from_secs_f64(median(&mut samples))
    })
}

// ---------------------------------------------------------------------------------------------
// The queues under test, behind one small interface.

/// What the workloads need from a queue. Values are `u32`; every handle passed in is live.
trait Contender {
    type Handle: Copy;

    fn insert(&mut self, deadline: u64, value: u32) -> Self::Handle;

    fn cancel(&mut self, handle: Self::Handle);

    /// Moves a timer; returns its handle from now on (a `BTreeMap` key changes).
    fn reschedule(&mut self, handle: Self::Handle, deadline: u64) -> Self::Handle;

    /// Fires every timer due at `now`, handing each value to `fired`.
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32));

    /// Time spent so far outside the queue proper, subtracted from every measurement: for
    /// `DelayQueue`, driving tokio's clock.
    /// Wall time; its share of CPU time is taken to be the run's CPU/wall ratio.
    fn excluded(&self) -> Duration {
        Duration::ZERO
    }
}

/// A timer-core queue over slots the caller owns, as a host program makes one: a `Vec` of n
/// slots handed to `with_storage` (which empties every slot, so its pages are touched before
/// any measurement). The queue proper stays on the stack: a few KiB.
struct Ours<Q>(Q);

type OurWheel = TimerWheelOn<u32, Vec<WheelSlot<u32>>>;
type OurHeap<const D: usize> = TimerHeapOn<u32, Vec<HeapSlot<u32>>, D>;

fn our_wheel(n: usize) -> Ours<OurWheel> {
    Ours(TimerWheelOn::with_storage(
        (0..n).map(|_| WheelSlot::new()).collect(),
    ))
}

fn our_heap<const D: usize>(n: usize) -> Ours<OurHeap<D>> {
    Ours(TimerHeapOn::with_storage(
        (0..n).map(|_| HeapSlot::new()).collect(),
    ))
}

impl<Q: TimerQueue<u32>> Contender for Ours<Q> {
    type Handle = TimerId;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> TimerId {
        self.0.insert(deadline, value).expect("capacity is n")
    }

    #[inline]
    fn cancel(&mut self, id: TimerId) {
        self.0.cancel(id).expect("handle is live");
    }

    #[inline]
    fn reschedule(&mut self, id: TimerId, deadline: u64) -> TimerId {
        self.0.reschedule(id, deadline).expect("handle is live");
        id
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        let _ = self.0.expire(now, usize::MAX, |e| fired(e.value));
    }
}

const NIL: u32 = u32::MAX;
/// The lazy heap sweeps once more than 1/`SWEEP_DIV` of its entries are stale (Go's runtime
/// timer heap uses 1/4 for its deleted timers).
const SWEEP_DIV: usize = 4;
/// `LazySlot::seq` of a free slot: no heap entry ever carries it.
const VACANT: u64 = u64::MAX;

/// One entry of the lazy heap; ordered by deadline, then insertion.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct LazyEntry {
    deadline: u64,
    seq: u64,
    index: u32,
}

/// An empty vector with room for `capacity` elements, every page of it written once.
fn prefaulted<T: Copy>(capacity: usize, filler: T) -> Vec<T> {
    let mut v = Vec::with_capacity(capacity);
    v.resize(capacity, filler);
    std::hint::black_box(&mut v);
    v.clear();
    v
}

/// A timer's state: the `seq` of its one valid heap entry (the generation table).
#[derive(Clone, Copy)]
struct LazySlot {
    seq: u64,
    /// The value while live; the next free slot while vacant.
    value: u32,
    generation: u32,
}

#[derive(Clone, Copy)]
struct SlotId {
    index: u32,
    generation: u32,
}

/// `BinaryHeap` with lazy deletion: cancel and reschedule only retire the timer's current
/// entry (its slot's `seq` moves on, O(1)); a reschedule pushes a new entry. Stale entries are
/// skipped when they surface at the top, and swept out with `retain` (O(len)) once they are
/// more than 1/[`SWEEP_DIV`] of the heap, so memory stays O(live).
struct LazyHeap {
    heap: BinaryHeap<Reverse<LazyEntry>>,
    slots: Vec<LazySlot>,
    free_head: u32,
    next_seq: u64,
    stale: usize,
}

impl LazyHeap {
    /// Room for `timers`, and for `entries` heap entries (live and stale).
    fn with_capacity(timers: usize, entries: usize) -> Self {
        Self {
            heap: BinaryHeap::from(Vec::with_capacity(entries)),
            slots: Vec::with_capacity(timers),
            free_head: NIL,
            next_seq: 0,
            stale: 0,
        }
    }

    /// Room for n timers with the pages already touched, as ours are after `new()`, so that
    /// no queue takes page faults inside a measurement. The heap gets room for the stale entries
    /// a sweep allows (a third of the live ones), so it never reallocates either.
    fn prefaulted(n: usize) -> Self {
        let entry = Reverse(LazyEntry {
            deadline: 0,
            seq: 0,
            index: 0,
        });
        let slot = LazySlot {
            seq: VACANT,
            value: 0,
            generation: 0,
        };
        Self {
            heap: BinaryHeap::from(prefaulted(n + n / 2, entry)),
            slots: prefaulted(n, slot),
            ..Self::with_capacity(0, 0)
        }
    }

    #[inline]
    fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    #[inline]
    fn live_slot(&mut self, id: SlotId) -> &mut LazySlot {
        let slot = &mut self.slots[id.index as usize];
        assert!(
            slot.seq != VACANT && slot.generation == id.generation,
            "handle is live"
        );
        slot
    }

    #[inline]
    fn free(&mut self, index: u32) {
        let slot = &mut self.slots[index as usize];
        slot.seq = VACANT;
        slot.generation = slot.generation.wrapping_add(1);
        slot.value = self.free_head;
        self.free_head = index;
    }

    #[inline]
    fn retire_one(&mut self) {
        self.stale += 1;
        if self.stale > 64 && self.stale * SWEEP_DIV > self.heap.len() {
            let slots = &self.slots;
            self.heap
                .retain(|Reverse(e)| slots[e.index as usize].seq == e.seq);
            self.stale = 0;
        }
    }
}

impl Contender for LazyHeap {
    type Handle = SlotId;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> SlotId {
        let seq = self.next_seq();
        let index = if self.free_head != NIL {
            let index = self.free_head;
            let slot = &mut self.slots[index as usize];
            self.free_head = slot.value;
            slot.seq = seq;
            slot.value = value;
            index
        } else {
            self.slots.push(LazySlot {
                seq,
                value,
                generation: 0,
            });
            (self.slots.len() - 1) as u32
        };
        self.heap.push(Reverse(LazyEntry {
            deadline,
            seq,
            index,
        }));
        SlotId {
            index,
            generation: self.slots[index as usize].generation,
        }
    }

    #[inline]
    fn cancel(&mut self, id: SlotId) {
        self.live_slot(id);
        self.free(id.index);
        self.retire_one();
    }

    #[inline]
    fn reschedule(&mut self, id: SlotId, deadline: u64) -> SlotId {
        let seq = self.next_seq();
        self.live_slot(id).seq = seq;
        self.heap.push(Reverse(LazyEntry {
            deadline,
            seq,
            index: id.index,
        }));
        self.retire_one();
        id
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        while let Some(&Reverse(top)) = self.heap.peek() {
            let slot = &self.slots[top.index as usize];
            if slot.seq != top.seq {
                self.heap.pop();
                self.stale -= 1;
                continue;
            }
            if top.deadline > now {
                break;
            }
            let value = slot.value;
            self.heap.pop();
            self.free(top.index);
            fired(value);
        }
    }
}

/// `BTreeMap<(deadline, seq), value>`; the key is the handle, so a stale one simply misses.
struct BTreePeer {
    map: BTreeMap<(u64, u64), u32>,
    next_seq: u64,
}

impl BTreePeer {
    fn new() -> Self {
        Self {
            map: BTreeMap::new(),
            next_seq: 0,
        }
    }
}

impl Contender for BTreePeer {
    type Handle = (u64, u64);

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> (u64, u64) {
        let key = (deadline, self.next_seq);
        self.next_seq += 1;
        self.map.insert(key, value);
        key
    }

    #[inline]
    fn cancel(&mut self, key: (u64, u64)) {
        self.map.remove(&key).expect("handle is live");
    }

    #[inline]
    fn reschedule(&mut self, key: (u64, u64), deadline: u64) -> (u64, u64) {
        let value = self.map.remove(&key).expect("handle is live");
        self.insert(deadline, value)
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        while let Some(entry) = self.map.first_entry() {
            if entry.key().0 > now {
                break;
            }
            fired(entry.remove());
        }
    }
}

/// tokio-util's `DelayQueue` on a paused current-thread runtime, 1 tick = 1 ms.
///
/// Deadlines go in with `insert_at`/`reset_at` (no clock reads). `expire(now)` advances tokio's
/// paused clock to `now` with `block_on(tokio::time::advance(..))` (one runtime turn, so the
/// time driver fires the queue's internal `Sleep`), then calls `poll_expired` with a no-op waker
/// until it stops returning timers. Polling outside `block_on` keeps tokio's cooperative budget
/// (128 polls per task turn) from cutting a drain short. The runtime turn is timed and
/// excluded; everything the queue does, including re-arming its `Sleep`, is counted.
struct DelayQueuePeer<'rt> {
    queue: DelayQueue<u32>,
    runtime: &'rt Runtime,
    origin: tokio::time::Instant,
    now: u64,
    clock_driving: Duration,
}

impl<'rt> DelayQueuePeer<'rt> {
    /// Must be called inside `runtime.enter()`.
    fn new(runtime: &'rt Runtime, capacity: usize) -> Self {
        // The clock is paused, so `origin` is the queue's own start instant: tick t is
        // exactly t ms into the queue's life.
        let mut queue = DelayQueue::with_capacity(capacity);
        let origin = tokio::time::Instant::now();
        // Fill and clear once, so the slab's pages are touched before any measurement, as
        // ours are after `new()`. `clear` keeps the slab's capacity.
        for value in 0..capacity as u32 {
            queue.insert_at(value, origin + Duration::from_millis(1));
        }
        queue.clear();
        Self {
            queue,
            runtime,
            origin,
            now: 0,
            clock_driving: Duration::ZERO,
        }
    }

    #[inline]
    fn instant(&self, tick: u64) -> tokio::time::Instant {
        self.origin + Duration::from_millis(tick)
    }
}

fn paused_runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("tokio runtime")
}

impl Contender for DelayQueuePeer<'_> {
    type Handle = delay_queue::Key;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> delay_queue::Key {
        self.queue.insert_at(value, self.instant(deadline))
    }

    #[inline]
    fn cancel(&mut self, key: delay_queue::Key) {
        self.queue.remove(&key);
    }

    #[inline]
    fn reschedule(&mut self, key: delay_queue::Key, deadline: u64) -> delay_queue::Key {
        self.queue.reset_at(&key, self.instant(deadline));
        key
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        if now > self.now {
            let start = Instant::now();
            self.runtime
                .block_on(tokio::time::advance(Duration::from_millis(now - self.now)));
            // One clock reading falls outside the interval: exclude it as well.
            self.clock_driving += start.elapsed() + instant_cost();
            self.now = now;
        }
        let mut cx = Context::from_waker(Waker::noop());
        while let Poll::Ready(Some(expired)) = self.queue.poll_expired(&mut cx) {
            fired(expired.into_inner());
        }
    }

    fn excluded(&self) -> Duration {
        self.clock_driving
    }
}

// ---------------------------------------------------------------------------------------------
// hierarchical_hash_wheel_timer: four byte-wide levels (256 slots each, one `Vec` per slot) and
// an overflow `Vec`, ticked one unit (1 tick = 1 ms) at a time.

/// The unit hhwt counts delays in: one tick.
fn hhwt_delay(ticks: u64) -> Duration {
    Duration::from_millis(ticks)
}

/// Moves an hhwt wheel from `*at` to `now`: `skip` over stretches `can_skip` says are empty,
/// `tick` one unit at a time elsewhere, handing every entry a tick returns to `fired`.
fn hhwt_advance<E>(
    at: &mut u64,
    now: u64,
    can_skip: impl Fn() -> Skip,
    mut skip: impl FnMut(u32),
    mut tick: impl FnMut() -> Vec<E>,
    mut fired: impl FnMut(E),
) {
    while *at < now {
        let left = now - *at;
        match can_skip() {
            Skip::None => {
                for entry in tick() {
                    fired(entry);
                }
                *at += 1;
            }
            Skip::Millis(ms) => {
                let by = u64::from(ms).min(left);
                skip(by as u32);
                *at += by;
            }
            Skip::Empty => {
                let by = left.min(u64::from(u32::MAX));
                skip(by as u32);
                *at += by;
            }
        }
    }
}

/// An entry of hhwt's cancellable wheel: its id (the handle) and the value.
#[derive(Debug)]
struct CancellableEntry {
    id: u64,
    value: u32,
    delay: Duration,
}

impl CancellableTimerEntry for CancellableEntry {
    type Id = u64;

    fn id(&self) -> &u64 {
        &self.id
    }
}

impl TimerEntryWithDelay for CancellableEntry {
    fn delay(&self) -> Duration {
        self.delay
    }
}

/// hhwt's cancellable wheel, as it ships: every entry is an `Rc` kept in an FxHashMap by id,
/// the wheel holds a `Weak` to it. Cancel removes the map entry (the `Weak` is dropped when its
/// slot comes up); reschedule is cancel + insert under the same id.
struct HhwtCancellable {
    wheel: CancellableWheel<CancellableEntry>,
    next_id: u64,
    /// Where the wheel's clock stands.
    at: u64,
    /// Inserted with a deadline at or before `at` (hhwt refuses a zero delay): fire next.
    due: Vec<u32>,
}

impl HhwtCancellable {
    fn new() -> Self {
        Self {
            wheel: CancellableWheel::new(),
            next_id: 0,
            at: 0,
            due: Vec::new(),
        }
    }

    fn insert_with_id(&mut self, id: u64, deadline: u64, value: u32) {
        let entry = CancellableEntry {
            id,
            value,
            delay: hhwt_delay(deadline.saturating_sub(self.at)),
        };
        match self.wheel.insert(entry) {
            Ok(()) => {}
            Err(TimerError::Expired(entry)) => self.due.push(entry.value),
            Err(TimerError::NotFound) => unreachable!("insert never answers NotFound"),
        }
    }
}

/// A handle to a timer in [`HhwtCancellable`]: its id, and the value a reschedule re-inserts
/// (the wheel keeps its entries to itself, so its users hold on to what they scheduled).
#[derive(Clone, Copy)]
struct CancellableHandle {
    id: u64,
    value: u32,
}

impl Contender for HhwtCancellable {
    type Handle = CancellableHandle;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> CancellableHandle {
        let id = self.next_id;
        self.next_id += 1;
        self.insert_with_id(id, deadline, value);
        CancellableHandle { id, value }
    }

    #[inline]
    fn cancel(&mut self, handle: CancellableHandle) {
        // A timer due at once sits in `due`, not in the wheel; the workloads never cancel one.
        self.wheel.cancel(&handle.id).expect("handle is live");
    }

    #[inline]
    fn reschedule(&mut self, handle: CancellableHandle, deadline: u64) -> CancellableHandle {
        // Cancel, then insert a new entry under the same id with the same value.
        self.wheel.cancel(&handle.id).expect("handle is live");
        self.insert_with_id(handle.id, deadline, handle.value);
        handle
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        for value in self.due.drain(..) {
            fired(value);
        }
        let wheel = std::cell::RefCell::new(&mut self.wheel);
        hhwt_advance(
            &mut self.at,
            now,
            || wheel.borrow().can_skip(),
            |by| wheel.borrow_mut().skip(by),
            || wheel.borrow_mut().tick(),
            |entry| fired(entry.value),
        );
    }
}

/// What hhwt's plain wheel holds for a timer: its slab slot and the generation it was filed
/// under.
#[derive(Clone, Copy, Debug)]
struct SlabRef {
    index: u32,
    generation: u32,
}

/// A slab slot of [`HhwtQuad`]: the generation whose wheel entry is the live one.
#[derive(Clone, Copy)]
struct GenerationSlot {
    generation: u32,
    /// The value while live; the next free slot while vacant.
    value: u32,
    live: bool,
}

/// hhwt's plain `QuadWheelWithOverflow` with a generation slab: the wheel holds
/// `(slot, generation)`; cancel and reschedule bump the slot's generation (reschedule files a
/// new entry under the new one), and an entry whose generation is no longer its slot's is
/// skipped when its wheel slot comes up. Stale entries stay in the wheel's `Vec`s until then.
struct HhwtQuad {
    wheel: QuadWheelWithOverflow<SlabRef>,
    slots: Vec<GenerationSlot>,
    free_head: u32,
    at: u64,
    due: Vec<SlabRef>,
}

impl HhwtQuad {
    fn new() -> Self {
        Self {
            wheel: QuadWheelWithOverflow::default(),
            slots: Vec::new(),
            free_head: NIL,
            at: 0,
            due: Vec::new(),
        }
    }

    /// Room for n timers in the slab, its pages touched (the wheel's `Vec`s grow as they go).
    fn prefaulted(n: usize) -> Self {
        let slot = GenerationSlot {
            generation: 0,
            value: 0,
            live: false,
        };
        Self {
            slots: prefaulted(n, slot),
            ..Self::new()
        }
    }

    #[inline]
    fn file(&mut self, entry: SlabRef, deadline: u64) {
        if let Err(TimerError::Expired(entry)) = self
            .wheel
            .insert_with_delay(entry, hhwt_delay(deadline.saturating_sub(self.at)))
        {
            self.due.push(entry);
        }
    }

    #[inline]
    fn live_slot(&mut self, handle: SlabRef) -> &mut GenerationSlot {
        let slot = &mut self.slots[handle.index as usize];
        assert!(
            slot.live && slot.generation == handle.generation,
            "handle is live"
        );
        slot
    }

    #[inline]
    fn free(&mut self, index: u32) {
        let slot = &mut self.slots[index as usize];
        slot.live = false;
        slot.generation = slot.generation.wrapping_add(1);
        slot.value = self.free_head;
        self.free_head = index;
    }

    /// Fires `entry` if it is its slot's live one.
    #[inline]
    fn fire(
        slots: &mut [GenerationSlot],
        free_head: &mut u32,
        entry: SlabRef,
        fired: &mut impl FnMut(u32),
    ) {
        let slot = &mut slots[entry.index as usize];
        if slot.live && slot.generation == entry.generation {
            let value = slot.value;
            slot.live = false;
            slot.generation = slot.generation.wrapping_add(1);
            slot.value = *free_head;
            *free_head = entry.index;
            fired(value);
        }
    }
}

impl Contender for HhwtQuad {
    type Handle = SlabRef;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> SlabRef {
        let index = if self.free_head != NIL {
            let index = self.free_head;
            let slot = &mut self.slots[index as usize];
            self.free_head = slot.value;
            slot.value = value;
            slot.live = true;
            index
        } else {
            self.slots.push(GenerationSlot {
                generation: 0,
                value,
                live: true,
            });
            (self.slots.len() - 1) as u32
        };
        let entry = SlabRef {
            index,
            generation: self.slots[index as usize].generation,
        };
        self.file(entry, deadline);
        entry
    }

    #[inline]
    fn cancel(&mut self, handle: SlabRef) {
        self.live_slot(handle);
        self.free(handle.index);
    }

    #[inline]
    fn reschedule(&mut self, handle: SlabRef, deadline: u64) -> SlabRef {
        let slot = self.live_slot(handle);
        slot.generation = slot.generation.wrapping_add(1);
        let entry = SlabRef {
            index: handle.index,
            generation: slot.generation,
        };
        self.file(entry, deadline);
        entry
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        let Self {
            wheel,
            slots,
            free_head,
            at,
            due,
        } = self;
        for entry in due.drain(..) {
            Self::fire(slots, free_head, entry, fired);
        }
        let wheel = std::cell::RefCell::new(wheel);
        hhwt_advance(
            at,
            now,
            || wheel.borrow().can_skip(),
            |by| wheel.borrow_mut().skip(by),
            || wheel.borrow_mut().tick(),
            |entry| Self::fire(slots, free_head, entry, fired),
        );
    }
}

impl Contender for block_wheel::BlockWheel {
    type Handle = block_wheel::BlockId;

    #[inline]
    fn insert(&mut self, deadline: u64, value: u32) -> block_wheel::BlockId {
        block_wheel::BlockWheel::insert(self, deadline, value)
    }

    #[inline]
    fn cancel(&mut self, id: block_wheel::BlockId) {
        block_wheel::BlockWheel::cancel(self, id);
    }

    #[inline]
    fn reschedule(&mut self, id: block_wheel::BlockId, deadline: u64) -> block_wheel::BlockId {
        block_wheel::BlockWheel::reschedule(self, id, deadline);
        id
    }

    #[inline]
    fn expire(&mut self, now: u64, fired: &mut impl FnMut(u32)) {
        block_wheel::BlockWheel::expire(self, now, fired);
    }
}

// ---------------------------------------------------------------------------------------------
// Workloads.

/// W1: deadlines in [1, W1_HORIZON]; then one expiry per tick up to it.
const W1_HORIZON: u64 = 60_000;
/// W2: every timer sits this far out and is pushed back to it on each touch.
const W2_TIMEOUT: u64 = 30_000;
/// W3: I/O timeouts, in ticks.
const W3_TIMEOUT: std::ops::RangeInclusive<u64> = 100..=5_000;
/// W3: the share of timers cancelled before they expire.
const W3_CANCEL_SHARE: f64 = 0.95;
/// W3: replacements measured, at most.
const W3_MAX_REPLACEMENTS: u64 = 4_000_000;
/// W4: deadlines in [1, W4_HORIZON]; then a single expiry at it (an hour of 1 ms ticks).
const W4_HORIZON: u64 = 3_600_000;

/// What fired: a count and an order-independent checksum of (value, time fired).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
struct Tally {
    fired: u64,
    checksum: u64,
}

impl Tally {
    #[inline]
    fn fire(&mut self, now: u64, value: u32) {
        self.fired += 1;
        let mix = (u64::from(value) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.checksum = self.checksum.wrapping_add(mix ^ now);
    }
}

/// One measured run.
#[derive(Clone, Copy)]
struct Outcome {
    /// Time in the queue: measured time minus [`Contender::excluded`].
    net: Spent,
    /// Time excluded (driving tokio's clock).
    excluded: Spent,
    ops: u64,
    tally: Tally,
    /// Where a workload has an insert phase and an expire phase (W1): each one's net time.
    phases: Option<(Spent, Spent)>,
}

/// ns per operation, by CPU time and by wall time.
#[derive(Clone, Copy)]
struct PerOp {
    cpu: f64,
    wall: f64,
}

impl Outcome {
    fn per_op(&self, spent: Spent) -> PerOp {
        PerOp {
            cpu: spent.cpu.as_nanos() as f64 / self.ops as f64,
            wall: spent.wall.as_nanos() as f64 / self.ops as f64,
        }
    }
}

/// Times `body`, minus whatever the queue reports as excluded meanwhile.
fn timed<C: Contender>(q: &mut C, ops: u64, body: impl FnOnce(&mut C) -> Tally) -> Outcome {
    let excluded_before = q.excluded();
    let start = Stamp::now();
    let tally = body(q);
    let measured = start.elapsed();
    let excluded_wall = q.excluded() - excluded_before;
    let cpu_share = measured.cpu.as_secs_f64() / measured.wall.as_secs_f64().max(1e-12);
    let excluded = Spent {
        wall: excluded_wall,
        cpu: excluded_wall.mul_f64(cpu_share.min(1.0)),
    };
    Outcome {
        net: measured - excluded,
        excluded,
        ops,
        tally,
        phases: None,
    }
}

/// W3's input: a replayable trace of I/O timeouts, n live at every tick boundary.
enum Step {
    /// Advance to this tick and expire what is due.
    Tick(u64),
    /// Insert a timer for this slot (its previous one ended by cancel or expiry).
    Insert { slot: u32, deadline: u64 },
    /// Cancel the slot's live timer.
    Cancel(u32),
}

struct Churn {
    /// Deadlines of the n timers inserted at tick 0 (untimed).
    fill: Vec<u64>,
    steps: Vec<Step>,
    replacements: u64,
    /// How many of the replaced timers expired rather than being cancelled.
    expiries: u64,
}

impl Churn {
    /// Every timer gets a timeout in `W3_TIMEOUT` and a fate: cancelled at a uniformly random
    /// tick strictly before its deadline (95%), or left to expire (5%). Each tick: expire, then
    /// replace every timer that ended (expired, or is cancelled now) with a fresh one.
    fn generate(n: usize, rng: &mut SmallRng) -> Self {
        const RING: usize = 8192;
        let target = (10 * n as u64).min(W3_MAX_REPLACEMENTS);
        let mut ends: Vec<Vec<(u32, bool)>> = vec![Vec::new(); RING];
        let mut schedule = |ends: &mut Vec<Vec<(u32, bool)>>, slot: u32, now: u64| {
            let deadline = now + rng.random_range(W3_TIMEOUT);
            if rng.random_bool(W3_CANCEL_SHARE) {
                let at = rng.random_range(now + 1..deadline);
                ends[at as usize % RING].push((slot, true));
            } else {
                ends[deadline as usize % RING].push((slot, false));
            }
            deadline
        };
        let fill: Vec<u64> = (0..n as u32)
            .map(|slot| schedule(&mut ends, slot, 0))
            .collect();
        let mut steps = Vec::with_capacity(2 * target as usize + 16_384);
        let mut replacements = 0;
        let mut expiries = 0;
        let mut now = 0;
        while replacements < target {
            now += 1;
            steps.push(Step::Tick(now));
            let mut ending = std::mem::take(&mut ends[now as usize % RING]);
            for &(slot, cancel) in &ending {
                if cancel {
                    steps.push(Step::Cancel(slot));
                } else {
                    expiries += 1;
                }
                let deadline = schedule(&mut ends, slot, now);
                steps.push(Step::Insert { slot, deadline });
                replacements += 1;
            }
            // New ends are all later than `now` and within RING ticks: this bucket is empty.
            ending.clear();
            ends[now as usize % RING] = ending;
        }
        Self {
            fill,
            steps,
            replacements,
            expiries,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Workload {
    ScheduleExpire,
    IdleTouch,
    CancelMostly,
    LatePoll,
}

impl Workload {
    const ALL: [Workload; 4] = [
        Workload::ScheduleExpire,
        Workload::IdleTouch,
        Workload::CancelMostly,
        Workload::LatePoll,
    ];

    fn key(self) -> &'static str {
        match self {
            Workload::ScheduleExpire => "w1",
            Workload::IdleTouch => "w2",
            Workload::CancelMostly => "w3",
            Workload::LatePoll => "w4",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Workload::ScheduleExpire => "W1 schedule-expire (ns/timer)",
            Workload::IdleTouch => "W2 idle-touch (ns/touch)",
            Workload::CancelMostly => "W3 cancel-mostly (ns/replacement)",
            Workload::LatePoll => "W4 late poll (ns/timer)",
        }
    }
}

/// A workload's generated input, shared by every queue and repetition.
enum Input {
    ScheduleExpire { deadlines: Vec<u64> },
    IdleTouch { n: usize, picks: Vec<u32> },
    CancelMostly(Churn),
    LatePoll { deadlines: Vec<u64> },
}

impl Input {
    fn generate(workload: Workload, n: usize) -> Self {
        let seed = 0x7135_7000 + workload as u64;
        let mut rng = SmallRng::seed_from_u64(seed);
        match workload {
            Workload::ScheduleExpire => Input::ScheduleExpire {
                deadlines: (0..n).map(|_| rng.random_range(1..=W1_HORIZON)).collect(),
            },
            Workload::IdleTouch => Input::IdleTouch {
                n,
                picks: (0..10 * n).map(|_| rng.random_range(0..n as u32)).collect(),
            },
            Workload::CancelMostly => Input::CancelMostly(Churn::generate(n, &mut rng)),
            Workload::LatePoll => Input::LatePoll {
                deadlines: (0..n).map(|_| rng.random_range(1..=W4_HORIZON)).collect(),
            },
        }
    }

    /// How many timers a correct queue fires in this workload.
    fn expected_fired(&self) -> u64 {
        match self {
            Input::ScheduleExpire { deadlines } | Input::LatePoll { deadlines } => {
                deadlines.len() as u64
            }
            Input::IdleTouch { .. } => 0,
            Input::CancelMostly(churn) => churn.expiries,
        }
    }

    fn run<C: Contender>(&self, q: &mut C) -> Outcome {
        match self {
            Input::ScheduleExpire { deadlines } => schedule_expire(q, deadlines),
            Input::IdleTouch { n, picks } => {
                let mut handles = Vec::with_capacity(*n);
                idle_touch(q, *n, picks, &mut handles)
            }
            Input::CancelMostly(churn) => {
                let mut handles = Vec::with_capacity(churn.fill.len());
                cancel_mostly(q, churn, &mut handles)
            }
            Input::LatePoll { deadlines } => late_poll(q, deadlines),
        }
    }
}

/// W1: insert n timers, then expire one tick at a time to the horizon. All timed, each phase
/// on its own as well.
fn schedule_expire<C: Contender>(q: &mut C, deadlines: &[u64]) -> Outcome {
    let ops = deadlines.len() as u64;
    let insert = timed(q, ops, |q| {
        for (value, &deadline) in (0u32..).zip(deadlines) {
            let _ = q.insert(deadline, value);
        }
        Tally::default()
    });
    let expire = timed(q, ops, |q| {
        let mut tally = Tally::default();
        for now in 1..=W1_HORIZON {
            q.expire(now, &mut |v| tally.fire(now, v));
        }
        tally
    });
    Outcome {
        net: insert.net + expire.net,
        excluded: insert.excluded + expire.excluded,
        ops,
        tally: expire.tally,
        phases: Some((insert.net, expire.net)),
    }
}

/// W2: n timers at `W2_TIMEOUT` (untimed); then 10n touches of random timers to
/// now + `W2_TIMEOUT`, one tick (and one expiry) every n/1000 touches. Timed: the touches and
/// expiries.
fn idle_touch<C: Contender>(
    q: &mut C,
    n: usize,
    picks: &[u32],
    handles: &mut Vec<C::Handle>,
) -> Outcome {
    handles.clear();
    handles.extend((0..n as u32).map(|value| q.insert(W2_TIMEOUT, value)));
    let per_tick = (n / 1000).max(1);
    timed(q, picks.len() as u64, |q| {
        let mut tally = Tally::default();
        let mut now = 0;
        for chunk in picks.chunks(per_tick) {
            for &pick in chunk {
                let handle = &mut handles[pick as usize];
                *handle = q.reschedule(*handle, now + W2_TIMEOUT);
            }
            now += 1;
            q.expire(now, &mut |v| tally.fire(now, v));
        }
        tally
    })
}

/// W3: fill to n (untimed), then replay the churn trace. Timed: the whole trace.
fn cancel_mostly<C: Contender>(q: &mut C, churn: &Churn, handles: &mut Vec<C::Handle>) -> Outcome {
    handles.clear();
    handles.extend(
        (0u32..)
            .zip(&churn.fill)
            .map(|(slot, &deadline)| q.insert(deadline, slot)),
    );
    timed(q, churn.replacements, |q| {
        let mut tally = Tally::default();
        for step in &churn.steps {
            match *step {
                Step::Tick(now) => q.expire(now, &mut |v| tally.fire(now, v)),
                Step::Insert { slot, deadline } => {
                    handles[slot as usize] = q.insert(deadline, slot)
                }
                Step::Cancel(slot) => q.cancel(handles[slot as usize]),
            }
        }
        tally
    })
}

/// W4: insert n timers over the hour (untimed), then one expiry at its end. Timed: the expiry.
fn late_poll<C: Contender>(q: &mut C, deadlines: &[u64]) -> Outcome {
    for (value, &deadline) in (0u32..).zip(deadlines) {
        let _ = q.insert(deadline, value);
    }
    timed(q, deadlines.len() as u64, |q| {
        let mut tally = Tally::default();
        q.expire(W4_HORIZON, &mut |v| tally.fire(W4_HORIZON, v));
        tally
    })
}

// ---------------------------------------------------------------------------------------------
// The contenders, by name.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Wheel,
    Heap4,
    Heap2,
    LazyBinaryHeap,
    BTreeMap,
    DelayQueue,
    HhwtCancellable,
    HhwtQuad,
    /// `block_wheel.rs`: an experiment, neither ours nor a peer.
    Blocks,
}

impl Kind {
    const ALL: [Kind; 9] = [
        Kind::Wheel,
        Kind::Heap4,
        Kind::Heap2,
        Kind::LazyBinaryHeap,
        Kind::BTreeMap,
        Kind::DelayQueue,
        Kind::HhwtCancellable,
        Kind::HhwtQuad,
        Kind::Blocks,
    ];

    const PEERS: [Kind; 5] = [
        Kind::LazyBinaryHeap,
        Kind::BTreeMap,
        Kind::DelayQueue,
        Kind::HhwtCancellable,
        Kind::HhwtQuad,
    ];

    fn key(self) -> &'static str {
        match self {
            Kind::Wheel => "wheel",
            Kind::Heap4 => "heap4",
            Kind::Heap2 => "heap2",
            Kind::LazyBinaryHeap => "binaryheap",
            Kind::BTreeMap => "btreemap",
            Kind::DelayQueue => "delayqueue",
            Kind::HhwtCancellable => "hhwt",
            Kind::HhwtQuad => "hhwtquad",
            Kind::Blocks => "blocks",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Kind::Wheel => "TimerWheel",
            Kind::Heap4 => "TimerHeap d=4",
            Kind::Heap2 => "TimerHeap d=2",
            Kind::LazyBinaryHeap => "BinaryHeap (lazy)",
            Kind::BTreeMap => "BTreeMap",
            Kind::DelayQueue => "DelayQueue",
            Kind::HhwtCancellable => "hhwt cancellable",
            Kind::HhwtQuad => "hhwt quad + gen. slab",
            Kind::Blocks => "block wheel (experiment)",
        }
    }

    fn ours(self) -> bool {
        matches!(self, Kind::Wheel | Kind::Heap4 | Kind::Heap2)
    }
}

/// Builds a fresh queue of `kind` for n = N live timers and runs `input` on it. Building and
/// dropping the queue are not timed.
fn run_sized<const N: usize>(kind: Kind, input: &Input) -> Outcome {
    match kind {
        Kind::Wheel => input.run(&mut our_wheel(N)),
        Kind::Heap4 => input.run(&mut our_heap::<4>(N)),
        Kind::Heap2 => input.run(&mut our_heap::<2>(N)),
        Kind::LazyBinaryHeap => input.run(&mut LazyHeap::prefaulted(N)),
        Kind::BTreeMap => input.run(&mut BTreePeer::new()),
        Kind::DelayQueue => {
            let runtime = paused_runtime();
            let _context = runtime.enter();
            input.run(&mut DelayQueuePeer::new(&runtime, N))
        }
        Kind::HhwtCancellable => input.run(&mut HhwtCancellable::new()),
        Kind::HhwtQuad => input.run(&mut HhwtQuad::prefaulted(N)),
        Kind::Blocks => input.run(&mut block_wheel::BlockWheel::new(N)),
    }
}

fn run_one(kind: Kind, n: usize, input: &Input) -> Outcome {
    match n {
        1_000 => run_sized::<1_000>(kind, input),
        10_000 => run_sized::<10_000>(kind, input),
        100_000 => run_sized::<100_000>(kind, input),
        1_000_000 => run_sized::<1_000_000>(kind, input),
        _ => unreachable!("sizes are checked at startup"),
    }
}

/// Heap bytes per live timer: after inserting n (W1's deadlines), and at the peak of W2.
#[derive(Clone, Copy)]
struct Footprint {
    resident: f64,
    touch_peak: f64,
}

fn footprint<C: Contender>(
    make: impl Fn() -> C,
    n: usize,
    deadlines: &[u64],
    picks: &[u32],
) -> Footprint {
    start_counting();
    let mut q = make();
    for (value, &deadline) in (0u32..).zip(deadlines) {
        let _ = q.insert(deadline, value);
    }
    let (resident, _) = stop_counting();
    drop(q);

    let mut handles = Vec::with_capacity(n);
    start_counting();
    let mut q = make();
    let _ = idle_touch(&mut q, n, picks, &mut handles);
    let (_, peak) = stop_counting();
    drop(q);

    Footprint {
        resident: resident as f64 / n as f64,
        touch_peak: peak as f64 / n as f64,
    }
}

fn footprint_sized<const N: usize>(kind: Kind, deadlines: &[u64], picks: &[u32]) -> Footprint {
    match kind {
        Kind::Wheel => footprint(|| our_wheel(N), N, deadlines, picks),
        Kind::Heap4 => footprint(|| our_heap::<4>(N), N, deadlines, picks),
        Kind::Heap2 => footprint(|| our_heap::<2>(N), N, deadlines, picks),
        Kind::LazyBinaryHeap => footprint(|| LazyHeap::with_capacity(N, N), N, deadlines, picks),
        Kind::BTreeMap => footprint(BTreePeer::new, N, deadlines, picks),
        Kind::DelayQueue => {
            let runtime = paused_runtime();
            let _context = runtime.enter();
            footprint(|| DelayQueuePeer::new(&runtime, N), N, deadlines, picks)
        }
        Kind::HhwtCancellable => footprint(HhwtCancellable::new, N, deadlines, picks),
        Kind::HhwtQuad => footprint(HhwtQuad::new, N, deadlines, picks),
        Kind::Blocks => footprint(|| block_wheel::BlockWheel::new(N), N, deadlines, picks),
    }
}

fn footprint_one(kind: Kind, n: usize, deadlines: &[u64], picks: &[u32]) -> Footprint {
    match n {
        1_000 => footprint_sized::<1_000>(kind, deadlines, picks),
        10_000 => footprint_sized::<10_000>(kind, deadlines, picks),
        100_000 => footprint_sized::<100_000>(kind, deadlines, picks),
        1_000_000 => footprint_sized::<1_000_000>(kind, deadlines, picks),
        _ => unreachable!("sizes are checked at startup"),
    }
}

/// Our queue's bytes per timer at capacity n: its slots (the only heap allocation) plus the
/// queue proper, exact and fixed.
fn our_bytes_per_slot(kind: Kind, n: usize) -> f64 {
    let (slot, queue) = match kind {
        Kind::Wheel => (size_of::<WheelSlot<u32>>(), size_of::<OurWheel>()),
        Kind::Heap4 => (size_of::<HeapSlot<u32>>(), size_of::<OurHeap<4>>()),
        Kind::Heap2 => (size_of::<HeapSlot<u32>>(), size_of::<OurHeap<2>>()),
        _ => return f64::NAN,
    };
    (n * slot + queue) as f64 / n as f64
}

/// Our queue's slot bytes per timer: what the allocator sees of it.
fn our_slot_bytes(kind: Kind) -> f64 {
    match kind {
        Kind::Wheel => size_of::<WheelSlot<u32>>() as f64,
        Kind::Heap4 | Kind::Heap2 => size_of::<HeapSlot<u32>>() as f64,
        _ => f64::NAN,
    }
}

// ---------------------------------------------------------------------------------------------
// Driver.

struct Config {
    sizes: Vec<usize>,
    workloads: Vec<Workload>,
    kinds: Vec<Kind>,
    reps: Option<usize>,
    memory: bool,
    quick: bool,
}

impl Config {
    const SIZES: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];

    fn from_env() -> Self {
        // `cargo bench` passes `--bench`; `cargo test --benches` does not: then a smoke pass.
        let quick = !std::env::args().any(|a| a == "--bench");
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let sizes = match env("TIMER_BENCH_SIZES") {
            Some(list) => {
                list.split(',')
                    .map(|s| {
                        let n: usize =
                            s.trim().replace('_', "").parse().unwrap_or_else(|_| {
                                panic!("TIMER_BENCH_SIZES: `{s}` is not a number")
                            });
                        assert!(
                            Self::SIZES.contains(&n),
                            "TIMER_BENCH_SIZES: {n} is not one of {:?}",
                            Self::SIZES
                        );
                        n
                    })
                    .collect()
            }
            None if quick => vec![1_000],
            None => vec![1_000, 100_000, 1_000_000],
        };
        let workloads = match env("TIMER_BENCH_WORKLOADS") {
            Some(list) => list
                .split(',')
                .map(|s| {
                    let s = s.trim().to_ascii_lowercase();
                    *Workload::ALL
                        .iter()
                        .find(|w| w.key() == s)
                        .unwrap_or_else(|| panic!("TIMER_BENCH_WORKLOADS: `{s}` is not w1..w4"))
                })
                .collect(),
            None => Workload::ALL.to_vec(),
        };
        let kinds = match env("TIMER_BENCH_QUEUES") {
            Some(list) => list
                .split(',')
                .map(|s| {
                    let s = s.trim().to_ascii_lowercase();
                    *Kind::ALL
                        .iter()
                        .find(|k| k.key() == s)
                        .unwrap_or_else(|| panic!("TIMER_BENCH_QUEUES: `{s}` is not a queue"))
                })
                .collect(),
            // The experiment runs only when asked for by name.
            None => Kind::ALL
                .into_iter()
                .filter(|&k| k != Kind::Blocks)
                .collect(),
        };
        let reps = env("TIMER_BENCH_REPS")
            .map(|r| r.trim().parse().expect("TIMER_BENCH_REPS: a number"))
            .or(quick.then_some(1));
        let memory = env("TIMER_BENCH_MEMORY").is_none_or(|m| m.trim() != "0");
        Self {
            sizes,
            workloads,
            kinds,
            reps,
            memory,
            quick,
        }
    }

    fn reps(&self, n: usize) -> usize {
        self.reps.unwrap_or(if n <= 100_000 { 5 } else { 3 }).max(1)
    }
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len() % 2 == 1 {
        samples[mid]
    } else {
        (samples[mid - 1] + samples[mid]) / 2.0
    }
}

/// Which clock a figure comes from.
#[derive(Clone, Copy)]
enum Clock {
    Cpu,
    Wall,
}

impl PerOp {
    fn by(self, clock: Clock) -> f64 {
        match clock {
            Clock::Cpu => self.cpu,
            Clock::Wall => self.wall,
        }
    }
}

/// The measured cells of one (workload, n) row.
struct Row {
    workload: Workload,
    n: usize,
    /// Per kind measured: every repetition's ns/op.
    samples: Vec<(Kind, Vec<PerOp>)>,
    /// Per repetition: DelayQueue's excluded clock-driving time, ns/op.
    delay_queue_clock: Vec<PerOp>,
    /// Per kind measured, where the workload has phases: every repetition's (insert, expire)
    /// ns/op by CPU time.
    phases: Vec<(Kind, Vec<(f64, f64)>)>,
}

impl Row {
    fn samples(&self, kind: Kind, clock: Clock) -> Option<Vec<f64>> {
        self.samples
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, s)| s.iter().map(|p| p.by(clock)).collect())
    }

    fn median(&self, kind: Kind, clock: Clock) -> Option<f64> {
        self.samples(kind, clock).map(|mut s| median(&mut s))
    }

    fn spread(&self, kind: Kind, clock: Clock) -> Option<(f64, f64)> {
        self.samples(kind, clock).map(|s| {
            (
                s.iter().copied().fold(f64::INFINITY, f64::min),
                s.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        })
    }

    /// The measured peer with the lowest median, and that median.
    fn fastest_peer(&self, clock: Clock) -> Option<(Kind, f64)> {
        Kind::PEERS
            .iter()
            .filter_map(|&k| self.median(k, clock).map(|m| (k, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Our wheel's median over the fastest peer's.
    fn wheel_ratio(&self, clock: Clock) -> Option<f64> {
        let wheel = self.median(Kind::Wheel, clock)?;
        self.fastest_peer(clock).map(|(_, best)| wheel / best)
    }
}

fn measure(workload: Workload, n: usize, reps: usize, kinds: &[Kind]) -> Row {
    let started = Instant::now();
    let input = Input::generate(workload, n);
    let expected = input.expected_fired();
    let mut samples: Vec<(Kind, Vec<PerOp>)> = kinds.iter().map(|&k| (k, Vec::new())).collect();
    let mut delay_queue_clock = Vec::new();
    let mut phases: Vec<(Kind, Vec<(f64, f64)>)> = Vec::new();
    let mut reference: Option<(Kind, Tally)> = None;
    for rep in 0..reps {
        // Rotate the order each repetition, so drift on a shared machine spreads evenly.
        for k in 0..kinds.len() {
            let i = (k + rep) % kinds.len();
            let kind = kinds[i];
            let outcome = run_one(kind, n, &input);
            assert_eq!(
                outcome.tally.fired, expected,
                "{workload:?} n={n}: {kind:?} fired the wrong number of timers"
            );
            match reference {
                None => reference = Some((kind, outcome.tally)),
                Some((first, tally)) => assert_eq!(
                    tally, outcome.tally,
                    "{workload:?} n={n}: {kind:?} fired other timers, or at other ticks, than \
                     {first:?}"
                ),
            }
            samples[i].1.push(outcome.per_op(outcome.net));
            if let Some((insert, expire)) = outcome.phases {
                let per = |spent: Spent| outcome.per_op(spent).cpu;
                match phases.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, list)) => list.push((per(insert), per(expire))),
                    None => phases.push((kind, vec![(per(insert), per(expire))])),
                }
            }
            if kind == Kind::DelayQueue {
                delay_queue_clock.push(outcome.per_op(outcome.excluded));
            }
        }
    }
    let row = Row {
        workload,
        n,
        samples,
        delay_queue_clock,
        phases,
    };
    let medians: Vec<String> = kinds
        .iter()
        .filter_map(|&k| {
            row.median(k, Clock::Cpu)
                .map(|m| format!("{} {}", k.title(), fmt_ns(m)))
        })
        .collect();
    eprintln!(
        "{} n={}: {} ({:.1} s)",
        workload.key(),
        fmt_n(n),
        medians.join(", "),
        started.elapsed().as_secs_f64()
    );
    row
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 100.0 {
        format!("{ns:.0}")
    } else {
        format!("{ns:.1}")
    }
}

fn fmt_n(n: usize) -> String {
    match n {
        1_000 => "1k".into(),
        10_000 => "10k".into(),
        100_000 => "100k".into(),
        1_000_000 => "1M".into(),
        _ => n.to_string(),
    }
}

fn table_header(out: &mut String, first: &str, kinds: &[Kind], extra: &[&str]) {
    let mut header = format!("| {first} |");
    let mut rule = String::from("|---|");
    if first == "workload" {
        header.push_str(" n |");
        rule.push_str("--:|");
    }
    for kind in kinds {
        let _ = write!(header, " {} |", kind.title());
        rule.push_str("--:|");
    }
    for column in extra {
        let _ = write!(header, " {column} |");
        rule.push_str("--:|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
}

fn report(config: &Config, rows: &[Row], memory: &[(usize, Vec<(Kind, Footprint)>)]) -> String {
    let kinds = &config.kinds;
    let mut out = String::new();
    let reps: Vec<String> = config
        .sizes
        .iter()
        .map(|&n| format!("{} at n = {}", config.reps(n), fmt_n(n)))
        .collect();
    let _ = writeln!(
        out,
        "Median ns per operation, by this thread's CPU time ({} repetitions). All queues run \
         side by side in one process, their order rotated each repetition. DelayQueue: net of \
         advancing tokio's paused clock (see the second table).\n",
        reps.join(", ")
    );
    table_header(
        &mut out,
        "workload",
        kinds,
        &["fastest peer", "wheel / fastest peer"],
    );
    for row in rows {
        let _ = write!(out, "| {} | {} |", row.workload.title(), fmt_n(row.n));
        for &kind in kinds {
            let cell = row
                .median(kind, Clock::Cpu)
                .map_or_else(|| "–".into(), fmt_ns);
            let _ = write!(out, " {cell} |");
        }
        let peer = row
            .fastest_peer(Clock::Cpu)
            .map_or("–", |(peer, _)| peer.title());
        let ratio = row
            .wheel_ratio(Clock::Cpu)
            .map_or_else(|| "–".into(), |r| format!("{r:.2}"));
        let _ = writeln!(out, " {peer} | {ratio} |");
    }

    let _ = writeln!(
        out,
        "\nSpread: min–max ns per operation (CPU time) over the repetitions. Then, by wall time: \
         our wheel over the fastest peer (medians), and the time excluded from DelayQueue's \
         figures, spent in `block_on(tokio::time::advance(..))` (one per expiry call that moves \
         time; median ns per operation).\n"
    );
    table_header(
        &mut out,
        "workload",
        kinds,
        &[
            "wheel / fastest peer, wall",
            "DelayQueue clock driving (excluded), wall",
        ],
    );
    for row in rows {
        let _ = write!(out, "| {} | {} |", row.workload.key(), fmt_n(row.n));
        for &kind in kinds {
            let cell = row.spread(kind, Clock::Cpu).map_or_else(
                || "–".into(),
                |(lo, hi)| format!("{}–{}", fmt_ns(lo), fmt_ns(hi)),
            );
            let _ = write!(out, " {cell} |");
        }
        let ratio = row
            .wheel_ratio(Clock::Wall)
            .map_or_else(|| "–".into(), |r| format!("{r:.2}"));
        let clock = if row.delay_queue_clock.is_empty() {
            "–".into()
        } else {
            let mut wall: Vec<f64> = row.delay_queue_clock.iter().map(|p| p.wall).collect();
            fmt_ns(median(&mut wall))
        };
        let _ = writeln!(out, " {ratio} | {clock} |");
    }

    let phased: Vec<&Row> = rows.iter().filter(|r| !r.phases.is_empty()).collect();
    if !phased.is_empty() {
        let _ = writeln!(
            out,
            "\nPhases of the workloads that have them: median ns per timer (CPU time), insert \
             phase / expire phase.\n"
        );
        table_header(&mut out, "workload", kinds, &[]);
        for row in phased {
            let _ = write!(out, "| {} | {} |", row.workload.key(), fmt_n(row.n));
            for &kind in kinds {
                let cell = row.phases.iter().find(|(k, _)| *k == kind).map_or_else(
                    || "–".into(),
                    |(_, list)| {
                        let mut inserts: Vec<f64> = list.iter().map(|p| p.0).collect();
                        let mut expires: Vec<f64> = list.iter().map(|p| p.1).collect();
                        format!(
                            "{} / {}",
                            fmt_ns(median(&mut inserts)),
                            fmt_ns(median(&mut expires))
                        )
                    },
                );
                let _ = write!(out, " {cell} |");
            }
            let _ = writeln!(out);
        }
    }

    if !memory.is_empty() {
        let _ = writeln!(
            out,
            "\nBytes per timer. Ours: (n × `size_of` of a slot + `size_of` of the queue proper) / \
             n, exact and fixed (the allocator's count of the slots is checked against it). Peers: heap bytes counted by this bench's global allocator, per live timer: \
             after inserting n timers (W1's deadlines; Vec-based peers pre-sized to n) / at the \
             peak of W2 (lazy deletion holds stale entries until a sweep).\n"
        );
        table_header(&mut out, "n", kinds, &[]);
        for (n, footprints) in memory {
            let _ = write!(out, "| {} |", fmt_n(*n));
            for (kind, f) in footprints {
                if kind.ours() {
                    let _ = write!(out, " {:.3} |", our_bytes_per_slot(*kind, *n));
                } else {
                    let _ = write!(out, " {:.1} / {:.1} |", f.resident, f.touch_peak);
                }
            }
            let _ = writeln!(out);
        }
    }
    out
}

fn run(config: Config) {
    let started = Instant::now();
    eprintln!(
        "timer_peers: Instant::now() costs {} ns",
        instant_cost().as_nanos()
    );
    if config.quick {
        eprintln!("timer_peers: smoke pass (`cargo bench` runs the full benchmark)");
    }
    let mut rows = Vec::new();
    let mut memory = Vec::new();
    for &n in &config.sizes {
        for &workload in &config.workloads {
            rows.push(measure(workload, n, config.reps(n), &config.kinds));
        }
        if config.memory {
            let Input::ScheduleExpire { deadlines } = Input::generate(Workload::ScheduleExpire, n)
            else {
                unreachable!("W1's input")
            };
            let Input::IdleTouch { picks, .. } = Input::generate(Workload::IdleTouch, n) else {
                unreachable!("W2's input")
            };
            let footprints: Vec<(Kind, Footprint)> = config
                .kinds
                .iter()
                .map(|&kind| {
                    let f = footprint_one(kind, n, &deadlines, &picks);
                    if kind.ours() {
                        // The allocator sees exactly the slots and nothing else.
                        let exact = our_slot_bytes(kind);
                        assert!(
                            (f.resident - exact).abs() < 1e-9
                                && (f.touch_peak - exact).abs() < 1e-9,
                            "{kind:?}: counted {} / {} B per slot, size_of says {exact}",
                            f.resident,
                            f.touch_peak
                        );
                    }
                    (kind, f)
                })
                .collect();
            memory.push((n, footprints));
        }
    }
    print!("{}", report(&config, &rows, &memory));
    eprintln!(
        "timer_peers: done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
}

fn main() {
    let config = Config::from_env();
    // Our queues keep their slots in a `Vec` (`with_storage`); only the queue proper, a few
    // KiB, is on the stack. The benchmark thread's stack is the main thread's usual 8 MiB.
    std::thread::Builder::new()
        .name("timer_peers".into())
        .stack_size(8 << 20)
        .spawn(move || run(config))
        .expect("spawn benchmark thread")
        .join()
        .expect("benchmark thread panicked");
}
