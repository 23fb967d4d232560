#!/usr/bin/env python3
"""Several shells as one keyspace behind twemproxy (nutcracker): redis-py writes KEYS keys with
TTLs through the proxy (`SET k v PX ttl`), reads them back (`GET`, `TTL`, `PTTL`), then asks
each shell directly which keys it holds and watches them expire.

Checks, each a failure (exit status 1) when it does not hold:
- every value reads back, every TTL and PTTL is what was set less the time since;
- every shell holds a share, and the shares are disjoint and add up to every key;
- halfway through the deadlines, each shell's DBSIZE (keys not yet removed) lies between the
  keys surely not yet due and those not due TOLERANCE_MS before the count was asked;
- after the last deadline every shell is empty, reads through the proxy find nothing, and the
  shells' `expired_keys` add up to every key.

Prints one summary line per check. Every wait is bounded.

usage: nutcracker_check.py PROXY_HOST PROXY_PORT KEYS SHELL_HOST...
"""
import sys
import time

import redis

proxy_host, proxy_port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
shell_hosts = sys.argv[4:]
# Long enough that no key expires before it is read back on a loaded machine.
TTL_MIN_MS, TTL_SPREAD_MS = 4000, 3000
# How late a removal may be and still count as on time: generous for a loaded CI machine
# (the shell's own lateness is about a millisecond, see README).
TOLERANCE_MS = 100
BATCH = 500


def fail(message):
    print("FAIL", message)
    sys.exit(1)


def now_ms():
    return time.monotonic() * 1000.0


# twemproxy refuses commands it does not know, CLIENT among them, and closes the connection:
# redis-py must not send CLIENT SETINFO on connect. RESP2: twemproxy does not proxy HELLO.
proxy = redis.Redis(host=proxy_host, port=proxy_port, protocol=2, driver_info=None,
                    socket_timeout=10)
default = redis.Redis(host=proxy_host, port=proxy_port, socket_timeout=10)
shells = [redis.Redis(host=h, port=6379, protocol=2, socket_timeout=10) for h in shell_hosts]

deadline = time.monotonic() + 30  # the proxy starts in the background
while True:
    try:
        proxy.set("probe", "x")
        proxy.delete("probe")
        break
    except redis.exceptions.ConnectionError:
        if time.monotonic() > deadline:
            fail("the proxy never answered")
        time.sleep(0.1)

try:
    default.get("probe")
    print("redis-py defaults: answered")
except redis.exceptions.RedisError as error:
    print("redis-py defaults: refused,", type(error).__name__)

keys = [f"key:{i}" for i in range(count)]
ttls = [TTL_MIN_MS + (i * 7919) % TTL_SPREAD_MS for i in range(count)]
# Each key's deadline lies between its batch's send time plus its TTL and its batch's reply
# time plus its TTL (monotonic ms).
due_earliest, due_latest = [0.0] * count, [0.0] * count
writing = now_ms()
for start in range(0, count, BATCH):
    pipe = proxy.pipeline(transaction=False)
    for i in range(start, min(start + BATCH, count)):
        pipe.set(keys[i], f"value:{i}", px=ttls[i])
    sent = now_ms()
    replies = pipe.execute()
    acked = now_ms()
    if replies != [True] * len(replies):
        fail(f"SET replies {replies[:5]}")
    for i in range(start, min(start + BATCH, count)):
        due_earliest[i], due_latest[i] = sent + ttls[i], acked + ttls[i]
print("set", count)
written = now_ms() - writing
print(f"SET PX through the proxy: {count} keys in {written:.0f} ms (pipelines of {BATCH})",
      file=sys.stderr)

wrong = 0
for start in range(0, count, BATCH):
    pipe = proxy.pipeline(transaction=False)
    part = range(start, min(start + BATCH, count))
    for i in part:
        pipe.get(keys[i])
        pipe.ttl(keys[i])
        pipe.pttl(keys[i])
    asked = now_ms()
    replies = pipe.execute()
    answered = now_ms()
    for n, i in enumerate(part):
        value, ttl, pttl = replies[3 * n: 3 * n + 3]
        # Left at the reply: at least what was set less the time since the SET was sent; at
        # most what was set less the time since its reply came.
        lowest, highest = due_earliest[i] - answered, due_latest[i] - asked
        if value != f"value:{i}".encode():
            wrong += 1
            print("value", keys[i], value)
        elif not lowest - 1 <= pttl <= highest + 1 or pttl > ttls[i]:
            wrong += 1
            print("pttl", keys[i], ttls[i], pttl, lowest, highest)
        elif not (lowest - 1000) / 1000 <= ttl <= (highest + 1000) / 1000:
            wrong += 1
            print("ttl", keys[i], ttls[i], ttl)
if wrong:
    fail(f"{wrong} keys read back wrong")
print("read back", count)

held = []
for host, shell in zip(shell_hosts, shells):
    names = {k.decode() for k in shell.keys("*")}
    if shell.dbsize() != len(names):
        fail(f"{host}: DBSIZE {shell.dbsize()} but KEYS lists {len(names)}")
    held.append(names)
shares = [len(names) for names in held]
if min(shares) == 0:
    fail(f"a shell holds no key: {shares}")
if sum(shares) != count or set().union(*held) != set(keys):
    fail(f"the shares {shares} are not every key once")
print("every shell holds a share", len(shares))
print("shares", shares, file=sys.stderr)
share_of = {}
for n, names in enumerate(held):
    for name in names:
        share_of[name] = n

# Halfway through the deadlines: what each shell has removed.
halfway = min(due_latest) + TTL_SPREAD_MS / 2
time.sleep(max(0.0, (halfway - now_ms()) / 1000))
for n, (host, shell) in enumerate(zip(shell_hosts, shells)):
    asked = now_ms()
    size = shell.dbsize()
    answered = now_ms()
    mine = [i for i in range(count) if share_of[keys[i]] == n]
    surely_kept = sum(1 for i in mine if due_earliest[i] > answered)
    may_keep = sum(1 for i in mine if due_latest[i] > asked - TOLERANCE_MS)
    if not surely_kept <= size <= may_keep:
        fail(f"{host}: DBSIZE {size} halfway, expected {surely_kept}..={may_keep}")
    if surely_kept == len(mine) or may_keep == 0:
        fail(f"{host}: halfway is not halfway ({surely_kept}..={may_keep} of {len(mine)})")
print("halfway, every shell removed its due keys on time")

time.sleep(max(0.0, (max(due_latest) + TOLERANCE_MS - now_ms()) / 1000))
sizes = [shell.dbsize() for shell in shells]
if sizes != [0] * len(shells):
    fail(f"keys left after the last deadline: {sizes}")
pipe = proxy.pipeline(transaction=False)
for key in keys:
    pipe.exists(key)
if sum(pipe.execute()) != 0:
    fail("the proxy still finds keys")
expired = sum(shell.info("stats")["expired_keys"] for shell in shells)
if expired != count:
    fail(f"expired_keys add up to {expired}")
print("all expired on time", expired)
