//! Authentication and protected mode over the simulated network, with Redis 7's replies (the
//! texts were checked against redis-server 7.0.15).

use host_tests::sim::{self, encode_str, info_field, Reply, Sim};
use net_shell::smoltcp::wire::{Ipv4Address, Ipv4Cidr};
use net_shell::{Security, ServerBuffers, Timeouts};

type Small<'m> = Sim<'m, 4, 256, 65536>;

const NOAUTH: &str = "NOAUTH Authentication required.";
const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
const HELLO_NOAUTH: &str = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time";
const DENIED_START: &str = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user.";

fn with_password<'m>(buffers: &'m mut ServerBuffers, password: &str) -> Small<'m> {
    let mut config = sim::config(Timeouts::DEFAULT);
    config.security.set_password(password.as_bytes()).unwrap();
    Sim::with(buffers, config, sim::store())
}

fn with_security(buffers: &mut ServerBuffers, security: Security) -> Small<'_> {
    let mut config = sim::config(Timeouts::DEFAULT);
    config.security = security;
    Sim::with(buffers, config, sim::store())
}

#[test]
fn password_set_refuses_commands_until_auth() {
    let mut buffers = ServerBuffers::default();
    let mut sim = with_password(&mut buffers, "s3cret");
    let c = sim.connect();
    // Unknown commands and wrong arity are answered first, as in Redis.
    assert_eq!(
        sim.request(c, &["FOO"]),
        Reply::error("ERR unknown command 'FOO', with args beginning with: ")
    );
    assert_eq!(
        sim.request(c, &["GET"]),
        Reply::error("ERR wrong number of arguments for 'get' command")
    );
    for command in [
        &["PING"][..],
        &["GET", "k"],
        &["SET", "k", "v"],
        &["CLIENT", "ID"],
    ] {
        assert_eq!(sim.request(c, command), Reply::error(NOAUTH), "{command:?}");
    }
    assert_eq!(
        sim.request(c, &["AUTH"]),
        Reply::error("ERR wrong number of arguments for 'auth' command")
    );
    assert_eq!(
        sim.request(c, &["AUTH", "a", "b", "c"]),
        Reply::error("ERR syntax error")
    );
    assert_eq!(sim.request(c, &["AUTH", "wrong"]), Reply::error(WRONGPASS));
    assert_eq!(
        sim.request(c, &["AUTH", "default", "wrong"]),
        Reply::error(WRONGPASS)
    );
    assert_eq!(
        sim.request(c, &["AUTH", "alice", "s3cret"]),
        Reply::error(WRONGPASS)
    );
    assert_eq!(sim.request(c, &["PING"]), Reply::error(NOAUTH));
    assert_eq!(sim.request(c, &["AUTH", "s3cret"]), Reply::ok());
    assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
    assert_eq!(sim.request(c, &["AUTH", "default", "s3cret"]), Reply::ok());
    // Refused commands are not counted as processed; AUTH is.
    let info = sim.request(c, &["INFO", "stats"]).text();
    assert_eq!(info_field(&info, "total_commands_processed"), 8);
    // QUIT needs no password.
    let other = sim.connect();
    assert_eq!(sim.request(other, &["QUIT"]), Reply::ok());
}

