#!/usr/bin/env python3
"""How late are hash fields removed after their deadlines (per-field TTL, Redis 7.4's HPEXPIREAT)?

Turns on `notify-keyspace-events Eh`, subscribes one connection to `__keyevent@0__:hexpired`,
then makes N hashes, each with a field that stays and a field whose absolute deadline
(HPEXPIREAT, the client's clock) is spread evenly over one second starting two seconds from now
(each hash's name carries its field's deadline). Each event's lateness is its arrival time at
the subscriber minus that deadline: network and client included. Redis 7.0 has no per-field
TTL, so only net-shell is measured.

Prints: events received of N, and the lateness mean, median, p99, max and min (ms). Bounded: N
hashes, at most LIMIT_S seconds of listening. Leaves `notify-keyspace-events` empty again.

usage: field_expiry_lateness.py HOST PORT [N]
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from event_lateness import Conn  # noqa: E402
from expiry_lateness import command  # noqa: E402

LIMIT_S = 15.0


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    admin = Conn(host, port)
    assert admin.call("FLUSHALL") == b"+OK"
    assert admin.call("CONFIG", "SET", "notify-keyspace-events", "Eh") == b"+OK"
    sub = Conn(host, port)
    sub.sock.sendall(command("SUBSCRIBE", "__keyevent@0__:hexpired"))
    assert sub.line() == b"*3"
    sub.bulk(), sub.bulk(), sub.line()
    start_ms = int(time.time() * 1000) + 2000
    deadlines = [start_ms + (i * 1000) // n for i in range(n)]
    batch = 250
    for first in range(0, n, batch):
        last = min(first + batch, n)
        requests = []
        for i in range(first, last):
            key = "fe:%d:%d" % (i, deadlines[i])
            requests.append(command("HSET", key, "stays", "1", "goes", "1"))
            requests.append(command("HPEXPIREAT", key, deadlines[i], "FIELDS", 1, "goes"))
        admin.sock.sendall(b"".join(requests))
        for _ in range(first, last):
            assert admin.line() == b":2"
            assert admin.line() == b"*1"
            assert admin.line() == b":1"
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
        late.append(now_ms - int(key.split(b":")[2]))
    admin.call("CONFIG", "SET", "notify-keyspace-events", "")
    print(f"events {len(late)}/{n}")
    if late:
        late.sort()
        mean = sum(late) / len(late)
        p99 = late[min(len(late) - 1, (len(late) * 99) // 100)]
        print(f"lateness ms: mean {mean:.2f} median {late[len(late) // 2]:.2f} "
              f"p99 {p99:.2f} max {late[-1]:.2f} min {late[0]:.2f}")


if __name__ == "__main__":
    main()
