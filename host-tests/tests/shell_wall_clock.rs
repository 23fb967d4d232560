//! The wall clock set by SNTP over the simulated network: a sync from a configured server or
//! from the DHCP lease's NTP option makes `TIME` and the absolute expiry commands right; bad
//! replies are ignored; a silent server is asked again, ever less often, within a bound; a
//! sync is repeated every hour.

use host_tests::sim;
use host_tests::sim::{NtpAnswer, Reply, Sim};
use net_shell::smoltcp::wire::{Ipv4Address, Ipv4Cidr};
use net_shell::{IpSetup, ServerBuffers, ServerConfig, Timeouts};

type Small<'m> = Sim<'m, 4, 256, 65536>;

/// The NTP server's clock at simulated time 0: 2023-11-14 22:13:20 UTC.
const UNIX_AT_ZERO: u64 = 1_700_000_000_000;

/// What net-shell documents as its retry schedule (`server::wall_clock`).
const FIRST_RETRY_MS: u64 = 4_000;
const MAX_RETRY_MS: u64 = 512_000;
const RESYNC_INTERVAL_MS: u64 = 3_600_000;

fn config_with_ntp(server: Option<Ipv4Address>) -> ServerConfig {
    let mut config = sim::config(Timeouts::DEFAULT);
    config.ntp_server = server;
    config
}

/// A server with the NTP server at the client interface configured, and that server running
/// with `answer`, at time 0 (not yet polled).
fn sim_with_ntp(buffers: &mut ServerBuffers, answer: NtpAnswer) -> Small<'_> {
    let mut sim: Small =
        Sim::build(buffers, config_with_ntp(Some(sim::CLIENT_IP)), sim::store()).unwrap();
    sim.start_ntp_server(UNIX_AT_ZERO);
    sim.ntp_server().answer = answer;
    sim
}

fn int(n: i64) -> Reply {
    Reply::Int(n)
}

fn needs_clock(reply: &Reply) -> bool {
    reply
        .error_text()
        .is_some_and(|text| text.contains("wall clock"))
}

/// `TIME`'s answer as Unix milliseconds.
fn time_ms(sim: &mut Small, c: sim::Client) -> u64 {
    let Reply::Array(parts) = sim.request(c, &["TIME"]) else {
        panic!("TIME answers an array");
    };
    let [Reply::Bulk(secs), Reply::Bulk(micros)] = &parts[..] else {
        panic!("TIME answers two bulk strings: {parts:?}");
    };
    let secs: u64 = std::str::from_utf8(secs).unwrap().parse().unwrap();
    let micros: u64 = std::str::from_utf8(micros).unwrap().parse().unwrap();
    secs * 1000 + micros / 1000
}

#[test]
fn sync_from_configured_server_sets_time_and_absolute_expiry() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim_with_ntp(&mut buffers, NtpAnswer::Correct);
    sim.settle();
    assert_eq!(sim.ntp_server().requests, vec![0], "one request at start");
    assert_eq!(sim.server.ntp_server(), Some(sim::CLIENT_IP));
    let sync = sim.server.take_clock_sync().expect("synced");
    assert_eq!(sync.unix_ms, UNIX_AT_ZERO + sync.at);
    assert_eq!(sync.server, sim::CLIENT_IP);
    assert_eq!(sync.stratum, 1);
    assert_eq!(sim.server.take_clock_sync(), None, "a sync is taken once");

    sim.advance(12_345);
    assert_eq!(
        sim.server.unix_time_ms(sim.now),
        Some(UNIX_AT_ZERO + sim.now)
    );
    let c = sim.connect_ready();
    assert_eq!(time_ms(&mut sim, c), UNIX_AT_ZERO + sim.now);

    // 100 s from now, in Unix seconds.
    let at = (UNIX_AT_ZERO + sim.now) / 1000 + 100;
    assert_eq!(sim.request(c, &["SET", "k", "v"]), Reply::ok());
    assert_eq!(sim.request(c, &["EXPIREAT", "k", &at.to_string()]), int(1));
    assert_eq!(sim.request(c, &["EXPIRETIME", "k"]), int(at as i64));
    assert_eq!(sim.request(c, &["PEXPIRETIME", "k"]), int(at as i64 * 1000));
    let pxat = UNIX_AT_ZERO + sim.now + 2_500;
    assert_eq!(
        sim.request(c, &["SET", "p", "v", "PXAT", &pxat.to_string()]),
        Reply::ok()
    );
    assert_eq!(sim.request(c, &["PEXPIRETIME", "p"]), int(pxat as i64));
    assert_eq!(sim.request(c, &["PTTL", "p"]), int(2_500));

    // Both expire when the NTP server's clock says so (live through their deadline's
    // millisecond, gone after it, as in Redis).
    sim.run_until(pxat - UNIX_AT_ZERO);
    assert_eq!(sim.request(c, &["EXISTS", "p"]), int(1));
    sim.run_until(pxat - UNIX_AT_ZERO + 1);
    assert_eq!(sim.request(c, &["EXISTS", "p"]), int(0));
    sim.run_until(at * 1000 - UNIX_AT_ZERO);
    assert_eq!(sim.request(c, &["EXISTS", "k"]), int(1));
    sim.run_until(at * 1000 - UNIX_AT_ZERO + 1);
    assert_eq!(sim.request(c, &["EXISTS", "k"]), int(0));
}

