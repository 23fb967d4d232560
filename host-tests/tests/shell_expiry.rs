//! Keys with a time to live, over the simulated network: visibility up to the deadline, removal
//! by the timer, TTL arithmetic, the EXPIRE family, wall-clock expiry, huge TTLs, and time that
//! jumps or runs backwards.

use host_tests::sim;
use host_tests::sim::{Reply, Sim};
use net_shell::store::Ttl;
use net_shell::{ServerBuffers, Timeouts};

type Small<'m> = Sim<'m, 4, 256, 65536>;

fn sim(buffers: &mut ServerBuffers) -> Small<'_> {
    Sim::new(buffers, Timeouts::DEFAULT)
}

fn int(n: i64) -> Reply {
    Reply::Int(n)
}

#[test]
fn set_ex_key_visible_at_deadline_gone_after_it() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    sim.advance(1234);
    let deadline = sim.now + 2000;
    assert_eq!(sim.request(c, &["SET", "k", "v", "EX", "2"]), Reply::ok());
    sim.run_until(deadline);
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::bulk("v"));
    assert_eq!(sim.request(c, &["EXISTS", "k"]), int(1));
    sim.run_until(deadline + 1);
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::Nil);
    assert_eq!(sim.request(c, &["EXISTS", "k"]), int(0));
}

#[test]
fn set_px_key_visible_at_deadline_gone_after_it() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    sim.advance(77);
    let deadline = sim.now + 1;
    assert_eq!(sim.request(c, &["SET", "a", "1", "PX", "1"]), Reply::ok());
    assert_eq!(sim.request(c, &["GET", "a"]), Reply::bulk("1"));
    sim.run_until(deadline);
    assert_eq!(sim.request(c, &["GET", "a"]), Reply::bulk("1"));
    sim.run_until(deadline + 1);
    assert_eq!(sim.request(c, &["GET", "a"]), Reply::Nil);

    let deadline = sim.now + 65_537;
    assert_eq!(
        sim.request(c, &["SET", "b", "2", "PX", "65537"]),
        Reply::ok()
    );
    sim.run_until(deadline - 1);
    assert_eq!(sim.request(c, &["PTTL", "b"]), int(1));
    sim.run_until(deadline);
    // As in Redis, the key is live through its deadline's millisecond, gone after it.
    assert_eq!(sim.request(c, &["PTTL", "b"]), int(0));
    assert_eq!(sim.request(c, &["GET", "b"]), Reply::bulk("2"));
    sim.run_until(deadline + 1);
    assert_eq!(sim.request(c, &["PTTL", "b"]), int(-2));
}

/// Keys nobody touches are removed by the timer just after their deadline (at the next
/// millisecond, as Redis' `now > when`): DBSIZE and `store().len()`
/// drop, `expired_keys` counts them. Deadlines cover every level of the wheel.
#[test]
fn volatile_keys_removed_by_timer_at_deadline_without_access() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    sim.advance(5);
    assert_eq!(sim.request(c, &["SET", "persistent", "p"]), Reply::ok());
    let start = sim.now;
    let ttls: [u64; 12] = [
        1, 2, 63, 64, 65, 4_095, 4_096, 4_097, 262_143, 300_000, 16_777_217, 86_400_000,
    ];
    for (i, ttl) in ttls.iter().enumerate() {
        let key = format!("k{i}");
        assert_eq!(
            sim.request(c, &["SET", &key, "v", "PX", &ttl.to_string()]),
            Reply::ok()
        );
    }
    // Keep the client from being closed while we wait a day.
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "timeout", "0"]),
        Reply::ok()
    );
    let mut remaining = ttls.len() + 1;
    for (i, ttl) in ttls.iter().enumerate() {
        let deadline = start + ttl;
        sim.run_until(deadline);
        assert_eq!(
            sim.server.store().len(),
            remaining,
            "key {i} (ttl {ttl}) removed before its deadline"
        );
        assert_eq!(sim.server.store().expired_keys(), i as u64);
        remaining -= 1;
        assert_eq!(
            sim.run_until_store_len(remaining, deadline + 100_000),
            Some(deadline + 1),
            "key {i} (ttl {ttl}) not removed at its deadline"
        );
        assert_eq!(sim.server.store().len(), remaining);
        assert_eq!(sim.server.store().expired_keys(), i as u64 + 1);
    }
    assert_eq!(sim.request(c, &["DBSIZE"]), int(1));
    let info = sim.request(c, &["INFO", "stats"]).text();
    assert!(info.contains("expired_keys:12\r\n"), "{info}");
    assert_eq!(sim.request(c, &["GET", "persistent"]), Reply::bulk("p"));
}

