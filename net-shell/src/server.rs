//! The server: a smoltcp interface, a pool of client sockets, the key store and all timers,
//! driven by [`Server::poll`] with the time passed in.

use core::fmt;

use smoltcp::iface::{
    Config as IfaceConfig, Interface, PollIngressSingleResult, SocketHandle, SocketSet,
    SocketStorage,
};
use smoltcp::phy::Device;
use smoltcp::socket::{dhcpv4, tcp, Socket};
use smoltcp::time::Instant;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpCidr, Ipv4Address, Ipv4Cidr};
use timer_core::{Tick, TimeoutList, TimeoutLists, TimerQueue};

use crate::auth::{self, Security};
use crate::command::{self, After, Clock, Context};
use crate::config::{Settings, Timeouts};
use crate::connection::{list, Connection, Phase};
use crate::resp::{self, Limits, Parsed, ReplyWriter};
use crate::stats::Stats;
use crate::store::Store;

/// Most arguments in one command.
pub const MAX_ARGS: usize = 32;

/// Reply room beyond the largest value: bulk header and CRLF, or an error line.
const REPLY_SLACK: usize = 64;

/// The largest non-value reply (`INFO`).
const REPLY_MIN: usize = 1600;

/// Most frames taken in per poll, so a flood cannot keep one poll from serving and expiring.
const INGRESS_BUDGET: usize = 256;

const REFUSAL: &[u8] = b"-ERR max number of clients reached\r\n";
const TOO_BIG: &[u8] = b"-ERR Protocol error: request does not fit the input buffer\r\n";

/// How the interface gets its IPv4 address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum IpSetup {
    /// A fixed address.
    Static {
        /// Address and prefix, e.g. `10.0.2.15/24`.
        address: Ipv4Cidr,
        /// Default gateway.
        gateway: Option<Ipv4Address>,
    },
    /// DHCPv4, with a static address taken if no lease arrives in time. DHCP keeps trying; a
    /// lease replaces the fallback, and a lease that runs out brings the fallback back at once.
    Dhcp {
        /// Address and gateway to use if DHCP has not answered after `fallback_after_ms`, or
        /// has lost its lease.
        fallback: Option<(Ipv4Cidr, Option<Ipv4Address>)>,
        /// How long to wait for a lease before taking the fallback.
        fallback_after_ms: u64,
    },
}

/// Per-connection buffer sizes, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BufferSizes {
    /// smoltcp receive buffer (the TCP window).
    pub rx: usize,
    /// smoltcp send buffer; must hold at least one largest reply.
    pub tx: usize,
    /// The partial-command buffer: the largest request accepted.
    pub input: usize,
}

impl BufferSizes {
    /// The scratch space for one reply: the largest value plus slack, or `INFO`.
    pub const fn reply(&self) -> usize {
        let value_reply = self.input + REPLY_SLACK;
        if value_reply > REPLY_MIN {
            value_reply
        } else {
            REPLY_MIN
        }
    }

    /// Bytes of buffer [`Server::new`] needs for `sockets` client sockets.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::BufferSizes;
    ///
    /// let sizes = BufferSizes { rx: 1024, tx: 2048, input: 1024 };
    /// assert_eq!(sizes.bytes_needed(4), 4 * (1024 + 2048 + 1024) + 1600);
    /// ```
    pub const fn bytes_needed(&self, sockets: usize) -> usize {
        sockets * (self.rx + self.tx + self.input) + self.reply()
    }
}

/// Everything [`Server::new`] needs to know.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ServerConfig {
    /// The interface's MAC address.
    pub mac: [u8; 6],
    /// How the interface gets its address.
    pub ip: IpSetup,
    /// TCP port to serve (6379).
    pub port: u16,
    /// Connection timeouts (changeable at run time with `CONFIG SET`).
    pub timeouts: Timeouts,
    /// Password and protected mode (changeable at run time with `CONFIG SET`).
    pub security: Security,
    /// Buffer sizes per connection.
    pub buffers: BufferSizes,
    /// Most keys removed by the TTL timer per poll, so a mass expiry never stalls serving.
    pub expire_budget: usize,
    /// Seed for smoltcp (TCP initial sequence numbers, DHCP transaction ids).
    pub random_seed: u64,
}

impl ServerConfig {
    /// A configuration with defaults: port 6379, [`Timeouts::DEFAULT`], [`Security::DEFAULT`]
    /// (no password, protected mode on, nobody trusted: set one of them), 2 KiB/4 KiB/2 KiB
    /// buffers, 1,000 expirations per poll.
    pub const fn new(mac: [u8; 6], ip: IpSetup) -> Self {
        Self {
            mac,
            ip,
            port: 6379,
            timeouts: Timeouts::DEFAULT,
            security: Security::DEFAULT,
            buffers: BufferSizes {
                rx: 2048,
                tx: 4096,
                input: 2048,
            },
            expire_budget: 1000,
            random_seed: 0x5eed,
        }
    }
}

