#!/usr/bin/env python3
"""How late does a server publish keyspace `expired` events after each key's deadline?

Turns on `notify-keyspace-events Ex`, subscribes one connection to `__keyevent@0__:expired`,
then sets N keys whose absolute deadlines (PXAT, the client's clock) are spread evenly over
one second starting two seconds from now (each key's name carries its deadline). Each event's
lateness is its arrival time at the subscriber minus that key's deadline, so it includes the
network and the client; both servers are measured the same way.

Prints: events received of N, and the lateness mean, median, p99 and max (ms). Bounded: N keys,
at most LIMIT_S seconds of listening. Leaves `notify-keyspace-events` empty again.

usage: event_lateness.py HOST PORT [N]
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from expiry_lateness import Conn as LineConn, command  # noqa: E402

LIMIT_S = 15.0


class Conn(LineConn):
    """expiry_lateness's connection, which also reads bulk strings (pub/sub messages)."""

    def bulk(self):
        header = self.line()
        assert header[:1] == b"$", header
        n = int(header[1:])
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    admin = Conn(host, port)
    assert admin.call("FLUSHALL") == b"+OK"
    assert admin.call("CONFIG", "SET", "notify-keyspace-events", "Ex") == b"+OK"
    sub = Conn(host, port)
    sub.sock.sendall(command("SUBSCRIBE", "__keyevent@0__:expired"))
    assert sub.line() == b"*3"
    sub.bulk(), sub.bulk(), sub.line()
    start_ms = int(time.time() * 1000) + 2000
    deadlines = [start_ms + (i * 1000) // n for i in range(n)]
    batch = 500
    for first in range(0, n, batch):
        last = min(first + batch, n)
        admin.sock.sendall(b"".join(
            command("SET", "ev:%d:%d" % (i, deadlines[i]), "v", "PXAT", deadlines[i])
            for i in range(first, last)))
        for _ in range(first, last):
            assert admin.line() == b"+OK"
    late = []
    stop = time.time() + LIMIT_S
    sub.sock.settimeout(1.0)
    while len(late) < n and time.time() < stop:
        try:
            header = sub.line()
        except socket.timeout:
            continue
        assert header == b"*3", header
        kind, _channel, key = sub.bulk(), sub.bulk(), sub.bulk()
        now_ms = time.time() * 1000
        assert kind == b"message", kind
        deadline = int(key.split(b":")[2])
        late.append(now_ms - deadline)
    admin.call("CONFIG", "SET", "notify-keyspace-events", "")
    if not late:
        print(f"events 0/{n}")
        return
    late.sort()
    mean = sum(late) / len(late)
    p = lambda q: late[min(len(late) - 1, int(q * len(late)))]
    print(f"events {len(late)}/{n}  lateness ms: mean {mean:.1f}  median {p(0.5):.1f}  "
          f"p99 {p(0.99):.1f}  max {late[-1]:.1f}  min {late[0]:.1f}")


if __name__ == "__main__":
    main()
