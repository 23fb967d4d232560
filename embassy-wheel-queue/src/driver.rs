//! [`TimeDriver`]: an embassy-time driver for any free-running counter with one compare
//! interrupt ([`Counter`]), on an [`IntegratedWheel`].

use core::cell::RefCell;
use core::task::Waker;

use critical_section::Mutex;

use crate::IntegratedWheel;

/// A free-running up-counter with one compare interrupt: all a [`TimeDriver`] needs from a
/// timer peripheral. A board implements it for one timer; the driver does the rest.
///
/// The counter must count up by one per cycle and wrap from `2^BITS - 1` to 0 on its own
/// (an STM32 timer with its auto-reload at the maximum, an nRF RTC, a down-counter read
/// inverted); it must never stop or be reset while the driver runs.
///
/// # Examples
///
/// See [`TimeDriver`].
pub trait Counter {
    /// The counter's width in bits, 2 to 32: 16 for most STM32 timers, 24 for an nRF RTC, 32
    /// for STM32's TIM2 and TIM5 or a CMSDK APB timer.
    const BITS: u32;

    /// Counter cycles per embassy-time tick (`embassy_time_driver::TICK_HZ`): 1 when the
    /// counter is prescaled to the tick rate.
    const CYCLES_PER_TICK: u32 = 1;

    /// The counter's value (only the low [`BITS`](Self::BITS) bits are used).
    fn read(&self) -> u32;

    /// Arms the compare interrupt for when the counter next equals `value` (below `2^BITS`),
    /// replacing the value armed before, and clears a compare event still pending. The driver
    /// only asks for values at most half a wrap ahead, and reads the counter again afterwards,
    /// so a value the counter has already passed (a late write) is handled by the driver; it
    /// must not be made to fire early.
    fn set_compare(&mut self, value: u32);

    /// Clears the compare interrupt's pending flag (the driver does this first in
    /// [`TimeDriver::on_interrupt`]).
    fn clear_interrupt(&mut self);

    /// Enables the compare interrupt, and its line in the interrupt controller, once: the last
    /// step of [`TimeDriver::start`], inside its critical section.
    fn enable_interrupt(&mut self);
}

/// An embassy-time driver over a [`Counter`] and an [`IntegratedWheel`]: a board gives it a
/// counter and calls [`on_interrupt`](Self::on_interrupt) from the compare interrupt.
///
/// - **64-bit time** from the `BITS`-wide counter, by the half-period scheme (as RTIC's
///   monotonics and embassy's STM32 driver): the driver counts half periods of the counter
///   (the count's parity is the counter's top bit at the last reading), and reads time as the
///   half periods plus the counter's low bits, so a reading taken after the counter crossed a
///   half-period boundary but before anything noticed is still right. The compare interrupt is
///   always armed for the next boundary at the latest, so the driver sees every boundary; a
///   board must only let it run within half a wrap (32,768 cycles of a 16-bit counter) of its
///   event.
/// - **The alarm** is the queue's next deadline, exactly: the compare is armed for the earlier
///   of that deadline and the next half-period boundary. When the counter has already passed
///   the value written (an interrupt between the driver's reading and its write, or a deadline
///   a cycle away), the driver sees it on a second reading and wakes what is due at once.
/// - **The embassy-time contract:** [`now`](Self::now) is monotonic and reads 0 until
///   [`start`](Self::start); a deadline already passed is woken at once; no task is woken
///   before its tick. Everything runs in a critical section (`critical-section`).
///
/// With a HAL that has its own time driver (embassy-stm32's `time-driver-*` features,
/// embassy-nrf's `time-driver-rtc1`), leave those features out, keep the HAL's `time` feature
/// (or whatever gives it embassy-time), implement [`Counter`] for the timer the HAL's driver
/// would have used, and bind its interrupt yourself.
///
/// # Examples
///
/// A counter in a `static` stands in for a timer's registers here; a board reads and writes
/// its timer's instead (the repository's `firmware/src/board/*/time_driver.rs`).
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// use embassy_wheel_queue::{Counter, IntegratedWheel, TimeDriver};
/// # use embassy_executor as _;
/// # #[unsafe(export_name = "__pender")]
/// # fn pender(_context: *mut ()) {}
///
/// /// The "hardware": a 16-bit counter and its compare register.
/// static COUNT: AtomicU32 = AtomicU32::new(0);
/// static COMPARE: AtomicU32 = AtomicU32::new(0);
///
/// struct Timer;
///
/// impl Counter for Timer {
///     const BITS: u32 = 16;
///     fn read(&self) -> u32 {
///         COUNT.load(Ordering::Relaxed)
///     }
///     fn set_compare(&mut self, value: u32) {
///         COMPARE.store(value, Ordering::Relaxed);
///     }
///     fn clear_interrupt(&mut self) {}
///     fn enable_interrupt(&mut self) {}
/// }
///
/// // SAFETY: the program's only integrated timer queue.
/// static DRIVER: TimeDriver<Timer> = TimeDriver::new(unsafe { IntegratedWheel::new() });
/// // In a firmware, `embassy_time_driver::time_driver_impl!(static DRIVER: TimeDriver<Timer> =
/// // ...)` instead, and the timer's interrupt handler calls `DRIVER.on_interrupt()`.
///
/// COUNT.store(40_000, Ordering::Relaxed);
/// DRIVER.start(Timer);
/// assert_eq!(DRIVER.now(), 40_000);
/// // Nothing queued: the compare waits for the next half-period boundary.
/// assert_eq!(COMPARE.load(Ordering::Relaxed), 0);
/// // The counter wraps; its interrupt lets the driver count the half period.
/// COUNT.store(0, Ordering::Relaxed);
/// DRIVER.on_interrupt();
/// COUNT.store(5, Ordering::Relaxed);
/// assert_eq!(DRIVER.now(), 65_541);
/// ```
pub struct TimeDriver<C, const FOREIGN: usize = 4> {
    state: Mutex<RefCell<State<C, FOREIGN>>>,
}

