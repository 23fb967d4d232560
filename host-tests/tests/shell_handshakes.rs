//! Half-open TCP handshakes over the simulated network: SYNs from addresses that never answer
//! (nobody on the link answers ARP for them, so the handshake never completes) must not take
//! listening sockets for good, and a flood of them must not keep real clients out.

use host_tests::sim::{info_field, Reply, Sim};
use net_shell::smoltcp::socket::tcp;
use net_shell::smoltcp::wire::Ipv4Address;
use net_shell::{ServerBuffers, Timeouts};

/// A spoofed source on the server's subnet that nobody answers for.
fn spoofed(n: u32) -> (Ipv4Address, u16) {
    (
        Ipv4Address::new(10, 0, 0, 100 + (n % 100) as u8),
        20_000 + (n % 40_000) as u16,
    )
}

/// A client that connects, PINGs and closes: whether it got PONG.
fn real_client_gets_in<const C: usize, const K: usize, const B: usize>(
    sim: &mut Sim<C, K, B>,
) -> bool {
    let c = sim.connect();
    if !sim.is_open(c) {
        return false;
    }
    sim.send_command(c, &["PING"]);
    let limit = sim.now + 1_000;
    let replies = sim.wait_replies(c, 1, limit);
    sim.close(c);
    replies == [Reply::simple("PONG")]
}

/// One SYN that is never completed: its socket listens again exactly `handshake_ms` later,
/// and every socket then serves (three clients plus the refusal of a fourth).
#[test]
fn half_open_handshake_times_out_and_its_socket_listens_again() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let start = sim.now;
    let (ip, port) = spoofed(0);
    sim.inject_syn(ip, port);
    sim.settle();
    let timed_out = sim.run_until_true(start + 60_000, |sim| sim.stats().handshake_timeouts > 0);
    assert_eq!(timed_out, Some(start + Timeouts::DEFAULT.handshake_ms));
    let clients: Vec<_> = (0..3).map(|_| sim.connect_ready()).collect();
    let refused = sim.connect();
    assert_eq!(
        sim.replies(refused),
        vec![Reply::error("ERR max number of clients reached")]
    );
    let info = sim.request(clients[0], &["INFO", "stats"]).text();
    assert_eq!(info_field(&info, "handshake_timeouts"), 1);
    assert_eq!(info_field(&info, "half_open_evictions"), 0);
}

/// The handshake timeout is a CONFIG parameter and applies to the next handshake.
#[test]
fn handshake_timeout_follows_config_set() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "handshake-timeout-ms", "300"]),
        Reply::ok()
    );
    let start = sim.now;
    let (ip, port) = spoofed(1);
    sim.inject_syn(ip, port);
    sim.settle();
    let timed_out = sim.run_until_true(start + 60_000, |sim| sim.stats().handshake_timeouts > 0);
    assert_eq!(timed_out, Some(start + 300));
}

/// With one client served and one socket left, a lost handshake on that socket must not make
/// the next client's SYN meet a reset: the next real SYN evicts it, and the client gets Redis'
/// refusal, not a refused connection.
#[test]
fn lost_handshake_does_not_take_the_refusing_socket() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<2, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let (ip, port) = spoofed(2);
    sim.inject_syn(ip, port);
    sim.settle();
    let served = sim.connect_ready();
    let refused = sim.connect();
    assert_eq!(
        sim.replies(refused),
        vec![Reply::error("ERR max number of clients reached")]
    );
    assert_eq!(sim.request(served, &["PING"]), Reply::simple("PONG"));
    assert_eq!(sim.stats().half_open_evictions, 1);
}

/// A SYN flood of ten times the socket count, repeated every second for ten seconds, while a
/// real client connects every 100 ms: every real client gets in, and once the flood stops
/// every socket is free again within the handshake timeout.
#[test]
fn syn_flood_does_not_lock_out_real_clients() {
    const SOCKETS: usize = 8;
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<SOCKETS, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let start = sim.now;
    let mut spoofs = 0;
    let mut tried = 0;
    let mut got_in = 0;
    for second in 0..10 {
        for _ in 0..10 * SOCKETS {
            let (ip, port) = spoofed(spoofs);
            sim.inject_syn(ip, port);
            spoofs += 1;
        }
        sim.settle();
        for tenth in 0..10 {
            sim.run_until(start + second * 1_000 + tenth * 100 + 50);
            tried += 1;
            if real_client_gets_in(&mut sim) {
                got_in += 1;
            }
        }
    }
    assert_eq!(got_in, tried, "real clients refused during the flood");
    assert!(sim.stats().half_open_evictions > 0);
    // The flood stops: after the handshake timeout every socket serves again.
    let end = sim.now + Timeouts::DEFAULT.handshake_ms;
    sim.run_until(end);
    let clients: Vec<_> = (0..SOCKETS - 1).map(|_| sim.connect_ready()).collect();
    let refused = sim.connect();
    assert_eq!(
        sim.replies(refused),
        vec![Reply::error("ERR max number of clients reached")]
    );
    assert_eq!(sim.state(clients[0]), tcp::State::Established);
}

/// On a host, slots open as SYNs need them: a burst of 600 SYNs at a server with 1,000 slots
/// and one shard open finds a socket for every one (no handshake is evicted, none is reset),
/// and once they time out every slot serves.
#[test]
fn burst_of_syns_opens_slots_for_every_one() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<1000, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    assert_eq!(sim.stats().connection_slots_open, 16);
    for n in 0..600 {
        let (ip, port) = spoofed(n);
        sim.inject_syn(ip, port);
    }
    sim.settle();
    let stats = sim.stats();
    assert_eq!(stats.half_open_evictions, 0);
    assert_eq!(stats.connection_slots_open, 608, "whole shards of 16");
    assert!(real_client_gets_in(&mut sim));
    sim.run_until(sim.now + Timeouts::DEFAULT.handshake_ms);
    assert_eq!(sim.stats().handshake_timeouts, 600);
    let clients: Vec<_> = (0..999).map(|_| sim.connect_ready()).collect();
    let refused = sim.connect();
    assert_eq!(
        sim.replies(refused),
        vec![Reply::error("ERR max number of clients reached")]
    );
    assert_eq!(sim.request(clients[998], &["PING"]), Reply::simple("PONG"));
    assert_eq!(sim.stats().connection_slots_open, 1000);
}

/// With every socket busy or closing, a new client's SYN takes the socket of a connection
/// being closed whose peer has every byte (here a refused client that never closes its side,
/// which would hold the socket for `close_ms`): the new client gets Redis' refusal, not a
/// reset.
#[test]
fn finished_close_gives_its_socket_to_a_new_client() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<2, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let served = sim.connect_ready();
    let lingering = sim.connect();
    assert_eq!(
        sim.replies(lingering),
        vec![Reply::error("ERR max number of clients reached")]
    );
    // `lingering` keeps its side open: its socket waits in FIN-WAIT-2 on the server.
    for _ in 0..3 {
        let next = sim.connect();
        assert_eq!(
            sim.replies(next),
            vec![Reply::error("ERR max number of clients reached")]
        );
    }
    assert_eq!(sim.request(served, &["PING"]), Reply::simple("PONG"));
    assert_eq!(sim.stats().aborted_closes, 3);
    assert_eq!(sim.stats().rejected_connections, 4);
}
