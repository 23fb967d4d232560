//! End to end over a real Linux tap: the real `net-shell` binary in a network namespace this
//! test creates (and removes, also on failure), driven by the real `redis-cli` and by raw
//! sockets from Python inside the same namespace. No traffic leaves the namespace.

use std::io::Read as _;
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use host_tests::e2e::{self, KillOnDrop, Namespace};

const TAP: &str = "nstap0";
const HOST: &str = "10.78.0.1/24";
const SHELL_IP: &str = "10.78.0.2";

/// One build for every test in this file.
fn binary() -> &'static Result<std::path::PathBuf, String> {
    static BINARY: OnceLock<Result<std::path::PathBuf, String>> = OnceLock::new();
    BINARY.get_or_init(e2e::build_net_shell)
}

/// A running shell in its own namespace.
struct Shell {
    // Field order matters: the process dies before its namespace goes.
    process: KillOnDrop,
    namespace: Namespace,
}

impl Shell {
    /// Starts the shell, or `None` if this machine cannot (skipped outside CI).
    fn start(test: &str, extra: &[&str]) -> Option<Shell> {
        Self::start_logging(test, extra, "warn", Stdio::null())
    }

    /// [`start`](Self::start) with `--log-level log_level` and the log going to `stderr`.
    /// A piped log must be read, or the shell blocks once the pipe is full.
    fn start_logging(test: &str, extra: &[&str], log_level: &str, stderr: Stdio) -> Option<Shell> {
        if let Err(reason) = e2e::can_make_namespaces() {
            e2e::skip(&reason);
            return None;
        }
        for program in ["redis-cli", "python3"] {
            if !e2e::have(program) {
                e2e::skip(&format!("{program} is not installed"));
                return None;
            }
        }
        let binary = binary().as_ref().expect("building net-shell failed");
        let name = format!("nsh-{test}-{}", std::process::id());
        let namespace = Namespace::create(&name, TAP, HOST).expect("create namespace");
        let address = format!("{SHELL_IP}/24");
        let mut args = vec![
            "--tap",
            TAP,
            "--address",
            &address,
            // The namespace's side of the tap is this host: trusted, as Redis trusts loopback.
            "--trusted-network",
            HOST,
            "--log-level",
            log_level,
        ];
        args.extend_from_slice(extra);
        let (process, ready) = e2e::start_net_shell(&namespace, binary, &args, stderr)
            .expect("net-shell never printed its ready line");
        assert!(ready.contains(SHELL_IP), "{ready}");
        Some(Shell { process, namespace })
    }

    /// Runs one `redis-cli` command against the shell and returns its output, trimmed.
    fn cli(&self, args: &[&str]) -> String {
        e2e::stdout_of(
            self.namespace
                .command("redis-cli")
                .args(["-h", SHELL_IP, "-p", "6379"])
                .args(args),
        )
        .trim()
        .to_string()
    }

    /// Runs a Python script inside the namespace and returns its stdout lines. Its arguments
    /// are the shell's address, then `args`.
    fn python(&self, script: &str, args: &[&str]) -> Vec<String> {
        e2e::stdout_of(
            self.namespace
                .command("python3")
                .args(["-c", script, SHELL_IP])
                .args(args),
        )
        .lines()
        .map(str::to_string)
        .collect()
    }

    fn info_field(&self, field: &str) -> u64 {
        e2e::info_field(&self.cli(&["INFO"]), field)
    }
}

#[test]
fn tap_shell_answers_redis_cli_and_removes_expired_keys() {
    let Some(shell) = Shell::start("kv", &[]) else {
        return;
    };
    assert_eq!(shell.cli(&["PING"]), "PONG");
    assert_eq!(shell.cli(&["SET", "greeting", "hello"]), "OK");
    assert_eq!(shell.cli(&["GET", "greeting"]), "hello");
    assert_eq!(shell.cli(&["EXPIRE", "greeting", "100"]), "1");
    let ttl: u64 = shell
        .cli(&["TTL", "greeting"])
        .parse()
        .expect("TTL integer");
    assert!((99..=100).contains(&ttl), "TTL {ttl}");
    assert_eq!(shell.cli(&["SET", "short", "lived", "PX", "300"]), "OK");
    assert_eq!(shell.cli(&["DBSIZE"]), "2");
    // Generous: the key is due after 300 ms; the server removes it within a tick of that.
    std::thread::sleep(Duration::from_millis(1500));
    // DBSIZE counts keys not yet removed, so this drop means removed, not merely hidden.
    assert_eq!(shell.cli(&["DBSIZE"]), "1");
    assert_eq!(shell.cli(&["GET", "short"]), "");
    assert!(shell.info_field("expired_keys") >= 1);
    assert_eq!(shell.cli(&["PERSIST", "greeting"]), "1");
    assert_eq!(shell.cli(&["TTL", "greeting"]), "-1");
}

/// Opens an idle connection and an active one; prints what each saw.
const IDLE_SCRIPT: &str = r#"
import socket, sys, time
host = sys.argv[1]
idle = socket.create_connection((host, 6379), timeout=10)
active = socket.create_connection((host, 6379), timeout=10)
idle.sendall(b"PING\r\n"); print("idle-first", idle.recv(64))
start = time.time()
pongs = 0
while time.time() - start < 3.5:
    active.sendall(b"PING\r\n")
    if active.recv(64) == b"+PONG\r\n":
        pongs += 1
    time.sleep(0.25)
