//! End to end on the emulated board: the real firmware (net-shell on the LAN9118) in
//! `qemu-system-arm -machine mps2-an386`, driven by the real `redis-cli` and by raw TCP clients.
//!
//! The firmware is built once, with a short idle timeout chosen at build time
//! (`NET_SHELL_IDLE_TIMEOUT_MS`). Each test boots its own QEMU, reachable only through one
//! forwarded port on 127.0.0.1 (`restrict=on`), killed when the test ends, pass or fail. Guest
//! time follows host time, so the waits are wall-clock waits with generous margins.
//!
//! Each test is `#[ignore]`d (it needs QEMU): `cargo test -- --include-ignored` runs them, as
//! `scripts/check.sh` does, and a missing tool fails them.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use host_tests::e2e::{self, info_field, KillOnDrop};
use host_tests::reply::Reply;

const QEMU: &str = "qemu-system-arm";
/// The firmware's idle timeout in these tests (milliseconds), set when it is built.
const IDLE_TIMEOUT_MS: u64 = 2_000;
const IDLE_TIMEOUT: Duration = Duration::from_millis(IDLE_TIMEOUT_MS);
const READY: &str = "net-shell ready on 10.0.2.15:6379";
/// The largest value the firmware stores (`firmware/src/app.rs`, `MAX_VALUE_LEN`).
const MAX_VALUE_LEN: usize = 2048;
const BOOT_TIMEOUT: Duration = Duration::from_secs(60);
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// One build for every test in this file.
fn firmware() -> &'static Result<PathBuf, String> {
    static ELF: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    ELF.get_or_init(|| {
        let idle = IDLE_TIMEOUT_MS.to_string();
        e2e::build_qemu_firmware(&[("NET_SHELL_IDLE_TIMEOUT_MS", &idle)])
    })
}

/// The firmware running in QEMU.
struct Board {
    qemu: KillOnDrop,
    port: u16,
}

impl Board {
    /// Builds (once) and boots the firmware, and waits for its ready line (the test fails if
    /// this machine cannot).
    fn boot() -> Board {
        for program in [QEMU, "redis-cli"] {
            if !e2e::have(program) {
                e2e::missing(&format!(
                    "{program} is not installed (apt-get install qemu-system-arm redis-tools)"
                ));
            }
        }
        let elf = firmware().as_ref().expect("building the firmware failed");
        let port = e2e::free_local_port();
        let mut qemu = KillOnDrop::new(
            Command::new(QEMU)
                .args(["-machine", "mps2-an386", "-cpu", "cortex-m4", "-nographic"])
                .args(["-monitor", "none", "-serial", "none"])
                .args(["-semihosting-config", "enable=on,target=native"])
                .arg("-nic")
                .arg(format!(
                    "user,model=lan9118,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:6379"
                ))
                .arg("-kernel")
                .arg(elf)
                .stdin(Stdio::null())
                // defmt frames (binary); decode with `defmt-print -e <ELF>` when debugging.
                .stdout(Stdio::null())
                // Plain text: the ready line, and a panic's message.
                .stderr(Stdio::piped())
                .spawn()
                .expect("start qemu-system-arm"),
        );
        let stderr = qemu.take_stderr().expect("piped stderr");
        let ready = e2e::wait_for_line_in(stderr, READY, BOOT_TIMEOUT)
            .unwrap_or_else(|seen| panic!("the firmware never got ready: {seen}"));
        assert!(ready.contains(READY), "{ready}");
        Board { qemu, port }
    }

    /// Runs one `redis-cli` command and returns its output, trimmed.
    fn cli(&self, args: &[&str]) -> String {
        e2e::stdout_of(
            Command::new("redis-cli")
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
                .args(args),
        )
        .trim()
        .to_string()
    }

    /// A field of `INFO`, read with `redis-cli`.
    fn info_field(&self, field: &str) -> u64 {
        e2e::info_field(&self.cli(&["INFO"]), field)
    }

    fn connect(&self) -> Client {
        Client::connect(self.port)
    }

    /// Fails the test if QEMU exited (a firmware panic exits with status 1).
    fn assert_running(&mut self) {
        let status = self.qemu.child().try_wait().expect("query QEMU");
        assert!(status.is_none(), "QEMU exited: {status:?}");
    }
}