#[test]
fn hello_authenticates_or_says_how() {
    let mut buffers = ServerBuffers::default();
    let mut sim = with_password(&mut buffers, "s3cret");
    let c = sim.connect();
    for hello in [
        &["HELLO"][..],
        &["HELLO", "2"],
        &["HELLO", "2", "SETNAME", "x"],
    ] {
        assert_eq!(
            sim.request(c, hello),
            Reply::error(HELLO_NOAUTH),
            "{hello:?}"
        );
    }
    assert_eq!(
        sim.request(c, &["HELLO", "4"]),
        Reply::error("NOPROTO unsupported protocol version")
    );
    assert_eq!(
        sim.request(c, &["HELLO", "2", "AUTH", "default"]),
        Reply::error("ERR Syntax error in HELLO option 'AUTH'")
    );
    assert_eq!(
        sim.request(c, &["HELLO", "2", "AUTH", "default", "wrong"]),
        Reply::error(WRONGPASS)
    );
    assert_eq!(sim.request(c, &["PING"]), Reply::error(NOAUTH));
    let hello = sim.request(
        c,
        &["HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "x"],
    );
    assert!(
        matches!(hello, Reply::Array(ref fields) if fields.len() == 14),
        "{hello:?}"
    );
    assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
}

#[test]
fn auth_without_a_password_set() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    assert_eq!(
        sim.request(c, &["AUTH", "x"]),
        Reply::error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
    );
    // The default user has no password: any password is right for it, as in Redis.
    assert_eq!(sim.request(c, &["AUTH", "default", "x"]), Reply::ok());
    assert_eq!(
        sim.request(c, &["AUTH", "alice", "x"]),
        Reply::error(WRONGPASS)
    );
}

/// Before authenticating, a client may send at most 10 arguments and 16 KiB per argument (Redis'
/// protection against unauthenticated clients filling the server's memory).
#[test]
fn unauthenticated_client_gets_small_request_limits() {
    let mut buffers = ServerBuffers::default();
    let mut sim = with_password(&mut buffers, "s3cret");
    let c = sim.connect();
    let eleven: Vec<&str> = vec!["a"; 11];
    sim.send(c, &encode_str(&eleven));
    assert_eq!(
        sim.replies(c),
        vec![Reply::error(
            "ERR Protocol error: unauthenticated multibulk length"
        )]
    );
    assert!(sim.closed_by_server(c));

    // An input buffer that takes bulks past 16 KiB, so the limit is the authentication one.
    let mut config = sim::config(Timeouts::DEFAULT);
    config.security.set_password(b"s3cret").unwrap();
    config.buffers = net_shell::BufferSizes {
        rx: 4096,
        tx: 40_000,
        input: 32_768,
    };
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::with(&mut buffers, config, sim::store());
    let c = sim.connect();
    sim.send(c, b"*2\r\n$3\r\nGET\r\n$20000\r\n");
    assert_eq!(
        sim.replies(c),
        vec![Reply::error(
            "ERR Protocol error: unauthenticated bulk length"
        )]
    );
    assert!(sim.closed_by_server(c));

    // Ten arguments are parsed (and refused for want of a password, not for their number).
    let c = sim.connect();
    let ten: Vec<&str> = vec!["a"; 10];
    sim.send(c, &encode_str(&ten));
    assert_eq!(
        sim.replies(c),
        vec![Reply::error(
            "ERR unknown command 'a', with args beginning with: 'a' 'a' 'a' 'a' 'a' 'a' 'a' 'a' 'a' "
        )]
    );
    assert_eq!(sim.request(c, &["AUTH", "s3cret"]), Reply::ok());
    assert_eq!(sim.request(c, &eleven), Reply::error("ERR unknown command 'a', with args beginning with: 'a' 'a' 'a' 'a' 'a' 'a' 'a' 'a' 'a' 'a' "));
}

/// `CONFIG SET requirepass` applies to connections made after it; connections already in keep
/// their standing, as in Redis.
#[test]
fn config_set_requirepass_applies_to_new_connections() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let before = sim.connect_ready();
    assert_eq!(
        sim.request(before, &["CONFIG", "SET", "requirepass", "pw"]),
        Reply::ok()
    );
    assert_eq!(
        sim.request(before, &["CONFIG", "GET", "requirepass"]),
        Reply::Array(vec![
            Reply::Bulk(b"requirepass".to_vec()),
            Reply::Bulk(b"pw".to_vec())
        ])
    );
    assert_eq!(sim.request(before, &["PING"]), Reply::simple("PONG"));
    let after = sim.connect();
    assert_eq!(sim.request(after, &["PING"]), Reply::error(NOAUTH));
    assert_eq!(sim.request(after, &["AUTH", "pw"]), Reply::ok());
    assert_eq!(
        sim.request(after, &["CONFIG", "SET", "requirepass", ""]),
        Reply::ok()
    );
    let open = sim.connect();
    assert_eq!(sim.request(open, &["PING"]), Reply::simple("PONG"));
    let long = "p".repeat(net_shell::MAX_PASSWORD_LEN + 1);
    assert_eq!(
        sim.request(open, &["CONFIG", "SET", "requirepass", &long]),
        Reply::error("ERR CONFIG SET failed (possibly related to argument 'requirepass') - argument must be at most 128 bytes")
    );
}

