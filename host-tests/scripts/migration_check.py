#!/usr/bin/env python3
"""A slot range moved from one shell to another while a client writes, as a controller would
drive it: CLUSTERX MIGRATE on the source, CLUSTER INFO until migrating_state is success, then a
new topology pushed to every shell (the next version).

- KEYS keys of the moving range, and as many elsewhere, are written first with absolute
  deadlines (SET PXAT), 15-25 s ahead; a tenth of the moving ones with deadlines within the
  move itself (0.2-2 s ahead).
- While the range moves, a thread writes through redis-py's RedisCluster (which follows -ASK,
  -MOVED and -TRYAGAIN): overwrites of moving keys and new keys, each SET PXAT.
- Afterwards every acknowledged write reads back (the last value written), every PEXPIRETIME is
  the PXAT written within 1 ms, every key due by the time it is read is gone, and the source
  holds no key. Each key is judged at its own read: reading 20,000 keys back one by one takes
  seconds, and on a loaded machine long enough for the earliest long deadlines to pass.

Prints one line per check, figures to stderr; a failed check prints FAIL and exits 1. Every
wait is bounded.

usage: migration_check.py KEYS SOURCE_HOST DESTINATION_HOST OTHER_HOST
"""
import hashlib
import os
import sys
import threading
import time

import redis
from redis.cluster import ClusterNode, RedisCluster

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_common import fail, key_slot, raw  # noqa: E402

count = int(sys.argv[1])
hosts = sys.argv[2:5]
source, destination, other = hosts


def unix_ms():
    return int(time.time() * 1000)


ids = {h: hashlib.sha1(h.encode()).hexdigest() for h in hosts}
MOVING = (0, 5460)


def topology(ranges):
    return "\n".join(f"{ids[h]} {h} 6379 master - {a}-{b}" for h, (a, b) in ranges)


shells = {h: redis.Redis(host=h, port=6379, socket_timeout=10) for h in hosts}
# Versions after whatever the shells hold (a benchmark may have pushed one already).
version = 1 + max(int(shell.execute_command("CLUSTERX", "VERSION")) for shell in shells.values())
first = topology([(source, (0, 5460)), (destination, (5461, 10922)), (other, (10923, 16383))])
for h, shell in shells.items():
    shell.execute_command("CLUSTERX", "SETNODEID", ids[h])
    shell.execute_command("CLUSTERX", "SETNODES", first, version)

cluster = RedisCluster(startup_nodes=[ClusterNode(source, 6379)], socket_timeout=10)
moving, staying = [], []
n = 0
while len(moving) < count or len(staying) < count:
    key = f"k:{n}"
    n += 1
    if MOVING[0] <= key_slot(key.encode()) <= MOVING[1]:
        if len(moving) < count:
            moving.append(key)
    elif len(staying) < count:
        staying.append(key)

