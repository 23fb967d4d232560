//! Client sockets in shards of 64 socket sets, on the simulated network: every frame reaches
//! the socket it is for whichever shard holds it, SYNs find a listening socket in any shard,
//! and the sockets smoltcp walks per request do not grow with the number of idle clients.

use host_tests::sim::{self, Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

/// 150 slots: three shards (64, 64, 22), 149 clients served.
type Three<'m> = Sim<'m, 150, 256, 65536>;

#[test]
fn clients_in_every_shard_are_served_and_refused_past_the_slots() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Three = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let clients: Vec<_> = (0..149).map(|_| sim.connect_ready()).collect();
    for (i, &c) in clients.iter().enumerate() {
        let (key, value) = (format!("k{i}"), format!("v{i}"));
        assert_eq!(sim.request(c, &["SET", &key, &value]), Reply::ok(), "{i}");
    }
    for (i, &c) in clients.iter().enumerate().rev() {
        let key = format!("k{i}");
        assert_eq!(
            sim.request(c, &["GET", &key]),
            Reply::bulk(&format!("v{i}")),
            "{i}"
        );
    }
    let refused = sim.connect();
    assert_eq!(
        sim.replies(refused),
        vec![Reply::error("ERR max number of clients reached")]
    );
    // Slots freed in the first and the last shard take new clients.
    for &c in [clients[0], clients[1], clients[148]].iter() {
        assert_eq!(sim.request(c, &["QUIT"]), Reply::ok());
        assert!(sim.closed_by_server(c));
        sim.close(c);
    }
    sim.settle();
    for _ in 0..3 {
        let c = sim.connect_ready();
        assert_eq!(sim.request(c, &["DBSIZE"]), Reply::Int(149));
    }
    let info = sim.request(clients[70], &["INFO", "clients"]).text();
    assert_eq!(sim::info_field(&info, "connected_clients"), 149);
}

/// The sockets smoltcp walks for 20 requests from one client: the same with 250 idle clients
/// in five shards as with none, and fewer than the three walks over all 300 sockets each
/// request would cost in one socket set (a segment in, the reply out, the client's ACK in).
#[test]
fn smoltcp_walks_per_request_do_not_grow_with_idle_clients() {
    fn visits_for_requests(idle: usize) -> u64 {
        let mut buffers = ServerBuffers::default();
        let mut sim: Sim<300, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
        let active = sim.connect_ready();
        let _idle: Vec<_> = (0..idle).map(|_| sim.connect_ready()).collect();
        sim.settle();
        let before = sim.server.socket_visits();
        for i in 0..20 {
            let value = i.to_string();
            assert_eq!(sim.request(active, &["SET", "k", &value]), Reply::ok());
        }
        let visits = sim.server.socket_visits() - before;
        assert!(
            visits < 20 * 3 * 300,
            "{visits} socket visits for 20 requests"
        );
        visits
    }
    let without = visits_for_requests(0);
    let with = visits_for_requests(250);
    assert_eq!(with, without, "with 250 idle: {with}; without: {without}");
}

/// A host's client slots open a shard of 16 at a time as clients arrive: an idle server holds
/// one shard, 40 clients three, and INFO says so (the slots and the bytes of the connection
/// table). No client is refused or kept waiting on the way: every SYN finds a socket.
#[test]
fn slots_open_a_shard_at_a_time_as_clients_arrive() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<300, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    assert_eq!(sim.stats().connection_slots_open, 16);
    let idle_table = sim.stats().connection_table_bytes;
    let first = sim.connect_ready();
    let info = sim.request(first, &["INFO", "memory"]).text();
    assert_eq!(sim::info_field(&info, "connection_slots_open"), 16);
    assert_eq!(
        sim::info_field(&info, "used_memory_connection_table"),
        idle_table as u64
    );
    let mut clients = vec![first];
    clients.extend((1..40).map(|_| sim.connect_ready()));
    for &c in &clients {
        assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
    }
    let info = sim.request(first, &["INFO"]).text();
    assert_eq!(sim::info_field(&info, "connection_slots_open"), 48);
    let per_slot =
        (sim::info_field(&info, "used_memory_connection_table") - idle_table as u64) / 32;
    assert!(per_slot > 0, "{info}");
    assert_eq!(
        (idle_table as u64 - 16 * per_slot) + 48 * per_slot,
        sim::info_field(&info, "used_memory_connection_table"),
        "the table grows by the same bytes per slot"
    );
    assert_eq!(sim::info_field(&info, "rejected_connections"), 0);
    assert_eq!(sim.stats().half_open_evictions, 0);
    // Clients that leave free their slots for the next ones: no shard opens for them.
    for &c in &clients[1..] {
        assert_eq!(sim.request(c, &["QUIT"]), Reply::ok());
        sim.close(c);
    }
    sim.settle();
    let again: Vec<_> = (0..39).map(|_| sim.connect_ready()).collect();
    assert_eq!(sim.request(again[38], &["PING"]), Reply::simple("PONG"));
    assert_eq!(sim.stats().connection_slots_open, 48);
}
