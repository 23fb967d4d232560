//! Differential test of cluster mode against a real Redis Cluster: three `redis-server`s on
//! loopback joined by `redis-cli --cluster create`, and net-shell in the simulated network
//! standing in for the first of them (its id and the cluster's slot map pushed with Kvrocks'
//! `CLUSTERX`, as a controller would). The same requests go to both; the replies are compared
//! byte for byte where they must be equal (`CLUSTER KEYSLOT`, `-MOVED`, `-CROSSSLOT`,
//! `CLUSTER SLOTS`, `MYID`, `COUNTKEYSINSLOT`, `GETKEYSINSLOT`, errors), and as far as a shell
//! with no cluster bus can be equal otherwise (`CLUSTER SHARDS` in any order, `CLUSTER NODES`
//! without the bus' ping times and epochs, `CLUSTER INFO`'s slot and node counts).
//!
//! `#[ignore]`d (it needs redis-server and redis-cli): `cargo test -- --include-ignored` runs
//! it, as `scripts/check.sh` does, and a missing tool fails it.

use host_tests::e2e;
use host_tests::redis_cluster::RedisCluster;
use host_tests::redis_diff::{show, RedisConnection, Shell};
use host_tests::reply::{split_replies, Value};
use host_tests::sim::{encode, Client};
use net_shell::ServerBuffers;

/// Requests whose replies must be equal byte for byte.
const SAME: &[&[&str]] = &[
    &["CLUSTER", "KEYSLOT", "foo"],
    &["CLUSTER", "KEYSLOT", "{user1000}.following"],
    &["CLUSTER", "KEYSLOT", "foo{}{bar}"],
    &["CLUSTER", "KEYSLOT", ""],
    &["CLUSTER", "KEYSLOT", "a{{b}}"],
    &["CLUSTER", "KEYSLOT"],
    &["CLUSTER", "NOPE"],
    &["CLUSTER"],
    &["GET", "foo"],
    &["SET", "foo", "1"],
    &["SET", "bar", "1", "PX", "100000"],
    &["GET", "bar"],
    &["MSET", "a", "1", "b", "2"],
    &["EXISTS", "foo", "bar"],
    &["DEL", "bar", "foo"],
    &["MGET", "{x}a", "{x}b"],
    &["MGET", "{bar}a", "{bar}b"],
    // Keys found by their count (Redis' movable keys).
    &["LMPOP", "2", "foo", "bar", "LEFT"],
    &["LMPOP", "1", "foo", "LEFT"],
    &["LMPOP", "2", "{bar}a", "bar", "RIGHT", "COUNT", "2"],
    &["LMPOP", "0", "foo", "LEFT"],
    &["LMPOP", "3", "foo", "LEFT"],
    &["LMPOP", "x", "foo", "LEFT"],
    &["BLMPOP", "0.01", "2", "foo", "bar", "LEFT"],
    &["BLMPOP", "0.01", "1", "foo", "LEFT"],
    &["WATCH", "foo"],
    &["EXPIRE", "foo", "10"],
    &["TTL", "bar"],
    &["PING"],
    &["DBSIZE"],
    &["CLUSTER", "COUNTKEYSINSLOT", "5061"],
    &["CLUSTER", "COUNTKEYSINSLOT", "12182"],
    &["CLUSTER", "COUNTKEYSINSLOT", "16384"],
    &["CLUSTER", "COUNTKEYSINSLOT", "-1"],
    &["CLUSTER", "COUNTKEYSINSLOT", "x"],
    &["CLUSTER", "GETKEYSINSLOT", "5061", "10"],
    &["CLUSTER", "GETKEYSINSLOT", "5061", "0"],
    &["CLUSTER", "GETKEYSINSLOT", "0", "-1"],
    &["CLUSTER", "GETKEYSINSLOT", "16384", "1"],
    &["CLUSTER", "GETKEYSINSLOT", "x", "1"],
    &["CLUSTER", "MYID"],
    &["CLUSTER", "SLOTS"],
    &["READONLY"],
    &["READWRITE"],
    &["ASKING"],
    &["MULTI"],
    &["SET", "foo", "1"],
    &["SET", "bar", "2"],
    &["EXEC"],
    &["GET", "bar"],
    &["MULTI"],
    &["SET", "bar", "3"],
    &["EXEC"],
];

/// Both sides of the comparison: a Redis Cluster node and the shell standing in for it.
struct Pair<'m> {
    redis: RedisConnection,
    shell: Shell<'m>,
    client: Client,
}

impl Pair<'_> {
    /// Sends `args` to both; their raw replies.
    fn ask(&mut self, args: &[&str]) -> (Vec<u8>, Vec<u8>) {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let request = encode(&args);
        let theirs = self
            .redis
            .exchange(std::slice::from_ref(&request), 1)
            .expect("Redis answers");
        let ours = self
            .shell
            .exchange(self.client, &[request], 1)
            .expect("net-shell answers");
        (theirs[0].clone(), ours[0].clone())
    }
}

