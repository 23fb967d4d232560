//! Unix time to and from calendar fields (UTC, proleptic Gregorian), for a real-time clock that
//! counts years, months, days, hours, minutes and seconds rather than seconds. `no_std`, no
//! allocation, no panics; unit-tested on the host against the `time` crate:
//! `cargo test -p calendar --target x86_64-unknown-linux-gnu` (in `firmware/`).
//!
//! Dates count from 2000-03-01 in 400-year cycles of 146,097 days that start on a March 1st,
//! so that a leap day is the last day of its cycle's year (the algorithm of Howard Hinnant's
//! `civil_from_days` and `days_from_civil`). Dates before 2000-03-01 are not represented: no
//! clock here is set to them.

#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// Days from 1970-01-01 to 2000-03-01, the start of the 400-year cycle the conversions use.
const DAYS_TO_2000_03_01: u32 = 11_017;

/// The first Unix second this crate represents: 2000-03-01 00:00:00 UTC.
pub const FIRST_UNIX_SECOND: u64 = DAYS_TO_2000_03_01 as u64 * 86_400;

/// A day of the week.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weekday {
    /// Monday.
    Monday,
    /// Tuesday.
    Tuesday,
    /// Wednesday.
    Wednesday,
    /// Thursday.
    Thursday,
    /// Friday.
    Friday,
    /// Saturday.
    Saturday,
    /// Sunday.
    Sunday,
}

/// A UTC calendar time to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    /// The year, 2000 on.
    pub year: u32,
    /// 1 to 12.
    pub month: u8,
    /// 1 to 31.
    pub day: u8,
    /// 0 to 23.
    pub hour: u8,
    /// 0 to 59.
    pub minute: u8,
    /// 0 to 59 (no leap seconds: Unix time has none).
    pub second: u8,
    /// The day of the week.
    pub weekday: Weekday,
}

impl Civil {
    /// The calendar time of Unix second `unix_s`; `None` before 2000-03-01 or past the year
    /// `u32` counts to.
    ///
    /// # Examples
    ///
    /// ```
    /// use calendar::{Civil, Weekday};
    ///
    /// let leap_day = Civil::from_unix_seconds(1_709_210_096).unwrap();
    /// assert_eq!((leap_day.year, leap_day.month, leap_day.day), (2024, 2, 29));
    /// assert_eq!((leap_day.hour, leap_day.minute, leap_day.second), (12, 34, 56));
    /// assert_eq!(leap_day.weekday, Weekday::Thursday);
    /// ```
    pub fn from_unix_seconds(unix_s: u64) -> Option<Self> {
        let days = u32::try_from(unix_s / 86_400).ok()?;
        let seconds = (unix_s % 86_400) as u32;
        let (year, month, day) = civil_from_days(days)?;
        Some(Self {
            year,
            month,
            day,
            hour: (seconds / 3_600) as u8,
            minute: (seconds / 60 % 60) as u8,
            second: (seconds % 60) as u8,
            weekday: weekday(days),
        })
    }

    /// The Unix second of this calendar time; `None` if a field is out of range (a month past
    /// 12, a day past the month's last, an hour past 23, …) or the date is before 2000-03-01.
    ///
    /// # Examples
    ///
    /// ```
    /// use calendar::Civil;
    ///
    /// let t = Civil::from_unix_seconds(1_700_000_000).unwrap();
    /// assert_eq!(t.to_unix_seconds(), Some(1_700_000_000));
    /// ```
    pub fn to_unix_seconds(&self) -> Option<u64> {
        let days = days_from_civil(self.year, self.month, self.day)?;
        if self.hour > 23 || self.minute > 59 || self.second > 59 {
            return None;
        }
        Some(
            u64::from(days) * 86_400
                + u64::from(self.hour) * 3_600
                + u64::from(self.minute) * 60
                + u64::from(self.second),
        )
    }
}

/// The day of the week of `days` after 1970-01-01 (a Thursday).
fn weekday(days: u32) -> Weekday {
    match days % 7 {
        0 => Weekday::Thursday,
        1 => Weekday::Friday,
        2 => Weekday::Saturday,
        3 => Weekday::Sunday,
        4 => Weekday::Monday,
        5 => Weekday::Tuesday,
        _ => Weekday::Wednesday,
    }
}

