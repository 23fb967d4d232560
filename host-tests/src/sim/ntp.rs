//! An SNTP server on the client side of the simulated link (UDP port 123 of the client
//! interface): it answers each request with the simulated time plus an offset, or with the
//! kind of bad reply a test asks for.
//!
//! It writes its replies by hand from RFC 4330's layout, not with net-shell's codec, so the
//! two are checked against each other.

use smoltcp::iface::{SocketHandle, SocketSet};
use smoltcp::socket::udp;

/// Seconds from 1900 (NTP's epoch) to 1970 (Unix's).
const NTP_TO_UNIX_SECS: u64 = 2_208_988_800;

/// What the server sends back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NtpAnswer {
    /// A correct reply: stratum 1, the request's transmit timestamp as originate.
    Correct,
    /// Nothing.
    Silent,
    /// A correct reply, except that its originate timestamp is not the request's.
    WrongOrigin,
    /// A kiss-o'-death (stratum 0) with this code, e.g. `*b"RATE"`.
    KissOfDeath([u8; 4]),
    /// The first 47 bytes of a correct reply.
    Short,
    /// A correct reply in mode 3 (client) instead of 4 (server).
    WrongMode,
    /// A correct reply with leap indicator 3 (the server's clock is unsynchronized).
    Unsynchronized,
}

/// The SNTP server.
pub struct NtpServer {
    pub(super) socket: SocketHandle,
    /// Unix time in milliseconds at simulated time 0: the server's clock.
    pub unix_at_zero: u64,
    /// What it answers.
    pub answer: NtpAnswer,
    /// The simulated times at which requests arrived.
    pub requests: Vec<u64>,
}

impl NtpServer {
    /// A socket for the server, bound to port 123.
    pub(super) fn socket() -> udp::Socket<'static> {
        let buffer = || udp::PacketBuffer::new(vec![udp::PacketMetadata::EMPTY; 8], vec![0; 2048]);
        let mut socket = udp::Socket::new(buffer(), buffer());
        socket.bind(123).expect("bind NTP server");
        socket
    }

    /// Answers what reached the server at simulated time `now`; whether it sent anything.
    pub(super) fn serve(&mut self, sockets: &mut SocketSet<'static>, now: u64) -> bool {
        let socket = sockets.get_mut::<udp::Socket>(self.socket);
        let mut replies = Vec::new();
        while let Ok((payload, meta)) = socket.recv() {
            self.requests.push(now);
            if let Some(reply) = self.reply(payload, now) {
                replies.push((reply, meta.endpoint));
            }
        }
        for (reply, to) in &replies {
            socket.send_slice(reply, *to).expect("send NTP reply");
        }
        !replies.is_empty()
    }

    /// The reply to `request` at simulated time `now`.
    fn reply(&self, request: &[u8], now: u64) -> Option<Vec<u8>> {
        let request: &[u8; 48] = request.get(..48)?.try_into().ok()?;
        assert_eq!(request[0] & 0b111, 3, "an SNTP request is in client mode");
        let mut reply = vec![0u8; 48];
        // Leap indicator 0, the request's version, mode 4 (server); stratum 1, reference GPS.
        reply[0] = (request[0] & 0b0011_1000) | 4;
        reply[1] = 1;
        reply[12..16].copy_from_slice(b"GPS\0");
        let time = ntp_timestamp(self.unix_at_zero + now);
        reply[16..24].copy_from_slice(&time.to_be_bytes());
        reply[24..32].copy_from_slice(&request[40..48]);
        reply[32..40].copy_from_slice(&time.to_be_bytes());
        reply[40..48].copy_from_slice(&time.to_be_bytes());
        match self.answer {
            NtpAnswer::Correct => {}
            NtpAnswer::Silent => return None,
            NtpAnswer::WrongOrigin => reply[31] ^= 1,
            NtpAnswer::KissOfDeath(code) => {
                reply[1] = 0;
                reply[12..16].copy_from_slice(&code);
            }
            NtpAnswer::Short => reply.truncate(47),
            NtpAnswer::WrongMode => reply[0] = (reply[0] & !0b111) | 3,
            NtpAnswer::Unsynchronized => reply[0] |= 0b1100_0000,
        }
        Some(reply)
    }
}

/// Unix milliseconds as an NTP timestamp (its fraction rounded up, so reading it back in whole
/// milliseconds gives `unix_ms` again).
pub fn ntp_timestamp(unix_ms: u64) -> u64 {
    let seconds = (unix_ms / 1000 + NTP_TO_UNIX_SECS) & 0xffff_ffff;
    let fraction = ((unix_ms % 1000) << 32).div_ceil(1000);
    (seconds << 32) | fraction
}
