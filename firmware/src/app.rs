//! The network application: owns the smoltcp interface and sockets.
//!
//! **This file is the seam for net-shell.** The rest of the firmware uses exactly this surface:
//!
//! ```text
//! Storage::new() -> Storage                                   (const fn, placed in a static)
//! App::new(config: Config, storage: &'static mut Storage, device: &mut D, now_ms: u64) -> App
//! App::poll(&mut self, now_ms: u64, device: &mut D) -> Option<u64>    (next deadline, ms)
//! App::listen_endpoint(&self) -> Option<IpEndpoint>           (Some once the listener listens)
//! App::take_activity(&mut self) -> bool                       (drives the status LED)
//! ```
//!
//! where `D: smoltcp::phy::Device`. Phase 2 replaces this placeholder with the same surface
//! over `net_shell::Server`. The placeholder listens on [`Config::port`] with [`SOCKETS`]
//! sockets and answers `+PONG\r\n` to every line that contains `PING` (any case), which is
//! what `redis-cli ping` needs.

use core::mem::MaybeUninit;

use smoltcp::iface::{self, Interface, SocketHandle, SocketSet, SocketStorage};
use smoltcp::phy::Device;
use smoltcp::socket::{dhcpv4, tcp};
use smoltcp::time::Instant;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpCidr, IpEndpoint, Ipv4Address, Ipv4Cidr};

/// How many clients can be connected at once.
pub const SOCKETS: usize = 4;
/// Receive and send buffer size of each TCP socket.
pub const SOCKET_BUFFER: usize = 1024;

const PONG: &[u8] = b"+PONG\r\n";

/// A fixed IPv4 configuration.
#[derive(Clone, Copy, Debug)]
pub struct StaticV4 {
    /// Address and prefix length.
    pub address: Ipv4Cidr,
    /// Default gateway.
    pub gateway: Option<Ipv4Address>,
}

/// How the interface gets its address.
#[derive(Clone, Copy, Debug)]
#[allow(dead_code, reason = "each board uses one variant")]
pub enum Addressing {
    /// A fixed address from the start.
    Static(StaticV4),
    /// DHCPv4; `fallback` applies if no lease arrives within `fallback_after_ms` (DHCP keeps
    /// trying, and a later lease replaces the fallback).
    Dhcp {
        /// The configuration used until a lease arrives.
        fallback: StaticV4,
        /// How long to wait for a lease before using `fallback`.
        fallback_after_ms: u64,
    },
}

/// What the board tells the application.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// The NIC's station address.
    pub mac: [u8; 6],
    /// How to get an IPv4 address.
    pub addressing: Addressing,
    /// The TCP port to listen on.
    pub port: u16,
    /// Seed for TCP initial sequence numbers and DHCP transaction ids.
    pub random_seed: u64,
}

/// Sockets and buffers, in a static (too large for the stack, and smoltcp borrows them for
/// the program's life).
///
/// All zeros (or uninitialised) until [`App::new`], so the static lands in `.bss` and costs no
/// flash for an initialiser.
pub struct Storage {
    sockets: MaybeUninit<[SocketStorage<'static>; SOCKETS + 1]>,
    rx: [[u8; SOCKET_BUFFER]; SOCKETS],
    tx: [[u8; SOCKET_BUFFER]; SOCKETS],
}

impl Storage {
    /// Empty storage.
    pub const fn new() -> Self {
        Self {
            sockets: MaybeUninit::uninit(),
            rx: [[0; SOCKET_BUFFER]; SOCKETS],
            tx: [[0; SOCKET_BUFFER]; SOCKETS],
        }
    }
}

/// Finds `PING` in a line, byte by byte, whatever the line's split across segments.
#[derive(Clone, Copy, Default)]
struct PingScan {
    matched: u8,
    found: bool,
}

impl PingScan {
    const WORD: &'static [u8; 4] = b"PING";

