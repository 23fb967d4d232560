#!/usr/bin/env python3
"""Spoofed-SYN flood against net-shell on a tap, in a namespace this script creates (and
removes), while a real client keeps trying to get in.

The SYNs are raw Ethernet frames written to the tap with an AF_PACKET socket bound to its
kernel side. They come from SOURCES addresses of the tap's subnet that nobody owns: nothing
answers the shell's ARP for them or its SYN-ACKs, so every SYN leaves the shell a half-open
connection that only a timeout can end.

Flood mode (default): FACTOR x SOCKETS SYNs at the start of every second for SECONDS seconds,
while a real client (a plain socket in the namespace) connects, PINGs and closes every
INTERVAL ms. Then the client goes on trying, every INTERVAL ms for RECOVERY seconds.

--once N: N SYNs at once, then the client tries every INTERVAL ms for RECOVERY seconds.

Prints per phase: attempts, successes, the connect time (p50/p99/max of successful ones), the
errors, when the first try that got in ended, and after when every try got in (the end of the
last failed one), counted from the start of the phase (the first SYNs, or the last). Bounded:
at most 120 s of flood, 60 s of recovery, 100,000 SYNs at once.
Needs root.

usage: scripts/syn-flood.py [--binary PATH] [--sockets 64] [--factor 10] [--seconds 10]
                            [--once N] [--recovery-s 15] [--sources 50] [--interval-ms 100]
                            [--connect-timeout-s 1]
"""
import argparse
import random
import socket
import struct
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "host-tests" / "scripts"))
import tapns  # noqa: E402

SUBNET = "10.84.0"
FIRST_SPOOFED = 100
ETH_P_ALL = 0x0003


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def syn_frame(shell_mac, shell_ip, port, source_index, rng):
    """An Ethernet frame holding a TCP SYN from spoofed address SUBNET.(FIRST_SPOOFED+index)."""
    source_ip = socket.inet_aton(f"{SUBNET}.{FIRST_SPOOFED + source_index}")
    dest_ip = socket.inet_aton(shell_ip)
    source_mac = bytes([0x02, 0x5F, 0x0A, 0x54, 0x00, FIRST_SPOOFED + source_index])
    source_port = rng.randrange(1024, 65536)
    # MSS 1460 option; header length 24 bytes.
    tcp = struct.pack("!HHIIBBHHH", source_port, port, rng.getrandbits(32), 0, 6 << 4, 0x02,
                      64240, 0, 0) + struct.pack("!BBH", 2, 4, 1460)
    pseudo = source_ip + dest_ip + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), rng.getrandbits(16), 0x4000, 64,
                     6, 0, source_ip, dest_ip)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return shell_mac + source_mac + b"\x08\x00" + ip + tcp


class Prober:
    """The real client: connect + PING + close every INTERVAL, each result kept with its time."""

    def __init__(self, address, interval, timeout):
        self.address = address
        self.interval = interval
        self.timeout = timeout
        self.results = []  # (start, end, ok, connect seconds or error name)

    def run_until(self, end):
        next_at = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= end:
                return
            if now < next_at:
                time.sleep(min(next_at - now, end - now))
                continue
            start = time.monotonic()
            try:
                connect, _ = tapns.connect_ping(self.address, self.timeout)
                self.results.append((start, time.monotonic(), True, connect))
            except (OSError, ValueError) as error:
                self.results.append((start, time.monotonic(), False, type(error).__name__))
            next_at = max(next_at + self.interval, time.monotonic())