#[test]
fn ttl_and_pttl_report_missing_persistent_and_rounded_values() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["TTL", "nope"]), int(-2));
    assert_eq!(sim.request(c, &["PTTL", "nope"]), int(-2));
    assert_eq!(sim.request(c, &["SET", "p", "v"]), Reply::ok());
    assert_eq!(sim.request(c, &["TTL", "p"]), int(-1));
    assert_eq!(sim.request(c, &["PTTL", "p"]), int(-1));

    assert_eq!(
        sim.request(c, &["SET", "k", "v", "PX", "1500"]),
        Reply::ok()
    );
    // Redis rounds: (ms + 500) / 1000.
    assert_eq!(sim.request(c, &["TTL", "k"]), int(2));
    assert_eq!(sim.request(c, &["PTTL", "k"]), int(1500));
    sim.advance(1);
    assert_eq!(sim.request(c, &["TTL", "k"]), int(1));
    assert_eq!(sim.request(c, &["PTTL", "k"]), int(1499));
    sim.advance(1000);
    assert_eq!(sim.request(c, &["PTTL", "k"]), int(499));
    assert_eq!(sim.request(c, &["TTL", "k"]), int(0));
    sim.advance(499);
    assert_eq!(sim.request(c, &["PTTL", "k"]), int(0));
    sim.advance(1);
    assert_eq!(sim.request(c, &["TTL", "k"]), int(-2));

    assert_eq!(sim.request(c, &["SET", "e", "v", "EX", "10"]), Reply::ok());
    assert_eq!(sim.request(c, &["TTL", "e"]), int(10));
    assert_eq!(sim.request(c, &["PTTL", "e"]), int(10_000));
}

