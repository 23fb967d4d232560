//! The embassy-time driver of the NUCLEO-F429ZI, tickless, on TIM2 (a 32-bit general-purpose
//! timer), with its timer queue on timer-core's 4-ary heap ([`HeapQueue`], O(log n) per
//! wake-up, [`QUEUE_CAPACITY`] wakers, 592 bytes in all), in place of embassy-stm32's
//! `time-driver-any` and embassy's generic queue.
//!
//! - **Counter**: TIM2 counts up at [`TICK_HZ`] (its kernel clock divided by the prescaler) and
//!   wraps every 2^32 ticks (about 71 minutes at 1 MHz). [`WrappingCounter<32>`] extends it to
//!   64-bit ticks.
//! - **Alarm**: compare channel 1 (`CCR1`, interrupt `CC1IF` on TIM2's IRQ) is always armed, for
//!   the next alarm or [`MAX_ALARM_TICKS`] ahead (half the wrap), whichever comes first; its
//!   interrupt wakes what is due and re-arms it. The cap is what reads the counter every half
//!   wrap at the latest, well within the one reading per wrap `WrappingCounter` needs: idle, the
//!   core wakes once every 36 minutes.
//!
//! Never early: the compare matches when the counter reaches the alarm's tick, and the interrupt
//! wakes only the wakers whose deadline the counter shows as reached. Never late by a wrap: if
//! the counter passed the compare value before it was written, arming sees it and raises the
//! compare event by software (`EGR.CC1G`).
//!
//! Only compiled here (no board attached to these machines): not run on silicon.

use core::cell::RefCell;
use core::task::Waker;

use critical_section::Mutex;
// The module (TIM2's NVIC line) and cortex-m-rt's `#[interrupt]` attribute, one name.
use embassy_stm32::interrupt;
use embassy_stm32::interrupt::InterruptExt;
use embassy_stm32::pac::timer::regs::SrGp16;
use embassy_stm32::pac::TIM2 as REGS;
use embassy_stm32::peripherals::TIM2;
use embassy_stm32::{rcc, Peri};
use embassy_time_driver::{Driver, TICK_HZ};
use embassy_wheel_queue::HeapQueue;
use timer_core::WrappingCounter;

/// Wakers the timer queue holds (tasks sleeping at once: the firmware has two); when full, a
/// new one is woken at once and registers again (see `embassy-wheel-queue`).
pub const QUEUE_CAPACITY: usize = 8;

/// The longest the alarm is armed ahead: half the counter's wrap (2^31 ticks).
pub const MAX_ALARM_TICKS: u64 = 1 << 31;

/// TIM2's compare channel 1 (index 0 in the register API).
const CHANNEL: usize = 0;

/// The extended counter, once started.
struct Counter {
    ticks: WrappingCounter<32>,
}

impl Counter {
    fn now(&mut self) -> u64 {
        self.ticks.extend(REGS.cnt().read())
    }

    /// Arms the compare channel for tick `alarm_at` (`u64::MAX`: none), measured from `now`, a
    /// reading taken before this call; capped at [`MAX_ALARM_TICKS`].
    fn arm(&mut self, now: u64, alarm_at: u64) {
        let distance = alarm_at.saturating_sub(now).clamp(1, MAX_ALARM_TICKS);
        // The low 32 bits: the counter's value at the alarm.
        let at = now.wrapping_add(distance) as u32;
        // Cleared before the new value is written: a match of the old value in between only
        // interrupts early, and the handler wakes nothing that is not due.
        REGS.sr().write_value(SrGp16(!(1 << (CHANNEL + 1))));
        REGS.ccr(CHANNEL).write_value(at);
        // Ticks since `now`: if the counter already reached `at` (a distance of a tick or
        // two, and a slow write), the match is gone until the next wrap: raise it now.
        let elapsed = REGS.cnt().read().wrapping_sub(now as u32);
        if u64::from(elapsed) >= distance {
            REGS.egr().write(|w| w.set_ccg(CHANNEL, true));
        }
    }
}