/// Year, month (1 to 12) and day (1 to 31) of `days` after 1970-01-01, from 2000-03-01 on
/// (`None` before).
fn civil_from_days(days: u32) -> Option<(u32, u8, u8)> {
    let days = days.checked_sub(DAYS_TO_2000_03_01)?;
    let era = days / 146_097;
    let day_of_era = days % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months from March: 0 is March, 11 is February.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = 2000 + 400 * era + year_of_era + u32::from(month <= 2);
    Some((year, month as u8, day as u8))
}

/// Days from 1970-01-01 to a valid date from 2000-03-01 on; `None` otherwise.
fn days_from_civil(year: u32, month: u8, day: u8) -> Option<u32> {
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let (month, day) = (u32::from(month), u32::from(day));
    let year = year.checked_sub(2000 + u32::from(month <= 2))?;
    let era = year / 400;
    let year_of_era = year % 400;
    let month_from_march = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era.checked_mul(146_097)?
        .checked_add(DAYS_TO_2000_03_01 + day_of_era)
}

/// Days in `month` (1 to 12) of `year`.
fn days_in_month(year: u32, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::OffsetDateTime;

    /// The oracle's calendar time of `unix_s`.
    fn oracle(unix_s: u64) -> Civil {
        let t = OffsetDateTime::from_unix_timestamp(unix_s as i64).unwrap();
        let weekday = match t.weekday() {
            time::Weekday::Monday => Weekday::Monday,
            time::Weekday::Tuesday => Weekday::Tuesday,
            time::Weekday::Wednesday => Weekday::Wednesday,
            time::Weekday::Thursday => Weekday::Thursday,
            time::Weekday::Friday => Weekday::Friday,
            time::Weekday::Saturday => Weekday::Saturday,
            time::Weekday::Sunday => Weekday::Sunday,
        };
        Civil {
            year: t.year() as u32,
            month: u8::from(t.month()),
            day: t.day(),
            hour: t.hour(),
            minute: t.minute(),
            second: t.second(),
            weekday,
        }
    }

    #[test]
    fn every_day_from_2000_03_01_to_2400_agrees_with_the_time_crate_both_ways() {
        let last = oracle_day_of(2400, 12, 31);
        for days in DAYS_TO_2000_03_01..=last {
            // A second in each day, at a different time of day each time.
            let unix_s = u64::from(days) * 86_400 + u64::from(days) * 7_919 % 86_400;
            let civil = Civil::from_unix_seconds(unix_s).unwrap();
            assert_eq!(civil, oracle(unix_s), "day {days}");
            assert_eq!(civil.to_unix_seconds(), Some(unix_s), "day {days}");
        }
    }

    fn oracle_day_of(year: i32, month: u8, day: u8) -> u32 {
        let date = time::Date::from_calendar_date(year, time::Month::try_from(month).unwrap(), day)
            .unwrap();
        (date - time::Date::from_calendar_date(1970, time::Month::January, 1).unwrap()).whole_days()
            as u32
    }

    #[test]
    fn before_2000_03_01_is_not_represented() {
        assert_eq!(Civil::from_unix_seconds(FIRST_UNIX_SECOND - 1), None);
        let first = Civil::from_unix_seconds(FIRST_UNIX_SECOND).unwrap();
        assert_eq!((first.year, first.month, first.day), (2000, 3, 1));
        let mut before = first;
        before.month = 2;
        before.day = 29;
        assert_eq!(before.to_unix_seconds(), None);
    }

    #[test]
    fn out_of_range_fields_are_refused() {
        let valid = Civil::from_unix_seconds(1_700_000_000).unwrap();
        for broken in [
            Civil { month: 0, ..valid },
            Civil { month: 13, ..valid },
            Civil { day: 0, ..valid },
            Civil {
                day: 31,
                month: 11,
                ..valid
            },
            Civil {
                day: 29,
                month: 2,
                year: 2023,
                ..valid
            },
            Civil {
                day: 29,
                month: 2,
                year: 2100,
                ..valid
            },
            Civil { hour: 24, ..valid },
            Civil {
                minute: 60,
                ..valid
            },
            Civil {
                second: 60,
                ..valid
            },
        ] {
            assert_eq!(broken.to_unix_seconds(), None, "{broken:?}");
        }
        let leap = Civil {
            day: 29,
            month: 2,
            year: 2004,
            ..valid
        };
        assert!(leap.to_unix_seconds().is_some());
    }

    #[test]
    fn the_far_future_does_not_overflow() {
        assert!(Civil::from_unix_seconds(u64::MAX).is_none());
        let far = Civil {
            year: u32::MAX,
            ..Civil::from_unix_seconds(FIRST_UNIX_SECOND).unwrap()
        };
        assert_eq!(far.to_unix_seconds(), None);
    }
}
