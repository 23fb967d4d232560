//! Hashes over the simulated network, where Redis cannot be the judge: `HRANDFIELD`'s random
//! draws (distinct fields of the hash for a positive count, fields of the hash with repeats for
//! a negative one). Byte-for-byte agreement with Redis (every deterministic reply) is in
//! `redis_diff`.

use host_tests::sim::{Client, Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

fn bulks(reply: Reply) -> Vec<Vec<u8>> {
    match reply {
        Reply::Array(items) => items
            .into_iter()
            .map(|item| match item {
                Reply::Bulk(bytes) => bytes,
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn hrandfield_draws_fields_of_the_hash() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    let fields: Vec<String> = (0..10).map(|i| format!("f{i}")).collect();
    let mut args = vec!["HSET".to_string(), "h".to_string()];
    for f in &fields {
        args.extend([f.clone(), format!("v{f}")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(sim.request(c, &args), Reply::Int(10));
    let is_field = |bytes: &[u8]| fields.iter().any(|f| f.as_bytes() == bytes);
    let mut seen = std::collections::BTreeSet::new();
    for round in 0..50 {
        sim.advance(1 + round % 3);
        let Reply::Bulk(one) = sim.request(c, &["HRANDFIELD", "h"]) else {
            panic!("HRANDFIELD h");
        };
        assert!(is_field(&one));
        seen.insert(one);
        // Distinct, in the hash's order.
        let some = bulks(sim.request(c, &["HRANDFIELD", "h", "4"]));
        assert_eq!(some.len(), 4);
        let positions: Vec<usize> = some
            .iter()
            .map(|f| {
                fields
                    .iter()
                    .position(|x| x.as_bytes() == f.as_slice())
                    .unwrap()
            })
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
        // With repeats.
        let many = bulks(sim.request(c, &["HRANDFIELD", "h", "-25"]));
        assert_eq!(many.len(), 25);
        assert!(many.iter().all(|f| is_field(f)));
        let pairs = bulks(sim.request(c, &["HRANDFIELD", "h", "-3", "WITHVALUES"]));
        assert_eq!(pairs.len(), 6);
        for pair in pairs.chunks(2) {
            assert_eq!(pair[1], [b"v".as_slice(), &pair[0]].concat());
        }
    }
    assert!(seen.len() > 3, "one field drawn over and over: {seen:?}");
    assert_eq!(
        sim.request(c, &["HRANDFIELD", "h", "-9223372036854775807"]),
        Reply::error("ERR reply too large")
    );
}

fn ints(values: &[i64]) -> Reply {
    Reply::Array(values.iter().map(|&v| Reply::Int(v)).collect())
}

/// Per-field time to live, with the replies Redis 7.4 documents (Debian's Redis 7.0 has no
/// such commands to compare with): the codes of `HEXPIRE` and its conditions, `HTTL` and its
/// kin, `HPERSIST`, `HSET` clearing a field's deadline and `HINCRBY` keeping it, the errors
/// about `FIELDS`.
#[test]
fn field_deadlines_answer_as_redis_documents() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let c = sim.connect_ready();
    sim.server.set_unix_time(sim.now, 1_700_000_000_000);
    assert_eq!(
        sim.request(c, &["HSET", "h", "a", "1", "b", "2", "n", "5"]),
        Reply::Int(3)
    );
    let hexpire = |sim: &mut Sim<4, 16, 65536>, args: &[&str]| {
        let mut words = vec!["HEXPIRE", "h"];
        words.extend_from_slice(args);
        sim.request(c, &words)
    };
    assert_eq!(
        hexpire(&mut sim, &["100", "FIELDS", "2", "a", "zz"]),
        ints(&[1, -2])
    );
    assert_eq!(
        hexpire(&mut sim, &["200", "NX", "FIELDS", "2", "a", "b"]),
        ints(&[0, 1])
    );
    assert_eq!(
        hexpire(&mut sim, &["50", "GT", "FIELDS", "2", "a", "n"]),
        ints(&[0, 0])
    );
    assert_eq!(
        hexpire(&mut sim, &["50", "LT", "FIELDS", "2", "a", "n"]),
        ints(&[1, 1])
    );
    assert_eq!(
        hexpire(&mut sim, &["60", "XX", "FIELDS", "1", "a"]),
        ints(&[1])
    );
    assert_eq!(
        sim.request(c, &["HTTL", "h", "FIELDS", "4", "a", "b", "n", "zz"]),
        ints(&[60, 200, 50, -2])
    );
    assert_eq!(
        sim.request(c, &["HPTTL", "h", "FIELDS", "1", "a"]),
        ints(&[60_000])
    );
    assert_eq!(
        sim.request(c, &["HEXPIRETIME", "h", "FIELDS", "1", "a"]),
        ints(&[1_700_000_060])
    );
    assert_eq!(
        sim.request(c, &["HPEXPIRETIME", "h", "FIELDS", "1", "a"]),
        ints(&[1_700_000_060_000])
    );
    // HINCRBY keeps the deadline, HSET clears it, HPERSIST removes it.
    assert_eq!(sim.request(c, &["HINCRBY", "h", "n", "1"]), Reply::Int(6));
    assert_eq!(
        sim.request(c, &["HTTL", "h", "FIELDS", "1", "n"]),
        ints(&[50])
    );
    assert_eq!(sim.request(c, &["HSET", "h", "n", "7"]), Reply::Int(0));
    assert_eq!(
        sim.request(c, &["HTTL", "h", "FIELDS", "1", "n"]),
        ints(&[-1])
    );
    assert_eq!(
        sim.request(c, &["HPERSIST", "h", "FIELDS", "3", "a", "n", "zz"]),
        ints(&[1, -1, -2])
    );
    // A time not in the future deletes the field (2).
    assert_eq!(hexpire(&mut sim, &["0", "FIELDS", "1", "a"]), ints(&[2]));
    assert_eq!(sim.request(c, &["HEXISTS", "h", "a"]), Reply::Int(0));
    assert_eq!(
        sim.request(c, &["HPEXPIREAT", "h", "1", "FIELDS", "1", "b"]),
        ints(&[2])
    );
    assert_eq!(
        sim.request(c, &["HGETALL", "h"]),
        Reply::Array(vec![Reply::bulk("n"), Reply::bulk("7")])
    );
    // No such key: -2 for each field.
    assert_eq!(
        sim.request(c, &["HEXPIRE", "nokey", "10", "FIELDS", "2", "a", "b"]),
        ints(&[-2, -2])
    );
    assert_eq!(
        sim.request(c, &["HTTL", "nokey", "FIELDS", "1", "a"]),
        ints(&[-2])
    );
    for (args, text) in [
        (
            &["HEXPIRE", "h", "10", "a", "b", "c"][..],
            "ERR Mandatory argument FIELDS is missing or not at the right position",
        ),
        (
            &["HEXPIRE", "h", "10", "FIELDS", "0", "a"],
            "ERR Parameter `numFields` should be greater than 0",
        ),
        (
            &["HEXPIRE", "h", "10", "FIELDS", "2", "a"],
            "ERR The `numfields` parameter must match the number of arguments",
        ),
        (
            &["HEXPIRE", "h", "-1", "FIELDS", "1", "a"],
            "ERR invalid expire time, must be >= 0",
        ),
        (
            &["HEXPIRE", "h", "x", "FIELDS", "1", "a"],
            "ERR value is not an integer or out of range",
        ),
        (
            &["HTTL", "h", "FIELDS", "x", "a"],
            "ERR Number of fields must be a positive integer",
        ),
    ] {
        assert_eq!(sim.request(c, args), Reply::error(text), "{args:?}");
    }
    assert_eq!(sim.request(c, &["SET", "s", "v"]), Reply::ok());
    assert!(matches!(
        sim.request(c, &["HEXPIRE", "s", "10", "FIELDS", "1", "a"]),
        Reply::Error(text) if text.starts_with("WRONGTYPE")
    ));
}

/// A field is gone the tick after its deadline, by its timer (its `hexpired` event goes out
/// in that poll), never before; a hash whose last field expires is deleted (`del`); a renamed
/// hash keeps its fields' deadlines.
#[test]
fn fields_expire_at_their_tick_and_an_emptied_hash_goes() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let c = sim.connect_ready();
    let listener = sim.connect_ready();
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "notify-keyspace-events", "Egh"]),
        Reply::ok()
    );
    let args: Vec<&[u8]> = vec![b"PSUBSCRIBE", b"__keyevent@0__:*"];
    sim.send(listener, &host_tests::sim::encode(&args));
    let _ = sim.replies(listener);
    assert_eq!(
        sim.request(c, &["HSET", "h", "a", "1", "b", "2"]),
        Reply::Int(2)
    );
    assert_eq!(
        sim.request(c, &["HPEXPIRE", "h", "100", "FIELDS", "1", "a"]),
        ints(&[1])
    );
    assert_eq!(
        sim.request(c, &["HPEXPIRE", "h", "250", "FIELDS", "1", "b"]),
        ints(&[1])
    );
    let start = sim.now;
    let heard = |sim: &mut Sim<4, 16, 65536>| {
        sim.replies(listener)
            .into_iter()
            .map(|reply| match reply {
                Reply::Array(parts) => match &parts[2] {
                    Reply::Bulk(channel) => String::from_utf8_lossy(channel).into_owned(),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        heard(&mut sim),
        [
            "__keyevent@0__:hset",
            "__keyevent@0__:hexpire",
            "__keyevent@0__:hexpire"
        ]
    );
    // Through its deadline the field lives; the tick after, its timer removes it.
    sim.advance(100);
    assert_eq!(sim.now, start + 100);
    assert_eq!(sim.request(c, &["HGET", "h", "a"]), Reply::bulk("1"));
    assert_eq!(heard(&mut sim), Vec::<String>::new());
    sim.advance(1);
    assert_eq!(heard(&mut sim), ["__keyevent@0__:hexpired"]);
    assert_eq!(
        sim.request(c, &["HGETALL", "h"]),
        Reply::Array(vec![Reply::bulk("b"), Reply::bulk("2")])
    );
    // Renamed, the last field keeps its deadline, and the emptied hash goes with it.
    assert_eq!(sim.request(c, &["RENAME", "h", "h2"]), Reply::ok());
    let _ = heard(&mut sim);
    let gone = sim.run_until_true(start + 1_000, |sim| sim.server.store().is_empty());
    assert_eq!(gone, Some(start + 251));
    assert_eq!(
        heard(&mut sim),
        ["__keyevent@0__:hexpired", "__keyevent@0__:del"]
    );
    assert_eq!(sim.request(c, &["EXISTS", "h2"]), Reply::Int(0));
}

/// `HGETDEL`, `HGETEX` and `HSETEX` with the replies Redis 8.0 documents (no Redis that new
/// here to compare with): values, nil for a field that is not there, deadlines given or
/// cleared, `FNX`/`FXX`, and a hash that goes with its last field.
#[test]
fn hgetdel_hgetex_hsetex_answer_as_redis_documents() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let c = sim.connect_ready();
    sim.server.set_unix_time(sim.now, 1_700_000_000_000);
    let nil_or = |v: Option<&str>| v.map_or(Reply::Nil, Reply::bulk);
    assert_eq!(
        sim.request(
            c,
            &["HSETEX", "h", "FNX", "EX", "100", "FIELDS", "2", "a", "1", "b", "2"]
        ),
        Reply::Int(1)
    );
    assert_eq!(
        sim.request(c, &["HTTL", "h", "FIELDS", "2", "a", "b"]),
        ints(&[100, 100])
    );
    assert_eq!(
        sim.request(c, &["HSETEX", "h", "FNX", "FIELDS", "1", "a", "9"]),
        Reply::Int(0)
    );
    assert_eq!(
        sim.request(
            c,
            &["HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", "1", "a", "3"]
        ),
        Reply::Int(1)
    );
    assert_eq!(
        sim.request(c, &["HTTL", "h", "FIELDS", "1", "a"]),
        ints(&[100])
    );
    assert_eq!(
        sim.request(
            c,
            &["HSETEX", "h", "FXX", "FIELDS", "2", "a", "4", "zz", "5"]
        ),
        Reply::Int(0)
    );
    assert_eq!(
        sim.request(c, &["HSETEX", "h", "FIELDS", "1", "a", "5"]),
        Reply::Int(1)
    );
    assert_eq!(
        sim.request(c, &["HTTL", "h", "FIELDS", "1", "a"]),
        ints(&[-1])
    );
    assert_eq!(
        sim.request(
            c,
            &["HGETEX", "h", "PX", "5000", "FIELDS", "3", "a", "b", "zz"]
        ),
        Reply::Array(vec![nil_or(Some("5")), nil_or(Some("2")), nil_or(None)])
    );
    assert_eq!(
        sim.request(c, &["HPTTL", "h", "FIELDS", "2", "a", "b"]),
        ints(&[5000, 5000])
    );
    assert_eq!(
        sim.request(c, &["HGETEX", "h", "PERSIST", "FIELDS", "1", "a"]),
        Reply::Array(vec![nil_or(Some("5"))])
    );
    assert_eq!(
        sim.request(c, &["HTTL", "h", "FIELDS", "1", "a"]),
        ints(&[-1])
    );
    assert_eq!(
        sim.request(c, &["HGETEX", "h", "FIELDS", "1", "b"]),
        Reply::Array(vec![nil_or(Some("2"))])
    );
    assert_eq!(
        sim.request(c, &["HGETDEL", "h", "FIELDS", "2", "a", "zz"]),
        Reply::Array(vec![nil_or(Some("5")), nil_or(None)])
    );
    assert_eq!(sim.request(c, &["HEXISTS", "h", "a"]), Reply::Int(0));
    assert_eq!(
        sim.request(c, &["HGETDEL", "h", "FIELDS", "1", "b"]),
        Reply::Array(vec![nil_or(Some("2"))])
    );
    assert_eq!(
        sim.request(c, &["EXISTS", "h"]),
        Reply::Int(0),
        "gone with its last field"
    );
    for (args, text) in [
        (
            &["HGETEX", "h", "EX", "-1", "FIELDS", "1", "a"][..],
            "ERR invalid expire time, must be >= 0",
        ),
        (
            &["HGETEX", "h", "EX", "x", "FIELDS", "1", "a"],
            "ERR value is not an integer or out of range",
        ),
        (
            &["HSETEX", "h", "FNX", "FXX", "FIELDS", "1", "a", "1"],
            "ERR Only one of FXX or FNX arguments can be specified",
        ),
        (
            &["HSETEX", "h", "FIELDS", "2", "a", "1"],
            "ERR wrong number of arguments for 'hsetex' command",
        ),
        (
            &["HGETDEL", "h", "FIELD", "1", "a"],
            "ERR Mandatory argument FIELDS is missing or not at the right position",
        ),
    ] {
        assert_eq!(sim.request(c, args), Reply::error(text), "{args:?}");
    }
}

/// The keyevent channels heard by `listener` since last asked.
fn events_heard(sim: &mut Sim<4, 16, 65536>, listener: Client) -> Vec<String> {
    sim.replies(listener)
        .into_iter()
        .map(|reply| match reply {
            Reply::Array(parts) => match &parts[2] {
                Reply::Bulk(channel) => String::from_utf8_lossy(channel)
                    .trim_start_matches("__keyevent@0__:")
                    .to_owned(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .collect()
}

/// A server whose unix time is 1,700,000,000,000 ms, a client, and a listener to every
/// keyevent of classes `g`, `h` and `n`.
fn with_listener(sim: &mut Sim<4, 16, 65536>) -> (Client, Client) {
    let c = sim.connect_ready();
    let listener = sim.connect_ready();
    sim.server.set_unix_time(sim.now, 1_700_000_000_000);
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "notify-keyspace-events", "Eghn"]),
        Reply::ok()
    );
    let args: Vec<&[u8]> = vec![b"PSUBSCRIBE", b"__keyevent@0__:*"];
    sim.send(listener, &host_tests::sim::encode(&args));
    let _ = sim.replies(listener);
    (c, listener)
}

/// The `HEXPIRE` family as Redis 7.4's source reads it (src/t_hash.c, `hexpireGenericCommand`,
/// `httlGenericCommand`, `hpersistCommand`; its tests in
/// tests/unit/type/hash-field-expire.tcl): the key's type is checked first, then the time,
/// then the condition, then `FIELDS`; times from 0 to 2^46 - 1 ms of Unix time; `HTTL` and
/// `HEXPIRETIME` round seconds up; fields named twice are handled one after the other; one
/// event per command (`hdel` when a field was deleted, else `hexpire`).
#[test]
fn hexpire_family_follows_redis_source() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let (c, listener) = with_listener(&mut sim);
    assert_eq!(sim.request(c, &["SET", "s", "v"]), Reply::ok());
    let _ = events_heard(&mut sim, listener);
    // The type first: WRONGTYPE even with a bad time or count ("checkType" comes first).
    for args in [
        &["HEXPIRE", "s", "-1", "FIELDS", "1", "a"][..],
        &["HTTL", "s", "FIELDS", "0", "a"],
        &["HPERSIST", "s", "NOFIELDS", "1", "a"],
        &["HGETDEL", "s", "FIELDS", "x", "a"],
        &["HGETEX", "s", "EX", "-5", "FIELDS", "1", "a"],
    ] {
        assert!(
            matches!(sim.request(c, args), Reply::Error(t) if t.starts_with("WRONGTYPE")),
            "{args:?}"
        );
    }
    assert_eq!(
        sim.request(c, &["HSET", "h", "a", "1", "b", "2", "c", "3"]),
        Reply::Int(3)
    );
    // The time before FIELDS: a negative time is named even when FIELDS is missing.
    // hash-field-expire.tcl, "Verify that the expire time does not overflow".
    let unix_s: i64 = 1_700_000_000;
    let unix_ms: i64 = 1_700_000_000_000;
    let limit: i64 = 1 << 46;
    for (args, text) in [
        (
            vec![
                "HEXPIRE".to_owned(),
                "h".into(),
                "-1".into(),
                "a".into(),
                "b".into(),
                "c".into(),
            ],
            "ERR invalid expire time, must be >= 0".to_owned(),
        ),
        (
            vec![
                "HEXPIRE".to_owned(),
                "h".into(),
                (limit / 1000).to_string(),
                "FIELDS".into(),
                "1".into(),
                "a".into(),
            ],
            "ERR invalid expire time in 'hexpire' command".to_owned(),
        ),
        (
            vec![
                "HEXPIREAT".to_owned(),
                "h".into(),
                ((1i64 << 48) / 1000 + unix_s + 100).to_string(),
                "FIELDS".into(),
                "1".into(),
                "a".into(),
            ],
            "ERR invalid expire time in 'hexpireat' command".to_owned(),
        ),
        (
            vec![
                "HPEXPIRE".to_owned(),
                "h".into(),
                (limit - unix_ms + 100).to_string(),
                "FIELDS".into(),
                "1".into(),
                "a".into(),
            ],
            "ERR invalid expire time in 'hpexpire' command".to_owned(),
        ),
        (
            vec![
                "HPEXPIREAT".to_owned(),
                "h".into(),
                limit.to_string(),
                "FIELDS".into(),
                "1".into(),
                "a".into(),
            ],
            "ERR invalid expire time in 'hpexpireat' command".to_owned(),
        ),
    ] {
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(sim.request(c, &words), Reply::error(&text), "{words:?}");
    }
    // "parameter expire-time near limit of 2^46": just below it is taken.
    let below = (limit - unix_ms - 1000).to_string();
    assert_eq!(
        sim.request(c, &["HPEXPIRE", "h", &below, "FIELDS", "1", "c"]),
        ints(&[1])
    );
    assert_eq!(
        sim.request(c, &["HPERSIST", "h", "FIELDS", "1", "c"]),
        ints(&[1])
    );
    // HTTL rounds up (1.4 s shows as 2, 0.3 s as 1), where TTL would round to the nearest;
    // HEXPIRETIME too.
    assert_eq!(
        sim.request(c, &["HPEXPIRE", "h", "1400", "FIELDS", "1", "a"]),
        ints(&[1])
    );
    assert_eq!(
        sim.request(c, &["HTTL", "h", "FIELDS", "1", "a"]),
        ints(&[2])
    );
    assert_eq!(
        sim.request(c, &["HEXPIRETIME", "h", "FIELDS", "1", "a"]),
        ints(&[unix_s + 2])
    );
    sim.advance(1100);
    assert_eq!(
        sim.request(c, &["HPTTL", "h", "FIELDS", "1", "a"]),
        ints(&[300])
    );
    assert_eq!(
        sim.request(c, &["HTTL", "h", "FIELDS", "1", "a"]),
        ints(&[1])
    );
    assert_eq!(
        events_heard(&mut sim, listener),
        ["new", "hset", "hexpire", "hpersist", "hexpire"]
    );
    // A field named twice sees what its first naming did: NX takes it once.
    assert_eq!(
        sim.request(c, &["HPEXPIRE", "h", "5000", "NX", "FIELDS", "2", "b", "b"]),
        ints(&[1, 0])
    );
    // "HPEXPIREAT - field not exists or TTL is in the past": 2, 2, -2, 0 and one hdel event.
    assert_eq!(
        sim.request(c, &["HSET", "h", "f1", "v1", "f2", "v2", "f4", "v4"]),
        Reply::Int(3)
    );
    assert_eq!(
        sim.request(c, &["HEXPIRE", "h", "1000", "NX", "FIELDS", "1", "f4"]),
        ints(&[1])
    );
    let _ = events_heard(&mut sim, listener);
    let past = ((unix_s - 1) * 1000).to_string();
    assert_eq!(
        sim.request(
            c,
            &[
                "HPEXPIREAT",
                "h",
                &past,
                "NX",
                "FIELDS",
                "4",
                "f1",
                "f2",
                "f3",
                "f4"
            ]
        ),
        ints(&[2, 2, -2, 0])
    );
    assert_eq!(events_heard(&mut sim, listener), ["hdel"]);
    // Deleted and given a deadline in one command: still one event, hdel.
    assert_eq!(
        sim.request(c, &["HPEXPIRE", "h", "0", "FIELDS", "2", "a", "a"]),
        ints(&[2, -2])
    );
    assert_eq!(events_heard(&mut sim, listener), ["hdel"]);
    // The last fields deleted: hdel, then del.
    assert_eq!(
        sim.request(c, &["HEXPIRE", "h", "0", "FIELDS", "3", "b", "c", "f4"]),
        ints(&[2, 2, 2])
    );
    assert_eq!(events_heard(&mut sim, listener), ["hdel", "del"]);
    assert_eq!(sim.request(c, &["EXISTS", "h"]), Reply::Int(0));
}

/// `HGETDEL`, `HGETEX` and `HSETEX` as Redis 8's source reads them (src/t_hash.c,
/// `hgetdelCommand`, `hgetexCommand`, `hsetexParseArgs`, `hsetexCommand`, `parseExpireTime`):
/// a time of 0 is taken and deletes; a field named twice is handled in turn; `HSETEX` reads
/// its options before the key's type, with Redis' errors; the events each publishes.
#[test]
fn hgetdel_hgetex_hsetex_follow_redis_source() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let (c, listener) = with_listener(&mut sim);
    let nil_or = |v: Option<&str>| v.map_or(Reply::Nil, Reply::bulk);
    assert_eq!(
        sim.request(c, &["HSET", "h", "a", "1", "b", "2", "c", "3"]),
        Reply::Int(3)
    );
    // HGETDEL: a field named twice is there the first time only.
    assert_eq!(
        sim.request(c, &["HGETDEL", "h", "FIELDS", "2", "a", "a"]),
        Reply::Array(vec![nil_or(Some("1")), nil_or(None)])
    );
    // HGETEX EX 0: the value, then the field is gone (hdel).
    assert_eq!(
        sim.request(c, &["HGETEX", "h", "EX", "0", "FIELDS", "2", "b", "b"]),
        Reply::Array(vec![nil_or(Some("2")), nil_or(None)])
    );
    // PERSIST on a field without a deadline changes nothing and says nothing.
    assert_eq!(
        sim.request(c, &["HGETEX", "h", "PERSIST", "FIELDS", "1", "c"]),
        Reply::Array(vec![nil_or(Some("3"))])
    );
    assert_eq!(
        sim.request(c, &["HGETEX", "h", "PX", "100", "FIELDS", "1", "c"]),
        Reply::Array(vec![nil_or(Some("3"))])
    );
    assert_eq!(
        sim.request(c, &["HGETEX", "h", "PERSIST", "FIELDS", "1", "c"]),
        Reply::Array(vec![nil_or(Some("3"))])
    );
    // The option only right after the key: PERSIST elsewhere is where FIELDS should be.
    assert_eq!(
        sim.request(c, &["HGETEX", "h", "FIELDS", "1", "c", "PERSIST"]),
        Reply::error("ERR The `numfields` parameter must match the number of arguments")
    );
    assert_eq!(
        events_heard(&mut sim, listener),
        ["new", "hset", "hdel", "hdel", "hexpire", "hpersist"]
    );
    // HSETEX with a time in the past on a new key: set, then deleted; the key never stays.
    assert_eq!(
        sim.request(c, &["HSETEX", "n", "PX", "0", "FIELDS", "1", "a", "1"]),
        Reply::Int(1)
    );
    assert_eq!(sim.request(c, &["EXISTS", "n"]), Reply::Int(0));
    assert_eq!(
        events_heard(&mut sim, listener),
        ["new", "hset", "hdel", "del"]
    );
    assert_eq!(
        sim.request(c, &["HSETEX", "h", "EX", "10", "FIELDS", "1", "d", "4"]),
        Reply::Int(1)
    );
    assert_eq!(events_heard(&mut sim, listener), ["hset", "hexpire"]);
    // FXX on no key: 0, and no key made.
    assert_eq!(
        sim.request(c, &["HSETEX", "none", "FXX", "FIELDS", "1", "a", "1"]),
        Reply::Int(0)
    );
    assert_eq!(sim.request(c, &["EXISTS", "none"]), Reply::Int(0));
    assert_eq!(sim.request(c, &["SET", "s", "v"]), Reply::ok());
    // HSETEX reads its options before the key's type.
    for (args, text) in [
        (
            &[
                "HSETEX", "s", "EX", "10", "KEEPTTL", "FIELDS", "1", "a", "1",
            ][..],
            "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified",
        ),
        (
            &["HSETEX", "s", "KEEPTTL", "KEEPTTL", "FIELDS", "1", "a", "1"],
            "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified",
        ),
        (
            &["HSETEX", "s", "FXX", "FXX", "FIELDS", "1", "a", "1"],
            "ERR Only one of FXX or FNX arguments can be specified",
        ),
        (
            &["HSETEX", "s", "NX", "FIELDS", "1", "a", "1"],
            "ERR unknown argument: NX",
        ),
        (
            &["HSETEX", "s", "FIELDS", "0", "a", "1"],
            "ERR invalid number of fields",
        ),
        (
            &["HSETEX", "s", "FIELDS", "1", "a", "1", "b"],
            "ERR wrong number of arguments for 'hsetex' command",
        ),
        (
            &["HSETEX", "s", "EX", "-1", "FIELDS", "1", "a", "1"],
            "ERR invalid expire time, must be >= 0",
        ),
        (
            &[
                "HSETEX",
                "s",
                "PXAT",
                "70368744177664",
                "FIELDS",
                "1",
                "a",
                "1",
            ],
            "ERR invalid expire time in 'hsetex' command",
        ),
    ] {
        assert_eq!(sim.request(c, args), Reply::error(text), "{args:?}");
    }
    assert!(matches!(
        sim.request(c, &["HSETEX", "s", "EX", "10", "FIELDS", "1", "a", "1"]),
        Reply::Error(t) if t.starts_with("WRONGTYPE")
    ));
}

/// A hash's fields share one timer: fields due at the same tick go together, with one
/// `hexpired` for the hash (as Redis' active expiry publishes one per hash); a deadline moved
/// later makes its timer fire for nothing and re-arm, one moved earlier moves the timer; each
/// field still goes exactly the tick after its deadline.
#[test]
fn a_hash_timer_expires_each_field_at_its_tick() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let (c, listener) = with_listener(&mut sim);
    assert_eq!(
        sim.request(
            c,
            &["HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4", "keep", "5"]
        ),
        Reply::Int(5)
    );
    let start = sim.now;
    for (ms, fields) in [("100", &["a", "b"][..]), ("300", &["c"]), ("200", &["d"])] {
        let mut words = vec!["HPEXPIRE", "h", ms, "FIELDS"];
        let count = fields.len().to_string();
        words.push(&count);
        words.extend_from_slice(fields);
        assert_eq!(sim.request(c, &words), ints(&vec![1; fields.len()]));
    }
    // b moved later (to 400), c moved earlier (to 50).
    assert_eq!(
        sim.request(c, &["HPEXPIRE", "h", "400", "FIELDS", "1", "b"]),
        ints(&[1])
    );
    assert_eq!(
        sim.request(c, &["HPEXPIRE", "h", "50", "FIELDS", "1", "c"]),
        ints(&[1])
    );
    let _ = events_heard(&mut sim, listener);
    let fields_at = |sim: &mut Sim<4, 16, 65536>| match sim.request(c, &["HKEYS", "h"]) {
        Reply::Array(items) => items.len(),
        other => panic!("{other:?}"),
    };
    let mut gone_at = Vec::new();
    let mut left = fields_at(&mut sim);
    while left > 1 && sim.now < start + 1_000 {
        sim.advance(1);
        let now = fields_at(&mut sim);
        if now != left {
            gone_at.push((
                sim.now - start,
                left - now,
                events_heard(&mut sim, listener),
            ));
            left = now;
        }
    }
    assert_eq!(
        gone_at,
        [
            (51, 1, vec!["hexpired".to_owned()]),
            (101, 1, vec!["hexpired".to_owned()]),
            (201, 1, vec!["hexpired".to_owned()]),
            (401, 1, vec!["hexpired".to_owned()]),
        ]
    );
    // Two fields due at the same tick: one event.
    assert_eq!(
        sim.request(c, &["HSET", "h", "x", "1", "y", "2"]),
        Reply::Int(2)
    );
    assert_eq!(
        sim.request(c, &["HPEXPIRE", "h", "10", "FIELDS", "2", "x", "y"]),
        ints(&[1, 1])
    );
    let _ = events_heard(&mut sim, listener);
    sim.advance(11);
    assert_eq!(events_heard(&mut sim, listener), ["hexpired"]);
    assert_eq!(fields_at(&mut sim), 1);
}

/// `hash-max-listpack-entries|value` decide `OBJECT ENCODING` as in Redis 7.0: a write that
/// passes them gives a hash an index for good; lowering them, or a delete, changes no hash
/// already written. (The same transitions are compared with Redis byte for byte in
/// `redis_diff`; this runs without a `redis-server`.)
#[test]
fn hash_encoding_follows_the_configured_thresholds() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    let encoding = |sim: &mut Sim<4, 16, 65536>, key: &str| match sim
        .request(c, &["OBJECT", "ENCODING", key])
    {
        Reply::Bulk(bytes) => String::from_utf8(bytes).unwrap(),
        other => panic!("{other:?}"),
    };
    let set = |sim: &mut Sim<4, 16, 65536>, args: &[&str]| {
        let mut line = vec!["CONFIG", "SET"];
        line.extend_from_slice(args);
        assert_eq!(sim.request(c, &line), Reply::ok(), "{args:?}");
    };
    set(
        &mut sim,
        &[
            "hash-max-ziplist-entries",
            "3",
            "hash-max-listpack-value",
            "4",
        ],
    );
    sim.request(c, &["HSET", "h", "a", "1", "b", "2", "c", "3"]);
    assert_eq!(encoding(&mut sim, "h"), "listpack");
    sim.request(c, &["HSET", "h", "d", "4"]);
    assert_eq!(encoding(&mut sim, "h"), "hashtable");
    // A field given twice is one field.
    sim.request(c, &["HSET", "t", "a", "1", "b", "2", "a", "3", "b", "4"]);
    assert_eq!(encoding(&mut sim, "t"), "listpack");
    sim.request(c, &["HSET", "v", "a", "12345"]);
    assert_eq!(encoding(&mut sim, "v"), "hashtable");
    sim.request(c, &["HINCRBY", "i", "n", "1234"]);
    assert_eq!(encoding(&mut sim, "i"), "listpack");
    sim.request(c, &["HINCRBY", "i", "n", "10000"]);
    assert_eq!(encoding(&mut sim, "i"), "hashtable");

    sim.request(c, &["HSET", "low", "a", "1", "b", "2", "c", "3"]);
    set(&mut sim, &["hash-max-listpack-entries", "1"]);
    assert_eq!(
        encoding(&mut sim, "low"),
        "listpack",
        "lowering converts nothing"
    );
    sim.request(c, &["HDEL", "low", "a"]);
    assert_eq!(encoding(&mut sim, "low"), "listpack", "nor does a delete");
    assert_eq!(sim.request(c, &["HSETNX", "low", "b", "9"]), Reply::Int(0));
    assert_eq!(
        encoding(&mut sim, "low"),
        "listpack",
        "nor an HSETNX that sets nothing"
    );
    sim.request(c, &["HSET", "low", "b", "9"]);
    assert_eq!(encoding(&mut sim, "low"), "hashtable", "a write does");
    set(&mut sim, &["hash-max-listpack-entries", "512"]);
    sim.request(c, &["HDEL", "low", "b"]);
    assert_eq!(encoding(&mut sim, "low"), "hashtable", "an index stays");
}

/// `HLEN` of hashes with an index (a value over 64 bytes) whose fields have deadlines at exact
/// ticks, against a model, while deadlines are moved and removed (`HPERSIST`) and fields
/// deleted, and time moves a tick at a time. The field sweep is given a budget of one hash, so
/// at each tick `HLEN`s sent before it arrive while most due hashes are not yet swept: the
/// count is the model's whether it comes from the hash's header (O(1)) or is counted.
#[test]
fn hlen_counts_live_fields_at_every_tick_while_the_sweep_is_behind() {
    use host_tests::sim::{self, encode_str};
    use net_shell::store::{Store, StoreMemory};
    use std::collections::BTreeMap;
    const HASHES: usize = 4;
    let mut config = sim::config(Timeouts::new(0, 10_000, 10_000));
    config.expire_budget = 1;
    let mut buffers = ServerBuffers::default();
    // Values up to 16 KiB: an indexed hash of 40 fields is over the simulation's usual 1 KiB.
    let store = Store::new(StoreMemory::allocate(16, 65536), 64, 16 << 10);
    let mut sim: Sim<4, 16, 65536> = Sim::with(&mut buffers, config, sim::SizedStore(store));
    let c = sim.connect_ready();
    let big = "v".repeat(70);
    // Per hash: field -> its last live tick (`None`: no deadline).
    let mut model: Vec<BTreeMap<String, Option<u64>>> = vec![BTreeMap::new(); HASHES];
    for (h, fields) in model.iter_mut().enumerate() {
        let key = format!("h{h}");
        assert_eq!(sim.request(c, &["HSET", &key, "big", &big]), Reply::Int(1));
        fields.insert("big".into(), None);
        for f in 0..40 {
            let field = format!("f{f}");
            assert_eq!(sim.request(c, &["HSET", &key, &field, "1"]), Reply::Int(1));
            fields.insert(field, None);
        }
        assert_eq!(
            sim.request(c, &["OBJECT", "ENCODING", &key]),
            Reply::bulk("hashtable")
        );
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let start = sim.now;
    while sim.now < start + 200 {
        // A few changes at this tick.
        for _ in 0..next(4) {
            let h = next(HASHES as u64) as usize;
            let key = format!("h{h}");
            let field = format!("f{}", next(40));
            let there = model[h].contains_key(&field);
            match next(6) {
                0..=2 => {
                    let ms = 1 + next(30);
                    let reply = sim.request(
                        c,
                        &["HPEXPIRE", &key, &ms.to_string(), "FIELDS", "1", &field],
                    );
                    if there {
                        assert_eq!(reply, ints(&[1]));
                        model[h].insert(field, Some(sim.now + ms));
                    } else {
                        assert_eq!(reply, ints(&[-2]));
                    }
                }
                3 => {
                    let reply = sim.request(c, &["HPERSIST", &key, "FIELDS", "1", &field]);
                    if let Some(deadline) = model[h].get_mut(&field) {
                        let code = if deadline.take().is_some() { 1 } else { -1 };
                        assert_eq!(reply, ints(&[code]));
                    }
                }
                4 => {
                    let reply = sim.request(c, &["HDEL", &key, &field]);
                    assert_eq!(
                        reply,
                        Reply::Int(i64::from(model[h].remove(&field).is_some()))
                    );
                }
                _ => {
                    assert_eq!(
                        sim.request(c, &["HSET", &key, &field, "2"]),
                        Reply::Int(i64::from(!there))
                    );
                    model[h].insert(field, None);
                }
            }
        }
        // `HLEN` of each hash, sent now and read at the next tick's first poll, which sweeps
        // one hash before it reads them.
        for h in 0..HASHES {
            sim.queue(c, &encode_str(&["HLEN", &format!("h{h}")]));
        }
        sim.jump(1);
        let now = sim.now;
        let replies = sim.wait_replies(c, HASHES, now + 100);
        let expected: Vec<Reply> = model
            .iter_mut()
            .map(|fields| {
                fields.retain(|_, deadline| deadline.is_none_or(|at| at >= now));
                Reply::Int(fields.len() as i64)
            })
            .collect();
        assert_eq!(replies, expected, "at tick {}", now - start);
    }
}