struct State<C, const FOREIGN: usize> {
    /// `None` until `start`.
    counter: Option<C>,
    clock: Clock,
    queue: IntegratedWheel<FOREIGN>,
}

/// Extends a counter's readings to 64-bit cycles.
struct Clock {
    /// Half periods of the counter before the last reading's; its parity is the top bit the
    /// counter had then.
    half_periods: u64,
}

impl Clock {
    /// Cycles since the counter's zero at the start, from a reading taken less than half a
    /// period after the previous one's half-period boundary was crossed.
    #[inline]
    fn cycles<C: Counter>(&mut self, reading: u32) -> u64 {
        let top_shift = C::BITS - 1;
        let reading = reading & mask::<C>();
        let half = (reading >> top_shift) & 1;
        if (self.half_periods & 1) as u32 != half {
            // A boundary was crossed since the last reading.
            self.half_periods += 1;
        }
        // In the half period's second half the counter's top bit stands for it, not in
        // addition to it: flip it back out (after a wrap not yet counted the counter is low,
        // and the flip adds the half period that is missing).
        let parity = (self.half_periods & 1) as u32;
        (self.half_periods << top_shift) + u64::from(reading ^ (parity << top_shift))
    }
}

/// The counter's value bits.
#[inline]
const fn mask<C: Counter>() -> u32 {
    u32::MAX >> (32 - C::BITS)
}

impl<C: Counter, const FOREIGN: usize> TimeDriver<C, FOREIGN> {
    /// A driver over `queue` whose counter is not started: time reads 0 and wakers are queued
    /// until [`start`](Self::start).
    ///
    /// # Examples
    ///
    /// See [`TimeDriver`].
    pub const fn new(queue: IntegratedWheel<FOREIGN>) -> Self {
        const {
            assert!(
                C::BITS >= 2 && C::BITS <= 32,
                "a Counter is 2 to 32 bits wide"
            );
            assert!(C::CYCLES_PER_TICK >= 1, "a tick is at least one cycle");
        }
        Self {
            state: Mutex::new(RefCell::new(State {
                counter: None,
                clock: Clock { half_periods: 0 },
                queue,
            })),
        }
    }

