//! SNTP packets (RFC 4330, client mode): the request a client sends and the checks a reply
//! must pass before its time is believed.
//!
//! Only the codec: no socket, no clock. The server's `wall_clock` module sends and receives
//! these over a smoltcp UDP socket and keeps the schedule.
//!
//! A request carries a random 64-bit nonce in its transmit timestamp rather than our time (we
//! may have none yet; RFC 4330 section 5 allows any value). A server copies it into the
//! reply's originate timestamp, so a reply whose originate differs is not an answer to our
//! last request (a late reply to an earlier one, or a forgery) and is ignored. Our own send
//! and receive times are monotonic ticks, kept beside the nonce.

use timer_core::Tick;

/// The UDP port NTP servers listen on.
pub(crate) const PORT: u16 = 123;

/// Bytes of an NTP packet without extension fields or authenticator (RFC 4330 figure 1).
pub(crate) const PACKET_LEN: usize = 48;

/// Seconds from the NTP epoch (1900-01-01) to the Unix epoch (1970-01-01).
const NTP_TO_UNIX_SECS: u64 = 2_208_988_800;

/// The version we send (and one of the two we accept in replies).
const VERSION: u8 = 4;

/// Association modes (RFC 4330 section 4).
const MODE_CLIENT: u8 = 3;
const MODE_SERVER: u8 = 4;

/// Leap indicator 3: the server's clock is not synchronized.
const LEAP_ALARM: u8 = 3;

/// Strata above this mean "unsynchronized" (16) or are reserved.
const MAX_STRATUM: u8 = 15;

/// Byte offsets of the fields we read or write.
mod field {
    pub(super) const FLAGS: usize = 0;
    pub(super) const STRATUM: usize = 1;
    pub(super) const REFERENCE_ID: usize = 12;
    pub(super) const ORIGINATE: usize = 24;
    pub(super) const RECEIVE: usize = 32;
    pub(super) const TRANSMIT: usize = 40;
}

/// Writes a client request whose transmit timestamp is `nonce` into `packet`.
pub(crate) fn request(nonce: u64, packet: &mut [u8; PACKET_LEN]) {
    *packet = [0; PACKET_LEN];
    // Leap indicator 0, version 4, mode 3 (client).
    packet[field::FLAGS] = (VERSION << 3) | MODE_CLIENT;
    packet[field::TRANSMIT..field::TRANSMIT + 8].copy_from_slice(&nonce.to_be_bytes());
}

/// What a valid reply says: the server's receive (T2) and transmit (T3) times, in Unix ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reply {
    /// When the request reached the server (T2).
    pub(crate) received_unix_ms: u64,
    /// When the server sent the reply (T3).
    pub(crate) sent_unix_ms: u64,
    /// The server's stratum (1 to 15).
    pub(crate) stratum: u8,
}

/// Why a reply was not believed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rejected {
    /// Shorter than an NTP header.
    Short,
    /// Not mode 4 (server).
    NotServerMode,
    /// Not NTP version 3 or 4.
    Version,
    /// Its originate timestamp is not the nonce of our last request.
    WrongOrigin,
    /// Stratum 0: a kiss-o'-death, whose code (`RATE`, `DENY`, `RSTR`, ...) says back off.
    KissOfDeath([u8; 4]),
    /// The server says its clock is not synchronized (leap indicator 3, or stratum 16 and up).
    Unsynchronized,
    /// A timestamp is zero, before 1970, or the server sent before it received.
    BadTime,
}

impl Rejected {
    /// A short reason, for logs.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Short => "short packet",
            Self::NotServerMode => "not a server reply",
            Self::Version => "unknown NTP version",
            Self::WrongOrigin => "not an answer to our request",
            Self::KissOfDeath(_) => "kiss-o'-death",
            Self::Unsynchronized => "server unsynchronized",
            Self::BadTime => "bad timestamps",
        }
    }

    /// A kiss-o'-death that asks us to stop asking this server (`DENY`, `RSTR`), rather than to
    /// ask less often (`RATE` and the rest).
    pub(crate) fn denies(self) -> bool {
        matches!(self, Self::KissOfDeath(code) if &code == b"DENY" || &code == b"RSTR")
    }
}

