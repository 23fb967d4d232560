//! The command table over the simulated network: arity checked once for every command with
//! Redis' text naming the command the client sent, the AUTH gate as a flag, and `COMMAND`
//! generated from the table (long listings sent in parts).

use host_tests::sim::{Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

type Small<'m> = Sim<'m, 4, 256, 65536>;

fn sim(buffers: &mut ServerBuffers) -> Small<'_> {
    Sim::new(buffers, Timeouts::DEFAULT)
}

fn arity(name: &str) -> Reply {
    Reply::Error(format!(
        "ERR wrong number of arguments for '{name}' command"
    ))
}

#[test]
fn wrong_arity_names_the_command_given() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    for (args, name) in [
        (&["FLUSHDB", "a", "b"][..], None),
        (&["UNLINK"], Some("unlink")),
        (&["DEL"], Some("del")),
        (&["PSETEX", "k", "1"], Some("psetex")),
        (&["DECRBY", "k"], Some("decrby")),
        (&["PEXPIRETIME"], Some("pexpiretime")),
        (&["CONFIG"], Some("config")),
        (&["CONFIG", "RESETSTAT", "x"], Some("config|resetstat")),
        (&["CLIENT", "ID", "x"], Some("client|id")),
        (&["COMMAND", "COUNT", "x"], Some("command|count")),
        (&["AUTH"], Some("auth")),
        (&["PING", "a", "b"], Some("ping")),
    ] {
        let expected = match name {
            Some(name) => arity(name),
            // FLUSHDB takes any number of words; more than one option is a syntax error.
            None => Reply::error("ERR syntax error"),
        };
        assert_eq!(sim.request(c, args), expected, "{args:?}");
    }
}

#[test]
fn command_count_and_listings_come_from_the_table() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let Reply::Int(count) = sim.request(c, &["COMMAND", "COUNT"]) else {
        panic!("COMMAND COUNT is not an integer");
    };
    // COMMAND is larger than the reply buffer: it arrives in parts, whole.
    let Reply::Array(all) = sim.request(c, &["COMMAND"]) else {
        panic!("COMMAND is not an array");
    };
    assert_eq!(all.len() as i64, count);
    let names: Vec<String> = all
        .iter()
        .map(|entry| match entry {
            Reply::Array(fields) => fields[0].text(),
            other => panic!("not an entry: {other:?}"),
        })
        .collect();
    for name in [
        "get", "set", "del", "expire", "config", "client", "command", "hello",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} missing");
    }
    let Reply::Array(docs) = sim.request(c, &["COMMAND", "DOCS"]) else {
        panic!("COMMAND DOCS is not an array");
    };
    assert_eq!(docs.len() as i64, count * 2);
    let Reply::Array(list) = sim.request(c, &["COMMAND", "LIST"]) else {
        panic!("COMMAND LIST is not an array");
    };
    assert!(list.contains(&Reply::bulk("config|get")));
    // The connection goes on after the long replies.
    assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
    // A pipeline with a long listing in the middle keeps its order.
    sim.send(
        c,
        b"*1\r\n$4\r\nPING\r\n*1\r\n$7\r\nCOMMAND\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n",
    );
    let replies = sim.wait_replies(c, 3, sim.now + 1000);
    assert_eq!(replies.len(), 3);
    assert_eq!(replies[0], Reply::simple("PONG"));
    assert!(matches!(&replies[1], Reply::Array(all) if all.len() as i64 == count));
    assert_eq!(replies[2], Reply::bulk("hi"));
}

#[test]
fn command_info_names_unknown_commands_nil() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let Reply::Array(info) = sim.request(c, &["COMMAND", "INFO", "get", "nosuch", "config|get"])
    else {
        panic!("COMMAND INFO is not an array");
    };
    assert_eq!(info.len(), 3);
    assert!(
        matches!(&info[0], Reply::Array(f) if f[0] == Reply::bulk("get") && f[1] == Reply::Int(2))
    );
    assert_eq!(info[1], Reply::Nil); // as Redis: a null bulk
    assert!(
        matches!(&info[2], Reply::Array(f) if f[0] == Reply::bulk("config|get") && f[1] == Reply::Int(-3))
    );
}

#[test]
fn auth_gate_is_a_flag_checked_after_lookup_and_arity() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "requirepass", "pw"]),
        Reply::ok()
    );
    let other = sim.connect();
    let noauth = Reply::error("NOAUTH Authentication required.");
    let before = sim.stats().total_commands_processed;
    assert!(sim
        .request(other, &["NOSUCH"])
        .error_text()
        .is_some_and(|t| t.starts_with("ERR unknown command")));
    assert_eq!(sim.request(other, &["GET"]), arity("get"));
    assert_eq!(sim.request(other, &["GET", "k"]), noauth);
    assert_eq!(sim.request(other, &["COMMAND", "COUNT"]), noauth);
    assert_eq!(sim.stats().total_commands_processed, before);
    // AUTH, HELLO and QUIT carry the no_auth flag.
    assert_eq!(sim.request(other, &["AUTH", "pw"]), Reply::ok());
    assert_eq!(sim.request(other, &["GET", "k"]), Reply::Nil);
    assert_eq!(sim.stats().total_commands_processed, before + 2);
}
