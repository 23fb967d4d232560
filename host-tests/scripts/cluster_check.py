#!/usr/bin/env python3
"""Three shells as a Redis Cluster whose topology this script pushes, as a controller would
(Kvrocks' CLUSTERX SETNODEID and SETNODES), then used by unmodified cluster clients:

- a stale topology version is refused and the version in force stays;
- hand-made requests get -MOVED to the owner and -CROSSSLOT across slots;
- redis-py's RedisCluster stores KEYS keys with TTLs (SET PX) and reads them back (GET, PTTL);
- every shell holds only keys of its own slots, and a share of them;
- redis-cli -c stores and reads back KEYS more, following -MOVED;
- after the last deadline every shell is empty.

Prints one summary line per check; a failed check prints FAIL and exits 1. Every wait is
bounded.

usage: cluster_check.py KEYS SHELL_HOST...
"""
import hashlib
import os
import subprocess
import sys
import time

import redis
from redis.cluster import ClusterNode, RedisCluster

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_common import fail, key_slot, raw  # noqa: E402

count, hosts = int(sys.argv[1]), sys.argv[2:]
# Long enough that no key expires before it is read back on a loaded machine.
TTL_MIN_MS, TTL_SPREAD_MS = 6000, 3000
# Generous for a loaded CI machine; the shell removes a key about a millisecond after its
# deadline (README).
TOLERANCE_MS = 200


ids = [hashlib.sha1(host.encode()).hexdigest() for host in hosts]
bounds = [16384 * i // len(hosts) for i in range(len(hosts) + 1)]
ranges = [(bounds[i], bounds[i + 1] - 1) for i in range(len(hosts))]
nodes = "\n".join(f"{ids[i]} {hosts[i]} 6379 master - {a}-{b}"
                  for i, (a, b) in enumerate(ranges))
shells = [redis.Redis(host=h, port=6379, socket_timeout=10) for h in hosts]
for node_id, shell in zip(ids, shells):
    if shell.execute_command("CLUSTERX", "SETNODEID", node_id) != b"OK":
        fail("SETNODEID")
    if shell.execute_command("CLUSTERX", "SETNODES", nodes, 2) != b"OK":
        fail("SETNODES")
stale = raw(hosts[0], [b"CLUSTERX", b"SETNODES", nodes.encode(), b"1"])[0]
if stale != b"-ERR Invalid cluster version\r\n":
    fail(f"stale push: {stale}")
if [s.execute_command("CLUSTERX", "VERSION") for s in shells] != [b"2"] * len(shells):
    fail("versions")
print("topology pushed, a stale version refused")

owner_of = {}
for i, (a, b) in enumerate(ranges):
    for slot in (a, b):
        owner_of[slot] = i
foo_slot = key_slot(b"foo")
foo_owner = next(i for i, (a, b) in enumerate(ranges) if a <= foo_slot <= b)
asked = (foo_owner + 1) % len(hosts)
moved, cross = raw(hosts[asked], [b"GET", b"foo"], [b"MSET", b"foo", b"1", b"bar", b"2"])
if moved != f"-MOVED {foo_slot} {hosts[foo_owner]}:6379\r\n".encode():
    fail(f"GET foo on a non-owner: {moved}")
if cross != b"-CROSSSLOT Keys in request don't hash to the same slot\r\n":
    fail(f"MSET across slots: {cross}")
print("MOVED and CROSSSLOT for hand-made requests")


def cli_replies(out):
    """redis-cli -c's replies, without its "-> Redirected to slot" notes."""
    return [line for line in out.splitlines() if not line.startswith("-> Redirected")]


def now_ms():
    return time.monotonic() * 1000.0


cluster = RedisCluster(startup_nodes=[ClusterNode(hosts[0], 6379)], socket_timeout=10)
keys = [f"py:{i}" for i in range(count)]
ttls = [TTL_MIN_MS + (i * 7919) % TTL_SPREAD_MS for i in range(count)]
started = now_ms()
pipe = cluster.pipeline()
for key, ttl in zip(keys, ttls):
    pipe.set(key, key, px=ttl)
replies = pipe.execute()
written = now_ms()
if replies != [True] * count:
    fail("RedisCluster SET replies")
pipe = cluster.pipeline()
for key in keys:
    pipe.get(key)
    pipe.pttl(key)
replies = pipe.execute()
read = now_ms()
wrong = 0
for n, (key, ttl) in enumerate(zip(keys, ttls)):
    value, pttl = replies[2 * n], replies[2 * n + 1]
    if value != key.encode() or not ttl - (read - started) - 1 <= pttl <= ttl:
        wrong += 1
if wrong:
    fail(f"{wrong} keys read back wrong through RedisCluster")
print(f"redis-py RedisCluster stored and read back {count} keys with TTLs")
print(f"RedisCluster: {count} SET PX in {written - started:.0f} ms, GET+PTTL in "
      f"{read - written:.0f} ms (pipelines)", file=sys.stderr)

shares = []
for i, shell in enumerate(shells):
    held = shell.keys("*")
    a, b = ranges[i]
    strays = [k for k in held if not a <= key_slot(k) <= b]
    if strays:
        fail(f"{hosts[i]} holds keys of other slots: {strays[:3]}")
    shares.append(len(held))
if sum(shares) != count or min(shares) == 0:
    fail(f"shares {shares}")
slot = key_slot(keys[0].encode())
owner = next(i for i, (a, b) in enumerate(ranges) if a <= slot <= b)
in_slot = sum(1 for k in keys if key_slot(k.encode()) == slot)
if shells[owner].execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) != in_slot:
    fail("COUNTKEYSINSLOT")
print("every shell holds only its own slots' keys, and a share")
print("shares", shares, file=sys.stderr)

cli_keys = [f"cli:{i}" for i in range(count)]
# Each key read back right after it is set (one session; redis-cli follows -MOVED for both).
script = "".join(f"SET {k} {k} PX {ttl}\nGET {k}\n" for k, ttl in zip(cli_keys, ttls))
cli_started = now_ms()
out = subprocess.run(["redis-cli", "-c", "-h", hosts[0], "-p", "6379"], input=script,
                     capture_output=True, text=True, timeout=120, check=True).stdout
cli_written = now_ms()
redirects = len(out.splitlines()) - len(cli_replies(out))
if cli_replies(out) != [line for k in cli_keys for line in ("OK", k)]:
    fail(f"redis-cli -c SET and GET: {out[:200]}")
print(f"redis-cli -c stored and read back {count} keys with TTLs")
print(f"redis-cli -c: {count} SET PX and {count} GET in {cli_written - cli_started:.0f} ms, "
      f"{redirects} redirections", file=sys.stderr)

last_deadline = cli_written + max(ttls)
time.sleep(max(0.0, last_deadline + TOLERANCE_MS - now_ms()) / 1000)
sizes = [shell.dbsize() for shell in shells]
if sizes != [0] * len(shells):
    fail(f"keys left after the last deadline: {sizes}")
print("all expired")
