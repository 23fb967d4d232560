//! Redis 7 command semantics over the simulated network: SET options, counters, DEL/EXISTS,
//! FLUSHALL, DBSIZE, INFO, CONFIG, COMMAND and the error texts clients match on.

use host_tests::sim;
use host_tests::sim::{info_field, Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

type Small<'m> = Sim<'m, 4, 256, 65536>;

fn sim(buffers: &mut ServerBuffers) -> Small<'_> {
    Sim::new(buffers, Timeouts::DEFAULT)
}

fn int(n: i64) -> Reply {
    Reply::Int(n)
}

const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
const SYNTAX: &str = "ERR syntax error";

#[test]
fn set_nx_xx_get_keepttl_follow_redis() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["SET", "k", "v", "NX"]), Reply::ok());
    assert_eq!(sim.request(c, &["SET", "k", "w", "NX"]), Reply::Nil);
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::bulk("v"));
    assert_eq!(sim.request(c, &["SET", "z", "v", "XX"]), Reply::Nil);
    assert_eq!(sim.request(c, &["EXISTS", "z"]), int(0));
    assert_eq!(sim.request(c, &["SET", "k", "w", "xx"]), Reply::ok());
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::bulk("w"));
    // GET returns the old value.
    assert_eq!(sim.request(c, &["SET", "k", "x", "GET"]), Reply::bulk("w"));
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::bulk("x"));
    assert_eq!(sim.request(c, &["SET", "new", "1", "GET"]), Reply::Nil);
    assert_eq!(sim.request(c, &["GET", "new"]), Reply::bulk("1"));
    // NX GET (Redis 7): the old value, nothing written.
    assert_eq!(
        sim.request(c, &["SET", "k", "y", "NX", "GET"]),
        Reply::bulk("x")
    );
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::bulk("x"));
    assert_eq!(
        sim.request(c, &["SET", "none", "y", "XX", "GET"]),
        Reply::Nil
    );
    assert_eq!(sim.request(c, &["EXISTS", "none"]), int(0));
    // KEEPTTL keeps it, a plain SET drops it.
    assert_eq!(sim.request(c, &["SET", "t", "1", "EX", "100"]), Reply::ok());
    sim.advance(1000);
    assert_eq!(sim.request(c, &["SET", "t", "2", "KEEPTTL"]), Reply::ok());
    assert_eq!(sim.request(c, &["PTTL", "t"]), int(99_000));
    assert_eq!(
        sim.request(c, &["SET", "t", "3", "GET", "KEEPTTL"]),
        Reply::bulk("2")
    );
    assert_eq!(sim.request(c, &["PTTL", "t"]), int(99_000));
    assert_eq!(sim.request(c, &["SET", "t", "4"]), Reply::ok());
    assert_eq!(sim.request(c, &["TTL", "t"]), int(-1));
    // SET with EX replaces a TTL.
    assert_eq!(sim.request(c, &["SET", "t", "5", "PX", "300"]), Reply::ok());
    assert_eq!(sim.request(c, &["SET", "t", "6", "EX", "7"]), Reply::ok());
    assert_eq!(sim.request(c, &["TTL", "t"]), int(7));

    for args in [
        &["SET", "k", "v", "NX", "XX"][..],
        &["SET", "k", "v", "XX", "NX"],
        &["SET", "k", "v", "KEEPTTL", "EX", "10"],
        &["SET", "k", "v", "EX", "10", "KEEPTTL"],
        &["SET", "k", "v", "EX", "10", "PX", "10"],
        &["SET", "k", "v", "EX"],
        &["SET", "k", "v", "BOGUS"],
    ] {
        assert_eq!(sim.request(c, args), Reply::error(SYNTAX), "{args:?}");
    }
    assert_eq!(
        sim.request(c, &["SET", "k", "v", "EX", "ten"]),
        Reply::error(NOT_INTEGER)
    );
    for amount in ["0", "-1"] {
        assert_eq!(
            sim.request(c, &["SET", "k", "v", "EX", amount]),
            Reply::error("ERR invalid expire time in 'set' command")
        );
    }
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::bulk("x"));
    assert_eq!(
        sim.request(c, &["SET", "k"]),
        Reply::error("ERR wrong number of arguments for 'set' command")
    );
}

#[test]
fn getdel_returns_and_removes() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["SET", "k", "v", "EX", "10"]), Reply::ok());
    assert_eq!(sim.request(c, &["GETDEL", "k"]), Reply::bulk("v"));
    assert_eq!(sim.request(c, &["GETDEL", "k"]), Reply::Nil);
    assert_eq!(sim.request(c, &["EXISTS", "k"]), int(0));
    assert_eq!(sim.server.store().len(), 0);
    assert_eq!(sim.server.store().volatile_len(), 0);
    // Deleting is not expiring.
    assert_eq!(sim.server.store().expired_keys(), 0);
}

