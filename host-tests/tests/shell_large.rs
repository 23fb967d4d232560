//! Long requests and large replies on the simulated network, where input buffers grow (the
//! `alloc` feature): values longer than the input, send and reply buffers, commands with more
//! arguments than the parser's array, and Redis' limits (`proto-max-bulk-len`,
//! `client-query-buffer-limit`).

use host_tests::sim::{self, Reply, Sim, SizedStore};
use net_shell::store::{Store, StoreMemory};
use net_shell::{ServerBuffers, ServerConfig, Timeouts};

/// Keys up to 64 bytes, values up to 2 MiB, in a 4 MiB store.
fn big_store() -> SizedStore<4096, { 4 << 20 }> {
    SizedStore(Store::new(
        StoreMemory::allocate(4096, 4 << 20),
        64,
        2 << 20,
    ))
}

/// Small buffers: 1 KiB input (it grows), 2 KiB send buffer, 2 KiB window.
fn small_buffers() -> ServerConfig {
    let mut config = sim::config(Timeouts::DEFAULT);
    config.buffers.input = 1024;
    config.buffers.rx = 2048;
    config.buffers.tx = config.buffers.reply().max(2048);
    config
}

/// A value that shows where each byte was: bytes differ along it.
fn pattern(len: usize) -> String {
    (0..len)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect()
}

#[test]
fn values_larger_than_every_buffer_are_set_and_read_back_byte_for_byte() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 4096, { 4 << 20 }> = Sim::with(&mut buffers, small_buffers(), big_store());
    let c = sim.connect_ready();
    for len in [1000, 5000, 100_000, 1 << 20] {
        let value = pattern(len);
        assert_eq!(
            sim.request(c, &["SET", "big", &value]),
            Reply::ok(),
            "{len}"
        );
        assert_eq!(sim.request(c, &["STRLEN", "big"]), Reply::Int(len as i64));
        assert_eq!(
            sim.request(c, &["GET", "big"]),
            Reply::bulk(&value),
            "{len}"
        );
        let appended = sim.request(c, &["APPEND", "big", "!"]);
        assert_eq!(appended, Reply::Int(len as i64 + 1));
    }
    // Another client is served meanwhile, and this one goes on.
    let other = sim.connect_ready();
    assert_eq!(sim.request(other, &["PING"]), Reply::Simple("PONG".into()));
    assert_eq!(sim.request(c, &["DBSIZE"]), Reply::Int(1));
}

#[test]
fn commands_with_thousands_of_arguments_run() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 4096, { 4 << 20 }> = Sim::with(&mut buffers, small_buffers(), big_store());
    let c = sim.connect_ready();
    let keys: Vec<String> = (0..3000).map(|i| format!("key:{i:05}")).collect();
    let mut mset = vec!["MSET".to_string()];
    for key in &keys {
        mset.push(key.clone());
        mset.push(format!("v{key}"));
    }
    let mset: Vec<&str> = mset.iter().map(String::as_str).collect();
    assert_eq!(sim.request(c, &mset), Reply::ok());
    let mut exists = vec!["EXISTS"];
    exists.extend(keys.iter().map(String::as_str));
    exists.push("missing");
    assert_eq!(sim.request(c, &exists), Reply::Int(3000));
    let mut mget = vec!["MGET"];
    mget.extend(keys.iter().map(String::as_str).take(100));
    let Reply::Array(values) = sim.request(c, &mget) else {
        panic!("MGET answers an array");
    };
    assert_eq!(values[99], Reply::bulk("vkey:00099"));
    let mut del = vec!["DEL"];
    del.extend(keys.iter().map(String::as_str));
    assert_eq!(sim.request(c, &del), Reply::Int(3000));
    assert_eq!(sim.request(c, &["DBSIZE"]), Reply::Int(0));
}

