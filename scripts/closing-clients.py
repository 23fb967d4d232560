#!/usr/bin/env python3
"""How soon INFO's connected_clients drops after clients close: opens one watching connection
and CLIENTS more (each answers a PING), ends the CLIENTS at once, then reads `INFO clients`
on the watching connection every INTERVAL ms for WATCH seconds. The right number afterwards is
1 (the watcher). Ways to end the clients (--how, a comma-separated list, default all):

  fin         close(): the client's kernel sends FIN
  rst         close() with SO_LINGER 0: the client's kernel sends RST
  error-hold  send a malformed request, read the error reply, and keep the socket open (the
              server closes its side; Redis frees such a client at once)

Repeats ROUNDS times per way against net-shell on a tap in a namespace this script creates
(and removes). Prints, per round, connected_clients before, when it first read 1 and when it
last read anything else (ms after the clients ended), and its value at a few moments.
Needs root.

usage: scripts/closing-clients.py [--binary PATH] [--clients 50] [--rounds 3] [--watch-s 3]
                                  [--interval-ms 10] [--how fin,rst,error-hold]
"""
import argparse
import socket
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "host-tests" / "scripts"))
import tapns  # noqa: E402

MOMENTS_MS = [0, 10, 50, 100, 200, 500, 1000, 2000, 3000]


WAYS = ["fin", "rst", "error-hold"]


def end(sock, how):
    """Ends one client `how`; returns the sockets to close only after the watch."""
    if how == "fin":
        sock.close()
        return []
    if how == "rst":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        return []
    sock.sendall(b"*1\r\n$x\r\n")
    reply, _ = tapns.read_reply(sock)
    assert reply.startswith(b"-ERR Protocol error"), reply
    return [sock]


def round_once(address, clients, how, watch_s, interval_s):
    watcher = socket.create_connection(address, timeout=5)
    others = []
    try:
        for _ in range(clients):
            sock = socket.create_connection(address, timeout=5)
            others.append(sock)
            sock.sendall(b"PING\r\n")
            reply, _ = tapns.read_reply(sock)
            assert reply == b"+PONG\r\n", reply
        before = tapns.info_field(watcher, "clients", "connected_clients")
        held = []
        for sock in others:
            held += end(sock, how)
        closed = time.monotonic()
        others = held
        samples = []
        while True:
            at = time.monotonic() - closed
            if at > watch_s:
                break
            samples.append((at, tapns.info_field(watcher, "clients", "connected_clients")))
            time.sleep(max(0.0, interval_s - (time.monotonic() - closed - at)))
    finally:
        for sock in others:
            sock.close()
        watcher.close()
    return before, samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tapns.add_binary_flag(parser)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--watch-s", type=float, default=3.0)
    parser.add_argument("--interval-ms", type=float, default=10.0)
    parser.add_argument("--how", default=",".join(WAYS))
    args = parser.parse_args()
    ways = args.how.split(",")
    if not set(ways) <= set(WAYS):
        sys.exit(f"--how takes a comma-separated list of {', '.join(WAYS)}")
    if not 1 <= args.clients <= 62:
        sys.exit("--clients must be 1..62 (the host shell serves 63 clients)")
    if not 1 <= args.rounds <= 20 or not 0 < args.watch_s <= 30 or args.interval_ms < 1:
        sys.exit("--rounds 1..20, --watch-s up to 30, --interval-ms at least 1")
    tapns.need_root("closing-clients.py")

    rows = []
    with tapns.ShellNamespace(args.binary, "nstap-close", "closetap0", "10.85.0") as shell:
        rounds = [(how, number) for how in ways for number in range(1, args.rounds + 1)]
        for index, (how, number) in enumerate(rounds):
            before, samples = round_once(shell.address, args.clients, how, args.watch_s,
                                         args.interval_ms / 1000)
            first_right = next((at for at, value in samples if value == 1), None)
            last_wrong = max((at for at, value in samples if value != 1), default=None)
            moments = []
            for moment in MOMENTS_MS:
                if moment / 1000 > args.watch_s:
                    continue
                value = next((v for at, v in samples if at >= moment / 1000), samples[-1][1])
                moments.append(str(value))
            rows.append([how, number, before, tapns.ms(first_right),
                         "never" if last_wrong is None else tapns.ms(last_wrong),
                         len(samples)] + moments)
            # Let the previous round's connections finish closing before the next opens more.
            time.sleep(1.0 if index + 1 < len(rounds) else 0)
    print(f"{args.clients} clients ended at once; connected_clients read every "
          f"{args.interval_ms:g} ms for {args.watch_s:g} s; right value afterwards: 1")
    shown = [m for m in MOMENTS_MS if m / 1000 <= args.watch_s]
    tapns.table(
        ["how", "round", "before", "first 1 (ms)", "last wrong (ms)", "samples"]
        + [f"at {m} ms" for m in shown],
        rows,
    )


if __name__ == "__main__":
    main()
