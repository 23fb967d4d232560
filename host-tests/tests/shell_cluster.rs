//! Cluster mode on the simulated network, in simulated time: what a node answers while it
//! moves a slot away to a node that never answers (so every key stays here): keys still here
//! are served, keys not here get `-ASK`, a request over both gets `-TRYAGAIN`; `ASKING` lets a
//! request for another node's slot through once, if that slot is on its way here (`CLUSTER
//! IMPORT`); and after 10 s without a connection the migration fails and the node serves its
//! slots again. Then migrations to a new owner the test plays (listening on the client side):
//! what goes over the connection, in order, and what clients get once it is over.

use host_tests::sim::{self, Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

type Node<'m> = Sim<'m, 4, 256, 65536>;

/// This node's id, and the other's (at an address of the simulated network nobody answers).
const ME: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const OTHER: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/// A node's configuration for these tests: cluster mode on, no idle timeout.
fn cluster_config() -> net_shell::ServerConfig {
    let mut config = sim::config(Timeouts::new(0, 10_000, 10_000));
    config.cluster_enabled = true;
    config
}

/// Makes the node [`ME`] and pushes topology version 1 on connection `c`: slots 0-8191 here,
/// 8192-16383 on [`OTHER`] at `ip`:`port`.
fn push_halves(node: &mut Node<'_>, c: sim::Client, ip: &str, port: u16) {
    let topology =
        format!("{ME} 10.0.0.1 6379 master - 0-8191\n{OTHER} {ip} {port} master - 8192-16383");
    assert_eq!(node.request(c, &["CLUSTERX", "SETNODEID", ME]), Reply::ok());
    assert_eq!(
        node.request(c, &["CLUSTERX", "SETNODES", &topology, "1"]),
        Reply::ok()
    );
}

#[test]
fn a_slot_moving_to_a_silent_node_asks_for_keys_gone_then_fails_and_serves_again() {
    let mut buffers = ServerBuffers::default();
    let config = cluster_config();
    let mut node: Node = Sim::with(&mut buffers, config, sim::store());
    node.server.set_unix_time(node.now, 1_700_000_000_000);
    let c = node.connect_ready();
    push_halves(&mut node, c, "10.0.0.3", 6379);
    // "bar" is slot 5061, this node's; "foo" slot 12182, the other's.
    assert_eq!(node.request(c, &["SET", "{bar}here", "1"]), Reply::ok());
    assert_eq!(
        node.request(c, &["GET", "foo"]),
        Reply::error("MOVED 12182 10.0.0.3:6379")
    );
    // ASKING lets a request through only for a slot on its way here, as in Redis.
    assert_eq!(node.request(c, &["ASKING"]), Reply::ok());
    assert_eq!(
        node.request(c, &["GET", "foo"]),
        Reply::error("MOVED 12182 10.0.0.3:6379"),
        "not importing"
    );
    assert_eq!(
        node.request(c, &["CLUSTER", "IMPORT", "12000-12999", "0"]),
        Reply::ok()
    );
    assert_eq!(node.request(c, &["ASKING"]), Reply::ok());
    assert_eq!(node.request(c, &["GET", "foo"]), Reply::Nil);
    assert_eq!(
        node.request(c, &["GET", "foo"]),
        Reply::error("MOVED 12182 10.0.0.3:6379"),
        "ASKING holds for one command"
    );
    // Only the range on its way can be declared come or failed (Kvrocks' check).
    assert_eq!(
        node.request(c, &["CLUSTER", "IMPORT", "12000-12001", "1"]),
        Reply::error("ERR mismatch slot, importing slot(s): 12000-12999, but got: 12000-12001")
    );
    // The move is over: every request for the slots is served, until the controller's push.
    assert_eq!(
        node.request(c, &["CLUSTER", "IMPORT", "12000-12999", "1"]),
        Reply::ok()
    );
    assert_eq!(node.request(c, &["GET", "foo"]), Reply::Nil);
    assert_eq!(
        node.request(c, &["GET", "a"]),
        Reply::error("MOVED 15495 10.0.0.3:6379"),
        "only the slots imported"
    );
    assert_eq!(
        node.request(c, &["CLUSTER", "IMPORT", "12000-12999", "7"]),
        Reply::error("ERR Invalid import state")
    );
    assert_eq!(
        node.request(c, &["CLUSTER", "IMPORT", "12000-12999", "2"]),
        Reply::ok()
    );
    assert_eq!(
        node.request(c, &["CLUSTER", "IMPORT", "12000-12999", "2"]),
        Reply::error("ERR mismatch slot, importing slot(s): none, but got: 12000-12999"),
        "nothing is on its way any more"
    );
    assert_eq!(node.request(c, &["ASKING"]), Reply::ok());
    assert_eq!(
        node.request(c, &["GET", "foo"]),
        Reply::error("MOVED 12182 10.0.0.3:6379"),
        "the import failed"
    );

    assert_eq!(
        node.request(c, &["CLUSTERX", "MIGRATE", "5061", OTHER]),
        Reply::ok()
    );
    assert_eq!(
        node.request(c, &["CLUSTERX", "MIGRATE", "5061", OTHER]),
        Reply::error("ERR There is already a migrating job")
    );
    assert_eq!(node.request(c, &["GET", "{bar}here"]), Reply::bulk("1"));
    assert_eq!(
        node.request(c, &["GET", "{bar}gone"]),
        Reply::error("ASK 5061 10.0.0.3:6379")
    );
    assert_eq!(
        node.request(c, &["SET", "{bar}new", "1"]),
        Reply::error("ASK 5061 10.0.0.3:6379"),
        "a new key of a moving slot goes to the new owner"
    );
    assert_eq!(
        node.request(c, &["EXISTS", "{bar}here", "{bar}gone"]),
        Reply::error("TRYAGAIN Multiple keys request during rehashing of slot")
    );
    assert_eq!(
        node.request(c, &["SET", "{bar}here", "2"]),
        Reply::ok(),
        "a key not yet sent is written here"
    );
    let info = node.request(c, &["CLUSTER", "INFO"]).text();
    assert!(info.contains("migrating_slot: 5061\r\n"), "{info}");
    assert!(
        info.contains(&format!("destination_node: {OTHER}\r\n")),
        "{info}"
    );
    assert!(info.contains("migrating_state: start\r\n"), "{info}");

    // Nobody answers at 10.0.0.3: after 10 s the migration gives up.
    node.advance(10_500);
    let info = node.request(c, &["CLUSTER", "INFO"]).text();
    assert!(info.contains("migrating_state: fail\r\n"), "{info}");
    assert_eq!(node.request(c, &["GET", "{bar}gone"]), Reply::Nil);
    assert_eq!(node.request(c, &["GET", "{bar}here"]), Reply::bulk("2"));
    assert_eq!(
        node.request(c, &["CLUSTERX", "MIGRATE", "12182", OTHER]),
        Reply::error("ERR Can't migrate slot which doesn't belong to me")
    );
    assert_eq!(
        node.request(c, &["CLUSTERX", "MIGRATE", "0-100", ME]),
        Reply::error("ERR Can't migrate slot to myself")
    );
}

/// The requests the peer received, once there are `n`, as words (within 1 s).
fn requests_heard(node: &mut Node<'_>, peer: sim::Client, n: usize) -> Vec<Vec<String>> {
    let mut bytes = Vec::new();
    let limit = node.now + 1_000;
    loop {
        bytes.extend(node.take(peer));
        let mut rest = &bytes[..];
        let mut requests = Vec::new();
        while let Some((request, used)) = Reply::decode(rest) {
            let Reply::Array(words) = request else {
                panic!("not a request: {request:?}");
            };
            requests.push(words.iter().map(Reply::text).collect());
            rest = &rest[used..];
        }
        if requests.len() >= n {
            assert!(rest.is_empty(), "more than {n} requests: {requests:?}");
            return requests;
        }
        assert!(node.now < limit, "heard only {requests:?}");
        node.advance(1);
    }
}

fn words(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// A migration to a new owner played by the test, on the simulated network: the connection
/// opens with `AUTH` and this shell's own password, then `CLUSTER IMPORT <slots> 0`; each key
/// goes after `ASKING` with its absolute deadline and is deleted here with a `del` event once
/// acknowledged; then `CLUSTER IMPORT <slots> 1`, and once the new owner says OK, requests for
/// the slots get `-MOVED` to it and the connection closes.
#[test]
fn a_migration_authenticates_announces_moves_and_closes_with_import_success() {
    let mut buffers = ServerBuffers::default();
    let mut config = cluster_config();
    config.security.set_password(b"s3cret").unwrap();
    let mut node: Node = Sim::with(&mut buffers, config, sim::store());
    node.server.set_unix_time(node.now, 1_700_000_000_000);
    let peer = node.listen(7000);
    let c = node.connect();
    assert_eq!(node.request(c, &["AUTH", "s3cret"]), Reply::ok());
    let subscriber = node.connect();
    assert_eq!(node.request(subscriber, &["AUTH", "s3cret"]), Reply::ok());
    push_halves(&mut node, c, "10.0.0.2", 7000);
    assert_eq!(
        node.request(c, &["CONFIG", "SET", "notify-keyspace-events", "Eg"]),
        Reply::ok()
    );
    assert_eq!(
        node.request(subscriber, &["SUBSCRIBE", "__keyevent@0__:del"]),
        Reply::Array(vec![
            Reply::bulk("subscribe"),
            Reply::bulk("__keyevent@0__:del"),
            Reply::Int(1)
        ])
    );
    // "bar" is slot 5061.
    assert_eq!(
        node.request(c, &["SET", "{bar}1", "one", "PX", "60000"]),
        Reply::ok()
    );
    let deadline = 1_700_000_000_000 + node.now + 60_000;
    let waiting = node.connect();
    assert_eq!(node.request(waiting, &["AUTH", "s3cret"]), Reply::ok());
    node.send_command(waiting, &["BLPOP", "{bar}list", "0"]);
    assert_eq!(
        node.request(c, &["CLUSTERX", "MIGRATE", "5061", OTHER]),
        Reply::ok()
    );

    let opening = requests_heard(&mut node, peer, 2);
    assert_eq!(
        opening,
        [
            words(&["AUTH", "s3cret"]),
            words(&["CLUSTER", "IMPORT", "5061-5061", "0"])
        ]
    );
    node.send(peer, b"+OK\r\n+OK\r\n");
    let batch = requests_heard(&mut node, peer, 2);
    assert_eq!(
        batch,
        [
            words(&["ASKING"]),
            words(&["SET", "{bar}1", "one", "PXAT", &deadline.to_string()])
        ]
    );
    node.send(peer, b"+OK\r\n+OK\r\n");
    assert_eq!(
        node.wait_replies(subscriber, 1, node.now + 100),
        [Reply::Array(vec![
            Reply::bulk("message"),
            Reply::bulk("__keyevent@0__:del"),
            Reply::bulk("{bar}1")
        ])],
        "the key moved away is deleted here as Redis' MIGRATE deletes it"
    );
    let closing = requests_heard(&mut node, peer, 1);
    assert_eq!(closing, [words(&["CLUSTER", "IMPORT", "5061-5061", "1"])]);
    assert_eq!(
        node.request(c, &["GET", "{bar}1"]),
        Reply::error("ASK 5061 10.0.0.2:7000"),
        "until the new owner says it has them"
    );
    let info = node.request(c, &["CLUSTER", "INFO"]).text();
    assert!(info.contains("migrating_state: start\r\n"), "{info}");
    assert_eq!(
        node.replies(waiting),
        [],
        "still waiting while the slot moves"
    );
    node.send(peer, b"+OK\r\n");
    node.advance(5);
    let info = node.request(c, &["CLUSTER", "INFO"]).text();
    assert!(info.contains("migrating_state: success\r\n"), "{info}");
    assert_eq!(
        node.replies(waiting),
        [Reply::error("MOVED 5061 10.0.0.2:7000")],
        "a client waiting on the slot is sent to its new owner"
    );
    assert!(info.contains("migrated_keys:1\r\n"), "{info}");
    assert_eq!(
        node.request(c, &["GET", "{bar}1"]),
        Reply::error("MOVED 5061 10.0.0.2:7000")
    );
    assert_eq!(
        node.request(c, &["SET", "{bar}2", "x"]),
        Reply::error("MOVED 5061 10.0.0.2:7000")
    );
    assert!(
        node.run_until_closed(peer, node.now + 1_000).is_some(),
        "the migration's connection closes"
    );
    assert_eq!(
        requests_heard(&mut node, peer, 0),
        Vec::<Vec<String>>::new()
    );
}

/// A new owner that refuses the password: the migration fails before any key goes, the new
/// owner is told nothing is coming (`CLUSTER IMPORT <slots> 2`), and the keys are served here.
#[test]
fn a_refused_auth_fails_the_migration_and_tells_the_new_owner() {
    let mut buffers = ServerBuffers::default();
    let mut config = cluster_config();
    config.security.set_password(b"s3cret").unwrap();
    let mut node: Node = Sim::with(&mut buffers, config, sim::store());
    node.server.set_unix_time(node.now, 1_700_000_000_000);
    let peer = node.listen(7000);
    let c = node.connect();
    assert_eq!(node.request(c, &["AUTH", "s3cret"]), Reply::ok());
    push_halves(&mut node, c, "10.0.0.2", 7000);
    assert_eq!(node.request(c, &["SET", "{bar}1", "one"]), Reply::ok());
    assert_eq!(
        node.request(c, &["CLUSTERX", "MIGRATE", "5061", OTHER]),
        Reply::ok()
    );
    assert_eq!(requests_heard(&mut node, peer, 2).len(), 2);
    node.send(
        peer,
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n-NOAUTH Authentication required.\r\n",
    );
    assert_eq!(
        requests_heard(&mut node, peer, 1),
        [words(&["CLUSTER", "IMPORT", "5061-5061", "2"])]
    );
    let info = node.request(c, &["CLUSTER", "INFO"]).text();
    assert!(info.contains("migrating_state: fail\r\n"), "{info}");
    assert_eq!(node.request(c, &["GET", "{bar}1"]), Reply::bulk("one"));
    assert!(node.run_until_closed(peer, node.now + 1_000).is_some());
}

/// Clients blocked in a pop on a slot this node stops serving are answered as Redis answers
/// them (`clusterRedirectBlockedClientIfNeeded`): `-MOVED` to the new owner when a push gives
/// the slot away, `-CLUSTERDOWN The cluster is down` when a push leaves slots unowned; clients
/// on slots still served here wait on, and are served.
#[test]
fn blocked_clients_are_redirected_when_their_slot_goes_away() {
    let mut buffers = ServerBuffers::default();
    let config = cluster_config();
    let mut node: Sim<8, 256, 65536> = Sim::with(&mut buffers, config, sim::store());
    let c = node.connect_ready();
    let push = |node: &mut Sim<8, 256, 65536>, mine: &str, theirs: &str, version: &str| {
        let topology =
            format!("{ME} 10.0.0.1 6379 master - {mine}\n{OTHER} 10.0.0.3 6379 master - {theirs}");
        assert_eq!(
            node.request(c, &["CLUSTERX", "SETNODES", &topology, version]),
            Reply::ok()
        );
    };
    assert_eq!(node.request(c, &["CLUSTERX", "SETNODEID", ME]), Reply::ok());
    push(&mut node, "0-8191", "8192-16383", "1");
    // "bar" is slot 5061, "b" 3300: both this node's.
    let moving = node.connect_ready();
    node.send_command(moving, &["BLPOP", "{bar}list", "0"]);
    let staying = node.connect_ready();
    node.send_command(staying, &["BRPOP", "{b}list", "0"]);
    let served = node.connect_ready();
    node.send_command(
        served,
        &["BLMOVE", "{b}other", "{b}to", "LEFT", "RIGHT", "0"],
    );
    node.advance(100);
    assert_eq!(node.replies(moving), [], "waiting");

    push(&mut node, "0-5000", "5001-16383", "2");
    assert_eq!(
        node.wait_replies(moving, 1, node.now + 10),
        [Reply::error("MOVED 5061 10.0.0.3:6379")]
    );
    assert_eq!(node.replies(staying), [], "its slot is still here");
    assert_eq!(node.request(c, &["RPUSH", "{b}other", "x"]), Reply::Int(1));
    assert_eq!(
        node.wait_replies(served, 1, node.now + 10),
        [Reply::bulk("x")]
    );
    assert_eq!(
        node.request(moving, &["PING"]),
        Reply::simple("PONG"),
        "no longer waiting"
    );

    push(&mut node, "0-4000", "5001-16383", "3");
    assert_eq!(
        node.wait_replies(staying, 1, node.now + 10),
        [Reply::error("CLUSTERDOWN The cluster is down")]
    );
}

/// A hash goes with its fields' deadlines: `DEL`, `HSET` of its live fields, then
/// `HPEXPIREAT … FIELDS 1 field` for each field with a deadline, in absolute Unix time, and
/// `PEXPIREAT` for the key's own; it is deleted here once every reply is in.
#[test]
fn a_hash_moves_with_the_deadlines_of_its_fields() {
    let mut buffers = ServerBuffers::default();
    let config = cluster_config();
    let mut node: Node = Sim::with(&mut buffers, config, sim::store());
    node.server.set_unix_time(node.now, 1_700_000_000_000);
    let peer = node.listen(7000);
    let c = node.connect_ready();
    push_halves(&mut node, c, "10.0.0.2", 7000);
    // "bar" is slot 5061.
    assert_eq!(
        node.request(c, &["HSET", "{bar}h", "f1", "v1", "f2", "v2", "f3", "v3"]),
        Reply::Int(3)
    );
    let unix = |ms: u64| (1_700_000_000_000 + node.now + ms).to_string();
    let (field_deadline, key_deadline) = (unix(30_000), unix(60_000));
    assert_eq!(
        node.request(
            c,
            &["HPEXPIRE", "{bar}h", "30000", "FIELDS", "2", "f1", "f3"]
        ),
        Reply::Array(vec![Reply::Int(1), Reply::Int(1)])
    );
    assert_eq!(
        node.request(c, &["PEXPIRE", "{bar}h", "60000"]),
        Reply::Int(1)
    );
    assert_eq!(
        node.request(c, &["CLUSTERX", "MIGRATE", "5061", OTHER]),
        Reply::ok()
    );
    let opening = requests_heard(&mut node, peer, 1);
    assert_eq!(opening, [words(&["CLUSTER", "IMPORT", "5061-5061", "0"])]);
    node.send(peer, b"+OK\r\n");
    let batch = requests_heard(&mut node, peer, 10);
    let asking = words(&["ASKING"]);
    assert_eq!(
        batch,
        [
            asking.clone(),
            words(&["DEL", "{bar}h"]),
            asking.clone(),
            words(&["HSET", "{bar}h", "f1", "v1", "f2", "v2", "f3", "v3"]),
            asking.clone(),
            words(&["HPEXPIREAT", "{bar}h", &field_deadline, "FIELDS", "1", "f1"]),
            asking.clone(),
            words(&["HPEXPIREAT", "{bar}h", &field_deadline, "FIELDS", "1", "f3"]),
            asking,
            words(&["PEXPIREAT", "{bar}h", &key_deadline]),
        ]
    );
    node.send(
        peer,
        b"+OK\r\n:0\r\n+OK\r\n:3\r\n+OK\r\n*1\r\n:1\r\n+OK\r\n*1\r\n",
    );
    node.advance(1);
    assert_eq!(
        node.request(c, &["HLEN", "{bar}h"]),
        Reply::Int(3),
        "not yet acknowledged"
    );
    node.send(peer, b":1\r\n+OK\r\n:1\r\n");
    let closing = requests_heard(&mut node, peer, 1);
    assert_eq!(closing, [words(&["CLUSTER", "IMPORT", "5061-5061", "1"])]);
    assert_eq!(
        node.request(c, &["HLEN", "{bar}h"]),
        Reply::error("ASK 5061 10.0.0.2:7000"),
        "moved, and deleted here"
    );
}