struct State {
    counter: Option<Counter>,
    /// The tick the alarm is armed for (at or before the earliest deadline in `queue`;
    /// `u64::MAX` when none), stored inverted: the driver's static is then all zero bytes and
    /// goes to `.bss`, not `.data`.
    alarm_at_inverted: u64,
    queue: HeapQueue<QUEUE_CAPACITY>,
}

struct Tim2Driver {
    state: Mutex<RefCell<State>>,
}

impl Tim2Driver {
    fn on_interrupt(&self) {
        critical_section::with(|cs| {
            let mut state = self.state.borrow_ref_mut(cs);
            let State {
                counter,
                alarm_at_inverted,
                queue,
            } = &mut *state;
            let Some(counter) = counter else {
                return;
            };
            let now = counter.now();
            if now >= !*alarm_at_inverted {
                // Wakes every expired waker; u64::MAX when none is left.
                *alarm_at_inverted = !queue.next_expiration(now);
            }
            // Also clears the interrupt flag.
            counter.arm(now, !*alarm_at_inverted);
        });
    }
}

impl Driver for Tim2Driver {
    fn now(&self) -> u64 {
        critical_section::with(|cs| {
            let mut state = self.state.borrow_ref_mut(cs);
            state.counter.as_mut().map_or(0, Counter::now)
        })
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            let mut state = self.state.borrow_ref_mut(cs);
            let State {
                counter,
                alarm_at_inverted,
                queue,
            } = &mut *state;
            if !queue.schedule_wake(at, waker) {
                return;
            }
            let now = counter.as_mut().map_or(0, Counter::now);
            // A deadline already passed is woken here and now.
            let next = queue.next_expiration(now);
            if next != !*alarm_at_inverted {
                *alarm_at_inverted = !next;
                if let Some(counter) = counter {
                    counter.arm(now, next);
                }
            }
        });
    }
}

embassy_time_driver::time_driver_impl!(static DRIVER: Tim2Driver = Tim2Driver {
    state: Mutex::new(RefCell::new(State {
        counter: None,
        alarm_at_inverted: 0,
        queue: HeapQueue::new(),
    })),
});

/// Starts TIM2 at [`TICK_HZ`], arms its compare channel and enables its interrupt. Time reads 0
/// until then.
///
/// # Panics
///
/// If TIM2's clock is not a multiple of [`TICK_HZ`] at most 65,536 times it (the prescaler).
pub fn start(_tim2: Peri<'static, TIM2>) {
    rcc::enable_and_reset::<TIM2>();
    let clock = u64::from(rcc::frequency::<TIM2>().0);
    let divider = clock / TICK_HZ;
    assert!(
        divider >= 1 && divider * TICK_HZ == clock && divider <= 1 << 16,
        "TIM2's clock must be a multiple of the tick rate"
    );
    critical_section::with(|cs| {
        REGS.cr1().modify(|w| w.set_cen(false));
        // In range: asserted above.
        REGS.psc().write_value((divider - 1) as u16);
        REGS.arr().write_value(u32::MAX);
        // Loads the prescaler (it takes effect at an update event) and zeroes the counter.
        REGS.egr().write(|w| w.set_ug(true));
        REGS.sr().write_value(SrGp16(0));
        REGS.dier().write(|w| w.set_ccie(CHANNEL, true));
        REGS.cr1().modify(|w| w.set_cen(true));

        let mut state = DRIVER.state.borrow_ref_mut(cs);
        let mut counter = Counter {
            ticks: WrappingCounter::starting_at(REGS.cnt().read()),
        };
        let now = counter.now();
        counter.arm(now, !state.alarm_at_inverted);
        state.counter = Some(counter);
    });
    interrupt::TIM2.unpend();
    // SAFETY: the handler below is ready, and no critical section is active whose data the
    // handler could touch outside one (it takes its own).
    unsafe { interrupt::TIM2.enable() };
}

#[interrupt]
fn TIM2() {
    DRIVER.on_interrupt();
}
