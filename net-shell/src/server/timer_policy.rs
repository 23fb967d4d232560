//! Which timeout applies to a connection, as a pure function of its state: no sockets, no
//! timer queues, so every rule is unit-tested on its own.
//!
//! A connection has at most two timers: a *main* timer, on one of the [`Timeout`] lists, and
//! a *write* timer while replies wait for the client to take them.

use timer_core::Tick;

use crate::settings::Timeouts;

/// What a connection's main timer stands for. Each has its own FIFO timer list (deadlines on
/// one list are all "now plus the same timeout", so each list stays in deadline order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Timeout {
    /// No complete command for the idle timeout.
    Idle,
    /// A command has been arriving for the read timeout.
    Read,
    /// A graceful close has not finished.
    Closing,
    /// A listening socket took a SYN and the handshake has not completed. In arrival order, so
    /// the head is also the oldest half-open handshake to evict under a SYN flood.
    Handshake,
}

impl Timeout {
    /// Every timeout, in list order.
    pub(crate) const ALL: [Self; 4] = [Self::Idle, Self::Read, Self::Closing, Self::Handshake];
    /// How many timer lists.
    pub(crate) const COUNT: usize = Self::ALL.len();

    /// The timer list this timeout uses.
    pub(crate) const fn list(self) -> usize {
        self as usize
    }

    /// The timeout of timer list `list`.
    pub(crate) fn of_list(list: usize) -> Option<Self> {
        Self::ALL.get(list).copied()
    }
}

/// What the policy needs to know of an open connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpenTiming {
    /// Part of a command is waiting in the input buffer.
    pub(crate) input_pending: bool,
    /// Serving stopped because the send buffer had no room: the input waits on the client
    /// reading, not on it sending.
    pub(crate) blocked: bool,
    /// When the command now in the input buffer started to arrive.
    pub(crate) read_since: Tick,
    /// When the connection was accepted or last completed a command.
    pub(crate) idle_since: Tick,
    /// Since when replies have waited without the client taking any (`None`: none wait).
    pub(crate) write_since: Option<Tick>,
    /// The client listens to pub/sub channels: as in Redis, it is never idle.
    pub(crate) subscribed: bool,
}

/// The main timer of an open connection:
///
/// - part of a command waiting, the client sending it: the read timeout, from the first byte
///   of that command (later bytes do not push it out);
/// - otherwise (no input, or input held up because the client does not read its replies): the
///   idle timeout, from the accept or the last complete command, unless the client has
///   subscriptions (Redis' `clientsCronHandleTimeout` skips pub/sub clients).
///
/// A timeout of 0 is off; with the read timeout off, the idle timeout still applies.
pub(crate) fn open_timer(timing: &OpenTiming, timeouts: &Timeouts) -> Option<(Timeout, Tick)> {
    if timing.input_pending && !timing.blocked && timeouts.read_ms > 0 {
        Some((
            Timeout::Read,
            timing.read_since.saturating_add(timeouts.read_ms),
        ))
    } else if timeouts.idle_ms > 0 && !timing.subscribed {
        Some((
            Timeout::Idle,
            timing.idle_since.saturating_add(timeouts.idle_ms),
        ))
    } else {
        None
    }
}

/// The write timer of an open connection: replies waiting, from when the client last took
/// reply bytes (`None` with nothing waiting or the write timeout off).
pub(crate) fn write_deadline(timing: &OpenTiming, timeouts: &Timeouts) -> Option<Tick> {
    timing
        .write_since
        .filter(|_| timeouts.write_ms > 0)
        .map(|since| since.saturating_add(timeouts.write_ms))
}

/// A graceful close begun at `now` is aborted at this time if the peer has not finished it
/// (never at once: at least 1 ms).
pub(crate) fn closing_deadline(now: Tick, timeouts: &Timeouts) -> Tick {
    now.saturating_add(timeouts.close_ms.max(1))
}

/// A handshake first seen at `now` is aborted at this time if the client's final ACK has not
/// come (at least 1 ms: a handshake is never kept for good).
pub(crate) fn handshake_deadline(now: Tick, timeouts: &Timeouts) -> Tick {
    now.saturating_add(timeouts.handshake_ms.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timeouts = Timeouts::new(300_000, 10_000, 5_000);

    fn idle_at(idle_since: Tick) -> OpenTiming {
        OpenTiming {
            input_pending: false,
            blocked: false,
            read_since: 0,
            idle_since,
            write_since: None,
            subscribed: false,
        }
    }

    #[test]
    fn subscribed_client_has_no_idle_timer() {
        let timing = OpenTiming {
            subscribed: true,
            ..idle_at(0)
        };
        assert_eq!(open_timer(&timing, &T), None);
        let reading = OpenTiming {
            input_pending: true,
            ..timing
        };
        assert_eq!(open_timer(&reading, &T), Some((Timeout::Read, 10_000)));
    }

    #[test]
    fn no_input_is_idle_from_last_command() {
        assert_eq!(
            open_timer(&idle_at(1_000), &T),
            Some((Timeout::Idle, 301_000))
        );
    }

    #[test]
    fn partial_command_is_read_from_its_first_byte() {
        let timing = OpenTiming {
            input_pending: true,
            read_since: 2_000,
            ..idle_at(1_000)
        };
        assert_eq!(open_timer(&timing, &T), Some((Timeout::Read, 12_000)));
    }

    #[test]
    fn input_blocked_by_unread_replies_is_idle_not_read() {
        let timing = OpenTiming {
            input_pending: true,
            blocked: true,
            read_since: 2_000,
            ..idle_at(1_000)
        };
        assert_eq!(open_timer(&timing, &T), Some((Timeout::Idle, 301_000)));
    }

    #[test]
    fn read_timeout_off_falls_back_to_idle() {
        let timeouts = Timeouts::new(300_000, 0, 5_000);
        let timing = OpenTiming {
            input_pending: true,
            ..idle_at(1_000)
        };
        assert_eq!(
            open_timer(&timing, &timeouts),
            Some((Timeout::Idle, 301_000))
        );
    }

    #[test]
    fn idle_and_read_off_is_no_timer() {
        assert_eq!(open_timer(&idle_at(1_000), &Timeouts::new(0, 0, 0)), None);
    }

    #[test]
    fn write_timer_only_while_replies_wait() {
        assert_eq!(write_deadline(&idle_at(0), &T), None);
        let waiting = OpenTiming {
            write_since: Some(7_000),
            ..idle_at(0)
        };
        assert_eq!(write_deadline(&waiting, &T), Some(12_000));
        assert_eq!(write_deadline(&waiting, &Timeouts::new(1, 1, 0)), None);
    }

    #[test]
    fn deadlines_saturate_at_the_end_of_time() {
        let far = Tick::MAX - 1;
        assert_eq!(
            open_timer(&idle_at(far), &T),
            Some((Timeout::Idle, Tick::MAX))
        );
        assert_eq!(closing_deadline(far, &T), Tick::MAX);
        assert_eq!(handshake_deadline(far, &T), Tick::MAX);
    }

    #[test]
    fn zero_close_and_handshake_timeouts_still_fire_later() {
        let mut timeouts = T;
        timeouts.close_ms = 0;
        timeouts.handshake_ms = 0;
        assert_eq!(closing_deadline(5, &timeouts), 6);
        assert_eq!(handshake_deadline(5, &timeouts), 6);
    }

    #[test]
    fn lists_round_trip() {
        for timeout in Timeout::ALL {
            assert_eq!(Timeout::of_list(timeout.list()), Some(timeout));
        }
        assert_eq!(Timeout::of_list(Timeout::COUNT), None);
    }
}
