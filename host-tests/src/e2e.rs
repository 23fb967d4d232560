//! End-to-end plumbing: network namespaces with a tap, child processes that die with the test,
//! and building the real binaries.
//!
//! Everything here only ever talks to loopback or to addresses inside a namespace the test
//! created itself, and every guard cleans up on drop, also when a test fails.

use std::io::{BufRead, BufReader, Read};
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Fails the test: a prerequisite is missing. The tests that need root, a tap, QEMU or a
/// server are `#[ignore]`d and run on purpose (`cargo test -- --include-ignored`, as
/// `scripts/check.sh` does), so a missing prerequisite is a failure, never a pass.
///
/// # Panics
///
/// Always.
pub fn missing(reason: &str) -> ! {
    panic!("end-to-end prerequisite missing: {reason}");
}

/// Checks that `program --version` (or `-v`) runs.
pub fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Whether this process can create namespaces and taps.
pub fn can_make_namespaces() -> Result<(), String> {
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if uid != "0" {
        return Err("needs root for ip netns and /dev/net/tun".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Err("/dev/net/tun is missing".into());
    }
    if !have("ip") {
        return Err("iproute2 (`ip`) is not installed".into());
    }
    Ok(())
}

fn run(command: &mut Command) -> Result<Output, String> {
    let output = command
        .output()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(format!(
            "{command:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// Runs `command` to completion and returns its stdout as text.
///
/// # Panics
///
/// If it cannot start or exits unsuccessfully; the message carries its stderr.
pub fn stdout_of(command: &mut Command) -> String {
    match run(command) {
        Ok(output) => String::from_utf8_lossy(&output.stdout).into_owned(),
        Err(message) => panic!("{message}"),
    }
}

/// The numeric `field` of an `INFO` reply's text.
///
/// # Panics
///
/// If `info` has no such field, or it is not a number.
pub fn info_field(info: &str, field: &str) -> u64 {
    info.lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("INFO has no {field}: {info}"))
}

/// A network namespace holding one tap device; deleted on drop.
pub struct Namespace {
    name: String,
}

impl Namespace {
    /// Creates namespace `name` with `tap` (the kernel side at `host_cidr`) and loopback up.
    ///
    /// # Errors
    ///
    /// The failing `ip` command and its message.
    pub fn create(name: &str, tap: &str, host_cidr: &str) -> Result<Self, String> {
        let namespace = Self::create_empty(name)?;
        namespace.ip(&["tuntap", "add", "dev", tap, "mode", "tap"])?;
        namespace.ip(&["addr", "add", host_cidr, "dev", tap])?;
        namespace.ip(&["link", "set", tap, "up"])?;
        Ok(namespace)
    }

    /// Creates namespace `name` with only loopback, up; add devices with [`ip`](Self::ip).
    ///
    /// # Errors
    ///
    /// The failing `ip` command and its message.
    pub fn create_empty(name: &str) -> Result<Self, String> {
        // A namespace left over from a killed run would make `add` fail.
        let _ = Command::new("ip").args(["netns", "del", name]).output();
        run(Command::new("ip").args(["netns", "add", name]))?;
        let namespace = Self {
            name: name.to_string(),
        };
        namespace.ip(&["link", "set", "lo", "up"])?;
        Ok(namespace)
    }

    /// Runs `ip args..` inside the namespace.
    ///
    /// # Errors
    ///
    /// The failing `ip` command and its message.
    pub fn ip(&self, args: &[&str]) -> Result<Output, String> {
        run(Command::new("ip")
            .args(["netns", "exec", &self.name, "ip"])
            .args(args))
    }

    /// A command that runs `program` inside the namespace.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.name]).arg(program);
        command
    }

    /// The namespace's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

/// A child process killed (and reaped) on drop.
pub struct KillOnDrop {
    child: Child,
}

impl KillOnDrop {
    /// Takes ownership of `child`.
    pub fn new(child: Child) -> Self {
        Self { child }
    }

    /// The child, e.g. to send it a signal or wait for it.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Takes the child's stdout.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Takes the child's stderr.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `signal` (a name such as `TERM` or `INT`) to `child` with kill(1).
///
/// # Errors
///
/// When `kill` fails, e.g. because the child has already been reaped.
pub fn send_signal(child: &Child, signal: &str) -> Result<(), String> {
    run(Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string()))
    .map(drop)
}

/// Waits up to `timeout` for `child` to exit, checking every millisecond; `None` if it is
/// still running then.
///
/// # Errors
///
/// When the child's status cannot be read.
pub fn wait_exit(child: &mut Child, timeout: Duration) -> Result<Option<ExitStatus>, String> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(Some(status)),
            Ok(None) if Instant::now() >= deadline => return Ok(None),
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            Err(e) => return Err(format!("cannot wait for pid {}: {e}", child.id())),
        }
    }
}

