#!/usr/bin/env python3
"""net-shell against redis-server at 10,000 clients, in one run with the same parameters.

Both servers run inside one network namespace this script creates (and removes): net-shell on
a tap (10.80.0.2), redis-server on the namespace's own loopback (127.0.0.1), so the same
clients (this process, and redis-benchmark started in the namespace) reach both and no traffic
leaves the namespace. For each server:

  rps -c 1000      redis-benchmark -c 1000 -n N -t set,get (requests per second)
  rps -c 50 +idle  redis-benchmark -c 50 -n N -t set,get while 10,000 idle clients are attached
  RSS fresh/idle   RSS of the fresh server (before any client), and with 10,000 idle clients
                   (each of which has sent one PING) attached, in MB
  RSS/idle conn    (RSS with 10,000 idle clients, each of which has sent one PING, - RSS
                   before them) / 10,000, in bytes (after the idle-close run: what the
                   clients' buffers cost on a server that has held as many clients before)
  PING p50/p99     one client, PINGs one after another, with 0 and with 10,000 idle clients
  idle close       10,000 clients that send nothing, with the idle timeout (`CONFIG SET
                   timeout`) at T s: how long after T each close was seen, measured from when
                   each connect was seen complete (first, median, last), on the fresh server.
                   The client sees each close through its own poll over 10,000 sockets, so
                   tens of ms of this are the client's. Redis checks idle clients in its cron
                   (`hz` 10), a slice of them per run; net-shell has one timer per connection.

Prints Markdown tables. Needs root, redis-server, redis-benchmark and a built net-shell
(`cargo build --release -p net-shell --features std`).

usage: scripts/bench-scale.py [--binary PATH] [--clients 10000] [--requests 200000]
                              [--timeout-s 5]
"""
import argparse
import os
import resource
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "host-tests" / "scripts"))
import tapns  # noqa: E402

REDIS_PORT = 6379


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise ValueError("no VmRSS")


def connect_many(address, n, batch=500):
    """n connections, opened `batch` at a time; returns [(socket, seen complete at)]."""
    done = []
    while len(done) < n:
        socks = []
        for _ in range(min(batch, n - len(done))):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(address)
            socks.append(s)
        poller = select.poll()
        by_fd = {s.fileno(): s for s in socks}
        for s in socks:
            poller.register(s, select.POLLOUT)
        pending = set(by_fd)
        deadline = time.monotonic() + 60
        while pending and time.monotonic() < deadline:
            for fd, _ in poller.poll(1000):
                if fd in pending:
                    pending.discard(fd)
                    poller.unregister(fd)
                    s = by_fd[fd]
                    if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                        raise ConnectionError("a connect failed")
                    done.append((s, time.monotonic()))
        if pending:
            raise TimeoutError(f"{len(pending)} connects did not complete")
    return done