/// A raw TCP client speaking RESP2.
struct Client {
    stream: TcpStream,
    /// Bytes received and not yet decoded.
    pending: Vec<u8>,
}

impl Client {
    fn connect(port: u16) -> Self {
        let stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).expect("connect to QEMU");
        stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
        stream.set_nodelay(true).unwrap();
        Self {
            stream,
            pending: Vec::new(),
        }
    }

    fn send(&mut self, args: &[&str]) {
        let mut request = format!("*{}\r\n", args.len());
        for arg in args {
            request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        self.stream
            .write_all(request.as_bytes())
            .expect("send a request");
    }

    fn command(&mut self, args: &[&str]) -> Reply {
        self.send(args);
        self.reply()
    }

    fn ping(&mut self) {
        assert_eq!(self.command(&["PING"]), Reply::Simple("PONG".into()));
    }

    /// The next reply, decoded by the tests' one decoder.
    fn reply(&mut self) -> Reply {
        loop {
            if let Some((reply, used)) = Reply::decode(&self.pending) {
                self.pending.drain(..used);
                return reply;
            }
            let mut buf = [0; 4096];
            let got = self.stream.read(&mut buf).expect("read a reply");
            assert!(got > 0, "the server closed before a whole reply");
            self.pending.extend_from_slice(&buf[..got]);
        }
    }

    fn info(&mut self, section: &str) -> String {
        match self.command(&["INFO", section]) {
            Reply::Bulk(text) => String::from_utf8(text).expect("UTF-8 INFO"),
            other => panic!("INFO replied {other:?}"),
        }
    }

    /// Everything the server sends until it closes the connection.
    fn read_until_closed(&mut self) -> Vec<u8> {
        let mut received = std::mem::take(&mut self.pending);
        self.stream
            .read_to_end(&mut received)
            .expect("read until the server closes");
        received
    }
}

