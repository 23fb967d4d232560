//! The network application: the key-value shell, [`net_shell::Server`], with static capacities.
//!
//! **This is the only file that knows net-shell.** The rest of the firmware uses exactly this
//! surface:
//!
//! ```text
//! Storage::new() -> Storage                                   (const fn, placed in a static)
//! App::new(config: Config, storage: &'static mut Storage, device: &mut D, now_ms: u64) -> App
//! App::poll(&mut self, now_ms: u64, device: &mut D) -> Option<u64>    (next deadline, ms)
//! App::listen_endpoint(&self) -> Option<IpEndpoint>           (Some once the listener listens)
//! App::take_activity(&mut self) -> bool                       (drives the status LED)
//! App::take_synced_unix_time(&mut self, now_ms: u64) -> Option<u64>  (`sntp`: after a sync)
//! ```
//!
//! where `D: smoltcp::phy::Device`. The boards describe the network with [`Config`], and their
//! client count, store size and send buffer with a [`Capacity`] (`board::CAPACITY`); the
//! other capacities below are the same on every board.
//!
//! # Capacities
//!
//! | what                        | value                                            |
//! | --------------------------- | ------------------------------------------------ |
//! | client sockets              | [`CONNS`] (one more client is told `-ERR max number of clients reached`) |
//! | keys                        | [`KEYS`], each up to [`MAX_KEY_LEN`] bytes        |
//! | values                      | up to [`MAX_VALUE_LEN`] bytes each                |
//! | key and value bytes         | [`STORE_BYTES`] in all (8 bytes of header per key) |
//! | per connection              | [`BUFFERS`]: TCP receive window, send buffer, request buffer |
//! | idle timeout                | [`IDLE_TIMEOUT_MS`], chosen at build time         |
//! | hashes with field deadlines | [`FIELD_TIMERS`] at once (`hashes`)               |
//!
//! Everything lives in one `static` [`Storage`], all zeros in `.bss`: nothing is allocated and
//! nothing costs flash for an initialiser.

use core::mem::MaybeUninit;

#[cfg(feature = "hashes")]
use net_shell::command::FieldTimerArrays;
use net_shell::smoltcp;
pub use net_shell::store::HashKey;
use net_shell::store::{Store, StoreArrays, StoreMemory};
use net_shell::timer_core::TimeoutSlot;
pub use net_shell::IpSetup;
#[cfg(feature = "sntp")]
use net_shell::SntpMemory;
use net_shell::{
    BufferSizes, ClientSlot, Security, Server, ServerConfig, ServerMemory, Timeouts,
    MAX_PASSWORD_LEN,
};
use smoltcp::iface::SocketStorage;
use smoltcp::phy::Device;
#[cfg(feature = "sntp")]
use smoltcp::wire::Ipv4Address;
use smoltcp::wire::{IpEndpoint, Ipv4Cidr};

/// What differs between boards: how many clients and how many key and value bytes their RAM
/// affords. Each board states its own (`board::CAPACITY`).
#[derive(Clone, Copy, Debug)]
pub struct Capacity {
    /// Clients served at once.
    pub clients: usize,
    /// The byte pool every key and value shares (each key also takes an 8-byte header there).
    pub store_bytes: usize,
    /// Each client's TCP send buffer: at least one largest reply (2,304 bytes). Room for more
    /// lets pipelined replies go out without waiting for the client's ACK (see README.md).
    pub send_buffer: usize,
}

/// TCP sockets on the port: `CONNS - 1` clients are served at once, and the last socket
/// answers one more client `-ERR max number of clients reached` and closes.
pub const CONNS: usize = crate::board::CAPACITY.clients + 1;
/// Most keys at once.
pub const KEYS: usize = 128;
/// Longest key, in bytes.
pub const MAX_KEY_LEN: usize = 64;
/// Largest value, in bytes.
pub const MAX_VALUE_LEN: usize = 2048;
/// The byte pool every key and value shares (each key also takes an 8-byte header there).
pub const STORE_BYTES: usize = crate::board::CAPACITY.store_bytes;
/// Per-connection buffers. `input` holds the longest `SET` (a [`MAX_KEY_LEN`] key, a
/// [`MAX_VALUE_LEN`] value and every option, 2,195 bytes); `tx` is the board's
/// [`Capacity::send_buffer`], at least one largest reply (the input's size plus 64 bytes).
pub const BUFFERS: BufferSizes = BufferSizes {
    rx: 1024,
    tx: crate::board::CAPACITY.send_buffer,
    input: 2240,
};
/// Keys removed per poll at most, so a mass expiry never holds up serving.
pub const EXPIRE_BUDGET: usize = 32;
/// Hashes with field deadlines at once (`hashes`): each has one field timer, with room for a
/// [`MAX_KEY_LEN`] key. A command that would give one more hash a field deadline is refused
/// (`-ERR no field timer free: …`) before it changes anything.
#[cfg(feature = "hashes")]
pub const FIELD_TIMERS: usize = 16;

