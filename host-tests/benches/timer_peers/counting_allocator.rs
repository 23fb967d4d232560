//! The bench's global allocator: the system allocator, counting live and peak heap bytes while
//! asked to. The memory table (`footprint.rs`) reads the peers' heap use from it, since they
//! report none themselves; it is also how the table checks that our queues allocate exactly
//! their slots.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

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

/// Starts counting from zero live bytes.
pub fn start_counting() {
    LIVE_BYTES.store(0, Ordering::SeqCst);
    PEAK_BYTES.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
}

/// Stops counting; returns (live, peak) bytes since [`start_counting`].
pub fn stop_counting() -> (isize, isize) {
    COUNTING.store(false, Ordering::SeqCst);
    (
        LIVE_BYTES.load(Ordering::SeqCst),
        PEAK_BYTES.load(Ordering::SeqCst),
    )
}