#[test]
fn incr_decr_count_keep_ttl_and_refuse_bad_values() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["INCR", "n"]), int(1));
    assert_eq!(sim.request(c, &["INCRBY", "n", "10"]), int(11));
    assert_eq!(sim.request(c, &["DECR", "n"]), int(10));
    assert_eq!(sim.request(c, &["DECRBY", "n", "3"]), int(7));
    assert_eq!(sim.request(c, &["INCRBY", "n", "-17"]), int(-10));
    assert_eq!(sim.request(c, &["DECRBY", "fresh", "5"]), int(-5));
    assert_eq!(sim.request(c, &["GET", "n"]), Reply::bulk("-10"));
    assert_eq!(sim.request(c, &["TTL", "n"]), int(-1));

    // The TTL survives.
    assert_eq!(
        sim.request(c, &["SET", "t", "5", "PX", "5000"]),
        Reply::ok()
    );
    sim.advance(1000);
    assert_eq!(sim.request(c, &["INCR", "t"]), int(6));
    assert_eq!(sim.request(c, &["INCRBY", "t", "4"]), int(10));
    assert_eq!(sim.request(c, &["DECR", "t"]), int(9));
    assert_eq!(sim.request(c, &["PTTL", "t"]), int(4000));
    sim.advance(4001);
    assert_eq!(sim.request(c, &["GET", "t"]), Reply::Nil);
    assert_eq!(sim.request(c, &["INCR", "t"]), int(1));
    assert_eq!(sim.request(c, &["TTL", "t"]), int(-1));

    // Not integers.
    for value in [
        "abc",
        " 1",
        "1 ",
        "01",
        "+1",
        "1.5",
        "",
        "99999999999999999999",
    ] {
        assert_eq!(sim.request(c, &["SET", "s", value]), Reply::ok());
        assert_eq!(
            sim.request(c, &["INCR", "s"]),
            Reply::error(NOT_INTEGER),
            "{value:?}"
        );
        assert_eq!(sim.request(c, &["GET", "s"]), Reply::bulk(value));
    }
    assert_eq!(
        sim.request(c, &["INCRBY", "n", "x"]),
        Reply::error(NOT_INTEGER)
    );
    assert_eq!(
        sim.request(c, &["DECRBY", "n", "1.0"]),
        Reply::error(NOT_INTEGER)
    );

    // Overflow leaves the value alone.
    assert_eq!(
        sim.request(c, &["SET", "max", "9223372036854775807"]),
        Reply::ok()
    );
    assert_eq!(
        sim.request(c, &["INCR", "max"]),
        Reply::error("ERR increment or decrement would overflow")
    );
    assert_eq!(
        sim.request(c, &["INCRBY", "max", "1"]),
        Reply::error("ERR increment or decrement would overflow")
    );
    assert_eq!(
        sim.request(c, &["GET", "max"]),
        Reply::bulk("9223372036854775807")
    );
    assert_eq!(
        sim.request(c, &["SET", "min", "-9223372036854775808"]),
        Reply::ok()
    );
    assert_eq!(
        sim.request(c, &["DECR", "min"]),
        Reply::error("ERR increment or decrement would overflow")
    );
    // Redis 7 refuses negating i64::MIN with its own text.
    assert_eq!(
        sim.request(c, &["DECRBY", "n", "-9223372036854775808"]),
        Reply::error("ERR decrement would overflow")
    );
    assert_eq!(sim.request(c, &["GET", "n"]), Reply::bulk("-10"));
    assert_eq!(
        sim.request(c, &["INCR"]),
        Reply::error("ERR wrong number of arguments for 'incr' command")
    );
}

#[test]
fn del_and_exists_count_keys() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    for key in ["a", "b", "c"] {
        assert_eq!(sim.request(c, &["SET", key, "v"]), Reply::ok());
    }
    assert_eq!(sim.request(c, &["EXISTS", "a", "b", "x"]), int(2));
    // Redis counts a key named twice twice.
    assert_eq!(sim.request(c, &["EXISTS", "a", "a", "a"]), int(3));
    assert_eq!(sim.request(c, &["DEL", "a", "x", "a"]), int(1));
    assert_eq!(sim.request(c, &["UNLINK", "b", "c"]), int(2));
    assert_eq!(sim.request(c, &["DEL", "b"]), int(0));
    assert_eq!(sim.request(c, &["DBSIZE"]), int(0));
    // A key past its deadline is neither counted nor deleted.
    assert_eq!(sim.request(c, &["SET", "t", "v", "PX", "10"]), Reply::ok());
    sim.now += 11;
    assert_eq!(sim.request(c, &["EXISTS", "t"]), int(0));
    assert_eq!(sim.request(c, &["SET", "u", "v", "PX", "10"]), Reply::ok());
    sim.now += 11;
    assert_eq!(sim.request(c, &["DEL", "u"]), int(0));
    assert_eq!(
        sim.request(c, &["DEL"]),
        Reply::error("ERR wrong number of arguments for 'del' command")
    );
}

