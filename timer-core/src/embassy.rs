//! Conversions between `embassy-time` and timer-core ticks (feature `embassy-time`).
//!
//! An embassy tick is a timer-core tick: both are `u64` counts that never wrap, at the rate set
//! by embassy-time's `tick-hz-*` feature. So a wheel driven by embassy time has embassy's
//! resolution and its deadlines are embassy instants.

use embassy_time::{Duration, Instant};

use crate::Tick;

/// The tick of an embassy `Instant`.
///
/// # Examples
///
/// ```
/// use embassy_time::Instant;
/// use timer_core::embassy::{instant_from_tick, tick_from_instant};
///
/// let t = Instant::from_ticks(1_234);
/// assert_eq!(tick_from_instant(t), 1_234);
/// assert_eq!(instant_from_tick(1_234), t);
/// ```
pub const fn tick_from_instant(instant: Instant) -> Tick {
    instant.as_ticks()
}

/// The embassy `Instant` of a tick.
pub const fn instant_from_tick(tick: Tick) -> Instant {
    Instant::from_ticks(tick)
}

/// The number of ticks in an embassy `Duration`.
pub const fn ticks_from_duration(duration: Duration) -> Tick {
    duration.as_ticks()
}

/// The deadline `duration` after `now`, saturating at `u64::MAX` instead of wrapping.
///
/// # Examples
///
/// ```
/// use embassy_time::{Duration, Instant};
/// use timer_core::embassy::deadline_after;
///
/// let now = Instant::from_ticks(10);
/// assert_eq!(deadline_after(now, Duration::from_ticks(5)), 15);
/// assert_eq!(deadline_after(now, Duration::MAX), u64::MAX);
/// ```
pub const fn deadline_after(now: Instant, duration: Duration) -> Tick {
    now.as_ticks().saturating_add(duration.as_ticks())
}
