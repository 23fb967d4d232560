"""net-shell in a network namespace of its own, for the measurement scripts in scripts/.

`ShellNamespace` creates a namespace with one tap (the kernel side gets the clients' address),
starts net-shell on it, waits for the ready line, and moves the calling thread into the
namespace, so plain sockets opened afterwards (and threads and processes started afterwards)
reach the shell and nothing outside. On exit it stops the shell (SIGTERM, then SIGKILL) and
deletes the namespace, also when the measurement failed.

Python 3 standard library only; needs root (ip netns, /dev/net/tun, setns).
"""
import ctypes
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_BINARY = ROOT / "target" / "release" / "net-shell"
CLONE_NEWNET = 0x40000000


def add_binary_flag(parser):
    parser.add_argument(
        "--binary",
        default=str(DEFAULT_BINARY),
        help="net-shell host binary (default: target/release/net-shell; build it with "
        "`cargo build --release -p net-shell --features std`)",
    )


def need_root(program):
    if os.geteuid() != 0:
        sys.exit(f"{program}: needs root (ip netns, /dev/net/tun)")


def ip(*args, namespace=None):
    command = ["ip"] + (["netns", "exec", namespace, "ip"] if namespace else []) + list(args)
    subprocess.run(command, check=True, capture_output=True)


def enter_namespace(name):
    """Moves the calling thread into namespace `name` (threads it starts later follow)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"setns {name}: {os.strerror(error)}")
    finally:
        os.close(fd)


class ShellNamespace:
    """`with ShellNamespace(...) as shell:` runs the body inside the namespace with net-shell up.

    `shell.address` is (ip, port); `shell.mac` the shell's MAC; `shell.tap` the tap's name;
    `shell.pid` the shell's pid.
    """

    def __init__(self, binary, name, tap, subnet, extra_args=(), mac="02:00:00:77:00:02"):
        self.binary = str(binary)
        self.name = f"{name}-{os.getpid()}"
        self.tap = tap
        self.host = f"{subnet}.1"
        self.address = (f"{subnet}.2", 6379)
        self.mac = mac
        self.extra_args = list(extra_args)
        self.process = None
        self.log = None

    def __enter__(self):
        if not os.access(self.binary, os.X_OK):
            sys.exit(f"no net-shell binary at {self.binary} (see --binary)")
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)
        ip("netns", "add", self.name)
        try:
            ip("link", "set", "lo", "up", namespace=self.name)
            ip("tuntap", "add", "dev", self.tap, "mode", "tap", namespace=self.name)
            ip("addr", "add", f"{self.host}/24", "dev", self.tap, namespace=self.name)
            ip("link", "set", self.tap, "up", namespace=self.name)
            self.log = tempfile.TemporaryFile()
            # Trust the namespace's side of the tap (protected mode refuses everyone else), on
            # binaries that have protected mode; older ones are measured too.
            usage = subprocess.run([self.binary, "--help"], capture_output=True).stdout
            trust = ["--trusted-network", f"{self.host}/32"] if b"--trusted-network" in usage else []
            # `ip netns exec` execs the program, so the child's pid is the shell's.
            self.process = subprocess.Popen(
                ["ip", "netns", "exec", self.name, self.binary, "--tap", self.tap,
                 "--address", f"{self.address[0]}/24", "--mac", self.mac,
                 "--log-level", "warn"] + trust + self.extra_args,
                stdout=subprocess.PIPE,
                stderr=self.log,
            )
            self.pid = self.process.pid
            deadline = time.monotonic() + 30
            line = b""
            while b"net-shell ready" not in line:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.process.stdout], [], [], left)[0]:
                    break
                line = self.process.stdout.readline()
                if not line:
                    break
            if b"net-shell ready" not in line:
                raise RuntimeError(f"net-shell printed no ready line: {self.stderr()}")
            enter_namespace(self.name)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def stderr(self):
        if self.log is None:
            return ""
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def __exit__(self, *_):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)
        return False


def command(*args):
    """One RESP2 multibulk request."""
    out = b"*%d\r\n" % len(args)
    for arg in args:
        arg = arg if isinstance(arg, bytes) else str(arg).encode()
        out += b"$%d\r\n%s\r\n" % (len(arg), arg)
    return out


def read_reply(sock, buffer=b""):
    """Reads one whole reply (status, error, integer or bulk); returns (reply, rest)."""
    while True:
        end = buffer.find(b"\r\n")
        if end >= 0:
            head = buffer[: end + 2]
            if head.startswith(b"$") and int(head[1:-2]) >= 0:
                total = end + 2 + int(head[1:-2]) + 2
                if len(buffer) >= total:
                    return buffer[:total], buffer[total:]
            else:
                return head, buffer[end + 2:]
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        buffer += chunk


def info_field(sock, section, field):
    """`INFO section` over `sock`, and the integer `field` of it."""
    sock.sendall(command("INFO", section))
    reply, _ = read_reply(sock)
    for line in reply.split(b"\r\n"):
        if line.startswith(field.encode() + b":"):
            return int(line.split(b":", 1)[1])
    raise ValueError(f"INFO {section} has no {field}")


def percentile(values, p):
    """Nearest-rank percentile of `values` (any order); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), -(-len(ordered) * p // 100)))
    return ordered[int(rank) - 1]


def ms(value):
    return "-" if value is None else f"{value * 1000:.2f}"


def table(header, rows):
    """Prints a Markdown table."""
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i == 0 else "--:" for i in range(len(header))) + "|")
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")


def connect_ping(address, timeout):
    """connect + PING + close; returns (connect seconds, first reply seconds)."""
    start = time.monotonic()
    with socket.create_connection(address, timeout=timeout) as sock:
        connected = time.monotonic()
        sock.sendall(b"PING\r\n")
        reply, _ = read_reply(sock)
        replied = time.monotonic()
        if reply != b"+PONG\r\n":
            raise ValueError(f"PING answered {reply!r}")
    return connected - start, replied - connected