#[test]
fn flushall_empties_store_and_timers() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    for i in 0..50 {
        let key = format!("k{i}");
        assert_eq!(
            sim.request(c, &["SET", &key, "v", "PX", &(100 + i).to_string()]),
            Reply::ok()
        );
    }
    assert_eq!(sim.request(c, &["SET", "p", "v"]), Reply::ok());
    assert_eq!(sim.request(c, &["DBSIZE"]), int(51));
    assert_eq!(sim.request(c, &["FLUSHALL"]), Reply::ok());
    assert_eq!(sim.request(c, &["DBSIZE"]), int(0));
    assert_eq!(sim.server.store().volatile_len(), 0);
    assert_eq!(sim.server.store().bytes_used(), 0);
    assert_eq!(sim.request(c, &["FLUSHALL", "SYNC"]), Reply::ok());
    assert_eq!(sim.request(c, &["FLUSHDB", "ASYNC"]), Reply::ok());
    assert_eq!(sim.request(c, &["FLUSHALL", "NOW"]), Reply::error(SYNTAX));
    // New keys work, old deadlines do nothing.
    assert_eq!(
        sim.request(c, &["SET", "k1", "new", "PX", "1000"]),
        Reply::ok()
    );
    sim.advance(200);
    assert_eq!(sim.request(c, &["GET", "k1"]), Reply::bulk("new"));
    assert_eq!(sim.server.store().expired_keys(), 0);
    sim.advance(801);
    assert_eq!(sim.server.store().len(), 0);
    assert_eq!(sim.server.store().expired_keys(), 1);
}

#[test]
fn dbsize_counts_keys_until_removed() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["DBSIZE"]), int(0));
    assert_eq!(sim.request(c, &["SET", "a", "1"]), Reply::ok());
    assert_eq!(sim.request(c, &["SET", "b", "1", "PX", "5"]), Reply::ok());
    assert_eq!(sim.request(c, &["SET", "a", "2"]), Reply::ok());
    assert_eq!(sim.request(c, &["DBSIZE"]), int(2));
    sim.advance(6);
    assert_eq!(sim.request(c, &["DBSIZE"]), int(1));
    assert_eq!(
        sim.request(c, &["DBSIZE", "x"]),
        Reply::error("ERR wrong number of arguments for 'dbsize' command")
    );
}

#[test]
fn info_reports_expiry_and_close_counters() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(1_000, 500, 500));
    let c = sim.connect_ready();
    let idle = sim.connect_ready();
    assert_eq!(sim.request(c, &["SET", "k", "v", "PX", "10"]), Reply::ok());
    sim.advance(10);
    // Keep `c` busy while `idle` times out.
    sim.run_until(600);
    assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
    sim.run_until(1_000);
    assert!(sim.closed_by_server(idle));
    sim.close(idle);
    let info = sim.request(c, &["INFO"]).text();
    for section in ["# Server", "# Clients", "# Memory", "# Stats", "# Keyspace"] {
        assert!(info.contains(section), "{info}");
    }
    assert_eq!(info_field(&info, "expired_keys"), 1);
    assert_eq!(info_field(&info, "idle_timeout_closes"), 1);
    assert_eq!(info_field(&info, "read_timeout_closes"), 0);
    assert_eq!(info_field(&info, "write_timeout_closes"), 0);
    assert_eq!(info_field(&info, "protocol_error_closes"), 0);
    assert_eq!(info_field(&info, "rejected_connections"), 0);
    assert_eq!(info_field(&info, "connected_clients"), 1);
    assert_eq!(info_field(&info, "maxclients"), 3);
    assert_eq!(info_field(&info, "total_connections_received"), 2);
    assert_eq!(info_field(&info, "idle_timeout_ms"), 1_000);
    assert_eq!(info_field(&info, "uptime_in_seconds"), 1);
    assert!(info.contains("redis_version:7"), "{info}");
    assert!(info.ends_with("\r\n"), "{info:?}");

    let stats = sim.request(c, &["INFO", "stats"]).text();
    assert!(stats.starts_with("# Stats\r\n"), "{stats}");
    assert!(!stats.contains("# Server"), "{stats}");
    assert_eq!(info_field(&stats, "expired_keys"), 1);
    let keyspace = sim.request(c, &["INFO", "keyspace"]).text();
    assert_eq!(keyspace, "# Keyspace\r\n");
    assert_eq!(sim.request(c, &["SET", "a", "1", "EX", "9"]), Reply::ok());
    assert_eq!(sim.request(c, &["SET", "b", "1"]), Reply::ok());
    let keyspace = sim.request(c, &["INFO", "KEYSPACE"]).text();
    assert!(keyspace.contains("db0:keys=2,expires=1,"), "{keyspace}");
    assert_eq!(sim.stats().idle_timeout_closes, 1);
}

