//! The server's life over the simulated network: address by DHCP fallback, many clients coming
//! and going, graceful shutdown, and a clock far in the future.

use host_tests::sim;
use host_tests::sim::{Reply, Sim};
use net_shell::smoltcp::wire::{Ipv4Address, Ipv4Cidr};
use net_shell::{IpSetup, ServerBuffers, Timeouts};

type Small<'m> = Sim<'m, 4, 256, 65536>;

/// No DHCP server on the link: the fallback address is taken at `fallback_after_ms`, not
/// before, and then clients are served.
#[test]
fn dhcp_without_server_falls_back_to_static_address_on_time() {
    let mut config = sim::config(Timeouts::DEFAULT);
    config.ip = IpSetup::Dhcp {
        fallback: Some((Ipv4Cidr::new(sim::SERVER_IP, 24), None)),
        fallback_after_ms: 3_000,
    };
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::try_with(&mut buffers, config, sim::store()).unwrap();
    assert!(!sim.server.is_listening());
    sim.run_until(2_999);
    assert_eq!(sim.server.ipv4_address(), None);
    sim.run_until(3_000);
    assert_eq!(
        sim.server.ipv4_address(),
        Some(Ipv4Cidr::new(sim::SERVER_IP, 24))
    );
    assert!(sim.server.is_listening());
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["SET", "k", "v"]), Reply::ok());
}

/// Hundreds of clients one after another, some leaving politely, some resetting, some by
/// QUIT, a few at a time: every slot comes back, every counter adds up.
#[test]
fn client_churn_leaks_no_slot() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::DEFAULT);
    for round in 0..100u64 {
        let clients: Vec<_> = (0..3).map(|_| sim.connect_ready()).collect();
        for (i, &c) in clients.iter().enumerate() {
            let key = format!("k{round}-{i}");
            assert_eq!(sim.request(c, &["SET", &key, "v", "PX", "50"]), Reply::ok());
        }
        assert_eq!(sim.stats().connected_clients, 3);
        match round % 3 {
            0 => clients.iter().for_each(|&c| sim.close(c)),
            1 => clients.iter().for_each(|&c| sim.abort(c)),
            _ => {
                for &c in &clients {
                    assert_eq!(sim.request(c, &["QUIT"]), Reply::ok());
                    sim.close(c);
                }
            }
        }
        assert_eq!(sim.stats().connected_clients, 0, "round {round}");
        sim.advance(10);
    }
    sim.advance(50);
    let stats = sim.stats();
    assert_eq!(stats.total_connections_received, 300);
    assert_eq!(stats.rejected_connections, 0);
    assert_eq!(sim.server.open_connections(), 0);
    assert_eq!(sim.server.store().len(), 0);
    assert_eq!(sim.server.store().expired_keys(), 300);
}

/// Shutdown closes every connection after the replies already queued, stops accepting, and
/// ends with no open connection.
#[test]
fn shutdown_closes_after_queued_replies_and_stops_accepting() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let a = sim.connect_ready();
    let b = sim.connect_ready();
    sim.queue(a, &sim::encode_str(&["PING", "last words"]));
    sim.poll_client();
    let now = sim.now;
    sim.poll_server();
    sim.server.shutdown(now);
    sim.settle();
    assert_eq!(sim.replies(a), vec![Reply::bulk("last words")]);
    assert!(sim.closed_by_server(a));
    assert!(sim.closed_by_server(b));
    sim.close(a);
    sim.close(b);
    assert_eq!(sim.server.open_connections(), 0);
    assert!(!sim.server.is_listening());
    // A new client is turned away.
    let late = sim.connect();
    assert_ne!(sim.state(late), smoltcp::socket::tcp::State::Established);
    sim.advance(5_000);
    assert!(sim.replies(late).is_empty());
    assert_eq!(sim.server.open_connections(), 0);
}

/// A clock that reads hundreds of millennia (or garbage near u64::MAX) makes the server expire
/// keys and close idle connections, not panic.
#[test]
fn clock_far_in_the_future_does_not_panic() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["SET", "v", "1", "EX", "10"]), Reply::ok());
    assert_eq!(sim.request(c, &["SET", "p", "1"]), Reply::ok());
    for at in [1u64 << 53, u64::MAX / 2, u64::MAX - 1, u64::MAX] {
        sim.poll_server_at(at);
    }
    assert_eq!(sim.server.store().len(), 1);
    assert_eq!(sim.stats().idle_timeout_closes, 1);
}