#[test]
fn server_started_late_is_found_by_a_retry() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::build(
        &mut buffers,
        config_with_ntp(Some(sim::CLIENT_IP)),
        sim::store(),
    )
    .unwrap();
    sim.settle();
    sim.advance(1_000);
    let c = sim.connect_ready();
    assert!(needs_clock(
        &sim.request(c, &["EXPIREAT", "k", "2000000000"])
    ));
    assert_eq!(sim.server.unix_time_ms(sim.now), None);

    sim.start_ntp_server(UNIX_AT_ZERO);
    sim.run_until(FIRST_RETRY_MS);
    assert_eq!(sim.ntp_server().requests, vec![FIRST_RETRY_MS]);
    assert_eq!(
        sim.server.unix_time_ms(sim.now),
        Some(UNIX_AT_ZERO + sim.now)
    );
    assert_eq!(sim.request(c, &["SET", "k", "v"]), Reply::ok());
    assert_eq!(sim.request(c, &["EXPIREAT", "k", "2000000000"]), int(1));
    assert_eq!(sim.request(c, &["EXPIRETIME", "k"]), int(2_000_000_000));
}

#[test]
fn ntp_server_from_dhcp_option_42_is_used() {
    let mut config = config_with_ntp(None);
    config.ip = IpSetup::Dhcp {
        fallback: None,
        fallback_after_ms: 3_000,
    };
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::build(&mut buffers, config, sim::store()).unwrap();
    sim.start_dhcp_server(sim::SERVER_IP, 600);
    sim.dhcp_server().ntp_server = Some(sim::CLIENT_IP);
    sim.start_ntp_server(UNIX_AT_ZERO);
    sim.run_until_true(10_000, |s| s.server.is_listening())
        .expect("leased");
    sim.settle();

    assert!(
        sim.dhcp_server().asked_for.contains(&42),
        "the DHCP client asks for NTP servers: {:?}",
        sim.dhcp_server().asked_for
    );
    assert_eq!(sim.server.ntp_server(), Some(sim::CLIENT_IP));
    assert_eq!(sim.ntp_server().requests.len(), 1);
    let sync = sim.server.take_clock_sync().expect("synced");
    assert_eq!(sync.server, sim::CLIENT_IP);
    let c = sim.connect_ready();
    assert_eq!(time_ms(&mut sim, c), UNIX_AT_ZERO + sim.now);
}

/// smoltcp keeps a copy of a DHCP message only up to the 548 bytes every client must accept:
/// a longer ACK still gives a lease, but no NTP server.
#[test]
fn dhcp_ack_longer_than_548_bytes_gives_a_lease_but_no_ntp_server() {
    for (padding, expected) in [(200, Some(sim::CLIENT_IP)), (400, None)] {
        let mut config = config_with_ntp(None);
        config.ip = IpSetup::Dhcp {
            fallback: None,
            fallback_after_ms: 3_000,
        };
        let mut buffers = ServerBuffers::default();
        let mut sim: Small = Sim::build(&mut buffers, config, sim::store()).unwrap();
        sim.start_dhcp_server(sim::SERVER_IP, 600);
        sim.dhcp_server().ntp_server = Some(sim::CLIENT_IP);
        sim.dhcp_server().padding = padding;
        sim.start_ntp_server(UNIX_AT_ZERO);
        sim.run_until_true(10_000, |s| s.server.is_listening())
            .expect("leased");
        sim.settle();
        assert_eq!(
            sim.server.ntp_server(),
            expected,
            "{padding} bytes of padding"
        );
        assert_eq!(
            sim.server.unix_time_ms(sim.now).is_some(),
            expected.is_some(),
            "{padding} bytes of padding"
        );
    }
}