/// As in Redis, unknown commands and wrong arity are rejected uncounted; a known command that
/// answers an error (a syntax error) still counts.
#[test]
fn total_commands_processed_counts_like_redis() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let before = sim.stats().total_commands_processed;
    assert!(sim.request(c, &["NOSUCH", "x"]).error_text().is_some());
    assert!(sim.request(c, &["GET"]).error_text().is_some());
    assert_eq!(sim.stats().total_commands_processed, before);
    assert_eq!(
        sim.request(c, &["SET", "k", "v", "NX", "XX"]),
        Reply::error("ERR syntax error")
    );
    assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
    assert_eq!(sim.stats().total_commands_processed, before + 2);
}

/// HELLO negotiates the protocol like Redis: the handshake as a flat array in RESP2, NOPROTO
/// for a version it does not speak; CLIENT ID agrees with HELLO's id.
#[test]
fn hello_answers_resp2_handshake_and_noproto_for_unknown_versions() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let first = sim.connect_ready();
    let second = sim.connect_ready();
    let handshake = |id: i64| {
        Reply::Array(vec![
            Reply::bulk("server"),
            Reply::bulk("redis"),
            Reply::bulk("version"),
            Reply::bulk("7.0.0"),
            Reply::bulk("proto"),
            int(2),
            Reply::bulk("id"),
            int(id),
            Reply::bulk("mode"),
            Reply::bulk("standalone"),
            Reply::bulk("role"),
            Reply::bulk("master"),
            Reply::bulk("modules"),
            Reply::Array(vec![]),
        ])
    };
    assert_eq!(sim.request(first, &["CLIENT", "ID"]), int(1));
    assert_eq!(sim.request(second, &["CLIENT", "ID"]), int(2));
    assert_eq!(sim.request(second, &["HELLO"]), handshake(2));
    assert_eq!(
        sim.request(
            first,
            &["HELLO", "2", "AUTH", "default", "pw", "SETNAME", "app"]
        ),
        handshake(1)
    );
    assert_eq!(
        sim.request(first, &["HELLO", "4"]),
        Reply::error("NOPROTO unsupported protocol version")
    );
    assert_eq!(
        sim.request(first, &["HELLO", "two"]),
        Reply::error("ERR Protocol version is not an integer or out of range")
    );
    assert_eq!(
        sim.request(first, &["HELLO", "2", "AUTH", "default"]),
        Reply::error("ERR Syntax error in HELLO option 'AUTH'")
    );
    // The connection is still in RESP2 and working.
    assert_eq!(sim.request(first, &["PING"]), Reply::simple("PONG"));
}

/// Uptime counts from the tick the server was built at, not from tick 0.
#[test]
fn info_uptime_counts_from_server_start() {
    let start = 86_400_000 * 3; // the host had been up three days
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 256, 65536> = Sim::build_at(
        &mut buffers,
        sim::config(Timeouts::DEFAULT),
        sim::store(),
        start,
    )
    .expect("setup");
    sim.poll_server();
    let c = sim.connect_ready();
    sim.run_until(start + 2_500);
    let info = sim.request(c, &["INFO", "server"]).text();
    assert_eq!(info_field(&info, "uptime_in_seconds"), 2);
    assert_eq!(info_field(&info, "uptime_in_days"), 0);
}

#[test]
fn config_get_persistence_params_answers_fixed_values_and_refuses_set() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    // redis-benchmark asks for these at start and warns when it gets nothing.
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "save"]),
        Reply::Array(vec![Reply::bulk("save"), Reply::bulk("")])
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "appendonly"]),
        Reply::Array(vec![Reply::bulk("appendonly"), Reply::bulk("no")])
    );
    let refused = sim.request(c, &["CONFIG", "SET", "appendonly", "yes"]);
    assert!(
        refused
            .error_text()
            .is_some_and(|t| t.ends_with("can't set immutable config")),
        "{refused:?}"
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "appendonly"]),
        Reply::Array(vec![Reply::bulk("appendonly"), Reply::bulk("no")])
    );
}

