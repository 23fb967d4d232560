//! Fixed capacities over the simulated network: a store full of keys or of bytes, values and
//! keys over their limits, client slots, and the setup checks that keep every accepted
//! configuration able to serve its largest command.

use host_tests::sim;
use host_tests::sim::{info_field, Reply, Sim};
use net_shell::{ServerBuffers, SetupError, Timeouts};

const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

fn int(n: i64) -> Reply {
    Reply::Int(n)
}

#[test]
fn store_full_of_keys_refuses_new_keys_and_keeps_every_key() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 8, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    for i in 0..8 {
        let (key, value) = (format!("k{i}"), format!("v{i}"));
        assert_eq!(sim.request(c, &["SET", &key, &value]), Reply::ok());
    }
    for args in [
        &["SET", "new", "v"][..],
        &["SET", "new", "v", "EX", "10"],
        &["SET", "new", "v", "GET"],
        &["SET", "new", "v", "NX"],
        &["SETEX", "new", "10", "v"],
        &["PSETEX", "new", "10", "v"],
        &["INCR", "new"],
        &["DECRBY", "new", "5"],
    ] {
        assert_eq!(sim.request(c, args), Reply::error(OOM), "{args:?}");
    }
    assert_eq!(sim.request(c, &["EXISTS", "new"]), int(0));
    assert_eq!(sim.request(c, &["DBSIZE"]), int(8));
    for i in 0..8 {
        let (key, value) = (format!("k{i}"), format!("v{i}"));
        assert_eq!(sim.request(c, &["GET", &key]), Reply::bulk(&value));
    }
    // Existing keys can still be written.
    assert_eq!(
        sim.request(c, &["SET", "k0", "changed", "EX", "100"]),
        Reply::ok()
    );
    assert_eq!(sim.request(c, &["SET", "k1", "5"]), Reply::ok());
    assert_eq!(sim.request(c, &["INCR", "k1"]), int(6));
    assert_eq!(
        sim.request(c, &["SET", "k2", "x", "GET"]),
        Reply::bulk("v2")
    );
    let info = sim.request(c, &["INFO", "stats"]).text();
    assert_eq!(info_field(&info, "oom_refusals"), 8, "{info}");
    assert_eq!(sim.stats().oom_refusals, 8);
    // A freed key makes room.
    assert_eq!(sim.request(c, &["DEL", "k7"]), int(1));
    assert_eq!(sim.request(c, &["SET", "new", "v"]), Reply::ok());
    // So does a key that expires, once the timer removed it.
    assert_eq!(sim.request(c, &["PEXPIRE", "k6", "10"]), int(1));
    sim.advance(11);
    assert_eq!(sim.request(c, &["SET", "newer", "v"]), Reply::ok());
}