#[test]
fn dhcp_lease_without_ntp_option_starts_no_sync() {
    let mut config = config_with_ntp(None);
    config.ip = IpSetup::Dhcp {
        fallback: None,
        fallback_after_ms: 3_000,
    };
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::build(&mut buffers, config, sim::store()).unwrap();
    sim.start_dhcp_server(sim::SERVER_IP, 600);
    sim.start_ntp_server(UNIX_AT_ZERO);
    sim.run_until_true(10_000, |s| s.server.is_listening())
        .expect("leased");
    sim.advance(60_000);
    assert_eq!(sim.server.ntp_server(), None);
    assert!(sim.ntp_server().requests.is_empty());
    assert_eq!(sim.server.unix_time_ms(sim.now), None);
}

#[test]
fn configured_server_wins_over_dhcp_option() {
    let other = Ipv4Address::new(10, 0, 0, 99);
    let mut config = config_with_ntp(Some(sim::CLIENT_IP));
    config.ip = IpSetup::Dhcp {
        fallback: Some((Ipv4Cidr::new(Ipv4Address::new(10, 0, 0, 3), 24), None)),
        fallback_after_ms: 3_000,
    };
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::build(&mut buffers, config, sim::store()).unwrap();
    sim.start_dhcp_server(sim::SERVER_IP, 600);
    sim.dhcp_server().ntp_server = Some(other);
    sim.start_ntp_server(UNIX_AT_ZERO);
    sim.run_until_true(10_000, |s| s.server.is_listening())
        .expect("leased");
    sim.settle();
    assert_eq!(sim.server.ntp_server(), Some(sim::CLIENT_IP));
    assert!(sim.server.take_clock_sync().is_some());
}

/// Each kind of bad reply is ignored: the clock stays unset, and the request is sent again.
#[test]
fn bad_replies_are_ignored_and_the_clock_not_set() {
    for answer in [
        NtpAnswer::WrongOrigin,
        NtpAnswer::Short,
        NtpAnswer::WrongMode,
        NtpAnswer::Unsynchronized,
        NtpAnswer::KissOfDeath(*b"RATE"),
        NtpAnswer::KissOfDeath(*b"DENY"),
    ] {
        let mut buffers = ServerBuffers::default();
        let mut sim = sim_with_ntp(&mut buffers, answer);
        sim.settle();
        sim.advance(60_000);
        assert_eq!(
            sim.server.unix_time_ms(sim.now),
            None,
            "{answer:?}: clock not set"
        );
        assert_eq!(sim.server.take_clock_sync(), None, "{answer:?}");
        let requests = sim.ntp_server().requests.clone();
        assert!(!requests.is_empty(), "{answer:?}: asked");
        let c = sim.connect_ready();
        assert_eq!(sim.request(c, &["SET", "k", "v", "EX", "100"]), Reply::ok());
        assert!(
            needs_clock(&sim.request(c, &["EXPIRETIME", "k"])),
            "{answer:?}"
        );
        // The uptime, not a Unix time.
        assert!(time_ms(&mut sim, c) < UNIX_AT_ZERO, "{answer:?}");
        match answer {
            // Not believed: asked again on the usual schedule.
            NtpAnswer::WrongOrigin
            | NtpAnswer::Short
            | NtpAnswer::WrongMode
            | NtpAnswer::Unsynchronized => {
                assert_eq!(requests[..2], [0, FIRST_RETRY_MS], "{answer:?}");
            }
            // Believed (it answers our request), and backed off: twice the wait.
            NtpAnswer::KissOfDeath(code) if &code == b"RATE" => {
                assert_eq!(requests[..2], [0, 2 * FIRST_RETRY_MS], "{answer:?}");
            }
            // Asked as seldom as ever.
            _ => assert_eq!(requests, [0], "{answer:?}"),
        }

        // The server recovers: the next request gets a good answer.
        sim.ntp_server().answer = NtpAnswer::Correct;
        sim.advance(MAX_RETRY_MS);
        assert_eq!(
            sim.server.unix_time_ms(sim.now),
            Some(UNIX_AT_ZERO + sim.now),
            "{answer:?}: synced after recovery"
        );
    }
}