    /// Starts time from the counter (whose current value becomes the time), arms the compare
    /// interrupt and enables it. Call it once, with the counter running.
    ///
    /// # Examples
    ///
    /// See [`TimeDriver`].
    pub fn start(&self, mut counter: C) {
        critical_section::with(|cs| {
            let mut state = self.state.borrow_ref_mut(cs);
            let state = &mut *state;
            let reading = counter.read() & mask::<C>();
            state.clock.half_periods = u64::from(reading >> (C::BITS - 1));
            arm(&mut state.clock, &mut state.queue, &mut counter);
            counter.enable_interrupt();
            state.counter = Some(counter);
        });
    }

    /// The compare interrupt's handler: counts a half period if one passed, wakes the tasks
    /// that are due and arms the compare again.
    ///
    /// # Examples
    ///
    /// See [`TimeDriver`].
    pub fn on_interrupt(&self) {
        critical_section::with(|cs| {
            let mut state = self.state.borrow_ref_mut(cs);
            let State {
                counter,
                clock,
                queue,
            } = &mut *state;
            if let Some(counter) = counter {
                counter.clear_interrupt();
                arm(clock, queue, counter);
            }
        });
    }

    /// The time in ticks (0 before [`start`](Self::start)).
    ///
    /// # Examples
    ///
    /// See [`TimeDriver`].
    pub fn now(&self) -> u64 {
        critical_section::with(|cs| {
            let mut state = self.state.borrow_ref_mut(cs);
            let State { counter, clock, .. } = &mut *state;
            counter.as_ref().map_or(0, |counter| {
                clock.cycles::<C>(counter.read()) / u64::from(C::CYCLES_PER_TICK)
            })
        })
    }

    /// Schedules `waker` to be woken at tick `at` (at once if `at` has passed): what
    /// `embassy_time::Timer` asks of the driver.
    ///
    /// # Examples
    ///
    /// See [`TimeDriver`], and [`IntegratedWheel::schedule_wake`], whose contract this is.
    pub fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            let mut state = self.state.borrow_ref_mut(cs);
            let State {
                counter,
                clock,
                queue,
            } = &mut *state;
            if queue.schedule_wake(at, waker) {
                if let Some(counter) = counter {
                    arm(clock, queue, counter);
                }
            }
        });
    }
}

/// Wakes what is due and arms the compare for the next deadline or the next half-period
/// boundary, whichever comes first; again while the counter turns out to have passed the value
/// written.
fn arm<C: Counter, const FOREIGN: usize>(
    clock: &mut Clock,
    queue: &mut IntegratedWheel<FOREIGN>,
    counter: &mut C,
) {
    let cycles_per_tick = u64::from(C::CYCLES_PER_TICK);
    let half_period = 1u64 << (C::BITS - 1);
    loop {
        let now = clock.cycles::<C>(counter.read());
        let alarm = queue
            .next_expiration(now / cycles_per_tick)
            .saturating_mul(cycles_per_tick);
        // The next boundary: the driver must see every one.
        let boundary = (now | (half_period - 1)).saturating_add(1);
        let target = alarm.min(boundary);
        // The low bits are the counter's value at `target`.
        counter.set_compare(target as u32 & mask::<C>());
        if clock.cycles::<C>(counter.read()) < target {
            return;
        }
    }
}

