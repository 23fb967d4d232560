//! Blocking pops over the simulated network at exact ticks: a timeout is answered in the first
//! poll after it ran out (the tick after its deadline: the command came some time within its
//! own tick, so the wait is never short), never before; a push in that same poll comes too
//! late (the timeouts run first, as key expiry does) and stays in the list; a push one tick
//! earlier, at the deadline itself, serves the client. A waiting client is not idle-closed, shows in `blocked_clients`, can be
//! ended by `CLIENT UNBLOCK`, and is forgotten when it closes. (Byte-for-byte agreement with
//! Redis, wake order included, is in `redis_diff`.)

use host_tests::sim::{encode, info_field, Client, Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

type Small<'m> = Sim<'m, 4, 64, 16384>;

/// Sends a command whose reply may come later.
fn send(sim: &mut Small, client: Client, args: &[&str]) {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    sim.send(client, &encode(&args));
}

fn blocked_clients(sim: &mut Small, client: Client) -> u64 {
    let info = sim.request(client, &["INFO", "clients"]).text();
    info_field(&info, "blocked_clients")
}

fn null_array() -> Reply {
    Reply::NilArray
}

#[test]
fn a_timeout_is_answered_at_its_tick_never_before() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let waiter = sim.connect_ready();
    let other = sim.connect_ready();
    for (timeout, ms) in [
        ("0.1", 100u64),
        ("0.001", 1),
        ("1.2345", 1_234),
        ("2", 2_000),
    ] {
        send(&mut sim, waiter, &["BLPOP", "k", timeout]);
        let start = sim.now;
        assert_eq!(blocked_clients(&mut sim, other), 1);
        let answered = sim.run_until_true(start + 10_000, |sim| sim.next_reply(waiter).is_some());
        assert_eq!(answered, Some(start + ms + 1), "BLPOP k {timeout}");
        assert_eq!(blocked_clients(&mut sim, other), 0);
    }
    // BLMOVE and BRPOPLPUSH time out with the null array too, as in Redis 7.0.
    send(&mut sim, waiter, &["BRPOPLPUSH", "k", "d", "0.05"]);
    let start = sim.now;
    sim.advance(50);
    assert_eq!(sim.replies(waiter), []);
    sim.advance(1);
    assert_eq!(sim.now, start + 51);
    assert_eq!(sim.replies(waiter), [null_array()]);
}

#[test]
fn a_push_in_the_poll_of_the_timeout_is_too_late_and_one_tick_earlier_is_not() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let waiter = sim.connect_ready();
    let pusher = sim.connect_ready();
    // The push reaches the server in the very poll that answers the timeout.
    send(&mut sim, waiter, &["BLPOP", "k", "0.1"]);
    let deadline = sim.now + 100;
    sim.advance(100);
    assert_eq!(sim.replies(waiter), []);
    sim.now = deadline + 1;
    send(&mut sim, pusher, &["RPUSH", "k", "late"]);
    assert_eq!(sim.replies(waiter), [null_array()]);
    assert_eq!(sim.replies(pusher), [Reply::Int(1)]);
    assert_eq!(
        sim.request(pusher, &["LRANGE", "k", "0", "-1"]),
        Reply::Array(vec![Reply::bulk("late")])
    );
    assert_eq!(sim.request(pusher, &["DEL", "k"]), Reply::Int(1));
    // One tick before, at the deadline itself, the push serves the waiting client.
    send(&mut sim, waiter, &["BLPOP", "k", "0.1"]);
    let deadline = sim.now + 100;
    sim.advance(99);
    sim.now = deadline;
    send(&mut sim, pusher, &["RPUSH", "k", "in time"]);
    assert_eq!(
        sim.replies(waiter),
        [Reply::Array(vec![Reply::bulk("k"), Reply::bulk("in time")])]
    );
    assert_eq!(sim.replies(pusher), [Reply::Int(1)]);
    assert_eq!(sim.request(pusher, &["EXISTS", "k"]), Reply::Int(0));
    // And its timer is gone: nothing more comes at the deadline.
    sim.advance(10);
    assert_eq!(sim.replies(waiter), []);
}

#[test]
fn a_waiting_client_is_not_idle_closed_and_runs_what_it_sent_meanwhile_after() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(1_000, 10_000, 10_000));
    let waiter = sim.connect_ready();
    send(&mut sim, waiter, &["BLPOP", "k", "0"]);
    send(&mut sim, waiter, &["PING"]);
    sim.advance(5_000);
    assert!(sim.is_open(waiter), "a waiting client is never idle");
    assert_eq!(sim.replies(waiter), [], "PING waits behind the BLPOP");
    let pusher = sim.connect_ready();
    send(&mut sim, pusher, &["LPUSH", "k", "v"]);
    assert_eq!(
        sim.replies(waiter),
        [
            Reply::Array(vec![Reply::bulk("k"), Reply::bulk("v")]),
            Reply::Simple("PONG".into())
        ]
    );
    // Served, it is idle-closed like any client.
    let closed = sim.run_until_closed(waiter, sim.now + 5_000);
    assert!(closed.is_some());
}

#[test]
fn client_unblock_ends_a_wait_as_a_timeout_or_an_error() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let waiter = sim.connect_ready();
    let other = sim.connect_ready();
    let Reply::Int(id) = sim.request(waiter, &["CLIENT", "ID"]) else {
        panic!("CLIENT ID");
    };
    let id = id.to_string();
    assert_eq!(
        sim.request(other, &["CLIENT", "UNBLOCK", &id]),
        Reply::Int(0)
    );
    send(&mut sim, waiter, &["BLPOP", "k", "0"]);
    assert_eq!(
        sim.request(other, &["CLIENT", "UNBLOCK", &id, "MAYBE"]),
        Reply::error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
    );
    assert_eq!(
        sim.request(other, &["CLIENT", "UNBLOCK", &id]),
        Reply::Int(1)
    );
    assert_eq!(sim.replies(waiter), [null_array()]);
    send(&mut sim, waiter, &["BLMOVE", "k", "d", "LEFT", "LEFT", "0"]);
    assert_eq!(
        sim.request(other, &["CLIENT", "UNBLOCK", &id, "error"]),
        Reply::Int(1)
    );
    assert_eq!(
        sim.replies(waiter),
        [Reply::error(
            "UNBLOCKED client unblocked via CLIENT UNBLOCK"
        )]
    );
    assert_eq!(blocked_clients(&mut sim, other), 0);
}

#[test]
fn a_waiting_client_that_closes_is_forgotten() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let first = sim.connect_ready();
    let second = sim.connect_ready();
    let pusher = sim.connect_ready();
    send(&mut sim, first, &["BRPOP", "k", "0"]);
    send(&mut sim, second, &["BRPOP", "k", "0"]);
    assert_eq!(blocked_clients(&mut sim, pusher), 2);
    sim.close(first);
    sim.advance(10);
    assert_eq!(blocked_clients(&mut sim, pusher), 1);
    // The next in line is served.
    assert_eq!(sim.request(pusher, &["RPUSH", "k", "v"]), Reply::Int(1));
    assert_eq!(
        sim.replies(second),
        [Reply::Array(vec![Reply::bulk("k"), Reply::bulk("v")])]
    );
    assert_eq!(blocked_clients(&mut sim, pusher), 0);
}