/// Checks `packet` as the reply to the request carrying `nonce` (RFC 4330 section 5, in an
/// order that believes a kiss-o'-death only from the server we asked).
pub(crate) fn parse_reply(packet: &[u8], nonce: u64) -> Result<Reply, Rejected> {
    let header = packet.get(..PACKET_LEN).ok_or(Rejected::Short)?;
    let flags = header[field::FLAGS];
    let (leap, version, mode) = (flags >> 6, (flags >> 3) & 0b111, flags & 0b111);
    if mode != MODE_SERVER {
        return Err(Rejected::NotServerMode);
    }
    if !(3..=VERSION).contains(&version) {
        return Err(Rejected::Version);
    }
    if timestamp(header, field::ORIGINATE) != nonce {
        return Err(Rejected::WrongOrigin);
    }
    let stratum = header[field::STRATUM];
    if stratum == 0 {
        let mut code = [0; 4];
        code.copy_from_slice(&header[field::REFERENCE_ID..field::REFERENCE_ID + 4]);
        return Err(Rejected::KissOfDeath(code));
    }
    if leap == LEAP_ALARM || stratum > MAX_STRATUM {
        return Err(Rejected::Unsynchronized);
    }
    let received = unix_ms(timestamp(header, field::RECEIVE)).ok_or(Rejected::BadTime)?;
    let sent = unix_ms(timestamp(header, field::TRANSMIT)).ok_or(Rejected::BadTime)?;
    if sent < received {
        return Err(Rejected::BadTime);
    }
    Ok(Reply {
        received_unix_ms: received,
        sent_unix_ms: sent,
        stratum,
    })
}

/// The 64-bit timestamp at `at` in `header` (which is [`PACKET_LEN`] long).
fn timestamp(header: &[u8], at: usize) -> u64 {
    let mut bytes = [0; 8];
    bytes.copy_from_slice(&header[at..at + 8]);
    u64::from_be_bytes(bytes)
}

/// An NTP timestamp as Unix milliseconds (rounded down), `None` for zero ("no time") or a time
/// before 1970.
///
/// Its 32-bit seconds wrap in February 2036: as RFC 4330 section 3 says, seconds with the top
/// bit clear are taken to be in the next era (2036 to 2104), so this is right until 2104.
fn unix_ms(timestamp: u64) -> Option<u64> {
    if timestamp == 0 {
        return None;
    }
    let seconds = timestamp >> 32;
    let fraction = timestamp & 0xffff_ffff;
    let seconds = if seconds & 0x8000_0000 == 0 {
        seconds + (1 << 32)
    } else {
        seconds
    };
    let unix_secs = seconds.checked_sub(NTP_TO_UNIX_SECS)?;
    Some(unix_secs * 1000 + ((fraction * 1000) >> 32))
}

/// The offset to add to a tick for Unix milliseconds, from a request sent at tick `sent` (T1)
/// and its `reply` taken in at tick `received` (T4): RFC 4330's `((T2 - T1) + (T3 - T4)) / 2`
/// (rounded down), which is right when the path takes as long each way. Wrapping, as the
/// server keeps it.
pub(crate) fn offset_ms(sent: Tick, reply: &Reply, received: Tick) -> u64 {
    // Each direction's offset, modulo 2^64; they differ by the round trip (less the server's
    // time), which fits an `i64` many times over: add half of that difference to the first.
    let outward = reply.received_unix_ms.wrapping_sub(sent);
    let inward = reply.sent_unix_ms.wrapping_sub(received);
    let half_difference = (inward.wrapping_sub(outward) as i64) >> 1;
    outward.wrapping_add(half_difference as u64)
}

