//! The embassy-time driver for boards without one of their own (QEMU mps2-an386), tickless:
//! two CMSDK APB timers at the 25 MHz system clock, a 64-bit tick count at [`TICK_HZ`], and a
//! timer queue for `schedule_wake` on timer-core's 4-ary heap ([`HeapQueue`], O(log n) per
//! wake-up, [`QUEUE_CAPACITY`] wakers: smaller than the wheel queue, which takes 5 KiB of list
//! heads whatever its capacity, and faster for this few).
//!
//! - **Counter**, timer 1 (0x4000_1000): runs free from reload `0xFFFF_FFFF` with its interrupt
//!   off, so it wraps every 2^32 cycles (about 172 s). Inverted (it counts down), it feeds a
//!   [`WrappingCounter<32>`], which extends it to 64-bit cycles; ticks are cycles divided by
//!   [`CYCLES_PER_TICK`].
//! - **Alarm**, timer 0 (0x4000_0000, IRQ [`ALARM_IRQ`]): a one-shot, always armed for the
//!   distance to the next alarm, capped at [`MAX_ALARM_CYCLES`] (half the counter's wrap, about
//!   86 s) and re-armed from its interrupt until the alarm is due. The cap is also what reads the
//!   counter every half wrap at the latest (plus interrupt latency), well within the one reading
//!   per wrap `WrappingCounter` needs: the core wakes only for the application's deadlines, the
//!   network, and once every 86 s when idle.
//!
//! Why not SysTick running free: its 24-bit count wraps every 0.67 s, and a wrap interrupt that
//! reads it once per wrap sees readings a little more than one wrap apart whenever its latency
//! grows, which loses a whole wrap. Timer 1's 32 bits with a half-wrap reading avoid that race.
//!
//! Never early: a tick `t` begins at cycle `t * CYCLES_PER_TICK` exactly, the alarm timer is
//! started for at least that many cycles after a counter reading taken before it starts, and its
//! interrupt wakes only the wakers whose deadline the counter shows as reached (re-arming for
//! the rest).

use core::cell::RefCell;
use core::task::Waker;

use critical_section::Mutex;
use embassy_time_driver::{Driver, TICK_HZ};
use embassy_wheel_queue::HeapQueue;
use timer_core::WrappingCounter;

/// The frequency the APB timers count at (the system clock of mps2-an386).
pub const CLOCK_HZ: u32 = 25_000_000;

/// Wakers the timer queue holds (tasks sleeping at once); when full, a new one is woken at
/// once and registers again (see `embassy-wheel-queue`).
pub const QUEUE_CAPACITY: usize = 32;

/// The NVIC interrupt of the alarm timer (CMSDK APB timer 0).
pub const ALARM_IRQ: u16 = 8;

/// Timer cycles per embassy-time tick.
pub const CYCLES_PER_TICK: u64 = {
    let cycles = CLOCK_HZ as u64 / TICK_HZ;
    assert!(
        cycles >= 1 && cycles * TICK_HZ == CLOCK_HZ as u64,
        "the timer clock must be a multiple of the tick rate"
    );
    cycles
};