/// No reply: asked again after 4 s, 8 s, 16 s and so on, never more than 512 s apart, and the
/// time of each retry is part of the deadline the server reports (the simulation only moves
/// to reported deadlines, so a retry it forgot to report would come late).
#[test]
fn silent_server_is_asked_again_with_bounded_backoff() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim_with_ntp(&mut buffers, NtpAnswer::Silent);
    sim.settle();
    sim.run_until(2 * RESYNC_INTERVAL_MS);
    let requests = sim.ntp_server().requests.clone();
    let gaps: Vec<u64> = requests.windows(2).map(|w| w[1] - w[0]).collect();
    let mut expected = Vec::new();
    let mut wait = FIRST_RETRY_MS;
    let mut at = 0;
    while at + wait <= 2 * RESYNC_INTERVAL_MS {
        expected.push(wait);
        at += wait;
        wait = (wait * 2).min(MAX_RETRY_MS);
    }
    assert_eq!(gaps, expected);
    assert!(gaps.iter().all(|&gap| gap <= MAX_RETRY_MS));
    assert!(
        requests.len() < 25,
        "{} requests in two hours",
        requests.len()
    );
    assert_eq!(sim.server.unix_time_ms(sim.now), None);

    sim.ntp_server().answer = NtpAnswer::Correct;
    sim.advance(MAX_RETRY_MS);
    assert_eq!(
        sim.server.unix_time_ms(sim.now),
        Some(UNIX_AT_ZERO + sim.now)
    );
}

/// After a sync the next comes an hour later, and follows the server's clock if it moved.
#[test]
fn resync_every_hour_follows_the_server_clock() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim_with_ntp(&mut buffers, NtpAnswer::Correct);
    sim.settle();
    assert!(sim.server.take_clock_sync().is_some());
    // The NTP server's clock is stepped 5 s forward (or ours drifted 5 s behind).
    sim.ntp_server().unix_at_zero = UNIX_AT_ZERO + 5_000;
    sim.run_until(RESYNC_INTERVAL_MS - 1);
    assert_eq!(sim.ntp_server().requests, vec![0]);
    assert_eq!(
        sim.server.unix_time_ms(sim.now),
        Some(UNIX_AT_ZERO + sim.now)
    );
    sim.run_until(RESYNC_INTERVAL_MS);
    assert_eq!(sim.ntp_server().requests, vec![0, RESYNC_INTERVAL_MS]);
    let sync = sim.server.take_clock_sync().expect("synced again");
    assert_eq!(sync.unix_ms, UNIX_AT_ZERO + 5_000 + RESYNC_INTERVAL_MS);
    let c = sim.connect_ready();
    assert_eq!(time_ms(&mut sim, c), UNIX_AT_ZERO + 5_000 + sim.now);
}

/// A clock seeded at boot (from a board's real-time clock) answers at once; SNTP then sets it
/// from the server.
#[test]
fn seeded_clock_is_replaced_by_sntp() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim_with_ntp(&mut buffers, NtpAnswer::Silent);
    sim.server.set_unix_time(0, UNIX_AT_ZERO - 60_000);
    sim.settle();
    assert_eq!(
        sim.server.unix_time_ms(10),
        Some(UNIX_AT_ZERO - 60_000 + 10)
    );
    sim.ntp_server().answer = NtpAnswer::Correct;
    sim.run_until(FIRST_RETRY_MS);
    assert_eq!(
        sim.server.unix_time_ms(sim.now),
        Some(UNIX_AT_ZERO + sim.now)
    );
}

#[test]
fn ntp_server_without_sntp_memory_is_refused() {
    use net_shell::smoltcp::iface::SocketStorage;
    use net_shell::{ClientSlot, ServerMemory, SetupError};
    let config = config_with_ntp(Some(sim::CLIENT_IP));
    let sockets = Vec::leak((0..3).map(|_| SocketStorage::EMPTY).collect());
    let clients = Vec::leak((0..2).map(|_| ClientSlot::default()).collect());
    let timers = Vec::leak((0..2).map(|_| Default::default()).collect());
    let write_timers = Vec::leak((0..2).map(|_| Default::default()).collect());
    let buffer = Vec::leak(vec![0; config.buffers.bytes_needed(2)]);
    let memory = ServerMemory::lent(sockets, clients, timers, write_timers, buffer);
    let (mut device, _) = sim::link(1);
    let store = sim::store::<4, 4096>();
    let result = net_shell::Server::new(config, store.0, memory, &mut device, 0);
    assert!(matches!(result, Err(SetupError::NoSntpMemory)));
}