start = unix_ms()
expected = {}  # key -> (value, deadline in Unix ms)
short = set(moving[: count // 10])
pipe = cluster.pipeline()
for i, key in enumerate(moving + staying):
    ahead = 500 + (i * 7919) % 2500 if key in short else 15_000 + (i * 7919) % 10_000
    deadline = start + ahead
    pipe.set(key, f"v0:{key}", pxat=deadline)
    expected[key] = (f"v0:{key}".encode(), deadline)
if pipe.execute() != [True] * len(expected):
    fail("initial writes")
held = shells[source].dbsize()
if not count - len(short) <= held <= count:
    fail(f"the source holds {held} keys, not about {count}")
print(f"{count} keys in the moving range, {count} elsewhere")

stop = threading.Event()
written = {}
errors = []


def writer():
    """Overwrites moving keys and writes new ones until told to stop; records each write a
    node acknowledged."""
    client = RedisCluster(startup_nodes=[ClusterNode(source, 6379)], socket_timeout=10)
    i = 0
    while not stop.is_set() and i < 100_000:
        # Not the last moving key: it is the probe below, read by hand.
        key = moving[count // 10 + (i * 31) % (count - count // 10 - 1)] if i % 2 else f"new:{i}"
        if not i % 2 and not MOVING[0] <= key_slot(key.encode()) <= MOVING[1]:
            i += 1
            continue
        value, deadline = f"v{i}:{key}".encode(), unix_ms() + 30_000
        try:
            if client.set(key, value, pxat=deadline):
                written[key] = (value, deadline)
        except redis.exceptions.RedisError as error:
            errors.append(f"{key}: {error!r}")
        i += 1


thread = threading.Thread(target=writer)
thread.start()
time.sleep(0.2)
migrate_started = time.monotonic()
reply = shells[source].execute_command("CLUSTERX", "MIGRATE", f"{MOVING[0]}-{MOVING[1]}",
                                       ids[destination])
if reply != b"OK":
    fail(f"CLUSTERX MIGRATE: {reply}")
info = ""
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    info = shells[source].execute_command("CLUSTER", "INFO").decode()
    if "migrating_state: success" in info or "migrating_state: fail" in info:
        break
    time.sleep(0.01)
moved_after = time.monotonic() - migrate_started
if "migrating_state: success" not in info:
    stop.set()
    thread.join()
    fail(f"the migration did not succeed: {info}")
# Moved, not yet pushed: the new owner took CLUSTER IMPORT <range> 1, so the source sends
# clients there with -MOVED (as Kvrocks does from a migrated slot), and the new owner serves the
# range to any client until the push.
probe = moving[-1]
slot = key_slot(probe.encode())
moved = raw(source, [b"GET", probe.encode()])
if moved != [f"-MOVED {slot} {destination}:6379\r\n".encode()]:
    fail(f"GET of a moved key on the source: {moved}")
served = raw(destination, [b"GET", probe.encode()])
# (A bulk string: the writer may have overwritten the key meanwhile.)
if len(served) != 1 or not served[0].startswith(b"$") or served[0] == b"$-1\r\n":
    fail(f"GET on the new owner before the push: {served}")
print("-MOVED from the source to the new owner, which serves the range before the push")
second = topology([(destination, (0, 10922)), (other, (10923, 16383))]) + \
    f"\n{ids[source]} {source} 6379 master -"
for shell in shells.values():
    shell.execute_command("CLUSTERX", "SETNODES", second, version + 1)
time.sleep(0.3)
stop.set()
thread.join()
fields = dict(line.split(":", 1) for line in info.split("\r\n") if ":" in line)
print("the range moved while a client wrote; the new topology pushed")
print(f"moved {fields.get('migrated_keys', '?').strip()} keys in "
      f"{fields.get('migration_ms', '?').strip()} ms (shell's count), {moved_after * 1000:.0f} ms "
      f"until the controller saw it; {len(written)} writes acknowledged while the writer ran "
      f"(from 0.2 s before the move to 0.3 s after the push), {len(errors)} refused", file=sys.stderr)
if errors:
    fail(f"writes refused: {errors[:3]}")

expected.update(written)
# Every short deadline passed (3 s after the start at most), wherever its key was then.
time.sleep(max(0, start + 3_100 - unix_ms()) / 1000)
now = unix_ms()
lost, wrong_ttl, late = [], [], []
due = 0
reader = RedisCluster(startup_nodes=[ClusterNode(destination, 6379)], socket_timeout=10)
# Each key is judged by the time of its own read: the reads take seconds (8 s for 20,000 keys
# here, more on a loaded machine), and a long deadline may pass while they run.
for key, (value, deadline) in expected.items():
    before = unix_ms()
    got = reader.get(key)
    after = unix_ms()
    if deadline <= before:
        due += 1
        if got is not None:
            late.append(key)
        continue
    if got is None and deadline <= after:
        due += 1  # Due while it was read: gone or not, both are right.
        continue
    if got != value:
        lost.append((key, got, value))
        continue
    at = reader.pexpiretime(key)
    if at == -2 and deadline <= unix_ms():
        continue  # Due between the two reads.
    if abs(at - deadline) > 1:
        wrong_ttl.append((key, at, deadline))
print(f"read back {len(expected)} keys in {unix_ms() - now} ms; the earliest long deadline "
      f"was {min(d for _, d in expected.values() if d > now) - now} ms after the reads began",
      file=sys.stderr)
if lost:
    # What each shell says of the first lost keys, and of its counters: where a key went.
    position = {key: i for i, key in enumerate(moving)}
    for key, got, value in lost[:5]:
        held = {h: raw(h, [b"ASKING"], [b"EXISTS", key.encode()])[1].strip().decode() for h in hosts}
        print(f"lost {key}: moving #{position.get(key)}, short {key in short}, "
              f"written {key in written}, deadline {expected[key][1] - unix_ms()} ms from now, "
              f"held {held}",
              file=sys.stderr)
    for h, shell in shells.items():
        stats = shell.info("stats")
        print(f"{h}: expired_keys {stats.get('expired_keys')}, dbsize {shell.dbsize()}",
              file=sys.stderr)
    indices = sorted(position.get(key, -1) for key, _, _ in lost)
    print(f"lost keys' places among the moving keys: {indices[:8]} ... {indices[-4:]}",
          file=sys.stderr)
    fail(f"{len(lost)} acknowledged writes not read back: {lost[:3]}")
if wrong_ttl:
    fail(f"{len(wrong_ttl)} deadlines moved by more than 1 ms: {wrong_ttl[:3]}")
if late:
    fail(f"{len(late)} keys outlived their deadline: {late[:3]}")
if due == 0:
    fail("no key was due during the move")
print("every acknowledged write reads back, every deadline within 1 ms, keys due are gone")
if shells[source].dbsize() != 0:
    fail(f"the source still holds {shells[source].dbsize()} keys")
print("the source holds no key")
print(f"{len(expected)} keys checked, {due} due during the move", file=sys.stderr)
