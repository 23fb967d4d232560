//! What every queue under test offers the workloads ([`Contender`]), the queues by name
//! ([`Kind`]: their keys for `TIMER_BENCH_QUEUES` and their column titles), and how to build a
//! fresh one and run a workload on it. Each queue's adapter has a file of its own; the helpers
//! the slab-based adapters share are here.

use std::time::Duration;

use crate::block_wheel::BlockWheel;
use crate::btree_map::BTreePeer;
use crate::delay_queue::{paused_runtime, DelayQueuePeer};
use crate::hhwt_cancellable::HhwtCancellable;
use crate::hhwt_quad::HhwtQuad;
use crate::lazy_heap::LazyHeap;
use crate::ours::{our_heap, our_wheel, our_wheel_in_blocks};
use crate::workloads::{Input, Outcome};

/// What the workloads need from a queue. Values are `u32`; every handle passed in is live.
pub trait Contender {
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

/// The end of a slab's free list.
pub const NIL: u32 = u32::MAX;

/// An empty vector with room for `capacity` elements, every page of it written once.
pub fn prefaulted<T: Copy>(capacity: usize, filler: T) -> Vec<T> {
    let mut v = Vec::with_capacity(capacity);
    v.resize(capacity, filler);
    std::hint::black_box(&mut v);
    v.clear();
    v
}

/// The queues under test, by name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
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
    /// Our wheel made to keep its timers in blocks below 2^19 too: for choosing that
    /// threshold, run only when named.
    WheelInBlocks,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Wheel,
        Kind::Heap4,
        Kind::Heap2,
        Kind::LazyBinaryHeap,
        Kind::BTreeMap,
        Kind::DelayQueue,
        Kind::HhwtCancellable,
        Kind::HhwtQuad,
        Kind::Blocks,
        Kind::WheelInBlocks,
    ];

    pub const PEERS: [Kind; 5] = [
        Kind::LazyBinaryHeap,
        Kind::BTreeMap,
        Kind::DelayQueue,
        Kind::HhwtCancellable,
        Kind::HhwtQuad,
    ];

    pub fn key(self) -> &'static str {
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
            Kind::WheelInBlocks => "wheelblocks",
        }
    }

    pub fn title(self) -> &'static str {
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
            Kind::WheelInBlocks => "TimerWheel, blocks at any size",
        }
    }

    pub fn ours(self) -> bool {
        matches!(
            self,
            Kind::Wheel | Kind::WheelInBlocks | Kind::Heap4 | Kind::Heap2
        )
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
        Kind::Blocks => input.run(&mut BlockWheel::new(N)),
        Kind::WheelInBlocks => input.run(&mut our_wheel_in_blocks(N)),
    }
}

pub fn run_one(kind: Kind, n: usize, input: &Input) -> Outcome {
    match n {
        1_000 => run_sized::<1_000>(kind, input),
        10_000 => run_sized::<10_000>(kind, input),
        100_000 => run_sized::<100_000>(kind, input),
        1_000_000 => run_sized::<1_000_000>(kind, input),
        _ => unreachable!("sizes are checked at startup"),
    }
}
