//! `net-shell` on a Linux tap device: the same sans-IO server the firmware runs, driven by
//! the host's clocks.

use std::io::{ErrorKind, Read as _, Write as _};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Parser;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use net_shell::command::parse_memory;
use net_shell::smoltcp::phy::{Medium, TunTapInterface};
use net_shell::smoltcp::wire::{EthernetAddress, Ipv4Address, Ipv4Cidr};
use net_shell::store::{HashKey, Store, StoreMemory};
use net_shell::{
    BufferSizes, IpSetup, Security, Server, ServerBuffers, ServerConfig, ServerMemory, Timeouts,
    MAX_PASSWORD_LEN,
};

/// The largest key.
const MAX_KEY: usize = 1024;
/// Buffers per connection: the TCP window, the send buffer, and the input buffer a partial
/// request gathers in (it grows while a longer request needs it, up to
/// `--client-query-buffer-limit`).
const BUFFERS: BufferSizes = BufferSizes {
    rx: 32 << 10,
    tx: 64 << 10,
    input: 16 << 10,
};
/// How long shutdown waits for clients to finish closing.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// A Redis-protocol key-value server with exact key TTLs and connection timeouts, on a tap.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// The tap device to open (create it first, e.g. with scripts/netns.sh).
    #[arg(long, default_value = "tap0")]
    tap: String,
    /// The shell's IPv4 address and prefix.
    #[arg(long, default_value = "10.77.0.2/24", value_parser = parse_cidr)]
    address: Ipv4Cidr,
    /// Default gateway.
    #[arg(long)]
    gateway: Option<Ipv4Address>,
    /// TCP port.
    #[arg(long, default_value_t = 6379)]
    port: u16,
    /// MAC address of the shell's side of the tap.
    #[arg(long, default_value = "02:00:00:77:00:02", value_parser = parse_mac)]
    mac: EthernetAddress,
    /// Close a client after this many ms without a complete command (0: never).
    #[arg(long, default_value_t = Timeouts::DEFAULT.idle_ms)]
    idle_timeout_ms: u64,
    /// Close a client whose command takes longer than this many ms to arrive (0: never).
    #[arg(long, default_value_t = Timeouts::DEFAULT.read_ms)]
    read_timeout_ms: u64,
    /// Close a client that accepts no reply bytes for this many ms (0: never).
    #[arg(long, default_value_t = Timeouts::DEFAULT.write_ms)]
    write_timeout_ms: u64,
    /// Abort a TCP handshake not completed within this many ms (a SYN from an address that
    /// never answers), so its socket listens again.
    #[arg(long, default_value_t = Timeouts::DEFAULT.handshake_ms, value_parser = clap::value_parser!(u64).range(1..))]
    handshake_timeout_ms: u64,
    /// Require this password (AUTH) from every client. Prefer the environment variable: a
    /// command line is visible to every user of the machine.
    #[arg(long, env = "NET_SHELL_REQUIREPASS", hide_env_values = true, value_parser = parse_password)]
    requirepass: Option<String>,
    /// With no password set, serve only clients from --trusted-network (Redis' protected mode,
    /// which trusts the loopback interface; a tap has none): yes or no.
    #[arg(long, default_value = "yes", value_parser = parse_yes_no, action = clap::ArgAction::Set)]
    protected_mode: bool,
    /// The network protected mode trusts, e.g. 10.77.0.1/32 (the host's side of the tap).
    /// Without it, and without a password, protected mode refuses every client.
    #[arg(long, value_parser = parse_cidr)]
    trusted_network: Option<Ipv4Cidr>,
    /// Clients served at once; one more socket listens to refuse the next with Redis'
    /// `-ERR max number of clients reached`. `CONFIG SET maxclients` can lower it, or raise it
    /// back up to this.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=ServerMemory::MAX_CLIENTS as u64 - 1))]
    maxclients: u64,
    /// Memory for keys, values and the key table, in Redis' units (bytes, or 100mb, 1gb; 1k =
    /// 1000, 1kb = 1024), at most 4gb. Taken only as keys arrive. Past it, writes get Redis'
    /// -OOM error. `CONFIG SET maxmemory` can lower it, or raise it back up to this.
    #[arg(long, default_value = "1gb", value_parser = parse_maxmemory)]
    maxmemory: usize,
    /// The longest bulk argument, so the largest value, in Redis' units (Redis'
    /// proto-max-bulk-len). `CONFIG SET proto-max-bulk-len` changes it.
    #[arg(long, default_value = "512mb", value_parser = parse_bytes_limit)]
    proto_max_bulk_len: usize,
    /// The most bytes a client's pending input may take before it is disconnected, as by
    /// Redis (client-query-buffer-limit). `CONFIG SET client-query-buffer-limit` changes it.
    #[arg(long, default_value = "1gb", value_parser = parse_bytes_limit)]
    client_query_buffer_limit: usize,
    /// Cluster mode, yes or no (Redis' cluster-enabled): a controller pushes the topology with
    /// Kvrocks' CLUSTERX SETNODEID and SETNODES, and keys of other nodes' slots get -MOVED.
    #[arg(long, default_value = "no", value_parser = parse_yes_no, action = clap::ArgAction::Set)]
    cluster_enabled: bool,
    /// An optional cap on the keys held at once (past it, new keys get -OOM). Without it only
    /// --maxmemory bounds them: the key table grows and shrinks with its keys, and its memory
    /// counts against --maxmemory.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=StoreMemory::MAX_KEYS as u64))]
    maxkeys: Option<u64>,
    /// Most keys expired per poll, so a mass expiry never stalls serving.
    #[arg(long, default_value_t = 1000)]
    expire_budget: usize,
    /// Log level: error, warn, info, debug, trace.
    #[arg(long, default_value = "info")]
    log_level: log::LevelFilter,
}

