#!/usr/bin/env python3
"""Fault injection between net-shell's tap and the kernel, in user space: loss, delay with
jitter, and reordering, in both directions, from a seeded random generator.

This is what `tc qdisc ... netem` would do, for kernels built without netem
(CONFIG_NET_SCH_NETEM unset), and for both directions at once (netem on the tap shapes only the
frames going to the shell).

Run inside a namespace that holds two taps:

  SHELL_TAP   opened by net-shell; its kernel side has no address and `arp off`, so the kernel
              never talks to the shell directly. This relay reads the shell's frames from it and
              writes frames to the shell on it, with an AF_PACKET socket.
  CLIENT_TAP  carries the clients' address (e.g. 10.82.0.1/24); this relay opens its user side
              (/dev/net/tun), so every frame the kernel sends to the shell comes here first. A
              tap, not a veth: the kernel segments TCP before a tap, so no frame exceeds the MTU.

Each frame, in each direction: dropped with probability LOSS; otherwise sent at once with
probability REORDER (so it overtakes frames still delayed, like netem's `reorder`), else after
DELAY +/- JITTER ms (uniform). Prints `relay ready` once both sides are open, and on SIGTERM or
SIGINT (or after --max-seconds) one line of counts per direction, then exits.

usage: tap-impair.py --shell-tap T --client-tap C [--loss 0.05] [--delay-ms 20] [--jitter-ms 10]
                     [--reorder 0.25] [--seed N] [--max-seconds 300]
"""
import argparse
import fcntl
import heapq
import os
import random
import select
import signal
import socket
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def open_tap(name):
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
    return fd


class Direction:
    """One way through the relay, with its counts."""

    def __init__(self, name, send):
        self.name = name
        self.send = send
        self.seen = self.dropped = self.reordered = self.delayed = self.failed = 0

    def summary(self):
        return (
            f"{self.name}: {self.seen} frames, {self.dropped} dropped, "
            f"{self.reordered} sent ahead, {self.delayed} delayed, {self.failed} send errors"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shell-tap", required=True)
    parser.add_argument("--client-tap", required=True)
    parser.add_argument("--loss", type=float, default=0.05)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--jitter-ms", type=float, default=10.0)
    parser.add_argument("--reorder", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    client = open_tap(args.client_tap)
    shell = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    shell.bind((args.shell_tap, 0))
    shell.setblocking(False)

    def to_client(frame):
        os.write(client, frame)

    to_shell_dir = Direction("to shell", shell.send)
    to_client_dir = Direction("to client", to_client)

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))

    queue = []  # (due, sequence, direction, frame)
    sequence = 0

    def send(direction, frame):
        try:
            direction.send(frame)
        except OSError:
            direction.failed += 1

    def admit(direction, frame, now):
        nonlocal sequence
        direction.seen += 1
        if rng.random() < args.loss:
            direction.dropped += 1
            return
        if rng.random() < args.reorder:
            direction.reordered += 1
            send(direction, frame)
            return
        direction.delayed += 1
        delay = args.delay_ms + rng.uniform(-args.jitter_ms, args.jitter_ms)
        sequence += 1
        heapq.heappush(queue, (now + max(delay, 0.0) / 1000.0, sequence, direction, frame))

    print("relay ready", flush=True)
    end = time.monotonic() + args.max_seconds
    while not stopping and time.monotonic() < end:
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, _, direction, frame = heapq.heappop(queue)
            send(direction, frame)
        timeout = min(queue[0][0] - now, 0.5) if queue else 0.5
        try:
            readable, _, _ = select.select([client, shell], [], [], max(timeout, 0.0))
        except InterruptedError:
            continue
        now = time.monotonic()
        if client in readable:
            while True:
                try:
                    frame = os.read(client, 65536)
                except BlockingIOError:
                    break
                admit(to_shell_dir, frame, now)
        if shell in readable:
            while True:
                try:
                    frame, address = shell.recvfrom(65536)
                except BlockingIOError:
                    break
                # Our own sends to the shell come back as outgoing frames: skip them.
                if address[2] != PACKET_OUTGOING:
                    admit(to_client_dir, frame, now)

    print(to_shell_dir.summary(), flush=True)
    print(to_client_dir.summary(), flush=True)


if __name__ == "__main__":
    sys.exit(main())
