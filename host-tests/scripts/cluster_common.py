"""What the cluster checks (cluster_check.py, migration_check.py) share: failing with a
message, Redis Cluster's key slot, and raw RESP requests to one shell."""

import binascii
import socket
import sys


def fail(message):
    print("FAIL", message)
    sys.exit(1)


def key_slot(key):
    """Redis Cluster's slot: CRC-16/XMODEM of the key or of its hash tag, modulo 16384."""
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    return binascii.crc_hqx(key, 0) % 16384


def raw(host, *commands):
    """Sends RESP commands on one connection to `host`:6379; returns each reply's first line
    (a bulk reply's header; its body is read and dropped)."""
    with socket.create_connection((host, 6379), timeout=10) as s:
        replies = []
        for words in commands:
            s.sendall(b"*%d\r\n" % len(words)
                      + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words))
            line = b""
            while not line.endswith(b"\r\n"):
                chunk = s.recv(1)
                if not chunk:
                    break
                line += chunk
            if line.startswith(b"$") and not line.startswith(b"$-1"):
                s.recv(int(line[1:-2]) + 2, socket.MSG_WAITALL)
            replies.append(line)
        return replies
