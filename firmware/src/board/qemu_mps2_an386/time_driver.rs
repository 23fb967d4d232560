//! The embassy-time driver of QEMU mps2-an386, tickless: `embassy-wheel-queue`'s
//! [`TimeDriver`] (64-bit time, alarms, the embassy-time contract) and its [`IntegratedWheel`]
//! (each task's timer in the task), on a [`Counter`] made of two CMSDK APB timers at the 25 MHz
//! system clock. This file only drives the timers.
//!
//! - **Counter**, timer 1 (0x4000_1000): runs free from reload `0xFFFF_FFFF` with its interrupt
//!   off, so it wraps every 2^32 cycles (about 172 s); read inverted (it counts down), it counts
//!   up. A tick is [`CYCLES_PER_TICK`] cycles.
//! - **Compare**, timer 0 (0x4000_0000, IRQ [`ALARM_IRQ`]): a one-shot started for the distance
//!   from the counter's value to the compare value; its interrupt is the compare event. The
//!   driver asks for at most half a wrap ahead, so the core wakes for the application's
//!   deadlines, the network, and once every 86 s when idle.
//!
//! Never early: the one-shot is started for the distance from a counter reading taken before
//! it starts, so it fires at or after the compare value, and the driver wakes only what the
//! counter shows as due.

use embassy_time_driver::TICK_HZ;
use embassy_wheel_queue::{Counter, IntegratedWheel, TimeDriver};

use super::Irq;

/// The frequency the APB timers count at (the system clock of mps2-an386).
pub const CLOCK_HZ: u32 = 25_000_000;

/// The NVIC interrupt of the alarm timer (CMSDK APB timer 0).
pub const ALARM_IRQ: u16 = 8;

/// Timer cycles per embassy-time tick.
pub const CYCLES_PER_TICK: u32 = {
    let cycles = CLOCK_HZ as u64 / TICK_HZ;
    assert!(
        cycles >= 1 && cycles * TICK_HZ == CLOCK_HZ as u64 && cycles <= u32::MAX as u64,
        "the timer clock must be a multiple of the tick rate"
    );
    cycles as u32
};

const ALARM_TIMER_BASE: usize = 0x4000_0000;
const COUNTER_TIMER_BASE: usize = 0x4000_1000;

/// One CMSDK APB timer: a 32-bit down-counter that interrupts on its 1 -> 0 step, holds at 0 for
/// one cycle and reloads (QEMU `hw/timer/cmsdk-apb-timer.c`).
struct ApbTimer {
    base: usize,
}

impl ApbTimer {
    const CTRL: usize = 0x00;
    const VALUE: usize = 0x04;
    const RELOAD: usize = 0x08;
    /// INTSTATUS on reads, INTCLEAR (write 1 to clear) on writes.
    const INTCLEAR: usize = 0x0C;

    const CTRL_ENABLE: u32 = 1 << 0;
    const CTRL_IRQ_ENABLE: u32 = 1 << 3;

    /// # Safety
    ///
    /// A CMSDK APB timer must be mapped at `base`, and nothing else may access it.
    const unsafe fn new(base: usize) -> Self {
        Self { base }
    }

    fn read(&self, offset: usize) -> u32 {
        // SAFETY: `new`'s contract: a timer is mapped at `base`, and its registers are 32-bit
        // words at these offsets; reads have no side effects.
        unsafe { ((self.base + offset) as *const u32).read_volatile() }
    }

    fn write(&mut self, offset: usize, value: u32) {
        // SAFETY: `new`'s contract: a timer is mapped at `base`, nothing else accesses it, and
        // its registers are 32-bit words at these offsets.
        unsafe { ((self.base + offset) as *mut u32).write_volatile(value) }
    }

    /// Runs free from `0xFFFF_FFFF` down, without interrupts.
    fn start_free_running(&mut self) {
        self.write(Self::CTRL, 0);
        // Writing RELOAD also loads the count.
        self.write(Self::RELOAD, u32::MAX);
        self.write(Self::CTRL, Self::CTRL_ENABLE);
    }

    /// Interrupts `cycles` (at least 1) cycles from now, then every `cycles + 1` until re-armed.
    fn start_one_shot(&mut self, cycles: u32) {
        self.write(Self::CTRL, 0);
        self.acknowledge();
        self.write(Self::RELOAD, cycles.max(1));
        self.write(Self::CTRL, Self::CTRL_ENABLE | Self::CTRL_IRQ_ENABLE);
    }

    fn acknowledge(&mut self) {
        self.write(Self::INTCLEAR, 1);
    }
}

/// Timer 1 counting, timer 0 as its compare.
pub struct ApbCounter {
    counter: ApbTimer,
    alarm: ApbTimer,
}

impl Counter for ApbCounter {
    const BITS: u32 = 32;
    const CYCLES_PER_TICK: u32 = CYCLES_PER_TICK;

    fn read(&self) -> u32 {
        // Inverted: the timer counts down.
        !self.counter.read(ApbTimer::VALUE)
    }

    fn set_compare(&mut self, value: u32) {
        // A value the counter has passed gives a distance of nearly a wrap; the driver reads
        // the counter again and handles it.
        let distance = value.wrapping_sub(self.read());
        self.alarm.start_one_shot(distance);
    }

    fn clear_interrupt(&mut self) {
        self.alarm.acknowledge();
    }

    fn enable_interrupt(&mut self) {
        // Timer 0's own interrupt enable is set by every one-shot start.
        // SAFETY: the handler, `DefaultHandler`, is ready, and the firmware's critical sections
        // mask every interrupt (PRIMASK), which unmasking a line cannot break.
        unsafe { cortex_m::peripheral::NVIC::unmask(Irq(ALARM_IRQ)) };
    }
}

embassy_time_driver::time_driver_impl!(static DRIVER: TimeDriver<ApbCounter> =
    // SAFETY: the firmware's only integrated timer queue, so no other queue is given its tasks.
    TimeDriver::new(unsafe { IntegratedWheel::new() }));

/// Starts the counter, arms the compare and unmasks [`ALARM_IRQ`]. Time reads 0 until then.
/// The board's interrupt handler calls [`on_alarm_interrupt`] for [`ALARM_IRQ`].
///
/// # Safety
///
/// CMSDK APB timers 0 and 1 are mapped at 0x4000_0000 and 0x4000_1000 (mps2-an386), nothing
/// else uses them, and this is called once.
pub unsafe fn start() {
    // SAFETY: the caller's contract.
    let mut counter = unsafe { ApbTimer::new(COUNTER_TIMER_BASE) };
    // SAFETY: the caller's contract.
    let alarm = unsafe { ApbTimer::new(ALARM_TIMER_BASE) };
    counter.start_free_running();
    DRIVER.start(ApbCounter { counter, alarm });
}

/// The alarm timer's interrupt ([`ALARM_IRQ`]): wakes the tasks that are due and re-arms it.
pub fn on_alarm_interrupt() {
    DRIVER.on_interrupt();
}
