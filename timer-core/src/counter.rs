//! Extending a wrapping hardware counter to monotonic 64-bit ticks.

use crate::Tick;

/// Extends a wrapping `BITS`-bit up-counter (a hardware timer, SysTick inverted, an RTC) to
/// monotonic `u64` ticks, for firmware time drivers.
///
/// Feed it every raw reading with [`extend`](Self::extend); it adds the distance travelled
/// since the previous reading, modulo `2^BITS`. It must see at least one reading per wrap
/// period (call it from the overflow or a half-period interrupt as well as when reading time):
/// a whole missed period is indistinguishable from none and loses `2^BITS` ticks.
///
/// Readings are masked to `BITS`, so a raw register value can be passed as is.
///
/// # Examples
///
/// ```
/// use timer_core::WrappingCounter;
///
/// let mut clock: WrappingCounter<16> = WrappingCounter::new();
/// assert_eq!(clock.extend(0xFFF0), 0xFFF0);
/// assert_eq!(clock.extend(0x0010), 0x1_0010); // wrapped once
/// assert_eq!(clock.now(), 0x1_0010);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WrappingCounter<const BITS: u32> {
    last_raw: u32,
    ticks: Tick,
}

impl<const BITS: u32> Default for WrappingCounter<BITS> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const BITS: u32> WrappingCounter<BITS> {
    const BITS_IN_RANGE: () = assert!(
        BITS >= 1 && BITS <= 32,
        "timer-core: WrappingCounter supports 1..=32 bit counters"
    );

    /// The mask of a raw reading.
    pub const MASK: u32 = if BITS >= 32 {
        u32::MAX
    } else {
        (1u32 << BITS) - 1
    };

    /// A counter whose raw value 0 is tick 0.
    pub const fn new() -> Self {
        Self::starting_at(0)
    }

    /// A counter whose raw value `raw` is tick 0 (the hardware was already running).
    pub const fn starting_at(raw: u32) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::BITS_IN_RANGE;
        Self {
            last_raw: raw & Self::MASK,
            ticks: 0,
        }
    }

    /// Takes a raw reading and returns the extended tick count.
    pub fn extend(&mut self, raw: u32) -> Tick {
        let raw = raw & Self::MASK;
        let delta = raw.wrapping_sub(self.last_raw) & Self::MASK;
        self.last_raw = raw;
        self.ticks = self.ticks.saturating_add(u64::from(delta));
        self.ticks
    }

    /// The extended tick count at the last reading.
    pub const fn now(&self) -> Tick {
        self.ticks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_width_counter_wraps() {
        let mut c: WrappingCounter<32> = WrappingCounter::starting_at(u32::MAX - 1);
        assert_eq!(c.extend(u32::MAX), 1);
        assert_eq!(c.extend(3), 5);
    }

    #[test]
    fn reading_is_masked() {
        let mut c: WrappingCounter<8> = WrappingCounter::new();
        assert_eq!(c.extend(0x1FF), 0xFF);
        assert_eq!(c.extend(0x201), 0x101);
    }

    #[test]
    fn same_reading_adds_nothing() {
        let mut c: WrappingCounter<16> = WrappingCounter::new();
        c.extend(500);
        assert_eq!(c.extend(500), 500);
    }
}