/// Why [`Server::new`] refused its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum SetupError {
    /// The socket storage must have room for `CONNS` TCP sockets plus one DHCP socket.
    TooFewSocketSlots {
        /// Slots needed.
        needed: usize,
    },
    /// The byte buffer is smaller than [`BufferSizes::bytes_needed`].
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
    },
    /// The send buffer cannot hold one largest reply.
    SendBufferTooSmall {
        /// Bytes needed.
        needed: usize,
    },
    /// The input buffer cannot hold the longest `SET` (the store's longest key and value,
    /// with `NX GET PXAT <time>`), so some values could be refused as a protocol error.
    InputBufferTooSmall {
        /// Bytes needed.
        needed: usize,
    },
    /// At least two client sockets are needed (one is kept to refuse overflow politely).
    TooFewConnections,
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooFewSocketSlots { needed } => write!(f, "socket storage needs {needed} slots"),
            Self::BufferTooSmall { needed } => write!(f, "buffer needs {needed} bytes"),
            Self::SendBufferTooSmall { needed } => {
                write!(f, "send buffer must be at least {needed} bytes")
            }
            Self::InputBufferTooSmall { needed } => {
                write!(f, "input buffer must be at least {needed} bytes")
            }
            Self::TooFewConnections => f.write_str("at least 2 connection slots are needed"),
        }
    }
}

impl core::error::Error for SetupError {}

/// A RESP2 key-value server on smoltcp. Sans-IO and sans-clock: [`poll`](Self::poll) is given
/// the time and a device and says when it next needs to run.
///
/// `CONNS` TCP sockets listen on the port; `CONNS - 1` clients are served at once and the last
/// socket answers any further client `-ERR max number of clients reached` (as Redis does) and
/// counts it, since smoltcp has no listen backlog to tell us otherwise.
pub struct Server<'a, const CONNS: usize, const KEYS: usize, const BYTES: usize> {
    iface: Interface,
    sockets: SocketSet<'a>,
    conns: heapless::Vec<Connection<'a>, CONNS>,
    reply: &'a mut [u8],
    store: &'a mut Store<KEYS, BYTES>,
    settings: Settings,
    conn_timers: TimeoutLists<u16, CONNS, { list::COUNT }>,
    write_timers: TimeoutList<u16, CONNS>,
    stats: Stats,
    limits: Limits,
    port: u16,
    dhcp: Option<DhcpState>,
    expire_budget: usize,
    unix_offset_ms: Option<u64>,
    last_now: Tick,
    /// The tick `new` was given, for `INFO` uptime.
    started: Tick,
    more_keys_due: bool,
    /// The last poll left frames in the device (its ingress budget ran out).
    more_frames: bool,
    shutting_down: bool,
    /// A `CONFIG SET` changed the timeouts: re-arm every connection's timers.
    timeouts_changed: bool,
}

#[derive(Clone, Copy)]
struct DhcpState {
    handle: SocketHandle,
    fallback: Option<(Ipv4Cidr, Option<Ipv4Address>)>,
    fallback_at: Tick,
    leased: bool,
    /// The fallback address is in use (kept for the next lost lease, not used up).
    on_fallback: bool,
}

/// The length of `SET <key> <value> NX GET PXAT -9223372036854775808` as a multibulk request,
/// for the longest key and value: the longest request the input buffer must hold.
const fn longest_set_request(max_key: usize, max_value: usize) -> usize {
    // A request's bulk strings are encoded as a reply's are: `$<len>\r\n<bytes>\r\n`.
    use crate::resp::{array_header_len, bulk_reply_len};
    array_header_len(7)
        + bulk_reply_len("SET".len())
        + bulk_reply_len(max_key)
        + bulk_reply_len(max_value)
        + bulk_reply_len("NX".len())
        + bulk_reply_len("GET".len())
        + bulk_reply_len("PXAT".len())
        + bulk_reply_len("-9223372036854775808".len())
}

/// The latest time handed to smoltcp: its `Instant` counts microseconds in an `i64` and adds
/// timer durations (up to DHCP lease times) to it, so stay well inside that range (about
/// 146,000 years). Later ticks stop the network clock there; our own timers keep the tick.
const MAX_INSTANT_MS: Tick = (i64::MAX / 1000 / 2) as Tick;

fn instant(now: Tick) -> Instant {
    Instant::from_millis(now.min(MAX_INSTANT_MS) as i64)
}

