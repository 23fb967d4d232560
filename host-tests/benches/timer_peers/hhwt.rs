//! What both adapters of `hierarchical_hash_wheel_timer` (hhwt) share: its unit of delay, and
//! driving one of its wheels from where its clock stands to `now`. hhwt has four byte-wide
//! levels (256 slots each, one `Vec` per slot) and an overflow `Vec`, and moves one unit
//! (1 tick = 1 ms) at a time, or skips a stretch it knows to be empty.

use std::time::Duration;

use hierarchical_hash_wheel_timer::wheels::Skip;

/// The unit hhwt counts delays in: one tick.
#[inline]
pub fn hhwt_delay(ticks: u64) -> Duration {
    Duration::from_millis(ticks)
}

/// Moves an hhwt wheel from `*at` to `now`: `skip` over stretches `can_skip` says are empty,
/// `tick` one unit at a time elsewhere, handing every entry a tick returns to `fired`.
#[inline]
pub fn hhwt_advance<E>(
    at: &mut u64,
    now: u64,
    can_skip: impl Fn() -> Skip,
    mut skip: impl FnMut(u32),
    mut tick: impl FnMut() -> Vec<E>,
    mut fired: impl FnMut(E),
) {
    while *at < now {
        let left = now - *at;
        match can_skip() {
            Skip::None => {
                for entry in tick() {
                    fired(entry);
                }
                *at += 1;
            }
            Skip::Millis(ms) => {
                let by = u64::from(ms).min(left);
                skip(by as u32);
                *at += by;
            }
            Skip::Empty => {
                let by = left.min(u64::from(u32::MAX));
                skip(by as u32);
                *at += by;
            }
        }
    }
}