/// Values of 1000 bytes (1,024-byte blocks: 8 + key + value, rounded up to a size class) in a
/// 4096-byte pool, with a filler that takes the last 1,024.
fn full_of_bytes(buffers: &mut ServerBuffers) -> (Sim<'_, 4, 256, 4096>, sim::Client) {
    let mut sim: Sim<4, 256, 4096> = Sim::new(buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    for i in 0..3 {
        let value = char::from(b'a' + i).to_string().repeat(1000);
        assert_eq!(
            sim.request(c, &["SET", &format!("k{i}"), &value]),
            Reply::ok()
        );
    }
    assert_eq!(
        sim.request(c, &["SET", "f", &"f".repeat(1015)]),
        Reply::ok()
    );
    assert_eq!(sim.server.store().bytes_used(), 4096);
    (sim, c)
}

#[test]
fn store_full_of_bytes_refuses_growth_and_keeps_every_value() {
    let mut buffers = ServerBuffers::default();
    let (mut sim, c) = full_of_bytes(&mut buffers);
    for args in [
        &["SET", "z", "1"][..],
        &["SET", "k0", &"A".repeat(1024)],
        &["SET", "k0", &"A".repeat(1024), "GET"],
        &["INCR", "counter"],
    ] {
        assert_eq!(sim.request(c, args), Reply::error(OOM), "{:?}", &args[..2]);
    }
    for i in 0..3u8 {
        let value = char::from(b'a' + i).to_string().repeat(1000);
        assert_eq!(
            sim.request(c, &["GET", &format!("k{i}")]),
            Reply::bulk(&value)
        );
    }
    assert_eq!(
        sim.request(c, &["GET", "f"]),
        Reply::bulk(&"f".repeat(1015))
    );
    assert_eq!(sim.server.store().bytes_used(), 4096);
    let info = sim.request(c, &["INFO", "memory"]).text();
    assert_eq!(info_field(&info, "used_memory_dataset"), 4096);
    // The parts of used_memory: keys and values, the key table, its timers, the connections.
    let parts = [
        "used_memory_dataset",
        "used_memory_table",
        "used_memory_timers",
        "used_memory_connections",
    ]
    .iter()
    .map(|part| info_field(&info, part))
    .sum::<u64>();
    assert_eq!(info_field(&info, "used_memory"), parts, "{info}");
    assert!(info_field(&info, "used_memory_table") > 0, "{info}");
    assert!(info_field(&info, "used_memory_connections") > 0, "{info}");
    // Redis' "no limit" (all of the store's memory), and the limit that is in force.
    assert_eq!(info_field(&info, "maxmemory"), 0);
    assert_eq!(info_field(&info, "maxmemory_in_force"), 4096);
}

/// Overwriting with a value of the same size needs no new bytes, even with GET.
#[test]
fn full_store_overwrites_in_place_with_and_without_get() {
    let mut buffers = ServerBuffers::default();
    let (mut sim, c) = full_of_bytes(&mut buffers);
    let b = "B".repeat(1000);
    assert_eq!(sim.request(c, &["SET", "k1", &b]), Reply::ok());
    let c2 = "C".repeat(1000);
    assert_eq!(sim.request(c, &["SET", "k1", &c2, "GET"]), Reply::bulk(&b));
    assert_eq!(sim.request(c, &["GET", "k1"]), Reply::bulk(&c2));
    assert_eq!(sim.server.store().bytes_used(), 4096);
}

/// A shorter value gives its bytes back: what was refused for lack of room then fits.
#[test]
fn overwriting_with_a_shorter_value_frees_bytes() {
    let mut buffers = ServerBuffers::default();
    let (mut sim, c) = full_of_bytes(&mut buffers);
    assert_eq!(
        sim.request(c, &["SET", "z", &"z".repeat(900)]),
        Reply::error(OOM)
    );
    assert_eq!(sim.request(c, &["SET", "k1", "short"]), Reply::ok());
    assert_eq!(sim.server.store().bytes_used(), 4096 - 1024 + 16);
    assert_eq!(sim.request(c, &["SET", "z", &"z".repeat(900)]), Reply::ok());
    assert_eq!(sim.request(c, &["GET", "k1"]), Reply::bulk("short"));
    assert_eq!(
        sim.request(c, &["GET", "k0"]),
        Reply::bulk(&"a".repeat(1000))
    );
    assert_eq!(sim.request(c, &["GET", "z"]), Reply::bulk(&"z".repeat(900)));
    // Counters that shrink and grow keep working in a full pool.
    assert_eq!(sim.request(c, &["SET", "f", "-100"]), Reply::ok());
    for n in -99..=10 {
        assert_eq!(sim.request(c, &["INCR", "f"]), int(n));
    }
}

#[test]
fn value_or_key_over_the_limit_refused_with_clear_error() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    let too_big = "v".repeat(sim::MAX_VALUE + 1);
    let expected = format!("ERR value is too large (max {} bytes)", sim::MAX_VALUE);
    assert_eq!(
        sim.request(c, &["SET", "k", &too_big]),
        Reply::Error(expected.clone())
    );
    assert_eq!(sim.request(c, &["EXISTS", "k"]), int(0));
    assert_eq!(sim.request(c, &["SET", "k", "small"]), Reply::ok());
    assert_eq!(
        sim.request(c, &["SET", "k", &too_big, "GET"]),
        Reply::Error(expected.clone())
    );
    assert_eq!(
        sim.request(c, &["SETEX", "k", "10", &too_big]),
        Reply::Error(expected)
    );
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::bulk("small"));
    assert_eq!(sim.request(c, &["TTL", "k"]), int(-1));
    let exact = "v".repeat(sim::MAX_VALUE);
    assert_eq!(sim.request(c, &["SET", "k", &exact]), Reply::ok());
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::bulk(&exact));

    let long_key = "k".repeat(sim::MAX_KEY + 1);
    assert_eq!(
        sim.request(c, &["SET", &long_key, "v"]),
        Reply::error("ERR key is too long")
    );
    let key = "k".repeat(sim::MAX_KEY);
    assert_eq!(sim.request(c, &["SET", &key, "v"]), Reply::ok());
    assert!(sim.is_open(c));
    assert_eq!(sim.stats().oom_refusals, 0);
}