#[test]
fn bulk_over_proto_max_bulk_len_is_redis_protocol_error() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 4096, { 4 << 20 }> = Sim::with(&mut buffers, small_buffers(), big_store());
    let c = sim.connect_ready();
    let pair = |name: &str, value: &str| Reply::Array(vec![Reply::bulk(name), Reply::bulk(value)]);
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "proto-max-bulk-len"]),
        pair("proto-max-bulk-len", "536870912")
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "client-query-buffer-limit"]),
        pair("client-query-buffer-limit", "1073741824")
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "proto-max-bulk-len", "1000"]),
        Reply::error("ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive")
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "proto-max-bulk-len", "1mb"]),
        Reply::ok()
    );
    sim.send(c, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n");
    sim.settle();
    assert_eq!(
        sim.replies(c),
        vec![Reply::error("ERR Protocol error: invalid bulk length")]
    );
    assert!(sim.closed_by_server(c));
}

/// Past `client-query-buffer-limit` the client is disconnected without a reply, as by Redis;
/// what it sent before runs, and other clients go on.
#[test]
fn request_over_the_query_buffer_limit_closes_that_client_only() {
    let mut config = small_buffers();
    config.capacity.query_buffer_limit = 8192;
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 4096, { 4 << 20 }> = Sim::with(&mut buffers, config, big_store());
    let c = sim.connect_ready();
    let other = sim.connect_ready();
    let mut pipeline = sim::encode_str(&["SET", "before", "kept"]);
    let value = pattern(10_000);
    pipeline.extend(sim::encode_str(&["MSET", "a", &value, "b", "c"]));
    sim.send(c, &pipeline);
    sim.settle();
    assert_eq!(sim.replies(c), vec![Reply::ok()]);
    assert!(sim.closed_by_server(c));
    assert_eq!(sim.request(other, &["GET", "before"]), Reply::bulk("kept"));
    assert_eq!(sim.request(other, &["EXISTS", "a", "b"]), Reply::Int(0));
}

/// Queued commands count against the query buffer limit: past it, the client is closed
/// without a reply (as for a long request); other clients go on.
#[test]
fn queued_commands_count_against_the_query_buffer_limit() {
    let mut config = small_buffers();
    config.capacity.query_buffer_limit = 8192;
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 4096, { 4 << 20 }> = Sim::with(&mut buffers, config, big_store());
    let c = sim.connect_ready();
    let other = sim.connect_ready();
    assert_eq!(sim.request(c, &["MULTI"]), Reply::ok());
    let value = pattern(1000);
    let mut queued = 0;
    while sim.is_open(c) && queued < 20 {
        sim.send_command(c, &["SET", "k", &value]);
        queued += 1;
    }
    let replies = sim.replies(c);
    assert!(
        replies.iter().all(|r| *r == Reply::simple("QUEUED")),
        "{replies:?}"
    );
    assert!((7..=9).contains(&replies.len()), "{} queued", replies.len());
    assert!(sim.closed_by_server(c));
    assert_eq!(sim.request(other, &["EXISTS", "k"]), Reply::Int(0));
}

/// A value over 64 KiB goes out from the store as the send buffer drains, not copied into a
/// reply buffer first; if the key is written before it has all gone out, the rest is gone, and
/// the connection is closed (the client sees a reply cut short), never sent another value's
/// bytes.
#[test]
fn large_get_streams_from_the_store_and_a_write_meanwhile_closes_that_client() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 4096, { 4 << 20 }> = Sim::with(&mut buffers, small_buffers(), big_store());
    let writer = sim.connect_ready();
    let value = pattern(300_000);
    assert_eq!(sim.request(writer, &["SET", "big", &value]), Reply::ok());
    // Read in full: the same bytes, in order.
    let reader = sim.connect_ready();
    assert_eq!(sim.request(reader, &["GET", "big"]), Reply::bulk(&value));
    // A reader that takes nothing yet holds the value mid-way; a write then ends it.
    let slow = sim.connect_with(4096, 65536);
    sim.settle();
    sim.set_reading(slow, false);
    sim.send_command(slow, &["GET", "big"]);
    assert_eq!(sim.request(writer, &["SET", "big", "small"]), Reply::ok());
    sim.set_reading(slow, true);
    sim.settle();
    let got = sim.take(slow);
    assert!(got.len() < value.len(), "{} bytes", got.len());
    assert!(
        got.starts_with(b"$300000\r\nabcdefghij"),
        "{:?}",
        &got[..20]
    );
    assert!(sim.closed_by_server(slow));
    assert_eq!(sim.request(reader, &["GET", "big"]), Reply::bulk("small"));
}