#[test]
fn expire_with_nx_xx_gt_lt_follows_redis() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["EXPIRE", "missing", "10"]), int(0));
    assert_eq!(sim.request(c, &["SET", "v", "1", "EX", "100"]), Reply::ok());
    assert_eq!(sim.request(c, &["SET", "p", "1"]), Reply::ok());

    // NX: only without a TTL.
    assert_eq!(sim.request(c, &["EXPIRE", "v", "50", "NX"]), int(0));
    assert_eq!(sim.request(c, &["TTL", "v"]), int(100));
    // XX: only with a TTL.
    assert_eq!(sim.request(c, &["EXPIRE", "p", "50", "XX"]), int(0));
    assert_eq!(sim.request(c, &["TTL", "p"]), int(-1));
    assert_eq!(sim.request(c, &["EXPIRE", "v", "200", "XX"]), int(1));
    assert_eq!(sim.request(c, &["TTL", "v"]), int(200));
    // GT / LT against a TTL.
    assert_eq!(sim.request(c, &["EXPIRE", "v", "100", "GT"]), int(0));
    assert_eq!(sim.request(c, &["EXPIRE", "v", "200", "GT"]), int(0));
    assert_eq!(sim.request(c, &["EXPIRE", "v", "300", "gt"]), int(1));
    assert_eq!(sim.request(c, &["TTL", "v"]), int(300));
    assert_eq!(sim.request(c, &["EXPIRE", "v", "400", "LT"]), int(0));
    assert_eq!(sim.request(c, &["EXPIRE", "v", "300", "LT"]), int(0));
    assert_eq!(sim.request(c, &["PEXPIRE", "v", "50000", "LT"]), int(1));
    assert_eq!(sim.request(c, &["PTTL", "v"]), int(50_000));
    // A persistent key has an infinite TTL: GT never wins, LT always does.
    assert_eq!(sim.request(c, &["EXPIRE", "p", "10", "GT"]), int(0));
    assert_eq!(sim.request(c, &["TTL", "p"]), int(-1));
    assert_eq!(sim.request(c, &["EXPIRE", "p", "10", "XX", "GT"]), int(0));
    assert_eq!(sim.request(c, &["EXPIRE", "p", "10", "LT"]), int(1));
    assert_eq!(sim.request(c, &["TTL", "p"]), int(10));
    assert_eq!(sim.request(c, &["SET", "q", "1"]), Reply::ok());
    assert_eq!(sim.request(c, &["EXPIRE", "q", "10", "NX"]), int(1));
    assert_eq!(sim.request(c, &["TTL", "q"]), int(10));

    // Incompatible and unknown options.
    assert_eq!(
        sim.request(c, &["EXPIRE", "v", "10", "NX", "XX"]),
        Reply::error("ERR NX and XX, GT or LT options at the same time are not compatible")
    );
    assert_eq!(
        sim.request(c, &["EXPIRE", "v", "10", "GT", "LT"]),
        Reply::error("ERR GT and LT options at the same time are not compatible")
    );
    assert_eq!(
        sim.request(c, &["EXPIRE", "v", "10", "SOON"]),
        Reply::error("ERR Unsupported option SOON")
    );
    assert_eq!(
        sim.request(c, &["EXPIRE", "v", "ten"]),
        Reply::error("ERR value is not an integer or out of range")
    );
    assert_eq!(
        sim.request(c, &["EXPIRE", "v"]),
        Reply::error("ERR wrong number of arguments for 'expire' command")
    );
    assert_eq!(sim.request(c, &["PTTL", "v"]), int(50_000));
}

#[test]
fn expire_in_the_past_deletes_the_key() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    sim.advance(10_000);
    for (command, amount) in [("EXPIRE", "0"), ("EXPIRE", "-5"), ("PEXPIRE", "-1")] {
        assert_eq!(sim.request(c, &["SET", "k", "v"]), Reply::ok());
        assert_eq!(sim.request(c, &[command, "k", amount]), int(1));
        assert_eq!(sim.request(c, &["EXISTS", "k"]), int(0));
        assert_eq!(sim.server.store().len(), 0, "{command} {amount}");
    }
}