/// Close a client after this long without a complete command (Redis' `timeout`), in
/// milliseconds: `NET_SHELL_IDLE_TIMEOUT_MS` at build time, 300,000 (5 minutes) without it. The
/// QEMU end-to-end test builds with a short one. `CONFIG SET timeout` changes it at run time.
pub const IDLE_TIMEOUT_MS: u64 = match option_env!("NET_SHELL_IDLE_TIMEOUT_MS") {
    Some(text) => parse_ms(text),
    None => 300_000,
};
/// The password every client must give (`AUTH`): `NET_SHELL_REQUIREPASS` at build time, none
/// without it. With none, protected mode serves only the trusted network
/// ([`Config::trusted_network`], or `NET_SHELL_TRUSTED_NETWORK` at build time, e.g.
/// `192.168.1.0/24`). The password is in the firmware image: whoever can read the flash can
/// read it. `CONFIG SET requirepass` changes it until the next reboot.
pub const REQUIREPASS: Option<&str> = option_env!("NET_SHELL_REQUIREPASS");
const TRUSTED_NETWORK: Option<&str> = option_env!("NET_SHELL_TRUSTED_NETWORK");
/// The NTP server to set the wall clock from (the `sntp` feature): `NET_SHELL_NTP_SERVER` at
/// build time (an IPv4 address), or else the DHCP lease's NTP server, if it names one.
#[cfg(feature = "sntp")]
const NTP_SERVER: Option<&str> = option_env!("NET_SHELL_NTP_SERVER");

/// Close a client whose command has been arriving for this long.
const READ_TIMEOUT_MS: u64 = 10_000;
/// Close a client that has not taken any reply bytes for this long.
const WRITE_TIMEOUT_MS: u64 = 10_000;

const BUFFER_BYTES: usize = BUFFERS.bytes_needed(CONNS);
/// smoltcp's socket slots: the client sockets, DHCP's and, with `sntp`, SNTP's.
const SOCKETS: usize = CONNS + 1 + cfg!(feature = "sntp") as usize;

// What `Server::new` would refuse at boot, refused at build time where it can be.
const _: () = assert!(
    BUFFERS.tx >= BUFFERS.reply(),
    "a send buffer must hold one INFO reply"
);
const _: () = assert!(
    BUFFERS.input > MAX_KEY_LEN + MAX_VALUE_LEN,
    "input must hold a SET"
);

/// Parses a decimal number of milliseconds at compile time.
const fn parse_ms(text: &str) -> u64 {
    let digits = text.as_bytes();
    assert!(
        !digits.is_empty(),
        "NET_SHELL_IDLE_TIMEOUT_MS must be a number of milliseconds"
    );
    let mut value: u64 = 0;
    let mut i = 0;
    while i < digits.len() {
        let digit = digits[i];
        assert!(
            digit.is_ascii_digit(),
            "NET_SHELL_IDLE_TIMEOUT_MS must be a number of milliseconds"
        );
        value = match value.checked_mul(10) {
            Some(v) => match v.checked_add((digit - b'0') as u64) {
                Some(v) => v,
                None => panic!("NET_SHELL_IDLE_TIMEOUT_MS is too large"),
            },
            None => panic!("NET_SHELL_IDLE_TIMEOUT_MS is too large"),
        };
        i += 1;
    }
    value
}

