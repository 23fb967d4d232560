//! Connection timeouts over the simulated network: idle, read (a command arriving too slowly),
//! write (a client that does not read), the graceful-close abort, and the slot listening again
//! after each close.
//!
//! Most tests use two sockets, so one client is served at a time: a new client served after a
//! close proves the slot was recycled.

use host_tests::sim;
use host_tests::sim::{Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

type One<'m> = Sim<'m, 2, 256, 65536>;

/// The only client slot is free again: a new client is served (and then leaves).
fn slot_listens_again(sim: &mut One) {
    let next = sim.connect();
    assert_eq!(
        sim.request(next, &["PING"]),
        Reply::simple("PONG"),
        "the slot did not listen again"
    );
    sim.close(next);
    assert_eq!(sim.stats().connected_clients, 0);
}

const PING: &[u8] = b"*1\r\n$4\r\nPING\r\n";

#[test]
fn idle_connection_closed_at_idle_timeout_not_before() {
    let mut buffers = ServerBuffers::default();
    let mut sim: One = Sim::new(&mut buffers, Timeouts::new(1_000, 500, 500));
    sim.advance(50);
    let c = sim.connect();
    let connected = sim.now;
    // No command at all: idle from the accept.
    assert_eq!(sim.run_until_closed(c, connected + 999), None);
    assert_eq!(
        sim.run_until_closed(c, connected + 5_000),
        Some(connected + 1_000)
    );
    assert_eq!(sim.stats().idle_timeout_closes, 1);
    // Polled when it asked, at the deadline's tick: handled 0 ms late.
    assert_eq!(sim.stats().idle_close_max_late_ms, 0);
    assert_eq!(sim.stats().read_timeout_closes, 0);
    sim.close(c);
    slot_listens_again(&mut sim);

    // Each command pushes the deadline out.
    let c = sim.connect_ready();
    for _ in 0..5 {
        sim.advance(900);
        assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
    }
    let last = sim.now;
    assert_eq!(sim.run_until_closed(c, last + 999), None);
    assert_eq!(sim.run_until_closed(c, last + 5_000), Some(last + 1_000));
    assert_eq!(sim.stats().idle_timeout_closes, 2);
    assert_eq!(sim.stats().idle_close_max_late_ms, 0);
    let stats = sim.stats();
    sim.close(c);
    assert_eq!(stats.aborted_closes, 0);
    slot_listens_again(&mut sim);
}

/// A client that sends a command one byte every 100 ms (1.4 s for a 14-byte PING) is closed at
/// the read timeout (1 s) counted from the first byte, though bytes keep coming.
#[test]
fn trickling_command_closed_at_read_timeout_from_first_byte() {
    let mut buffers = ServerBuffers::default();
    let mut sim: One = Sim::new(&mut buffers, Timeouts::new(10_000, 1_000, 10_000));
    let c = sim.connect_ready();
    let first = 100;
    let mut closed_at = None;
    for (i, byte) in PING.iter().enumerate() {
        let at = first + 100 * i as u64;
        if let Some(t) = sim.run_until_closed(c, at) {
            closed_at = Some(t);
            break;
        }
        sim.send(c, &[*byte]);
    }
    assert_eq!(closed_at, Some(first + 1_000));
    assert!(sim.replies(c).is_empty(), "the command must not run");
    let stats = sim.stats();
    assert_eq!(stats.read_timeout_closes, 1);
    assert_eq!(stats.idle_timeout_closes, 0);
    // Bytes the client still sends after the close are dropped, not answered.
    sim.send(c, b"\r\n");
    assert!(sim.replies(c).is_empty());
    sim.close(c);
    slot_listens_again(&mut sim);
}

/// A command that arrives slowly but within the read timeout is served, and the read timer
/// starts afresh for the next one.
#[test]
fn slow_command_within_read_timeout_is_served() {
    let mut buffers = ServerBuffers::default();
    let mut sim: One = Sim::new(&mut buffers, Timeouts::new(10_000, 1_000, 10_000));
    let c = sim.connect_ready();
    for _ in 0..3 {
        for byte in PING {
            sim.advance(60);
            sim.send(c, &[*byte]);
        }
        assert_eq!(sim.replies(c), vec![Reply::simple("PONG")]);
    }
    assert!(sim.is_open(c));
    assert_eq!(sim.stats().read_timeout_closes, 0);
}

/// A steady stream of pipelined commands whose segments end mid-command: each command arrives
/// within 300 ms, so the read timeout (1 s) must never fire, though some command is always
/// partly there.
#[test]
fn read_timer_restarts_for_each_pipelined_command() {
    let mut buffers = ServerBuffers::default();
    let mut sim: One = Sim::new(&mut buffers, Timeouts::new(10_000, 1_000, 10_000));
    let c = sim.connect_ready();
    let stream: Vec<u8> = PING.repeat(20);
    for chunk in stream.chunks(5) {
        sim.advance(100);
        sim.send(c, chunk);
    }
    sim.settle();
    assert_eq!(sim.replies(c), vec![Reply::simple("PONG"); 20]);
    assert!(sim.is_open(c), "closed at t={}", sim.now);
    assert_eq!(sim.stats().read_timeout_closes, 0);
}

/// With the read timeout off, a half-sent command still ends at the idle timeout, counted as
/// idle.
#[test]
fn idle_timeout_applies_to_half_command_when_read_timeout_disabled() {
    let mut buffers = ServerBuffers::default();
    let mut sim: One = Sim::new(&mut buffers, Timeouts::new(1_000, 0, 1_000));
    let c = sim.connect_ready();
    sim.advance(100);
    sim.send(c, b"*1\r\n$4\r\nPI");
    assert_eq!(sim.run_until_closed(c, 999), None);
    assert_eq!(sim.run_until_closed(c, 10_000), Some(1_000));
    assert_eq!(sim.stats().idle_timeout_closes, 1);
    assert_eq!(sim.stats().read_timeout_closes, 0);
    sim.close(c);
    slot_listens_again(&mut sim);
}

/// Fills the client's 2 KiB receive window with replies and never reads: the write timeout
/// closes it (and the close is aborted, since the FIN can never get through), though complete
/// GETs are still waiting in the input buffer.
#[test]
fn client_that_never_reads_closed_at_write_timeout() {
    // Read and write timeouts equal, as in the defaults.
    let mut buffers = ServerBuffers::default();
    let mut sim: One = Sim::new(&mut buffers, Timeouts::new(60_000, 1_000, 1_000));
    let c = sim.connect_with(2048, 65536);
    let value = "x".repeat(1000);
    assert_eq!(sim.request(c, &["SET", "big", &value]), Reply::ok());
    sim.advance(10);
    sim.set_reading(c, false);
    let gets: Vec<u8> = sim::encode_str(&["GET", "big"]).repeat(40);
    sim.send(c, &gets);
    let stalled = sim.now;
    assert_eq!(sim.unread(c), 2048, "the client window is full");

    let closed = sim.run_until_true(stalled + 10_000, |sim| {
        sim.stats().write_timeout_closes + sim.stats().read_timeout_closes > 0
    });
    assert_eq!(closed, Some(stalled + 1_000));
    let stats = sim.stats();
    assert_eq!(stats.write_timeout_closes, 1);
    assert_eq!(stats.read_timeout_closes, 0);
    // The FIN is stuck behind unread replies: the close is aborted after close_ms.
    let close_ms = Timeouts::DEFAULT.close_ms;
    let reset_at = sim.run_until_closed(c, stalled + 1_000 + close_ms + 1_000);
    assert_eq!(reset_at, Some(stalled + 1_000 + close_ms));
    assert_eq!(sim.stats().aborted_closes, 1);
    assert_eq!(sim.stats().connected_clients, 0);
    slot_listens_again(&mut sim);
}

/// A client that reads slowly but steadily is not closed by the write timeout.
#[test]
fn slow_reader_making_progress_is_not_closed() {
    let mut buffers = ServerBuffers::default();
    let mut sim: One = Sim::new(&mut buffers, Timeouts::new(60_000, 1_000, 1_000));
    let c = sim.connect_with(2048, 65536);
    let value = "y".repeat(1000);
    assert_eq!(sim.request(c, &["SET", "big", &value]), Reply::ok());
    sim.set_reading(c, false);
    sim.send(c, &sim::encode_str(&["GET", "big"]).repeat(40));
    let mut got = Vec::new();
    while got.len() < 40 * 1007 {
        sim.advance(700);
        assert!(sim.is_open(c), "closed at t={}", sim.now);
        sim.set_reading(c, true);
        sim.poll_client();
        sim.set_reading(c, false);
        got.extend(sim.take(c));
        sim.settle();
    }
    assert_eq!(sim.stats().write_timeout_closes, 0);
    assert_eq!(sim.stats().read_timeout_closes, 0);
    sim.set_reading(c, true);
    assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
}

/// The server's FIN is acknowledged, but the client never closes its side: the slot is taken
/// back after close_ms.
#[test]
fn half_closed_client_aborted_after_close_timeout() {
    let mut buffers = ServerBuffers::default();
    let mut sim: One = Sim::new(&mut buffers, Timeouts::new(1_000, 1_000, 1_000));
    let c = sim.connect_ready();
    assert_eq!(sim.run_until_closed(c, 5_000), Some(1_000));
    let close_ms = Timeouts::DEFAULT.close_ms;
    // Not closing `c`: the server waits in FIN-WAIT-2, then gives up. As in Redis, a client
    // the server is closing is no longer counted as connected.
    assert_eq!(sim.stats().connected_clients, 0);
    let aborted = sim.run_until_true(1_000 + close_ms + 10_000, |sim| {
        sim.stats().aborted_closes > 0
    });
    assert_eq!(aborted, Some(1_000 + close_ms));
    assert_eq!(sim.stats().connected_clients, 0);
    slot_listens_again(&mut sim);
}

#[test]
fn client_close_and_reset_free_the_slot() {
    let mut buffers = ServerBuffers::default();
    let mut sim: One = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    assert_eq!(sim.stats().connected_clients, 1);
    sim.close(c);
    assert!(sim.closed_by_server(c));
    assert_eq!(sim.stats().connected_clients, 0);
    slot_listens_again(&mut sim);
    let c = sim.connect_ready();
    sim.abort(c);
    assert_eq!(sim.stats().connected_clients, 0);
    slot_listens_again(&mut sim);
    // A client that sends a command and its FIN together still gets the reply.
    let c = sim.connect();
    sim.queue(c, PING);
    sim.close(c);
    assert_eq!(sim.replies(c), vec![Reply::simple("PONG")]);
    assert_eq!(sim.stats().connected_clients, 0);
    slot_listens_again(&mut sim);
}

#[test]
fn zero_timeouts_never_close() {
    let mut buffers = ServerBuffers::default();
    let mut sim: One = Sim::new(&mut buffers, Timeouts::new(0, 0, 0));
    let c = sim.connect_ready();
    sim.send(c, b"*1\r\n$4\r\nPI");
    sim.advance(86_400_000);
    assert!(sim.is_open(c));
    sim.send(c, b"NG\r\n");
    assert_eq!(sim.replies(c), vec![Reply::simple("PONG")]);
}

/// `CONFIG SET` of a timeout applies to connections that are already waiting, as in Redis
/// (whose clientsCron compares each client's last interaction with the current setting).
#[test]
fn config_set_timeout_applies_to_waiting_connections() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 256, 65536> =
        Sim::new(&mut buffers, Timeouts::new(300_000, 10_000, 10_000));
    let waiting = sim.connect_ready();
    let admin = sim.connect_ready();
    sim.advance(1_000);
    assert_eq!(
        sim.request(admin, &["CONFIG", "SET", "timeout", "2"]),
        Reply::ok()
    );
    // `waiting` has been idle since t=0: it goes at t=2000.
    assert_eq!(sim.run_until_closed(waiting, 10_000), Some(2_000));
    assert!(sim.is_open(admin));

    // Turning the idle timeout off spares a waiting connection.
    let spared = sim.connect_ready();
    assert_eq!(
        sim.request(admin, &["CONFIG", "SET", "timeout", "0"]),
        Reply::ok()
    );
    sim.advance(60_000);
    assert!(sim.is_open(spared));
    assert!(sim.is_open(admin));

    // A shorter read timeout applies to a command already arriving.
    sim.send(spared, b"*1\r\n");
    let started = sim.now;
    sim.advance(500);
    assert_eq!(
        sim.request(admin, &["CONFIG", "SET", "read-timeout-ms", "1000"]),
        Reply::ok()
    );
    assert_eq!(
        sim.run_until_closed(spared, started + 5_000),
        Some(started + 1_000)
    );
    assert_eq!(sim.stats().read_timeout_closes, 1);
    assert_eq!(sim.stats().idle_timeout_closes, 1);
}