/// With a DHCP server the lease comes first and the fallback is not taken; when the lease runs
/// out the fallback is taken at once, and again after a later lease runs out too.
#[test]
fn dhcp_lease_then_fallback_after_each_lost_lease() {
    let fallback = Ipv4Cidr::new(Ipv4Address::new(10, 0, 0, 3), 24);
    let leased = Ipv4Cidr::new(sim::SERVER_IP, 24);
    let mut config = sim::config(Timeouts::new(0, 10_000, 10_000));
    config.ip = IpSetup::Dhcp {
        fallback: Some((fallback, None)),
        fallback_after_ms: 3_000,
    };
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::build(&mut buffers, config, sim::store()).unwrap();
    sim.start_dhcp_server(sim::SERVER_IP, 60);
    sim.settle();
    assert_eq!(sim.server.ipv4_address(), Some(leased));
    assert_eq!(sim.dhcp_server().acks, 1);
    let c = sim.connect_ready();
    sim.run_until(10_000);
    assert_eq!(
        sim.server.ipv4_address(),
        Some(leased),
        "the fallback replaced a lease"
    );
    assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));

    for round in 0..2 {
        // The server goes away: the lease runs out and the fallback is taken.
        sim.dhcp_server().enabled = false;
        let lost = sim.run_until_true(sim.now + 120_000, |sim| {
            sim.server.ipv4_address() != Some(leased)
        });
        assert!(lost.is_some(), "round {round}: the lease never ran out");
        assert_eq!(
            sim.server.ipv4_address(),
            Some(fallback),
            "round {round}: no fallback after the lease ran out"
        );
        sim.server_ip = fallback.address();
        let on_fallback = sim.connect_ready();
        sim.close(on_fallback);
        // It comes back: a new lease replaces the fallback.
        sim.dhcp_server().enabled = true;
        let leased_again = sim.run_until_true(sim.now + 120_000, |sim| {
            sim.server.ipv4_address() == Some(leased)
        });
        assert!(leased_again.is_some(), "round {round}: no new lease");
        sim.server_ip = leased.address();
        let c = sim.connect_ready();
        sim.close(c);
    }
}

/// A request that lands while the server is busy in its poll (after it found the device empty
/// once) is answered without time moving: the poll that takes a frame in serves it. The server
/// used to take such a frame in during its second interface poll, leave it unserved, and ask
/// to run again only at smoltcp's delayed-ACK deadline, 10 ms later.
#[test]
fn request_landing_mid_poll_is_answered_without_waiting() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::DEFAULT);
    for round in 0..20 {
        let c = sim.connect();
        let start = sim.now;
        sim.send_mid_poll(c, &sim::encode_str(&["PING"]));
        sim.settle();
        assert_eq!(sim.now, start);
        assert_eq!(
            sim.replies(c),
            vec![Reply::simple("PONG")],
            "round {round}: no reply at t={start}"
        );
        sim.close(c);
        sim.advance(1);
    }
}

/// A client the server is closing (here: QUIT, with the client not closing its side) leaves
/// `connected_clients` at once, as in Redis, not when the close has finished.
#[test]
fn closing_client_leaves_connected_clients_at_once() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let watcher = sim.connect_ready();
    let leaving = sim.connect_ready();
    let clients = |sim: &mut Small| {
        let info = sim.request(watcher, &["INFO", "clients"]).text();
        sim::info_field(&info, "connected_clients")
    };
    assert_eq!(clients(&mut sim), 2);
    assert_eq!(sim.request(leaving, &["QUIT"]), Reply::ok());
    assert!(sim.closed_by_server(leaving));
    assert_eq!(clients(&mut sim), 1);
}

/// A poll services only the slots frames arrived for: requests from one client cost the same
/// number of slot visits with 15 idle clients attached as with none (the server used to visit
/// every slot on every poll).
#[test]
fn polls_service_only_slots_with_traffic() {
    fn visits_for_requests(idle: usize) -> u64 {
        let mut buffers = ServerBuffers::default();
        let mut sim: Sim<16, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
        let _idle: Vec<_> = (0..idle).map(|_| sim.connect_ready()).collect();
        let active = sim.connect_ready();
        let polls_before = sim.server_polls;
        let before = sim.server.slot_visits();
        for i in 0..20 {
            let value = i.to_string();
            assert_eq!(sim.request(active, &["SET", "k", &value]), Reply::ok());
        }
        let visits = sim.server.slot_visits() - before;
        let polls = sim.server_polls - polls_before;
        // Each request is one segment in and an ACK of the reply: a few visits, whatever the
        // number of polls it took.
        assert!(visits <= 3 * 20, "{visits} visits in {polls} polls");
        visits
    }
    assert_eq!(visits_for_requests(14), visits_for_requests(0));
}