/// What the board tells the application.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// The NIC's station address.
    pub mac: [u8; 6],
    /// How to get an IPv4 address: static, or DHCP with a fallback (net-shell's own type).
    pub ip: IpSetup,
    /// The TCP port to listen on.
    pub port: u16,
    /// Seed for TCP initial sequence numbers and DHCP transaction ids.
    pub random_seed: u64,
    /// The key of the store's keyed hash: random per boot (the chip's RNG) or per build.
    pub hash_key: HashKey,
    /// The network protected mode trusts when no password is set (Redis trusts loopback).
    /// `NET_SHELL_TRUSTED_NETWORK` at build time replaces the board's choice.
    pub trusted_network: Option<Ipv4Cidr>,
}

type Shell = Server<'static>;

/// Everything the shell needs, in a static: the store's arrays, smoltcp's socket slots
/// (`CONNS` TCP sockets, one DHCP socket and, with `sntp`, one UDP socket), the connection
/// table, the connection timers' slots, the per-connection buffers, the hash field timers
/// (`hashes`), the SNTP client's buffers (`sntp`), and the server itself.
///
/// All zeros or uninitialised until [`App::new`], so the static lands in `.bss` (no flash
/// image, no copy on the stack).
pub struct Storage {
    store: StoreArrays<KEYS, STORE_BYTES>,
    sockets: MaybeUninit<[SocketStorage<'static>; SOCKETS]>,
    clients: MaybeUninit<[ClientSlot<'static>; CONNS]>,
    timers: [TimeoutSlot<u16>; CONNS],
    write_timers: [TimeoutSlot<u16>; CONNS],
    buffer: [u8; BUFFER_BYTES],
    #[cfg(feature = "hashes")]
    field_timers: FieldTimerArrays<FIELD_TIMERS, MAX_KEY_LEN>,
    /// Written at boot: its packet metadata are not zero bytes, and a `const` initialiser
    /// would move the whole static to `.data`.
    #[cfg(feature = "sntp")]
    sntp: MaybeUninit<SntpMemory>,
    server: MaybeUninit<Shell>,
}

impl Storage {
    /// Empty storage.
    pub const fn new() -> Self {
        Self {
            store: StoreArrays::new(),
            sockets: MaybeUninit::uninit(),
            clients: MaybeUninit::uninit(),
            timers: [const { TimeoutSlot::new() }; CONNS],
            write_timers: [const { TimeoutSlot::new() }; CONNS],
            buffer: [0; BUFFER_BYTES],
            #[cfg(feature = "hashes")]
            field_timers: FieldTimerArrays::new(),
            #[cfg(feature = "sntp")]
            sntp: MaybeUninit::uninit(),
            server: MaybeUninit::uninit(),
        }
    }
}

/// Counters whose change means "something happened": the LED flashes.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Activity {
    connections: u64,
    commands: u64,
    expired_keys: u64,
}

impl Activity {
    fn of(server: &Shell) -> Self {
        let stats = server.stats();
        Self {
            connections: stats.total_connections_received,
            commands: stats.total_commands_processed,
            expired_keys: server.store().expired_keys(),
        }
    }
}

/// The key-value shell.
pub struct App {
    server: &'static mut Shell,
    seen: Activity,
    activity: bool,
}

impl App {
    /// Builds the store and the server over `device`: static addressing, or DHCP with its
    /// fallback; every client socket listens from the first poll with an address.
    ///
    /// # Panics
    ///
    /// If net-shell refuses the capacities above (a build-time mistake, caught by the first
    /// boot in QEMU).
    // Not inlined, so its frame (the server value before it moves into the static) is given
    // back to `main` after boot.
    #[inline(never)]
    pub fn new<D: Device>(
        config: Config,
        storage: &'static mut Storage,
        device: &mut D,
        now_ms: u64,
    ) -> Self {
        let Storage {
            store,
            sockets,
            clients,
            timers,
            write_timers,
            buffer,
            #[cfg(feature = "hashes")]
            field_timers,
            #[cfg(feature = "sntp")]
            sntp,
            server,
        } = storage;
        let store = Store::with_hash_key(
            StoreMemory::from(store),
            MAX_KEY_LEN,
            MAX_VALUE_LEN,
            config.hash_key,
        );
        let sockets = sockets.write([SocketStorage::EMPTY; SOCKETS]);
        let clients = clients.write(core::array::from_fn(|_| ClientSlot::default()));
        let memory = ServerMemory::lent(sockets, clients, timers, write_timers, buffer);
        #[cfg(feature = "hashes")]
        let memory = memory.with_field_timers(field_timers);
        #[cfg(feature = "sntp")]
        let memory = memory.with_sntp(sntp.write(SntpMemory::new()));

        let mut server_config = ServerConfig::new(config.mac, config.ip);
        server_config.port = config.port;
        server_config.timeouts = Timeouts::new(IDLE_TIMEOUT_MS, READ_TIMEOUT_MS, WRITE_TIMEOUT_MS);
        let trusted = match TRUSTED_NETWORK.map(str::parse::<Ipv4Cidr>) {
            Some(Ok(network)) => Some(network),
            Some(Err(_)) => defmt::panic!("NET_SHELL_TRUSTED_NETWORK is not an IPv4 network"),
            None => config.trusted_network,
        };
        let mut security = Security::DEFAULT.trusting(trusted);
        if let Some(password) = REQUIREPASS {
            if security.set_password(password.as_bytes()).is_err() {
                defmt::panic!(
                    "NET_SHELL_REQUIREPASS is longer than {=usize} bytes",
                    MAX_PASSWORD_LEN
                );
            }
        }
        server_config.security = security;
        server_config.buffers = BUFFERS;
        server_config.expire_budget = EXPIRE_BUDGET;
        server_config.random_seed = config.random_seed;
        #[cfg(feature = "cluster")]
        {
            server_config.cluster_enabled = true;
        }
        #[cfg(feature = "sntp")]
        {
            server_config.ntp_server = match NTP_SERVER.map(str::parse::<Ipv4Address>) {
                Some(Ok(server)) => Some(server),
                Some(Err(_)) => defmt::panic!("NET_SHELL_NTP_SERVER is not an IPv4 address"),
                None => None,
            };
        }

        let shell = match Server::new(server_config, store, memory, device, now_ms) {
            Ok(shell) => server.write(shell),
            Err(error) => defmt::panic!("net-shell setup: {}", error),
        };
        defmt::info!(
            "net-shell: {=usize} clients, {=usize} keys, {=usize} B store, idle timeout {=u64} ms",
            CONNS - 1,
            KEYS,
            STORE_BYTES,
            IDLE_TIMEOUT_MS
        );
        let seen = Activity::of(shell);
        Self {
            server: shell,
            seen,
            activity: false,
        }
    }

