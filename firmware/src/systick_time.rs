//! The embassy-time driver for boards without one of their own (QEMU mps2-an386): SysTick at
//! [`TICK_HZ`] from the core clock, a 64-bit tick count, and a timer queue for `schedule_wake`.
//!
//! The count is extended in software by the SysTick exception, one tick per exception, so it
//! never wraps (2^64 ms). Alarms are checked on every tick: a waker fires in the tick its
//! deadline is reached, never before.

use core::cell::{Cell, RefCell};
use core::task::Waker;

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;
use cortex_m_rt::exception;
use critical_section::Mutex;
use embassy_time_driver::{Driver, TICK_HZ};
use embassy_time_queue_utils::Queue;

/// The frequency SysTick counts at (the core clock of mps2-an386).
pub const CORE_CLOCK_HZ: u32 = 25_000_000;

const RELOAD: u32 = {
    let cycles = CORE_CLOCK_HZ as u64 / TICK_HZ;
    assert!(
        cycles * TICK_HZ == CORE_CLOCK_HZ as u64,
        "the core clock must be a multiple of the tick rate"
    );
    assert!(
        cycles >= 2 && cycles <= 1 << 24,
        "SysTick reload out of range"
    );
    (cycles - 1) as u32
};

struct SysTickDriver {
    ticks: Mutex<Cell<u64>>,
    alarm_at: Mutex<Cell<u64>>,
    queue: Mutex<RefCell<Queue>>,
}

impl SysTickDriver {
    fn on_tick(&self) {
        critical_section::with(|cs| {
            let ticks = self.ticks.borrow(cs);
            let now = ticks.get() + 1;
            ticks.set(now);
            let alarm_at = self.alarm_at.borrow(cs);
            if now >= alarm_at.get() {
                // Wakes every expired waker; u64::MAX when none is left.
                alarm_at.set(self.queue.borrow_ref_mut(cs).next_expiration(now));
            }
        });
    }
}

impl Driver for SysTickDriver {
    fn now(&self) -> u64 {
        critical_section::with(|cs| self.ticks.borrow(cs).get())
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            let mut queue = self.queue.borrow_ref_mut(cs);
            if queue.schedule_wake(at, waker) {
                let now = self.ticks.borrow(cs).get();
                // A deadline already passed is woken here and now.
                self.alarm_at.borrow(cs).set(queue.next_expiration(now));
            }
        });
    }
}

embassy_time_driver::time_driver_impl!(static DRIVER: SysTickDriver = SysTickDriver {
    ticks: Mutex::new(Cell::new(0)),
    alarm_at: Mutex::new(Cell::new(u64::MAX)),
    queue: Mutex::new(RefCell::new(Queue::new())),
});

/// Starts the tick. Time reads 0 until then.
pub fn start(mut syst: SYST) {
    syst.disable_counter();
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

#[exception]
fn SysTick() {
    DRIVER.on_tick();
}
