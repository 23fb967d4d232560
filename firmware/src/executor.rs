//! The thread-mode executor: `embassy-executor`'s raw executor, polled from `main`, sleeping with
//! `WFI` between polls.
//!
//! embassy's own Cortex-M thread executor (`platform-cortex-m` + `executor-thread`) sleeps with
//! `WFE`, which QEMU 7.2 implements as a yield to its main loop, not a sleep: idle, the
//! emulated core would spin and QEMU would burn a host core. `WFI` sleeps on both QEMU and
//! silicon. The pender (called when a task is woken, from any context) raises a flag; the loop
//! checks it and executes `WFI` with interrupts masked, so a wake-up that arrives between the
//! check and the `WFI` leaves its interrupt pending and `WFI` returns at once: no wake-up is lost,
//! no cycle is spent polling.

use core::sync::atomic::{AtomicBool, Ordering};

use embassy_executor::{raw, Spawner};
use static_cell::StaticCell;

/// Raised by the pender: a task is ready to be polled.
static PENDED: AtomicBool = AtomicBool::new(false);

static EXECUTOR: StaticCell<raw::Executor> = StaticCell::new();

// The executor's pender (`embassy_executor::raw::Executor`'s contract): schedules a poll. It
// only stores to an atomic, so it is sound from any context, interrupt handlers included.
#[unsafe(export_name = "__pender")]
fn pender(_context: *mut ()) {
    PENDED.store(true, Ordering::Release);
}

/// Runs the executor forever: `spawn` spawns the first tasks.
///
/// # Panics
///
/// When called twice.
pub fn run(spawn: impl FnOnce(Spawner)) -> ! {
    let executor: &'static raw::Executor = EXECUTOR.init(raw::Executor::new(core::ptr::null_mut()));
    spawn(executor.spawner());
    loop {
        // SAFETY: `poll` is only ever called here, never re-entered: the pender only raises a
        // flag, and this loop is the only caller.
        unsafe { executor.poll() };
        cortex_m::interrupt::free(|_| {
            if !PENDED.swap(false, Ordering::Acquire) {
                cortex_m::asm::wfi();
            }
        });
    }
}
