//! Pub/sub and keyspace notifications over the simulated network: an expired event goes out in
//! the poll that removes the key (the timer kernel's showcase), subscribers are never idle-closed, a
//! closed subscriber is forgotten, and a RESP3 subscriber publishing to itself hears the
//! message before the reply. (Byte-for-byte agreement with Redis is in `redis_diff`.)

use host_tests::sim;
use host_tests::sim::{Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

type Small<'m> = Sim<'m, 4, 64, 16384>;

fn int(n: i64) -> Reply {
    Reply::Int(n)
}

/// Sends a command without waiting for its reply (a subscriber's replies come as messages).
fn send(sim: &mut Small, client: sim::Client, args: &[&str]) {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    sim.send(client, &sim::encode(&args));
    sim.settle();
}

#[test]
fn expired_event_goes_out_when_the_key_goes() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let subscriber = sim.connect_ready();
    let writer = sim.connect_ready();
    assert_eq!(
        sim.request(writer, &["CONFIG", "SET", "notify-keyspace-events", "Ex"]),
        Reply::ok()
    );
    send(
        &mut sim,
        subscriber,
        &["SUBSCRIBE", "__keyevent@0__:expired"],
    );
    assert_eq!(
        sim.replies(subscriber),
        [Reply::Array(vec![
            Reply::bulk("subscribe"),
            Reply::bulk("__keyevent@0__:expired"),
            int(1)
        ])]
    );
    for ttl in [1u64, 37, 250, 1_000] {
        let set_at = sim.now;
        assert_eq!(
            sim.request(writer, &["SET", "k", "v", "PX", &ttl.to_string()]),
            Reply::ok()
        );
        let deadline = set_at + ttl;
        let heard = sim.run_until_true(deadline + 1_000, |sim| {
            sim.next_reply(subscriber)
                .inspect(|reply| {
                    assert_eq!(
                        *reply,
                        Reply::Array(vec![
                            Reply::bulk("message"),
                            Reply::bulk("__keyevent@0__:expired"),
                            Reply::bulk("k"),
                        ])
                    );
                })
                .is_some()
        });
        // Never early, and out in the poll that removes the key, the tick after its deadline
        // (live through it, as in Redis): the key's timer fires it.
        assert_eq!(heard, Some(deadline + 1), "PX {ttl}");
    }
}

#[test]
fn subscriber_is_never_idle_closed_but_others_are() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(1_000, 500, 500));
    let subscriber = sim.connect_ready();
    let idle = sim.connect_ready();
    send(&mut sim, subscriber, &["SUBSCRIBE", "news"]);
    assert_eq!(sim.replies(subscriber).len(), 1);
    assert!(sim.run_until_closed(idle, sim.now + 5_000).is_some());
    sim.advance(10_000);
    assert!(sim.is_open(subscriber));
    // Unsubscribed, it is idle again like any client.
    send(&mut sim, subscriber, &["UNSUBSCRIBE"]);
    assert_eq!(sim.replies(subscriber).len(), 1);
    assert!(sim.run_until_closed(subscriber, sim.now + 5_000).is_some());
    assert_eq!(sim.stats().idle_timeout_closes, 2);
}

#[test]
fn closed_subscriber_is_forgotten() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let subscriber = sim.connect_ready();
    let publisher = sim.connect_ready();
    send(&mut sim, subscriber, &["PSUBSCRIBE", "n*"]);
    send(&mut sim, subscriber, &["SUBSCRIBE", "news"]);
    assert_eq!(sim.replies(subscriber).len(), 2);
    assert_eq!(sim.request(publisher, &["PUBLISH", "news", "x"]), int(2));
    sim.close(subscriber);
    sim.advance(100);
    assert_eq!(sim.request(publisher, &["PUBLISH", "news", "x"]), int(0));
    assert_eq!(sim.request(publisher, &["PUBSUB", "NUMPAT"]), int(0));
}

#[test]
fn resp3_subscriber_hears_its_own_message_before_the_reply() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let c = sim.connect_ready();
    send(&mut sim, c, &["HELLO", "3"]);
    let _ = sim.take(c);
    send(&mut sim, c, &["SUBSCRIBE", "me"]);
    send(&mut sim, c, &["PUBLISH", "me", "hi"]);
    send(&mut sim, c, &["SET", "k", "v"]);
    assert_eq!(
        String::from_utf8(sim.take(c)).unwrap(),
        ">3\r\n$9\r\nsubscribe\r\n$2\r\nme\r\n:1\r\n\
         >3\r\n$7\r\nmessage\r\n$2\r\nme\r\n$2\r\nhi\r\n:1\r\n\
         +OK\r\n"
    );
}