#[test]
fn expireat_and_expiretime_need_the_wall_clock() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    sim.advance(1000);
    assert_eq!(sim.request(c, &["SET", "k", "v", "EX", "100"]), Reply::ok());
    assert_eq!(sim.request(c, &["SET", "p", "v"]), Reply::ok());
    let needs_clock = |reply: Reply| {
        let text = reply.error_text().map(str::to_owned).unwrap_or_default();
        text.starts_with("ERR ") && text.contains("wall clock")
    };
    assert!(needs_clock(
        sim.request(c, &["EXPIREAT", "k", "2000000000"])
    ));
    assert!(needs_clock(
        sim.request(c, &["PEXPIREAT", "k", "2000000000000"])
    ));
    assert!(needs_clock(sim.request(c, &["EXPIRETIME", "k"])));
    assert!(needs_clock(sim.request(c, &["PEXPIRETIME", "k"])));
    assert!(needs_clock(
        sim.request(c, &["SET", "k", "w", "EXAT", "2000000000"])
    ));
    assert!(needs_clock(
        sim.request(c, &["GETEX", "k", "PXAT", "2000000000000"])
    ));
    // Nothing changed, and the answers that need no clock still come.
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::bulk("v"));
    assert_eq!(sim.request(c, &["TTL", "k"]), int(100));
    assert_eq!(sim.request(c, &["EXPIRETIME", "p"]), int(-1));
    assert_eq!(sim.request(c, &["EXPIRETIME", "missing"]), int(-2));

    let unix_now = 1_700_000_000_000;
    let now = sim.now;
    sim.server.set_unix_time(now, unix_now);
    assert_eq!(
        sim.request(c, &["EXPIRETIME", "k"]),
        int(1_700_000_000 + 100)
    );
    assert_eq!(
        sim.request(c, &["PEXPIRETIME", "k"]),
        int(1_700_000_000_000 + 100_000)
    );
    assert_eq!(sim.request(c, &["EXPIREAT", "k", "1700000050"]), int(1));
    assert_eq!(sim.request(c, &["TTL", "k"]), int(50));
    assert_eq!(sim.request(c, &["PEXPIREAT", "k", "1700000000250"]), int(1));
    assert_eq!(sim.request(c, &["PTTL", "k"]), int(250));
    assert_eq!(
        sim.request(c, &["SET", "a", "1", "EXAT", "1700000010"]),
        Reply::ok()
    );
    assert_eq!(sim.request(c, &["TTL", "a"]), int(10));
    assert_eq!(
        sim.request(c, &["SET", "b", "1", "PXAT", "1700000000700"]),
        Reply::ok()
    );
    assert_eq!(sim.request(c, &["PTTL", "b"]), int(700));
    assert_eq!(
        sim.request(c, &["GETEX", "b", "EXAT", "1700000020"]),
        Reply::bulk("1")
    );
    assert_eq!(sim.request(c, &["TTL", "b"]), int(20));
    // Time passes: the absolute time stays, the TTL shrinks.
    sim.advance(5000);
    assert_eq!(sim.request(c, &["EXPIRETIME", "a"]), int(1_700_000_010));
    assert_eq!(sim.request(c, &["TTL", "a"]), int(5));
    // NX/XX/GT/LT apply to the absolute forms too.
    assert_eq!(
        sim.request(c, &["EXPIREAT", "a", "1700000000", "GT"]),
        int(0)
    );
    assert_eq!(
        sim.request(c, &["EXPIREAT", "p", "1700001000", "XX"]),
        int(0)
    );
    // A time in the past deletes.
    assert_eq!(sim.request(c, &["EXPIREAT", "a", "1600000000"]), int(1));
    assert_eq!(sim.request(c, &["EXISTS", "a"]), int(0));
    assert_eq!(sim.request(c, &["SET", "c", "1", "PXAT", "1"]), Reply::ok());
    assert_eq!(sim.request(c, &["EXISTS", "c"]), int(0));
}

#[test]
fn persist_removes_the_ttl_and_the_timer_leaves_the_key() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["SET", "k", "v", "PX", "500"]), Reply::ok());
    assert_eq!(sim.request(c, &["PERSIST", "k"]), int(1));
    assert_eq!(sim.request(c, &["TTL", "k"]), int(-1));
    assert_eq!(sim.request(c, &["PERSIST", "k"]), int(0));
    assert_eq!(sim.request(c, &["PERSIST", "missing"]), int(0));
    sim.advance(10_000);
    assert_eq!(sim.server.store().len(), 1);
    assert_eq!(sim.server.store().expired_keys(), 0);
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::bulk("v"));
}

#[test]
fn getex_reads_and_changes_the_ttl() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["GETEX", "missing", "EX", "5"]), Reply::Nil);
    assert_eq!(sim.server.store().len(), 0);
    assert_eq!(sim.request(c, &["SET", "k", "v", "EX", "100"]), Reply::ok());
    assert_eq!(sim.request(c, &["GETEX", "k"]), Reply::bulk("v"));
    assert_eq!(sim.request(c, &["TTL", "k"]), int(100));
    assert_eq!(
        sim.request(c, &["GETEX", "k", "EX", "10"]),
        Reply::bulk("v")
    );
    assert_eq!(sim.request(c, &["TTL", "k"]), int(10));
    assert_eq!(
        sim.request(c, &["GETEX", "k", "px", "500"]),
        Reply::bulk("v")
    );
    assert_eq!(sim.request(c, &["PTTL", "k"]), int(500));
    assert_eq!(sim.request(c, &["GETEX", "k", "PERSIST"]), Reply::bulk("v"));
    assert_eq!(sim.request(c, &["TTL", "k"]), int(-1));
    assert_eq!(
        sim.request(c, &["GETEX", "k", "EX", "0"]),
        Reply::error("ERR invalid expire time in 'getex' command")
    );
    assert_eq!(
        sim.request(c, &["GETEX", "k", "EX", "10", "PX", "10"]),
        Reply::error("ERR syntax error")
    );
    assert_eq!(
        sim.request(c, &["GETEX", "k", "EX"]),
        Reply::error("ERR syntax error")
    );
    assert_eq!(sim.request(c, &["TTL", "k"]), int(-1));
    // The new TTL is enforced.
    assert_eq!(
        sim.request(c, &["GETEX", "k", "PX", "20"]),
        Reply::bulk("v")
    );
    sim.advance(20);
    assert_eq!(sim.server.store().len(), 1);
    sim.advance(1);
    assert_eq!(sim.server.store().len(), 0);
}

