#!/usr/bin/env python3
"""Writes RESP `SET key:N <value> [EX 3600]` commands for N in FROM..TO-1 to stdout, for
`redis-cli --pipe` (scripts/bench-memory.sh). Keys are named as redis-benchmark's
`key:__rand_int__` (key: and 12 digits), so a fill and a benchmark write the same keys.

    memory_fill.py FROM TO VALUE_LEN yes|no
"""
import sys


def main():
    start, stop, value_len = (int(a) for a in sys.argv[1:4])
    ttl = sys.argv[4] == "yes"
    value = b"x" * value_len
    tail = b"$2\r\nEX\r\n$4\r\n3600\r\n" if ttl else b""
    head = b"*5\r\n" if ttl else b"*3\r\n"
    value_part = b"$%d\r\n%s\r\n" % (value_len, value)
    out = sys.stdout.buffer
    chunk = []
    for n in range(start, stop):
        key = b"key:%012d" % n
        chunk.append(head + b"$3\r\nSET\r\n$16\r\n" + key + b"\r\n" + value_part + tail)
        if len(chunk) == 10000:
            out.write(b"".join(chunk))
            chunk.clear()
    out.write(b"".join(chunk))


if __name__ == "__main__":
    main()