    /// Runs the shell: network I/O, commands, key expiry, connection timeouts. Returns when it
    /// next needs to run (milliseconds, the clock of `now_ms`), `None` for "only on traffic".
    pub fn poll<D: Device>(&mut self, now_ms: u64, device: &mut D) -> Option<u64> {
        let next = self.server.poll(now_ms, device);
        let now = Activity::of(self.server);
        if now != self.seen {
            self.seen = now;
            self.activity = true;
        }
        next
    }

    /// Tells the shell the wall-clock time, so `EXPIREAT`, `PXAT` and `EXPIRETIME` work:
    /// `unix_ms` is the Unix time in milliseconds at `now_ms`.
    pub fn set_unix_time(&mut self, now_ms: u64, unix_ms: u64) {
        self.server.set_unix_time(now_ms, unix_ms);
    }

    /// The Unix time in milliseconds at `now_ms` once after each SNTP sync (`None` otherwise),
    /// for the board to keep in its real-time clock.
    #[cfg(feature = "sntp")]
    pub fn take_synced_unix_time(&mut self, now_ms: u64) -> Option<u64> {
        let sync = self.server.take_clock_sync()?;
        defmt::info!("wall clock set by SNTP: {}", sync);
        self.server.unix_time_ms(now_ms)
    }

    /// Where clients can connect: `Some` once the interface has an address and the client
    /// sockets listen. The firmware prints its "ready" line on each new `Some`.
    pub fn listen_endpoint(&self) -> Option<IpEndpoint> {
        if !self.server.is_listening() {
            return None;
        }
        let address = self.server.ipv4_address()?.address();
        Some(IpEndpoint::new(address.into(), self.server.port()))
    }

    /// Whether a client connected, a command ran or keys expired since the last call.
    pub fn take_activity(&mut self) -> bool {
        core::mem::take(&mut self.activity)
    }
}