#[test]
fn setex_and_psetex_set_value_and_ttl() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["SETEX", "a", "10", "v"]), Reply::ok());
    assert_eq!(sim.request(c, &["TTL", "a"]), int(10));
    assert_eq!(sim.request(c, &["GET", "a"]), Reply::bulk("v"));
    assert_eq!(sim.request(c, &["PSETEX", "b", "1500", "w"]), Reply::ok());
    assert_eq!(sim.request(c, &["PTTL", "b"]), int(1500));
    for (command, amount) in [
        ("SETEX", "0"),
        ("SETEX", "-1"),
        ("PSETEX", "0"),
        ("SETEX", "9223372036854775807"),
    ] {
        let expected = format!(
            "ERR invalid expire time in '{}' command",
            command.to_lowercase()
        );
        assert_eq!(
            sim.request(c, &[command, "c", amount, "v"]),
            Reply::Error(expected),
            "{command} {amount}"
        );
    }
    assert_eq!(
        sim.request(c, &["SETEX", "c", "soon", "v"]),
        Reply::error("ERR value is not an integer or out of range")
    );
    assert_eq!(sim.request(c, &["EXISTS", "c"]), int(0));
    sim.advance(1501);
    assert_eq!(sim.request(c, &["GET", "b"]), Reply::Nil);
    assert_eq!(sim.request(c, &["GET", "a"]), Reply::bulk("v"));
}

#[test]
fn huge_ttls_refused_or_kept_without_overflow() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    sim.advance(1000);
    for args in [
        &["SET", "k", "v", "EX", "9223372036854775807"][..],
        &["SET", "k", "v", "PX", "9223372036854775807"],
        &["SET", "k", "v", "EX", "9223372036854776"],
    ] {
        assert_eq!(
            sim.request(c, args),
            Reply::error("ERR invalid expire time in 'set' command"),
            "{args:?}"
        );
    }
    assert_eq!(sim.request(c, &["EXISTS", "k"]), int(0));
    assert_eq!(
        sim.request(c, &["SET", "k", "v", "PX", "9000000000000000000"]),
        Reply::ok()
    );
    assert_eq!(
        sim.request(c, &["PTTL", "k"]),
        int(9_000_000_000_000_000_000)
    );
    assert_eq!(sim.request(c, &["TTL", "k"]), int(9_000_000_000_000_000));
    assert_eq!(sim.request(c, &["SET", "e", "v"]), Reply::ok());
    assert_eq!(
        sim.request(c, &["EXPIRE", "e", "9223372036854775807"]),
        Reply::error("ERR invalid expire time in 'expire' command")
    );
    assert_eq!(
        sim.request(c, &["PEXPIRE", "e", "9223372036854775807"]),
        Reply::error("ERR invalid expire time in 'pexpire' command")
    );
    assert_eq!(sim.request(c, &["EXPIRE", "e", "9000000000000000"]), int(1));
    assert_eq!(sim.request(c, &["TTL", "e"]), int(9_000_000_000_000_000));
    assert_eq!(
        sim.request(c, &["GETEX", "e", "EX", "9223372036854775807"]),
        Reply::error("ERR invalid expire time in 'getex' command")
    );
    assert_eq!(sim.request(c, &["TTL", "e"]), int(9_000_000_000_000_000));
    // A day later both are still there, and nothing overflowed on the way.
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "timeout", "0"]),
        Reply::ok()
    );
    sim.advance(86_400_000);
    assert_eq!(sim.request(c, &["DBSIZE"]), int(2));
    assert_eq!(
        sim.request(c, &["PTTL", "k"]),
        int(9_000_000_000_000_000_000 - 86_400_000)
    );
}