/// Reads `stdout` on a thread until a line containing `needle` appears (`Ok(line)`), the stream
/// ends, or `timeout` passes. The thread keeps draining the stream afterwards so the child never
/// blocks on a full pipe.
///
/// # Errors
///
/// The lines seen, when `needle` never came.
pub fn wait_for_line(
    stdout: ChildStdout,
    needle: &str,
    timeout: Duration,
) -> Result<String, String> {
    wait_for_line_in(stdout, needle, timeout)
}

/// [`wait_for_line`] for any stream, e.g. a child's stderr.
///
/// # Errors
///
/// The lines seen, when `needle` never came.
pub fn wait_for_line_in(
    stdout: impl Read + Send + 'static,
    needle: &str,
    timeout: Duration,
) -> Result<String, String> {
    let (sender, receiver) = mpsc::channel();
    let wanted = needle.to_string();
    std::thread::spawn(move || {
        let mut found = false;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if !found && line.contains(&wanted) {
                found = true;
                let _ = sender.send(Ok(line));
            } else if !found {
                let _ = sender.send(Err(line));
            }
        }
    });
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match receiver.recv_timeout(left) {
            Ok(Ok(line)) => return Ok(line),
            Ok(Err(line)) => seen.push(line),
            Err(_) => return Err(format!("no {needle:?} within {timeout:?}; saw: {seen:?}")),
        }
    }
}

/// Starts the `net-shell` at `binary` inside `namespace` with `args`, its stdout piped and its
/// log going to `stderr`, and waits up to 30 s for its ready line, which it returns.
///
/// # Errors
///
/// When it cannot start or prints no ready line (with what it printed instead).
pub fn start_net_shell(
    namespace: &Namespace,
    binary: &Path,
    args: &[&str],
    stderr: Stdio,
) -> Result<(KillOnDrop, String), String> {
    let mut process = KillOnDrop::new(
        namespace
            .command(binary)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?,
    );
    let stdout = process
        .take_stdout()
        .ok_or("net-shell's stdout is not piped")?;
    let ready = wait_for_line(stdout, "net-shell ready", Duration::from_secs(30))?;
    Ok((process, ready))
}

/// Builds the `net-shell` host binary (release) in its own target directory, so it never waits
/// on the lock of the `cargo test` that runs us, and returns its path.
///
/// # Errors
///
/// Cargo's output when the build fails.
pub fn build_net_shell() -> Result<PathBuf, String> {
    let root = workspace_root();
    let target = root.join("target").join("e2e");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo)
        .current_dir(&root)
        .args([
            "build",
            "--release",
            "--quiet",
            "-p",
            "net-shell",
            "--features",
            "std",
        ])
        .arg("--target-dir")
        .arg(&target))?;
    Ok(target.join("release").join("net-shell"))
}

/// An unused TCP port on 127.0.0.1 (free when asked; a race with other processes is possible
/// but harmless for tests, which fail loudly if the port is taken).
///
/// # Panics
///
/// When no port can be bound at all.
pub fn free_local_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .expect("bind an ephemeral port on 127.0.0.1")
        .port()
}

/// Builds the QEMU (`mps2-an386`) firmware, release, in `firmware/`'s own workspace and target
/// directory (so it never waits on the lock of the `cargo test` that runs us), with `env` set
/// for the build (e.g. `NET_SHELL_IDLE_TIMEOUT_MS`, which the firmware reads at build time),
/// and returns the ELF's path.
///
/// # Errors
///
/// Cargo's output when the build fails.
pub fn build_qemu_firmware(env: &[(&str, &str)]) -> Result<PathBuf, String> {
    let dir = workspace_root().join("firmware");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(&dir)
        .args(["build", "--release", "--quiet"])
        // The firmware's .cargo/config.toml sets the target, the linker scripts and the target
        // directory; settings meant for the host build must not leak into it.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR");
    for (name, value) in env {
        command.env(name, value);
    }
    run(&mut command)?;
    let elf = dir.join("target/thumbv7em-none-eabihf/release/firmware");
    if elf.is_file() {
        Ok(elf)
    } else {
        Err(format!("no firmware ELF at {}", elf.display()))
    }
}
