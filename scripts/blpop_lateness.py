#!/usr/bin/env python3
"""How late does a server answer a BLPOP whose timeout runs out?

N clients (200) each send `BLPOP` on a key of their own that nobody pushes to, with timeouts
spread evenly from 50 to 545 ms. Each client's lateness is the time from sending its BLPOP to
receiving the nil reply, minus its timeout: it includes the network and this client, and both
servers are measured the same way. A reply before the timeout is counted as early (it must
never happen) and its negative lateness shows as the minimum.

Prints: nil replies of N, early replies, and the lateness mean, median, p99, max and min (ms).
Bounded: N connections, at most LIMIT_S seconds of waiting.

usage: blpop_lateness.py HOST PORT [N]
"""
import os
import selectors
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from expiry_lateness import command  # noqa: E402

LIMIT_S = 10.0
NIL = (b"*-1\r\n", b"_\r\n")


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(command("PING"))
        assert s.recv(64) == b"+PONG\r\n"
        socks.append(s)
    timeouts_ms = [50 + (i * 495) // max(n - 1, 1) for i in range(n)]
    sel = selectors.DefaultSelector()
    sent_at = {}
    for i, s in enumerate(socks):
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
    for i, s in enumerate(socks):
        request = command("BLPOP", "blpop-lateness:%d" % i, "%.3f" % (timeouts_ms[i] / 1000))
        sent_at[i] = time.monotonic()
        s.sendall(request)
    late, early, other = [], 0, 0
    buffers = {i: b"" for i in range(n)}
    stop = time.monotonic() + LIMIT_S
    while len(late) + other < n and time.monotonic() < stop:
        for key, _ in sel.select(timeout=0.5):
            i = key.data
            now = time.monotonic()
            data = key.fileobj.recv(64)
            if not data:
                sel.unregister(key.fileobj)
                other += 1
                continue
            buffers[i] += data
            if not buffers[i].endswith(b"\r\n"):
                continue
            sel.unregister(key.fileobj)
            if buffers[i] not in NIL:
                other += 1
                continue
            waited_ms = (now - sent_at[i]) * 1000
            early += waited_ms < timeouts_ms[i]
            late.append(waited_ms - timeouts_ms[i])
    for s in socks:
        s.close()
    print(f"nil replies {len(late)}/{n}, early {early}, other replies {other}")
    if late:
        late.sort()
        mean = sum(late) / len(late)
        p99 = late[min(len(late) - 1, (len(late) * 99) // 100)]
        print(f"lateness ms: mean {mean:.2f} median {late[len(late) // 2]:.2f} "
              f"p99 {p99:.2f} max {late[-1]:.2f} min {late[0]:.2f}")


if __name__ == "__main__":
    main()