/// The elements of an array reply, raw, sorted: the same set in any order compares equal.
fn sorted_elements(reply: &[u8]) -> Vec<Vec<u8>> {
    let header_end = reply.iter().position(|&b| b == b'\n').expect("a header") + 1;
    let mut elements = split_replies(&reply[header_end..]).expect("whole elements");
    elements.sort();
    elements
}

/// `CLUSTER NODES` lines without what only a cluster bus knows (ping and pong times, each
/// node's own epoch), sorted.
fn nodes_without_bus_fields(reply: &[u8]) -> Vec<String> {
    let text = match Value::decode(reply) {
        Some((Value::Bulk(Some(text)), _)) => String::from_utf8_lossy(&text).into_owned(),
        // RESP3: a verbatim string, `txt:` and the text.
        Some((Value::Blob(b'=', text), _)) => {
            String::from_utf8_lossy(text.strip_prefix(b"txt:").unwrap_or(&text)).into_owned()
        }
        Some((other, _)) => format!("{other:?}"),
        None => String::new(),
    };
    let mut lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut fields: Vec<&str> = line.split(' ').collect();
            for field in fields.iter_mut().skip(4).take(3) {
                *field = "_";
            }
            fields.join(" ")
        })
        .collect();
    lines.sort();
    lines
}

/// `CLUSTER INFO`'s state, slot and node counts (the lines before the epochs).
fn info_counts(reply: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(reply);
    text.split("\r\n")
        .map(|l| l.trim_start_matches(|c: char| c != 'c' && !c.is_alphabetic()))
        .filter(|l| {
            [
                "cluster_state:",
                "cluster_slots_",
                "cluster_known_nodes:",
                "cluster_size:",
            ]
            .iter()
            .any(|p| l.contains(p))
        })
        .map(|l| l[l.find("cluster_").unwrap_or(0)..].to_string())
        .collect()
}

/// A Redis Cluster of three on loopback, with the first node's id and the cluster's topology in
/// Kvrocks' form (the test fails if redis-server or redis-cli is missing).
fn real_cluster() -> (RedisCluster, String, String) {
    for program in ["redis-server", "redis-cli"] {
        if !e2e::have(program) {
            e2e::missing(&format!("{program} is not installed"));
        }
    }
    let cluster = RedisCluster::start(3).expect("a Redis Cluster on loopback");
    let (me, nodes) = cluster.topology_as_kvrocks(0).expect("its topology");
    (cluster, me, nodes)
}