/// No password and protected mode on: a client from outside the trusted network gets Redis'
/// explanation and is disconnected; one from inside is served.
#[test]
fn protected_mode_refuses_clients_outside_the_trusted_network() {
    let elsewhere = Ipv4Cidr::new(Ipv4Address::new(192, 168, 7, 0), 24);
    let mut buffers = ServerBuffers::default();
    let mut sim = with_security(&mut buffers, Security::DEFAULT.trusting(Some(elsewhere)));
    let c = sim.connect();
    let replies = sim.replies(c);
    assert_eq!(replies.len(), 1, "{replies:?}");
    let text = replies[0].error_text().unwrap_or_default().to_string();
    assert!(text.starts_with(DENIED_START), "{text}");
    assert!(text.ends_with("NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."), "{text}");
    assert!(sim.closed_by_server(c));
    assert_eq!(sim.stats().protected_mode_refusals, 1);
    assert_eq!(sim.stats().connected_clients, 0);

    // Nobody trusted at all (the default): refused too.
    let mut buffers = ServerBuffers::default();
    let mut sim = with_security(&mut buffers, Security::DEFAULT);
    let c = sim.connect();
    assert!(sim.replies(c)[0]
        .error_text()
        .unwrap_or_default()
        .starts_with(DENIED_START));

    // A password, or protected mode off, lets everyone in.
    let mut with_password = Security::DEFAULT;
    with_password.set_password(b"pw").unwrap();
    let mut buffers = ServerBuffers::default();
    let mut sim = with_security(&mut buffers, with_password);
    let c = sim.connect();
    assert_eq!(sim.request(c, &["AUTH", "pw"]), Reply::ok());
    let mut open = Security::DEFAULT;
    open.protected_mode = false;
    let mut buffers = ServerBuffers::default();
    let mut sim = with_security(&mut buffers, open);
    let c = sim.connect_ready();
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "protected-mode"]),
        Reply::Array(vec![
            Reply::Bulk(b"protected-mode".to_vec()),
            Reply::Bulk(b"no".to_vec())
        ])
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "protected-mode", "maybe"]),
        Reply::error("ERR CONFIG SET failed (possibly related to argument 'protected-mode') - argument must be 'yes' or 'no'")
    );
}

/// The trusted network can be changed at run time; it applies to the next connection.
#[test]
fn config_set_trusted_network() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    assert_eq!(
        sim.request(c, &["CONFIG", "GET", "trusted-network"]),
        Reply::Array(vec![
            Reply::Bulk(b"trusted-network".to_vec()),
            Reply::Bulk(b"10.0.0.2/24".to_vec())
        ])
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "trusted-network", "not-a-network"]),
        Reply::error("ERR CONFIG SET failed (possibly related to argument 'trusted-network') - argument must be an IPv4 network like 10.0.0.0/24, or empty")
    );
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "trusted-network", "10.9.9.0/24"]),
        Reply::ok()
    );
    assert_eq!(sim.request(c, &["PING"]), Reply::simple("PONG"));
    let refused = sim.connect();
    assert!(sim.replies(refused)[0]
        .error_text()
        .unwrap_or_default()
        .starts_with(DENIED_START));
}
