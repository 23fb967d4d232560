//! Sleeping until the network or a deadline needs the main loop.
//!
//! One flag, raised by a [`Waker`] that interrupt handlers and drivers share: the LAN9118 IRQ
//! handler raises it directly, embassy-stm32's Ethernet interrupt wakes the waker the
//! embassy-net-driver adapter registered, and the time driver wakes it at the deadline
//! [`sleep_until`] scheduled. The main loop sleeps with `WFI` until the flag is up, so it polls
//! the application only when there is something to do.

use core::ptr;
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{RawWaker, RawWakerVTable, Waker};

use embassy_time::Instant;

static WOKEN: AtomicBool = AtomicBool::new(false);

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake_by_ref, wake_by_ref, drop_waker);

fn clone(_: *const ()) -> RawWaker {
    RawWaker::new(ptr::null(), &VTABLE)
}

fn wake_by_ref(_: *const ()) {
    raise();
}

fn drop_waker(_: *const ()) {}

// SAFETY: every function of VTABLE ignores the data pointer (so a null pointer is fine), clone
// returns a waker with the same vtable, and wake only stores to an atomic, which is sound from
// any context, interrupt handlers included.
static WAKER: Waker = unsafe { Waker::from_raw(RawWaker::new(ptr::null(), &VTABLE)) };

/// The waker that raises the main loop's flag.
pub fn waker() -> &'static Waker {
    &WAKER
}

/// Raises the flag: the main loop polls the application at its next chance.
pub fn raise() {
    WOKEN.store(true, Ordering::Release);
}

/// Sleeps until the flag is raised or `deadline` passes (`None`: no deadline).
///
/// The check and the `WFI` run with interrupts masked: an interrupt that arrives in between
/// stays pending, so `WFI` returns at once, and its handler runs when the mask lifts. No event
/// is lost and no cycle is spent polling.
pub fn sleep_until(deadline: Option<Instant>) {
    if let Some(at) = deadline {
        embassy_time_driver::schedule_wake(at.as_ticks(), waker());
    }
    loop {
        let done = cortex_m::interrupt::free(|_| {
            if WOKEN.swap(false, Ordering::Acquire)
                || deadline.is_some_and(|at| Instant::now() >= at)
            {
                return true;
            }
            cortex_m::asm::wfi();
            false
        });
        if done {
            return;
        }
    }
}
