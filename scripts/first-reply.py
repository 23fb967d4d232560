#!/usr/bin/env python3
"""How long a new connection waits for its first reply: COUNT times connect, PING, read the
reply, close, one after another, against net-shell on a tap in a namespace this script creates
(and removes), and (unless --no-redis, or redis-server is missing) against redis-server on
127.0.0.1 inside the same namespace, in the same run.

Prints a table per server: attempts, failures, first replies over THRESHOLD ms, p50, p99 and
max of the first reply (from the PING's send to the PONG) and of the connect. Bounded by
--count (at most 20,000) and --max-seconds per server. Needs root.

usage: scripts/first-reply.py [--binary PATH] [--count 3000] [--threshold-ms 5] [--no-redis]
"""
import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "host-tests" / "scripts"))
import tapns  # noqa: E402

REDIS_PORT = 16390


def measure(address, count, max_seconds):
    connects, replies, failures = [], [], {}
    end = time.monotonic() + max_seconds
    for _ in range(count):
        if time.monotonic() > end:
            break
        try:
            connect, reply = tapns.connect_ping(address, timeout=2)
        except (OSError, ValueError) as error:
            kind = type(error).__name__
            failures[kind] = failures.get(kind, 0) + 1
            continue
        connects.append(connect)
        replies.append(reply)
    return connects, replies, failures


def row(name, threshold, connects, replies, failures):
    attempts = len(replies) + sum(failures.values())
    over = sum(1 for r in replies if r > threshold)
    failed = sum(failures.values())
    failed_text = f"{failed} ({', '.join(f'{k} {v}' for k, v in failures.items())})" if failed else "0"
    return [
        name,
        attempts,
        failed_text,
        over,
        tapns.ms(tapns.percentile(replies, 50)),
        tapns.ms(tapns.percentile(replies, 99)),
        tapns.ms(max(replies, default=None)),
        tapns.ms(tapns.percentile(connects, 99)),
        tapns.ms(max(connects, default=None)),
    ]


def start_redis():
    """redis-server on 127.0.0.1 inside the namespace (we are in it); None if unavailable."""
    if not shutil.which("redis-server"):
        print("redis-server not installed: measuring net-shell only", file=sys.stderr)
        return None
    process = subprocess.Popen(
        ["redis-server", "--port", str(REDIS_PORT), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            tapns.connect_ping(("127.0.0.1", REDIS_PORT), timeout=1)
            return process
        except (OSError, ValueError):
            time.sleep(0.05)
    process.kill()
    process.wait()
    print("redis-server did not come up: measuring net-shell only", file=sys.stderr)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tapns.add_binary_flag(parser)
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--threshold-ms", type=float, default=5.0)
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--no-redis", action="store_true")
    args = parser.parse_args()
    if not 1 <= args.count <= 20000:
        sys.exit("--count must be 1..20000")
    tapns.need_root("first-reply.py")
    threshold = args.threshold_ms / 1000

    rows = []
    with tapns.ShellNamespace(args.binary, "nstap-first", "firsttap0", "10.83.0") as shell:
        rows.append(row("net-shell (tap)", threshold,
                        *measure(shell.address, args.count, args.max_seconds)))
        redis = None if args.no_redis else start_redis()
        if redis is not None:
            try:
                rows.append(row("redis-server (127.0.0.1 in the namespace)", threshold,
                                *measure(("127.0.0.1", REDIS_PORT), args.count, args.max_seconds)))
            finally:
                redis.terminate()
                redis.wait()
    print(f"connect, PING, first reply, close; one at a time; threshold {args.threshold_ms:g} ms")
    tapns.table(
        ["server", "attempts", "failed", f"replies > {args.threshold_ms:g} ms",
         "reply p50 ms", "reply p99 ms", "reply max ms", "connect p99 ms", "connect max ms"],
        rows,
    )


if __name__ == "__main__":
    main()