/// A device that slept for three days: on the first poll keys expire, the idle connection is
/// closed, nothing panics, and a new client is served.
#[test]
fn time_jumping_forward_by_days_expires_keys_and_closes_idle_clients() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(300_000, 10_000, 10_000));
    let idle = sim.connect_ready();
    let busy = sim.connect_ready();
    for i in 0..100 {
        let key = format!("k{i}");
        assert_eq!(
            sim.request(busy, &["SET", &key, "v", "EX", &(3600 + i).to_string()]),
            Reply::ok()
        );
    }
    assert_eq!(sim.request(busy, &["SET", "keep", "v"]), Reply::ok());
    sim.jump(3 * 86_400_000);
    assert_eq!(sim.server.store().len(), 1);
    assert_eq!(sim.server.store().expired_keys(), 100);
    assert!(sim.closed_by_server(idle));
    assert!(sim.closed_by_server(busy));
    assert_eq!(sim.stats().idle_timeout_closes, 2);
    sim.close(idle);
    sim.close(busy);
    let fresh = sim.connect_ready();
    assert_eq!(sim.request(fresh, &["GET", "keep"]), Reply::bulk("v"));
    assert_eq!(sim.request(fresh, &["DBSIZE"]), int(1));
    assert_eq!(sim.stats().connected_clients, 1);
}

/// A clock that steps back is ignored: commands run at the latest time seen, keys do not come
/// back, timers neither fire early nor get lost.
#[test]
fn now_going_backwards_is_harmless() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(5_000, 1_000, 1_000));
    let c = sim.connect_ready();
    sim.advance(4_000);
    let t = sim.now;
    assert_eq!(
        sim.request(c, &["SET", "gone", "v", "PX", "10"]),
        Reply::ok()
    );
    assert_eq!(sim.request(c, &["SET", "k", "v", "PX", "100"]), Reply::ok());
    sim.advance(11);
    assert_eq!(sim.server.store().len(), 1);
    // The server is polled at t=0 while a GET arrives.
    sim.queue(c, &sim::encode_str(&["GET", "gone"]));
    sim.queue(c, &sim::encode_str(&["PTTL", "k"]));
    sim.poll_client();
    let next = sim.poll_server_at(0);
    sim.poll_client();
    assert_eq!(sim.next_reply(c), Some(Reply::Nil));
    assert_eq!(sim.next_reply(c), Some(Reply::Int(89)));
    assert!(next.is_some_and(|at| at >= t + 10), "{next:?}");
    for back in [t - 1, 0, t + 9] {
        sim.poll_server_at(back);
    }
    assert!(sim.is_open(c));
    assert_eq!(sim.server.store().len(), 1);
    sim.advance(89);
    assert_eq!(sim.request(c, &["GET", "k"]), Reply::bulk("v"));
    let last = sim.now;
    sim.advance(1);
    assert_eq!(sim.server.store().len(), 0);
    // The idle timer still fires, once, at its time: 5 s after the last command.
    assert_eq!(sim.run_until_closed(c, last + 10_000), Some(last + 5_000));
    assert_eq!(sim.stats().idle_timeout_closes, 1);
}

const MASS: usize = 100_000;
const MASS_KEYS: usize = MASS + 16;
type Mass<'m> = Sim<'m, 4, MASS_KEYS, 3_300_000>;