fn parse_maxmemory(text: &str) -> Result<usize, String> {
    let bytes = parse_memory(text.as_bytes())
        .ok_or("expected a memory size: bytes, or with a unit as in 100mb, 1gb, 512kb")?;
    match usize::try_from(bytes) {
        Ok(bytes) if (1..=MAX_MEMORY).contains(&bytes) => Ok(bytes),
        _ => Err(format!(
            "must be between 1 byte and {MAX_MEMORY} bytes (4gb)"
        )),
    }
}

fn parse_bytes_limit(text: &str) -> Result<usize, String> {
    let bytes = parse_memory(text.as_bytes())
        .ok_or("expected a size: bytes, or with a unit as in 512mb, 1gb")?;
    if bytes < 1 << 20 {
        return Err("must be at least 1mb (as in Redis)".into());
    }
    Ok(usize::try_from(bytes).unwrap_or(usize::MAX))
}

/// The most `--maxmemory` accepted: the store addresses its bytes with 32 bits.
const MAX_MEMORY: usize = 4 << 30;

fn parse_yes_no(text: &str) -> Result<bool, String> {
    match text {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("expected yes or no".into()),
    }
}

fn parse_password(text: &str) -> Result<String, String> {
    if text.len() > MAX_PASSWORD_LEN {
        return Err(format!("a password is at most {MAX_PASSWORD_LEN} bytes"));
    }
    Ok(text.to_owned())
}

/// `ADDRESS/PREFIX`, read by smoltcp's parser.
fn parse_cidr(text: &str) -> Result<Ipv4Cidr, String> {
    text.parse().map_err(|()| {
        format!("expected ADDRESS/PREFIX (prefix 0..=32), like 10.77.0.2/24, not {text:?}")
    })
}

/// Six hexadecimal bytes joined by `:` (or `-`), read by smoltcp's parser.
fn parse_mac(text: &str) -> Result<EthernetAddress, String> {
    text.parse().map_err(|()| {
        format!("expected six hexadecimal bytes, like 02:00:00:00:00:01, not {text:?}")
    })
}