    /// Feeds one byte; `true` at the end of a line that contained `PING`.
    fn feed(&mut self, byte: u8) -> bool {
        if byte == b'\n' {
            return core::mem::take(self).found;
        }
        if !self.found {
            let byte = byte.to_ascii_uppercase();
            self.matched = if byte == Self::WORD[usize::from(self.matched)] {
                self.matched + 1
            } else {
                u8::from(byte == Self::WORD[0])
            };
            self.found = usize::from(self.matched) == Self::WORD.len();
        }
        false
    }
}

/// DHCP client state: the socket, and when the fallback applies (`None`: leased, or the
/// fallback is in use).
struct Dhcp {
    handle: SocketHandle,
    fallback: StaticV4,
    fallback_after_ms: u64,
    fallback_at: Option<u64>,
    leased: bool,
}

/// The placeholder application.
pub struct App {
    iface: Interface,
    sockets: SocketSet<'static>,
    listeners: [(SocketHandle, PingScan); SOCKETS],
    dhcp: Option<Dhcp>,
    port: u16,
    activity: bool,
}

impl App {
    /// Builds the interface over `device`, applies static addressing (or starts DHCP), and puts
    /// every socket in LISTEN.
    pub fn new<D: Device>(
        config: Config,
        storage: &'static mut Storage,
        device: &mut D,
        now_ms: u64,
    ) -> Self {
        let now = Instant::from_millis(now_ms as i64);
        let mut iface_config =
            iface::Config::new(HardwareAddress::Ethernet(EthernetAddress(config.mac)));
        iface_config.random_seed = config.random_seed;
        let mut iface = Interface::new(iface_config, device, now);

        let Storage { sockets, rx, tx } = storage;
        let mut sockets =
            SocketSet::new(&mut sockets.write([SocketStorage::EMPTY; SOCKETS + 1])[..]);
        let mut rx = rx.iter_mut();
        let mut tx = tx.iter_mut();
        let listeners = core::array::from_fn(|_| {
            let (Some(rx), Some(tx)) = (rx.next(), tx.next()) else {
                unreachable!("one buffer pair per socket")
            };
            let mut socket = tcp::Socket::new(
                tcp::SocketBuffer::new(&mut rx[..]),
                tcp::SocketBuffer::new(&mut tx[..]),
            );
            // Cannot fail: the port is not 0 and the socket is fresh.
            let _ = socket.listen(config.port);
            (sockets.add(socket), PingScan::default())
        });

        let dhcp = match config.addressing {
            Addressing::Static(v4) => {
                apply(&mut iface, Some(v4));
                None
            }
            Addressing::Dhcp {
                fallback,
                fallback_after_ms,
            } => Some(Dhcp {
                handle: sockets.add(dhcpv4::Socket::new()),
                fallback,
                fallback_after_ms,
                fallback_at: Some(now_ms.saturating_add(fallback_after_ms)),
                leased: false,
            }),
        };

        Self {
            iface,
            sockets,
            listeners,
            dhcp,
            port: config.port,
            activity: false,
        }
    }