impl<C: Counter + Send + 'static, const FOREIGN: usize> embassy_time_driver::Driver
    for TimeDriver<C, FOREIGN>
{
    fn now(&self) -> u64 {
        TimeDriver::now(self)
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        TimeDriver::schedule_wake(self, at, waker);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::item::testing::{tasks, TestTask};
    use std::cell::Cell;
    use std::rc::Rc;
    use std::vec::Vec;

    /// A simulated `BITS`-bit counter with a compare interrupt, running at `CPT` cycles per tick.
    /// Time moves only when the test says (and, if asked, while the driver reads or writes the
    /// counter).
    #[derive(Default)]
    struct Sim {
        /// Cycles since the counter's zero.
        time: Cell<u64>,
        compare: Cell<Option<u32>>,
        pending: Cell<bool>,
        enabled: Cell<bool>,
        /// Cycles that pass inside the next `set_compare`, before the value is written: an
        /// interrupt, or a slow bus, between the driver's reading and its write.
        delay_before_write: Cell<u64>,
        /// Cycles that pass at every reading.
        per_read: Cell<u64>,
    }

    impl Sim {
        fn mask(bits: u32) -> u64 {
            u64::MAX >> (64 - bits)
        }

        /// When the counter next equals the compare value, after `from`.
        fn next_match(&self, bits: u32) -> Option<u64> {
            let compare = u64::from(self.compare.get()?);
            let mask = Self::mask(bits);
            let first = self.time.get() + 1;
            Some(first + (compare.wrapping_sub(first) & mask))
        }

        /// Moves time on by `cycles`, raising the compare event if the counter passes it.
        fn advance(&self, bits: u32, cycles: u64) {
            let to = self.time.get() + cycles;
            if self.next_match(bits).is_some_and(|at| at <= to) {
                self.pending.set(true);
            }
            self.time.set(to);
        }
    }

    struct SimCounter<const BITS: u32, const CPT: u32>(Rc<Sim>);

    impl<const BITS: u32, const CPT: u32> Counter for SimCounter<BITS, CPT> {
        const BITS: u32 = BITS;
        const CYCLES_PER_TICK: u32 = CPT;

        fn read(&self) -> u32 {
            let reading = (self.0.time.get() & Sim::mask(BITS)) as u32;
            self.0.advance(BITS, self.0.per_read.get());
            reading
        }

        fn set_compare(&mut self, value: u32) {
            self.0.advance(BITS, self.0.delay_before_write.take());
            assert!(u64::from(value) <= Sim::mask(BITS));
            self.0.compare.set(Some(value));
            self.0.pending.set(false);
        }

        fn clear_interrupt(&mut self) {
            self.0.pending.set(false);
        }

        fn enable_interrupt(&mut self) {
            self.0.enabled.set(true);
        }
    }

    /// A driver on a simulated counter, and tasks whose wake-ups it checks: none before its
    /// deadline, none long after, none twice, none lost.
    struct Bench<const BITS: u32, const CPT: u32> {
        sim: Rc<Sim>,
        driver: TimeDriver<SimCounter<BITS, CPT>>,
        tasks: Vec<&'static TestTask>,
        wakers: Vec<Waker>,
        /// Each task's deadline while it sleeps.
        deadlines: Vec<Option<u64>>,
        /// Each task's wake-ups seen so far.
        seen: Vec<usize>,
        /// Cycles from the compare event to its handler.
        latency: u64,
        /// The last time the driver read.
        last_now: u64,
        /// The cycle the driver's time counts from: the counter's last zero before the start.
        origin: u64,
        /// When each task last asked to sleep (cycles from `origin`).
        asked_at: Vec<u64>,
    }

    impl<const BITS: u32, const CPT: u32> Bench<BITS, CPT> {
        const HALF: u64 = 1 << (BITS - 1);

        fn new(tasks_n: usize, start_cycles: u64) -> Self {
            let sim = Rc::new(Sim::default());
            sim.time.set(start_cycles);
            #[allow(unsafe_code)]
            // SAFETY: each bench's tasks are its own, and given to this queue only.
            let queue = unsafe { IntegratedWheel::new() };
            let driver = TimeDriver::new(queue);
            driver.start(SimCounter(sim.clone()));
            assert!(sim.enabled.get());
            let (tasks, wakers) = tasks(tasks_n);
            Self {
                sim,
                driver,
                deadlines: std::vec![None; tasks_n],
                seen: std::vec![0; tasks_n],
                tasks,
                wakers,
                latency: 0,
                last_now: 0,
                origin: start_cycles & !Sim::mask(BITS),
                asked_at: std::vec![0; tasks_n],
            }
        }

        /// Cycles since the driver's zero.
        fn cycles(&self) -> u64 {
            self.sim.time.get() - self.origin
        }

        /// The true time in ticks.
        fn ticks(&self) -> u64 {
            self.cycles() / u64::from(CPT)
        }

        /// The driver's time, checked: monotonic, and the truth when reading takes no time.
        fn now(&mut self) -> u64 {
            let truth = self.ticks();
            let now = self.driver.now();
            assert!(
                now >= self.last_now,
                "time went back: {now} < {}",
                self.last_now
            );
            assert!(now >= truth, "now {now}, but the counter says {truth}");
            if self.sim.per_read.get() == 0 {
                assert_eq!(now, truth);
            }
            self.last_now = now;
            now
        }

        fn sleep(&mut self, task: usize, at: u64) {
            if self.deadlines[task].is_none() {
                self.asked_at[task] = self.cycles();
            }
            self.deadlines[task] = Some(self.deadlines[task].map_or(at, |d| d.min(at)));
            self.driver.schedule_wake(at, &self.wakers[task]);
            self.check_wakes();
        }

        /// Checks the tasks woken since the last look: each was due, and not long ago.
        fn check_wakes(&mut self) {
            let now = self.ticks();
            for i in 0..self.tasks.len() {
                let wakes = self.tasks[i].wakes();
                if wakes == self.seen[i] {
                    continue;
                }
                assert_eq!(wakes, self.seen[i] + 1, "task {i} woken twice");
                let deadline =
                    self.deadlines[i].unwrap_or_else(|| panic!("task {i} woken unasked"));
                assert!(
                    now >= deadline,
                    "task {i} woken at {now}, before {deadline}"
                );
                // Due from its deadline, or from when it asked if that was later.
                let due = deadline
                    .saturating_mul(u64::from(CPT))
                    .max(self.asked_at[i]);
                let slack = self.latency + 64 + 4 * u64::from(CPT);
                assert!(
                    self.cycles() <= due + slack,
                    "task {i} woken at cycle {}, long after tick {deadline}",
                    self.cycles()
                );
                self.deadlines[i] = None;
                self.seen[i] = wakes;
            }
        }

        /// Lets the counter run to cycle `end`, running the compare interrupt (after
        /// `latency`) at every event on the way.
        fn run_to(&mut self, end: u64) {
            loop {
                if !self.sim.pending.get() {
                    match self.sim.next_match(BITS) {
                        Some(at) if at <= end => self.sim.advance(BITS, at - self.sim.time.get()),
                        _ => break,
                    }
                }
                assert!(self.sim.pending.get());
                self.sim.advance(BITS, self.latency);
                self.driver.on_interrupt();
                self.check_wakes();
            }
            let time = self.sim.time.get();
            self.sim.advance(BITS, end.saturating_sub(time));
        }

        /// Runs until every task has been woken; fails if one never is (lost).
        fn run_out(&mut self) {
            let last = self.deadlines.iter().flatten().max().copied().unwrap_or(0);
            let end =
                self.origin + last.saturating_mul(u64::from(CPT)) + 2 * Self::HALF + self.latency;
            self.run_to(end.max(self.sim.time.get()));
            let lost: Vec<_> = (0..self.tasks.len())
                .filter(|&i| self.deadlines[i].is_some())
                .collect();
            assert!(lost.is_empty(), "tasks {lost:?} never woken");
        }
    }

    #[test]
    fn time_follows_a_16_bit_counter_through_many_wraps() {
        let mut b = Bench::<16, 1>::new(1, 0);
        for step in 1..200u64 {
            b.run_to(step * 7_919);
            b.now();
        }
        // Interrupts arrive late, up to just under half a wrap.
        b.latency = Bench::<16, 1>::HALF - 100;
        for step in 200..400u64 {
            b.run_to(step * 7_919);
            b.now();
        }
        assert!(b.now() >= 399 * 7_919);
    }

    #[test]
    fn time_follows_a_32_bit_counter_at_25_000_cycles_a_tick() {
        let mut b = Bench::<32, 25_000>::new(1, 0);
        for step in 1..20u64 {
            b.run_to(step * 987_654_321);
            b.now();
        }
        // Three wraps of the counter, about nine minutes at 25 MHz.
        assert!(b.sim.time.get() > 3 << 32);
    }

    #[test]
    fn time_is_right_between_a_boundary_and_its_interrupt() {
        let mut b = Bench::<16, 1>::new(1, 30_000);
        // Past the half-period boundary (32,768) and past the wrap, the interrupt not yet run.
        for target in [32_768, 40_000, 65_535, 65_536, 70_000] {
            let time = b.sim.time.get();
            b.sim.advance(16, target - time);
            assert_eq!(b.now(), target);
            b.driver.on_interrupt();
            b.sim.pending.set(false);
            assert_eq!(b.now(), target);
        }
    }

    #[test]
    fn sleepers_wake_at_their_tick_across_wraps_of_a_16_bit_counter() {
        let mut b = Bench::<16, 1>::new(4, 60_000);
        b.latency = 3;
        b.sleep(0, 60_010);
        b.sleep(1, 65_536 + 5);
        b.sleep(2, 200_000);
        // Sixty-four wraps ahead.
        b.sleep(3, 1 << 22);
        b.run_to(210_000);
        assert_eq!(b.deadlines[..3], [None, None, None]);
        b.run_out();
    }

    #[test]
    fn counter_passing_the_compare_before_it_is_written_still_wakes() {
        let mut b = Bench::<16, 1>::new(2, 1_000);
        // The compare for tick 1,003 is written when the counter is at 1,010: no event will
        // come, so the driver must see it and wake the task itself.
        b.sim.delay_before_write.set(10);
        b.sleep(0, 1_003);
        assert_eq!(b.tasks[0].wakes(), 1);
        assert!(b.sim.time.get() >= 1_003);
        // The same with a slow write on every arming, and readings that take time.
        b.sim.per_read.set(2);
        for at in [1_020, 1_021, 1_025] {
            b.sim.delay_before_write.set(8);
            b.sleep(1, at);
            b.run_to(b.sim.time.get() + 40);
        }
        b.run_out();
    }

    #[test]
    fn deadline_in_the_past_wakes_at_once() {
        let mut b = Bench::<32, 3>::new(2, 0);
        b.run_to(3_000_000);
        b.sleep(0, 5);
        assert_eq!(b.tasks[0].wakes(), 1);
        b.sleep(1, b.ticks());
        assert_eq!(b.tasks[1].wakes(), 1);
        b.run_out();
    }

    #[test]
    fn before_start_time_is_zero_and_wakers_wait() {
        let sim = Rc::new(Sim::default());
        sim.time.set(500);
        #[allow(unsafe_code)]
        // SAFETY: this test's tasks are its own, and given to this queue only.
        let queue = unsafe { IntegratedWheel::new() };
        let driver: TimeDriver<SimCounter<16, 1>> = TimeDriver::new(queue);
        let (t, w) = tasks(1);
        assert_eq!(driver.now(), 0);
        driver.schedule_wake(100, &w[0]);
        driver.on_interrupt();
        assert_eq!(t[0].wakes(), 0);
        driver.start(SimCounter(sim.clone()));
        assert_eq!(t[0].wakes(), 1, "due at start");
        assert_eq!(driver.now(), 500);
    }

    /// SplitMix64: seeded randomness without a dependency.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % n
        }
    }

    /// Random sleeps, runs, latencies, slow readings and late compare writes.
    fn random_run<const BITS: u32, const CPT: u32>(seed: u64, steps: usize) {
        let mut rng = Rng(seed);
        let half = Bench::<BITS, CPT>::HALF;
        let mut b = Bench::<BITS, CPT>::new(8, rng.below(4 * half));
        for _ in 0..steps {
            match rng.below(6) {
                0 | 1 => {
                    let task = rng.below(8) as usize;
                    let now = b.ticks();
                    let at = match rng.below(4) {
                        0 => now.saturating_sub(rng.below(50)),
                        1 => now + rng.below(8),
                        2 => now + rng.below(4 * half / u64::from(CPT) + 2),
                        _ => now + rng.below(1_000),
                    };
                    b.sleep(task, at);
                }
                2 => b.sim.delay_before_write.set(rng.below(12)),
                3 => {
                    b.latency = rng.below(half / 2);
                    b.sim.per_read.set(rng.below(3));
                }
                _ => {
                    let end = b.sim.time.get() + rng.below(3 * half);
                    b.run_to(end);
                    b.now();
                }
            }
        }
        b.run_out();
    }

    #[test]
    fn random_sleeps_on_16_and_32_bit_counters_wake_on_time() {
        let cases = if cfg!(miri) { 2 } else { 200 };
        let steps = if cfg!(miri) { 100 } else { 400 };
        for case in 0..cases {
            random_run::<16, 1>(0xd71e_0000 + case, steps);
            random_run::<32, 7>(0xd732_0000 + case, steps);
            random_run::<12, 1>(0xd712_0000 + case, steps);
        }
    }
}
