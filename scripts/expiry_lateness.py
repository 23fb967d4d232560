#!/usr/bin/env python3
"""How late does a server remove keys after their deadline?

Loads N keys whose absolute deadlines (PXAT) are spread evenly over one second starting a few
seconds from now, then samples DBSIZE over one connection until it reaches 0 (or a time limit).
DBSIZE counts keys still held, so (held - due-but-not-yet) over time is the lateness.

Prints: mean lateness per key (ms), the time the last key was removed after the last deadline
(ms), and the number of DBSIZE samples. Bounded: N keys, at most LIMIT_S seconds of sampling.

usage: expiry_lateness.py HOST PORT [N]
"""
import bisect
import socket
import sys
import time

LIMIT_S = 15.0


def command(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Conn:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def call(self, *args):
        self.sock.sendall(command(*args))
        return self.line()


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    conn = Conn(host, port)
    assert conn.call("FLUSHALL") == b"+OK"
    start_ms = int(time.time() * 1000) + 4000
    deadlines = [start_ms + (i * 1000) // n for i in range(n)]
    batch = 1000
    for first in range(0, n, batch):
        payload = b"".join(
            command("SET", "exp:%d" % i, "v", "PXAT", deadlines[i])
            for i in range(first, min(first + batch, n))
        )
        conn.sock.sendall(payload)
        for _ in range(first, min(first + batch, n)):
            reply = conn.line()
            if reply != b"+OK":
                sys.exit("SET failed: %r" % reply)
    loaded = int(conn.call("DBSIZE")[1:])
    if loaded != n:
        sys.exit("loaded %d of %d keys" % (loaded, n))
    if time.time() * 1000 >= start_ms:
        sys.exit("loading took too long; deadlines already started")

    samples = []
    limit = time.time() + LIMIT_S
    while time.time() < limit:
        before = time.time() * 1000
        held = int(conn.call("DBSIZE")[1:])
        after = time.time() * 1000
        samples.append(((before + after) / 2, held))
        if held == 0:
            break
        time.sleep(0.002)

    # Integrate (held - should_hold) over time; should_hold(t) = keys with deadline > t.
    late_key_ms = 0.0
    for (t0, held), (t1, _) in zip(samples, samples[1:]):
        should = n - bisect.bisect_right(deadlines, t0)
        late_key_ms += max(0, held - should) * (t1 - t0)
    last_deadline = deadlines[-1]
    emptied = next((t for t, held in samples if held == 0), None)
    print("keys %d" % n)
    print("mean_lateness_ms %.2f" % (late_key_ms / n))
    print("last_removed_after_last_deadline_ms %s" % ("%.1f" % (emptied - last_deadline) if emptied else "not within %ds" % LIMIT_S))
    print("samples %d" % len(samples))


if __name__ == "__main__":
    main()
