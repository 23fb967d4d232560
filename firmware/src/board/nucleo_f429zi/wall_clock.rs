//! The wall clock across resets (the `sntp` feature): the STM32 RTC, clocked by the board's
//! 32.768 kHz LSE crystal (X2), keeps the Unix time each SNTP sync gave, and seeds the shell's
//! wall clock at the next boot, before SNTP has answered (or when no server answers).
//!
//! The RTC counts calendar seconds (and 1/256 s), in UTC, years 2001 to 2099. It is written
//! rounded to the nearest second, so a boot reads it within half a second of the last sync,
//! plus the crystal's drift since (20 ppm: under 2 s a day). It keeps counting through a reset;
//! through a power cut only with a battery on VBAT, which the NUCLEO does not have (VBAT is tied
//! to VDD). An RTC never set reads 2000-01-01 and counts as no time. The calendar arithmetic is
//! the `calendar` crate's, unit-tested on the host.
//!
//! Built in CI for the NUCLEO, but not yet run on hardware.

use core::cell::RefCell;

use calendar::{Civil, Weekday};
use critical_section::Mutex;
use embassy_stm32::peripherals::RTC;
use embassy_stm32::rtc::{DateTime, DayOfWeek, Rtc, RtcConfig, RtcTimeProvider};
use embassy_stm32::Peri;

/// The RTC, once started.
static CLOCK: Mutex<RefCell<Option<(Rtc, RtcTimeProvider)>>> = Mutex::new(RefCell::new(None));

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
    let civil = Civil {
        year: u32::from(now.year()),
        month: now.month(),
        day: now.day(),
        hour: now.hour(),
        minute: now.minute(),
        second: now.second(),
        weekday: Weekday::Monday, // not read
    };
    Some(civil.to_unix_seconds()? * 1_000 + u64::from(now.microsecond() / 1_000))
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

/// The RTC's calendar time of Unix second `unix_s`, if it can hold it (2001 to 2099).
fn date_time_of(unix_s: u64) -> Option<DateTime> {
    let civil = Civil::from_unix_seconds(unix_s)?;
    if !(2001..=2099).contains(&civil.year) {
        return None;
    }
    let weekday = match civil.weekday {
        Weekday::Monday => DayOfWeek::Monday,
        Weekday::Tuesday => DayOfWeek::Tuesday,
        Weekday::Wednesday => DayOfWeek::Wednesday,
        Weekday::Thursday => DayOfWeek::Thursday,
        Weekday::Friday => DayOfWeek::Friday,
        Weekday::Saturday => DayOfWeek::Saturday,
        Weekday::Sunday => DayOfWeek::Sunday,
    };
    DateTime::from(
        civil.year as u16,
        civil.month,
        civil.day,
        weekday,
        civil.hour,
        civil.minute,
        civil.second,
        0,
    )
    .ok()
}