def ping_latency(address, count=2000):
    sock = socket.create_connection(address, timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        sock.sendall(b"PING\r\n")
        reply, _ = tapns.read_reply(sock)
        samples.append(time.perf_counter() - start)
        assert reply == b"+PONG\r\n", reply
    sock.close()
    return tapns.percentile(samples, 50), tapns.percentile(samples, 99)


def benchmark(host, port, clients, requests):
    """redis-benchmark's requests per second for SET and GET."""
    out = subprocess.run(
        ["redis-benchmark", "-h", host, "-p", str(port), "-c", str(clients), "-n",
         str(requests), "-t", "set,get", "-q"],
        capture_output=True, text=True, timeout=600,
    ).stdout.replace("\r", "\n")
    rates = {}
    for line in out.splitlines():
        if "requests per second" in line:
            name, rest = line.split(":", 1)
            rates[name.strip()] = float(rest.split("requests per second")[0])
    return rates.get("SET"), rates.get("GET")


def call(address, *args):
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(tapns.command(*args))
        reply, _ = tapns.read_reply(sock)
        return reply


def info_int(address, section, field):
    with socket.create_connection(address, timeout=10) as sock:
        return tapns.info_field(sock, section, field)


def idle_closes(address, clients, timeout_s):
    """Lateness (s) of each close after timeout_s from its connect being seen complete."""
    assert call(address, "CONFIG", "SET", "timeout", str(timeout_s)) == b"+OK\r\n"
    conns = connect_many(address, clients)
    poller = select.poll()
    by_fd = {}
    for sock, done in conns:
        poller.register(sock, select.POLLIN)
        by_fd[sock.fileno()] = (sock, done)
    late = []
    deadline = time.monotonic() + timeout_s + 60
    while by_fd and time.monotonic() < deadline:
        for fd, _ in poller.poll(1000):
            now = time.monotonic()
            sock, done = by_fd.pop(fd)
            poller.unregister(fd)
            late.append(now - done - timeout_s)
            sock.close()
    for sock, _ in by_fd.values():
        sock.close()
    assert call(address, "CONFIG", "SET", "timeout", "0") == b"+OK\r\n"
    return late, len(by_fd)


def ping_each(conns):
    """One PING on every connection (so each has served a request, as a real idle client has)."""
    for sock, _ in conns:
        sock.sendall(b"PING\r\n")
    for sock, _ in conns:
        sock.setblocking(True)
        sock.settimeout(30)
        reply, _ = tapns.read_reply(sock)
        assert reply == b"+PONG\r\n", reply


def measure(name, address, pid, args):
    """Every figure for one server, fresh: idle closes first, then the rest."""
    row = {"server": name}
    row["rss_fresh"] = rss_bytes(pid)
    row["ping0"] = ping_latency(address)
    late, never = idle_closes(address, args.clients, args.timeout_s)
    row["close"] = (tapns.percentile(late, 0), tapns.percentile(late, 50),
                    tapns.percentile(late, 100), never)
    # net-shell's own view: how many ticks (ms) after its deadline the latest idle close was
    # handled (redis-server has no such figure).
    try:
        row["server_late"] = "%d" % info_int(address, "stats", "idle_close_max_late_ms")
    except ValueError:
        row["server_late"] = "-"
    time.sleep(2)
    base = rss_bytes(pid)
    idle = connect_many(address, args.clients)
    ping_each(idle)
    time.sleep(1)
    row["rss_idle"] = rss_bytes(pid)
    row["rss_per_conn"] = (row["rss_idle"] - base) / args.clients
    row["ping_idle"] = ping_latency(address)
    row["rps50_idle"] = benchmark(address[0], address[1], 50, args.requests)
    for sock, _ in idle:
        sock.close()
    time.sleep(2)
    row["rps1000"] = benchmark(address[0], address[1], 1000, args.requests)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    tapns.add_binary_flag(parser)
    parser.add_argument("--clients", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--timeout-s", type=int, default=5)
    args = parser.parse_args()
    tapns.need_root("bench-scale.py")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    room = str(args.clients + 1100)
    with tapns.ShellNamespace(args.binary, "nsh-scale", "scaletap0", "10.80.0",
                              ["--maxclients", room, "--maxkeys", "1000000"]) as shell:
        redis = subprocess.Popen(
            ["redis-server", "--port", str(REDIS_PORT), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--maxclients", room, "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            redis_address = ("127.0.0.1", REDIS_PORT)
            for _ in range(100):
                try:
                    call(redis_address, "PING")
                    break
                except OSError:
                    time.sleep(0.1)
            rows = [
                measure("net-shell", shell.address, shell.pid, args),
                measure("redis-server", redis_address, redis.pid, args),
            ]
        finally:
            redis.terminate()
            redis.wait(timeout=10)
    n = args.clients
    print(f"## {n} clients, redis-benchmark -n {args.requests}, idle timeout {args.timeout_s} s\n")
    tapns.table(
        ["server", "SET/GET rps -c 1000", f"SET/GET rps -c 50, {n} idle",
         f"RSS MB fresh / {n} idle", "RSS per idle conn (B)", "PING p50/p99 µs, 0 idle",
         f"PING p50/p99 µs, {n} idle",
         "idle close late first/median/last ms (not closed)", "server: latest close late (ms)"],
        [[r["server"],
          "%.0f / %.0f" % r["rps1000"],
          "%.0f / %.0f" % r["rps50_idle"],
          "%.1f / %.1f" % (r["rss_fresh"] / 1e6, r["rss_idle"] / 1e6),
          "%.0f" % r["rss_per_conn"],
          "%.0f / %.0f" % (r["ping0"][0] * 1e6, r["ping0"][1] * 1e6),
          "%.0f / %.0f" % (r["ping_idle"][0] * 1e6, r["ping_idle"][1] * 1e6),
          "%s / %s / %s (%d)" % (tapns.ms(r["close"][0]), tapns.ms(r["close"][1]),
                                 tapns.ms(r["close"][2]), r["close"][3]),
          r["server_late"]]
         for r in rows],
    )
    shell_row, redis_row = rows
    print("\nRatios, net-shell / redis-server:")
    print("rps -c 1000 SET %.2f GET %.2f" % tuple(a / b for a, b in zip(shell_row["rps1000"], redis_row["rps1000"])))
    print("rps -c 50 with idle SET %.2f GET %.2f" % tuple(a / b for a, b in zip(shell_row["rps50_idle"], redis_row["rps50_idle"])))
    print("RSS per idle connection %.2f" % (shell_row["rss_per_conn"] / redis_row["rss_per_conn"]))
    print("net-shell PING p99 with idle / without %.2f" % (shell_row["ping_idle"][1] / shell_row["ping0"][1]))


if __name__ == "__main__":
    main()