/// With 4 sockets, 3 clients are served; the 4th is told and closed, and counted.
#[test]
fn max_clients_served_and_the_next_refused() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let clients: Vec<_> = (0..3).map(|_| sim.connect_ready()).collect();
    let refused = sim.connect();
    sim.send(refused, &sim::encode_str(&["SET", "refused", "1"]));
    assert_eq!(
        sim.replies(refused),
        vec![Reply::error("ERR max number of clients reached")]
    );
    assert!(sim.closed_by_server(refused));
    sim.close(refused);
    let stats = sim.stats();
    assert_eq!(stats.rejected_connections, 1);
    assert_eq!(stats.connected_clients, 3);
    let info = sim.request(clients[0], &["INFO"]).text();
    assert_eq!(info_field(&info, "rejected_connections"), 1);
    assert_eq!(info_field(&info, "connected_clients"), 3);
    // As in Redis, a refused connection was not received.
    assert_eq!(info_field(&info, "total_connections_received"), 3);
    assert_eq!(sim.request(clients[1], &["EXISTS", "refused"]), int(0));
    for &c in &clients {
        assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
    }
    // The refusing socket listens again and refuses the next one too.
    let again = sim.connect();
    assert_eq!(
        sim.replies(again),
        vec![Reply::error("ERR max number of clients reached")]
    );
    sim.close(again);
    assert_eq!(sim.stats().rejected_connections, 2);
    // One leaves: the next is served.
    sim.close(clients[2]);
    let next = sim.connect_ready();
    assert_eq!(sim.request(next, &["DBSIZE"]), int(0));
    assert_eq!(sim.stats().connected_clients, 3);
    assert_eq!(sim.stats().rejected_connections, 2);
    assert_eq!(sim.stats().total_connections_received, 4);
}

/// A client the server is closing (here for a protocol error, while the peer never closes its
/// side) no longer holds a client slot: the next client is served, not refused.
#[test]
fn closing_client_frees_its_slot_for_the_next_one() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let clients: Vec<_> = (0..3).map(|_| sim.connect_ready()).collect();
    sim.send(clients[0], b"*1\r\n$x\r\n");
    assert_eq!(
        sim.replies(clients[0]),
        vec![Reply::error("ERR Protocol error: invalid bulk length")]
    );
    assert!(sim.closed_by_server(clients[0]));
    // The peer keeps its side open: the slot is still closing on the server.
    let next = sim.connect_ready();
    assert_eq!(sim.request(next, &["PING"]), Reply::simple("PONG"));
    assert_eq!(sim.stats().rejected_connections, 0);
    for &c in &clients[1..] {
        assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
    }
}

/// A refused client that never closes is aborted after close_ms, freeing the refusing socket.
#[test]
fn refused_client_that_stays_is_aborted() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<2, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let served = sim.connect_ready();
    let refused = sim.connect();
    assert_eq!(
        sim.replies(refused),
        vec![Reply::error("ERR max number of clients reached")]
    );
    let start = sim.now;
    let close_ms = Timeouts::DEFAULT.close_ms;
    sim.run_until(start + close_ms);
    assert_eq!(sim.state(refused), smoltcp::socket::tcp::State::Closed);
    assert_eq!(sim.stats().aborted_closes, 1);
    let again = sim.connect();
    assert_eq!(
        sim.replies(again),
        vec![Reply::error("ERR max number of clients reached")]
    );
    assert_eq!(sim.request(served, &["PING"]), Reply::simple("PONG"));
}

