//! `WrappingCounter` against a simulated free-running hardware counter: after every reading the
//! extended value must equal the true number of ticks counted since the start.
//!
//! Readings come less than one full period apart (the counter's documented requirement), with
//! random advances from 0 to `2^BITS - 1` ticks, so a run passes through thousands of wraps.
//! `TIMER_MODEL_SEED=0x..` replays one seed; every failure message prints its seed.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use timer_core::WrappingCounter;

/// Every seed derives from this and the test's name.
const BASE_SEED: u64 = 0x0c0f_fee0_7131_e5ee;

/// Seeds per test.
const SEEDS: u64 = 8;

/// Readings per seed.
const READINGS: usize = 20_000;

/// The seeds of `test`, or just `TIMER_MODEL_SEED` when it is set.
fn seeds(test: &str) -> Vec<u64> {
    if let Ok(text) = std::env::var("TIMER_MODEL_SEED") {
        let text = text.trim().replace('_', "");
        let seed = match text.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => text.parse(),
        };
        return vec![seed.unwrap_or_else(|_| panic!("TIMER_MODEL_SEED={text:?} is not a number"))];
    }
    let name = test.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    (0..SEEDS)
        .map(|case| {
            SmallRng::seed_from_u64(BASE_SEED ^ name ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .random()
        })
        .collect()
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
    fn random_advance(rng: &mut SmallRng) -> u64 {
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
fn follow<const BITS: u32>(seed: u64, start: u32, register: Register) -> u64 {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mask = (Hardware::<BITS>::PERIOD - 1) as u32;
    assert_eq!(
        WrappingCounter::<BITS>::MASK,
        mask,
        "MASK of a {BITS}-bit counter"
    );
    let junk = |rng: &mut SmallRng| match register {
        Register::Clean => 0,
        Register::JunkAbove => rng.random::<u32>() & !mask,
    };
    let mut hardware = Hardware::<BITS> {
        start: start & mask,
        ticks: 0,
    };
    let mut clock = WrappingCounter::<BITS>::starting_at(start | junk(&mut rng));
    assert_eq!(
        clock.now(),
        0,
        "seed {seed:#x}: a fresh counter is at tick 0"
    );
    for reading in 0..READINGS {
        let advance = Hardware::<BITS>::random_advance(&mut rng);
        hardware.ticks += advance;
        let raw = hardware.register() | junk(&mut rng);
        let extended = clock.extend(raw);
        assert_eq!(
            extended, hardware.ticks,
            "{BITS}-bit counter, seed {seed:#x}, start {start:#x}, reading {reading}: raw {raw:#x} \
             after an advance of {advance}"
        );
        assert_eq!(
            clock.now(),
            extended,
            "seed {seed:#x}, reading {reading}: now()"
        );
    }
    hardware.ticks / Hardware::<BITS>::PERIOD
}

#[test]
fn counter_16_bit_from_zero_follows_hardware_across_thousands_of_wraps() {
    for seed in seeds("counter_16_bit_from_zero_follows_hardware_across_thousands_of_wraps") {
        let wraps = follow::<16>(seed, 0, Register::Clean);
        assert!(wraps >= 5_000, "seed {seed:#x}: only {wraps} wraps");
    }
}

#[test]
fn counter_16_bit_started_mid_count_follows_hardware() {
    for seed in seeds("counter_16_bit_started_mid_count_follows_hardware") {
        let start = SmallRng::seed_from_u64(seed).random_range(1..=0xFFFF);
        let wraps = follow::<16>(seed, start, Register::Clean);
        assert!(wraps >= 5_000, "seed {seed:#x}: only {wraps} wraps");
    }
}

#[test]
fn counter_16_bit_reading_with_junk_above_bit_16_follows_hardware() {
    for seed in seeds("counter_16_bit_reading_with_junk_above_bit_16_follows_hardware") {
        let start = SmallRng::seed_from_u64(seed).random();
        follow::<16>(seed, start, Register::JunkAbove);
    }
}

#[test]
fn counter_32_bit_from_zero_follows_hardware_across_thousands_of_wraps() {
    for seed in seeds("counter_32_bit_from_zero_follows_hardware_across_thousands_of_wraps") {
        let wraps = follow::<32>(seed, 0, Register::Clean);
        assert!(wraps >= 5_000, "seed {seed:#x}: only {wraps} wraps");
    }
}

#[test]
fn counter_32_bit_started_just_before_wrap_follows_hardware() {
    for seed in seeds("counter_32_bit_started_just_before_wrap_follows_hardware") {
        let start = u32::MAX - SmallRng::seed_from_u64(seed).random_range(0..16);
        follow::<32>(seed, start, Register::Clean);
    }
}

#[test]
fn counters_of_1_8_and_24_bits_follow_hardware() {
    for seed in seeds("counters_of_1_8_and_24_bits_follow_hardware") {
        let start = SmallRng::seed_from_u64(seed).random();
        follow::<1>(seed, start, Register::JunkAbove);
        follow::<8>(seed, start, Register::JunkAbove);
        follow::<24>(seed, start, Register::JunkAbove);
    }
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