/// 100,000 keys due at the same tick: a PING is answered by the first poll at the deadline,
/// the keys are removed `expire_budget` per poll while `poll` asks to be called again at once,
/// and all are gone in the end.
#[test]
fn mass_expiry_spreads_over_polls_and_keeps_serving() {
    host_tests::big_stack(|| {
        const DEADLINE: u64 = 60_000;
        let mut store: sim::SizedStore<MASS_KEYS, 3_300_000> = sim::store();
        for i in 0..MASS {
            let key = format!("key:{i:06}");
            store
                // Live through DEADLINE - 1, due at DEADLINE.
                .set(key.as_bytes(), b"v", Ttl::At(DEADLINE - 1), 0)
                .unwrap();
        }
        store.set(b"persistent", b"p", Ttl::Persist, 0).unwrap();
        let mut config = sim::config(Timeouts::DEFAULT);
        config.expire_budget = 1000;
        let mut buffers = ServerBuffers::default();
        let mut sim: Mass = Sim::with(&mut buffers, config, store);
        let c = sim.connect_ready();
        sim.run_until(DEADLINE - 1);
        assert_eq!(sim.server.store().len(), MASS + 1);
        assert_eq!(sim.request(c, &["GET", "key:000007"]), Reply::bulk("v"));

        // The deadline: a PING arrives at the same time.
        sim.now = DEADLINE;
        sim.queue(c, &sim::encode_str(&["PING"]));
        sim.poll_client();
        let polls_before = sim.server_polls;
        let mut answered_after = None;
        let mut len = sim.server.store().len();
        loop {
            let next = sim.poll_server();
            sim.poll_client();
            let polls = sim.server_polls - polls_before;
            if answered_after.is_none() && sim.next_reply(c).is_some() {
                answered_after = Some(polls);
            }
            let now_len = sim.server.store().len();
            assert!(
                len - now_len <= 1000,
                "{} removed in one poll",
                len - now_len
            );
            len = now_len;
            if len == 1 {
                assert!(next.is_none_or(|at| at > DEADLINE), "{next:?}");
                break;
            }
            assert_eq!(next, Some(DEADLINE), "more keys are due: poll again now");
            assert!(polls < 1000, "mass expiry never finished");
        }
        assert_eq!(answered_after, Some(1), "PING waited for the sweep");
        assert!(sim.server_polls - polls_before >= 100);
        assert_eq!(sim.server.store().expired_keys(), MASS as u64);
        assert_eq!(sim.server.store().volatile_len(), 0);
        assert_eq!(sim.request(c, &["DBSIZE"]), int(1));
        assert_eq!(sim.request(c, &["GET", "persistent"]), Reply::bulk("p"));
    });
}

/// While a mass expiry is under way, a key already due is invisible even if the sweep has not
/// reached it yet.
#[test]
fn mass_expiry_hides_due_keys_before_the_sweep_reaches_them() {
    host_tests::big_stack(|| {
        const DEADLINE: u64 = 5_000;
        let mut store: sim::SizedStore<MASS_KEYS, 3_300_000> = sim::store();
        for i in 0..20_000 {
            let key = format!("key:{i:06}");
            store
                // Live through DEADLINE - 1, due at DEADLINE.
                .set(key.as_bytes(), b"v", Ttl::At(DEADLINE - 1), 0)
                .unwrap();
        }
        let mut config = sim::config(Timeouts::DEFAULT);
        config.expire_budget = 100;
        let mut buffers = ServerBuffers::default();
        let mut sim: Mass = Sim::with(&mut buffers, config, store);
        let c = sim.connect_ready();
        sim.run_until(DEADLINE - 1);
        sim.now = DEADLINE;
        sim.poll_server();
        assert!(sim.server.store().len() >= 19_000);
        assert_eq!(sim.request(c, &["GET", "key:019999"]), Reply::Nil);
        assert_eq!(sim.request(c, &["EXISTS", "key:010000"]), int(0));
        sim.settle();
        assert_eq!(sim.server.store().len(), 0);
        assert_eq!(sim.server.store().expired_keys(), 20_000);
    });
}