fn main() -> ExitCode {
    let args = Args::parse();
    env_logger::Builder::new()
        .filter_level(args.log_level)
        .parse_default_env()
        .init();
    let runner = std::thread::Builder::new()
        .name("net-shell".into())
        .spawn(move || run(args));
    match runner.map(|handle| handle.join()) {
        Ok(Ok(Ok(()))) => ExitCode::SUCCESS,
        Ok(Ok(Err(message))) => {
            log::error!("{message}");
            eprintln!("net-shell: {message}");
            ExitCode::FAILURE
        }
        _ => ExitCode::FAILURE,
    }
}

/// What the shell sleeps on: a frame on the tap, SIGINT or SIGTERM, or a deadline, whichever
/// comes first. Signals reach the wait through a self-pipe, so one that lands while the server
/// is busy ends the next wait at once instead of being noticed only after it.
struct Wakeups {
    poll: Poll,
    events: Events,
    /// The read end of the self-pipe the signal handlers write a byte to.
    signals: UnixStream,
}

impl Wakeups {
    const TAP: Token = Token(0);
    const SIGNAL: Token = Token(1);

    /// Installs the SIGINT and SIGTERM handlers and watches `tap` and their pipe.
    fn new(tap: RawFd) -> std::io::Result<Self> {
        let (signals, pipe) = UnixStream::pair()?;
        signals.set_nonblocking(true)?;
        pipe.set_nonblocking(true)?;
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::low_level::pipe::register(signal, pipe.try_clone()?)?;
        }
        let poll = Poll::new()?;
        // mio registers edge-triggered. That loses no frame: every `Server::poll` reads the tap
        // until it is empty (smoltcp's `Interface::poll` loops while the device has a frame), and
        // a frame that arrives after that raises a new edge.
        poll.registry()
            .register(&mut SourceFd(&tap), Self::TAP, Interest::READABLE)?;
        poll.registry().register(
            &mut SourceFd(&signals.as_raw_fd()),
            Self::SIGNAL,
            Interest::READABLE,
        )?;
        Ok(Self {
            poll,
            events: Events::with_capacity(4),
            signals,
        })
    }

    /// Sleeps until the tap has a frame, a signal came, or `timeout` passed (`None`: no
    /// deadline; zero: only collects what is already pending). Returns whether SIGINT or SIGTERM
    /// arrived.
    fn wait(&mut self, timeout: Option<Duration>) -> std::io::Result<bool> {
        match self.poll.poll(&mut self.events, timeout) {
            // A handler ran on this thread; its byte is in the pipe for the next wait.
            Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(false),
            result => result?,
        }
        if !self.events.iter().any(|e| e.token() == Self::SIGNAL) {
            return Ok(false);
        }
        // Edge-triggered: empty the pipe so the next signal raises a new edge.
        let mut bytes = [0u8; 16];
        loop {
            match self.signals.read(&mut bytes) {
                Ok(0) => return Ok(true),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let mut device = TunTapInterface::new(&args.tap, Medium::Ethernet).map_err(|e| {
        format!(
            "cannot open tap {:?}: {e} (create it first: `sudo scripts/netns.sh up`, then run inside the namespace)",
            args.tap
        )
    })?;

    // The store's hash key and smoltcp's seed (TCP initial sequence numbers, DHCP transaction
    // ids) from the host's randomness, new in each process.
    let mut random = [0u8; 24];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut source| source.read_exact(&mut random))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    let (hash_key, seed) = random.split_at(16);
    let hash_key = HashKey(hash_key.try_into().unwrap_or_default());
    let seed = u64::from_le_bytes(seed.try_into().unwrap_or_default());
    let store = Store::with_hash_key(
        StoreMemory::allocate(
            args.maxkeys
                .map_or(StoreMemory::MAX_KEYS, |keys| keys as usize),
            StoreMemory::bytes_for(args.maxmemory),
        ),
        MAX_KEY,
        args.proto_max_bulk_len,
        hash_key,
    );
    // One slot more than `maxclients`: it refuses the next client politely. The buffers live
    // as long as the process serves.
    let mut buffers = ServerBuffers::default();
    let memory = ServerMemory::allocate(args.maxclients as usize + 1, BUFFERS, &mut buffers);

    let mut config = ServerConfig::new(
        args.mac.0,
        IpSetup::Static {
            address: args.address,
            gateway: args.gateway,
        },
    );
    config.port = args.port;
    config.timeouts = Timeouts::new(
        args.idle_timeout_ms,
        args.read_timeout_ms,
        args.write_timeout_ms,
    );
    config.timeouts.handshake_ms = args.handshake_timeout_ms;
    let mut security = Security::DEFAULT.trusting(args.trusted_network);
    security.protected_mode = args.protected_mode;
    if let Some(password) = &args.requirepass {
        security
            .set_password(password.as_bytes())
            .map_err(|e| format!("--requirepass: {e}"))?;
    }
    if !security.requires_auth() && security.protected_mode && security.trusted_network.is_none() {
        log::warn!(
            "protected mode is on with no password and no --trusted-network: every client will be refused (set --requirepass or --trusted-network)"
        );
    }
    config.security = security;
    config.capacity.max_clients = args.maxclients as usize;
    config.capacity.max_memory = args.maxmemory;
    config.capacity.max_bulk_len = args.proto_max_bulk_len;
    config.capacity.query_buffer_limit = args.client_query_buffer_limit;
    config.buffers = BUFFERS;
    config.expire_budget = args.expire_budget;
    config.cluster_enabled = args.cluster_enabled;
    config.random_seed = seed;

    let start = Instant::now();
    let now = || start.elapsed().as_millis() as u64;
    let mut server = Server::new(config, store, memory, &mut device, now())
        .map_err(|e| format!("cannot start: {e}"))?;

    let mut wakeups = Wakeups::new(device.as_raw_fd())
        .map_err(|e| format!("cannot install signal handlers: {e}"))?;
    let mut stop = false;
    let mut ready = false;
    let mut shutdown_deadline: Option<u64> = None;
    loop {
        let elapsed = start.elapsed();
        let t = elapsed.as_millis() as u64;
        // The Unix time, as an offset from the tick taken afresh each poll (so clock steps
        // and drift are followed) and never behind the wall clock's millisecond: see
        // `unix_offset_ms`.
        if let Ok(unix) = SystemTime::now().duration_since(UNIX_EPOCH) {
            server.set_unix_time(t, unix_offset_ms(elapsed, unix).wrapping_add(t));
        }
        if stop && shutdown_deadline.is_none() {
            log::info!(
                "signal received: closing {} connection(s)",
                server.open_connections()
            );
            server.shutdown(t);
            shutdown_deadline = Some(t + SHUTDOWN_GRACE.as_millis() as u64);
        }
        let next = server.poll(t, &mut device);
        if !ready && server.is_listening() {
            ready = true;
            if let Some(ip) = server.ipv4_address() {
                let capacity = server.capacity();
                println!(
                    "net-shell ready on {}:{} (maxclients {}, maxmemory {}, maxkeys {})",
                    ip.address(),
                    server.port(),
                    capacity.max_clients,
                    capacity.max_memory,
                    args.maxkeys
                        .map_or_else(|| "none".to_owned(), |keys| keys.to_string())
                );
                let _ = std::io::stdout().flush();
            }
            log::info!("timeouts {:?}; {:?}", server.timeouts(), server.security());
        }
        if let Some(deadline) = shutdown_deadline {
            if server.open_connections() == 0 || t >= deadline {
                break;
            }
        }
        let wake_at = next.into_iter().chain(shutdown_deadline).min();
        let timeout = wake_at.map(|at| Duration::from_millis(at.saturating_sub(now())));
        if wakeups
            .wait(timeout)
            .map_err(|e| format!("cannot wait for the tap: {e}"))?
        {
            stop = true;
        }
    }
    let stats = server.stats();
    log::info!(
        "stopped: {} connections served, {} commands, {} keys expired",
        stats.total_connections_received,
        stats.total_commands_processed,
        server.store().expired_keys()
    );
    Ok(())
}

/// The Unix time in ms at tick 0, for a server whose tick is `elapsed` in whole ms: one more
/// than the exact offset, rounded down, so that `offset + tick` is never behind the wall
/// clock's whole millisecond, whatever the fractions of the two clocks.
///
/// Redis compares a client's absolute time with `mstime()`: after `PXAT t` a client computed
/// from its clock, `PTTL` never exceeds `t - its clock`. An offset of the two clocks' whole
/// milliseconds (`unix_ms - tick`) lags the wall clock by up to 2 ms with the wrong
/// fractions, and made `PTTL` answer 10001 after `PXAT now+10000` in most tries; this one is
/// ahead by at most a millisecond and some.
fn unix_offset_ms(elapsed: Duration, unix: Duration) -> u64 {
    let exact_ns = unix.as_nanos().saturating_sub(elapsed.as_nanos());
    (exact_ns / 1_000_000) as u64 + 1
}

#[cfg(test)]
mod tests {
    /// Whatever the fractions of the monotonic clock and the wall clock, `offset + tick`
    /// (what the server takes as Unix time) is at or after the wall clock's whole millisecond,
    /// and at most 2 ms after it; the old offset (`unix_ms - tick`) fell behind.
    #[test]
    fn unix_estimate_never_behind_the_wall_clock() {
        use std::time::Duration;
        let mut lagged = 0;
        for i in 0..10_000u64 {
            // Fractions spread over the millisecond, for both clocks, at start and later.
            let start_mono = Duration::from_nanos(5_000_000_000 + i * 7_919 % 1_000_000);
            let start_unix =
                Duration::from_nanos(1_700_000_000_000_000_000 + i * 104_729 % 1_000_000);
            let offset = super::unix_offset_ms(start_mono, start_unix);
            let old_offset = (start_unix.as_millis() - start_mono.as_millis()) as u64;
            for later_ns in [0, 400_000, 999_999, 1_000_001, 123_456_789] {
                let later = Duration::from_nanos(later_ns);
                let tick = (start_mono + later).as_millis() as u64;
                let wall_ms = (start_unix + later).as_millis() as u64;
                assert!(offset + tick >= wall_ms, "behind at {i}/{later_ns}");
                assert!(offset + tick <= wall_ms + 2, "ahead at {i}/{later_ns}");
                lagged += usize::from(old_offset + tick < wall_ms);
            }
        }
        assert!(lagged > 0, "the old offset should lag sometimes");
    }

    use super::{parse_mac, EthernetAddress};

    #[test]
    fn cidr_parses_and_rejects() {
        assert_eq!(
            super::parse_cidr("10.77.0.2/24").map(|c| c.prefix_len()),
            Ok(24)
        );
        assert!(super::parse_cidr("10.77.0.2").is_err());
        assert!(super::parse_cidr("10.77.0.2/33").is_err());
        assert!(super::parse_cidr("10.77.0/24").is_err());
    }

    #[test]
    fn mac_parses_and_rejects() {
        assert_eq!(
            parse_mac("02:00:00:77:00:02"),
            Ok(EthernetAddress([2, 0, 0, 0x77, 0, 2]))
        );
        assert!(parse_mac("02:00:00").is_err());
        assert!(parse_mac("02:00:00:77:00:02:01").is_err());
        assert!(parse_mac("zz:00:00:77:00:02").is_err());
    }
}
