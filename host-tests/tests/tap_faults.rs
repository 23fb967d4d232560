//! The real `net-shell` on a tap whose frames are lost, delayed and reordered in both directions,
//! inside a network namespace this test creates (and removes, also on failure).
//!
//! The faults come from `host-tests/scripts/tap-impair.py`, a user-space relay between the
//! shell's tap and a second tap that carries the clients' address: 5% loss, 20 ± 10 ms delay,
//! 25% of frames sent at once ahead of the delayed ones, each way, seeded. (`tc ... netem` would
//! shape only the frames going to the shell, and the project's VM kernels are built without it.)
//!
//! Through those faults, at the same time: `redis-benchmark` (SET and GET) must complete, and a
//! checking client (`src/bin/tap_faults_client.rs`, run inside the namespace) sends a seeded mix of
//! SET/GET/INCR/DEL, pipelined a few at a time, and compares every reply with a local model;
//! then it reads every key back. Zero wrong replies, zero lost acknowledged writes.

use std::io::{BufRead, BufReader, Read as _};
use std::process::Stdio;
use std::time::{Duration, Instant};

use host_tests::e2e::{self, KillOnDrop, Namespace};

/// The shell's tap: the kernel side has no address and answers no ARP, so every frame between
/// the shell and its clients goes through the relay.
const SHELL_TAP: &str = "fshell0";
/// The clients' tap: the relay holds its user side.
const CLIENT_TAP: &str = "fclient0";
const HOST: &str = "10.82.0.1/24";
const SHELL_IP: &str = "10.82.0.2";
const PORT: u16 = 6379;

/// The checking client's seed (`src/bin/tap_faults_client.rs`), overridable to replay a failure.
const SEED_ENV: &str = "TAP_FAULTS_SEED";
const DEFAULT_SEED: u64 = 0x7a9_f417;

/// Each of the three processes' bound; the whole test takes about 25 s here.
const BOUND: Duration = Duration::from_secs(50);

#[test]
#[ignore = "needs root, a tap and redis-benchmark"]
fn tap_faults_redis_benchmark_and_checked_commands_survive_loss_delay_and_reordering() {
    if let Err(reason) = e2e::can_make_namespaces() {
        e2e::missing(&reason);
    }
    for program in ["redis-benchmark", "python3"] {
        if !e2e::have(program) {
            e2e::missing(&format!("{program} is not installed"));
        }
    }
    let binary = e2e::build_net_shell().expect("building net-shell failed");
    let namespace =
        Namespace::create_empty(&format!("nsf-{}", std::process::id())).expect("create namespace");
    for args in [
        &["tuntap", "add", "dev", SHELL_TAP, "mode", "tap"][..],
        &["link", "set", SHELL_TAP, "arp", "off"],
        &["link", "set", SHELL_TAP, "up"],
        &["tuntap", "add", "dev", CLIENT_TAP, "mode", "tap"],
        &["addr", "add", HOST, "dev", CLIENT_TAP],
        &["link", "set", CLIENT_TAP, "up"],
    ] {
        namespace.ip(args).expect("set up the taps");
    }

    // Locals drop in reverse order: every process below dies before the namespace goes.
    let relay_script = e2e::workspace_root().join("host-tests/scripts/tap-impair.py");
    let mut relay = KillOnDrop::new(
        namespace
            .command("python3")
            .arg(&relay_script)
            .args(["--shell-tap", SHELL_TAP, "--client-tap", CLIENT_TAP])
            .args(["--loss", "0.05", "--delay-ms", "20", "--jitter-ms", "10"])
            .args(["--reorder", "0.25", "--seed", "7", "--max-seconds", "120"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the relay"),
    );
    let relay_out = relay.take_stdout().expect("relay stdout");
    let relay_lines = std::thread::spawn(move || {
        BufReader::new(relay_out)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<_>>()
    });

    let address = format!("{SHELL_IP}/24");
    let (shell, ready) = e2e::start_net_shell(
        &namespace,
        &binary,
        &[
            "--tap",
            SHELL_TAP,
            "--address",
            &address,
            // The clients' side of the link is inside this test's namespace: trusted.
            "--trusted-network",
            HOST,
            "--log-level",
            "warn",
        ],
        Stdio::inherit(),
    )
    .expect("net-shell never printed its ready line");
    assert!(ready.contains(SHELL_IP), "{ready}");

    let started = Instant::now();
    let port = PORT.to_string();
    let mut benchmark = KillOnDrop::new(
        namespace
            .command("redis-benchmark")
            .args(["-h", SHELL_IP, "-p", &port])
            .args(["-n", "2000", "-c", "10", "-t", "set,get", "--csv"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start redis-benchmark"),
    );
    let seed = std::env::var(SEED_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    let mut checker = KillOnDrop::new(
        namespace
            .command(env!("CARGO_BIN_EXE_tap_faults_client"))
            .arg(format!("{SHELL_IP}:{PORT}"))
            .arg(seed.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the checking client"),
    );

    let checker_status = e2e::wait_exit(checker.child(), BOUND)
        .expect("wait for the checking client")
        .unwrap_or_else(|| panic!("checking client still running after {BOUND:?}"));
    let checker_out = read_all(&mut checker);
    let benchmark_status = e2e::wait_exit(benchmark.child(), BOUND)
        .expect("wait for redis-benchmark")
        .unwrap_or_else(|| panic!("redis-benchmark still running after {BOUND:?}"));
    let benchmark_out = read_all(&mut benchmark);
    let took = started.elapsed();

    drop(shell);
    e2e::send_signal(relay.child(), "TERM").expect("stop the relay");
    let _ = e2e::wait_exit(relay.child(), Duration::from_secs(5));
    let relay_lines = relay_lines.join().expect("relay output");
    let checker_summary = checker_out
        .lines()
        .filter(|line| line.starts_with("checking client"))
        .collect::<Vec<_>>()
        .join("\n");
    eprintln!(
        "{}\n{benchmark_out}\n{checker_summary}\nboth done in {took:?}",
        relay_lines.join("\n")
    );

    assert!(
        checker_status.success() && checker_out.contains(" 0 wrong replies, 0 lost writes"),
        "checking client failed ({checker_status}):\n{checker_out}"
    );
    assert!(
        benchmark_status.success(),
        "redis-benchmark failed ({benchmark_status}):\n{benchmark_out}"
    );
    for test in ["\"SET\"", "\"GET\""] {
        assert!(benchmark_out.contains(test), "{benchmark_out}");
    }
    // The faults really happened, both ways.
    for direction in ["to shell:", "to client:"] {
        let line = relay_lines
            .iter()
            .find(|l| l.starts_with(direction))
            .unwrap_or_else(|| panic!("no relay counts {direction} in {relay_lines:?}"));
        let dropped = count_before(line, " dropped");
        let ahead = count_before(line, " sent ahead");
        assert!(dropped > 0 && ahead > 0, "{line}");
    }
}

/// A child's stdout and stderr, after it exited.
fn read_all(process: &mut KillOnDrop) -> String {
    let mut text = String::new();
    if let Some(mut out) = process.take_stdout() {
        let _ = out.read_to_string(&mut text);
    }
    if let Some(mut err) = process.take_stderr() {
        let _ = err.read_to_string(&mut text);
    }
    text
}

/// The number just before `label` in a relay count line.
fn count_before(line: &str, label: &str) -> u64 {
    line.split(label)
        .next()
        .and_then(|head| head.rsplit([' ', ',']).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count before {label:?} in {line:?}"))
}