/// A seeded random mix of writes, reads, TTL changes and waits on 24 keys, checked against a
/// plain map after every step: values, PTTLs, the key count (keys are removed by the timer at
/// their deadline, not later) and `expired_keys`.
#[test]
fn random_workload_matches_a_model() {
    use std::collections::BTreeMap;

    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "timeout", "0"]),
        Reply::ok()
    );
    // key -> (value, deadline)
    let mut model: BTreeMap<String, (String, Option<u64>)> = BTreeMap::new();
    let mut expired = 0u64;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for step in 0..3_000 {
        let now = sim.now;
        let key = format!("key{}", next(24));
        let live = model.get(&key).cloned();
        let context = format!("step {step} at t={now}: {key} = {live:?}");
        match next(10) {
            0 | 1 => {
                let value = format!("v{}", next(1000));
                let ttl = next(5000) + 1;
                let ttl_text = ttl.to_string();
                let (args, deadline) = match next(3) {
                    0 => (vec!["SET", &key, &value], None),
                    1 => (vec!["SET", &key, &value, "PX", &ttl_text], Some(now + ttl)),
                    _ => (
                        vec!["SET", &key, &value, "KEEPTTL"],
                        live.as_ref().and_then(|(_, at)| *at),
                    ),
                };
                assert_eq!(sim.request(c, &args), Reply::ok(), "{context}");
                model.insert(key, (value, deadline));
            }
            2 => {
                let expected = live.map_or(Reply::Nil, |(v, _)| Reply::bulk(&v));
                assert_eq!(sim.request(c, &["GET", &key]), expected, "{context}");
            }
            3 => {
                let expected = match live {
                    None => -2,
                    Some((_, None)) => -1,
                    Some((_, Some(at))) => (at - now) as i64,
                };
                assert_eq!(sim.request(c, &["PTTL", &key]), int(expected), "{context}");
            }
            4 => {
                let ttl = next(3000) + 1;
                let reply = sim.request(c, &["PEXPIRE", &key, &ttl.to_string()]);
                assert_eq!(reply, int(i64::from(live.is_some())), "{context}");
                if let Some(entry) = model.get_mut(&key) {
                    entry.1 = Some(now + ttl);
                }
            }
            5 => {
                let had_ttl = live.as_ref().is_some_and(|(_, at)| at.is_some());
                let reply = sim.request(c, &["PERSIST", &key]);
                assert_eq!(reply, int(i64::from(had_ttl)), "{context}");
                if let Some(entry) = model.get_mut(&key) {
                    entry.1 = None;
                }
            }
            6 => {
                let reply = sim.request(c, &["DEL", &key]);
                assert_eq!(reply, int(i64::from(live.is_some())), "{context}");
                model.remove(&key);
            }
            7 => {
                let reply = sim.request(c, &["INCR", &key]);
                match live.as_ref().map(|(v, at)| (v.parse::<i64>(), *at)) {
                    Some((Err(_), _)) => assert_eq!(
                        reply,
                        Reply::error("ERR value is not an integer or out of range"),
                        "{context}"
                    ),
                    Some((Ok(n), at)) => {
                        assert_eq!(reply, int(n + 1), "{context}");
                        model.insert(key, ((n + 1).to_string(), at));
                    }
                    None => {
                        assert_eq!(reply, int(1), "{context}");
                        model.insert(key, ("1".into(), None));
                    }
                }
            }
            _ => {
                let wait = if next(20) == 0 {
                    next(20_000)
                } else {
                    next(300)
                };
                sim.advance(wait);
                let now = sim.now;
                let live = model
                    .values()
                    .filter(|(_, at)| at.is_none_or(|at| at > now))
                    .count();
                assert_eq!(
                    sim.server.store().len(),
                    live,
                    "step {step} at t={now}: a key due was not removed, or one was removed early"
                );
            }
        }
        let now = sim.now;
        let before = model.len();
        model.retain(|_, (_, deadline)| deadline.is_none_or(|at| at > now));
        expired += (before - model.len()) as u64;
        assert_eq!(sim.server.store().expired_keys(), expired, "step {step}");
    }
    assert!(sim.now > 100_000, "the run covered {} ms", sim.now);
}
