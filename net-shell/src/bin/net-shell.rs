//! `net-shell` on a Linux tap device: the same sans-IO server the firmware runs, driven by
//! the host's clocks.

use std::io::Write as _;
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Parser;
use net_shell::smoltcp::iface::SocketStorage;
use net_shell::smoltcp::phy::{self, Medium, TunTapInterface};
use net_shell::smoltcp::wire::{Ipv4Address, Ipv4Cidr};
use net_shell::store::Store;
use net_shell::{BufferSizes, IpSetup, Server, ServerConfig, Timeouts};

/// Client sockets: 63 clients at once, plus one that refuses the 64th politely.
const CONNS: usize = 64;
/// Key capacity.
const KEYS: usize = 1 << 17;
/// Bytes for keys and values together.
const BYTES: usize = 32 << 20;
/// The largest key.
const MAX_KEY: usize = 1024;
/// The largest value.
const MAX_VALUE: usize = 16 << 10;
/// Buffers per connection.
const BUFFERS: BufferSizes = BufferSizes {
    rx: 32 << 10,
    tx: 64 << 10,
    input: MAX_VALUE + MAX_KEY + 1024,
};
/// Longest sleep: also how soon a signal is noticed if it lands just before the sleep starts.
const MAX_SLEEP: Duration = Duration::from_secs(1);
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
    mac: [u8; 6],
    /// Close a client after this many ms without a complete command (0: never).
    #[arg(long, default_value_t = Timeouts::DEFAULT.idle_ms)]
    idle_timeout_ms: u64,
    /// Close a client whose command takes longer than this many ms to arrive (0: never).
    #[arg(long, default_value_t = Timeouts::DEFAULT.read_ms)]
    read_timeout_ms: u64,
    /// Close a client that accepts no reply bytes for this many ms (0: never).
    #[arg(long, default_value_t = Timeouts::DEFAULT.write_ms)]
    write_timeout_ms: u64,
    /// Most keys expired per poll, so a mass expiry never stalls serving.
    #[arg(long, default_value_t = 1000)]
    expire_budget: usize,
    /// Log level: error, warn, info, debug, trace.
    #[arg(long, default_value = "info")]
    log_level: log::LevelFilter,
}

fn parse_cidr(text: &str) -> Result<Ipv4Cidr, String> {
    let (address, prefix) = text
        .split_once('/')
        .ok_or("expected ADDRESS/PREFIX, like 10.77.0.2/24")?;
    let address: Ipv4Address = address
        .parse()
        .map_err(|e| format!("bad IPv4 address {address:?}: {e}"))?;
    let prefix: u8 = prefix
        .parse()
        .ok()
        .filter(|p| *p <= 32)
        .ok_or(format!("bad prefix length {prefix:?} (0..=32)"))?;
    Ok(Ipv4Cidr::new(address, prefix))
}

fn parse_mac(text: &str) -> Result<[u8; 6], String> {
    let mut mac = [0u8; 6];
    let mut parts = text.split(':');
    for byte in &mut mac {
        let part = parts
            .next()
            .ok_or("a MAC has six parts, like 02:00:00:00:00:01")?;
        *byte = u8::from_str_radix(part, 16).map_err(|e| format!("bad MAC byte {part:?}: {e}"))?;
    }
    if parts.next().is_some() {
        return Err("a MAC has six parts, like 02:00:00:00:00:01".into());
    }
    Ok(mac)
}

fn main() -> ExitCode {
    let args = Args::parse();
    env_logger::Builder::new()
        .filter_level(args.log_level)
        .parse_default_env()
        .init();
    // The store is tens of MiB: build it on a thread whose stack can hold the temporary.
    let runner = std::thread::Builder::new()
        .name("net-shell".into())
        .stack_size(512 << 20)
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

fn run(args: Args) -> Result<(), String> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .map_err(|e| format!("cannot install signal handler: {e}"))?;
    }

    let mut device = TunTapInterface::new(&args.tap, Medium::Ethernet).map_err(|e| {
        format!(
            "cannot open tap {:?}: {e} (create it first: `sudo scripts/netns.sh up`, then run inside the namespace)",
            args.tap
        )
    })?;

    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let store: &'static mut Store<KEYS, BYTES> =
        Box::leak(Box::new(Store::with_seed(MAX_KEY, MAX_VALUE, seed as u32)));
    let slots: &'static mut [SocketStorage<'static>] = (0..=CONNS)
        .map(|_| SocketStorage::EMPTY)
        .collect::<Vec<_>>()
        .leak();
    let buffer: &'static mut [u8] = vec![0u8; BUFFERS.bytes_needed(CONNS)].leak();

    let mut config = ServerConfig::new(
        args.mac,
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
    config.buffers = BUFFERS;
    config.expire_budget = args.expire_budget;
    config.random_seed = seed;

    let start = Instant::now();
    let now = || start.elapsed().as_millis() as u64;
    let mut server: Server<'static, CONNS, KEYS, BYTES> =
        Server::new(config, store, slots, buffer, &mut device, now())
            .map_err(|e| format!("cannot start: {e}"))?;
    if let Ok(unix) = SystemTime::now().duration_since(UNIX_EPOCH) {
        server.set_unix_time(now(), unix.as_millis() as u64);
    }

    let fd = device.as_raw_fd();
    let mut ready = false;
    let mut shutdown_deadline: Option<u64> = None;
    loop {
        let t = now();
        if stop.load(Ordering::Relaxed) && shutdown_deadline.is_none() {
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
                println!("net-shell ready on {}:{}", ip.address(), server.port());
                let _ = std::io::stdout().flush();
            }
            log::info!(
                "serving {} clients, {} keys, {} MiB of values; timeouts {:?}",
                CONNS - 1,
                KEYS,
                BYTES >> 20,
                server.timeouts()
            );
        }
        if let Some(deadline) = shutdown_deadline {
            if server.open_connections() == 0 || t >= deadline {
                break;
            }
        }
        let sleep = next.map_or(MAX_SLEEP, |at| {
            Duration::from_millis(at.saturating_sub(now())).min(MAX_SLEEP)
        });
        if !sleep.is_zero() {
            // EINTR (a signal) just ends the sleep early.
            let _ = phy::wait(fd, Some(sleep.into()));
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

#[cfg(test)]
mod tests {
    use super::parse_mac;

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
        assert_eq!(parse_mac("02:00:00:77:00:02"), Ok([2, 0, 0, 0x77, 0, 2]));
        assert!(parse_mac("02:00:00").is_err());
        assert!(parse_mac("02:00:00:77:00:02:01").is_err());
        assert!(parse_mac("zz:00:00:77:00:02").is_err());
    }
}