/// Polls `INFO clients` on `client` until `connected_clients` is `count` (closing clients free
/// their slot a moment after the close).
fn wait_for_clients(client: &mut Client, count: u64) {
    let deadline = Instant::now() + IO_TIMEOUT;
    loop {
        let connected = info_field(&client.info("clients"), "connected_clients");
        if connected == count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still {connected} clients, expected {count}"
        );
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
#[ignore = "needs qemu-system-arm, redis-cli and the thumbv7em target"]
fn qemu_firmware_serves_redis_cli_and_removes_expired_keys() {
    let mut board = Board::boot();
    assert_eq!(board.cli(&["PING"]), "PONG");
    assert_eq!(board.cli(&["SET", "greeting", "hello"]), "OK");
    assert_eq!(board.cli(&["GET", "greeting"]), "hello");
    // The largest value the firmware takes (app::MAX_VALUE_LEN), and one byte more.
    let large = "v".repeat(MAX_VALUE_LEN);
    assert_eq!(board.cli(&["SET", "large", &large]), "OK");
    assert_eq!(board.cli(&["GET", "large"]), large);
    let too_large = "v".repeat(MAX_VALUE_LEN + 1);
    assert_eq!(
        board.cli(&["SET", "too-large", &too_large]),
        format!("ERR value is too large (max {MAX_VALUE_LEN} bytes)")
    );

    assert_eq!(board.cli(&["EXPIRE", "greeting", "100"]), "1");
    let ttl: u64 = board.cli(&["TTL", "greeting"]).parse().expect("TTL");
    assert!((99..=100).contains(&ttl), "TTL {ttl}");
    let pttl: u64 = board.cli(&["PTTL", "greeting"]).parse().expect("PTTL");
    assert!((90_000..=100_000).contains(&pttl), "PTTL {pttl}");
    assert_eq!(board.cli(&["TTL", "large"]), "-1");
    assert_eq!(board.cli(&["TTL", "missing"]), "-2");

    assert_eq!(board.cli(&["SET", "short", "lived", "PX", "1000"]), "OK");
    let pttl: u64 = board.cli(&["PTTL", "short"]).parse().expect("PTTL");
    assert!((1..=1000).contains(&pttl), "PTTL {pttl}");
    assert_eq!(board.cli(&["DBSIZE"]), "3");
    assert_eq!(board.info_field("expired_keys"), 0);
    // Due after 1 s; removed by the firmware's timer within a tick of that. Nothing reads the
    // key meanwhile, so only the timer can have removed it.
    thread::sleep(Duration::from_millis(2_500));
    // DBSIZE counts keys not yet removed: this drop means removed, not merely hidden.
    assert_eq!(board.cli(&["DBSIZE"]), "2");
    assert_eq!(board.info_field("expired_keys"), 1);
    assert_eq!(board.cli(&["GET", "short"]), "");
    assert_eq!(board.cli(&["PTTL", "short"]), "-2");

    assert_eq!(board.cli(&["PERSIST", "greeting"]), "1");
    assert_eq!(board.cli(&["TTL", "greeting"]), "-1");
    assert_eq!(board.cli(&["DEL", "greeting", "large"]), "2");
    assert_eq!(board.cli(&["DBSIZE"]), "0");
    board.assert_running();
}

#[test]
#[ignore = "needs qemu-system-arm, redis-cli and the thumbv7em target"]
fn qemu_firmware_closes_an_idle_client_and_keeps_an_active_one() {
    let mut board = Board::boot();
    assert_eq!(board.info_field("idle_timeout_ms"), IDLE_TIMEOUT_MS);
    let mut idle = board.connect();
    let mut active = board.connect();
    idle.ping();
    let since = Instant::now();
    active.ping();

    // Times how long the idle client stays open after its last command.
    let mut stream = idle.stream;
    stream.set_read_timeout(Some(4 * IDLE_TIMEOUT)).unwrap();
    let watcher = thread::spawn(move || {
        let mut buf = [0; 64];
        let outcome = match stream.read(&mut buf) {
            Ok(0) => Ok(()),
            Ok(n) => Err(format!("unexpected bytes {:?}", &buf[..n])),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => Ok(()),
            Err(e) => Err(format!("not closed: {e}")),
        };
        (outcome, since.elapsed())
    });

    // A command every 250 ms, for twice the idle timeout: never idle for long.
    while since.elapsed() < 2 * IDLE_TIMEOUT {
        active.ping();
        thread::sleep(Duration::from_millis(250));
    }
    let (outcome, open_for) = watcher.join().expect("watcher thread");
    outcome.expect("the idle client was closed");
    assert!(
        open_for >= IDLE_TIMEOUT.mul_f64(0.9) && open_for <= 2 * IDLE_TIMEOUT,
        "the idle client was closed after {open_for:?}, the idle timeout is {IDLE_TIMEOUT:?}"
    );
    active.ping();
    assert_eq!(
        info_field(&active.info("stats"), "idle_timeout_closes"),
        1,
        "only the idle client timed out"
    );
    board.assert_running();
}

#[test]
#[ignore = "needs qemu-system-arm, redis-cli and the thumbv7em target"]
fn qemu_firmware_closes_a_malformed_request_and_keeps_serving() {
    let mut board = Board::boot();
    let mut good = board.connect();
    good.ping();
    // Inline commands, split across segments, pipelined.
    good.stream.write_all(b"PI").unwrap();
    thread::sleep(Duration::from_millis(50));
    good.stream.write_all(b"NG\r\nping\r\n").unwrap();
    assert_eq!(good.reply(), Reply::Simple("PONG".into()));
    assert_eq!(good.reply(), Reply::Simple("PONG".into()));

    let mut bad = board.connect();
    bad.stream.write_all(b"*1\r\n$x\r\n").unwrap();
    assert_eq!(
        String::from_utf8_lossy(&bad.read_until_closed()),
        "-ERR Protocol error: invalid bulk length\r\n"
    );

    assert_eq!(good.command(&["SET", "k", "v"]), Reply::Simple("OK".into()));
    assert_eq!(good.command(&["GET", "k"]), Reply::Bulk(b"v".to_vec()));
    assert_eq!(info_field(&good.info("stats"), "protocol_error_closes"), 1);
    assert_eq!(board.cli(&["GET", "k"]), "v");
    board.assert_running();
}

#[test]
#[ignore = "needs qemu-system-arm, redis-cli and the thumbv7em target"]
fn qemu_firmware_serves_every_client_slot_and_refuses_one_more() {
    let mut board = Board::boot();
    let max: usize = board
        .info_field("maxclients")
        .try_into()
        .expect("maxclients");
    assert!(max >= 2, "maxclients {max}");

    let mut clients = vec![board.connect()];
    // redis-cli's connection above frees its slot a moment after it closes.
    wait_for_clients(&mut clients[0], 1);
    while clients.len() < max {
        let mut client = board.connect();
        client.ping();
        clients.push(client);
    }
    wait_for_clients(&mut clients[0], max as u64);

    let mut refused = board.connect();
    assert_eq!(
        String::from_utf8_lossy(&refused.read_until_closed()),
        "-ERR max number of clients reached\r\n"
    );

    // Every client at once: all requests out first, then all replies.
    for (i, client) in clients.iter_mut().enumerate() {
        client.send(&["SET", &format!("client:{i}"), &i.to_string()]);
        client.send(&["INCR", &format!("client:{i}")]);
    }
    for (i, client) in clients.iter_mut().enumerate() {
        assert_eq!(client.reply(), Reply::Simple("OK".into()), "client {i}");
        assert_eq!(client.reply(), Reply::Int(i as i64 + 1), "client {i}");
    }
    assert_eq!(
        info_field(&clients[0].info("stats"), "rejected_connections"),
        1
    );

    // A freed slot serves the next client.
    drop(clients.pop());
    wait_for_clients(&mut clients[0], max as u64 - 1);
    let mut next = board.connect();
    next.ping();
    assert_eq!(next.command(&["DBSIZE"]), Reply::Int(max as i64));
    board.assert_running();
}

/// The QEMU board reads the host's Unix time through semihosting at boot, so absolute expiry
/// works: `EXPIREAT` and `PXAT` are accepted, `EXPIRETIME` gives the time back, and a key set
/// with `PXAT` is removed when that time comes.
#[test]
#[ignore = "needs qemu-system-arm, redis-cli and the thumbv7em target"]
fn qemu_firmware_has_a_wall_clock_for_absolute_expiry() {
    let board = Board::boot();
    let unix_now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("the host clock is after 1970")
    };
    let at = unix_now().as_secs() + 100;
    assert_eq!(board.cli(&["SET", "k", "v"]), "OK");
    assert_eq!(board.cli(&["EXPIREAT", "k", &at.to_string()]), "1");
    assert_eq!(board.cli(&["EXPIRETIME", "k"]), at.to_string());
    let ttl: u64 = board.cli(&["TTL", "k"]).parse().expect("TTL");
    // The board's clock is the host's, to within the second boundary it aligned to at boot.
    assert!((98..=100).contains(&ttl), "TTL {ttl}");

    let pxat = unix_now().as_millis() as u64 + 1_500;
    assert_eq!(
        board.cli(&["SET", "soon", "v", "PXAT", &pxat.to_string()]),
        "OK"
    );
    assert_eq!(board.cli(&["PEXPIRETIME", "soon"]), pxat.to_string());
    let pttl: u64 = board.cli(&["PTTL", "soon"]).parse().expect("PTTL");
    assert!((500..=1_500).contains(&pttl), "PTTL {pttl}");
    thread::sleep(Duration::from_millis(3_000));
    assert_eq!(board.cli(&["EXISTS", "soon"]), "0");
    assert_eq!(board.info_field("expired_keys"), 1);
}