idle.settimeout(5)
try:
    print("idle-after", idle.recv(64))
except ConnectionResetError:
    print("idle-after", b"")
active.sendall(b"PING\r\n"); print("active-after", active.recv(64))
print("pongs", pongs)
"#;

#[test]
fn tap_idle_connection_is_closed_while_active_one_stays() {
    let Some(shell) = Shell::start("idle", &["--idle-timeout-ms", "1500"]) else {
        return;
    };
    let lines = shell.python(IDLE_SCRIPT, &[]);
    assert!(
        lines.contains(&"idle-first b'+PONG\\r\\n'".to_string()),
        "{lines:?}"
    );
    // EOF: the server closed the idle connection.
    assert!(lines.contains(&"idle-after b''".to_string()), "{lines:?}");
    assert!(
        lines.contains(&"active-after b'+PONG\\r\\n'".to_string()),
        "{lines:?}"
    );
    assert!(shell.info_field("idle_timeout_closes") >= 1);
}

/// A malformed request on one connection while another keeps working.
const MALFORMED_SCRIPT: &str = r#"
import socket, sys
host = sys.argv[1]
good = socket.create_connection((host, 6379), timeout=10)
bad = socket.create_connection((host, 6379), timeout=10)
good.sendall(b"SET k v\r\n"); print("good-set", good.recv(64))
bad.sendall(b"*1\r\n$x\r\n")
reply = b""
while True:
    chunk = bad.recv(256)
    if not chunk:
        break
    reply += chunk
print("bad", reply)
good.sendall(b"GET k\r\n"); print("good-get", good.recv(64))
"#;

#[test]
fn tap_malformed_request_is_answered_and_closed_while_other_client_works() {
    let Some(shell) = Shell::start("bad", &[]) else {
        return;
    };
    let lines = shell.python(MALFORMED_SCRIPT, &[]);
    assert!(
        lines.contains(&"good-set b'+OK\\r\\n'".to_string()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"bad b'-ERR Protocol error: invalid bulk length\\r\\n'".to_string()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"good-get b'$1\\r\\nv\\r\\n'".to_string()),
        "{lines:?}"
    );
    assert!(shell.info_field("protocol_error_closes") >= 1);
}

/// Sends SIGTERM to the shell and returns how long it took to exit and what it logged.
fn terminate(shell: &mut Shell, within: Duration) -> (Duration, String) {
    let mut log = shell.process.take_stderr().expect("stderr piped");
    let child = shell.process.child();
    let start = Instant::now();
    e2e::send_signal(child, "TERM").expect("send SIGTERM");
    let status = e2e::wait_exit(child, within)
        .expect("wait for net-shell")
        .unwrap_or_else(|| panic!("net-shell still running {within:?} after SIGTERM"));
    let took = start.elapsed();
    assert!(status.success(), "net-shell exited with {status}");
    let mut text = String::new();
    log.read_to_string(&mut text).expect("read the shell's log");
    (took, text)
}

#[test]
fn tap_sigterm_stops_an_idle_shell_at_once() {
    let Some(mut shell) = Shell::start_logging("sig", &[], "info", Stdio::piped()) else {
        return;
    };
    assert_eq!(shell.cli(&["PING"]), "PONG");
    // Idle: the shell is asleep in its wait, with no deadline for seconds.
    std::thread::sleep(Duration::from_millis(300));
    // Generous for a loaded CI machine; scripts/measure-signal-exit.sh measures the real figure.
    let (took, log) = terminate(&mut shell, Duration::from_secs(1));
    assert!(log.contains("signal received"), "{log}");
    assert!(log.contains("stopped: "), "{log}");
    eprintln!("SIGTERM to exit: {took:?}");
}

/// Connects and checks the connection works, then asks for SIGTERM to the shell (pid in
/// argv[2]) and reports what the open connection saw.
const SIGTERM_SCRIPT: &str = r#"
import os, signal, socket, sys
conn = socket.create_connection((sys.argv[1], 6379), timeout=10)
conn.sendall(b"PING\r\n"); print("before", conn.recv(64))
os.kill(int(sys.argv[2]), signal.SIGTERM)
try:
    print("after", conn.recv(64))
except ConnectionResetError:
    print("after reset")
"#;

#[test]
fn tap_sigterm_closes_open_connections_then_exits() {
    let Some(mut shell) = Shell::start_logging("sigconn", &[], "info", Stdio::piped()) else {
        return;
    };
    let pid = shell.process.child().id().to_string();
    let lines = shell.python(SIGTERM_SCRIPT, &[&pid]);
    assert!(
        lines.contains(&"before b'+PONG\\r\\n'".to_string()),
        "{lines:?}"
    );
    // EOF, not a reset: the shell closed the connection gracefully.
    assert!(lines.contains(&"after b''".to_string()), "{lines:?}");
    // The signal has been sent already; this only collects the exit within the 2 s grace.
    let child = shell.process.child();
    let status = e2e::wait_exit(child, Duration::from_secs(5))
        .expect("wait for net-shell")
        .expect("net-shell still running 5 s after SIGTERM");
    assert!(status.success(), "net-shell exited with {status}");
    let mut log = String::new();
    shell
        .process
        .take_stderr()
        .expect("stderr piped")
        .read_to_string(&mut log)
        .expect("read the shell's log");
    assert!(log.contains("closing 1 connection(s)"), "{log}");
    assert!(log.contains("stopped: 1 connections served"), "{log}");
}
