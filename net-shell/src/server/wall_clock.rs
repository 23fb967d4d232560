//! Setting the wall clock by SNTP (RFC 4330) over the server's own interface (the `sntp`
//! feature): a board with no clock of its own gets `TIME`, `EXPIREAT`, `PXAT` and
//! `EXPIRETIME` right once a server has answered.
//!
//! The NTP server is the one in [`ServerConfig::ntp_server`](super::ServerConfig), or else
//! the first one of the DHCP lease (option 42, which the DHCP client then asks for). Once the
//! interface has an address and there is a server, a request goes out; a reply that passes
//! RFC 4330's checks (see [`crate::sntp`]) sets the offset from the monotonic tick to Unix
//! time, the same one [`Server::set_unix_time`] sets, and a new sync follows after
//! [`RESYNC_INTERVAL_MS`]. Without a valid reply, the request is sent again after
//! [`FIRST_RETRY_MS`], then after twice as long each time, up to [`MAX_RETRY_MS`]; a
//! kiss-o'-death from the server also waits the longer time (`DENY` and `RSTR`: the longest).
//! A bad reply (another request's, a forgery, an unsynchronized server) is ignored, and the
//! clock keeps what it had.
//!
//! All of it is sans-IO: the time is the `now` of [`Server::poll`], and the next request's
//! time is part of the deadline `poll` returns.
//!
//! The UDP socket and the copy of the DHCP packet (to read option 42) need memory the caller
//! lends, [`SntpMemory`], about 800 bytes ([`ServerMemory::with_sntp`](super::ServerMemory)).

use smoltcp::iface::{SocketHandle, SocketSet};
use smoltcp::socket::{dhcpv4, udp};
use smoltcp::wire::{DhcpPacket, IpAddress, IpEndpoint, Ipv4Address};
use timer_core::Tick;

use super::Server;
use crate::sntp::{self, Rejected};
use crate::xorshift::Xorshift;

/// Time between two syncs once one has succeeded: an hour. A board's crystal drifts perhaps
/// 50 ppm, 180 ms an hour; `EXPIREAT` needs no better.
pub const RESYNC_INTERVAL_MS: u64 = 3_600_000;

/// How long the first request waits for its reply before it is sent again.
pub const FIRST_RETRY_MS: u64 = 4_000;

/// The longest wait between two requests while no valid reply comes (each wait is twice the
/// last, up to this).
pub const MAX_RETRY_MS: u64 = 512_000;

/// Bytes kept of the last DHCP packet, to read its NTP option: the longest message every
/// client must accept (RFC 2131 section 2: 312 bytes of options after the 236-byte header, a
/// 576-byte IP datagram). smoltcp does not copy a longer one, and then no NTP server comes from
/// DHCP.
const DHCP_PACKET_LEN: usize = 548;

/// The DHCP options asked for: smoltcp's (subnet mask, router, DNS servers) and NTP servers.
const DHCP_PARAMETERS: &[u8] = &[1, 3, 6, OPT_NTP_SERVERS];

/// DHCP option 42: NTP servers, 4 bytes each (RFC 2132 section 8.3).
const OPT_NTP_SERVERS: u8 = 42;

/// DHCP option 53: the message type; 5 is an ACK.
const OPT_MESSAGE_TYPE: u8 = 53;
const DHCP_ACK: u8 = 5;

/// Bytes of received SNTP replies held between two polls: two plain replies, or one with
/// extension fields.
const RX_BYTES: usize = 128;

/// The memory the SNTP client needs: its UDP socket's buffers and the copy of the last DHCP
/// packet. Lend it with [`ServerMemory::with_sntp`](super::ServerMemory::with_sntp).
///
/// Its packet metadata are not all zero bytes, so a `static` initialised with
/// [`new`](Self::new) goes to `.data` (flash as well as RAM), and takes the rest of the
/// `static` it sits in with it. On a board, keep it in a `MaybeUninit` and write it at boot,
/// as smoltcp's `SocketStorage`, so it stays in `.bss`.
///
/// # Examples
///
/// ```
/// use net_shell::SntpMemory;
///
/// // On a board, a `static` (through `static_cell`, say); here, on the stack.
/// let mut memory = SntpMemory::new();
/// # let _ = &mut memory;
/// ```
pub struct SntpMemory {
    rx_meta: [udp::PacketMetadata; 2],
    rx: [u8; RX_BYTES],
    tx_meta: [udp::PacketMetadata; 1],
    tx: [u8; sntp::PACKET_LEN],
    dhcp_packet: [u8; DHCP_PACKET_LEN],
}

impl SntpMemory {
    /// Empty buffers.
    pub const fn new() -> Self {
        Self {
            rx_meta: [udp::PacketMetadata::EMPTY; 2],
            rx: [0; RX_BYTES],
            tx_meta: [udp::PacketMetadata::EMPTY; 1],
            tx: [0; sntp::PACKET_LEN],
            dhcp_packet: [0; DHCP_PACKET_LEN],
        }
    }
}