fn with_input(
    buffers: &mut ServerBuffers,
    input: usize,
) -> Result<Sim<'_, 2, 16, 65536>, SetupError> {
    let mut config = sim::config(Timeouts::DEFAULT);
    config.buffers.input = input;
    config.buffers.tx = config.buffers.reply().max(config.buffers.tx);
    Sim::try_with(buffers, config, sim::store())
}

/// Where input buffers grow (the `alloc` feature, on in these tests), an input buffer far
/// smaller than the longest SET (longest key, longest value, every option) takes it. (Without
/// `alloc`, on a board, `Server::new` refuses an input buffer that cannot hold it, and the
/// firmware checks its buffers against its limits at build time.)
#[test]
fn input_buffer_smaller_than_the_longest_set_grows_to_take_it() {
    let mut buffers = ServerBuffers::default();
    let mut sim = with_input(&mut buffers, 64).expect("a 64-byte input buffer");
    let c = sim.connect_ready();
    let key = "k".repeat(sim::MAX_KEY);
    let value = "v".repeat(sim::MAX_VALUE);
    let longest = [
        "SET",
        &key,
        &value,
        "NX",
        "GET",
        "PX",
        "-9223372036854775808",
    ];
    assert_eq!(
        sim.request(c, &longest),
        Reply::error("ERR invalid expire time in 'set' command")
    );
    let now = sim.now;
    sim.server.set_unix_time(now, 1_700_000_000_000);
    let set = [
        "SET",
        &key,
        &value,
        "XX",
        "GET",
        "PXAT",
        "9223372036854775807",
    ];
    assert_eq!(sim.request(c, &set), Reply::Nil);
    let set = [
        "SET",
        &key,
        &value,
        "NX",
        "GET",
        "PX",
        // As long as any: 19 digits, within range once the Unix time is added (Redis checks
        // relative times against it).
        "9223370000000000000",
    ];
    assert_eq!(sim.request(c, &set), Reply::Nil);
    assert_eq!(sim.request(c, &["GET", &key]), Reply::bulk(&value));
    assert!(sim.is_open(c));
}

/// Sets a server up over lent memory of these sizes; the error, if it refuses.
fn setup_error(
    config: net_shell::ServerConfig,
    sockets: usize,
    clients: usize,
    timers: usize,
    buffer: usize,
) -> Option<SetupError> {
    use net_shell::smoltcp::iface::SocketStorage;
    use net_shell::timer_core::TimeoutSlot;
    use net_shell::{ClientSlot, ServerMemory};
    let mut link = sim::link(0).0;
    let store = sim::store::<16, 4096>().0;
    let sockets = Vec::leak((0..sockets).map(|_| SocketStorage::EMPTY).collect());
    let clients = Vec::leak((0..clients).map(|_| ClientSlot::default()).collect());
    let timers: &mut [TimeoutSlot<u16>] =
        Vec::leak((0..timers).map(|_| TimeoutSlot::new()).collect());
    let write_timers: &mut [TimeoutSlot<u16>] =
        Vec::leak((0..clients.len()).map(|_| TimeoutSlot::new()).collect());
    let buffer = Vec::leak(vec![0u8; buffer]);
    let memory = ServerMemory::lent(sockets, clients, timers, write_timers, buffer);
    net_shell::Server::new(config, store, memory, &mut link, 0).err()
}

#[test]
fn setup_refuses_what_cannot_work() {
    let config = sim::config(Timeouts::DEFAULT);
    let sizes = config.buffers;
    let needed = sizes.bytes_needed(4);
    assert_eq!(setup_error(config, 5, 4, 4, needed), None);
    assert_eq!(
        setup_error(config, 4, 4, 4, needed),
        Some(SetupError::TooFewSocketSlots { needed: 5 })
    );
    assert_eq!(
        setup_error(config, 5, 4, 4, needed - 1),
        Some(SetupError::BufferTooSmall { needed })
    );
    assert_eq!(
        setup_error(config, 5, 4, 3, needed),
        Some(SetupError::TooFewTimerSlots { needed: 4 })
    );
    let mut small_tx = config;
    small_tx.buffers.tx = sizes.reply() - 1;
    assert!(matches!(
        setup_error(small_tx, 5, 4, 4, small_tx.buffers.bytes_needed(4)),
        Some(SetupError::SendBufferTooSmall { .. })
    ));
    assert_eq!(
        setup_error(config, 2, 1, 1, sizes.bytes_needed(1)),
        Some(SetupError::TooFewConnections)
    );
}

