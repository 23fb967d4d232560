//! End to end on the emulated board: build the QEMU firmware, boot it in `qemu-system-arm
//! -machine mps2-an386` with the LAN9118 on user networking, wait for its ready line, and talk
//! RESP to it over TCP.
//!
//! The guest is reachable only through one forwarded port on 127.0.0.1 (`restrict=on`).
//! Skipped, with a message, when `qemu-system-arm` is not installed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const QEMU: &str = "qemu-system-arm";
const READY: &str = "net-shell ready on 10.0.2.15:6379";
const BOOT_TIMEOUT: Duration = Duration::from_secs(30);
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Kills QEMU when the test ends, pass or fail.
struct QemuGuard(Child);

impl Drop for QemuGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn qemu_installed() -> bool {
    Command::new(QEMU)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

fn firmware_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../firmware")
}

/// Builds the default (QEMU) firmware in its own workspace and returns the ELF.
fn build_firmware() -> PathBuf {
    let dir = firmware_dir();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release"])
        .current_dir(&dir)
        // The firmware's own .cargo/config.toml sets the target, linker scripts and target dir;
        // flags meant for the host build must not leak into it.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .status()
        .expect("run cargo for the firmware");
    assert!(status.success(), "firmware build failed");
    let elf = dir.join("target/thumbv7em-none-eabihf/release/firmware");
    assert!(elf.is_file(), "no firmware ELF at {}", elf.display());
    elf
}

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("bind an ephemeral port")
        .port()
}

/// Boots the firmware and waits for its ready line on QEMU's stderr (semihosting).
fn boot(elf: &Path, port: u16) -> QemuGuard {
    let mut child = Command::new(QEMU)
        .args([
            "-machine",
            "mps2-an386",
            "-cpu",
            "cortex-m4",
            "-nographic",
            "-monitor",
            "none",
            "-serial",
            "none",
            "-semihosting-config",
            "enable=on,target=native",
            "-nic",
        ])
        .arg(format!(
            "user,model=lan9118,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:6379"
        ))
        .arg("-kernel")
        .arg(elf)
        .stdin(Stdio::null())
        .stdout(Stdio::null()) // defmt frames (binary); decode with defmt-print if needed
        .stderr(Stdio::piped())
        .spawn()
        .expect("start qemu-system-arm");
    let stderr = child.stderr.take().expect("piped stderr");
    let guard = QemuGuard(child);

    let (lines_tx, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + BOOT_TIMEOUT;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(READY) => return guard,
            Ok(line) => seen.push(line),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("no ready line within {BOOT_TIMEOUT:?}; QEMU said: {seen:#?}")
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!("QEMU exited before the ready line; it said: {seen:#?}")
            }
        }
    }
}

fn connect(port: u16) -> TcpStream {
    let stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).expect("connect to the guest");
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    stream
}

fn read_exact_reply(stream: &mut TcpStream, len: usize) -> Vec<u8> {
    let mut reply = vec![0; len];
    stream.read_exact(&mut reply).expect("read the reply");
    reply
}

#[test]
fn firmware_answers_ping_over_tcp() {
    if !qemu_installed() {
        eprintln!("SKIPPED qemu_smoke: {QEMU} is not installed (apt-get install qemu-system-arm)");
        return;
    }
    let elf = build_firmware();
    let port = free_port();
    let _qemu = boot(&elf, port);

    // What `redis-cli ping` sends: a RESP array.
    let mut client = connect(port);
    client.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    assert_eq!(read_exact_reply(&mut client, 7), b"+PONG\r\n");

    // Inline command, split across segments, then pipelined.
    client.write_all(b"PI").unwrap();
    thread::sleep(Duration::from_millis(50));
    client.write_all(b"NG\r\nping\r\nPING\r\n").unwrap();
    assert_eq!(
        read_exact_reply(&mut client, 21),
        b"+PONG\r\n+PONG\r\n+PONG\r\n"
    );

    // A second client while the first stays connected, then the first again.
    let mut second = connect(port);
    second.write_all(b"PING\r\n").unwrap();
    assert_eq!(read_exact_reply(&mut second, 7), b"+PONG\r\n");
    drop(second);
    client.write_all(b"PING\r\n").unwrap();
    assert_eq!(read_exact_reply(&mut client, 7), b"+PONG\r\n");
}