/// Lists on the board (the firmware's `lists` feature, on by default for QEMU): the commands work
/// over the store's fixed pool; a list is one value, so a push that would take it past the largest
/// value is refused and the list keeps every element it had; a reply larger than the board's
/// buffers is refused with an error, and the connection goes on.
#[test]
#[ignore = "needs qemu-system-arm, redis-cli and the thumbv7em target"]
fn qemu_firmware_serves_lists_within_its_largest_value() {
    let mut board = Board::boot();
    assert_eq!(board.cli(&["RPUSH", "l", "b", "c"]), "2");
    assert_eq!(board.cli(&["LPUSH", "l", "a"]), "3");
    assert_eq!(board.cli(&["LRANGE", "l", "0", "-1"]), "a\nb\nc");
    assert_eq!(
        board.cli(&["GET", "l"]),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );
    assert_eq!(board.cli(&["LMOVE", "l", "m", "LEFT", "RIGHT"]), "a");
    assert_eq!(board.cli(&["RPOP", "l"]), "c");
    assert_eq!(board.cli(&["LPOP", "l"]), "b");
    assert_eq!(board.cli(&["EXISTS", "l"]), "0");
    assert_eq!(board.cli(&["LLEN", "m"]), "1");

    // 100-byte elements until the list would pass the largest value: each encoded in 102 bytes
    // (its length before and after it) after a 12-byte header, so 19 fit in 2,048 bytes.
    let element = "x".repeat(100);
    let mut accepted = 0;
    let refusal = loop {
        let reply = board.cli(&["RPUSH", "big", &element]);
        match reply.parse::<usize>() {
            Ok(len) => {
                accepted += 1;
                assert_eq!(len, accepted);
                assert!(
                    accepted <= MAX_VALUE_LEN / 100,
                    "no limit after {accepted} pushes"
                );
            }
            Err(_) => break reply,
        }
    };
    assert_eq!(accepted, 19);
    assert_eq!(
        refusal,
        format!("ERR value is too large (max {MAX_VALUE_LEN} bytes)")
    );
    assert_eq!(board.cli(&["LLEN", "big"]), accepted.to_string());
    assert_eq!(board.cli(&["LINDEX", "big", "-1"]), element);

    // 600 one-byte elements (3 bytes each) fit in one value, but not their LRANGE in one reply.
    let mut client = board.connect();
    for _ in 0..600 {
        client.send(&["RPUSH", "small", "y"]);
    }
    for i in 1..=600 {
        assert_eq!(client.reply(), Reply::Int(i));
    }
    assert_eq!(
        client.command(&["LRANGE", "small", "0", "-1"]),
        Reply::error("ERR reply too large")
    );
    assert_eq!(
        client.command(&["LRANGE", "small", "0", "1"]),
        Reply::Array(vec![Reply::bulk("y"), Reply::bulk("y")])
    );
    client.ping();
    board.assert_running();
}