impl<'a, const CONNS: usize, const KEYS: usize, const BYTES: usize> Server<'a, CONNS, KEYS, BYTES> {
    /// Builds the interface and starts listening.
    ///
    /// `socket_slots` needs `CONNS + 1` entries; `buffer` needs
    /// [`BufferSizes::bytes_needed`]`(CONNS)` bytes. Both usually live in `static`s.
    ///
    /// # Errors
    ///
    /// [`SetupError`] when a buffer is too small for the configuration.
    pub fn new<D: Device + ?Sized>(
        config: ServerConfig,
        store: &'a mut Store<KEYS, BYTES>,
        socket_slots: &'a mut [SocketStorage<'a>],
        buffer: &'a mut [u8],
        device: &mut D,
        now: Tick,
    ) -> Result<Self, SetupError> {
        let sizes = config.buffers;
        if CONNS < 2 {
            return Err(SetupError::TooFewConnections);
        }
        if socket_slots.len() < CONNS + 1 {
            return Err(SetupError::TooFewSocketSlots { needed: CONNS + 1 });
        }
        let needed = sizes.bytes_needed(CONNS);
        if buffer.len() < needed {
            return Err(SetupError::BufferTooSmall { needed });
        }
        if sizes.tx < sizes.reply() {
            return Err(SetupError::SendBufferTooSmall {
                needed: sizes.reply(),
            });
        }
        let longest = longest_set_request(store.max_key_len(), store.max_value_len());
        if sizes.input < longest {
            return Err(SetupError::InputBufferTooSmall { needed: longest });
        }

        let mut iface_config =
            IfaceConfig::new(HardwareAddress::Ethernet(EthernetAddress(config.mac)));
        iface_config.random_seed = config.random_seed;
        let mut iface = Interface::new(iface_config, device, instant(now));
        let mut sockets = SocketSet::new(socket_slots);

        let (reply, mut rest) = buffer.split_at_mut(sizes.reply());
        let mut conns = heapless::Vec::new();
        for _ in 0..CONNS {
            let (rx, after_rx) = rest.split_at_mut(sizes.rx);
            let (tx, after_tx) = after_rx.split_at_mut(sizes.tx);
            let (input, after_input) = after_tx.split_at_mut(sizes.input);
            rest = after_input;
            let mut socket =
                tcp::Socket::new(tcp::SocketBuffer::new(rx), tcp::SocketBuffer::new(tx));
            socket.set_nagle_enabled(false);
            let _ = socket.listen(config.port);
            let handle = sockets.add(socket);
            let _ = conns.push(Connection::new(handle, input));
        }

        let dhcp = match config.ip {
            IpSetup::Static { address, gateway } => {
                apply_address(&mut iface, Some((address, gateway)));
                None
            }
            IpSetup::Dhcp {
                fallback,
                fallback_after_ms,
            } => Some(DhcpState {
                handle: sockets.add(dhcpv4::Socket::new()),
                fallback,
                fallback_at: now.saturating_add(fallback_after_ms),
                leased: false,
                on_fallback: false,
            }),
        };

        let input = sizes.input;
        Ok(Self {
            iface,
            sockets,
            conns,
            reply,
            store,
            settings: Settings::new(config.timeouts, config.security),
            conn_timers: TimeoutLists::new(),
            write_timers: TimeoutList::new(),
            stats: Stats::default(),
            limits: Limits::new(input, input),
            port: config.port,
            dhcp,
            expire_budget: config.expire_budget.max(1),
            unix_offset_ms: None,
            last_now: now,
            started: now,
            more_keys_due: false,
            more_frames: false,
            shutting_down: false,
            timeouts_changed: false,
        })
    }

    /// Tells the server the wall-clock time, so `EXAT`, `PXAT`, `EXPIREAT` and `EXPIRETIME`
    /// work: `unix_ms` is the Unix time in milliseconds at monotonic tick `now`.
    pub fn set_unix_time(&mut self, now: Tick, unix_ms: u64) {
        self.unix_offset_ms = Some(unix_ms.wrapping_sub(now));
    }

    /// Runs everything due at `now` (milliseconds, monotonic): network I/O, commands, key
    /// expiry, connection timeouts. Returns when to call again at the latest (`None`: only when
    /// the device has a frame).
    pub fn poll<D: Device + ?Sized>(&mut self, now: Tick, device: &mut D) -> Option<Tick> {
        // Time never goes backwards here, whatever the caller's clock does.
        let now = now.max(self.last_now);
        self.last_now = now;

        self.receive(now, device);
        self.poll_dhcp(now);
        for index in 0..self.conns.len() {
            self.service(index, now);
        }
        if core::mem::take(&mut self.timeouts_changed) {
            // New timeouts apply to connections already waiting, as in Redis.
            for index in 0..self.conns.len() {
                if self.conns[index].phase == Phase::Open {
                    self.arm_timers(index);
                }
            }
        }
        let sweep = self.store.expire(now, self.expire_budget);
        self.more_keys_due = sweep.more_due;
        self.expire_connections(now);
        // Replies, and the FINs and RSTs of connections closed above, go out now rather than
        // at the next poll. Egress only: a frame taken in here would not be served until the
        // next poll, and nothing would ask for that poll before smoltcp's delayed-ACK deadline
        // (the device has no frame left to wake the caller).
        self.iface
            .poll_egress(instant(now), device, &mut self.sockets);
        self.listen_again();
        self.next_poll(now)
    }

    /// Takes in at most [`INGRESS_BUDGET`] frames, then sends what smoltcp has queued. After
    /// each frame, keeps a socket listening (see [`guard_listeners`](Self::guard_listeners)).
    fn receive<D: Device + ?Sized>(&mut self, now: Tick, device: &mut D) {
        self.more_frames = false;
        for _ in 0..INGRESS_BUDGET {
            match self
                .iface
                .poll_ingress_single(instant(now), device, &mut self.sockets)
            {
                PollIngressSingleResult::None => {
                    self.iface
                        .poll_egress(instant(now), device, &mut self.sockets);
                    return;
                }
                PollIngressSingleResult::PacketProcessed => {}
                PollIngressSingleResult::SocketStateChanged => self.guard_listeners(now),
            }
        }
        // More frames may wait: serve what came in, then come back at once.
        self.more_frames = true;
        self.iface
            .poll_egress(instant(now), device, &mut self.sockets);
    }

    /// Times half-open handshakes and keeps at least one socket listening.
    ///
    /// smoltcp has no listen backlog: a SYN takes a listening socket into SYN-RECEIVED, and a
    /// SYN that finds no listening socket is answered with a reset. Every SYN-RECEIVED socket
    /// gets a handshake timer (on the `HANDSHAKE` list, in arrival order). When no socket is left
    /// listening and more than one handshake is pending, the oldest is aborted and its socket
    /// listens again, so the next SYN finds a listener. The newest handshake is never evicted:
    /// with a single free socket, a real client's SYN must not cancel itself. A real client
    /// completes its handshake within a round trip, so only a flood of more SYNs than free
    /// sockets within one round trip can evict it; spoofed SYNs that are never completed are
    /// the ones evicted.
    fn guard_listeners(&mut self, now: Tick) {
        if self.shutting_down {
            return;
        }
        let mut listening = 0;
        let mut half_open = 0;
        for index in 0..self.conns.len() {
            let conn = &self.conns[index];
            if conn.phase != Phase::Listening {
                continue;
            }
            match self.sockets.get::<tcp::Socket>(conn.socket).state() {
                tcp::State::Listen => {
                    listening += 1;
                    // A handshake the peer reset: the socket is free again.
                    if let Some(id) = self.conns[index].timer.take() {
                        let _ = self.conn_timers.cancel(id);
                    }
                }
                tcp::State::SynReceived => {
                    half_open += 1;
                    if conn.timer.is_none() {
                        let at = now.saturating_add(self.settings.timeouts.handshake_ms.max(1));
                        self.conns[index].timer = self
                            .conn_timers
                            .insert_into(list::HANDSHAKE, at, index as u16)
                            .ok();
                    }
                }
                _ => {}
            }
        }
        if listening == 0 && half_open > 1 {
            if let Some(oldest) = self.conn_timers.pop_expired_in(list::HANDSHAKE, Tick::MAX) {
                let index = usize::from(oldest.value);
                if self
                    .conns
                    .get(index)
                    .is_some_and(|c| c.timer == Some(oldest.id))
                {
                    debug!(
                        "slot {}: no socket listening, evicting the oldest handshake",
                        index
                    );
                    self.stats.half_open_evictions += 1;
                    self.conns[index].timer = None;
                    self.relisten(index);
                }
            }
        }
    }

    /// Aborts a half-open handshake and listens again at once. The reset to the peer is not
    /// sent: a peer that never completed its handshake does not need one, and the socket is
    /// needed now.
    fn relisten(&mut self, index: usize) {
        self.listen_fresh(index);
    }

    /// Makes the slot's socket listen as a new socket would: smoltcp keeps, per socket in the
    /// set, a "waiting for neighbour" state that outlives the connection. A socket whose last
    /// peer never answered ARP (a spoofed SYN) would otherwise hold back its next client's
    /// SYN-ACK for up to a second, and report a stale poll time that never passes. Taking the
    /// socket out of the set and adding it back starts that state afresh.
    fn listen_fresh(&mut self, index: usize) {
        let handle = self.conns[index].socket;
        // A slot's handle always names a TCP socket (`new` made it one).
        #[allow(irrefutable_let_patterns)]
        let Socket::Tcp(mut socket) = self.sockets.remove(handle) else {
            return;
        };
        socket.abort();
        let _ = socket.listen(self.port);
        self.conns[index].socket = self.sockets.add(socket);
    }

    /// Slots recycled during this poll listen again, now that their RST has gone out
    /// (`listen` resets the socket, which would forget an RST not yet sent).
    fn listen_again(&mut self) {
        if self.shutting_down {
            return;
        }
        for index in 0..self.conns.len() {
            let conn = &self.conns[index];
            let socket = self.sockets.get::<tcp::Socket>(conn.socket);
            if conn.phase == Phase::Listening && socket.state() == tcp::State::Closed {
                self.listen_fresh(index);
            }
        }
    }

    /// When the server next needs [`poll`](Self::poll), without polling.
    pub fn next_poll(&mut self, now: Tick) -> Option<Tick> {
        if self.more_keys_due || self.more_frames {
            return Some(now);
        }
        let iface = self
            .iface
            .poll_at(instant(now), &self.sockets)
            .map(|at| at.total_millis().max(0) as Tick);
        [
            iface,
            self.store.next_deadline(),
            self.conn_timers.next_deadline(),
            self.write_timers.next_deadline(),
            self.dhcp
                .filter(|d| !d.leased && !d.on_fallback && d.fallback.is_some())
                .map(|d| d.fallback_at),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Server counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The key store.
    pub fn store(&self) -> &Store<KEYS, BYTES> {
        self.store
    }

    /// The current IPv4 address, once there is one.
    pub fn ipv4_address(&self) -> Option<Ipv4Cidr> {
        self.iface
            .ip_addrs()
            .iter()
            .map(|cidr| match cidr {
                IpCidr::Ipv4(v4) => *v4,
            })
            .next()
    }

    /// The TCP port served.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether client sockets are listening (true from the first poll with an address).
    pub fn is_listening(&self) -> bool {
        self.ipv4_address().is_some()
            && self
                .conns
                .iter()
                .any(|c| self.sockets.get::<tcp::Socket>(c.socket).is_listening())
    }

    /// The timeouts in force (they may have been changed by `CONFIG SET`).
    pub fn timeouts(&self) -> Timeouts {
        self.settings.timeouts
    }

    /// The password and protected-mode settings in force.
    pub fn security(&self) -> &Security {
        &self.settings.security
    }

    /// Starts a graceful shutdown: stop accepting, close every connection after the replies
    /// already queued. Keep polling until [`open_connections`](Self::open_connections) is 0 (or a
    /// deadline of your choice).
    pub fn shutdown(&mut self, now: Tick) {
        self.shutting_down = true;
        for index in 0..self.conns.len() {
            match self.conns[index].phase {
                Phase::Open => self.begin_close(index, now),
                Phase::Listening => {
                    let handle = self.conns[index].socket;
                    self.sockets.get_mut::<tcp::Socket>(handle).abort();
                }
                Phase::Closing => {}
            }
        }
    }

    /// Connections not yet fully closed.
    pub fn open_connections(&self) -> usize {
        self.conns
            .iter()
            .filter(|c| c.phase != Phase::Listening)
            .count()
    }

    fn poll_dhcp(&mut self, now: Tick) {
        let Some(mut dhcp) = self.dhcp else {
            return;
        };
        match self.sockets.get_mut::<dhcpv4::Socket>(dhcp.handle).poll() {
            Some(dhcpv4::Event::Configured(lease)) => {
                info!("DHCP lease: {}", lease.address);
                apply_address(&mut self.iface, Some((lease.address, lease.router)));
                dhcp.leased = true;
                dhcp.on_fallback = false;
            }
            // smoltcp also reports Deconfigured once at start; only a lost lease (not the wait
            // for the first one) falls back at once.
            Some(dhcpv4::Event::Deconfigured) if dhcp.leased => {
                warn!("DHCP lease lost");
                apply_address(&mut self.iface, None);
                dhcp.leased = false;
                dhcp.fallback_at = now;
            }
            Some(dhcpv4::Event::Deconfigured) | None => {}
        }
        if !dhcp.leased && !dhcp.on_fallback && now >= dhcp.fallback_at {
            if let Some(fallback) = dhcp.fallback {
                warn!("no DHCP lease: using the fallback address {}", fallback.0);
                apply_address(&mut self.iface, Some(fallback));
                dhcp.on_fallback = true;
            }
        }
        self.dhcp = Some(dhcp);
    }

    /// Moves one connection forward: accept, read, execute, reply, arm timers, recycle.
    fn service(&mut self, index: usize, now: Tick) {
        let handle = self.conns[index].socket;
        let state = self.sockets.get::<tcp::Socket>(handle).state();
        match self.conns[index].phase {
            Phase::Listening => {
                if !matches!(
                    state,
                    tcp::State::Listen | tcp::State::SynReceived | tcp::State::Closed
                ) {
                    self.accept(index, now);
                    self.serve(index, now);
                } else if state != tcp::State::SynReceived {
                    // Listening, or closed by smoltcp: no handshake to time.
                    if let Some(id) = self.conns[index].timer.take() {
                        let _ = self.conn_timers.cancel(id);
                    }
                    if state == tcp::State::Closed && !self.shutting_down {
                        self.listen_fresh(index);
                    }
                }
            }
            Phase::Open => {
                if matches!(state, tcp::State::Closed | tcp::State::TimeWait) {
                    self.recycle(index);
                } else {
                    self.serve(index, now);
                }
            }
            Phase::Closing => {
                let socket = self.sockets.get_mut::<tcp::Socket>(handle);
                // Discard whatever the peer still sends; it is too late to answer.
                while socket.can_recv() {
                    if socket.recv(|data| (data.len(), ())).is_err() {
                        break;
                    }
                }
                if matches!(state, tcp::State::Closed | tcp::State::TimeWait) {
                    self.recycle(index);
                }
            }
        }
    }

    fn accept(&mut self, index: usize, now: Tick) {
        // Connections we are already closing do not hold a client slot: a client closed for a
        // protocol error or a timeout must not lock out the next one while its FIN drains.
        let served = self
            .conns
            .iter()
            .filter(|c| c.counted && c.phase == Phase::Open)
            .count();
        if served >= CONNS - 1 || self.shutting_down {
            info!("refused a client: all {} client slots are busy", CONNS - 1);
            self.stats.rejected_connections += 1;
            let handle = self.conns[index].socket;
            let _ = self
                .sockets
                .get_mut::<tcp::Socket>(handle)
                .send_slice(REFUSAL);
            self.conns[index].phase = Phase::Open;
            self.begin_close(index, now);
            return;
        }
        // Like Redis, count only the connections accepted, not those refused.
        self.stats.total_connections_received += 1;
        let peer = self
            .sockets
            .get::<tcp::Socket>(self.conns[index].socket)
            .remote_endpoint();
        if let Some(peer) = peer {
            debug!("slot {}: client {} connected", index, peer);
        }
        let security = &self.settings.security;
        if !peer.is_some_and(|p| security.admits(p.addr)) {
            // Redis explains protected mode to the client and disconnects it.
            info!("refused a client outside the trusted network: protected mode");
            self.stats.protected_mode_refusals += 1;
            let handle = self.conns[index].socket;
            let _ = self
                .sockets
                .get_mut::<tcp::Socket>(handle)
                .send_slice(auth::DENIED);
            self.conns[index].phase = Phase::Open;
            self.begin_close(index, now);
            return;
        }
        let authenticated = !security.requires_auth();
        let conn = &mut self.conns[index];
        conn.id = self.stats.total_connections_received;
        conn.phase = Phase::Open;
        conn.counted = true;
        conn.authenticated = authenticated;
        conn.reset(now);
        self.stats.connected_clients += 1;
        self.arm_timers(index);
    }

    /// Reads, executes and replies until input runs out or the send buffer is full.
    fn serve(&mut self, index: usize, now: Tick) {
        if self.conns[index].phase != Phase::Open {
            return;
        }
        let handle = self.conns[index].socket;
        let reply_room = self.reply.len();
        let had_input = self.conns[index].input_len > 0;
        // The client took reply bytes since the last look: the write timeout starts over.
        // (Measured before this round's replies are queued, which would hide it.)
        if self.sockets.get::<tcp::Socket>(handle).send_queue() < self.conns[index].last_send_queue
        {
            self.conns[index].write_since = Some(now);
        }
        let mut executed = false;
        let mut close = false;
        let mut blocked = false;
        loop {
            // Pull what fits into the input buffer.
            {
                let conn = &mut self.conns[index];
                let socket = self.sockets.get_mut::<tcp::Socket>(handle);
                while conn.input_len < conn.input.len() && socket.can_recv() {
                    match socket.recv_slice(&mut conn.input[conn.input_len..]) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => conn.input_len += n,
                    }
                }
            }
            let socket = self.sockets.get::<tcp::Socket>(handle);
            if socket.send_capacity() - socket.send_queue() < reply_room {
                blocked = true; // back-pressure: wait until the client reads
                break;
            }
            let conn = &mut self.conns[index];
            let filled = conn.input_len;
            let limits = if conn.authenticated || !self.settings.security.requires_auth() {
                self.limits
            } else {
                self.limits.unauthenticated()
            };
            let parsed = resp::parse::<MAX_ARGS>(&mut conn.input[..filled], &limits);
            let mut out = ReplyWriter::new(self.reply);
            let consumed = match parsed {
                Ok(Parsed::Incomplete) => {
                    if filled == conn.input.len() {
                        // A request larger than the input buffer can never complete.
                        let _ = self
                            .sockets
                            .get_mut::<tcp::Socket>(handle)
                            .send_slice(TOO_BIG);
                        info!(
                            "slot {}: request larger than the input buffer, closing",
                            index
                        );
                        self.stats.protocol_error_closes += 1;
                        close = true;
                    }
                    break;
                }
                Ok(Parsed::Empty { consumed }) => consumed,
                Ok(Parsed::Command { command, consumed }) => {
                    let timeouts = self.settings.timeouts;
                    let mut ctx = Context {
                        started: self.started,
                        client_id: conn.id,
                        authenticated: &mut conn.authenticated,
                        store: self.store,
                        stats: &mut self.stats,
                        settings: &mut self.settings,
                        clock: Clock {
                            now,
                            unix_ms: self.unix_offset_ms.map(|o| o.wrapping_add(now)),
                        },
                        max_clients: CONNS - 1,
                    };
                    let after = command::execute(command.as_slice(), &mut ctx, &mut out);
                    executed = true;
                    if self.settings.timeouts != timeouts {
                        self.timeouts_changed = true;
                    }
                    if after == Ok(After::Close) {
                        close = true;
                    }
                    if after.is_err() {
                        // Cannot happen: the reply buffer holds the largest reply.
                        out = ReplyWriter::new(self.reply);
                        let _ = out.error("ERR reply too large");
                    }
                    consumed
                }
                Err(error) => {
                    info!("slot {}: {}, closing", index, error);
                    let _ = out.protocol_error(error);
                    self.stats.protocol_error_closes += 1;
                    close = true;
                    filled
                }
            };
            let written = out.written().len();
            let _ = self
                .sockets
                .get_mut::<tcp::Socket>(handle)
                .send_slice(&self.reply[..written]);
            self.conns[index].consume(consumed);
            if close {
                break;
            }
        }

        let socket = self.sockets.get::<tcp::Socket>(handle);
        // The peer will send no more: once the input is used up (or only half a command that
        // can never complete is left), there is nothing left to do. Commands held up by
        // back-pressure are still answered; TCP's half-close ends only the peer's sending.
        let peer_done = !socket.may_recv() && !socket.can_recv();
        let send_queue = socket.send_queue();
        if close || (peer_done && !blocked) {
            self.begin_close(index, now);
            return;
        }
        let conn = &mut self.conns[index];
        conn.blocked = blocked;
        if executed {
            conn.idle_since = now;
        }
        if conn.input_len > 0 && (executed || !had_input) {
            // A new command started arriving (after the one just run, or from nothing).
            conn.read_since = now;
        }
        if send_queue == 0 {
            conn.write_since = None;
        } else if conn.write_since.is_none() {
            conn.write_since = Some(now);
        }
        conn.last_send_queue = send_queue;
        self.arm_timers(index);
    }

    /// Puts an open connection's timers where its state and the timeouts say (only touching
    /// the timer queues when something changed):
    ///
    /// - part of a command waiting, the client sending it: the read timeout, from the first
    ///   byte of that command (later bytes do not push it out);
    /// - otherwise (no input, or input held up because the client does not read replies):
    ///   the idle timeout, from the accept or the last complete command;
    /// - replies waiting: the write timeout, from when the client last took reply bytes.
    ///
    /// A timeout of 0 is off; with the read timeout off, the idle timeout still applies.
    fn arm_timers(&mut self, index: usize) {
        let timeouts = self.settings.timeouts;
        let conn = &self.conns[index];
        let main = if conn.input_len > 0 && !conn.blocked && timeouts.read_ms > 0 {
            Some((list::READ, conn.read_since.saturating_add(timeouts.read_ms)))
        } else if timeouts.idle_ms > 0 {
            Some((list::IDLE, conn.idle_since.saturating_add(timeouts.idle_ms)))
        } else {
            None
        };
        let current = conn.timer.and_then(|id| {
            Some((
                self.conn_timers.list_of(id)?,
                self.conn_timers.deadline(id)?,
            ))
        });
        if main != current {
            self.set_timer(index, main);
        }

        let conn = &self.conns[index];
        let write = conn
            .write_since
            .filter(|_| timeouts.write_ms > 0)
            .map(|since| since.saturating_add(timeouts.write_ms));
        let current = conn
            .write_timer
            .and_then(|id| self.write_timers.deadline(id));
        if write != current {
            let conn = &mut self.conns[index];
            conn.write_timer = match (conn.write_timer, write) {
                (Some(id), Some(at)) => match self.write_timers.touch(id, at) {
                    Ok(()) => Some(id),
                    Err(_) => self.write_timers.insert(at, index as u16).ok(),
                },
                (None, Some(at)) => self.write_timers.insert(at, index as u16).ok(),
                (Some(id), None) => {
                    let _ = self.write_timers.cancel(id);
                    None
                }
                (None, None) => None,
            };
        }
    }

    /// Puts the connection's main timer on `list` at `deadline` (`None`: no timer).
    fn set_timer(&mut self, index: usize, timer: Option<(usize, Tick)>) {
        let conn = &mut self.conns[index];
        match (conn.timer, timer) {
            (Some(id), Some((list, at))) => {
                if self.conn_timers.move_to(id, list, at).is_err() {
                    conn.timer = self.conn_timers.insert_into(list, at, index as u16).ok();
                }
            }
            (None, Some((list, at))) => {
                conn.timer = self.conn_timers.insert_into(list, at, index as u16).ok();
            }
            (Some(id), None) => {
                let _ = self.conn_timers.cancel(id);
                conn.timer = None;
            }
            (None, None) => {}
        }
    }

    /// Sends FIN after any queued replies; aborts later if the peer does not finish.
    fn begin_close(&mut self, index: usize, now: Tick) {
        let handle = self.conns[index].socket;
        self.sockets.get_mut::<tcp::Socket>(handle).close();
        // As in Redis, a client we are closing is no longer connected.
        if core::mem::take(&mut self.conns[index].counted) {
            self.stats.connected_clients -= 1;
        }
        self.conns[index].phase = Phase::Closing;
        if let Some(id) = self.conns[index].write_timer.take() {
            let _ = self.write_timers.cancel(id);
        }
        let deadline = now.saturating_add(self.settings.timeouts.close_ms.max(1));
        self.set_timer(index, Some((list::CLOSING, deadline)));
    }

    /// Aborts the connection (the peer gets an RST) and frees the slot; it listens again once
    /// the RST is out ([`listen_again`](Self::listen_again), later in the same poll).
    fn recycle(&mut self, index: usize) {
        let handle = self.conns[index].socket;
        self.sockets.get_mut::<tcp::Socket>(handle).abort();
        let conn = &mut self.conns[index];
        if let Some(id) = conn.timer.take() {
            let _ = self.conn_timers.cancel(id);
        }
        if let Some(id) = conn.write_timer.take() {
            let _ = self.write_timers.cancel(id);
        }
        if conn.counted {
            self.stats.connected_clients -= 1;
        }
        conn.counted = false;
        conn.phase = Phase::Listening;
        conn.reset(0);
    }

    fn expire_connections(&mut self, now: Tick) {
        // One list at a time: the list a timer was on says which timeout it was.
        for list in [list::IDLE, list::READ, list::CLOSING, list::HANDSHAKE] {
            while let Some(expired) = self.conn_timers.pop_expired_in(list, now) {
                let index = usize::from(expired.value);
                let Some(conn) = self.conns.get_mut(index) else {
                    continue;
                };
                if conn.timer != Some(expired.id) {
                    continue;
                }
                conn.timer = None;
                match (list, conn.phase) {
                    (list::CLOSING, Phase::Closing) => {
                        debug!("slot {}: the peer did not finish closing, aborting", index);
                        self.stats.aborted_closes += 1;
                        self.recycle(index);
                    }
                    (list::READ, Phase::Open) => {
                        debug!("slot {}: read timeout, closing", index);
                        self.stats.read_timeout_closes += 1;
                        self.begin_close(index, now);
                    }
                    (list::IDLE, Phase::Open) => {
                        debug!("slot {}: idle timeout, closing", index);
                        self.stats.idle_timeout_closes += 1;
                        self.begin_close(index, now);
                    }
                    (list::HANDSHAKE, Phase::Listening)
                        if self.sockets.get::<tcp::Socket>(conn.socket).state()
                            == tcp::State::SynReceived =>
                    {
                        debug!("slot {}: handshake timeout, listening again", index);
                        self.stats.handshake_timeouts += 1;
                        self.relisten(index);
                    }
                    _ => {}
                }
            }
        }
        while let Some(expired) = self.write_timers.pop_expired(now) {
            let index = usize::from(expired.value);
            let Some(conn) = self.conns.get_mut(index) else {
                continue;
            };
            if conn.write_timer != Some(expired.id) {
                continue;
            }
            conn.write_timer = None;
            if conn.phase == Phase::Open {
                debug!("slot {}: write timeout, closing", index);
                self.stats.write_timeout_closes += 1;
                self.begin_close(index, now);
            }
        }
    }
}

fn apply_address(iface: &mut Interface, address: Option<(Ipv4Cidr, Option<Ipv4Address>)>) {
    iface.update_ip_addrs(|addrs| {
        addrs.clear();
        if let Some((cidr, _)) = address {
            let _ = addrs.push(IpCidr::Ipv4(cidr));
        }
    });
    iface.routes_mut().remove_default_ipv4_route();
    if let Some((_, Some(gateway))) = address {
        let _ = iface.routes_mut().add_default_ipv4_route(gateway);
    }
}