/// The round trip without the server's own time: `(T4 - T1) - (T3 - T2)`, at least 0.
pub(crate) fn round_trip_ms(sent: Tick, reply: &Reply, received: Tick) -> u64 {
    received
        .saturating_sub(sent)
        .saturating_sub(reply.sent_unix_ms.saturating_sub(reply.received_unix_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-11-14 22:13:20 UTC, in Unix seconds.
    const UNIX_SECS: u64 = 1_700_000_000;
    const NONCE: u64 = 0x0123_4567_89ab_cdef;

    fn ntp(unix_ms: u64) -> u64 {
        let secs = (unix_ms / 1000 + NTP_TO_UNIX_SECS) & 0xffff_ffff;
        let fraction = ((unix_ms % 1000) << 32).div_ceil(1000);
        (secs << 32) | fraction
    }

    /// A valid server reply to `NONCE`, received at `t2`, sent at `t3` (Unix ms).
    fn reply(t2: u64, t3: u64) -> [u8; PACKET_LEN] {
        let mut packet = [0; PACKET_LEN];
        packet[field::FLAGS] = (VERSION << 3) | MODE_SERVER;
        packet[field::STRATUM] = 2;
        packet[field::ORIGINATE..][..8].copy_from_slice(&NONCE.to_be_bytes());
        packet[field::RECEIVE..][..8].copy_from_slice(&ntp(t2).to_be_bytes());
        packet[field::TRANSMIT..][..8].copy_from_slice(&ntp(t3).to_be_bytes());
        packet
    }

    #[test]
    fn request_is_client_mode_v4_carrying_the_nonce() {
        let mut packet = [0xff; PACKET_LEN];
        request(NONCE, &mut packet);
        assert_eq!(packet[0], 0b00_100_011);
        assert!(packet[1..40].iter().all(|&b| b == 0));
        assert_eq!(timestamp(&packet, field::TRANSMIT), NONCE);
    }

    #[test]
    fn valid_reply_gives_server_times_in_unix_ms() {
        let t2 = UNIX_SECS * 1000 + 250;
        let parsed = parse_reply(&reply(t2, t2 + 3), NONCE).unwrap();
        assert_eq!(parsed.received_unix_ms, t2);
        assert_eq!(parsed.sent_unix_ms, t2 + 3);
        assert_eq!(parsed.stratum, 2);
    }

    #[test]
    fn reply_with_extension_bytes_is_read_from_its_header() {
        let mut long = [0u8; PACKET_LEN + 20];
        long[..PACKET_LEN].copy_from_slice(&reply(UNIX_SECS * 1000, UNIX_SECS * 1000));
        assert!(parse_reply(&long, NONCE).is_ok());
    }

    #[test]
    fn version_3_reply_is_accepted() {
        let mut packet = reply(UNIX_SECS * 1000, UNIX_SECS * 1000);
        packet[0] = (3 << 3) | MODE_SERVER;
        assert!(parse_reply(&packet, NONCE).is_ok());
    }

    #[test]
    fn short_reply_is_rejected() {
        let packet = reply(UNIX_SECS * 1000, UNIX_SECS * 1000);
        for len in 0..PACKET_LEN {
            assert_eq!(parse_reply(&packet[..len], NONCE), Err(Rejected::Short));
        }
    }

    #[test]
    fn reply_in_other_modes_is_rejected() {
        for mode in (0..8).filter(|&m| m != MODE_SERVER) {
            let mut packet = reply(UNIX_SECS * 1000, UNIX_SECS * 1000);
            packet[0] = (VERSION << 3) | mode;
            assert_eq!(parse_reply(&packet, NONCE), Err(Rejected::NotServerMode));
        }
    }

    #[test]
    fn reply_in_other_versions_is_rejected() {
        for version in [0, 1, 2, 5, 6, 7] {
            let mut packet = reply(UNIX_SECS * 1000, UNIX_SECS * 1000);
            packet[0] = (version << 3) | MODE_SERVER;
            assert_eq!(parse_reply(&packet, NONCE), Err(Rejected::Version));
        }
    }

    #[test]
    fn reply_to_another_request_is_rejected() {
        let packet = reply(UNIX_SECS * 1000, UNIX_SECS * 1000);
        assert_eq!(parse_reply(&packet, NONCE ^ 1), Err(Rejected::WrongOrigin));
    }

    #[test]
    fn kiss_of_death_is_rejected_with_its_code() {
        let mut packet = reply(UNIX_SECS * 1000, UNIX_SECS * 1000);
        packet[field::STRATUM] = 0;
        packet[field::REFERENCE_ID..][..4].copy_from_slice(b"RATE");
        let rejected = parse_reply(&packet, NONCE).unwrap_err();
        assert_eq!(rejected, Rejected::KissOfDeath(*b"RATE"));
        assert!(!rejected.denies());
        packet[field::REFERENCE_ID..][..4].copy_from_slice(b"DENY");
        assert!(parse_reply(&packet, NONCE).unwrap_err().denies());
    }

    #[test]
    fn kiss_of_death_with_wrong_origin_is_not_believed() {
        let mut packet = reply(UNIX_SECS * 1000, UNIX_SECS * 1000);
        packet[field::STRATUM] = 0;
        packet[field::REFERENCE_ID..][..4].copy_from_slice(b"DENY");
        assert_eq!(parse_reply(&packet, !NONCE), Err(Rejected::WrongOrigin));
    }

    #[test]
    fn unsynchronized_server_is_rejected() {
        let mut packet = reply(UNIX_SECS * 1000, UNIX_SECS * 1000);
        packet[0] |= LEAP_ALARM << 6;
        assert_eq!(parse_reply(&packet, NONCE), Err(Rejected::Unsynchronized));
        let mut packet = reply(UNIX_SECS * 1000, UNIX_SECS * 1000);
        packet[field::STRATUM] = 16;
        assert_eq!(parse_reply(&packet, NONCE), Err(Rejected::Unsynchronized));
    }

    #[test]
    fn zero_or_reversed_timestamps_are_rejected() {
        let mut packet = reply(UNIX_SECS * 1000, UNIX_SECS * 1000);
        packet[field::TRANSMIT..][..8].fill(0);
        assert_eq!(parse_reply(&packet, NONCE), Err(Rejected::BadTime));
        let packet = reply(UNIX_SECS * 1000 + 1, UNIX_SECS * 1000);
        assert_eq!(parse_reply(&packet, NONCE), Err(Rejected::BadTime));
    }

    #[test]
    fn no_packet_content_panics() {
        // Every flag byte and stratum over an otherwise random header, at every length.
        let mut rng = crate::xorshift::Xorshift::new(0x9e37_79b9_7f4a_7c15);
        for round in 0..4096u32 {
            let mut packet = [0u8; PACKET_LEN + 4];
            for byte in packet.iter_mut() {
                *byte = rng.next_u64() as u8;
            }
            packet[0] = round as u8;
            packet[1] = (round >> 8) as u8;
            let len = round as usize % packet.len();
            let _ = parse_reply(&packet[..len], NONCE);
            let _ = parse_reply(&packet, timestamp(&packet, field::ORIGINATE));
        }
    }

    #[test]
    fn seconds_before_2036_and_after_are_both_read() {
        assert_eq!(unix_ms(ntp(UNIX_SECS * 1000)), Some(UNIX_SECS * 1000));
        // 2040-01-01 (as many days after 1970 as 1970 is after 1900), in the NTP era that
        // starts in 2036: its 32-bit seconds have wrapped.
        let in_era_1 = NTP_TO_UNIX_SECS * 1000;
        assert_eq!(unix_ms(ntp(in_era_1)), Some(in_era_1));
        // 1969 is before Unix time: no time for us.
        assert_eq!(unix_ms(ntp(0).wrapping_sub(1 << 32)), None);
        assert_eq!(unix_ms(0), None);
    }

    #[test]
    fn offset_is_the_mean_of_both_directions() {
        // Sent at tick 1,000; 40 ms to the server, 10 ms there, 60 ms back.
        let base = UNIX_SECS * 1000;
        let parsed = Reply {
            received_unix_ms: base + 40,
            sent_unix_ms: base + 50,
            stratum: 1,
        };
        let offset = offset_ms(1_000, &parsed, 1_110);
        // The server's clock at tick 1,000 was `base`; the estimate errs by half the asymmetry.
        assert_eq!(offset.wrapping_add(1_000), base - 10);
        assert_eq!(round_trip_ms(1_000, &parsed, 1_110), 100);
    }

    #[test]
    fn offset_wraps_when_ticks_exceed_unix_time() {
        let parsed = Reply {
            received_unix_ms: 5,
            sent_unix_ms: 5,
            stratum: 1,
        };
        let offset = offset_ms(u64::MAX - 10, &parsed, u64::MAX - 10);
        assert_eq!(offset.wrapping_add(u64::MAX - 10), 5);
    }
}
