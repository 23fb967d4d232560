//! `WrappingCounter` against a simulated free-running hardware counter: after every reading the
//! extended value must equal the true number of ticks counted since the start.
//!
//! Readings come less than one full period apart (the counter's documented requirement), with
//! random advances from 0 to `2^BITS - 1` ticks, so a run passes through thousands of wraps.
//! The runner is [`host_tests::property`] (proptest): [`RUNS`] runs per test, scaled by
//! `PROPERTY_SCALE`, chosen by `PROPERTY_SEED`; a failure is shrunk to its smallest run.

use host_tests::property::{self, Cases, Draw};
use rand::Rng;
use timer_core::WrappingCounter;

/// Runs per test.
const RUNS: usize = 8;

/// Readings per run.
const READINGS: usize = 20_000;

/// Runs `run` [`RUNS`] times on the property runner; what each returned.
fn runs<T>(test: &str, run: impl Fn(&mut Draw<'_>) -> T) -> Vec<T> {
    let cases = Cases {
        count: RUNS,
        // Up to four words a reading, for each of up to three counters.
        words: READINGS * 12,
    };
    property::run(test, cases, run)
}

/// A free-running `BITS`-bit up-counter: the true tick count, and the register that shows it.
struct Hardware<const BITS: u32> {
    /// The raw value at tick 0.
    start: u32,
    ticks: u64,
}

impl<const BITS: u32> Hardware<BITS> {
    /// Ticks per wrap.
    const PERIOD: u64 = 1 << BITS;

    fn register(&self) -> u32 {
        ((u64::from(self.start) + self.ticks) % Self::PERIOD) as u32
    }

    /// An advance shorter than one period: sometimes none, sometimes the longest allowed.
    fn random_advance(rng: &mut Draw<'_>) -> u64 {
        match rng.random_range(0..10) {
            0 => 0,
            1 => Self::PERIOD - 1,
            2 => rng.random_range(1..=16_u64.min(Self::PERIOD - 1)),
            _ => rng.random_range(0..Self::PERIOD),
        }
    }
}

/// How readings reach the counter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Register {
    /// Exactly `BITS` wide.
    Clean,
    /// With random junk above bit `BITS` (other fields of the register), to be masked off.
    JunkAbove,
}

/// Feeds `READINGS` readings of a counter that started at raw `start` and checks every one.
/// Returns how many times the hardware wrapped.
fn follow<const BITS: u32>(rng: &mut Draw<'_>, start: u32, register: Register) -> u64 {
    let mask = (Hardware::<BITS>::PERIOD - 1) as u32;
    assert_eq!(
        WrappingCounter::<BITS>::MASK,
        mask,
        "MASK of a {BITS}-bit counter"
    );
    let junk = |rng: &mut Draw<'_>| match register {
        Register::Clean => 0,
        Register::JunkAbove => rng.random::<u32>() & !mask,
    };
    let mut hardware = Hardware::<BITS> {
        start: start & mask,
        ticks: 0,
    };
    let mut clock = WrappingCounter::<BITS>::starting_at(start | junk(rng));
    assert_eq!(clock.now(), 0, "a fresh counter is at tick 0");
    for reading in 0..READINGS {
        let advance = Hardware::<BITS>::random_advance(rng);
        hardware.ticks += advance;
        let raw = hardware.register() | junk(rng);
        let extended = clock.extend(raw);
        assert_eq!(
            extended, hardware.ticks,
            "{BITS}-bit counter, start {start:#x}, reading {reading}: raw {raw:#x} after an \
             advance of {advance}"
        );
        assert_eq!(
            clock.now(),
            extended,
            "start {start:#x}, reading {reading}: now()"
        );
    }
    hardware.ticks / Hardware::<BITS>::PERIOD
}

#[test]
fn counter_16_bit_from_zero_follows_hardware_across_thousands_of_wraps() {
    let test = "counter_16_bit_from_zero_follows_hardware_across_thousands_of_wraps";
    for wraps in runs(test, |rng| follow::<16>(rng, 0, Register::Clean)) {
        assert!(wraps >= 5_000, "only {wraps} wraps");
    }
}

#[test]
fn counter_16_bit_started_mid_count_follows_hardware() {
    let test = "counter_16_bit_started_mid_count_follows_hardware";
    let wraps = runs(test, |rng| {
        let start = rng.random_range(1..=0xFFFF);
        follow::<16>(rng, start, Register::Clean)
    });
    for wraps in wraps {
        assert!(wraps >= 5_000, "only {wraps} wraps");
    }
}

#[test]
fn counter_16_bit_reading_with_junk_above_bit_16_follows_hardware() {
    let test = "counter_16_bit_reading_with_junk_above_bit_16_follows_hardware";
    runs(test, |rng| {
        let start = rng.random();
        follow::<16>(rng, start, Register::JunkAbove)
    });
}

#[test]
fn counter_32_bit_from_zero_follows_hardware_across_thousands_of_wraps() {
    let test = "counter_32_bit_from_zero_follows_hardware_across_thousands_of_wraps";
    for wraps in runs(test, |rng| follow::<32>(rng, 0, Register::Clean)) {
        assert!(wraps >= 5_000, "only {wraps} wraps");
    }
}

#[test]
fn counter_32_bit_started_just_before_wrap_follows_hardware() {
    let test = "counter_32_bit_started_just_before_wrap_follows_hardware";
    runs(test, |rng| {
        let start = u32::MAX - rng.random_range(0..16);
        follow::<32>(rng, start, Register::Clean)
    });
}

#[test]
fn counters_of_1_8_and_24_bits_follow_hardware() {
    runs("counters_of_1_8_and_24_bits_follow_hardware", |rng| {
        let start = rng.random();
        follow::<1>(rng, start, Register::JunkAbove);
        follow::<8>(rng, start, Register::JunkAbove);
        follow::<24>(rng, start, Register::JunkAbove);
    });
}

/// The documented limit: a reading a whole period late cannot be told from one on time, so
/// exactly one period is lost.
#[test]
fn counter_16_bit_reading_a_whole_period_late_loses_exactly_one_period() {
    let start: u32 = 0x1234;
    let mut clock: WrappingCounter<16> = WrappingCounter::starting_at(start);
    assert_eq!(clock.extend(start + 100), 100);
    assert_eq!(clock.extend(start + 100), 100, "no advance, no ticks");
    let on_time = 100 + 0xFFFF; // the longest advance allowed
    assert_eq!(clock.extend(start + on_time), u64::from(on_time));
    let late = on_time + 0x1_0000 + 5;
    assert_eq!(clock.extend(start + late), u64::from(late - 0x1_0000));
}