impl Default for SntpMemory {
    fn default() -> Self {
        Self::new()
    }
}

/// A successful sync, for a board to copy into its real-time clock (see
/// [`Server::take_clock_sync`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ClockSync {
    /// The tick the reply was taken in at.
    pub at: Tick,
    /// Unix time in milliseconds at tick `at`, as now set.
    pub unix_ms: u64,
    /// The server that answered.
    pub server: Ipv4Address,
    /// The round trip, less the server's own time: the estimate is off by at most half of it.
    pub round_trip_ms: u64,
    /// The server's stratum (1: it has a reference clock).
    pub stratum: u8,
}

/// The request waiting for its reply.
#[derive(Clone, Copy)]
struct Pending {
    server: Ipv4Address,
    nonce: u64,
    sent_at: Tick,
}

/// The SNTP client's state.
pub(super) struct Sntp {
    socket: SocketHandle,
    configured: Option<Ipv4Address>,
    from_dhcp: Option<Ipv4Address>,
    pending: Option<Pending>,
    /// When to send the next request.
    next_at: Tick,
    /// The wait after the next request before another.
    retry_ms: u64,
    /// Draws the nonces.
    random: Xorshift,
    /// The last sync, until the board takes it.
    synced: Option<ClockSync>,
}

impl Sntp {
    /// Adds the UDP socket to `control` (which must have room) and makes the DHCP socket, if
    /// any, ask for NTP servers and keep its packet.
    pub(super) fn start<'a>(
        memory: &'a mut SntpMemory,
        control: &mut SocketSet<'a>,
        dhcp: Option<SocketHandle>,
        configured: Option<Ipv4Address>,
        seed: u64,
        now: Tick,
    ) -> Self {
        let SntpMemory {
            rx_meta,
            rx,
            tx_meta,
            tx,
            dhcp_packet,
        } = memory;
        let mut socket = udp::Socket::new(
            udp::PacketBuffer::new(&mut rx_meta[..], &mut rx[..]),
            udp::PacketBuffer::new(&mut tx_meta[..], &mut tx[..]),
        );
        // An ephemeral port that differs between boards seeded differently, so a forger must
        // guess it as well as the nonce.
        let mut random = Xorshift::new(seed ^ 0x6a09_e667_f3bc_c908);
        let port = 49152 + random.below(16384) as u16;
        // Binding a port other than 0 on a fresh socket cannot fail.
        let _ = socket.bind(port);
        if let Some(handle) = dhcp {
            let dhcp = control.get_mut::<dhcpv4::Socket>(handle);
            dhcp.set_parameter_request_list(DHCP_PARAMETERS);
            dhcp.set_receive_packet_buffer(&mut dhcp_packet[..]);
        }
        Self {
            socket: control.add(socket),
            configured,
            from_dhcp: None,
            pending: None,
            next_at: now,
            retry_ms: FIRST_RETRY_MS,
            random,
            synced: None,
        }
    }

    /// The server to ask: the configured one, else DHCP's.
    fn server(&self) -> Option<Ipv4Address> {
        self.configured.or(self.from_dhcp)
    }

    /// Starts over with a new server (or none) at once.
    fn restart(&mut self, now: Tick) {
        self.pending = None;
        self.next_at = now;
        self.retry_ms = FIRST_RETRY_MS;
    }
}

/// The first usable NTP server in a DHCP ACK's option 42, if any.
pub(super) fn ntp_server_of(lease: &dhcpv4::Config<'_>) -> Option<Ipv4Address> {
    let packet = lease.packet?;
    // smoltcp wraps its whole buffer, so the packet is 548 bytes long; check anyway.
    let packet = DhcpPacket::new_checked(packet.into_inner()).ok()?;
    // The buffer holds the last packet the DHCP socket took in: make sure it is an ACK.
    let is_ack = packet
        .options()
        .any(|option| option.kind == OPT_MESSAGE_TYPE && option.data == [DHCP_ACK]);
    if !is_ack {
        return None;
    }
    let servers = packet
        .options()
        .find(|option| option.kind == OPT_NTP_SERVERS)?;
    servers
        .data
        .chunks_exact(4)
        .map(|octets| Ipv4Address::new(octets[0], octets[1], octets[2], octets[3]))
        .find(|address| {
            !address.is_unspecified() && !address.is_broadcast() && !address.is_multicast()
        })
}