#[test]
fn config_get_and_set_timeouts() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let pair = |name: &str, value: &str| vec![Reply::bulk(name), Reply::bulk(value)];
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "timeout"]),
        Reply::Array(pair("timeout", "300"))
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "read-timeout-ms"]),
        Reply::Array(pair("read-timeout-ms", "10000"))
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "nothing-like-this"]),
        Reply::Array(vec![])
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "timeout", "5"]),
        Reply::ok()
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "idle-timeout-ms"]),
        Reply::Array(pair("idle-timeout-ms", "5000"))
    );
    assert_eq!(
        sim.request(
            c,
            &[
                "CONFIG",
                "SET",
                "read-timeout-ms",
                "250",
                "WRITE-TIMEOUT-MS",
                "750",
                "idle-timeout-ms",
                "1500"
            ]
        ),
        Reply::ok()
    );
    let timeouts = sim.server.timeouts();
    assert_eq!(
        (timeouts.idle_ms, timeouts.read_ms, timeouts.write_ms),
        (1500, 250, 750)
    );
    let all = sim.request(c, &["CONFIG", "GET", "*timeout*"]);
    let mut expected = pair("timeout", "1");
    expected.extend(pair("idle-timeout-ms", "1500"));
    expected.extend(pair("read-timeout-ms", "250"));
    expected.extend(pair("write-timeout-ms", "750"));
    expected.extend(pair("handshake-timeout-ms", "2000"));
    assert_eq!(all, Reply::Array(expected));
    // A handshake timeout of 0 would keep half-open handshakes for good.
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "handshake-timeout-ms", "0"]),
        Reply::error("ERR CONFIG SET failed (possibly related to argument 'handshake-timeout-ms') - argument must be between 1 and 9223372036854775807 inclusive")
    );

    // All or nothing.
    let refused = sim.request(c, &["CONFIG", "SET", "timeout", "9", "no-such-option", "1"]);
    assert!(
        refused
            .error_text()
            .is_some_and(|t| t.starts_with("ERR Unknown option")),
        "{refused:?}"
    );
    let refused = sim.request(c, &["CONFIG", "SET", "timeout", "9", "maxmemory", "1x"]);
    assert_eq!(
        refused,
        Reply::error("ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value")
    );
    for bad in ["-1", "abc", "1.5", ""] {
        let refused = sim.request(c, &["CONFIG", "SET", "timeout", bad]);
        assert!(
            refused
                .error_text()
                .is_some_and(|t| t.starts_with("ERR CONFIG SET failed")),
            "{bad:?}: {refused:?}"
        );
    }
    assert_eq!(sim.server.timeouts().idle_ms, 1500);
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "timeout"]),
        Reply::error("ERR wrong number of arguments for 'config|set' command")
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "GET"]),
        Reply::error("ERR wrong number of arguments for 'config|get' command")
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "REWRITE"]),
        Reply::error("ERR The server is running without a config file")
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "RELOAD"]),
        Reply::error("ERR unknown subcommand 'RELOAD'. Try CONFIG HELP.")
    );
    // The new idle timeout applies from the next command on.
    let last = sim.now;
    assert_eq!(sim.run_until_closed(c, last + 10_000), Some(last + 1500));
}

#[test]
fn command_and_command_docs_answer_redis_cli() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert!(matches!(sim.request(c, &["COMMAND"]), Reply::Array(_)));
    assert!(matches!(
        sim.request(c, &["COMMAND", "DOCS"]),
        Reply::Array(_)
    ));
    assert!(matches!(
        sim.request(c, &["command", "docs", "get"]),
        Reply::Array(_)
    ));
    assert!(matches!(
        sim.request(c, &["COMMAND", "COUNT"]),
        Reply::Int(n) if n > 20
    ));
    assert_eq!(
        sim.request(c, &["COMMAND", "NOPE"]),
        Reply::error("ERR unknown subcommand 'NOPE'. Try COMMAND HELP.")
    );
    // redis-cli's handshake goes on to work.
    assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
    assert_eq!(sim.request(c, &["SELECT", "0"]), Reply::ok());
    assert_eq!(
        sim.request(c, &["SELECT", "1"]),
        Reply::error("ERR DB index is out of range")
    );
    assert_eq!(
        sim.request(c, &["CLIENT", "SETINFO", "lib-name", "redis-py"]),
        Reply::ok()
    );
}

#[test]
fn unknown_command_and_wrong_arity_use_redis_7_text() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(
        sim.request(c, &["FOO", "a", "b"]),
        Reply::error("ERR unknown command 'FOO', with args beginning with: 'a' 'b' ")
    );
    assert_eq!(
        sim.request(c, &["hullo"]),
        Reply::error("ERR unknown command 'hullo', with args beginning with: ")
    );
    // Every argument while the list is under 128 bytes, the last cut to fit, CR/LF as spaces.
    assert_eq!(
        sim.request(c, &["FOO", "a", "b", "c", "d", "e", "f"]),
        Reply::error(
            "ERR unknown command 'FOO', with args beginning with: 'a' 'b' 'c' 'd' 'e' 'f' "
        )
    );
    let (x100, y100) = ("x".repeat(100), "y".repeat(100));
    assert_eq!(
        sim.request(c, &["FOO", &x100, &y100, "z"]),
        Reply::Error(format!(
            "ERR unknown command 'FOO', with args beginning with: '{x100}' '{}' ",
            "y".repeat(25)
        ))
    );
    let long_name = "n".repeat(200);
    assert_eq!(
        sim.request(c, &[&long_name, "a\r\nb"]),
        Reply::Error(format!(
            "ERR unknown command '{}', with args beginning with: 'a  b' ",
            "n".repeat(128)
        ))
    );
    assert_eq!(
        sim.request(c, &["GET"]),
        Reply::error("ERR wrong number of arguments for 'get' command")
    );
    assert_eq!(
        sim.request(c, &["GET", "a", "b"]),
        Reply::error("ERR wrong number of arguments for 'get' command")
    );
    assert_eq!(sim.request(c, &["ECHO", "hi"]), Reply::bulk("hi"));
    assert_eq!(sim.request(c, &["PING", "hi"]), Reply::bulk("hi"));
    assert_eq!(sim.request(c, &["get", "x"]), Reply::Nil);
    // Errors do not close the connection.
    assert!(sim.is_open(c));
}