/// With more keys due than a poll's expiry budget, a command can meet a key past its deadline
/// before the sweep does: it is removed then, and its `expired` event still goes out, once.
#[test]
fn key_expired_on_access_publishes_its_event_once() {
    let store: sim::SizedStore<64, 16384> = sim::store();
    let mut config = sim::config(Timeouts::new(0, 10_000, 10_000));
    config.expire_budget = 1;
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::with(&mut buffers, config, store);
    let subscriber = sim.connect_ready();
    let writer = sim.connect_ready();
    assert_eq!(
        sim.request(writer, &["CONFIG", "SET", "notify-keyspace-events", "Ex"]),
        Reply::ok()
    );
    send(
        &mut sim,
        subscriber,
        &["SUBSCRIBE", "__keyevent@0__:expired"],
    );
    assert_eq!(sim.replies(subscriber).len(), 1);
    for key in ["a", "b", "c", "d"] {
        assert_eq!(
            sim.request(writer, &["SET", key, "v", "PX", "100"]),
            Reply::ok()
        );
    }
    // All four due in the same poll, which may sweep only one: the pipelined GETs, taken in
    // by that poll, meet two of the others first.
    let deadline = sim.now + 100;
    sim.run_until(deadline);
    sim.queue(writer, &sim::encode_str(&["GET", "d"]));
    sim.queue(writer, &sim::encode_str(&["GET", "c"]));
    sim.poll_client();
    sim.poll_server_at(deadline + 1);
    assert_eq!(
        sim.server.store().len(),
        1,
        "one swept, two removed on access"
    );
    sim.advance(50);
    assert_eq!(sim.replies(writer), [Reply::Nil, Reply::Nil]);
    let mut keys: Vec<String> = sim
        .replies(subscriber)
        .into_iter()
        .map(|reply| match reply {
            Reply::Array(parts) => parts[2].text(),
            other => panic!("not a message: {other:?}"),
        })
        .collect();
    keys.sort();
    assert_eq!(keys, ["a", "b", "c", "d"]);
    assert_eq!(sim.server.store().expired_keys(), 4);
}

/// `MONITOR`: the client hears every other command after it ran (admin commands, refused ones
/// and the `MONITOR` itself left out), as `+<time> [0 <ip>:<port>] "word" …` lines; it may
/// not touch keys itself; it is not idle-closed, and is forgotten when it closes.
#[test]
fn monitor_sees_commands_after_they_ran() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(1_000, 10_000, 10_000));
    let monitor = sim.connect_ready();
    let client = sim.connect_ready();
    sim.server.set_unix_time(sim.now, 1_700_000_000_123);
    assert_eq!(sim.request(monitor, &["MONITOR"]), Reply::ok());
    assert_eq!(sim.request(client, &["SET", "k", "a\"b"]), Reply::ok());
    let _ = sim.request(client, &["CONFIG", "GET", "maxmemory"]);
    let _ = sim.request(client, &["GET"]);
    assert!(matches!(
        sim.request(client, &["AUTH", "pw"]),
        Reply::Error(_)
    ));
    let lines = String::from_utf8(sim.take(monitor)).unwrap();
    let lines: Vec<&str> = lines.split_terminator("\r\n").collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    for (line, words) in lines
        .iter()
        .zip([r#""SET" "k" "a\"b""#, r#""AUTH" "(redacted)""#])
    {
        let (time, rest) = line.split_once(' ').unwrap();
        assert!(
            time.starts_with("+1700000000.") && time.ends_with("000"),
            "{line}"
        );
        assert!(
            rest.starts_with("[0 10.0.0.2:") && rest.ends_with(words),
            "{line}"
        );
    }
    assert_eq!(
        sim.request(monitor, &["GET", "k"]),
        Reply::Error("ERR Replica can't interact with the keyspace".into())
    );
    // Past the idle timeout the monitor is still open, the other client not.
    sim.advance(3_000);
    assert!(sim.is_open(monitor));
    assert!(sim.closed_by_server(client));
    // Closed, it is forgotten: new clients (one may get its slot) are not monitors.
    sim.close(monitor);
    sim.advance(10);
    for _ in 0..3 {
        let other = sim.connect_ready();
        assert_eq!(sim.request(other, &["GET", "k"]), Reply::bulk("a\"b"));
    }
}