/// The hashes with field deadlines the firmware has field timers for at once
/// (`firmware/src/app.rs`, `FIELD_TIMERS`).
const FIELD_TIMERS: usize = 16;

/// Hashes on the board (the firmware's `hashes` feature, on by default for QEMU), over the
/// store's fixed pool and fixed field timers: the commands work; a field's deadline removes it
/// on time, never early, and the hash goes with its last field; a hash is one value, so a field
/// that would take it past the largest value is refused and the hash keeps what it had; with
/// every field timer in use, one more hash's deadline is refused and nothing changes, until a
/// hash gives its timer back.
#[test]
#[ignore = "needs qemu-system-arm, redis-cli and the thumbv7em target"]
fn qemu_firmware_serves_hashes_and_field_deadlines_within_its_fixed_pools() {
    let mut board = Board::boot();
    assert_eq!(board.cli(&["HSET", "h", "a", "1", "b", "2"]), "2");
    assert_eq!(board.cli(&["HGET", "h", "a"]), "1");
    assert_eq!(board.cli(&["HGETALL", "h"]), "a\n1\nb\n2");
    assert_eq!(board.cli(&["HINCRBY", "h", "b", "40"]), "42");
    assert_eq!(board.cli(&["HLEN", "h"]), "2");
    assert_eq!(
        board.cli(&["GET", "h"]),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );

    // Field deadlines: `a` lives through 1 s, `b` through 2 s; the hash goes with `b`.
    let mut client = board.connect();
    let start = Instant::now();
    assert_eq!(
        client.command(&["HPEXPIRE", "h", "1000", "FIELDS", "1", "a"]),
        Reply::Array(vec![Reply::Int(1)])
    );
    assert_eq!(
        client.command(&["HPEXPIRE", "h", "2000", "FIELDS", "1", "b"]),
        Reply::Array(vec![Reply::Int(1)])
    );
    let gone = |client: &mut Client, field: &str, by: Duration| loop {
        let exists = client.command(&["HEXISTS", "h", field]);
        if exists == Reply::Int(0) {
            return start.elapsed();
        }
        assert_eq!(exists, Reply::Int(1));
        assert!(start.elapsed() < by, "{field} still there after {by:?}");
        thread::sleep(Duration::from_millis(10));
    };
    // Never early (guest and host clocks agree to a few ms), on time within a poll's margin.
    let a_gone = gone(&mut client, "a", Duration::from_millis(1_500));
    assert!(
        a_gone >= Duration::from_millis(990),
        "a gone after {a_gone:?}"
    );
    assert_eq!(
        client.command(&["HGETALL", "h"]),
        Reply::Array(vec![Reply::bulk("b"), Reply::bulk("42")])
    );
    let b_gone = gone(&mut client, "b", Duration::from_millis(2_500));
    assert!(
        b_gone >= Duration::from_millis(1_990),
        "b gone after {b_gone:?}"
    );
    assert_eq!(client.command(&["EXISTS", "h"]), Reply::Int(0));

    // The largest hash: fields `fNN` of 60-byte values (packed, as Redis' listpack) until the
    // next would take the hash past the largest value.
    let value = "v".repeat(60);
    let mut accepted = 0;
    let refusal = loop {
        let field = format!("f{accepted:02}");
        let reply = board.cli(&["HSET", "big", &field, &value]);
        if reply == "1" {
            accepted += 1;
            assert!(
                accepted <= MAX_VALUE_LEN / 60,
                "no limit after {accepted} fields"
            );
        } else {
            break reply;
        }
    };
    assert_eq!(accepted, 30);
    assert_eq!(
        refusal,
        format!("ERR value is too large (max {MAX_VALUE_LEN} bytes)")
    );
    assert_eq!(board.cli(&["HLEN", "big"]), accepted.to_string());
    assert_eq!(board.cli(&["HGET", "big", "f29"]), value);

    // Every field timer in use: one more hash's deadline is refused, before anything changes.
    for i in 0..FIELD_TIMERS {
        let key = format!("t{i}");
        assert_eq!(board.cli(&["HSET", &key, "f", "1", "g", "2"]), "2");
        assert_eq!(
            board.cli(&["HPEXPIRE", &key, "600000", "FIELDS", "1", "f"]),
            "1"
        );
    }
    assert_eq!(board.cli(&["HSET", "one-more", "f", "1"]), "1");
    // A new connection wherever `client` sat idle through redis-cli calls: on a loaded machine
    // they take longer than the board's idle timeout, which closes it.
    let mut client = board.connect();
    let full = format!(
        "ERR no field timer free: at most {FIELD_TIMERS} hashes can have field deadlines at once"
    );
    assert_eq!(
        client.command(&["HPEXPIRE", "one-more", "600000", "FIELDS", "1", "f"]),
        Reply::error(&full)
    );
    assert_eq!(
        client.command(&["HSETEX", "one-more", "PX", "600000", "FIELDS", "1", "f", "9"]),
        Reply::error(&full)
    );
    assert_eq!(board.cli(&["HGETALL", "one-more"]), "f\n1");
    assert_eq!(board.cli(&["HPTTL", "one-more", "FIELDS", "1", "f"]), "-1");
    // A hash with a timer takes more deadlines on it.
    assert_eq!(
        board.cli(&["HPEXPIRE", "t0", "600000", "FIELDS", "1", "g"]),
        "1"
    );
    // A hash deleted gives its timer back to the next that asks.
    assert_eq!(board.cli(&["DEL", "t3"]), "1");
    let mut client = board.connect();
    assert_eq!(
        client.command(&["HPEXPIRE", "one-more", "600000", "FIELDS", "1", "f"]),
        Reply::Array(vec![Reply::Int(1)])
    );
    assert_eq!(
        client.command(&["HPEXPIRE", "t3", "600000", "FIELDS", "1", "f"]),
        Reply::Array(vec![Reply::Int(-2)])
    );
    client.ping();
    board.assert_running();
}