#[test]
fn quit_replies_ok_then_closes_and_frees_the_slot() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<2, 256, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["QUIT"]), Reply::ok());
    assert!(sim.closed_by_server(c));
    sim.close(c);
    assert_eq!(sim.stats().connected_clients, 0);
    let next = sim.connect_ready();
    assert_eq!(sim.request(next, &["DBSIZE"]), int(0));
}

#[test]
fn binary_keys_and_values_round_trip() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let key: &[u8] = b"k\x00\r\n\xff";
    let value: Vec<u8> = (0..=255u8).collect();
    assert_eq!(sim.request_bytes(c, &[b"SET", key, &value]), Reply::ok());
    assert_eq!(
        sim.request_bytes(c, &[b"GET", key]),
        Reply::Bulk(value.clone())
    );
    assert_eq!(sim.request_bytes(c, &[b"GET", b"k"]), Reply::Nil);
    assert_eq!(sim.request_bytes(c, &[b"SET", b"", b""]), Reply::ok());
    assert_eq!(sim.request_bytes(c, &[b"GET", b""]), Reply::Bulk(vec![]));
}

/// Error replies are counted as Redis counts them: `total_error_replies` in `INFO stats`, and by
/// code in `INFO errorstats` (unknown commands and wrong arity included).
#[test]
fn info_counts_error_replies_by_code() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let _ = sim.request(c, &["FOO"]);
    let _ = sim.request(c, &["GET"]);
    assert_eq!(sim.request(c, &["SET", "n", "x"]), Reply::ok());
    let _ = sim.request(c, &["INCR", "n"]);
    let _ = sim.request(c, &["HELLO", "4"]);
    let stats = sim.request(c, &["INFO", "stats"]).text();
    assert_eq!(info_field(&stats, "total_error_replies"), 4);
    let errors = sim.request(c, &["INFO", "errorstats"]).text();
    assert_eq!(
        errors,
        "# Errorstats\r\nerrorstat_ERR:count=3\r\nerrorstat_NOPROTO:count=1\r\n\r\n"
    );
    // Every section at once still fits the INFO buffer: it ends with the last section.
    let all = sim.request(c, &["INFO", "everything"]).text();
    assert!(all.contains("# Errorstats\r\n"), "{all}");
    assert!(
        all.trim_end()
            .ends_with("# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0"),
        "{all}"
    );
}

/// `CONFIG RESETSTAT` starts the counters again as Redis 7.0's does: commands, connections,
/// expired keys, error replies, `errorstats` and `commandstats` from zero (the next `INFO`
/// shows one command processed, as Redis' does); connected clients stay.
#[test]
fn config_resetstat_starts_the_counters_again() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(
        sim.request(c, &["SET", "gone", "v", "PX", "5"]),
        Reply::ok()
    );
    sim.advance(20);
    let _ = sim.request(c, &["NOSUCH"]);
    let _ = sim.request(c, &["GET"]);
    let before = sim.request(c, &["INFO", "stats"]).text();
    assert_eq!(info_field(&before, "expired_keys"), 1);
    assert_eq!(info_field(&before, "total_error_replies"), 2);
    assert_eq!(sim.request(c, &["CONFIG", "RESETSTAT"]), Reply::ok());
    let stats = sim.request(c, &["INFO", "stats"]).text();
    assert_eq!(info_field(&stats, "total_commands_processed"), 1);
    assert_eq!(info_field(&stats, "total_connections_received"), 0);
    assert_eq!(info_field(&stats, "expired_keys"), 0);
    assert_eq!(info_field(&stats, "total_error_replies"), 0);
    let clients = sim.request(c, &["INFO", "clients"]).text();
    assert_eq!(info_field(&clients, "connected_clients"), 1);
    assert_eq!(
        sim.request(c, &["INFO", "errorstats"]).text(),
        "# Errorstats\r\n\r\n"
    );
    assert_eq!(
        sim.request(c, &["INFO", "commandstats"]).text(),
        "# Commandstats\r\n\
         cmdstat_info:calls=3,rejected_calls=0,failed_calls=0\r\n\
         cmdstat_config|resetstat:calls=1,rejected_calls=0,failed_calls=0\r\n\r\n"
    );
    // Keys that expire after the reset count from zero.
    assert_eq!(sim.request(c, &["SET", "k", "v", "PX", "5"]), Reply::ok());
    sim.advance(20);
    let after = sim.request(c, &["INFO", "stats"]).text();
    assert_eq!(info_field(&after, "expired_keys"), 1);
}

