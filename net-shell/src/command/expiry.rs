//! Deadlines from the times clients give, checked as Redis checks them.
//!
//! Redis keeps deadlines as Unix milliseconds and checks overflow against Unix time
//! (`mstime()`); the store keeps monotonic ticks. A time is first turned into Unix
//! milliseconds with Redis' checks, then into a tick: `now + (when - unix_now)`. A build
//! without a wall clock uses its uptime as the Unix time for relative times (so the checks
//! still bound them) and refuses absolute ones.

use timer_core::Tick;

use super::{error, error_fmt, Clock, Reply, ReplyWriter, NOT_INTEGER};
use crate::decimal::parse_i64;

/// Deadlines are kept within Redis' range: signed 64-bit milliseconds.
pub(crate) const MAX_MS: u64 = i64::MAX as u64;

const NO_WALL_CLOCK: &str = "ERR absolute expire times need a wall clock, and this build has none";

/// The unit of a time argument.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Seconds,
    Milliseconds,
}

impl Unit {
    const fn ms(self) -> i64 {
        match self {
            Self::Seconds => 1000,
            Self::Milliseconds => 1,
        }
    }
}

/// A time argument: how many units, relative to now or a Unix time.
#[derive(Clone, Copy)]
pub(crate) struct When<'a> {
    pub(crate) amount: &'a [u8],
    pub(crate) unit: Unit,
    pub(crate) absolute: bool,
}

/// Why a time was refused.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Refused {
    /// Not a 64-bit integer.
    NotInteger,
    /// Out of range: `ERR invalid expire time in '<command>' command`.
    Invalid,
    /// An absolute time, and this build has no wall clock.
    NoWallClock,
}

impl Refused {
    /// Replies with the error, naming `command` as Redis does.
    pub(crate) fn reply(self, out: &mut ReplyWriter<'_>, command: &str) -> Reply {
        match self {
            Self::NotInteger => error(out, NOT_INTEGER),
            Self::Invalid => error_fmt(
                out,
                format_args!("ERR invalid expire time in '{command}' command"),
            ),
            Self::NoWallClock => error(out, NO_WALL_CLOCK),
        }
    }
}

/// The Unix time in ms, or the uptime standing in for it.
pub(crate) fn base(clock: Clock) -> i64 {
    clock.unix_ms.unwrap_or(clock.now).min(MAX_MS) as i64
}

/// The tick at which Unix time `when` comes: `now + (when - unix_now)`, at least 0 and at
/// most [`MAX_MS`].
pub(crate) fn tick_at(when: i64, clock: Clock) -> Tick {
    let at = i128::from(clock.now) + i128::from(when) - i128::from(base(clock));
    at.clamp(0, i128::from(MAX_MS)) as Tick
}

/// `SET … EX|PX|EXAT|PXAT`, `GETEX`, `SETEX`, `PSETEX`: a positive amount, whose Unix time
/// does not overflow (Redis' `getExpireMillisecondsOrReply`).
///
/// # Errors
///
/// [`Refused`], as Redis refuses the time.
pub(crate) fn set_deadline(when: When<'_>, clock: Clock) -> Result<Tick, Refused> {
    let amount = parse_i64(when.amount).ok_or(Refused::NotInteger)?;
    if amount <= 0 {
        return Err(Refused::Invalid);
    }
    let ms = amount.checked_mul(when.unit.ms()).ok_or(Refused::Invalid)?;
    let unix = if when.absolute {
        if clock.unix_ms.is_none() {
            return Err(Refused::NoWallClock);
        }
        ms
    } else {
        ms.checked_add(base(clock)).ok_or(Refused::Invalid)?
    };
    Ok(tick_at(unix, clock))
}

/// `EXPIRE`, `PEXPIRE`, `EXPIREAT`, `PEXPIREAT`: any amount (a time in the past deletes the
/// key), whose Unix time does not overflow (Redis' `expireGenericCommand`).
///
/// # Errors
///
/// [`Refused`], as Redis refuses the time.
pub(crate) fn expire_deadline(when: When<'_>, clock: Clock) -> Result<Tick, Refused> {
    let amount = parse_i64(when.amount).ok_or(Refused::NotInteger)?;
    let ms = amount.checked_mul(when.unit.ms()).ok_or(Refused::Invalid)?;
    let unix = if when.absolute {
        if clock.unix_ms.is_none() {
            return Err(Refused::NoWallClock);
        }
        ms
    } else {
        // Only overflow upwards is refused: far in the past is simply the past.
        ms.checked_add(base(clock)).ok_or(Refused::Invalid)?
    };
    Ok(tick_at(unix, clock))
}

/// The Unix time in ms of tick `deadline`, for `EXPIRETIME`/`PEXPIRETIME`.
///
/// # Errors
///
/// [`Refused::NoWallClock`] without a wall clock.
pub(crate) fn unix_of(deadline: Tick, clock: Clock) -> Result<u64, Refused> {
    let unix_now = clock.unix_ms.ok_or(Refused::NoWallClock)?;
    Ok(unix_now
        .saturating_add(deadline.saturating_sub(clock.now))
        .min(MAX_MS))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLOCK: Clock = Clock {
        now: 5_000,
        unix_ms: Some(1_700_000_000_000),
    };

    fn when(amount: &str, unit: Unit, absolute: bool) -> When<'_> {
        When {
            amount: amount.as_bytes(),
            unit,
            absolute,
        }
    }

    #[test]
    fn relative_overflow_is_checked_against_unix_time() {
        // Fits in i64 ms, but not once the Unix time is added (Redis refuses it too).
        let near = (i64::MAX - 1_000_000_000_000) / 1000;
        let amount = std::format!("{near}");
        assert_eq!(
            expire_deadline(when(&amount, Unit::Seconds, false), CLOCK),
            Err(Refused::Invalid)
        );
        assert_eq!(
            set_deadline(
                when("9223371036854775807", Unit::Milliseconds, false),
                CLOCK
            ),
            Err(Refused::Invalid)
        );
        assert_eq!(
            expire_deadline(when("100", Unit::Seconds, false), CLOCK),
            Ok(105_000)
        );
    }

    #[test]
    fn absolute_times_in_the_past_give_past_ticks() {
        assert_eq!(
            expire_deadline(when("1", Unit::Seconds, true), CLOCK),
            Ok(0)
        );
        assert_eq!(
            set_deadline(when("1699999999000", Unit::Milliseconds, true), CLOCK),
            Ok(4_000)
        );
        let no_clock = Clock {
            now: 5,
            unix_ms: None,
        };
        assert_eq!(
            set_deadline(when("1", Unit::Seconds, true), no_clock),
            Err(Refused::NoWallClock)
        );
    }

    #[test]
    fn set_refuses_zero_and_negative_expire_takes_them() {
        assert_eq!(
            set_deadline(when("0", Unit::Seconds, false), CLOCK),
            Err(Refused::Invalid)
        );
        assert_eq!(
            expire_deadline(when("-1", Unit::Seconds, false), CLOCK),
            Ok(4_000)
        );
        assert_eq!(
            expire_deadline(when("x", Unit::Seconds, false), CLOCK),
            Err(Refused::NotInteger)
        );
    }
}