impl Server<'_> {
    /// Reads replies, then sends a request if one is due.
    pub(super) fn poll_wall_clock(&mut self, now: Tick) {
        let has_address = self.ipv4_address().is_some();
        let Some(sntp) = self.sntp.as_mut() else {
            return;
        };
        let socket = self.sockets.control.get_mut::<udp::Socket>(sntp.socket);
        while let Ok((payload, meta)) = socket.recv() {
            let Some(pending) = sntp.pending else {
                debug!("SNTP: a datagram with no request waiting");
                continue;
            };
            if meta.endpoint != IpEndpoint::new(IpAddress::Ipv4(pending.server), sntp::PORT) {
                debug!("SNTP: a datagram not from the server asked");
                continue;
            }
            match sntp::parse_reply(payload, pending.nonce) {
                Ok(reply) => {
                    let offset = sntp::offset_ms(pending.sent_at, &reply, now);
                    self.unix_offset_ms = Some(offset);
                    let sync = ClockSync {
                        at: now,
                        unix_ms: offset.wrapping_add(now),
                        server: pending.server,
                        round_trip_ms: sntp::round_trip_ms(pending.sent_at, &reply, now),
                        stratum: reply.stratum,
                    };
                    info!(
                        "SNTP: clock set from {} (round trip {} ms)",
                        sync.server, sync.round_trip_ms
                    );
                    sntp.synced = Some(sync);
                    sntp.pending = None;
                    sntp.retry_ms = FIRST_RETRY_MS;
                    sntp.next_at = now.saturating_add(RESYNC_INTERVAL_MS);
                }
                Err(rejected @ Rejected::KissOfDeath(_)) => {
                    warn!("SNTP: {} from {}", rejected.as_str(), pending.server);
                    // Ask less often (RATE), or as seldom as we ever do (DENY, RSTR): the
                    // server may change, or change its mind.
                    sntp.retry_ms = if rejected.denies() {
                        MAX_RETRY_MS
                    } else {
                        sntp.retry_ms.saturating_mul(2).min(MAX_RETRY_MS)
                    };
                    sntp.pending = None;
                    sntp.next_at = now.saturating_add(sntp.retry_ms);
                }
                Err(rejected) => {
                    warn!("SNTP: reply ignored: {}", rejected.as_str());
                }
            }
        }

        let Some(server) = sntp.server().filter(|_| has_address) else {
            sntp.pending = None;
            return;
        };
        if now < sntp.next_at {
            return;
        }
        if sntp.pending.is_some() {
            // No valid reply in time: wait longer after this one.
            debug!("SNTP: no reply from {}; asking again", server);
            sntp.retry_ms = sntp.retry_ms.saturating_mul(2).min(MAX_RETRY_MS);
        }
        let nonce = sntp.random.next_u64();
        let mut request = [0; sntp::PACKET_LEN];
        sntp::request(nonce, &mut request);
        let to = IpEndpoint::new(IpAddress::Ipv4(server), sntp::PORT);
        match socket.send_slice(&request, to) {
            Ok(()) => {
                sntp.pending = Some(Pending {
                    server,
                    nonce,
                    sent_at: now,
                });
            }
            // The last request has not left yet (its neighbour is not resolved): it still
            // counts, and is the one a reply must answer.
            Err(_) => debug!("SNTP: the last request is still queued"),
        }
        let wait = sntp.retry_ms;
        sntp.next_at = now.saturating_add(wait);
    }

    /// When the SNTP client next needs a poll: its next request, if it can send one.
    pub(super) fn wall_clock_deadline(&self) -> Option<Tick> {
        let sntp = self.sntp.as_ref()?;
        sntp.server()?;
        self.ipv4_address()?;
        Some(sntp.next_at)
    }

    /// Takes the NTP server of a new DHCP lease (`None`: the lease has none, or was lost).
    pub(super) fn ntp_server_from_dhcp(&mut self, server: Option<Ipv4Address>, now: Tick) {
        let Some(sntp) = self.sntp.as_mut() else {
            return;
        };
        if sntp.from_dhcp == server {
            return;
        }
        let before = sntp.server();
        sntp.from_dhcp = server;
        if let Some(server) = server {
            info!("DHCP: NTP server {}", server);
        }
        if sntp.server() != before {
            sntp.restart(now);
        }
    }

    /// The last successful SNTP sync, taken: `Some` once after each sync, for a board to set
    /// its real-time clock from. ([`unix_time_ms`](Self::unix_time_ms) has the time itself.)
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn board(server: &mut net_shell::Server<'_>, now: u64) {
    /// if let Some(sync) = server.take_clock_sync() {
    ///     // rtc.set_unix_ms(sync.unix_ms + (now - sync.at));
    ///     # let _ = sync;
    /// }
    /// # }
    /// ```
    pub fn take_clock_sync(&mut self) -> Option<ClockSync> {
        self.sntp.as_mut()?.synced.take()
    }

    /// The NTP server the SNTP client asks (configured, or from DHCP), if any.
    pub fn ntp_server(&self) -> Option<Ipv4Address> {
        self.sntp.as_ref()?.server()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sntp_memory_stays_under_a_kibibyte() {
        let size = core::mem::size_of::<SntpMemory>();
        std::println!("SntpMemory: {size} bytes");
        assert!(size <= 1024, "{size}");
    }
}