/// The longest the alarm timer is armed for: half the counter's wrap (2^31 cycles, about 86 s).
pub const MAX_ALARM_CYCLES: u32 = 1 << 31;

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

    /// The count, inverted so that it counts up.
    fn count_up(&self) -> u32 {
        !self.read(Self::VALUE)
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

/// The two timers, once started.
struct Hardware {
    counter: ApbTimer,
    alarm: ApbTimer,
    cycles: WrappingCounter<32>,
}

impl Hardware {
    fn now_cycles(&mut self) -> u64 {
        self.cycles.extend(self.counter.count_up())
    }

    /// Arms the alarm timer for tick `alarm_at` (`u64::MAX`: none), measured from `now_cycles`,
    /// a reading taken before this call; capped at [`MAX_ALARM_CYCLES`].
    fn arm(&mut self, now_cycles: u64, alarm_at: u64) {
        let due = alarm_at.saturating_mul(CYCLES_PER_TICK);
        let distance = due
            .saturating_sub(now_cycles)
            .clamp(1, u64::from(MAX_ALARM_CYCLES));
        // In range: clamped to MAX_ALARM_CYCLES above.
        self.alarm.start_one_shot(distance as u32);
    }
}

struct State {
    hardware: Option<Hardware>,
    /// The tick the alarm is armed for (at or before the earliest deadline in `queue`;
    /// `u64::MAX` when none), stored inverted: the driver's static is then all zero bytes and
    /// goes to `.bss`, not `.data` (which would cost its whole size again in flash).
    alarm_at_inverted: u64,
    queue: HeapQueue<QUEUE_CAPACITY>,
}

struct ApbTimerDriver {
    state: Mutex<RefCell<State>>,
}

impl ApbTimerDriver {
    fn on_alarm(&self) {
        critical_section::with(|cs| {
            let mut state = self.state.borrow_ref_mut(cs);
            let State {
                hardware,
                alarm_at_inverted,
                queue,
            } = &mut *state;
            let Some(hardware) = hardware else {
                return;
            };
            hardware.alarm.acknowledge();
            let cycles = hardware.now_cycles();
            let now = cycles / CYCLES_PER_TICK;
            if now >= !*alarm_at_inverted {
                // Wakes every expired waker; u64::MAX when none is left.
                *alarm_at_inverted = !queue.next_expiration(now);
            }
            hardware.arm(cycles, !*alarm_at_inverted);
        });
    }
}

impl Driver for ApbTimerDriver {
    fn now(&self) -> u64 {
        critical_section::with(|cs| {
            let mut state = self.state.borrow_ref_mut(cs);
            state
                .hardware
                .as_mut()
                .map_or(0, |hardware| hardware.now_cycles() / CYCLES_PER_TICK)
        })
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            let mut state = self.state.borrow_ref_mut(cs);
            let State {
                hardware,
                alarm_at_inverted,
                queue,
            } = &mut *state;
            if !queue.schedule_wake(at, waker) {
                return;
            }
            let cycles = hardware.as_mut().map_or(0, Hardware::now_cycles);
            // A deadline already passed is woken here and now.
            let next = queue.next_expiration(cycles / CYCLES_PER_TICK);
            if next != !*alarm_at_inverted {
                *alarm_at_inverted = !next;
                if let Some(hardware) = hardware {
                    hardware.arm(cycles, next);
                }
            }
        });
    }
}

embassy_time_driver::time_driver_impl!(static DRIVER: ApbTimerDriver = ApbTimerDriver {
    state: Mutex::new(RefCell::new(State {
        hardware: None,
        alarm_at_inverted: 0,
        queue: HeapQueue::new(),
    })),
});

/// Starts the counter and arms the alarm timer. Time reads 0 until then. The caller unmasks
/// [`ALARM_IRQ`] and calls [`on_alarm_interrupt`] from its handler.
///
/// # Safety
///
/// CMSDK APB timers 0 and 1 are mapped at 0x4000_0000 and 0x4000_1000 (mps2-an386), nothing
/// else uses them, and this is called once.
pub unsafe fn start() {
    critical_section::with(|cs| {
        let mut state = DRIVER.state.borrow_ref_mut(cs);
        // SAFETY: the caller's contract.
        let mut counter = unsafe { ApbTimer::new(COUNTER_TIMER_BASE) };
        // SAFETY: the caller's contract.
        let alarm = unsafe { ApbTimer::new(ALARM_TIMER_BASE) };
        counter.start_free_running();
        let mut hardware = Hardware {
            cycles: WrappingCounter::starting_at(counter.count_up()),
            counter,
            alarm,
        };
        let cycles = hardware.now_cycles();
        hardware.arm(cycles, !state.alarm_at_inverted);
        state.hardware = Some(hardware);
    });
}

/// The alarm timer's interrupt ([`ALARM_IRQ`]): wakes the wakers that are due and re-arms it.
pub fn on_alarm_interrupt() {
    DRIVER.on_alarm();
}