/// `maxclients` and `maxmemory`: shown by `CONFIG GET` and `INFO`, and moved by `CONFIG SET`
/// within the memory the server and the store were given, with Redis' errors outside it.
#[test]
fn maxclients_and_maxmemory_move_within_the_memory_given() {
    let mut config = sim::config(Timeouts::DEFAULT);
    config.capacity.max_clients = 2;
    config.capacity.max_memory = 2048;
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 256, 65536> = Sim::with(&mut buffers, config, sim::store());
    let c = sim.connect_ready();
    let pair = |name: &str, value: &str| Reply::Array(vec![Reply::bulk(name), Reply::bulk(value)]);
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "maxclients"]),
        pair("maxclients", "2")
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "maxmemory"]),
        pair("maxmemory", "2048")
    );
    let info = sim.request(c, &["INFO"]).text();
    assert_eq!(info_field(&info, "maxclients"), 2, "{info}");
    assert_eq!(info_field(&info, "maxmemory"), 2048, "{info}");
    assert_eq!(info_field(&info, "maxmemory_in_force"), 2048, "{info}");

    // maxmemory: a write past it gets -OOM and loses nothing; raising it makes room. Each
    // key takes a 1,024-byte block (8 + 1 + 1,000, rounded up to a size class), and the key
    // table the first key brings counts too, as Redis counts its dictionary: two keys need
    // more than 2048 bytes.
    let value = "v".repeat(1000);
    assert_eq!(sim.request(c, &["SET", "a", &value]), Reply::ok());
    let info = sim.request(c, &["INFO", "memory"]).text();
    assert_eq!(info_field(&info, "used_memory_dataset"), 1024, "{info}");
    assert!(info_field(&info, "used_memory_table") > 0, "{info}");
    // What keys and values may take: 2048 less the table, too little for a second block.
    assert!(info_field(&info, "maxmemory_in_force") < 2048, "{info}");
    assert_eq!(sim.request(c, &["SET", "b", &value]), Reply::error(OOM));
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "maxmemory", "1mb"]),
        Reply::error(
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be at most 65456, the memory the store was given at start"
        )
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "maxmemory", "3kb"]),
        Reply::ok()
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "maxmemory"]),
        pair("maxmemory", "3072")
    );
    assert_eq!(sim.request(c, &["SET", "b", &value]), Reply::ok());
    // Lowered below what is used: every key stays, new writes are refused.
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "maxmemory", "1k"]),
        Reply::ok()
    );
    assert_eq!(sim.request(c, &["SET", "d", "x"]), Reply::error(OOM));
    assert_eq!(sim.request(c, &["DBSIZE"]), int(2));
    assert_eq!(sim.request(c, &["GET", "a"]), Reply::bulk(&value));
    // 0 is Redis' "no limit": all of the store's memory.
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "maxmemory", "0"]),
        Reply::ok()
    );
    assert_eq!(sim.request(c, &["SET", "d", &value]), Reply::ok());

    // maxclients: a client past it is refused with Redis' error, whatever sockets are free.
    let second = sim.connect_ready();
    let refused = sim.connect();
    assert_eq!(
        sim.replies(refused),
        vec![Reply::error("ERR max number of clients reached")]
    );
    for (value, error) in [
        ("0", "argument must be between 1 and 4294967295 inclusive"),
        (
            "4",
            "The server was started with slots for 3 clients, try with 3",
        ),
        ("x", "argument couldn't be parsed into an integer"),
    ] {
        assert_eq!(
            sim.request(c, &["CONFIG", "SET", "maxclients", value]),
            Reply::error(&format!(
                "ERR CONFIG SET failed (possibly related to argument 'maxclients') - {error}"
            ))
        );
    }
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "maxclients", "3"]),
        Reply::ok()
    );
    let third = sim.connect_ready();
    assert_eq!(sim.request(third, &["PING"]), Reply::Simple("PONG".into()));
    assert_eq!(sim.request(second, &["PING"]), Reply::Simple("PONG".into()));
}