/// `CLIENT LIST` shows every client served, with Redis' field names, and `CLIENT INFO` the
/// line of the client asking; `CLIENT KILL` ends the
/// clients it names (not the one asking, unless `SKIPME no`), and answers as Redis does.
#[test]
fn client_list_and_kill_see_every_connection() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let a = sim.connect_ready();
    let b = sim.connect_ready();
    let c = sim.connect_ready();
    assert_eq!(sim.request(b, &["CLIENT", "SETNAME", "bee"]), Reply::ok());
    let list = sim.request(a, &["CLIENT", "LIST"]).text();
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 3, "{list}");
    assert!(lines[0].starts_with("id=1 addr=10.0.0.2:"), "{list}");
    assert!(
        lines[1].contains(" name=bee age=0 idle=0 flags=N db=0 "),
        "{list}"
    );
    assert!(
        lines.iter().all(|l| l.ends_with(" user=default resp=2")),
        "{list}"
    );
    let b_addr = lines[1]
        .split(' ')
        .find_map(|f| f.strip_prefix("addr="))
        .unwrap()
        .to_owned();
    assert_eq!(
        sim.request(a, &["CLIENT", "LIST", "ID", "2"]).text(),
        format!("{}\n", lines[1])
    );
    // CLIENT INFO: the asking client's own line, as CLIENT LIST has it.
    assert_eq!(
        sim.request(b, &["CLIENT", "INFO"]).text(),
        format!("{}\n", lines[1])
    );
    // Old form: by address, +OK.
    assert_eq!(sim.request(a, &["CLIENT", "KILL", &b_addr]), Reply::ok());
    assert!(sim.closed_by_server(b));
    // New form: a count; the client asking is skipped unless SKIPME no.
    assert_eq!(
        sim.request(a, &["CLIENT", "KILL", "ID", "1"]),
        Reply::Int(0)
    );
    assert_eq!(
        sim.request(a, &["CLIENT", "KILL", "ID", "3"]),
        Reply::Int(1)
    );
    assert!(sim.closed_by_server(c));
    assert_eq!(
        sim.request(a, &["CLIENT", "KILL", "ID", "1", "SKIPME", "no"]),
        Reply::Int(1)
    );
    assert!(sim.closed_by_server(a));
    let d = sim.connect_ready();
    assert_eq!(
        sim.request(d, &["CLIENT", "LIST"]).text().lines().count(),
        1
    );
}

/// `HELLO 3` switches the connection to RESP3: the handshake is a map, nil is `_`, `CONFIG
/// GET` a map, `INFO` a verbatim string; `HELLO 2` switches back. Other connections keep RESP2.
#[test]
fn hello_3_switches_the_connection_to_resp3() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let other = sim.connect_ready();
    let raw = |sim: &mut Small, client, args: &[&str]| {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        sim.send(client, &sim::encode(&args));
        sim.settle();
        String::from_utf8(sim.take(client)).expect("text")
    };
    let hello = raw(&mut sim, c, &["HELLO", "3"]);
    assert!(
        hello.starts_with("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n"),
        "{hello}"
    );
    assert!(hello.contains("$5\r\nproto\r\n:3\r\n"), "{hello}");
    assert_eq!(raw(&mut sim, c, &["GET", "nokey"]), "_\r\n");
    assert_eq!(raw(&mut sim, c, &["MGET", "a", "b"]), "*2\r\n_\r\n_\r\n");
    assert_eq!(
        raw(&mut sim, c, &["CONFIG", "GET", "timeout"]),
        "%1\r\n$7\r\ntimeout\r\n$3\r\n300\r\n"
    );
    let info = raw(&mut sim, c, &["INFO", "server"]);
    assert!(
        info.starts_with('=') && info.contains("\r\ntxt:# Server\r\n"),
        "{info}"
    );
    assert_eq!(raw(&mut sim, other, &["GET", "nokey"]), "$-1\r\n");
    let back = raw(&mut sim, c, &["HELLO", "2"]);
    assert!(back.starts_with("*14\r\n"), "{back}");
    assert_eq!(raw(&mut sim, c, &["GET", "nokey"]), "$-1\r\n");
}

