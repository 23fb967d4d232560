//! The memory table's figures: heap bytes per live timer, counted by the bench's allocator
//! (`counting_allocator.rs`) while a fresh queue takes n timers and while it runs W2, whose
//! reschedules are where lazy deletion holds on to stale entries. Our queues' counts are checked
//! against their exact `size_of` figures.

use crate::block_wheel::BlockWheel;
use crate::btree_map::BTreePeer;
use crate::contender::{Contender, Kind};
use crate::counting_allocator::{start_counting, stop_counting};
use crate::delay_queue::{paused_runtime, DelayQueuePeer};
use crate::hhwt_cancellable::HhwtCancellable;
use crate::hhwt_quad::HhwtQuad;
use crate::lazy_heap::LazyHeap;
use crate::ours::{our_heap, our_slot_bytes, our_wheel, our_wheel_in_blocks};
use crate::workloads::{idle_touch, Input, Workload};

/// Heap bytes per live timer: after inserting n (W1's deadlines), and at the peak of W2.
#[derive(Clone, Copy)]
pub struct Footprint {
    pub resident: f64,
    pub touch_peak: f64,
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
        Kind::WheelInBlocks => footprint(|| our_wheel_in_blocks(N), N, deadlines, picks),
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
        Kind::Blocks => footprint(|| BlockWheel::new(N), N, deadlines, picks),
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

/// Every kind's footprint at n, in the order given; our queues' checked against `size_of`.
pub fn footprints(kinds: &[Kind], n: usize) -> Vec<(Kind, Footprint)> {
    let Input::ScheduleExpire { deadlines } = Input::generate(Workload::ScheduleExpire, n) else {
        unreachable!("W1's input")
    };
    let Input::IdleTouch { picks, .. } = Input::generate(Workload::IdleTouch, n) else {
        unreachable!("W2's input")
    };
    kinds
        .iter()
        .map(|&kind| {
            let f = footprint_one(kind, n, &deadlines, &picks);
            if kind.ours() {
                // The allocator sees exactly the slots and nothing else.
                let exact = our_slot_bytes(kind);
                assert!(
                    (f.resident - exact).abs() < 1e-9 && (f.touch_peak - exact).abs() < 1e-9,
                    "{kind:?}: counted {} / {} B per slot, size_of says {exact}",
                    f.resident,
                    f.touch_peak
                );
            }
            (kind, f)
        })
        .collect()
}
