//! The embassy-time driver of the NUCLEO-F429ZI, tickless, on TIM2 (a 32-bit general-purpose
//! timer) in place of embassy-stm32's `time-driver-*`: `embassy-wheel-queue`'s [`TimeDriver`]
//! (64-bit time, alarms, the embassy-time contract) and its [`IntegratedWheel`] (each task's
//! timer in the task), on TIM2 as its [`Counter`]. This file only drives TIM2.
//!
//! - **Counter**: TIM2 counts up at [`TICK_HZ`] (its kernel clock divided by the prescaler) and
//!   wraps every 2^32 ticks (about 71 minutes at 1 MHz).
//! - **Compare**: channel 1 (`CCR1`, interrupt `CC1IF` on TIM2's IRQ). The driver asks for at
//!   most half a wrap ahead, so idle, the core wakes once every 36 minutes.
//!
//! Never early: the compare matches when the counter reaches the value, and the driver wakes
//! only what the counter shows as due; a value written after the counter passed it is caught
//! by the driver's second reading.
//!
//! Built in CI; not yet run on silicon.

// The module (TIM2's NVIC line) and cortex-m-rt's `#[interrupt]` attribute, one name.
use embassy_stm32::interrupt;
use embassy_stm32::interrupt::InterruptExt;
use embassy_stm32::pac::timer::regs::SrGp16;
use embassy_stm32::pac::TIM2 as REGS;
use embassy_stm32::peripherals::TIM2;
use embassy_stm32::{rcc, Peri};
use embassy_time_driver::TICK_HZ;
use embassy_wheel_queue::{Counter, IntegratedWheel, TimeDriver};

/// TIM2's compare channel 1 (index 0 in the register API).
const CHANNEL: usize = 0;

/// TIM2, started: counting at the tick rate, with compare channel 1.
pub struct Tim2Counter(Peri<'static, TIM2>);

impl Counter for Tim2Counter {
    const BITS: u32 = 32;

    fn read(&self) -> u32 {
        REGS.cnt().read()
    }

    fn set_compare(&mut self, value: u32) {
        // Cleared before the new value is written: a match of the old value in between only
        // interrupts early, and the driver wakes nothing that is not due.
        self.clear_interrupt();
        REGS.ccr(CHANNEL).write_value(value);
    }

    fn clear_interrupt(&mut self) {
        // rc_w0: ones leave the other flags alone.
        REGS.sr().write_value(SrGp16(!(1 << (CHANNEL + 1))));
    }

    fn enable_interrupt(&mut self) {
        REGS.dier().write(|w| w.set_ccie(CHANNEL, true));
        interrupt::TIM2.unpend();
        // SAFETY: the handler below is ready, and the firmware's critical sections mask every
        // interrupt (PRIMASK), which enabling a line cannot break.
        unsafe { interrupt::TIM2.enable() };
    }
}

embassy_time_driver::time_driver_impl!(static DRIVER: TimeDriver<Tim2Counter> =
    // SAFETY: the firmware's only integrated timer queue, so no other queue is given its tasks.
    TimeDriver::new(unsafe { IntegratedWheel::new() }));

/// Starts TIM2 at [`TICK_HZ`], arms its compare channel and enables its interrupt. Time reads 0
/// until then.
///
/// # Panics
///
/// If TIM2's clock is not a multiple of [`TICK_HZ`] at most 65,536 times it (the prescaler).
pub fn start(tim2: Peri<'static, TIM2>) {
    rcc::enable_and_reset::<TIM2>();
    let clock = u64::from(rcc::frequency::<TIM2>().0);
    let divider = clock / TICK_HZ;
    assert!(
        divider >= 1 && divider * TICK_HZ == clock && divider <= 1 << 16,
        "TIM2's clock must be a multiple of the tick rate"
    );
    REGS.cr1().modify(|w| w.set_cen(false));
    // In range: asserted above.
    REGS.psc().write_value((divider - 1) as u16);
    REGS.arr().write_value(u32::MAX);
    // Loads the prescaler (it takes effect at an update event) and zeroes the counter.
    REGS.egr().write(|w| w.set_ug(true));
    REGS.sr().write_value(SrGp16(0));
    REGS.cr1().modify(|w| w.set_cen(true));
    DRIVER.start(Tim2Counter(tim2));
}

#[interrupt]
fn TIM2() {
    DRIVER.on_interrupt();
}