def phase_row(name, results, since):
    """Times are when an attempt ended, from `since`."""
    connects = [value for _, _, ok, value in results if ok]
    errors = {}
    for _, _, ok, value in results:
        if not ok:
            errors[value] = errors.get(value, 0) + 1
    first_ok = next((end - since for _, end, ok, _ in results if ok), None)
    last_fail = max((end for _, end, ok, _ in results if not ok), default=None)
    if not connects:
        settled = "never"
    elif last_fail is None:
        settled = "from the first try"
    elif results[-1][2]:
        settled = f"{last_fail - since:.2f} s"
    else:
        settled = "never"
    rate = f"{100 * len(connects) / len(results):.0f}%" if results else "-"
    return [
        name,
        len(results),
        f"{len(connects)} ({rate})",
        tapns.ms(tapns.percentile(connects, 50)),
        tapns.ms(tapns.percentile(connects, 99)),
        tapns.ms(max(connects, default=None)),
        ", ".join(f"{k} {v}" for k, v in errors.items()) or "-",
        "never" if first_ok is None else f"{first_ok:.2f} s",
        settled,
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tapns.add_binary_flag(parser)
    parser.add_argument("--sockets", type=int, default=64,
                        help="the shell's socket count (CONNS in net-shell.rs)")
    parser.add_argument("--factor", type=int, default=10, help="SYNs per second per socket")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--once", type=int, default=None, metavar="N")
    parser.add_argument("--recovery-s", type=float, default=15.0)
    parser.add_argument("--sources", type=int, default=50)
    parser.add_argument("--interval-ms", type=float, default=100.0)
    parser.add_argument("--connect-timeout-s", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not (0 < args.seconds <= 120 and 0 < args.recovery_s <= 60 and 1 <= args.sources <= 150
            and 1 <= args.sockets * args.factor <= 100_000 and args.interval_ms >= 10
            and (args.once is None or 1 <= args.once <= 100_000)):
        sys.exit("out of bounds: --seconds 0..120, --recovery-s 0..60, --sources 1..150, "
                 "--sockets x --factor up to 100,000, --once up to 100,000, --interval-ms >= 10")
    tapns.need_root("syn-flood.py")
    rng = random.Random(args.seed)

    with tapns.ShellNamespace(args.binary, "nstap-syn", "syntap0", SUBNET) as shell:
        shell_mac = bytes(int(part, 16) for part in shell.mac.split(":"))
        raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        raw.bind((shell.tap, 0))
        prober = Prober(shell.address, args.interval_ms / 1000, args.connect_timeout_s)
        # A first connection, so the kernel has the shell's MAC before the flood starts.
        tapns.connect_ping(shell.address, 5)

        def send_syns(count):
            for i in range(count):
                raw.send(syn_frame(shell_mac, shell.address[0], shell.address[1],
                                   i % args.sources, rng))

        start = time.monotonic()
        if args.once is not None:
            send_syns(args.once)
            stopped = time.monotonic()
            sent = args.once
            during = []
            description = (f"{args.once} spoofed SYNs at once from {args.sources} silent "
                           f"addresses")
        else:
            per_second = args.sockets * args.factor
            flood_end = start + args.seconds
            prober_thread = threading.Thread(target=prober.run_until, args=(flood_end,))
            prober_thread.start()
            sent = 0
            second = start
            while second < flood_end:
                send_syns(per_second)
                sent += per_second
                second += 1.0
                time.sleep(max(0.0, min(second, flood_end) - time.monotonic()))
            prober_thread.join()
            stopped = time.monotonic()
            during = list(prober.results)
            prober.results.clear()
            description = (f"{per_second} spoofed SYNs/s ({args.factor} x {args.sockets} "
                           f"sockets) for {args.seconds:g} s from {args.sources} silent "
                           f"addresses, {sent} in all")
        prober.run_until(stopped + args.recovery_s)
        after = prober.results
        raw.close()

    print(description + f"; a client connects + PINGs every {args.interval_ms:g} ms "
          f"(connect timeout {args.connect_timeout_s:g} s)")
    rows = []
    if args.once is None:
        rows.append(phase_row(f"during the flood ({args.seconds:g} s)", during, start))
    rows.append(phase_row(f"after the SYNs ({args.recovery_s:g} s)", after, stopped))
    tapns.table(
        ["phase", "attempts", "got in", "connect p50 ms", "connect p99 ms", "connect max ms",
         "errors", "first in at", "every try in after"],
        rows,
    )


if __name__ == "__main__":
    main()