/// `INFO commandstats` counts each command's calls, the calls refused before running (wrong
/// arity) and those that answered an error, under Redis' `cmdstat_<name>` lines (subcommands
/// as `config|get`); it is not part of the default `INFO`, as in Redis. `mem_allocator` names
/// the host's allocator.
#[test]
fn info_commandstats_counts_calls_rejections_and_failures() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready(); // (it sends a PING)
    assert_eq!(sim.request(c, &["SET", "n", "x"]), Reply::ok());
    assert_eq!(sim.request(c, &["SET", "n", "1"]), Reply::ok());
    let _ = sim.request(c, &["INCR", "n"]);
    let _ = sim.request(c, &["SET", "n", "x"]);
    let _ = sim.request(c, &["INCR", "n"]); // not an integer: a failed call
    let _ = sim.request(c, &["GET"]); // wrong arity: a rejected call
    let _ = sim.request(c, &["CONFIG", "GET", "timeout"]);
    let _ = sim.request(c, &["NOSUCH"]); // unknown: not counted anywhere
    let stats = sim.request(c, &["INFO", "commandstats"]).text();
    assert_eq!(
        stats,
        "# Commandstats\r\n\
         cmdstat_get:calls=0,rejected_calls=1,failed_calls=0\r\n\
         cmdstat_set:calls=3,rejected_calls=0,failed_calls=0\r\n\
         cmdstat_incr:calls=2,rejected_calls=0,failed_calls=1\r\n\
         cmdstat_config|get:calls=1,rejected_calls=0,failed_calls=0\r\n\
         cmdstat_ping:calls=1,rejected_calls=0,failed_calls=0\r\n\r\n"
    );
    assert!(!sim.request(c, &["INFO"]).text().contains("Commandstats"));
    assert!(sim
        .request(c, &["INFO", "all"])
        .text()
        .contains("cmdstat_info:calls=2,"));
    let memory = sim.request(c, &["INFO", "memory"]).text();
    assert_eq!(info_field(&memory, "keys_used"), 1);
    assert!(memory.contains("\r\nmem_allocator:libc\r\n"), "{memory}");
}

/// `MEMORY USAGE` answers the bytes a key takes as `INFO memory` counts them: a larger value
/// adds exactly what it adds to `used_memory_dataset`, a time to live adds a timer slot and
/// `PERSIST` takes it back; nil for a missing or expired key; Redis' parsing and error texts.
#[test]
fn memory_usage_grows_with_the_value_and_counts_a_ttl() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let usage = |sim: &mut Small<'_>, key: &str| match sim.request(c, &["MEMORY", "USAGE", key]) {
        Reply::Int(n) => n,
        other => panic!("{other:?}"),
    };
    let dataset = |sim: &mut Small<'_>| {
        let memory = sim.request(c, &["INFO", "memory"]).text();
        info_field(&memory, "used_memory_dataset") as i64
    };
    assert_eq!(sim.request(c, &["SET", "k", "v"]), Reply::ok());
    let (small, small_dataset) = (usage(&mut sim, "k"), dataset(&mut sim));
    let value = "x".repeat(200);
    assert_eq!(sim.request(c, &["SET", "k", &value]), Reply::ok());
    let (large, large_dataset) = (usage(&mut sim, "k"), dataset(&mut sim));
    assert!(large >= small + 200, "{small} then {large}");
    assert_eq!(large - small, large_dataset - small_dataset);
    assert_eq!(sim.request(c, &["EXPIRE", "k", "10"]), int(1));
    let volatile = usage(&mut sim, "k");
    assert!(volatile > large, "{large} then {volatile}");
    assert_eq!(sim.request(c, &["PERSIST", "k"]), int(1));
    assert_eq!(usage(&mut sim, "k"), large);
    assert_eq!(
        sim.request(c, &["MEMORY", "USAGE", "k", "SAMPLES", "0", "samples", "5"]),
        int(large)
    );
    assert_eq!(sim.request(c, &["MEMORY", "USAGE", "none"]), Reply::Nil);
    assert_eq!(sim.request(c, &["SET", "t", "v", "PX", "5"]), Reply::ok());
    assert!(usage(&mut sim, "t") > small);
    sim.advance(6);
    assert_eq!(sim.request(c, &["MEMORY", "USAGE", "t"]), Reply::Nil);
    // Options are checked before the key is looked up, as Redis does.
    for (words, reply) in [
        (&["MEMORY", "USAGE", "none", "SAMPLES"][..], SYNTAX),
        (&["MEMORY", "USAGE", "none", "SAMPLES", "-1"], SYNTAX),
        (&["MEMORY", "USAGE", "none", "SAMPLES", "x"], NOT_INTEGER),
        (&["MEMORY", "USAGE", "none", "FOO", "1"], SYNTAX),
        (&["MEMORY", "USAGE", "k", "SAMPLES", "5", "extra"], SYNTAX),
        (
            &["MEMORY", "USAGE"],
            "ERR wrong number of arguments for 'memory|usage' command",
        ),
        (
            &["MEMORY"],
            "ERR wrong number of arguments for 'memory' command",
        ),
        (
            &["MEMORY", "STATS"],
            "ERR unknown subcommand 'STATS'. Try MEMORY HELP.",
        ),
    ] {
        assert_eq!(sim.request(c, words), Reply::error(reply), "{words:?}");
    }
    assert_eq!(sim.request(c, &["MEMORY", "PURGE"]), Reply::ok());
}