    /// Processes whatever the device received and the sockets want to send; returns when it
    /// next needs to run (milliseconds, the clock of `now_ms`), `None` for "only on traffic".
    pub fn poll<D: Device>(&mut self, now_ms: u64, device: &mut D) -> Option<u64> {
        let now = Instant::from_millis(now_ms as i64);
        self.iface.poll(now, device, &mut self.sockets);
        let dhcp_deadline = self.poll_dhcp(now_ms);
        let mut replied = false;
        for (handle, scan) in &mut self.listeners {
            let socket = self.sockets.get_mut::<tcp::Socket>(*handle);
            replied |= serve(socket, scan, self.port);
        }
        if replied {
            self.activity = true;
            // Send the replies now, not at the next wake-up.
            self.iface.poll(now, device, &mut self.sockets);
        }
        let next = self
            .iface
            .poll_at(now, &self.sockets)
            .map(|at| at.total_millis().max(0) as u64);
        match (next, dhcp_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Where clients can connect: `Some` once the interface has an address and a socket
    /// listens. The firmware prints its "ready" line on the first `Some`.
    pub fn listen_endpoint(&self) -> Option<IpEndpoint> {
        let address = self.iface.ipv4_addr()?;
        let listening = self
            .listeners
            .iter()
            .any(|(handle, _)| self.sockets.get::<tcp::Socket>(*handle).is_listening());
        listening.then(|| IpEndpoint::new(address.into(), self.port))
    }

    /// Whether a request was served since the last call.
    pub fn take_activity(&mut self) -> bool {
        core::mem::take(&mut self.activity)
    }

    /// Applies DHCP events and the fallback; returns the fallback's deadline while it is due.
    fn poll_dhcp(&mut self, now_ms: u64) -> Option<u64> {
        let dhcp = self.dhcp.as_mut()?;
        match self.sockets.get_mut::<dhcpv4::Socket>(dhcp.handle).poll() {
            Some(dhcpv4::Event::Configured(lease)) => {
                defmt::info!("DHCP lease {}", lease.address);
                apply(
                    &mut self.iface,
                    Some(StaticV4 {
                        address: lease.address,
                        gateway: lease.router,
                    }),
                );
                dhcp.leased = true;
                dhcp.fallback_at = None;
            }
            // Also reported once at start, before any lease: only a lost lease matters.
            Some(dhcpv4::Event::Deconfigured) if dhcp.leased => {
                defmt::warn!("DHCP lease lost");
                apply(&mut self.iface, None);
                dhcp.leased = false;
                dhcp.fallback_at = Some(now_ms.saturating_add(dhcp.fallback_after_ms));
            }
            Some(dhcpv4::Event::Deconfigured) | None => {}
        }
        let at = dhcp.fallback_at?;
        if now_ms < at {
            return Some(at);
        }
        defmt::warn!("no DHCP lease: using {}", dhcp.fallback.address);
        apply(&mut self.iface, Some(dhcp.fallback));
        dhcp.fallback_at = None;
        None
    }
}

fn apply(iface: &mut Interface, v4: Option<StaticV4>) {
    iface.update_ip_addrs(|addrs| {
        addrs.clear();
        if let Some(v4) = v4 {
            // Cannot fail: the list was just cleared and holds at least one address.
            let _ = addrs.push(IpCidr::Ipv4(v4.address));
        }
    });
    let routes = iface.routes_mut();
    routes.remove_default_ipv4_route();
    if let Some(gateway) = v4.and_then(|v4| v4.gateway) {
        // Cannot fail: the default route was just removed.
        let _ = routes.add_default_ipv4_route(gateway);
    }
}

/// Serves one socket; `true` if it queued a reply.
fn serve(socket: &mut tcp::Socket, scan: &mut PingScan, port: u16) -> bool {
    if !socket.is_open() {
        *scan = PingScan::default();
        // Cannot fail: the port is not 0 and the socket is closed.
        let _ = socket.listen(port);
        return false;
    }
    let mut replied = false;
    while socket.can_recv() {
        let room = (socket.send_capacity() - socket.send_queue()) / PONG.len();
        if room == 0 {
            break; // the client is not reading: stop reading it too
        }
        let Ok(pongs) = socket.recv(|bytes| {
            let mut pongs = 0;
            let mut used = 0;
            for &mut byte in bytes {
                used += 1;
                if scan.feed(byte) {
                    pongs += 1;
                    if pongs == room {
                        break;
                    }
                }
            }
            (used, pongs)
        }) else {
            break;
        };
        for _ in 0..pongs {
            // Cannot fail short: `room` counted the free space.
            let _ = socket.send_slice(PONG);
        }
        replied |= pongs > 0;
    }
    if !socket.may_recv() && socket.may_send() {
        socket.close(); // the client hung up: finish our side
    }
    replied
}
