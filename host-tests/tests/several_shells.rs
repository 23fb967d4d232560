//! Several shells as one keyspace, end to end: three real `net-shell`s on a bridge in a network
//! namespace this test creates (and removes, also on failure), behind twemproxy (Debian's
//! `nutcracker`), or as a Redis Cluster whose topology the test pushes, driven by redis-py and
//! redis-cli inside the namespace. No traffic leaves the namespace.
//!
//! Each test is `#[ignore]`d (it needs root for the namespace and the taps, and the tools):
//! `cargo test -- --include-ignored` runs them, as `scripts/check.sh` does, and a missing tool
//! fails them.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use host_tests::e2e::{self, KillOnDrop};
use host_tests::shell_group::ShellGroup;

/// One build for every test in this file.
fn binary() -> &'static Result<PathBuf, String> {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BINARY.get_or_init(e2e::build_net_shell)
}

/// Fails the test unless this machine can run it: root, and `tools`, and redis-py.
fn require(tools: &[&str]) {
    if let Err(reason) = e2e::can_make_namespaces() {
        e2e::missing(&reason);
    }
    for tool in tools {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            e2e::missing(&format!("{tool} is not installed"));
        }
    }
    let have_redis_py = Command::new("python3")
        .args(["-c", "import redis"])
        .status()
        .is_ok_and(|s| s.success());
    if !have_redis_py {
        e2e::missing("redis-py is not installed (python3 -m pip install redis==8.1.0)");
    }
}

/// Three shells, each holding a share of the keys twemproxy spreads over them, write, read back
/// and expire 10,000 keys with TTLs (`host-tests/scripts/nutcracker_check.py` says what it
/// checks): every shell holds a share, every TTL reads back, and every key is removed on time
/// on the shell that holds it.
#[test]
#[ignore = "needs root, taps, nutcracker and redis-py"]
fn nutcracker_spreads_keys_over_three_shells_and_each_expires_its_share() {
    require(&["nutcracker", "python3"]);
    let binary = binary().as_ref().expect("building net-shell failed");
    let name = format!("nsh-twem-{}", std::process::id());
    let group = ShellGroup::start(&name, 81, 3, binary, |_| Vec::new()).expect("three shells");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let config = dir.join("nutcracker.yml");
    let servers: String = group
        .addresses()
        .iter()
        .enumerate()
        .map(|(i, address)| format!("    - {address}:6379:1 shell{i}\n"))
        .collect();
    std::fs::write(
        &config,
        format!(
            "shells:\n  listen: 127.0.0.1:22121\n  hash: fnv1a_64\n  distribution: ketama\n  \
             redis: true\n  timeout: 5000\n  auto_eject_hosts: false\n  servers:\n{servers}"
        ),
    )
    .expect("write nutcracker's configuration");
    let _proxy = KillOnDrop::new(
        group
            .command("nutcracker")
            .arg("-c")
            .arg(&config)
            .arg("-o")
            .arg(dir.join("nutcracker.log"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nutcracker"),
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/nutcracker_check.py");
    let output = group
        .command("python3")
        .args([script, "127.0.0.1", "22121", "10000"])
        .args(group.addresses())
        .output()
        .expect("run the check");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The figures (shares, write rate) for RESULTS.md.
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "redis-py defaults: refused, ConnectionError",
            "set 10000",
            "read back 10000",
            "every shell holds a share 3",
            "halfway, every shell removed its due keys on time",
            "all expired on time 10000",
        ],
        "{stdout}"
    );
}

/// Three shells in cluster mode, the topology pushed as a controller would (Kvrocks'
/// `CLUSTERX`), used by redis-py's `RedisCluster` and `redis-cli -c` for 10,000 keys with TTLs
/// each (`host-tests/scripts/cluster_check.py` says what it checks): `-MOVED` and `-CROSSSLOT`
/// for hand-made requests, every key read back, every shell holding only its own slots' keys,
/// and every key expired.
#[test]
#[ignore = "needs root, taps, redis-cli and redis-py"]
fn cluster_of_three_shells_serves_redis_py_and_redis_cli_by_slot() {
    require(&["redis-cli", "python3"]);
    let stdout = run_cluster_check("nsh-clu", 82, "cluster_check.py");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "topology pushed, a stale version refused",
            "MOVED and CROSSSLOT for hand-made requests",
            "redis-py RedisCluster stored and read back 10000 keys with TTLs",
            "every shell holds only its own slots' keys, and a share",
            "redis-cli -c stored and read back 10000 keys with TTLs",
            "all expired",
        ],
        "{stdout}"
    );
}

/// A slot range moved from one shell to another while redis-py writes
/// (`host-tests/scripts/migration_check.py` says what it checks): 10,000 keys of the range
/// move with their absolute deadlines, every acknowledged write reads back afterwards, every
/// deadline is within 1 ms of the one written, and keys due during the move are gone.
#[test]
#[ignore = "needs root, taps and redis-py"]
fn slot_range_moves_with_its_deadlines_while_a_client_writes() {
    require(&["python3"]);
    let stdout = run_cluster_check("nsh-mig", 84, "migration_check.py");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "10000 keys in the moving range, 10000 elsewhere",
            "-MOVED from the source to the new owner, which serves the range before the push",
            "the range moved while a client wrote; the new topology pushed",
            "every acknowledged write reads back, every deadline within 1 ms, keys due are gone",
            "the source holds no key",
        ],
        "{stdout}"
    );
}

/// Starts three shells in cluster mode on `10.<net>.0.0/24` in namespace `<prefix>-<pid>`, runs
/// `host-tests/scripts/<script>` inside it on 10,000 keys, and returns what it printed, after
/// checking that it succeeded. Its figures (stderr) go to this test's output for RESULTS.md.
fn run_cluster_check(prefix: &str, net: u8, script: &str) -> String {
    let binary = binary().as_ref().expect("building net-shell failed");
    let name = format!("{prefix}-{}", std::process::id());
    let group = ShellGroup::start(&name, net, 3, binary, |_| {
        vec!["--cluster-enabled".into(), "yes".into()]
    })
    .expect("three shells");
    let script = format!("{}/scripts/{script}", env!("CARGO_MANIFEST_DIR"));
    let output = group
        .command("python3")
        .args([script.as_str(), "10000"])
        .args(group.addresses())
        .output()
        .expect("run the check");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{stdout}");
    stdout
}