#[test]
#[ignore = "needs redis-server and redis-cli"]
fn cluster_replies_match_a_real_redis_cluster() {
    let (cluster, me, nodes) = real_cluster();
    let mut buffers = ServerBuffers::default();
    let mut shell = Shell::start_with(&mut buffers, |config| config.cluster_enabled = true);
    let controller = shell.connect();
    let pushed = shell
        .exchange(
            controller,
            &[
                encode(&[b"CLUSTERX", b"SETNODEID", me.as_bytes()]),
                encode(&[b"CLUSTERX", b"SETNODES", nodes.as_bytes(), b"1"]),
            ],
            2,
        )
        .expect("the push is answered");
    assert_eq!(
        pushed,
        [b"+OK\r\n".to_vec(), b"+OK\r\n".to_vec()],
        "{nodes}"
    );
    let client = shell.connect();
    let redis = RedisConnection::open(cluster.ports()[0]).expect("connect to Redis");
    let mut pair = Pair {
        redis,
        shell,
        client,
    };
    let mut mismatches = Vec::new();
    let mut compared = 0;
    for protocol in ["2", "3"] {
        pair.ask(&["HELLO", protocol]);
        pair.ask(&["FLUSHALL"]);
        for args in SAME {
            let (theirs, ours) = pair.ask(args);
            compared += 1;
            if theirs != ours {
                mismatches.push(format!(
                    "RESP{protocol} {args:?}\n  redis:     {}\n  net-shell: {}",
                    show(&theirs),
                    show(&ours)
                ));
            }
        }
        let (theirs, ours) = pair.ask(&["CLUSTER", "SHARDS"]);
        compared += 1;
        if sorted_elements(&theirs) != sorted_elements(&ours) {
            mismatches.push(format!(
                "RESP{protocol} CLUSTER SHARDS (in any order)\n  redis:     {}\n  net-shell: {}",
                show(&theirs),
                show(&ours)
            ));
        }
        let (theirs, ours) = pair.ask(&["CLUSTER", "NODES"]);
        compared += 1;
        let (theirs_nodes, ours_nodes) = (
            nodes_without_bus_fields(&theirs),
            nodes_without_bus_fields(&ours),
        );
        if theirs_nodes != ours_nodes || theirs_nodes.len() != 3 || theirs[0] != ours[0] {
            mismatches.push(format!(
                "RESP{protocol} CLUSTER NODES\n  redis:     {theirs_nodes:?}\n  net-shell: {ours_nodes:?}"
            ));
        }
        let (theirs, ours) = pair.ask(&["CLUSTER", "INFO"]);
        compared += 1;
        if info_counts(&theirs) != info_counts(&ours)
            || info_counts(&ours).len() != 7
            || theirs[0] != ours[0]
        {
            mismatches.push(format!(
                "RESP{protocol} CLUSTER INFO\n  redis:     {:?}\n  net-shell: {:?}",
                info_counts(&theirs),
                info_counts(&ours)
            ));
        }
    }
    eprintln!(
        "{compared} replies compared with a 3-node Redis Cluster, {} mismatches",
        mismatches.len()
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// `slots` (`a-b` or `n` words, as `CLUSTER NODES` has them) as inclusive ranges.
fn ranges(slots: &[&str]) -> Vec<(u16, u16)> {
    slots
        .iter()
        .map(|range| {
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect()
}

/// `slots` without `slot`, as words again.
fn ranges_without(slots: &[&str], slot: u16) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |from: u16, to: u16| {
        out.push(if from == to {
            from.to_string()
        } else {
            format!("{from}-{to}")
        })
    };
    for (a, b) in ranges(slots) {
        if !(a..=b).contains(&slot) {
            push(a, b);
            continue;
        }
        if slot > a {
            push(a, slot - 1);
        }
        if slot < b {
            push(slot + 1, b);
        }
    }
    out
}

/// A client blocked in `BLPOP` on a key of a slot its node gives to another node: Redis
/// answers it `-MOVED` (`clusterRedirectBlockedClientIfNeeded`, within its 1 s client cron)
/// once `CLUSTER SETSLOT <slot> NODE <other>` is run on it; the shell, once the controller
/// pushes the topology that says so. The two replies must be equal byte for byte.
#[test]
#[ignore = "needs redis-server and redis-cli"]
fn a_blocked_client_is_redirected_as_by_a_real_redis_cluster() {
    let (cluster, me, nodes) = real_cluster();
    let lines: Vec<Vec<&str>> = nodes.lines().map(|l| l.split(' ').collect()).collect();
    let mine = lines.iter().find(|l| l[0] == me).expect("my line");
    let other = lines.iter().find(|l| l[0] != me).expect("another master")[0];
    // A key of one of this node's slots.
    let (key, slot) = (0..)
        .map(|n| format!("list{n}"))
        .map(|key| {
            let slot = net_shell::cluster::key_slot(key.as_bytes());
            (key, slot)
        })
        .find(|(_, slot)| {
            ranges(&mine[5..])
                .iter()
                .any(|(a, b)| (a..=b).contains(&slot))
        })
        .expect("a key of mine");
    let moved: Vec<String> = lines
        .iter()
        .map(|l| {
            let slots: Vec<String> = if l[0] == me {
                ranges_without(&l[5..], slot)
            } else if l[0] == other {
                l[5..]
                    .iter()
                    .map(|s| s.to_string())
                    .chain([slot.to_string()])
                    .collect()
            } else {
                l[5..].iter().map(|s| s.to_string()).collect()
            };
            format!("{} {} {} master - {}", l[0], l[1], l[2], slots.join(" "))
        })
        .collect();
    let moved = moved.join("\n");
    let blpop = encode(&[b"BLPOP", key.as_bytes(), b"0"]);

    let mut waiter = RedisConnection::open(cluster.ports()[0]).expect("connect to Redis");
    waiter.exchange(std::slice::from_ref(&blpop), 0).unwrap();
    let mut admin = RedisConnection::open(cluster.ports()[0]).expect("connect to Redis");
    let slot_text = slot.to_string();
    let set = admin
        .exchange(
            &[encode(&[
                b"CLUSTER",
                b"SETSLOT",
                slot_text.as_bytes(),
                b"NODE",
                other.as_bytes(),
            ])],
            1,
        )
        .unwrap();
    assert_eq!(set, [b"+OK\r\n".to_vec()]);
    let theirs = waiter.exchange(&[], 1).expect("Redis redirects the client");

    let mut buffers = ServerBuffers::default();
    let mut shell = Shell::start_with(&mut buffers, |config| config.cluster_enabled = true);
    let controller = shell.connect();
    let push = |shell: &mut Shell<'_>, nodes: &str, version: &[u8]| {
        let pushed = shell
            .exchange(
                controller,
                &[
                    encode(&[b"CLUSTERX", b"SETNODEID", me.as_bytes()]),
                    encode(&[b"CLUSTERX", b"SETNODES", nodes.as_bytes(), version]),
                ],
                2,
            )
            .expect("the push is answered");
        assert_eq!(
            pushed,
            [b"+OK\r\n".to_vec(), b"+OK\r\n".to_vec()],
            "{nodes}"
        );
    };
    push(&mut shell, &nodes, b"1");
    let client = shell.connect();
    shell.exchange(client, &[blpop], 0).unwrap();
    push(&mut shell, &moved, b"2");
    let ours = shell.exchange(client, &[], 1).expect("the shell redirects");
    eprintln!("redis: {}, net-shell: {}", show(&theirs[0]), show(&ours[0]));
    assert!(theirs[0].starts_with(b"-MOVED "), "{}", show(&theirs[0]));
    assert_eq!(show(&theirs[0]), show(&ours[0]));
}
