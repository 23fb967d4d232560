//! The wall clock across resets (the `sntp` feature): the STM32 RTC, clocked by the board's
//! 32.768 kHz LSE crystal (X2), keeps the Unix time each SNTP sync gave, and seeds the shell's
//! wall clock at the next boot, before SNTP has answered (or when no server answers).
//!
//! The RTC counts calendar seconds (and 1/256 s), in UTC, years 2001 to 2099. It is written
//! rounded to the nearest second, so a boot reads it within half a second of the last sync,
//! plus the crystal's drift since (20 ppm: under 2 s a day). It keeps counting through a reset;
//! through a power cut only with a battery on VBAT, which the NUCLEO does not have (VBAT is tied
//! to VDD). An RTC never set reads 2000-01-01 and counts as no time.
//!
//! Built in CI for the NUCLEO, but not yet run on hardware.

use core::cell::RefCell;

use critical_section::Mutex;
use embassy_stm32::peripherals::RTC;
use embassy_stm32::rtc::{DateTime, DayOfWeek, Rtc, RtcConfig, RtcTimeProvider};
use embassy_stm32::Peri;

/// The RTC, once started.
static CLOCK: Mutex<RefCell<Option<(Rtc, RtcTimeProvider)>>> = Mutex::new(RefCell::new(None));

/// Days from 1970-01-01 to 2000-03-01, the start of the 400-year cycle the conversions use.
const DAYS_TO_2000_03_01: u32 = 11_017;

/// Starts the RTC (its clock, the LSE, is set up by `rcc`); a calendar already running (set by
/// an earlier boot) keeps its time.
pub fn start(rtc: Peri<'static, RTC>) {
    let clock = Rtc::new(rtc, RtcConfig::default());
    critical_section::with(|cs| CLOCK.borrow(cs).replace(Some(clock)));
}

/// The Unix time in milliseconds the RTC holds, if it was ever set.
pub fn unix_time_ms() -> Option<u64> {
    let now = critical_section::with(|cs| {
        let clock = CLOCK.borrow_ref(cs);
        clock.as_ref().map(|(_, time)| time.now())
    })?
    .ok()?;
    if now.year() <= 2000 {
        return None;
    }
    let days = days_from_civil(
        u32::from(now.year()),
        u32::from(now.month()),
        now.day().into(),
    );
    let seconds = u64::from(days) * 86_400
        + u64::from(now.hour()) * 3_600
        + u64::from(now.minute()) * 60
        + u64::from(now.second());
    Some(seconds * 1_000 + u64::from(now.microsecond() / 1_000))
}

/// Sets the RTC to `unix_ms` (rounded to the second). Times outside 2001 to 2099 are not kept.
pub fn set_unix_time_ms(unix_ms: u64) {
    let Some(time) = date_time_of((unix_ms + 500) / 1_000) else {
        defmt::warn!("RTC: {=u64} ms is outside the years it holds", unix_ms);
        return;
    };
    critical_section::with(|cs| {
        if let Some((rtc, _)) = CLOCK.borrow_ref_mut(cs).as_mut() {
            if rtc.set_datetime(time).is_err() {
                defmt::warn!("RTC: could not be set");
            }
        }
    });
}

/// The calendar time of Unix second `unix_s`, if the RTC can hold it (2001 to 2099).
fn date_time_of(unix_s: u64) -> Option<DateTime> {
    let days = u32::try_from(unix_s / 86_400).ok()?;
    let seconds = (unix_s % 86_400) as u32;
    let (year, month, day) = civil_from_days(days)?;
    if !(2001..=2099).contains(&year) {
        return None;
    }
    // 1970-01-01 was a Thursday.
    let weekday = match days % 7 {
        0 => DayOfWeek::Thursday,
        1 => DayOfWeek::Friday,
        2 => DayOfWeek::Saturday,
        3 => DayOfWeek::Sunday,
        4 => DayOfWeek::Monday,
        5 => DayOfWeek::Tuesday,
        _ => DayOfWeek::Wednesday,
    };
    DateTime::from(
        year as u16,
        month as u8,
        day as u8,
        weekday,
        (seconds / 3_600) as u8,
        (seconds / 60 % 60) as u8,
        (seconds % 60) as u8,
        0,
    )
    .ok()
}

/// Year, month (1 to 12) and day (1 to 31) of `days` after 1970-01-01, from 2000-03-01 on
/// (`None` before). Counts in 400-year cycles of 146,097 days from a March 1st, so that the leap
/// day is the last day of a cycle's year (the algorithm of Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: u32) -> Option<(u32, u32, u32)> {
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
    Some((year, month, day))
}

/// Days from 1970-01-01 to a date from 2000-03-01 on: the inverse of [`civil_from_days`].
fn days_from_civil(year: u32, month: u32, day: u32) -> u32 {
    let year = year - 2000 - u32::from(month <= 2);
    let era = year / 400;
    let year_of_era = year % 400;
    let month_from_march = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    DAYS_TO_2000_03_01 + era * 146_097 + day_of_era
}
